"""Writing back what the notebook's LLM calls did, and checking the protocol was kept.

The injector reports every LLM SDK call made in the kernel (`record`); the cell hooks group
them by cell. At the end of a cell that made calls and wrote no checkpoint itself, a checkpoint
is written: the agent's task log, not the user's notes. It is titled by its task (the gist of
the prompt) and keeps the protocol's fields: request (the prompt's gist), decisions (the
reply's sentences that decide or recommend, if any), outcome (the reply's gist), all three
written by Claude instead with `Hipo.summarizer = "claude"`, and references (the notebook and
cell, and the exchange's digest, by which a notebook run again writes it only once). It carries
no tag and is marked `via=write-back`, so the engine keeps it out of the Topics Index, groups
it in ROOT's Active Context and the sidebar, and ranks it below the user's own notes at equal
relevance. Proactive dumps: after 20 calls without a
checkpoint one is written on the spot, and a reply or tool result over ~8k tokens goes to
knowledge/, the checkpoint keeping the pointer and the few facts extracted from it.
`Hipo.auto_checkpoint = False` stops the automatic checkpoints (large texts still go to
knowledge/ only when a checkpoint is written).

A write-back error never breaks a cell: it is shown as one line.

The write-back serves a session (`WriteBackHost`, which `HipoSession` is) that hands itself over
when it builds it: this module does not import the session's, so neither imports the other.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hipo_jupyter import llm
from hipo_jupyter.llm import LLMCall
from hipo_jupyter.llm.conversation import LARGE_TURN_TOKENS, extract_facts, gist
from hipo_jupyter.memory import CheckpointDraft, HipoError, Memory, render
from hipo_jupyter.memory.disk import VIA_WRITE_BACK, calls_phrase
from hipo_jupyter.memory.tree import count_tokens
from hipo_jupyter.memory.views import CheckResult, check_folder

from .config import Hipo
from .startup import Startup

log = logging.getLogger(__name__)

DUMP_EVERY = 20  # LLM calls without a checkpoint before one is written on the spot
TITLE_CHARS = 60
DECISIONS = 2  # sentences of a reply kept as its decisions
DECISION_CUE = re.compile(
    r"\b(?:decid(?:e|ed|es|ing)|decisions?|recommend(?:s|ed|ing)?|should|suggest(?:s|ed)?"
    r"|go(?:ing)? with|chose|choose|opt(?:ed)? for|plan to|we will|cut|keep|drop|switch to)\b",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
REPLY_PENDING = "(reply not captured: an unconsumed stream or a raw response)"
INCOMPLETE_REPLY = "incomplete reply"


@dataclass
class CellCalls:
    """The LLM calls one cell made, and whether a checkpoint followed them."""

    cell: str | None = None
    calls: list[LLMCall] = field(default_factory=list)
    checkpointed: bool = False
    checkpoint_id: str | None = None  # the one written automatically, if any
    conversation: str | None = None  # the %%ask conversation the cell's calls were turns of
    sources: list[str] = field(default_factory=list)  # checkpoints its calls were sent (lineage)


def decision_sentences(reply: str, limit: int = DECISIONS) -> list[str]:
    """The offline gist of what a reply decides: its first sentences that decide, recommend
    or advise (a cue word), each on one line; none when it only informs."""
    sentences = [" ".join(part.split()).lstrip("-*> ") for part in SENTENCE_END.split(reply)]
    found = [gist(text, 160) for text in sentences if text and DECISION_CUE.search(text)]
    return list(dict.fromkeys(found))[:limit]


def exchange_digest(calls: list[LLMCall]) -> str:
    """16 hex digits of the calls' requests, tool results and replies: the same calls answered
    alike are the same exchange, however its fields were written (`writing.identity`)."""
    parts = [[c.method, c.model, c.prompt, c.tool_results, c.reply()] for c in calls]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:16]


def call_providers(calls: list[LLMCall]) -> str | None:
    """The SDKs the calls went through (`LLMCall.client`: anthropic, openai, litellm), in
    first-use order: recorded at write time, so a label names the real provider."""
    return ",".join(dict.fromkeys(call.client for call in calls if call.client)) or None


def request_models(calls: list[LLMCall]) -> str | None:
    """The model ids the calls' requests named (`model=` of messages.create), in first-use
    order and comma-separated; None when no request named one. Never read from reply text."""
    models = list(dict.fromkeys(call.model for call in calls if call.model))
    return ",".join(models) or None


class WriteBackHost(Protocol):
    """What the write-back needs of the session it serves: its shell and settings, the Memory
    it writes to, the start-up it checks against, where memory events are announced, and its
    log."""

    shell: Any
    settings: Hipo
    startup: Startup | None
    memory_listeners: list[Callable[[str], None]]

    @property
    def memory(self) -> Memory: ...

    @property
    def notebook_name(self) -> str | None: ...

    def note(self, event: str) -> None: ...


class WriteBack:
    """The LLM calls of one kernel, grouped by cell, and the checkpoints written for them."""

    def __init__(self, session: WriteBackHost) -> None:
        self.session = session
        self.cells: list[CellCalls] = []  # finished cells that made calls
        self.current = CellCalls()
        self.calls = 0
        self.since_checkpoint = 0
        self.offloaded: dict[str, str] = {}  # sha256 of a large text -> its knowledge/ path
        self.last_call: LLMCall | None = None
        self._lock = threading.RLock()
        self._own_write = False
        session.memory_listeners.append(self.on_memory_event)

    # --- events ---------------------------------------------------------------------------
    def record(self, call: LLMCall) -> None:
        """An LLM call returned (called by the injector, from any thread)."""
        with self._lock:
            if call.client == "anthropic":  # its cache reads and writes: %hipo budget
                self.last_call = call
            self.current.calls.append(call)
            self.calls += 1
            self.since_checkpoint += 1
            due = self.since_checkpoint >= DUMP_EVERY
        if due and self.session.settings.auto_checkpoint:
            recent = [c for cell in self._open_cells() for c in cell.calls][-DUMP_EVERY:]
            prefix = calls_phrase(len(recent), (call.client for call in recent))
            sources = [s for cell in self._open_cells() for s in cell.sources]
            self._write(recent, title_prefix=prefix, cell=self.cell_number(), sources=sources)

    def mark_conversation(self, identity: str) -> None:
        """The running cell's calls are turns of this `%%ask` conversation: its write-back
        records it, so that conversation's recall leaves it out (the turns are in it)."""
        with self._lock:
            self.current.conversation = identity

    def mark_sources(self, checkpoint_ids: list[str]) -> None:
        """The running cell's calls were sent these checkpoints (a `%%ask`'s recalled
        notes): its write-back records them as its `sources`, so a forget of one takes it."""
        with self._lock:
            known = self.current.sources
            known += [cid for cid in checkpoint_ids if cid and cid not in known]

    def on_memory_event(self, event: str) -> None:
        """A checkpoint was written (by the user, a magic or us): it covers every cell with
        calls that was still waiting for one."""
        if event != "remember" or self._own_write:
            return
        with self._lock:
            for cell in self._open_cells():
                cell.checkpointed = True
            self.since_checkpoint = 0

    def pre_run_cell(self, info: Any = None) -> None:
        with self._lock:
            if self.current.calls:  # calls made between cells (a thread, a timer)
                self.cells.append(self.current)
            self.current = CellCalls()

    def post_run_cell(self, result: Any = None) -> None:
        """Close the cell's record and, if it made calls and wrote nothing, write it back."""
        with self._lock:
            cell = self.current
            self.current = CellCalls()
            if not cell.calls:
                return
            count = getattr(result, "execution_count", None)
            cell.cell = str(count) if count is not None else self.cell_number()
            self.cells.append(cell)
            write = not cell.checkpointed and self.session.settings.auto_checkpoint
        if write:
            self._write(cell.calls, cell=cell.cell, conversation=cell.conversation,
                        sources=cell.sources)  # fmt: skip

    # --- writing ----------------------------------------------------------------------------
    def _open_cells(self) -> list[CellCalls]:
        return [c for c in [*self.cells, self.current] if c.calls and not c.checkpointed]

    def cell_number(self) -> str:
        running = getattr(self.session.shell.displayhook, "exec_result", None)
        count = getattr(running, "execution_count", None)
        return str(count if count is not None else self.session.shell.execution_count)

    def save_knowledge(self, title: str, text: str) -> str:
        """memory.save_knowledge, once per text; not taken for a checkpoint."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest in self.offloaded:
            return self.offloaded[digest]
        self._own_write = True
        try:
            path = self.session.memory.save_knowledge(title, text, via=VIA_WRITE_BACK)
        finally:
            self._own_write = False
        self.offloaded[digest] = path
        return path

    def _large(self, label: str, text: str, references: list[str], about: str = "") -> str:
        """A text over ~8k tokens goes to knowledge/ (titled by what it answers, if known);
        the checkpoint keeps the pointer and the few facts extracted from it."""
        if count_tokens(text) <= LARGE_TURN_TOKENS:
            return gist(text)
        path = self.save_knowledge(f"{label}: {gist(about or text, 60)}", text)
        references.append(path)
        facts = "; ".join(extract_facts(text, limit=5))
        return f"{label} saved to {path}; facts: {facts}"

    def checkpoint_body(self, calls: list[LLMCall], cell: str | None) -> tuple[str, str]:
        """(title, body) of the checkpoint for these calls."""
        references: list[str] = []
        first = calls[0]
        request = gist(first.prompt) or f"{first.method} call"
        if len(calls) > 1:
            request += f" (+{len(calls) - 1} more calls)"
        inputs = [self._large("tool result", t, references) for c in calls for t in c.tool_results]
        answered = [(call.prompt, reply) for call in calls if (reply := call.reply()) is not None]
        outcome, decisions = REPLY_PENDING, ""
        if answered:
            outcome = self._large("reply", answered[-1][1], references, about=answered[-1][0])
            cut = [call.incomplete() for call in calls if call.reply() is not None][-1]
            decisions = "; ".join(decision_sentences(answered[-1][1]))
            if not references:  # Claude writes the fields of a reply kept whole, if asked to
                written = self.claude_fields(*answered[-1])
                request = written.get("request", request)
                decisions = written.get("decisions", "" if written else decisions)
                outcome = written.get("outcome", outcome)
            if cut:  # written back as what it is: the part of a reply that arrived
                outcome = f"{INCOMPLETE_REPLY} ({cut}): {outcome}"
        models = sorted({call.model for call in calls if call.model})
        where = self.session.notebook_name or "console"
        references[:0] = [f"{where} cell {cell}" if cell else where, *models]
        references.append(f"exchange {exchange_digest(calls)}")
        task = gist(first.prompt or f"{first.method} call", TITLE_CHARS)
        lines = [f"- request: {request}"]
        if inputs:
            lines.append(f"- analysis: {'; '.join(inputs)}")
        if decisions:
            lines.append(f"- decisions: {decisions}")
        lines += [f"- outcome: {outcome}", f"- references: {', '.join(references)}"]
        return task, "\n".join(lines)

    def claude_fields(self, prompt: str, reply: str) -> dict[str, str]:
        """request, decisions and outcome as Claude writes them, when the user set
        `Hipo.summarizer = "claude"`; {} otherwise or when it fails (the offline gist stays,
        and the session log says why)."""
        settings = self.session.settings
        if settings.summarizer != "claude":
            return {}
        writer = llm.ClaudeTaskWriter(
            model=settings.model, max_retries=settings.max_retries, timeout=settings.timeout
        )
        try:
            return writer(prompt, reply)
        except llm.SummaryError as error:
            self.session.note(f"write-back fields: the offline gist ({error})")
            return {}

    def _write(
        self,
        calls: list[LLMCall],
        *,
        cell: str | None,
        title_prefix: str = "",
        conversation: str | None = None,
        sources: list[str] | None = None,
    ) -> None:
        if not calls:
            return
        with self._lock:
            covered = self._open_cells()
        try:
            title, body = self.checkpoint_body(calls, cell)
            if title_prefix:
                title = f"{title_prefix}: {title}"
            checkpoint = self.session.memory.write_checkpoint(
                CheckpointDraft.parse(title, body, type="project"),
                notebook=self.session.notebook_name,
                cell=cell,
                via=VIA_WRITE_BACK,
                model=request_models(calls),
                provider=call_providers(calls),
                conversation=conversation,
                sources=tuple(dict.fromkeys(sources or ())),
            )
        except HipoError as error:
            print(f"hipo: the LLM calls of cell {cell} were not written back: {error}")
            return
        with self._lock:
            for open_cell in covered:
                open_cell.checkpointed = True
                open_cell.checkpoint_id = open_cell.checkpoint_id or checkpoint.id
        redacted = render.redacted_note(checkpoint.redacted)
        self.session.note(
            f"auto-checkpoint {checkpoint.id} (cell {cell}, {len(calls)} calls){redacted}"
        )

    # --- %hipo check ------------------------------------------------------------------------
    def session_checks(self) -> list[CheckResult]:
        """The rules only this kernel can know: Layer 1 before the first call, and a
        checkpoint after every cell that made calls."""
        startup = self.session.startup
        with self._lock:
            calls = [c for cell in [*self.cells, self.current] for c in cell.calls]
            unfollowed = [cell for cell in self.cells if not cell.checkpointed]
        rule = "Layer 1 was loaded before the first LLM call"
        if startup is None or startup.error or startup.layer1 is None:
            why = startup.error if startup and startup.error else "the session did not start"
            first = CheckResult(rule, False, why)
        else:
            missing = [c for c in calls if not c.had_layer1 and not c.without_memory]
            if missing:
                detail = f"{len(missing)} of {len(calls)} calls went without it (injection off?)"
                first = CheckResult(rule, False, detail)
            else:
                first = CheckResult(rule, True, f"{len(calls)} calls, all with Layer 1")
        rule = "every cell that made LLM calls is followed by a checkpoint"
        if unfollowed:
            cells = ", ".join(f"[{cell.cell}]" for cell in unfollowed)
            second = CheckResult(rule, False, f"no checkpoint after cell {cells}")
        else:
            cells_with_calls = len(self.cells)
            second = CheckResult(rule, True, f"{cells_with_calls} cells with calls")
        return [first, second]

    def checks(self) -> list[CheckResult]:
        return [*self.session_checks(), *check_folder(self.session.memory)]
