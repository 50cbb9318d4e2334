"""`%load_ext hipo` and `%unload_ext hipo`: the two mirror each other.

Load adds four things to the shell: the `Hipo` settings to `shell.configurables` (for
`%config`), the magics, the `%recall` completer, and the session (`current()`). Unload removes
those four and closes the Memory. A second load first unloads, so `%reload_ext hipo` and a
repeated `load_ipython_extension` never register anything twice.

IPython has a `%recall` of its own (re-run a history line): ours shadows it while loaded, and
unload puts it back.
"""

from __future__ import annotations

from typing import Any

from .completer import topic_matcher
from .config import load_settings
from .display import startup_text
from .magics import HipoMagics
from .progress import ProgressBar
from .session import HipoSession, NotLoadedError, Registration, current, forget, set_current


def load_ipython_extension(shell: Any) -> None:
    """Register settings, magics and completer, then run the session-start ritual: compact
    what is dirty, load Layer 1 and show one screen of status."""
    unload_ipython_extension(shell)
    settings, problems = load_settings(shell.config)
    session = HipoSession(shell, settings)

    shell.configurables.append(settings)
    magics = HipoMagics(shell, session)
    session.registration.shadowed = _magics_named(shell, magics)
    shell.register_magics(magics)
    matcher = topic_matcher(session)
    shell.Completer.custom_matchers.append(matcher)
    session.registration.magics = magics
    session.registration.matchers.append(matcher)
    set_current(session)

    with ProgressBar("compacting", leave=False) as bar:
        startup = session.start(progress=bar)
    for problem in problems:
        print(f"hipo: {problem}")
    print(startup_text(startup.root, startup.report, startup.layer1, startup.topics, startup.error))


def unload_ipython_extension(shell: Any) -> None:
    """Remove what load added, in reverse order, and close the Memory."""
    try:
        session = current(shell)
    except NotLoadedError:
        return
    forget(session)
    for matcher in session.registration.matchers:
        if matcher in shell.Completer.custom_matchers:
            shell.Completer.custom_matchers.remove(matcher)
    if session.registration.magics is not None:
        _unregister_magics(shell, session.registration.magics, session.registration.shadowed)
    if session.settings in shell.configurables:
        shell.configurables.remove(session.settings)
    session.registration = Registration()
    session.close_memory()


def _magics_named(shell: Any, magics: Any) -> dict[tuple[str, str], Any]:
    """The magics already registered under our names, which registering ours will shadow."""
    tables = shell.magics_manager.magics
    return {
        (kind, name): tables[kind][name]
        for kind, ours in magics.magics.items()
        for name in ours
        if name in tables.get(kind, {})
    }


def _unregister_magics(shell: Any, magics: Any, shadowed: dict[tuple[str, str], Any]) -> None:
    """IPython has no public way to drop magics: take ours out of the dispatch tables and put
    back what they shadowed."""
    manager = shell.magics_manager
    for kind, table in manager.magics.items():
        for name, function in list(table.items()):
            if getattr(function, "__self__", None) is magics:
                if (kind, name) in shadowed:
                    table[name] = shadowed[(kind, name)]
                else:
                    del table[name]
    name = type(magics).__name__
    if dict.get(manager.registry, name) is magics:  # plain get: no lazy-load on a miss
        del manager.registry[name]
