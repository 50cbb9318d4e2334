"""The state of the extension in one kernel: settings, the open `Memory`, and what happened.

Everything `%load_ext hipo` sets up hangs off one `HipoSession`, reachable with `current()`,
so other front ends in the same kernel (LLM calls, widgets) reach the same Memory the magics use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hipo_jupyter import llm
from hipo_jupyter.llm.caching import NoteOnce
from hipo_jupyter.llm.layer1_pin import Layer1Pin, PromptLayer1
from hipo_jupyter.memory import (
    Context,
    ExtractiveSummarizer,
    HipoError,
    Memory,
    Summarizer,
    resolve_root,
)
from hipo_jupyter.team.link import team_backend

from .config import Hipo
from .display import summaries_line
from .progress import in_kernel
from .startup import Startup
from .writeback import WriteBack

NOTEBOOK_VARIABLES = ("__session__", "__vsc_ipynb_file__")
"""User-namespace names a front end fills with the notebook's path: ipykernel copies
JPY_SESSION_NAME into `__session__`; VS Code sets `__vsc_ipynb_file__`."""


class ForgetWatch:
    """The forgets a holder of memory (a conversation, the pinned Layer 1) has obeyed: the
    ledger's generation it last saw (`Memory.forgotten`), per memory root."""

    def __init__(self) -> None:
        self._seen: tuple[Path, int] | None = None

    def new(self, memory: Memory) -> list[Any]:
        """The forgets done since the last look, by any process; none at the first look
        (what the holder read then was read after them)."""
        generation = memory.forgotten.generation()
        seen, self._seen = self._seen, (memory.root, generation)
        if seen is None or seen[0] != memory.root or seen[1] == generation:
            return []
        return [event for event in memory.forgotten.since(seen[1]) if event.kind == "forget"]


class NotLoadedError(HipoError):
    """`current()` was asked for while the extension is not loaded in this kernel."""


def notebook_path(user_ns: dict[str, Any]) -> str | None:
    """The path of the notebook this kernel runs, as Jupyter or VS Code tell it, or None.

    jupyter_server gives the kernel an absolute path when it knows the file name, else the path
    relative to the server root; the kernel's working directory is then the notebook's folder,
    so a relative path keeps only its name, placed in the working directory.
    """
    candidates = [user_ns.get(name) for name in NOTEBOOK_VARIABLES]
    candidates.append(os.environ.get("JPY_SESSION_NAME"))
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            path = Path(candidate.strip())
            with contextlib.suppress(RuntimeError):  # `~nosuchuser/...`: taken as written
                path = path.expanduser()
            return str(path if path.is_absolute() else Path.cwd() / path.name)
    return None


def notebook_name(path: str | None) -> str | None:
    """The notebook's file name for checkpoint provenance; None for consoles, whose session
    "path" is a made-up name rather than a file."""
    if not path:
        return None
    candidate = Path(path)
    if candidate.suffix == ".ipynb" or candidate.is_file():
        return candidate.name
    return None


def conversation_name(shell: Any, path: str | None, root: Path | None = None) -> str | None:
    """Whose `%%ask` conversation and "last sent" record this kernel keeps
    (`conversation.conversation_path`): the notebook's file when Jupyter or VS Code name it, as
    its path relative to the memory `root` (its name when the root is its folder, the default;
    the whole path when it lies outside), else the session's own name (a JupyterLab console),
    else, in a kernel that was told neither (nbconvert, nbclient and papermill run a notebook
    headless without naming it), the kernel itself, so two notebooks run headless in one folder
    never share a conversation. None (the shared `console.json`) for a terminal IPython."""
    if path:
        return relative_identity(Path(path), root)
    ident = getattr(getattr(shell, "kernel", None), "ident", None)
    if isinstance(ident, str) and ident.strip():
        return f"kernel-{ident.strip()[:8]}"
    return None


def relative_identity(path: Path, root: Path | None) -> str:
    """`path` relative to `root` in POSIX form, or its name without a root; a path outside
    the root stays whole, so two notebooks of one name in two folders are two identities."""
    if root is None:
        return path.name
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    return path.as_posix()


