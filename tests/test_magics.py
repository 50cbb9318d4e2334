"""The IPython front end, in a real InteractiveShell: %load_ext hipo, the magics, %config.

The shell raises cell errors instead of printing them, so a broken magic fails the test.
Fixtures come in layers: a bare shell, then one with the extension loaded on a temp root.
"""

from __future__ import annotations

import re
import sys
import types
from datetime import date
from pathlib import Path

import pytest
from anthropic.resources.messages.messages import AsyncMessages, Messages
from claude_helpers import RaisingShell
from IPython.core.completer import provisionalcompleter
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

import hipo_jupyter.ipython as hipo_ipython
from hipo_jupyter.ipython import HipoMagics, NotLoadedError, RecallView, current
from hipo_jupyter.ipython.ask import AskMagics
from hipo_jupyter.ipython.config import Hipo
from hipo_jupyter.memory import Hit, Memory, MemoryConfig, RecallResult

TODAY = "2026-03-12"
PRICING = """\
- request: Compare our pricing with the top 5 competitors
- analysis: scraped pricing pages, pulled internal data
- decisions: recommend a 15% cut on the starter tier
- outcome: report shared with the team
"""


# --- fixtures, in layers --------------------------------------------------------------------
@pytest.fixture
def bare_shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A fresh shell (not the singleton), no history database, the clock pinned to TODAY."""
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    yield shell
    hipo_ipython.unload_ipython_extension(shell)


@pytest.fixture
def shell(bare_shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture):
    """The extension loaded on `memory_root`, set with %config before loading as a user would."""
    bare_shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    bare_shell.run_cell("%load_ext hipo")
    capsys.readouterr()
    return bare_shell


def run(shell: RaisingShell, cell: str) -> None:
    """Run a cell as a notebook would: it gets an execution count."""
    shell.run_cell(cell, store_history=True)


def remember_pricing(shell: RaisingShell) -> None:
    run(shell, "%%remember Competitor pricing [project] #pricing #q1\n" + PRICING)


def registered(shell: InteractiveShell) -> dict[str, int]:
    """How many of each thing the extension adds are on the shell now."""
    manager = shell.magics_manager
    line_names = ("remember", "recall", "hipo", "ask")
    return {
        "line": sum(name in manager.magics["line"] for name in line_names),
        "cell": sum(name in manager.magics["cell"] for name in ("remember", "ask")),
        "registry": sum(name in dict(manager.registry) for name in ("HipoMagics", "AskMagics")),
        "sdk_patched": sum(
            hasattr(cls.__dict__[name], "__hipo_original__")
            for cls in (Messages, AsyncMessages)
            for name in ("create", "stream")
        ),
        "configurables": sum(isinstance(c, Hipo) for c in shell.configurables),
        "matchers": len(shell.Completer.custom_matchers),
        "transformers": len(shell.input_transformers_cleanup),
        "post_run_cell": len(shell.events.callbacks["post_run_cell"]),
        "pre_run_cell": len(shell.events.callbacks["pre_run_cell"]),
    }


# --- load: the session-start ritual ---------------------------------------------------------
def test_load_compacts_and_shows_one_screen_of_status(
    bare_shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    Memory(memory_root).remember("Old note", "- outcome: kept", on=date(2026, 3, 2))
    bare_shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    bare_shell.run_cell("%load_ext hipo")

    out = capsys.readouterr().out
    assert f"hipo: memory at {memory_root}" in out
    built = current(bare_shell).startup.report.built
    assert built, "a past day's raw log must be compacted at load"
    assert f"Compacted: {len(built)} built" in out
    assert (memory_root / "memory" / "daily" / "2026-03-02.md").is_file()
    assert "Layer 1: " in out and "ROOT " in out and "SCRATCHPAD " in out
    assert "topics: " in out
    assert "Layer 1 injected into anthropic, openai, litellm calls" in out  # Hipo.inject_clients
    assert len(out.strip().splitlines()) <= 10


def test_root_follows_the_notebook_path(bare_shell: RaisingShell, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "analysis.ipynb").write_text("{}")
    bare_shell.user_ns["__session__"] = str(project / "analysis.ipynb")
    bare_shell.run_cell("%load_ext hipo")

    assert current(bare_shell).memory.root == project
    remember_pricing(bare_shell)
    raw = (project / "memory" / f"{TODAY}.md").read_text()
    assert "notebook=analysis.ipynb" in raw


def test_root_from_jpy_session_name_and_config_wins(
    bare_shell: RaisingShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nb").mkdir()
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "nb" / "x.ipynb"))
    bare_shell.run_cell("%load_ext hipo")
    assert current(bare_shell).memory.root == tmp_path / "nb"

    bare_shell.run_cell(f"%config Hipo.root = {str(tmp_path / 'elsewhere')!r}")
    assert current(bare_shell).memory.root == tmp_path / "elsewhere"


def test_load_with_a_bad_root_still_loads_and_says_why(
    bare_shell: RaisingShell, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    bare_shell.run_cell(f"%config Hipo.root = {str(not_a_folder)!r}")
    bare_shell.run_cell("%load_ext hipo")

    out = capsys.readouterr().out
    assert "could not start" in out and "Traceback" not in out
    assert "hipo" in bare_shell.magics_manager.magics["line"]
    with pytest.raises(UsageError):
        bare_shell.run_cell("%hipo compact")


# --- load / reload / unload mirror each other --------------------------------------------------
def test_reload_and_double_load_register_once(bare_shell: RaisingShell, memory_root: Path) -> None:
    before = registered(bare_shell)
    bare_shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    bare_shell.run_cell("%load_ext hipo")
    loaded = registered(bare_shell)
    assert loaded["line"] == 4 and loaded["cell"] == 2 and loaded["registry"] == 2
    assert loaded["configurables"] == 1 and loaded["matchers"] == before["matchers"] + 1
    assert loaded["transformers"] == before["transformers"] + 1
    assert loaded["pre_run_cell"] == before["pre_run_cell"] + 1
    assert loaded["post_run_cell"] == before["post_run_cell"] + 1
    assert before["sdk_patched"] == 0 and loaded["sdk_patched"] == 4

    bare_shell.run_cell("%reload_ext hipo")
    assert registered(bare_shell) == loaded
    hipo_ipython.load_ipython_extension(bare_shell)
    assert registered(bare_shell) == loaded
    assert current(bare_shell).memory.root == memory_root


def test_unload_removes_everything_load_added(bare_shell: RaisingShell, memory_root: Path) -> None:
    before = registered(bare_shell)
    bare_shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    bare_shell.run_cell("%load_ext hipo")
    session = current(bare_shell)
    bare_shell.run_cell("%unload_ext hipo")

    assert registered(bare_shell) == before
    with pytest.raises(NotLoadedError):
        current(bare_shell)
    assert session.registration.magics is None
    with pytest.raises(UsageError, match="not found"):
        bare_shell.run_cell("%hipo status")
    recall = bare_shell.magics_manager.magics["line"]["recall"]
    assert type(recall.__self__).__name__ == "HistoryMagics"  # IPython's own %recall is back

    bare_shell.run_cell("%load_ext hipo")  # and it comes back cleanly
    assert registered(bare_shell)["line"] == 4


def test_current_is_the_session_other_front_ends_use(shell: RaisingShell, memory_root: Path):
    session = hipo_ipython.current()
    assert session is current(shell)
    assert isinstance(session.memory, Memory) and session.memory.root == memory_root
    assert session.settings is next(c for c in shell.configurables if isinstance(c, Hipo))
    assert any("start" in line for line in session.log)


# --- %%remember / %remember ---------------------------------------------------------------------
def test_remember_then_recall_in_the_next_cell(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    remember_pricing(shell)
    confirmation = capsys.readouterr().out.strip()
    assert confirmation.startswith("remembered 'Competitor pricing' [project] #pricing #q1")
    assert f"in memory/{TODAY}.md:" in confirmation and "(id 2026-" in confirmation
    assert len(confirmation.splitlines()) == 1

    run(shell, "hits = %recall starter tier")
    hits = shell.user_ns["hits"]
    assert isinstance(hits, RecallView) and len(hits) >= 1
    assert hits[0].title == "Competitor pricing" and hits[0].type == "project"
    assert [hit.title for hit in hits] == [hit.title for hit in hits.hits]


def test_remember_records_provenance_and_flags(shell: RaisingShell, memory_root: Path) -> None:
    shell.execution_count = 7
    run(
        shell,
        "%%remember Prefer parquet [user] #io --type feedback --tags format,speed\n"
        "- rule: save frames as parquet\n- why: csv loses dtypes\n",
    )
    raw = (memory_root / "memory" / f"{TODAY}.md").read_text()
    assert "## Prefer parquet [feedback]" in raw  # the flag wins over [user]
    assert "cell=7" in raw and "tags=io,format,speed" in raw

    run(shell, "%%remember Late entry --date 2026-01-05\nimported from the old wiki")
    assert "Late entry" in (memory_root / "memory" / "2026-01-05.md").read_text()


def test_remember_line_form_takes_the_text_after_the_colon(
    shell: RaisingShell, memory_root: Path
) -> None:
    run(shell, "%remember Cache bug #cache: the key ignored the region")
    raw = (memory_root / "memory" / f"{TODAY}.md").read_text()
    assert "## Cache bug [project]" in raw and "the key ignored the region" in raw
    hits = shell.run_line_magic("recall", "region")
    assert [hit.title for hit in hits] == ["Cache bug"]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%remember Title\n   \n", "needs a body"),
        ("%%remember Title --bogus\nbody", "unrecognized arguments: --bogus"),
        ("%%remember Title --date 12/03/2026\nbody", "--date '12/03/2026' is not a date"),
        ("%%remember Title --type idea\nbody", "feedback, user, reference, not 'idea'"),
        ("%remember   ", "needs a note: %remember TEXT, or %remember TITLE: text"),
        ("%%remember Big\n" + "x" * 100_001, "limit"),  # raised by the engine (HipoError)
        ("%recall", "what should I recall"),
        ("%recall pricing -k 0", "at least 1"),
        ("%recall pricing --since yesterday", "--since 'yesterday' is not a date"),
        ("%recall pricing --type idea", "feedback, user, reference, not 'idea'"),
        ("%hipo frobnicate", "use one of status, compact, layer1, budget, topics, reindex"),
    ],
)
def test_bad_input_is_a_one_line_usage_error(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture, cell: str, message: str
) -> None:
    with pytest.raises(UsageError) as raised:
        shell.run_cell(cell)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    shown = capsys.readouterr()
    assert "Traceback" not in shown.out + shown.err
    assert not (memory_root / "memory" / f"{TODAY}.md").exists()


# --- %recall ------------------------------------------------------------------------------------
def test_recall_renders_text_in_a_terminal(shell: RaisingShell, capsys: pytest.CaptureFixture):
    remember_pricing(shell)
    capsys.readouterr()
    run(shell, "%recall starter tier")
    out = capsys.readouterr().out
    assert "recall 'starter tier':" in out
    assert f"1. {TODAY} [project] Competitor pricing" in out
    assert f"memory/ROOT.md -> memory/{TODAY}.md#L1" in out  # the drill-down path


def test_a_recall_question_may_end_in_a_question_mark(
    shell: RaisingShell, capsys: pytest.CaptureFixture
) -> None:
    # IPython would read "tier?" as a request for help on `tier` and never run the magic.
    remember_pricing(shell)
    capsys.readouterr()
    run(shell, "%recall what did we decide on the starter tier??")
    out = capsys.readouterr().out
    assert "recall 'what did we decide on the starter tier':" in out and "Object" not in out
    assert "Competitor pricing" in out
    run(shell, "hits = %recall starter tier?")
    assert len(shell.user_ns["hits"]) == 1
    run(shell, "%recall?")  # the magic's own help still works
    assert "Search memory" in capsys.readouterr().out


def test_a_misspelt_query_suggests_a_topic(shell: RaisingShell) -> None:
    remember_pricing(shell)
    hits = shell.run_line_magic("recall", "pricng")
    assert len(hits) == 0 and "pricing" in hits.did_you_mean
    assert "Did you mean" in str(hits) and "pricing" in str(hits)


def test_recall_html_shows_each_hit_escaped() -> None:
    hit = Hit(
        file="memory/2026-03-12.md",
        line=3,
        date="2026-03-12",
        kind="raw",
        type="project",
        title="<script>alert(1)</script>",
        snippet="cut the starter tier by 15%",
        score=1.0,
        path=("memory/ROOT.md", "memory/monthly/2026-03.md", "memory/2026-03-12.md#L3"),
    )
    html = RecallView.of(RecallResult(query="starter", hits=[hit]))._repr_html_()
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "2026-03-12" in html and "project" in html and "cut the starter tier" in html
    assert "memory/monthly/2026-03.md -&gt; memory/2026-03-12.md#L3" in html


def test_did_you_mean_never_offers_common_words(shell: RaisingShell) -> None:
    """Only topic names and titles close to a query word: "when do we go live?" against
    notes whose words include "line" and "give" suggests nothing (issue 35)."""
    run(shell, "%%remember Pipeline review #pipeline\n- outcome: line up the give-back plan\n")
    run(shell, "%%remember Online give-away #marketing\n- decisions: give away 100 seats\n")
    hits = shell.run_line_magic("recall", "when do we go live?")
    assert len(hits) == 0 and hits.did_you_mean == []
    assert "Did you mean" not in str(hits)
    typo = shell.run_line_magic("recall", "pipelin revew")
    assert "pipeline" in typo.did_you_mean or len(typo) > 0


def test_no_hits_says_did_you_mean() -> None:
    view = RecallView.of(RecallResult(query="pricng", did_you_mean=["pricing"]))
    assert "Did you mean: pricing?" in str(view)
    assert "Did you mean: pricing?" in view._repr_html_()
    assert len(view) == 0 and not list(view)


def test_recall_completes_topic_names_and_types(shell: RaisingShell) -> None:
    remember_pricing(shell)
    with provisionalcompleter():
        topics = {c.text for c in shell.Completer.completions("%recall pri", 11)}
        types_ = {c.text for c in shell.Completer.completions("%recall x --type fe", 19)}
        others = {c.text for c in shell.Completer.completions("print(pri", 9)}
    assert "pricing" in topics
    assert "feedback" in types_
    assert "pricing" not in others


# --- %config ------------------------------------------------------------------------------------
def test_config_change_applies_to_the_next_magic(shell: RaisingShell, tmp_path: Path) -> None:
    for n in range(3):
        run(shell, f"%%remember Pricing note {n}\n- outcome: starter tier price {n}")
    assert len(shell.run_line_magic("recall", "starter tier")) == 3

    shell.run_cell("%config Hipo.recall_k = 1")
    assert len(shell.run_line_magic("recall", "starter tier")) == 1

    other = tmp_path / "other-root"
    shell.run_cell(f"%config Hipo.root = {str(other)!r}")
    shell.run_cell("%config Hipo.daily_threshold = 12")
    run(shell, "%%remember Moved\n- outcome: written to the other root")
    assert (other / "memory" / f"{TODAY}.md").is_file()
    assert current(shell).memory.config.daily_threshold == 12


def test_a_bad_setting_is_reported_and_does_not_stop_reload(
    shell: RaisingShell, capsys: pytest.CaptureFixture
) -> None:
    shell.run_cell("%config Hipo.search_backend = 'bad'")  # %config logs the error and goes on
    shell.run_cell("%config Hipo.recall_k = 2")
    shell.run_cell("%reload_ext hipo")
    assert "Hipo.search_backend left at its default" in capsys.readouterr().out
    assert current(shell).settings.search_backend == "fts5"
    assert current(shell).settings.recall_k == 2


def test_settings_default_to_the_engine_defaults_and_read_ipython_config() -> None:
    assert Hipo().memory_config() == MemoryConfig()
    config = Config()
    config.Hipo.layer1_budgets = {"ROOT": 4000}
    config.Hipo.search_backend = "whoosh"
    mapped = Hipo(config=config).memory_config()
    assert mapped.layer1_budgets == {**MemoryConfig().layer1_budgets, "ROOT": 4000}
    assert mapped.search_backend == "whoosh"


# --- %hipo --------------------------------------------------------------------------------------
def test_hipo_subcommands_print_text(shell: RaisingShell, capsys: pytest.CaptureFixture) -> None:
    remember_pricing(shell)
    capsys.readouterr()

    def output(line: str) -> str:
        shell.run_cell(line)
        return capsys.readouterr().out

    assert re.search(r"raw logs: +1 day, 1 checkpoint\n", output("%hipo"))
    assert "topics: " in output("%hipo status")
    assert output("%hipo compact").startswith(("Compacted: ", "Nothing to compact"))
    layer1 = output("%hipo layer1")  # the untouched working files are left out (issue 53)
    assert "# memory/ROOT.md" in layer1 and "# SCRATCHPAD.md" not in layer1
    budget = output("%hipo budget")
    for part in ("ROOT", "SCRATCHPAD", "WORKING", "TASK-QUEUE", "total"):
        assert part in budget
    assert "- pricing [project" in output("%hipo topics")
    assert "search index rebuilt: " in output("%hipo reindex")


def test_budget_and_topics_hand_over_to_widgets_in_a_kernel(
    shell: RaisingShell, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    shown: list[tuple[str, object]] = []
    widgets = types.ModuleType("hipo_jupyter.ipython.widgets")
    widgets.show_budget = lambda memory: shown.append(("budget", memory))
    widgets.show_topics = lambda memory: shown.append(("topics", memory))
    monkeypatch.setitem(sys.modules, "hipo_jupyter.ipython.widgets", widgets)

    shell.run_cell("%hipo budget")  # a terminal shell: no kernel, so text
    assert shown == [] and "total" in capsys.readouterr().out

    monkeypatch.setattr(shell, "kernel", object(), raising=False)
    shell.run_cell("%hipo budget")
    shell.run_cell("%hipo topics")
    assert shown == [("budget", current(shell).memory), ("topics", current(shell).memory)]
    shell.run_cell("%hipo budget --text")
    assert len(shown) == 2 and "total" in capsys.readouterr().out


# --- docs drift ---------------------------------------------------------------------------------
def test_every_magic_and_setting_has_help(shell: RaisingShell) -> None:
    magics = next(m for m in dict(shell.magics_manager.registry).values()
                  if isinstance(m, HipoMagics))
    names = set(magics.magics["line"]) | set(magics.magics["cell"])
    assert names == {"remember", "recall", "hipo", "sparql"}
    for name in names:
        function = getattr(magics, name)
        assert function.__doc__ and function.__doc__.strip().startswith("::"), name
        for action in function.parser._actions:
            assert action.help, f"%{name} {action.dest} has no help"
    assert "--since" in shell.object_inspect_text("%recall")
    ask = next(m for m in dict(shell.magics_manager.registry).values() if isinstance(m, AskMagics))
    assert set(ask.magics["line"]) == set(ask.magics["cell"]) == {"ask"}
    assert ask.ask.__doc__.strip().startswith("::")
    for action in ask.ask.parser._actions:
        assert action.help, f"%ask {action.dest} has no help"
    for name, trait in Hipo.class_traits(config=True).items():
        assert trait.help, f"Hipo.{name} has no help"


def test_recall_table_reads_left_aligned() -> None:
    """JupyterLab's notebook CSS right-aligns table cells; the recall table sets every header and
    cell left, so titles and text start on one line (issue 53)."""
    hit = Hit(
        file="memory/2026-03-12.md",
        line=3,
        date="2026-03-12",
        kind="raw",
        type="project",
        title="Pricing review",
        snippet="cut the starter tier by 15%",
        score=1.0,
        path=("memory/ROOT.md", "memory/2026-03-12.md#L3"),
    )
    html = RecallView.of(RecallResult(query="starter", hits=[hit, hit]))._repr_html_()
    cells = re.findall(r"<(td|th)( [^>]*)?>", html)
    assert len(cells) == 3 + 2 * 3
    assert all("text-align:left" in (attributes or "") for _, attributes in cells)
