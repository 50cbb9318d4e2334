"""The magics: %%remember / %remember, %recall, %%sparql and %hipo (%%ask is in ask.py).

Each magic parses its line, makes one call on the session's Memory and formats what comes back.
Bad input and engine errors become a one-line UsageError, never a traceback or SystemExit.

Lines are split on whitespace only (no shell quoting), so titles and queries such as
`don't cache prices` pass through as typed.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from hipo_jupyter import llm
from hipo_jupyter.llm import caching
from hipo_jupyter.memory import (
    CHECKPOINT_TYPES,
    HipoError,
    RecallQuery,
    one_line_note,
    pop_quoted_option,
    render,
    require_title,
)
from hipo_jupyter.memory.disk import VIA_MAGIC
from hipo_jupyter.memory.tree import count_tokens
from hipo_jupyter.memory.views import (
    accept_correction,
    accepted_text,
    correct,
    hits_frame,
    proposed_corrections,
    proposed_corrections_text,
    result_frame,
    results_text,
    to_frame,
)
from hipo_jupyter.terminal import standard_streams_shown_as_text, visible

from . import display
from .progress import ProgressBar
from .session import HipoSession

WIDGETS_MODULE = "hipo_jupyter.ipython.widgets"
TYPES = "|".join(CHECKPOINT_TYPES)


@contextmanager
def engine_errors() -> Iterator[None]:
    """Engine errors are things the user can fix: show them as one line."""
    try:
        yield
    except HipoError as error:
        raise UsageError(str(error)) from None


def parse_line(magic: Callable[..., Any], line: str) -> Any:
    """Parse a magic's line with its magic_arguments parser; options may come anywhere."""
    return magic.parser.parse_intermixed_args(line.split())


