"""`%load_ext hipo` never waits on the model: the session-start pass writes the extractive
summary where a summary is due, Claude's are written in a thread after it, Layer 1 is served
from the extractive tree until they land, and a process killed mid-summary loses nothing: the
state file says what is still owed, and the next start writes it (issue 53, item 1).

The real anthropic SDK talks to a stand-in Messages API that takes its time (`SlowMessagesAPI`),
served on a local port as for a kernel, or over a mock transport."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pytest
from claude_helpers import (
    FakeMessagesAPI,
    Reply,
    isolate_credentials,
    new_shell,
    serve,
)

from hipo_jupyter import llm
from hipo_jupyter.ipython import current, unload_ipython_extension
from hipo_jupyter.memory import Memory, MemoryConfig, render
from hipo_jupyter.memory.views.check import check_folder

SUMMARY = "## Topics\npricing, starter-tier\n## Key Decisions\n- cut starter tier by 15% (CLAUDE)\n"
DAYS = (date(2026, 3, 2), date(2026, 3, 3))
TODAY = date(2026, 3, 9)  # the Monday after: both days are closed, their nodes fixed
CONFIG = MemoryConfig(daily_threshold=5)
SLOW = 4.0  # seconds a summary takes the stand-in


@dataclass
class SlowMessagesAPI(FakeMessagesAPI):
    """The Messages API as a slow model: each message takes `seconds`; `asked` is set when
    the first one arrives."""

    seconds: float = 0.0
    asked: threading.Event = field(default_factory=threading.Event)

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        if path == "/v1/messages":
            self.asked.set()
            time.sleep(self.seconds)
        return super().handle(path, headers, raw)


@pytest.fixture
def api() -> SlowMessagesAPI:
    return SlowMessagesAPI(seconds=SLOW, replies=[SUMMARY] * 20)


@pytest.fixture
def served(api: SlowMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    isolate_credentials(monkeypatch)
    with serve(api) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield url


def busy_days(root: Path) -> None:
    """Two closed days each over the daily threshold: two summaries due."""
    memory = Memory(root, config=CONFIG, today=lambda: TODAY)
    for day in DAYS:
        for n in range(4):
            memory.remember(
                f"Pricing step {n}", f"- outcome: starter tier step {n} (PRJ-14{n})", on=day
            )
    memory.close()


def daily(root: Path, day: date) -> str:
    return (root / "memory" / "daily" / f"{day.isoformat()}.md").read_text(encoding="utf-8")


def owed(root: Path) -> list[str]:
    state = json.loads((root / "memory" / ".compaction-state.json").read_text(encoding="utf-8"))
    return sorted(path for path, entry in state["hipo"]["nodes"].items() if entry.get("pending"))


def test_load_ext_does_not_wait_on_the_model(
    served: str,
    api: SlowMessagesAPI,
    memory_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    busy_days(memory_root)
    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%config Hipo.summarizer = 'claude'")
    shell.run_cell("%config Hipo.daily_threshold = 5")
    try:
        started = time.perf_counter()
        shell.run_cell("%load_ext hipo")
        seconds = time.perf_counter() - started
        out = capsys.readouterr().out
        assert seconds < SLOW  # two summaries of a 4 s model: 8 s when the cell waited
        # the tree is there, extractive, and owed Claude's summaries, said in one line
        assert owed(memory_root) == [f"memory/daily/{d.isoformat()}.md" for d in DAYS]
        assert "(CLAUDE)" not in daily(memory_root, DAYS[0])
        assert "## Topics" in daily(memory_root, DAYS[0])
        assert "the model writes 2 summaries in the background" in out
        session = current(shell)
        assert "PRJ-140" in session.memory.layer1().text  # served from the extractive tree
        # then they land, and everything built from them follows
        assert session.memory.summaries.wait(timeout=60)
        assert owed(memory_root) == []
        for day in DAYS:
            assert "- cut starter tier by 15% (CLAUDE)" in daily(memory_root, day)
        weekly = (memory_root / "memory" / "weekly" / "2026-W10.md").read_text()
        assert weekly.count("(CLAUDE)") == 2  # the verbatim week over them, rebuilt
        assert len(api.message_requests()) == 2
        assert all(result.passed for result in check_folder(session.memory))
    finally:
        unload_ipython_extension(shell)


KILLED = """
import sys
from datetime import date
from hipo_jupyter import llm
from hipo_jupyter.memory import Memory, MemoryConfig

memory = Memory(sys.argv[1], config=MemoryConfig(daily_threshold=5),
                summarizer=llm.ClaudeSummarizer(max_retries=0, timeout=600),
                today=lambda: date(2026, 3, 9))
