"""Layer 1 injected into the user's own LLM calls: the request methods of the anthropic SDK
(create, stream, parse, count_tokens, sync and async, beta included), of the openai SDK
(chat.completions and responses: create, parse, stream) and litellm's completion / acompletion,
patched at class (or module) level; each call recorded for the write-back; and an import hook
that patches an SDK when it is imported after `%load_ext hipo` (so loading imports none).

How Layer 1 goes into a request is the request format's business: the Messages API's `system`
(`messages_shape`), OpenAI's system message or `instructions` (`openai_shapes`). The rest is
shared, here: once per call, never into a call that carries it, calls underneath pass through.
How an SDK is patched before it is imported is `sdk_hooks`'.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import logging
import os
import sys
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import caching
from .layer1_pin import PromptLayer1
from .messages_shape import MESSAGES, message_of
from .openai_shapes import CHAT, LITELLM, RESPONSES
from .sdk_hooks import AfterImport, record_on_enter

log = logging.getLogger(__name__)


@dataclass
class LLMCall:
    """One call through an LLM SDK while hipo was loaded, as the write-back needs it."""

    method: str  # "messages.create", "beta.messages.stream", "chat.completions.create", ...
    model: str
    prompt: str  # text of the last user message
    tool_results: list[str] = field(default_factory=list)
    had_layer1: bool = False
    without_memory: bool = False  # %%ask --no-memory or llm.without_memory(): opted out
    result: Any = None
    client: str = "anthropic"  # which SDK: a name of `CLIENTS`
    streamed: list[str] = field(default_factory=list)  # a stream's text, as the caller read it
    shape: Any = field(default=None, repr=False, compare=False)  # None: the Messages API

    def reply(self) -> str | None:
        """The reply's text: from the SDK's reply object, or from a stream the caller has
        consumed. None when nothing holds text (an unconsumed or raw stream)."""
        shape = self.shape or MESSAGES
        text = shape.reply(self.result)
        if text is None and self.streamed:
            return "".join(self.streamed)
        return text

    def incomplete(self) -> str | None:
        """Why the reply is not whole (a token limit, a stream cut short), or None."""
        shape = self.shape or MESSAGES
        try:
            return shape.incomplete(self.result)
        except Exception:  # a result of a shape we do not know: taken as whole
            return None

    def usage(self) -> Any:
        """The Messages API's usage (cache reads and writes, for `%hipo budget`); None for
        other SDKs, whose usage reports no prompt-cache writes."""
        if self.shape not in (None, MESSAGES):
            return None
        message = message_of(self.result)
        return getattr(message, "usage", None)


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


# What a patched method does with a call:
RECORD = "record"  # inject, and record it for the write-back (calls inside it pass through)
INJECT = "inject"  # inject only: it sends a request but is no task (count_tokens)
DEFER = "defer"  # inject only; it hands the call to a patched `create` later, which records it


@dataclass(frozen=True)
class PatchPoint:
    """Methods of one class (or functions of one module) that send an LLM request."""

    client: str  # its name in `Hipo.inject_clients`
    module: str
    owner: str | None  # the class in `module`; None: module-level functions
    label: str  # how a call is named: f"{label}.{method}"
    methods: tuple[tuple[str, str], ...]  # (name, RECORD | INJECT | DEFER)
    shape: Any  # the request format: MessagesShape, openai_shapes.ChatShape, ...


_ANTHROPIC_METHODS = (("create", RECORD), ("stream", RECORD), ("parse", RECORD))
# openai's .stream() helpers call `create(stream=True)` (sync: when the manager is entered),
# so `create` records them; `stream` only injects, for the SDK versions that post directly.
_OPENAI_METHODS = (("create", RECORD), ("parse", RECORD), ("stream", DEFER))
_OPENAI_RESOURCES = (
    ("openai.resources.chat.completions.completions", "Completions", "chat.completions", CHAT),
    ("openai.resources.responses.responses", "Responses", "responses", RESPONSES),
)
PATCH_POINTS: tuple[PatchPoint, ...] = (
    *(
        PatchPoint(
            "anthropic",
            f"anthropic.resources.{beta}messages.messages",
            f"{sync}Messages",
            f"{beta}messages",
            (*_ANTHROPIC_METHODS, ("count_tokens", INJECT)),
            MESSAGES,
        )
        for beta in ("", "beta.")
        for sync in ("", "Async")
    ),
    *(
        PatchPoint("openai", module, f"{sync}{owner}", label, _OPENAI_METHODS, shape)
        for module, owner, label, shape in _OPENAI_RESOURCES
        for sync in ("", "Async")
    ),
    # `litellm.completion`, as user code calls it (or imports it after hipo loaded)
    PatchPoint(
        "litellm",
        "litellm",
        None,
        "litellm",
        (("completion", RECORD), ("acompletion", RECORD)),
        LITELLM,
    ),
)
CLIENTS: tuple[str, ...] = tuple(dict.fromkeys(point.client for point in PATCH_POINTS))
"""The SDKs hipo can put Layer 1 into: the values `Hipo.inject_clients` takes."""

# litellm fetches its model price map from the network at import unless told not to.
LITELLM_OFFLINE = ("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class Injector:
    """Patches the LLM SDKs' request methods while installed (`PATCH_POINTS`).

    `layer1()` returns the text to inject (a `PromptLayer1` when part of it goes after the
    cache breakpoints), or None to leave calls alone (injection off, or no memory);
    `recall(prompt)`, when given, the memory recalled for a call's last user message;
    `on_call(call)` receives each recorded call after the SDK returned; `clients()` names the
    SDKs whose calls get memory now (default: all of `CLIENTS`; a call through another passes
    straight through, and so do the SDK calls it makes underneath). None of them may break a
    user's call: their errors are logged and the call goes on.
    """

    def __init__(
        self,
        layer1: Callable[[], str | PromptLayer1 | None],
        on_call: Callable[[LLMCall], None] | None = None,
        on_cache_plan: Callable[[caching.CachePlan | None], None] | None = None,
        recall: Callable[[str], str | None] | None = None,
        clients: Callable[[], Collection[str]] | None = None,
    ) -> None:
        self.layer1 = layer1
        self.recall = recall  # last user message -> fenced recalled memory, or None
        self.on_call = on_call
        self.on_cache_plan = on_cache_plan  # where each call's breakpoints went (notes)
        self.clients = clients
        self._patched: list[tuple[Any, str, Any, Any]] = []
        self._hook: AfterImport | None = None
        self._live = False
        self._set_environment: list[str] = []

    @property
    def installed(self) -> bool:
        return self._live

    def install(self) -> None:
        """Patch the SDK modules that are imported; the others the moment they are.

        Importing an SDK takes up to seconds (litellm: three), so a kernel that has not
        imported one does not pay for it at %load_ext: a post-import hook patches its request
        methods when the user's code (or the SDK's lazy client) imports them.
        """
        if self._patched or self._hook:
            return
        waiting = set()
        for module in dict.fromkeys(point.module for point in PATCH_POINTS):
            if module in sys.modules:
                self._patch_module(module)
            else:
                waiting.add(module)
        if "litellm" not in sys.modules and LITELLM_OFFLINE[0] not in os.environ:
            os.environ[LITELLM_OFFLINE[0]] = LITELLM_OFFLINE[1]  # no download at its import
            self._set_environment.append(LITELLM_OFFLINE[0])
        if waiting:
            self._hook = AfterImport(waiting, self._patch_module)
            sys.meta_path.insert(0, self._hook)
        self._live = True

    def _patch_module(self, module_name: str) -> None:
        for point in PATCH_POINTS:
            if point.module != module_name:
                continue
            try:
                module = importlib.import_module(module_name)
                owner = getattr(module, point.owner) if point.owner else module
            except (ImportError, AttributeError):  # an SDK without beta messages, say
                continue
            for name, role in point.methods:
                current = owner.__dict__.get(name)
                if current is None or not callable(current):
                    continue
                # Another session's wrapper is replaced, not stacked: one injection per call.
                original = getattr(current, "__hipo_original__", current)
                wrapper = self._wrap(original, point, name, role)
                setattr(owner, name, wrapper)
                self._patched.append((owner, name, original, wrapper))

    def uninstall(self) -> None:
        """Put the SDKs' methods back. A method someone else wrapped after us is left to them;
        our wrapper under theirs passes calls straight through from now on."""
        if self._hook is not None:
            if self._hook in sys.meta_path:
                sys.meta_path.remove(self._hook)
            self._hook = None
        for owner, name, original, wrapper in reversed(self._patched):
            if owner.__dict__.get(name) is wrapper:
                setattr(owner, name, original)
        self._patched = []
        for variable in self._set_environment:
            if "litellm" not in sys.modules:  # imported since: the setting did its work
                os.environ.pop(variable, None)
        self._set_environment = []
        self._live = False

    def wants(self, client: str) -> bool:
        """Whether calls through `client` get memory now (`Hipo.inject_clients`)."""
        if self.clients is None:
            return True
        try:
            return client in self.clients()
        except Exception:
            log.warning("hipo: the clients to inject could not be read", exc_info=True)
            return False

    def _layer1_text(self) -> str | PromptLayer1 | None:
        try:
            return self.layer1()
        except Exception:
            log.warning("hipo: Layer 1 could not be read; call sent without it", exc_info=True)
            return None

    def _recalled(self, prompt: str) -> str | None:
        if self.recall is None:
            return None
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

    def _injected(self, shape: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` with Layer 1 (and recalled memory) put in, or as they were."""
        if not shape.applies(kwargs) or shape.carries(kwargs):
            return kwargs
        text = self._layer1_text()
        if text is None:
            return kwargs
        split = text if isinstance(text, PromptLayer1) else PromptLayer1(text)
        recalled = self._recalled(shape.asked(kwargs)[0])
        try:
            injected, plan = shape.inject(kwargs, split, recalled)
        except Exception:  # a request we cannot read: it goes as the caller wrote it
            log.warning("hipo: Layer 1 could not be put in this call", exc_info=True)
            return kwargs
        self._cache_plan(plan)
        return injected

    def _finish(self, call: LLMCall, result: Any) -> None:
        """The SDK accepted the call: keep its result (its stream's text as it is read)."""
        call.result = result
        try:
            call.shape.tap(result, call.streamed)
        except Exception:
            log.warning("hipo: a streamed reply cannot be captured", exc_info=True)

    def _wrap(self, original: Callable[..., Any], point: PatchPoint, name: str, role: str) -> Any:
        injector = self
        method = f"{point.label}.{name}"
        shape = point.shape

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not injector.installed or _NESTED.get():
                return original(*args, **kwargs)
            mode = _MODE.get()
            args, kwargs = shape.arguments(original, args, kwargs)
            if not (mode or injector.wants(point.client) or _hipos_own(shape, kwargs)):
                token = _NESTED.set(True)  # a client left out: so are the calls it makes
                try:
                    return original(*args, **kwargs)
                finally:
                    _NESTED.reset(token)
            if not mode:
                kwargs = injector._injected(shape, kwargs)
            if role == DEFER:
                return original(*args, **kwargs)
            token = _NESTED.set(True)
            try:
                result = original(*args, **kwargs)
            finally:
                _NESTED.reset(token)
            if role != RECORD or mode == "internal":
                return result
            prompt, tool_results = shape.asked(kwargs)
            call = LLMCall(
                method=method,
                model=str(kwargs.get("model", "")),
                prompt=prompt,
                tool_results=tool_results,
                had_layer1=shape.applies(kwargs) and shape.carries(kwargs),
                without_memory=mode == "bare",
                client=point.client,
                shape=shape,
            )
            if inspect.isawaitable(result):
                return _record_when_done(result, call, injector)
            injector._finish(call, result)
            entered_later = name == "stream" and record_on_enter(
                result, lambda: injector._emit(call)
            )
            if not entered_later:
                injector._emit(call)
            return result

        wrapper.__hipo_original__ = original  # type: ignore[attr-defined]
        wrapper.__hipo_injector__ = injector  # type: ignore[attr-defined]
        return wrapper


def _hipos_own(shape: Any, kwargs: dict[str, Any]) -> bool:
    """A call that carries Layer 1 already (%%ask's, or a conversation hipo sent before) is
    recorded for the write-back even through a client `Hipo.inject_clients` leaves out."""
    return shape.applies(kwargs) and shape.carries(kwargs)


async def _record_when_done(awaitable: Any, call: LLMCall, injector: Injector) -> Any:
    """Await the SDK's coroutine, then record the call. The SDK calls it makes underneath
    (litellm's acompletion through openai's client) run inside it, so they pass through."""
    token = _NESTED.set(True)
    try:
        result = await awaitable
    finally:
        _NESTED.reset(token)
    injector._finish(call, result)
    injector._emit(call)
    return result
