"""Layer 1 injected into the user's own anthropic calls: the SDK's resource classes patched at
class level (create, stream, parse, count_tokens, sync and async, beta included), each call
recorded for the write-back, and an import hook that patches the SDK when it is imported after
`%load_ext hipo` (so loading never imports anthropic).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.abc import Loader, MetaPathFinder
from typing import TYPE_CHECKING, Any

from hipo_jupyter import caching

from .layer1_pin import PromptLayer1
from .prompt import LAYER1_OPEN, fresh_block, layer1_block

if TYPE_CHECKING:  # imported where used: `import anthropic` costs seconds at %load_ext
    pass

log = logging.getLogger(__name__)


# --- injection into the user's own calls ----------------------------------------------------------
def _given(value: Any) -> bool:
    import anthropic

    return value is not None and not isinstance(value, anthropic.Omit | anthropic.NotGiven)


def _block_text(block: Any) -> str:
    if isinstance(block, dict):
        return str(block.get("text", ""))
    return str(getattr(block, "text", ""))


def carries_layer1(system: Any) -> bool:
    """Whether a `system` argument already holds hipo's Layer 1 block."""
    if not _given(system):
        return False
    if isinstance(system, str):
        return system.lstrip().startswith(LAYER1_OPEN)
    if isinstance(system, list | tuple):
        return any(_block_text(block).lstrip().startswith(LAYER1_OPEN) for block in system)
    return False


cache_breakpoints = caching.breakpoints_used


def inject_layer1(arguments: dict[str, Any], layer1: str) -> dict[str, Any]:
    """A copy of a call's keyword arguments with Layer 1 first in `system` (see
    `inject_layer1_and_plan`)."""
    return inject_layer1_and_plan(arguments, layer1)[0]


def inject_layer1_and_plan(
    arguments: dict[str, Any], layer1: str, fresh: str = "", recalled: str | None = None
) -> tuple[dict[str, Any], caching.CachePlan | None]:
    """A copy of a call's keyword arguments with Layer 1 first in `system`, and where the
    cache breakpoints went (None: the call already carried Layer 1 and is unchanged).

    A string system becomes a text block after ours; a list keeps its blocks after ours.
    Breakpoints end Layer 1 and the caller's own system text, where their prefix reaches the
    model's minimum and breakpoints are left (`caching.place_breakpoints`). `fresh`, Layer 1's
    lines written since its block was cached (`layer1_pin`), and `recalled` memory (fenced,
    `Hipo.auto_recall_sdk`) go last, after them all. The caller's objects are not mutated.
    """
    system = arguments.get("system")
    if carries_layer1(system):
        return arguments, None
    blocks: list[Any] = [layer1_block(layer1, cache=False)]
    if isinstance(system, str):
        if system:
            blocks.append({"type": "text", "text": system})
    elif _given(system):
        blocks.extend(system)
    stable = [0, len(blocks) - 1] if len(blocks) > 1 else [0]
    if fresh:
        blocks.append(fresh_block(fresh))
    if recalled:
        blocks.append({"type": "text", "text": recalled})
    if not all(isinstance(block, dict) for block in blocks):
        return {**arguments, "system": blocks}, None  # SDK objects: leave the caller's as given
    return caching.place_breakpoints({**arguments, "system": blocks}, stable)


def _last_user_text(messages: Any) -> tuple[str, list[str]]:
    """The text of the last user message and the texts of its tool_result blocks."""
    if not isinstance(messages, list | tuple):
        return "", []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content, []
        texts, tool_results = [], []
        for block in content or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    tool_results.append(inner)
                elif isinstance(inner, list):
                    tool_results.append("\n".join(_block_text(b) for b in inner))
        return "\n".join(texts), tool_results
    return "", []


@dataclass
class LLMCall:
    """One call through the SDK while hipo was loaded, as the write-back needs it."""

    method: str  # "messages.create", "beta.messages.stream", ...
    model: str
    prompt: str  # text of the last user message
    tool_results: list[str] = field(default_factory=list)
    had_layer1: bool = False
    without_memory: bool = False  # %%ask --no-memory or llm.without_memory(): opted out
    result: Any = None

    def reply(self) -> str | None:
        """The reply's text: from a Message, or from a stream the caller has consumed.

        None when the SDK object holds no text (an unconsumed or raw stream)."""
        return reply_text(self.result)

    def usage(self) -> Any:
        message = _message_of(self.result)
        return getattr(message, "usage", None)


def _message_of(result: Any) -> Any:
    if isinstance(getattr(result, "content", None), list):
        return result
    # A stream manager keeps the MessageStream it opened; its snapshot is the reply so far.
    for value in getattr(result, "__dict__", {}).values():
        if hasattr(type(value), "current_message_snapshot"):
            try:
                return value.current_message_snapshot
            except Exception:  # nothing received yet
                return None
    return None