report = memory.compact(background=True)
print(",".join(report.deferred), flush=True)
memory.summaries.wait()
"""


def test_a_process_killed_mid_summary_loses_nothing_and_the_next_start_resumes(
    served: str, api: SlowMessagesAPI, memory_root: Path
) -> None:
    busy_days(memory_root)
    api.seconds = 600.0  # the model never answers the killed process
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(memory_root)], stdout=subprocess.PIPE, text=True
    )
    try:
        deferred = process.stdout.readline().strip().split(",")
        assert api.asked.wait(timeout=60)  # it is waiting on the model now
    finally:
        process.kill()
        process.wait()
    assert deferred == [f"memory/daily/{d.isoformat()}.md" for d in DAYS]
    assert owed(memory_root) == deferred  # the state still says what is owed
    for day in DAYS:  # the stand-ins are whole, and the tree is fresh for `hipo check`
        assert "## Topics" in daily(memory_root, day) and "PRJ-140" in daily(memory_root, day)
    memory = Memory(memory_root, config=CONFIG, today=lambda: TODAY)
    assert all(result.passed for result in check_folder(memory))
    assert memory.status().owed_summaries == 2
    shown = render.status_text(memory.status())  # `hipo status`, `%hipo status`
    assert "summaries owed:  2 (the model writes them in the background)" in shown
    memory.close()

    api.seconds = 0.0  # the next start, with a model that answers
    client = FakeMessagesAPI(replies=[SUMMARY] * 5)
    resumed = Memory(
        memory_root,
        config=CONFIG,
        summarizer=llm.ClaudeSummarizer(client=client.client()),
        today=lambda: TODAY,
    )
    report = resumed.compact(background=True)
    assert report.built == []  # nothing was dirty: only the owed summaries are written
    assert resumed.summaries.wait(timeout=60)
    assert owed(memory_root) == []
    assert len(client.message_requests()) == 2
    for day in DAYS:
        assert "(CLAUDE)" in daily(memory_root, day)
    assert resumed.recall("CLAUDE").hits  # indexed as it landed
    resumed.close()


def test_a_failing_model_leaves_the_stand_in_and_owes_nothing(memory_root: Path) -> None:
    busy_days(memory_root)
    client = FakeMessagesAPI(failures=[500, 500])
    memory = Memory(
        memory_root,
        config=CONFIG,
        summarizer=llm.ClaudeSummarizer(client=client.client()),
        today=lambda: TODAY,
    )
    memory.compact(background=True)
    assert memory.summaries.wait(timeout=60)
    assert owed(memory_root) == []  # no retry at every start for a model that refuses
    assert "## Topics" in daily(memory_root, DAYS[0]) and "PRJ-140" in daily(memory_root, DAYS[0])
    state = json.loads((memory_root / "memory" / ".compaction-state.json").read_text())
    entry = state["hipo"]["nodes"][f"memory/daily/{DAYS[0].isoformat()}.md"]
    assert "summarizer failed" in entry["summary-error"]
    memory.close()


def test_without_background_the_pass_writes_the_summaries_itself(memory_root: Path) -> None:
    """`hipo compact`, the MCP server: no cell to free, so the pass writes them as before."""
    busy_days(memory_root)
    client = FakeMessagesAPI(replies=[SUMMARY] * 5)
    memory = Memory(
        memory_root,
        config=CONFIG,
        summarizer=llm.ClaudeSummarizer(client=client.client()),
        today=lambda: TODAY,
    )
    report = memory.compact()
    assert report.deferred == [] and owed(memory_root) == []
    assert "(CLAUDE)" in daily(memory_root, DAYS[0])
    memory.close()


async def test_the_sidebar_is_told_how_many_summaries_are_owed(notebook_folder, api_get) -> None:
    def owing(memory: Memory) -> None:
        memory.config = CONFIG
        memory.summarizer = llm.ClaudeSummarizer(client=FakeMessagesAPI().client())
        memory.summaries.stop()  # this process never writes them: they stay owed
        for day in DAYS:
            memory.remember("Pricing", "- outcome: a\n- outcome: b\n- outcome: c", on=day)
            memory.remember("Churn", "- outcome: d\n- outcome: e", on=day)
        assert memory.compact(background=True).deferred

    notebook_folder("project", owing)
    status, tree = await api_get("tree", path="project/analysis.ipynb")
    assert status == 200 and tree["owed_summaries"] == 2


def test_in_a_kernel_the_line_counts_the_summaries_as_they_land(
    served: str, api: SlowMessagesAPI, memory_root: Path
) -> None:
    """A notebook run headless (nbclient applies a display's updates as JupyterLab does): the
    `%load_ext` cell's line, updated in place from the thread, ends saying they landed."""
    import nbformat

    from hipo_jupyter.cli.demo import execute_notebook

    busy_days(memory_root)
    api.seconds = 0.5
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%config Hipo.summarizer = 'claude'\n%config Hipo.daily_threshold = 5\n%load_ext hipo"
        ),
        nbformat.v4.new_code_cell(
            "from hipo_jupyter.ipython import current\nassert current().memory.summaries.wait(60)"
        ),
    ]
    path = memory_root / "week.ipynb"
    nbformat.write(notebook, path)
    executed = execute_notebook(path, timeout=120, today=TODAY.isoformat())
    shown = [
        output["data"]["text/plain"]
        for output in executed.cells[0].outputs
        if output.get("output_type") == "display_data" and output["data"]["text/plain"]
    ]  # (the compaction's bar leaves an empty display behind)
    assert shown == ["hipo: 2 summaries written in the background; Layer 1 carries them now"]
    assert owed(memory_root) == []
