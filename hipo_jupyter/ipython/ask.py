"""`%%ask`: a Claude call from a cell, with this notebook's memory in the prompt.

The cell is the question. The prompt is built by `llm.ask_request` (Layer 1 cached, the
context-status note (saying what recall took), `Memory.context` for the question (or
`--recall`'s query) fenced as quoted data, without this conversation's own write-backs (its
turns are in it already), the conversation's anchor and summary) over the conversation's
ACTIVE turns (`llm.conversation`). The reply streams in as Markdown, with one line of token
usage under it. Successive cells are one conversation until `--new` or `%ask reset`; it is saved
beside the memory after every exchange.

A failed call (no key, 401, 429, 529, a timeout) ends in one line after the SDK's retries; the
conversation is only changed once a reply has arrived, so it is intact, and nothing written is
lost.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from hipo_jupyter import llm
from hipo_jupyter.llm import tool_run
from hipo_jupyter.llm.conversation import (
    TRIGGER_DONE,
    TRIGGER_WINDOW,
    Conversation,
    adopt_legacy,
    archive,
    conversation_path,
    drop_forgotten,
)
from hipo_jupyter.memory import MIN_BUDGET, Context, HipoError, Sent, SentPart
from hipo_jupyter.memory.tree import count_tokens

from . import display
from .magics import engine_errors, parse_line
from .session import ForgetWatch, HipoSession

SUBCOMMANDS = ("reset", "done", "status")


@magics_class
class AskMagics(Magics):
    """%%ask and %ask over the session's memory and conversation."""

    def __init__(self, shell: Any, session: HipoSession) -> None:
        super().__init__(shell=shell)
        self.session = session
        self._conversation: Conversation | None = None
        self._path: Path | None = None
        self._forgets = ForgetWatch()  # the forgets this conversation has obeyed

    @line_cell_magic
    @magic_arguments()
    @argument(
        "words",
        nargs="*",
        help="Line form only: a one-line question, or reset | done [NOTE] | status.",
    )
    @argument("--model", metavar="M", help="Model for this call (default: Hipo.model).")
    @argument(
        "--recall",
        nargs="+",
        metavar="QUERY",
        help="Recall memory for QUERY instead of the question itself (fenced as quoted data).",
    )
    @argument(
        "--no-recall",
        action="store_true",
        help="Send no recalled memory with this call (Hipo.auto_recall = False: never).",
    )
    @argument("--no-memory", action="store_true", help="Leave Layer 1 out of this call.")
    @argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="Longest reply, in tokens (default: Hipo.max_tokens).",
    )
    @argument(
        "--new",
        action="store_true",
        help="Start a new conversation (the old one is kept beside the memory).",
    )
    @argument(
        "--tools",
        nargs="+",
        metavar="TOOL",
        help="Tools Claude may use in this call: memory (its memory tool over this notebook's "
        "memory). Default: Hipo.ask_tools.",
    )
    def ask(self, line: str, cell: str | None = None) -> None:
        """Ask Claude, with this notebook's memory in the prompt.

            %%ask
            What should we change for February?

        Memory is recalled with the question itself (Hipo.auto_recall) and sent fenced as
        quoted data; --recall QUERY searches for QUERY instead, --no-recall sends none.

        Successive %%ask cells are one conversation until --new or %ask reset. The line form
        asks a one-line question, or looks after the conversation:

            %ask reset           start a new conversation
            %ask done [NOTE]     a sub-task is finished: fold its turns into the summary
            %ask status          the conversation's zones and compactions
        """
        args = parse_line(self.ask, line)
        if cell is None:
            if args.words and args.words[0] in SUBCOMMANDS:
                self._subcommand(args.words[0], " ".join(args.words[1:]))
                return
            question = " ".join(args.words)
        else:
            if args.words:
                raise UsageError(
                    f"%%ask takes only options on its line ({' '.join(args.words)!r} is not "
                    "one): the cell is the question"
                )
            question = cell
        if not question.strip():
            raise UsageError("what should I ask? %%ask with the question in the cell")
        self._ask(question.strip(), args)

    # --- the conversation --------------------------------------------------------------------
    def conversation(self, *, new: bool = False) -> tuple[Conversation, Path]:
        """This notebook's conversation, loaded from disk the first time (a restarted kernel
        continues it); `new` sets the saved one aside and starts afresh."""
        with engine_errors():
            root, notebook = self.session.memory.root, self.session.conversation_name
        path = conversation_path(root, notebook)
        if self._path != path:
            with contextlib.suppress(OSError):  # a file an older version named by a slug
                moved = adopt_legacy(root, notebook, path)
                if moved is not None:
                    print(f"hipo: {moved.name} renamed {path.name} (this notebook's own name)")
        if new:
            archive(path)
            self._conversation, self._path = Conversation(), path
        if self._conversation is None or self._path != path:
            try:
                loaded = Conversation.load(path)
            except ValueError as error:
                moved = archive(path)
                print(f"hipo: {error}; set aside as {moved.name if moved else path.name}")
                loaded = None
            if loaded is not None:
                print(f"hipo: continuing the conversation in {path.name} ({loaded.turns} turns)")
            self._conversation, self._path = loaded or Conversation(), path
        self._obey_forgets(path)
        return self._conversation, path

    def _obey_forgets(self, path: Path | None) -> None:
        """A forget done since the last call, by any process (`hipo forget`, the sidebar):
        the conversation is read again from its file, which the forget scrubbed, and what the
        ledger's keyed hashes still find in it is replaced, before anything is sent or saved."""
        with engine_errors():
            memory = self.session.memory
            forgets = self._forgets.new(memory)
            if not forgets or self._conversation is None:
                return
            if path is not None:
                with contextlib.suppress(ValueError):
                    self._conversation = Conversation.load(path) or self._conversation
            lineage = memory.forgotten.forgotten_ids()
            drop_forgotten(self._conversation, memory.forgotten.scrubber(forgets), lineage)
        print("hipo: what you forgot since the last call is out of this conversation")

    def _save(self, conversation: Conversation, path: Path) -> None:
        with engine_errors():  # a forget done while the call ran: not written back
            ledger = self.session.memory.forgotten
            forgets = self._forgets.new(self.session.memory)
            if forgets:
                drop_forgotten(conversation, ledger.scrubber(forgets), ledger.forgotten_ids())
        try:
            conversation.save(path)
        except OSError as error:
            print(f"hipo: the conversation could not be saved to {path}: {error.strerror}")

    def _folder(self) -> tuple[Any, str]:
        if self.session.summarizer_name != "claude":
            return None, "extractive"
        settings = self.session.settings
        folder = llm.ClaudeFolder(
            model=settings.model, max_retries=settings.max_retries, timeout=settings.timeout
        )
        return folder, "claude"

    def _compact(self, conversation: Conversation, trigger: str, extra_tokens: int = 0) -> None:
        fold, name = self._folder()
        event = conversation.compact(
            trigger,
            fold,
            fold_name=name,
            extra_tokens=extra_tokens,
            window=self.session.settings.context_window,
        )
        if event is not None:
            self.session.note(event.line())
            print(f"hipo: {event.line()}")
            if self._path is not None:  # a call that fails next must not lose the fold
                self._save(conversation, self._path)

    def _subcommand(self, name: str, note: str) -> None:
        if name == "reset":
            _, path = self.conversation(new=True)
            print(f"hipo: new conversation (the previous one is kept in {path.parent.name}/)")
            return
        conversation, path = self.conversation()
        if name == "status":
            window = self.session.settings.context_window
            print(display.conversation_text(conversation, path.name, window))
            return
        conversation.mark_done(note)
        before = len(conversation.compactions)
        self._compact(conversation, TRIGGER_DONE)
        if len(conversation.compactions) == before:
            print("hipo: sub-task done; nothing to fold yet")
        self._save(conversation, path)

    # --- one call ----------------------------------------------------------------------------
    def _recalled(self, question: str, args: Any, conversation: str) -> Context | None:
        """The recalled memory a call sends: `Memory.context` for the question (or `--recall`'s
        query) without Layer 1 (the first system block carries it), within
        `_recall_budget` tokens; None with --no-recall, or Hipo.auto_recall off and no
        --recall, or when nothing was recalled."""
        settings = self.session.settings
        if args.no_recall and args.recall:
            raise UsageError("--recall and --no-recall: choose one")
        if args.no_recall or not (args.recall or settings.auto_recall):
            return None
        query = " ".join(args.recall) if args.recall else question
        return self.session.recall_context(
            query, budget=self._recall_budget(), conversation=conversation
        )

    def _recall_budget(self) -> int:
        """`Hipo.recall_budget`, and a tenth of the context window at most: recalled memory
        must never crowd out the conversation it is for."""
        settings = self.session.settings
        return max(MIN_BUDGET, min(settings.recall_budget, settings.context_window // 10))

    def _ask(self, question: str, args: Any) -> None:
        settings = self.session.settings
        model = args.model or settings.model
        max_tokens = settings.max_tokens if args.max_tokens is None else args.max_tokens
        if max_tokens < 1:
            raise UsageError(f"--max-tokens {max_tokens}: ask for at least 1 token")
        try:
            client = llm.make_client(max_retries=settings.max_retries, timeout=settings.timeout)
        except llm.ClaudeUnavailable as error:
            raise UsageError(str(error)) from None
        conversation, path = self.conversation(new=args.new)
        self.session.writeback.mark_conversation(conversation.identity)
        with engine_errors():
            memory = self.session.memory
            layer1 = None if args.no_memory else self.session.prompt_layer1()
            recall = self._recalled(question, args, conversation.identity)
            recalled = recall.text if recall is not None else None
            # Lineage: the checkpoints this call is sent; its write-back and turns record them.
            sources = memory.lineage(recall.hits) if recall is not None else []
        self.session.writeback.mark_sources(sources)

        window = settings.context_window
        fixed = count_tokens(question) + llm.tokens_of_block(recalled)
        if layer1 is not None:
            fixed += count_tokens(llm.layer1_block(layer1.text)["text"])
        if conversation.over_half(fixed, window):
            self._compact(conversation, TRIGGER_WINDOW, extra_tokens=fixed)
        zones = None
        if conversation.zones_in_prompt():
            zones = llm.conversation_block(
                conversation.anchor, conversation.anchor_hash, conversation.summary
            )
        names = settings.ask_tools if args.tools is None else args.tools
        with engine_errors():
            tools = tool_run.make_tools(names, memory) if names else []
        request, plan = llm.ask_request_and_plan(
            model=model,
            max_tokens=max_tokens,
            messages=conversation.messages(question),
            layer1=None if layer1 is None else layer1.stable,
            layer1_fresh=None if layer1 is None else layer1.fresh,
            status=llm.status_note(
                fixed + conversation.live_tokens(),
                window,
                recalled=llm.tokens_of_block(recalled),
                recall_budget=None if recalled is None else self._recall_budget(),
            ),
            recalled=recalled,
            conversation=zones,
            tools=tools,
        )
        self.session.cache_note(plan)
        if tools:
            run = self._run_tools(client, request, tools, without_memory=args.no_memory)
            reply, message, usage = run.reply, run.message, run.usage
            calls = tool_run.tool_calls_text(run.tool_calls)
            incomplete = llm.incomplete_reason(message)
        else:
            streamed = self._stream(client, request, without_memory=args.no_memory)
            reply, message, incomplete = streamed.text, streamed.message, streamed.incomplete
            usage, calls = getattr(message, "usage", None), ""

        self._record_sent(request, model, recall, with_layer1=layer1 is not None)
        conversation.add_exchange(question, reply, incomplete=incomplete, sources=sources)
        with engine_errors():
            conversation.offload_large(self.session.writeback.save_knowledge)
        if conversation.pending:
            self._compact(conversation, conversation.pending)
        self._save(conversation, path)
        if incomplete:
            print(f"hipo: {display.incomplete_line(incomplete)}")
        print(display.usage_line(usage, model) + calls)

    def _record_sent(
        self, request: dict[str, Any], model: str, recall: Context | None, *, with_layer1: bool
    ) -> None:
        """Keep what this call sent for the sidebar's "Last %%ask sent" (`Memory.record_sent`):
        each Layer 1 part as the prompt holds it and each recalled piece, with its tokens and
        where it came from. A record that cannot be written is not worth a failed cell."""
        memory = self.session.memory
        parts = []
        if with_layer1:
            for part in memory.layer1().parts:
                if part.exists and part.text:  # an untouched template is not sent
                    tokens = min(part.tokens, part.budget)
                    parts.append(SentPart("layer1", part.name, part.path, tokens))
        for hit in recall.hits if recall is not None else ():
            source = f"{hit.file}#L{hit.line}"
            tokens = count_tokens(hit.snippet)
            parts.append(SentPart("recalled", hit.title, source, tokens, hit.provenance))
        system = sum(count_tokens(block.get("text", "")) for block in request["system"])
        sent = Sent(
            notebook=self.session.conversation_name or "",
            at=datetime.now(UTC).isoformat(timespec="seconds"),
            model=model,
            tokens=system,
            parts=tuple(parts),
        )
        with contextlib.suppress(HipoError, OSError):
            memory.record_sent(sent)

    def _run_tools(
        self, client: Any, request: dict[str, Any], tools: list[Any], *, without_memory: bool
    ) -> tool_run.ToolRun:
        """The call through the SDK's tool runner; each reply's text shown as it arrives."""
        settings = self.session.settings
        view = display.ReplyView(self.shell)
        bare = llm.without_memory() if without_memory else contextlib.nullcontext()
        try:
            with bare:
                run = tool_run.run_with_tools(client, request, tools, view.add)
        except Exception as error:
            line = llm.error_line(error, retries=settings.max_retries, timeout=settings.timeout)
            view.close()
            if line is None:
                raise
            raise UsageError(f"{line} (the conversation is unchanged)") from None
        view.close()
        return run

    def _stream(
        self, client: Any, request: dict[str, Any], *, without_memory: bool
    ) -> llm.StreamedReply:
        """Stream the reply into the cell, taken for what it is (`llm.read_stream`: whole or
        incomplete); API errors and malformed answers become one line."""
        settings = self.session.settings
        view = display.ReplyView(self.shell)
        bare = llm.without_memory() if without_memory else contextlib.nullcontext()
        try:
            with bare, client.messages.stream(**request) as stream:
                streamed = llm.read_stream(stream, view.add)
        except Exception as error:
            line = llm.error_line(error, retries=settings.max_retries, timeout=settings.timeout)
            view.close()
            if line is None:
                raise
            raise UsageError(f"{line} (the conversation is unchanged)") from None
        view.close()
        text = llm.reply_text(streamed.message) or streamed.text
        return llm.StreamedReply(text, streamed.message, streamed.incomplete)