@magics_class
class HipoMagics(Magics):
    """%%remember, %recall and %hipo over the session's Memory."""

    def __init__(self, shell: Any, session: HipoSession) -> None:
        super().__init__(shell=shell)
        self.session = session

    # --- %%remember / %remember -------------------------------------------------------
    @line_cell_magic
    @magic_arguments()
    @argument(
        "title",
        nargs="*",
        help="Title (default: the first words of the body); #word adds a tag, [type] the type.",
    )
    @argument(
        "--type", metavar=TYPES, help="Checkpoint type (default: the title's [type], or project)."
    )
    @argument("--tags", metavar="A,B", help="Comma-separated tags, added to any #tags.")
    @argument(
        "--date",
        metavar="YYYY-MM-DD",
        help="File the checkpoint under this day instead of today (a late entry).",
    )
    @argument(
        "--trigger",
        metavar='"WHEN"',
        help='A feedback rule: when it fires ("before a deploy", quoted); implies feedback.',
    )
    @argument("--rule", metavar='"DO"', help="A feedback rule: what to do (quoted).")
    @argument(
        "--replaces",
        metavar="ID",
        help="A correction of that checkpoint: recall shows this one, the old one with --all.",
    )
    def remember(self, line: str, cell: str | None = None) -> None:
        """Write a checkpoint to the raw log of the day; it is searchable at once.

        As a cell magic, the cell is the body: checkpoint fields (`- request: ...`,
        `- decisions: ...`, `- outcome: ...`) or free text:

            %%remember Competitor pricing [project] #pricing
            - request: compare our pricing with the top 5 competitors
            - decisions: cut the starter tier by 15%

        As a line magic, the line is a note titled from its words, or `TITLE: text`:

            %remember the cache key ignored the region, so EU users saw US prices
            %remember Cache bug: the key ignored the region
        """
        head, trigger = pop_quoted_option(line, "trigger")  # quoted values hold spaces
        head, rule = pop_quoted_option(head, "rule")
        body = cell
        if cell is None:  # a one-line note: `TITLE: text` (options before the colon) or text
            named = re.search(r":\s+\S", head)
            head, body = (head[: named.start()], head[named.start() + 1 :]) if named else (head, "")
        args = parse_line(self.remember, head)
        title = " ".join(args.title)
        if cell is None:
            if not (title + body).strip():
                raise UsageError("%remember needs a note: %remember TEXT, or %remember TITLE: text")
            with engine_errors():
                title, body = one_line_note(f"{title}: {body.strip()}" if body else title)
        if args.replaces is not None:
            self._correct(args, title, body)
            return
        with engine_errors():  # the engine's one parser: title line, body, --type, tags, date
            require_title(title)
            checkpoint = self.session.memory.remember(
                title,
                body,
                type=args.type,
                tags=args.tags,
                on=args.date,
                notebook=self.session.notebook_name,
                cell=self._cell_number(),
                via=VIA_MAGIC,
                trigger=trigger if trigger is not None else args.trigger,
                rule=rule if rule is not None else args.rule,
            )
        self.session.note(f"remember {checkpoint.id}")
        print(visible(render.checkpoint_line(checkpoint)))

    def _correct(self, args: Any, title: str, body: str) -> None:
        """`%%remember --replaces ID`: a correction (the title defaults to the replaced one's)."""
        with engine_errors():
            checkpoint = correct(
                self.session.memory, args.replaces, title, body,
                via=VIA_MAGIC, notebook=self.session.notebook_name, cell=self._cell_number(),
                type=args.type, tags=args.tags, on=args.date,
            )  # fmt: skip
        self.session.note(f"remember {checkpoint.id} replacing {checkpoint.replaces}")
        print(visible(render.checkpoint_line(checkpoint) + f", replacing {checkpoint.replaces}"))

    def _cell_number(self) -> str:
        """The running cell's execution count, `[7]` in the notebook. IPython 9 bumps
        `shell.execution_count` before a cell runs and IPython 8 after, so it is read from the
        running cell's ExecutionResult; outside a cell, the shell's count."""
        running = getattr(self.shell.displayhook, "exec_result", None)
        count = getattr(running, "execution_count", None)
        return str(count if count is not None else self.shell.execution_count)

    # --- %recall ----------------------------------------------------------------------
    @line_magic
    @magic_arguments()
    @argument("query", nargs="*", help="What to look for: words, a topic, a name.")
    @argument("-k", metavar="N", help="How many hits (default: Hipo.recall_k).")
    @argument("--since", metavar="YYYY-MM-DD", help="Only memory from this day on.")
    @argument("--until", metavar="YYYY-MM-DD", help="Only memory up to this day.")
    @argument("--type", metavar=TYPES, help="Only checkpoints of this type.")
    @argument(
        "--mode",
        metavar="keyword|semantic|hybrid",
        help=(
            "keyword (BM25, tree, topics), semantic (meaning) or hybrid "
            "(both fused). Default: Hipo.recall_mode (hybrid when the model is installed)."
        ),
    )
    @argument(
        "--team",
        action="store_true",
        help="Search the team's memory (Hipo.team_url): every author's checkpoints.",
    )
    @argument("--df", action="store_true", help="Return the hits as a pandas DataFrame.")
    @argument("--all", action="store_true", help="Also the checkpoints a correction replaced.")
    def recall(self, line: str) -> Any:
        """Search memory: Topics Index, compaction nodes and raw checkpoints, newest favoured.

        Returns the hits (`hits = %recall pricing`; `hits[0].file`); each shows its date, type,
        title, a snippet, the way down the tree (ROOT -> month -> week -> day -> raw log) and
        where it came from (notebook, cell, front end, model). `--df` returns a DataFrame.
        """
        args = parse_line(self.recall, line)
        if not " ".join(args.query).strip():
            raise UsageError("what should I recall? %recall QUERY [-k N] [--since D] [--type T]")
        with engine_errors():
            request = RecallQuery.parse(
                args.query,
                k=args.k,
                since=args.since,
                until=args.until,
                type=args.type,
                mode=args.mode or self.session.settings.recall_mode,
                default_k=self.session.settings.recall_k,
                superseded=args.all,
            )
            memory = self.session.memory
            result = memory.team_recall(request) if args.team else memory.recall_query(request)
            if args.df:
                return hits_frame(result.hits)
        return display.RecallView.of(result)

    # --- %sparql ----------------------------------------------------------------------
    @line_cell_magic
    @magic_arguments()
    @argument("query", nargs="*", help="A one-line query; with %%sparql the cell is the query.")
    def sparql(self, line: str, cell: str | None = None) -> Any:
        """SPARQL over the memory as RDF; the result is a pandas DataFrame (extras `graph`
        and `frame`). The prefixes schema:, hipo:, field:, xsd: and rdf: are predefined:

            %%sparql
            SELECT ?date ?title WHERE {
              ?c hipo:type "feedback" ; schema:dateCreated ?date ; schema:name ?title }
            ORDER BY ?date

        A one-line query fits on the line: `%sparql SELECT (COUNT(*) AS ?n) WHERE {...}`.
        The line is not split into options: SPARQL is passed to the store as typed.
        """
        query = line if cell is None else cell
        if not query.strip():
            raise UsageError("%%sparql needs a query in the cell (or %sparql QUERY)")
        with engine_errors():
            result = self.session.memory.sparql(query)
            return result_frame(result, to_frame)

    # --- %hipo ------------------------------------------------------------------------
    @line_magic
    @magic_arguments()
    @argument(
        "subcommand",
        nargs="?",
        default="status",
        help=(
            "status | compact | layer1 | budget | topics | reindex | check | inject | rules "
            "| forget | corrections (default: status)."
        ),
    )
    @argument(
        "value",
        nargs="?",
        help="inject: on | off (no value: show the setting); rules: accept; forget: the ID.",
    )
    @argument("id", nargs="?", help="rules accept: the ID of the proposed rule to accept.")
    @argument(
        "--text",
        action="store_true",
        help="budget, topics: plain text even where the widgets are available.",
    )
    def hipo(self, line: str) -> None:
        """Look after the memory: status, compact, layer1, budget, topics, rules, reindex, check,
        inject.

        status   where the memory is, how much it holds, what is waiting to be compacted
        compact  run the compaction chain (raw -> daily -> weekly -> monthly -> ROOT)
        layer1   the Layer 1 text that goes into every prompt
        budget   each Layer 1 part's tokens against its budget
        topics   the Topics Index of ROOT.md
        rules    the feedback rules by trigger (trigger -> rule -> checkpoint), superseded last,
                 then the rules others proposed; `rules accept ID` makes one yours
        reindex  rebuild the search index from the Markdown files
        check    pass or fail for each rule of the protocol in this kernel session
        inject   on | off: Layer 1 in the LLM calls made in this kernel (Hipo.inject_clients)
        forget   ID [--reason "TEXT"]: remove a checkpoint for good (a tombstone stays)
        corrections  the corrections agents proposed to your notes; `corrections accept ID`
        """
        line, reason = pop_quoted_option(line, "reason")
        args = parse_line(self.hipo, line)
        handler = self._subcommands().get(args.subcommand)
        if handler is None:
            valid = ", ".join(self._subcommands())
            raise UsageError(f"unknown %hipo subcommand {args.subcommand!r}: use one of {valid}")
        if reason is not None and args.subcommand != "forget":
            raise UsageError("--reason goes with %hipo forget ID")
        if args.value is not None and args.subcommand not in (
            "inject", "rules", "forget", "corrections"
        ):  # fmt: skip
            raise UsageError(f"%hipo {args.subcommand} takes no value ({args.value!r})")
        if args.id is not None and args.subcommand not in ("rules", "corrections"):
            raise UsageError(f"%hipo {args.subcommand} takes no value ({args.id!r})")
        # what it prints holds stored text: shown, never obeyed (escapes, bidi, zero-width)
        with engine_errors(), standard_streams_shown_as_text():
            if args.subcommand == "inject":
                self._inject(args.value)
            elif args.subcommand == "rules":
                self._rules(action=args.value, proposal=args.id)
            elif args.subcommand == "forget":
                self._forget(args.value, reason or "")
            elif args.subcommand == "corrections":
                self._corrections(action=args.value, proposal=args.id)
            else:
                handler(text_only=args.text)

    def _subcommands(self) -> dict[str, Callable[..., None]]:
        return {
            "status": self._status,
            "compact": self._compact,
            "layer1": self._layer1,
            "budget": self._budget,
            "topics": self._topics,
            "reindex": self._reindex,
            "check": self._check,
            "inject": self._inject,
            "rules": self._rules,
            "forget": self._forget,
            "corrections": self._corrections,
        }

    def _forget(self, checkpoint_id: str | None, reason: str = "", **_: Any) -> None:
        if not checkpoint_id:
            raise UsageError('%hipo forget needs a checkpoint ID: %hipo forget ID [--reason "WHY"]')
        report = self.session.memory.forget(checkpoint_id, reason=reason, via=VIA_MAGIC)
        self.session.note(f"forget {report.id}")
        print(report.text())
        if not report.clean:
            raise UsageError(f"{report.id} is still in " + ", ".join(report.remaining))

    def _corrections(
        self, action: str | None = None, proposal: str | None = None, **_: Any
    ) -> None:
        memory = self.session.memory
        if action is None:
            waiting = proposed_corrections(memory)
            print(proposed_corrections_text(waiting, "%hipo corrections accept"), end="")
            return
        if action != "accept" or not proposal:
            raise UsageError("use %hipo corrections, or %hipo corrections accept ID")
        accepted = accept_correction(memory, proposal, via=VIA_MAGIC)
        print(f"accepted: {accepted.id} now corrects {accepted.replaces}")

    def _check(self, text_only: bool) -> None:
        print(results_text(self.session.writeback.checks()))

    def _inject(self, value: str | None = None, **_: Any) -> None:
        settings = self.session.settings
        if value is not None:
            if value.lower() not in ("on", "off"):
                raise UsageError(f"%hipo inject {value}: use on or off")
            settings.inject = value.lower() == "on"
            self.session.note(f"inject {value.lower()}")
        state = "on: Layer 1 goes" if settings.inject else "off: Layer 1 does not go"
        clients = ", ".join(settings.inject_clients) or "no SDK: Hipo.inject_clients is empty"
        print(f"injection {state} into the LLM calls made in this kernel ({clients})")

    def _status(self, text_only: bool) -> None:
        print(render.status_text(self.session.memory.status()))

    def _compact(self, text_only: bool) -> None:
        with ProgressBar("compacting") as bar:
            report = self.session.memory.compact(progress=bar)
        self.session.note(f"compact: {len(report.built)} nodes built")
        print(display.report_text(report))

    def _layer1(self, text_only: bool) -> None:
        text = self.session.memory.layer1().text
        print(text.rstrip() if text.strip() else "Layer 1 is empty: nothing remembered yet")

    def _budget(self, text_only: bool) -> None:
        memory = self.session.memory
        if text_only or not self._show_widget("show_budget", memory):
            print(render.budget_text(memory.layer1()))
        print(self._cache_text(memory))

    def _cache_text(self, memory: Any) -> str:
        last = self.session.writeback.last_call
        model = last.model if last is not None and last.model else self.session.settings.model
        layer1 = memory.layer1()
        fence = count_tokens(llm.layer1_block(layer1.text)["text"]) - layer1.total_tokens
        usage = last.usage() if last is not None else None
        return display.cache_text(
            usage,
            model,
            layer1.total_tokens,
            caching.min_cacheable_tokens(model),
            fence_tokens=max(fence, 0),
        )

    def _topics(self, text_only: bool) -> None:
        memory = self.session.memory
        if text_only or not self._show_widget("show_topics", memory):
            print(render.topics_text(memory.topics()))

    def _rules(self, action: str | None = None, proposal: str | None = None, **_: Any) -> None:
        memory = self.session.memory
        if action is None:
            print(display.rules_text(memory.rules(), memory.proposals()))
            return
        if action != "accept":
            raise UsageError(f"%hipo rules {action}: use %hipo rules accept ID")
        if not proposal:
            raise UsageError("%hipo rules accept needs the ID of a proposed rule (%hipo rules)")
        notebook = self.session.notebook_name
        accepted = memory.accept_rule(proposal, via=VIA_MAGIC, notebook=notebook)
        self.session.note(f"rule accepted: {accepted.field('accepts')}")
        print(accepted_text(accepted))

    def _reindex(self, text_only: bool) -> None:
        with ProgressBar("indexing", unit="file") as bar:
            count = self.session.memory.reindex(progress=bar)
        self.session.note(f"reindex: {count} documents")
        print(f"search index rebuilt: {count} documents")

    def _show_widget(self, name: str, memory: Any) -> bool:
        """Hand over to hipo_jupyter.ipython.widgets when it exists and a kernel front end can draw
        widgets (a terminal IPython cannot); False means: print the text instead."""
        if getattr(self.shell, "kernel", None) is None:
            return False
        try:
            widgets = importlib.import_module(WIDGETS_MODULE)
        except ImportError:
            return False
        show = getattr(widgets, name, None)
        if show is None:
            return False
        show(memory)
        return True