@dataclass
class Registration:
    """Everything `load_ipython_extension` added to the shell, so unload removes exactly it."""

    magics: Any = None
    ask_magics: Any = None
    shadowed: dict[tuple[str, str], Any] = field(default_factory=dict)  # (kind, name) -> magic
    matchers: list[Any] = field(default_factory=list)
    hooks: list[tuple[str, Callable[..., None]]] = field(default_factory=list)  # (event, callback)
    transformers: list[Callable[[list[str]], list[str]]] = field(default_factory=list)
    injector: Any = None  # llm.Injector, installed while loaded


class HipoSession:
    """The extension's state for one shell.

    The Memory is opened lazily and reopened when a setting it depends on changes, so a
    `%config Hipo.root = ...` or a new threshold takes effect at the next magic call.
    """

    def __init__(self, shell: Any, settings: Hipo) -> None:
        self.shell = shell
        self.settings = settings
        self.log: list[str] = []
        self.startup: Startup | None = None
        self.registration = Registration()
        self.memory_listeners: list[Callable[[str], None]] = []
        self._memory: Memory | None = None
        self._memory_key: tuple[Any, ...] | None = None
        self.writeback = WriteBack(self)
        self.cache_note = NoteOnce(lambda line: print(f"hipo: {line}"))  # once per model, reason
        self.layer1_pin = Layer1Pin()  # ROOT.md as first sent: the cache survives checkpoints
        self._summaries_line: Any = None  # the display `show_summaries` updates in place

    # --- where the memory lives -----------------------------------------------------------
    @property
    def notebook_path(self) -> str | None:
        return notebook_path(self.shell.user_ns)

    @property
    def notebook_name(self) -> str | None:
        return notebook_name(self.notebook_path)

    @property
    def conversation_name(self) -> str | None:
        """This notebook's identity (`conversation_name`), relative to the open memory's root."""
        return conversation_name(self.shell, self.notebook_path, self.memory.root)

    def resolve_root(self) -> Path:
        return resolve_root(self.settings.root or None, self.notebook_path)

    @property
    def summarizer_name(self) -> str:
        """`Hipo.summarizer` as "claude" or "extractive"; "auto" is decided by the environment."""
        choice = self.settings.summarizer
        if choice == "auto":
            return "claude" if llm.credentials_in_env() else "extractive"
        return choice

    def make_summarizer(self) -> Summarizer:
        if self.summarizer_name == "claude":
            return llm.ClaudeSummarizer(
                model=self.settings.model,
                max_retries=self.settings.max_retries,
                timeout=self.settings.timeout,
            )
        return ExtractiveSummarizer()

    @property
    def memory(self) -> Memory:
        """The Memory for the current settings; reopened (and the old one closed) on change."""
        config = self.settings.memory_config()
        summarizer = (self.summarizer_name, self.settings.model)
        key = (self.resolve_root(), config, summarizer)
        if self._memory is None or key != self._memory_key:
            self.close_memory()
            self._memory = Memory(
                key[0],
                config=config,
                summarizer=self.make_summarizer(),
                team=team_backend(config),
            )
            self._memory.subscribe(self._memory_event)
            self._memory.background_summaries = True  # a cell never waits on a model's summary
            self._memory.summaries.subscribe(self._summaries_step)
            self._memory_key = key
            self.note(f"opened memory at {key[0]}")
        return self._memory

    def injection_layer1(self) -> PromptLayer1 | None:
        """What the injector puts in `system`: Layer 1 as it is on disk now, or None when
        `Hipo.inject` is off."""
        if not self.settings.inject:
            return None
        return self.prompt_layer1()

    def recalled(self, query: str, budget: int | None = None) -> str | None:
        """`Memory.context` for `query` as %%ask sends it: fenced, without Layer 1 (its own
        block carries it), within `budget` (default `Hipo.recall_budget`); None when nothing
        was recalled."""
        context = self.recall_context(query, budget)
        return context.text if context is not None else None

    def recall_context(
        self, query: str, budget: int | None = None, conversation: str | None = None
    ) -> Context | None:
        """`recalled` with the hits it holds (what `%%ask` shows the sidebar it sent); for
        `conversation` (a `%%ask` conversation's identity), without its own write-backs."""
        settings = self.settings
        context = self.memory.context(
            query,
            budget=budget or settings.recall_budget,
            layer1=False,
            mode=settings.recall_mode,
            conversation=conversation,
        )
        return context if context.hits else None

    def sdk_recall(self, prompt: str) -> str | None:
        """What the injector adds to an SDK call for its last user message: `recalled` when
        `Hipo.auto_recall_sdk` is on (off by default: the calls are the user's own code)."""
        return self.recalled(prompt) if self.settings.auto_recall_sdk else None

    def prompt_layer1(self) -> PromptLayer1:
        """Layer 1 as it is on disk now, split for the prompt cache (`llm.layer1_pin`): ROOT.md
        as this kernel first sent it, then the lines written since."""
        memory = self.memory
        generation = memory.forgotten.generation()  # a forget or correction: pinned afresh
        return self.layer1_pin.split(memory.root, memory.layer1(), generation)

    def _memory_event(self, event: str) -> None:
        if event == "compact":
            self.layer1_pin.reset()  # ROOT.md rebuilt whole: cache it afresh
        for listener in list(self.memory_listeners):
            listener(event)

    def show_summaries(self, owed: int) -> None:
        """The line `%load_ext` leaves while the model writes `owed` summaries in the
        background: in a kernel updated in place as each lands, in a terminal printed once."""
        line = summaries_line(0, owed, "")
        if in_kernel():
            from IPython.display import display

            self._summaries_line = display({"text/plain": line}, raw=True, display_id=True)
            last = self.memory.summaries.progress  # a step the thread took before the line
            if last is not None:
                self._summaries_step(*last)
        else:
            print(line)

    def _summaries_step(self, done: int, total: int, node: str) -> None:
        handle = self._summaries_line
        if handle is not None:
            handle.update({"text/plain": summaries_line(done, total, node)}, raw=True)

    def close_memory(self) -> None:
        if self._memory is not None:
            self._memory.close()
        self._memory = None
        self._memory_key = None

    # --- the session-start ritual ---------------------------------------------------------
    def start(self, progress: Any = None) -> Startup:
        """Compact what is dirty, load Layer 1 and count the topics (`%load_ext hipo`).

        An engine error (say, a root that is not writable) does not stop the extension from
        loading: it is kept as one line on the Startup, so the user can fix the setting and
        carry on with `%hipo compact`.
        """
        startup = Startup(root=Path(str(self.settings.root or ".")))
        try:  # the root itself may be the error (`~nosuchuser/x`): one line, like the rest
            startup.root = self.resolve_root()
            memory = self.memory
            startup.root = memory.root
            startup.report = memory.compact(progress=progress)
            startup.owed = len(memory.owed_summaries())
            startup.layer1 = memory.layer1()
            startup.topics = len(memory.topics())
            memory.team_resume()  # what waited for the team database since the last session
        except HipoError as error:
            startup.error = str(error)
        self.startup = startup
        self.note("start: " + (startup.error or f"{len(startup.report.built)} nodes built"))
        return startup

    def note(self, event: str) -> None:
        """Add a line to the session log (what this kernel did with its memory, and when)."""
        self.log.append(f"{datetime.now().isoformat(timespec='seconds')} {event}")


_sessions: list[HipoSession] = []


def current(shell: Any = None) -> HipoSession:
    """The session of `shell` (default: the most recently loaded one in this process).

    Raises NotLoadedError, a HipoError, so front ends show it as one clear line.
    """
    for session in reversed(_sessions):
        if shell is None or session.shell is shell:
            return session
    raise NotLoadedError("hipo is not loaded in this kernel: run %load_ext hipo")


def set_current(session: HipoSession) -> None:
    _sessions.append(session)


def forget(session: HipoSession) -> None:
    if session in _sessions:
        _sessions.remove(session)
