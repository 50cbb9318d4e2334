"""`Memory`: the one object every front end (magics, CLI, widgets, server, LLM calls) goes through.

A Memory is a root folder laid out as Hipocampus lays it out (see `store`). It writes checkpoints
to the raw log and indexes them in the same call, keeps the compaction tree and the search index
up to date from the Markdown files (which stay the truth), and answers recall.

This module is the facade: each method hands over to a module of the room that does the job
(`recall/`, `intake/`, `tree/`, `views/`, `search/indexing`, `backends` for the team database).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .backends import NoTeam, TeamFactory
from .config import MemoryConfig
from .disk import anchored
from .disk.checkpoint import Checkpoint
from .disk.redact import redact
from .disk.sent import Sent, read_sent, sidebar_stamp, write_sent
from .disk.store import RawStamps, Store, raw_log_path
from .errors import HipoError
from .events import Listeners
from .forget import ForgetLedger, ForgetReport
from .forget import forget as forget_checkpoint
from .intake import notes
from .intake.importers import ImportRecord, ImportReport
from .intake.notes import NoteFiles
from .intake.writing import ImportWrite, Writer, new_checkpoint
from .recall import context as context_pack
from .recall.ranking import Hit, RecallResult
from .recall.recall_run import LocalRecall
from .requests import (
    DEFAULT_BUDGET,
    DEFAULT_RECALL_MODE,
    DEFAULT_SETTINGS,
    MAX_K,
    CheckpointDraft,
    RecallQuery,
    RecallSettings,
    not_in_future,
    parse_day,
)
from .roots import today_from_env
from .search.contract import Document, SearchIndex
from .search.embed import Embedder
from .search.indexing import IndexKeeper
from .search.semantic import SemanticIndex
from .tree.background import BackgroundSummaries
from .tree.chain import CompactionReport, Compactor, late_entry
from .tree.layer1 import Layer1, assemble_layer1, with_rules_index, write_templates
from .tree.root_update import refresh_root_after_write
from .tree.status import NodeInfo, Status, list_nodes, memory_status, read_checkpoints
from .tree.status import recent_checkpoints as latest_checkpoints
from .tree.summarize import ExtractiveSummarizer, Summarizer
from .tree.tokens import TokenCountCache
from .tree.topic_index import TopicsCache, TopicsIndex
from .views.catalog import CheckpointCatalog
from .views.rules import Rule, acceptance_body, find_proposal, rules_index_text
from .views.structured import StructuredViews

if TYPE_CHECKING:
    import pandas

    from .views.graph import MemoryGraph, SparqlResult  # pyoxigraph: imported only with the extra

Progress = Callable[[int, int, str], None]
"""progress(done, total, label): called during long work (compaction, reindex)."""


class Memory:
    """A memory root. Cheap to construct; files are created on first write (or `init`)."""

    def __init__(
        self,
        root: str | Path,
        *,
        config: MemoryConfig | None = None,
        summarizer: Summarizer | None = None,
        today: Callable[[], date] | None = None,
        embedder: Embedder | None = None,
        team: TeamFactory | None = None,
    ) -> None:
        """`embedder` replaces the semantic extra's model (tests, another model in code); `team`
        builds the team backend, handed in by the front end that read its URL (`team.link`)."""
        self.store = Store(root)
        self.root = self.store.root
        self.config = config or MemoryConfig()
        self.summarizer = summarizer or ExtractiveSummarizer()
        self._today = today or today_from_env
        self._token_cache = TokenCountCache(self.store.index_dir / "token-counts.json")
        self._listeners = Listeners()
        self._lock = threading.RLock()
        self.catalog = CheckpointCatalog(self.store)  # issue 15: rules, frame, graph
        self.semantic = SemanticIndex(
            self.store.index_dir,
            setting=self.config.semantic,
            model_path=self.config.embedding_model or None,
            tokenizer_path=self.config.embedding_tokenizer or None,
            embedder=embedder,
        )
        self._indexer = IndexKeeper(self.store, self.config, self.semantic, self._today)
        self._topics = TopicsCache(self.store, self._all_checkpoints)
        self.forgotten = ForgetLedger(self.store)  # what every holder obeys (`forget/ledger`)
        self._recall = LocalRecall(self.store, self.config, self._indexer, self._topics,
                                   self._today, self._lock, self.forgotten,  # marks proposals:
                                   lambda stamps: self._views.proposal_places(stamps))  # fmt: skip
        self._views = StructuredViews(self.store, self.catalog, self._lock)
        self._writer = Writer(self.store, self._indexer, self._topics, self._lock, self._views,
                              self.forgotten)  # fmt: skip
        self._notes = NoteFiles(self.store, self._indexer, self._lock)
        self._team = (team or NoTeam)(self.store, self.config, self._today)
        self.background_summaries = False  # a kernel sets it: no cell waits on a model's summary
        self.summaries = BackgroundSummaries(self.write_summaries)

    def __repr__(self) -> str:
        return f"Memory({str(self.root)!r})"

    @property
    def today(self) -> date:
        return self._today()

    # --- files -----------------------------------------------------------------------------
    def init(self) -> list[str]:
        """Create memory/, knowledge/, plans/ and the Layer 1 files from their templates."""
        self.store.ensure_layout(full=True)
        return write_templates(self.root)

    def has_memory(self) -> bool:
        """Whether the root holds a memory yet. Read-only front ends (recall, status, check)
        say so instead of creating one."""
        return self.store.has_memory()

    def read(self, relative_path: str) -> str:
        """One of the memory's own files (`notes.check_served`: Layer 1, a note, a raw log, a
        node), reached through folders only and redacted on the way out: what MCP's `read`, the
        server and the memory tool serve. Anything else under the root is refused."""
        relative = notes.check_served(notes.normalize(relative_path.split("#", 1)[0]))
        self.store.inside(relative)  # a link out of the root is named as such
        if not anchored.exists(self.root, relative):
            raise HipoError(f"no such memory file: {relative}")
        return redact(self.store.read_text(self.root / relative))

    # --- writing (the write path is `writing`) -----------------------------------------------
    def remember(
        self,
        title: str,
        body: str = "",
        *,
        type: str | None = None,
        tags: Sequence[str] = (),
        on: str | date | None = None,
        notebook: str | None = None,
        cell: str | None = None,
        via: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        trigger: str | None = None,
        rule: str | None = None,
    ) -> Checkpoint:
        """Append one checkpoint to the raw log of `on` (default today) and index it at once.
        `title` is a title line as `%%remember` reads it (`[type]` and `#tags` at its end);
        an explicit `type` wins over the title's; input is checked once (`CheckpointDraft`).
        `via` names the front end, `model` and `provider` the calls a write-back came from,
        `trigger` and `rule` make a feedback rule."""
        draft = CheckpointDraft.parse(
            title, body, type=type, tags=tags, on=on, trigger=trigger, rule=rule
        )
        return self.write_checkpoint(draft, notebook=notebook, cell=cell, via=via, model=model,
                                     provider=provider)  # fmt: skip

    def write_checkpoint(
        self,
        draft: CheckpointDraft,
        *,
        notebook: str | None = None,
        cell: str | None = None,
        via: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        conversation: str | None = None,
        sources: Sequence[str] = (),
    ) -> Checkpoint:
        """Write a checked draft: redacted, appended to its day's raw log, indexed at once;
        its provenance (`new_checkpoint`: notebook, cell, via, model, provider, conversation)
        and lineage (`sources`: the ids of the checkpoints its call was sent)."""
        not_in_future(draft.day, self.today)
        checkpoint = new_checkpoint(draft, notebook=notebook, cell=cell, via=via, model=model,
                                    provider=provider, conversation=conversation,
                                    sources=sources)  # fmt: skip
        day = draft.day or self.today
        return self._after_write([self._writer.checkpoint(checkpoint, day)], day)[0]

    def remember_all(
        self,
        pieces: Sequence[tuple[str, str]],
        *,
        on: str | date | None = None,
        notebook: str | None = None,
        via: str | None = None,
    ) -> list[Checkpoint]:
        """`remember` for many (title, body) pairs: all or nothing, one append and one index
        of the log (`Writer.many`), linear where a `remember` each is not."""
        not_in_future(parse_day(on, "--date"), self.today)
        day, written = self._writer.many(pieces, today=self.today, on=on, notebook=notebook,
                                         via=via)  # fmt: skip
        return self._after_write(written, day)

    def _after_write(self, written: list[Checkpoint], day: date) -> list[Checkpoint]:
        """Layer 1 shows what was just written (`root_update`), then the team and listeners hear
        of it; a checkpoint found already there (`repeated`) leaves ROOT.md and the team alone.
        A late entry the tree cannot leave for later compacts at once (`chain.late_entry`)."""
        fresh = [checkpoint for checkpoint in written if not checkpoint.repeated]
        if fresh:
            with self._lock:
                budget = self.config.root_budget
                refresh_root_after_write(self.store, fresh[-1], self._topics, self.today, budget)
            if late_entry(self.store, day, self.today):
                with contextlib.suppress(HipoError, OSError):  # written; `check` says what is left
                    self.compact()
            self._team.after_write(day)
        if written:
            self._notify("remember")
        return written

    def save_knowledge(
        self, title: str, text: str, *, on: date | None = None, via: str | None = None
    ) -> str:
        """Offload a large text (a long reply, a tool result) to knowledge/ and index it.

        The live context then keeps only the returned path. The name is the day and the title's
        slug; an existing file is never overwritten (a counter is added instead). `via`: the
        front end writing it (None: the user); any other writer's note is recalled as theirs.
        """
        relative = self._writer.knowledge(title, text, on or self.today, via=via)
        self._notify("remember")
        return relative

    # --- notes an agent keeps (issue 14: Claude's memory tool; see intake/notes) -------------
    def write_note(self, relative_path: str, text: str, *, via: str | None = None) -> str:
        """Write a Layer 1 working file or a note under knowledge/ or plans/ (atomically, secrets
        redacted) as `via` (None: the user; `tree/line_writers`); a knowledge note is indexed at
        once. Anything else is refused (NotWritable) with why; returns the clean path."""
        relative = self._notes.write(relative_path, text, via=via)
        self._notify("remember")
        return relative

    def delete_note(self, relative_path: str) -> str:
        """Delete a note under knowledge/ or plans/ (and its index entry); nothing else."""
        relative = self._notes.delete(relative_path)
        self._notify("remember")
        return relative

    def move_note(self, old_path: str, new_path: str) -> str:
        """Rename a note within knowledge/ and plans/; the destination must not exist."""
        new = self._notes.move(old_path, new_path)
        self._notify("remember")
        return new

    def note_writer(self, relative_path: str) -> str:
        """Who wrote a note under knowledge/ or plans/ when not the user ("agent", "claude"),
        "" for the user's own: what a front end that hands out the file says beside it."""
        return self._notes.writer(relative_path)

    def note_file(self, relative: str) -> Path:
        """The file of a memory path (clean, relative), refusing any symlink on the way."""
        return self._notes.file(relative)

    # --- import (issue 5: `hipo import`; parsing lives in importers.py) -----------------------
    def import_records(
        self, records: Sequence[ImportRecord], *, progress: Progress | None = None
    ) -> ImportReport:
        """Write imported turns into the raw logs of their own dates (`Writer.imports`: whole
        checkpoints, nothing twice, nothing forgotten), then compact."""
        return self.import_batches([records], progress=progress)

    def import_batches(
        self, batches: Iterable[Sequence[ImportRecord]], *, progress: Progress | None = None
    ) -> ImportReport:
        """`import_records` for an import too large to hold (`intake/sources.py`): each batch
        written as it comes (whole conversations, so a reply meets its question), then one
        compaction for them all."""
        written = ImportWrite.merged(self._writer.imports(batch) for batch in batches)
        compaction = self.compact(progress=progress) if written.counts else None
        if written.counts and self.semantic.enabled:  # every turn embedded now, with progress
            with self._lock:
                self._indexer.sync(progress, backlog=True)
        return written.report(compaction)

    # --- the tree ----------------------------------------------------------------------------
    def _compactor(self) -> Compactor:
        return Compactor(self.store, self.config, self.summarizer, self.today)

    def compact(
        self, *, progress: Progress | None = None, background: bool | None = None
    ) -> CompactionReport:
        """Bring the tree up to date (every dirty node in one pass), then the index.

        With a summarizer that calls a model and `background` (default: the Memory's
        `background_summaries`, which a kernel sets), the pass writes the extractive summary
        where a summary is due and the model's are written afterwards in a thread
        (`tree/background`), so the caller waits only on local work. Without it the pass writes
        them itself, then any a deferred pass still owes (a kernel that exited mid-summary)."""
        later = self.background_summaries if background is None else background
        model = self.summarizer.name != ExtractiveSummarizer.name
        self.store.ensure_layout()  # memory/ only: the working files are made by `init`
        with self._lock, self.store.compaction_lock():
            compactor = Compactor(
                self.store, self.config, self.summarizer, self.today, defer=later
            )
            report = compactor.run(progress)
            self._indexer.sync()
            self._topics.forget()
        if report.built:
            self._notify("compact")
        if model and later:
            self.summaries.start()
        elif model and compactor.owed():
            self.write_summaries(progress=progress)
        return report

    def owed_summaries(self) -> list[str]:
        """The nodes standing in with the extractive summary for the model's (`Compactor.owed`)."""
        return self._compactor().owed()

    def write_summaries(
        self, *, progress: Progress | None = None, stop: threading.Event | None = None
    ) -> list[str]:
        """Write the summaries a deferred pass owes (`Compactor.owed`), one node at a time: its
        sources are read and its summary written under the locks, the model is called outside
        them, so writes and recall go on meanwhile; `stop` ends it between two nodes. A node
        written is indexed at once. Returns the node paths written."""
        compactor = Compactor(self.store, self.config, self.summarizer, self.today, defer=True)
        written: list[str] = []
        tried: set[str] = set()
        done = 0
        while not (stop is not None and stop.is_set()):
            owed = [path for path in compactor.owed() if path not in tried]
            if not owed:
                break
            tried.add(owed[0])
            if progress:
                progress(done, done + len(owed), owed[0])
            with self._lock, self.store.compaction_lock():
                job = compactor.owed_job(owed[0])
            done += 1
            if job is None:
                continue
            body, error = None, ""
            try:
                body = job.summarize(self.summarizer)
            except Exception as exc:  # a model may fail in any way; the stand-in stays
                error = f"{self.summarizer.name} summarizer failed ({exc})"
            with self._lock, self.store.compaction_lock():
                if stop is not None and stop.is_set():
                    break
                paths = compactor.write_owed(job, body, error)
                if paths:
                    self._indexer.sync()
                    self._topics.forget()
            written += paths
        if progress:
            progress(done, done, "done")
        if written:
            self._notify("compact")
        return written

    def layer1(self) -> Layer1:
        """Layer 1 measured; counts are remembered by content, so an unchanged Layer 1 is
        measured without building the tokenizer."""
        return self._layer1(None)

    def _layer1(self, stamps: RawStamps | None) -> Layer1:
        """`layer1`, the rules read for the raw logs' `stamps` when the caller listed them."""
        budgets, count = self.config.layer1_budgets, self._token_cache.count
        layer1 = assemble_layer1(self.root, budgets, count)
        rules = rules_index_text(self._views.rules(stamps))
        layer1 = self.forgotten.without_pending(with_rules_index(layer1, rules, budgets, count))
        layer1.total_tokens  # noqa: B018 - counted now so the count is saved with the rest
        self._token_cache.save()
        return layer1

    def topics(self) -> TopicsIndex:
        """The Topics Index as data (what ROOT.md lists); cheap when nothing changed: only a raw
        log changed by someone else re-reads every log (`topic_index.TopicsCache`)."""
        return self._topics.index(self.today)

    def _all_checkpoints(self, days: Sequence[date] | None = None) -> list[Checkpoint]:
        return read_checkpoints(self.store, days)

    # --- structured views (issue 15, `structured`): derived from the raw logs -----------------
    def rules(self) -> list[Rule]:
        """The feedback rules in force, active first, by trigger (see `rules`)."""
        return self._views.rules()

    def proposals(self) -> list[Rule]:
        """Rules others proposed and the user has not accepted (in no prompt), newest first."""
        return self._views.proposals()

    def accept_rule(self, proposal_id: str, *, via: str, notebook: str | None = None) -> Checkpoint:
        """Accept a proposal: the user's (`via`) checkpoint restating it (`acceptance_body`)."""
        found = find_proposal(self._views.all_rules(), proposal_id, accepted_via=via)
        body = acceptance_body(found)  # accepted twice at once: the same rule, twice, is harmless
        return self.remember(found.title, body, type="feedback", notebook=notebook, via=via)

    def frame(self) -> pandas.DataFrame:
        """One row per checkpoint (see `frame.COLUMNS`), with pandas (the `frame` extra)."""
        return self._views.frame()

    def graph(self) -> MemoryGraph:
        """The memory as RDF (the `graph` extra), brought up to date with the raw logs."""
        return self._views.graph()

    def sparql(
        self, query: str, *, timeout: float | None = None, max_rows: int | None = None
    ) -> SparqlResult:
        """SPARQL over `graph()`; a query it cannot read, SERVICE or LOAD, a query over
        `timeout` seconds or `max_rows` rows (default: the config's `sparql_timeout`,
        `sparql_max_rows`) raises a one-line SparqlError."""
        timeout = self.config.sparql_timeout if timeout is None else timeout
        max_rows = self.config.sparql_max_rows if max_rows is None else max_rows
        return self._views.sparql(query, timeout=timeout, max_rows=max_rows)

    def forget(
        self, checkpoint_id: str, *, reason: str = "", via: str, keep_derived: bool = False
    ) -> ForgetReport:
        """Remove a checkpoint for good, and what lineage says was made from it unless
        `keep_derived`: the user's power only (`forget/forgetting`)."""
        with self._lock:
            return forget_checkpoint(self, checkpoint_id, reason=reason, via=via,
                                     keep_derived=keep_derived)  # fmt: skip

    def export(self, format: str, out: Path | BinaryIO) -> int:
        """Write the memory as csv, parquet, jsonl (one row per checkpoint) or turtle (the
        graph) to a path or a binary stream; returns rows written (triples for turtle)."""
        return self._views.export(format, out)

    # --- what the memory holds (`status`) -----------------------------------------------------
    def raw_logs(self) -> list[str]:
        """The raw daily logs, oldest first, relative to the root (regular files only)."""
        return [raw_log_path(day) for day in self.store.raw_days()]

    def nodes(self) -> list[NodeInfo]:
        """Every compaction node, newest period first within each level (frontmatter only)."""
        return list_nodes(self.store)

    def recent_checkpoints(self, n: int = 10, *, grouped: bool = False) -> list[Checkpoint]:
        """The `n` latest, newest first; `grouped`: Claude's write-backs as one entry, last."""
        return latest_checkpoints(self.store, n, grouped=grouped)

    def changes(self, notebook: str | None = None) -> str:
        """A stamp that moves whenever what the sidebar shows may have (`disk/sent`)."""
        return sidebar_stamp(self.store, notebook)

    def record_sent(self, sent: Sent) -> None:
        write_sent(self.store, sent)

    def last_sent(self, notebook: str | None) -> Sent | None:
        return read_sent(self.store, notebook)

    def status(self) -> Status:
        """The numbers `hipo status` and the sidebar show."""
        return memory_status(
            self.store,
            plan=self._compactor().plan(),
            layer1=self.layer1(),
            index=self._ensure_index(),
            topics=len(self.topics()),
            backend=self.config.search_backend,
            semantic=self.semantic.status()[1],
        )

    # --- search ------------------------------------------------------------------------------
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Drop the index and build it again from the Markdown files. Vectors whose text did not
        change are kept (they are keyed by a hash of the text); the rest are embedded again."""
        with self._lock:
            count = self._indexer.rebuild(progress)
        self._notify("reindex")
        return count

    # The index, for the engine's own tests and tools (the keeper is `indexing.IndexKeeper`).
    def _open_index(self) -> SearchIndex:
        return self._indexer.open()

    def _ensure_index(self) -> SearchIndex:
        return self._indexer.ensure()

    def _documents(self, relative: str, data: bytes) -> list[Document]:
        return self._indexer.documents(relative, data)

    def recall(
        self,
        query: str,
        *,
        k: int | str = 5,
        since: str | date | None = None,
        until: str | date | None = None,
        type: str | None = None,
        neighbours: bool = False,
        mode: str | None = DEFAULT_RECALL_MODE,
        team: bool = False,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> RecallResult:
        """Ranked hits for `query`; `team=True` searches the team database (`team_recall`);
        `neighbours=True` also lifts the checkpoints just before and after each raw hit (a
        reply, a next step): what a model's context wants, where a person wants only matches.
        `mode`: "keyword" (BM25 with tree, topics and recency), "semantic" (the
        nearest vectors alone), "hybrid" (both, fused as `config.fusion` says: "score" adds
        similarity to BM25 relevance, `ranking.blend_relevance`; "rrf" fuses the rankings,
        `hybrid.fuse`) or "auto" (hybrid when semantic recall is on: `DEFAULT_RECALL_MODE`,
        every front end's default too, None meaning it). Hybrid without the extra answers by
        keyword, and says so in `mode`. `settings` (`RecallSettings`): the weights and limits."""
        mode = mode or DEFAULT_RECALL_MODE
        request = RecallQuery.parse(query, k=k, since=since, until=until, type=type, mode=mode)
        if team:
            return self.team_recall(request)
        return self.recall_query(request, neighbours=neighbours, settings=settings)

    # --- team memory (issue 16, `backends`): the backend handed in, if any ----------------------
    def team_sync(self, *, full: bool = False) -> Any:
        """Push the raw checkpoints to the team database (`hipo team sync`): idempotent by
        checkpoint id; types and tags in `config.team_exclude` stay local; redacted first.
        Returns the backend's report (`hipo_jupyter.team.SyncReport` for PostgreSQL)."""
        return self._team.sync(full=full)

    def team_recall(self, request: RecallQuery) -> RecallResult:
        """`recall` over the team database, each hit naming its author (keyword only)."""
        hidden = self.forgotten.hides_copy()  # a teammate's copy of what the user forgot
        if hidden is None:
            return self._team.recall(request, semantic_on=self.semantic.enabled)
        return self._team.recall(request, semantic_on=self.semantic.enabled, hidden=hidden)

    def team_resume(self) -> None:
        """Push in the background what a past session queued for the team (a warning at worst)."""
        self._team.after_write(None)

    def recall_query(
        self,
        request: RecallQuery,
        *,
        neighbours: bool = False,
        snippets: bool = True,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> RecallResult:
        """`recall` for a request already parsed (the front ends parse it first); raw hits
        carry their checkpoint's provenance. `snippets=False` (what `context` asks): hits
        carry the start of their text, not the index's cut around the matches."""
        return self._recall.recall(
            request, neighbours=neighbours, snippets=snippets, settings=settings
        )

    def context(
        self,
        query: str,
        *,
        budget: int = DEFAULT_BUDGET,
        layer1: bool = True,
        since: str | date | None = None,
        until: str | date | None = None,
        type: str | None = None,
        mode: str | None = DEFAULT_RECALL_MODE,
        team: bool = False,
        conversation: str | None = None,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> context_pack.Context:
        """The text a model is sent for `query`, within `budget` tokens: Layer 1's lines about
        the query (at most a sixteenth; `layer1=False` leaves it out, as `%%ask` does, which
        sends all of it as its own block), then the recalled memory fenced as quoted data, in
        time order with each piece's date and source, long pieces as their passage that
        answers (see `recall/context`). One call for every front end and the
        benchmarks, so what is measured is what users get. `mode` as for `recall`
        (`DEFAULT_RECALL_MODE`, None meaning it: hybrid when semantic recall is on). `team=True`
        recalls from the team database instead (`team_recall`); each piece then names its
        author and notebook. Not a write-back of `conversation`, the `%%ask` conversation it is
        for (its turns are in it).
        `settings` (`RecallSettings`): the stages that fill it, the weights and the limits."""
        if team:
            return context_pack.build(
                query,
                budget=budget,
                layer1=(lambda: self.layer1().text) if layer1 else None,
                recall=lambda k: self.team_recall(
                    RecallQuery.parse(query, k=min(k, MAX_K), since=since, until=until, type=type)
                ),
                documents=lambda ids: {},  # the team's text is in its hits, not this index
                settings=settings,
            )

        # The raw logs are listed once for the whole call: Layer 1's rules and topics read them.
        stamps = self.store.raw_stamps()

        def recall(k: int) -> RecallResult:
            request = RecallQuery.parse(query, k=k, since=since, until=until, type=type,
                                        mode=mode or DEFAULT_RECALL_MODE)  # fmt: skip
            return self._recall.ranked(request, stamps, neighbours=True, snippets=False,
                                       both_lists=True, settings=settings)  # fmt: skip

        return context_pack.build(
            query,
            budget=budget,
            layer1=(lambda: self._layer1(stamps).text) if layer1 else None,
            recall=recall,
            documents=self._recall.documents,
            conversation=conversation,
            settings=settings,
        )

    def lineage(self, hits: Sequence[Hit]) -> list[str]:
        """The ids of the checkpoints among recalled `hits` (a context's pieces): what a call
        sent them records as its lineage (`Checkpoint.sources`, a conversation turn's), so a
        forget of one of them takes what the call made (`forget/forgetting`)."""
        return self._recall.checkpoint_ids(hits)

    def context_query(
        self, request: RecallQuery, *, layer1: bool = True, team: bool = False
    ) -> context_pack.Context:
        """`context` for a request already parsed: its budget (DEFAULT_BUDGET when it has
        none), dates, type and mode. What the CLI, the server and MCP call."""
        return self.context(
            request.query, budget=request.budget or DEFAULT_BUDGET, layer1=layer1, team=team,
            since=request.since, until=request.until, type=request.type, mode=request.mode,
        )  # fmt: skip

    # --- events (`events`) ---------------------------------------------------------------------
    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(event)` after "remember", "compact" or "reindex"; returns unsubscribe.
        Widgets and the sidebar refresh through this; the engine knows nothing of them."""
        return self._listeners.subscribe(callback)

    def _notify(self, event: str) -> None:
        self._listeners.notify(event)

    def close(self) -> None:
        self.summaries.stop()  # no write after this one: the next start writes what is owed
        with self._lock:  # a summary being written under the lock lands first
            pass
        self.semantic.close()  # first: the background embedder finishes what it was handed
        self._indexer.close()