def reply_text(result: Any) -> str | None:
    message = _message_of(result)
    if message is None:
        return None
    blocks = message.content
    return "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")


_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("hipo_llm_mode", default="")
_NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("hipo_llm_nested", default=False)


@contextlib.contextmanager
def without_memory() -> Iterator[None]:
    """Calls inside get no Layer 1 (they are still recorded for write-back): `--no-memory`."""
    token = _MODE.set("bare")
    try:
        yield
    finally:
        _MODE.reset(token)


@contextlib.contextmanager
def internal_call() -> Iterator[None]:
    """hipo's own calls (summarizers): no Layer 1, not recorded, not a task to check."""
    token = _MODE.set("internal")
    try:
        yield
    finally:
        _MODE.reset(token)


PATCH_POINTS: tuple[tuple[str, str, str], ...] = (
    ("anthropic.resources.messages.messages", "Messages", "messages"),
    ("anthropic.resources.messages.messages", "AsyncMessages", "messages"),
    ("anthropic.resources.beta.messages.messages", "Messages", "beta.messages"),
    ("anthropic.resources.beta.messages.messages", "AsyncMessages", "beta.messages"),
)
PATCHED_METHODS: dict[str, bool] = {
    "create": True,  # name -> recorded as an LLM call (count_tokens is only injected)
    "stream": True,
    "parse": True,
    "count_tokens": False,
}


class Injector:
    """Patches the SDK's message resources while installed.

    `layer1()` returns the text to inject (a `PromptLayer1` when part of it goes after the
    cache breakpoints), or None to leave calls alone (injection off, or no memory);
    `recall(prompt)`, when given, the memory recalled for a call's last user message;
    `on_call(call)` receives each recorded call after the SDK returned. None of them may
    break a user's call: their errors are logged and the call goes on.
    """

    def __init__(
        self,
        layer1: Callable[[], str | PromptLayer1 | None],
        on_call: Callable[[LLMCall], None] | None = None,
        on_cache_plan: Callable[[caching.CachePlan | None], None] | None = None,
        recall: Callable[[str], str | None] | None = None,
    ) -> None:
        self.layer1 = layer1
        self.recall = recall  # last user message -> fenced recalled memory, or None
        self.on_call = on_call
        self.on_cache_plan = on_cache_plan  # where each call's breakpoints went (notes)
        self._patched: list[tuple[type, str, Any, Any]] = []
        self._hook: _AfterImport | None = None
        self._live = False

    @property
    def installed(self) -> bool:
        return self._live

    def install(self) -> None:
        """Patch the SDK classes that are imported; the others the moment they are.

        Importing anthropic takes seconds, so a kernel that has not imported it yet does not
        pay for it at %load_ext: a post-import hook patches the message resources when the
        user's code (or the SDK's lazy client) imports them.
        """
        if self._patched or self._hook:
            return
        waiting = set()
        for module_name, _, _ in PATCH_POINTS:
            if module_name in sys.modules:
                self._patch_module(module_name)
            else:
                waiting.add(module_name)
        if waiting:
            self._hook = _AfterImport(waiting, self._patch_module)
            sys.meta_path.insert(0, self._hook)

    def _patch_module(self, module_name: str) -> None:
        for point_module, class_name, label in PATCH_POINTS:
            if point_module != module_name:
                continue
            try:
                cls = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError):  # an SDK without beta messages, say
                continue
            for name, recorded in PATCHED_METHODS.items():
                current = cls.__dict__.get(name)
                if current is None:
                    continue
                # Another session's wrapper is replaced, not stacked: one injection per call.
                original = getattr(current, "__hipo_original__", current)
                wrapper = self._wrap(original, f"{label}.{name}", recorded)
                setattr(cls, name, wrapper)
                self._patched.append((cls, name, original, wrapper))
        self._live = True

    def uninstall(self) -> None:
        """Put the SDK's methods back. A method someone else wrapped after us is left to them;
        our wrapper under theirs passes calls straight through from now on."""
        if self._hook is not None:
            if self._hook in sys.meta_path:
                sys.meta_path.remove(self._hook)
            self._hook = None
        for cls, name, original, wrapper in reversed(self._patched):
            if cls.__dict__.get(name) is wrapper:
                setattr(cls, name, original)
        self._patched = []
        self._live = False

    def _layer1_text(self) -> str | PromptLayer1 | None:
        try:
            return self.layer1()
        except Exception:
            log.warning("hipo: Layer 1 could not be read; call sent without it", exc_info=True)
            return None

    def _recalled(self, messages: Any) -> str | None:
        if self.recall is None:
            return None
        prompt = _last_user_text(messages)[0]
        try:
            return self.recall(prompt) if prompt.strip() else None
        except Exception:
            log.warning("hipo: memory could not be recalled; call sent without it", exc_info=True)
            return None

    def _cache_plan(self, plan: caching.CachePlan | None) -> None:
        if self.on_cache_plan is None:
            return
        try:
            self.on_cache_plan(plan)
        except Exception:
            log.warning("hipo: reporting a cache plan failed", exc_info=True)

    def _emit(self, call: LLMCall) -> None:
        if self.on_call is None:
            return
        try:
            self.on_call(call)
        except Exception:
            log.warning("hipo: recording an LLM call failed", exc_info=True)

    def _wrap(self, original: Callable[..., Any], method: str, recorded: bool) -> Any:
        injector = self

        @functools.wraps(original)
        def wrapper(resource: Any, *args: Any, **kwargs: Any) -> Any:
            if not injector.installed or _NESTED.get():
                return original(resource, *args, **kwargs)
            mode = _MODE.get()
            if not mode and not carries_layer1(kwargs.get("system")):
                text = injector._layer1_text()
                if text is not None:
                    split = text if isinstance(text, PromptLayer1) else PromptLayer1(text)
                    recalled = injector._recalled(kwargs.get("messages"))
                    kwargs, plan = inject_layer1_and_plan(
                        kwargs, split.stable, split.fresh, recalled
                    )
                    injector._cache_plan(plan)
            token = _NESTED.set(True)
            try:
                result = original(resource, *args, **kwargs)
            finally:
                _NESTED.reset(token)
            if not recorded or mode == "internal":
                return result
            prompt, tool_results = _last_user_text(kwargs.get("messages"))
            call = LLMCall(
                method=method,
                model=str(kwargs.get("model", "")),
                prompt=prompt,
                tool_results=tool_results,
                had_layer1=carries_layer1(kwargs.get("system")),
                without_memory=mode == "bare",
            )
            call.result = result
            if inspect.isawaitable(result):
                return _record_when_done(result, call, injector)
            entered_later = method.endswith(".stream") and _record_on_enter(
                result, lambda: injector._emit(call)
            )
            if not entered_later:
                injector._emit(call)
            return result

        wrapper.__hipo_original__ = original  # type: ignore[attr-defined]
        wrapper.__hipo_injector__ = injector  # type: ignore[attr-defined]
        return wrapper


