"""`%load_ext hipo` and `%unload_ext hipo`: the two mirror each other.

Load adds to the shell: the `Hipo` settings to `shell.configurables` (for `%config`), the magics
(%%remember, %recall, %hipo, and %%ask), the `%recall` completer, an input transformer that lets
a `%recall` query end in "?" (`questions`), two cell hooks (pre_run_cell,
post_run_cell: the write-back of LLM calls), the Layer 1 injection into the LLM SDKs' request
methods (anthropic, openai, litellm: `Hipo.inject_clients`), and the session (`current()`).
Unload removes all of these, in reverse order, restores the SDKs' methods and closes the Memory.
A second load first unloads, so `%reload_ext hipo` and a repeated `load_ipython_extension` never
register anything twice.

IPython has a `%recall` of its own (re-run a history line): ours shadows it while loaded, and
unload puts it back.
"""

from __future__ import annotations

from typing import Any

from hipo_jupyter import llm

from .ask import AskMagics
from .completer import topic_matcher
from .config import load_settings
from .display import claude_line, startup_text
from .magics import HipoMagics
from .progress import ProgressBar
from .questions import recall_questions
from .session import HipoSession, NotLoadedError, Registration, current, forget, set_current


def load_ipython_extension(shell: Any) -> None:
    """Register settings, magics and completer, then run the session-start ritual: compact
    what is dirty, load Layer 1 and show one screen of status."""
    unload_ipython_extension(shell)
    settings, problems = load_settings(shell.config)
    session = HipoSession(shell, settings)

    registration = session.registration
    shell.configurables.append(settings)
    magics = HipoMagics(shell, session)
    ask_magics = AskMagics(shell, session)
    registration.shadowed = {**_magics_named(shell, magics), **_magics_named(shell, ask_magics)}
    shell.register_magics(magics)
    shell.register_magics(ask_magics)
    registration.magics, registration.ask_magics = magics, ask_magics
    shell.input_transformers_cleanup.append(recall_questions)
    registration.transformers.append(recall_questions)
    matcher = topic_matcher(session)
    shell.Completer.custom_matchers.append(matcher)
    registration.matchers.append(matcher)
    writeback = session.writeback
    for event, callback in (
        ("pre_run_cell", writeback.pre_run_cell),
        ("post_run_cell", writeback.post_run_cell),
    ):
        shell.events.register(event, callback)
        registration.hooks.append((event, callback))
    registration.injector = llm.Injector(
        layer1=session.injection_layer1,
        on_call=writeback.record,
        on_cache_plan=session.cache_note,
        recall=session.sdk_recall,
        clients=lambda: settings.inject_clients,
    )
    registration.injector.install()
    set_current(session)

    with ProgressBar("compacting", leave=False) as bar:
        startup = session.start(progress=bar)
    for problem in problems:
        print(f"hipo: {problem}")
    waiting = len(session.memory.proposals()) if startup.error is None else 0
    print(
        startup_text(
            startup.root, startup.report, startup.layer1, startup.topics, startup.error, waiting
        )
    )
    if startup.owed:
        session.show_summaries(startup.owed)
    clients = settings.inject_clients
    print(claude_line(settings.inject, settings.model, session.summarizer_name, clients))


def unload_ipython_extension(shell: Any) -> None:
    """Remove what load added, in reverse order, and close the Memory."""
    try:
        session = current(shell)
    except NotLoadedError:
        return
    forget(session)
    registration = session.registration
    if registration.injector is not None:
        registration.injector.uninstall()
    for event, callback in reversed(registration.hooks):
        if callback in shell.events.callbacks[event]:
            shell.events.unregister(event, callback)
    for matcher in registration.matchers:
        if matcher in shell.Completer.custom_matchers:
            shell.Completer.custom_matchers.remove(matcher)
    for transformer in registration.transformers:
        if transformer in shell.input_transformers_cleanup:
            shell.input_transformers_cleanup.remove(transformer)
    for magics in (registration.ask_magics, registration.magics):
        if magics is not None:
            _unregister_magics(shell, magics, registration.shadowed)
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
