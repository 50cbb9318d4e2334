"""How an SDK is patched without being imported: a post-import hook that runs a callback once
a module is loaded, and a stream manager that records its call when it is entered.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from importlib.abc import Loader, MetaPathFinder
from typing import Any

log = logging.getLogger(__name__)


class AfterImport(MetaPathFinder):
    """Runs `callback(name)` right after one of `names` is imported (then forgets that name).

    It finds the module with the other finders and wraps the loader's exec_module; nothing
    else about the import changes. Two hooks for one name (two shells in one process, an
    extension reloaded) ask each other: a hook already looking for a name answers None, so the
    search ends in the real finders and each hook's loader wraps the other's.
    """

    def __init__(self, names: set[str], callback: Callable[[str], None]) -> None:
        self.names = set(names)
        self.callback = callback
        self._looking: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.names or fullname in self._looking:
            return None
        self._looking.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None and spec.loader is not None:
                    self.names.discard(fullname)
                    spec.loader = PatchingLoader(spec.loader, lambda: self.callback(fullname))
                    return spec
        finally:
            self._looking.discard(fullname)
        return None


class PatchingLoader(Loader):
    """The module's own loader, with a callback after it ran the module. Everything else is the
    loader's (a package reading its own data files while it is imported, as litellm does,
    asks the loader for a resource reader), and the module keeps its own loader afterwards."""

    def __init__(self, loader: Any, after: Callable[[], None]) -> None:
        self.loader = loader
        self.after = after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self.loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self.loader
        try:
            self.after()
        except Exception:  # a failed patch must never break the user's import
            log.warning(
                "hipo: could not patch %s for Layer 1 injection", module.__name__, exc_info=True
            )


_TAPPED: dict[type, type] = {}


def record_on_enter(manager: Any, record: Callable[[], None]) -> bool:
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