class _AfterImport(MetaPathFinder):
    """Runs `callback(name)` right after one of `names` is imported (then forgets that name).

    It finds the module with the other finders and wraps the loader's exec_module; nothing
    else about the import changes.
    """

    def __init__(self, names: set[str], callback: Callable[[str], None]) -> None:
        self.names = set(names)
        self.callback = callback

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                self.names.discard(fullname)
                spec.loader = _PatchingLoader(spec.loader, lambda: self.callback(fullname))
                return spec
        return None


class _PatchingLoader(Loader):
    def __init__(self, loader: Any, after: Callable[[], None]) -> None:
        self.loader = loader
        self.after = after

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        try:
            self.after()
        except Exception:  # a failed patch must never break the user's import
            log.warning(
                "hipo: could not patch %s for Layer 1 injection", module.__name__, exc_info=True
            )


async def _record_when_done(awaitable: Any, call: LLMCall, injector: Injector) -> Any:
    result = await awaitable
    call.result = result
    injector._emit(call)
    return result


_TAPPED: dict[type, type] = {}


def _record_on_enter(manager: Any, record: Callable[[], None]) -> bool:
    """`messages.stream()` sends its request when the returned manager is entered: record the
    call then, once the API accepted it, rather than a call that may still fail.

    The manager's class is swapped for a subclass whose `__enter__` / `__aenter__` record after
    the SDK's own succeeded, so it is still an instance of the SDK's class. False if `manager`
    is not a context manager (the call is recorded at once).
    """
    cls = type(manager)
    if cls in _TAPPED.values():
        return False
    if cls not in _TAPPED:
        methods: dict[str, Any] = {}
        if hasattr(cls, "__enter__"):

            def __enter__(self: Any) -> Any:
                entered = super(tapped, self).__enter__()
                self._hipo_record()
                return entered

            methods["__enter__"] = __enter__
        if hasattr(cls, "__aenter__"):

            async def __aenter__(self: Any) -> Any:
                entered = await super(tapped, self).__aenter__()
                self._hipo_record()
                return entered

            methods["__aenter__"] = __aenter__
        if not methods:
            return False
        tapped = type(cls.__name__, (cls,), {**methods, "__module__": cls.__module__})
        _TAPPED[cls] = tapped
    manager.__class__ = _TAPPED[cls]
    manager._hipo_record = record
    return True


