"""The compaction chain: layout, lifecycle, thresholds, incrementality, determinism."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import date, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk.nodes import parse_node
from hipo_jupyter.memory.disk.periods import week_id, week_month


def make_memory(root: Path, today: date, **config) -> Memory:
    return Memory(root, config=MemoryConfig(**config), today=lambda: today)


def write(memory: Memory, day: date, title: str, decision: str = "keep it") -> None:
    memory.remember(title, f"- request: {title}\n- decisions: {decision}", on=day)


def node(root: Path, relative: str):
    return parse_node((root / relative).read_text())


def derived_files(root: Path) -> dict[str, bytes]:
    memory_dir = root / "memory"
    files = {}
    for sub in ("daily", "weekly", "monthly"):
        for path in sorted((memory_dir / sub).glob("*.md")):
            files[f"{sub}/{path.name}"] = path.read_bytes()
    files["ROOT.md"] = (memory_dir / "ROOT.md").read_bytes()
    return files


def test_week_ids_and_thursday_rule():
    assert week_id(date(2026, 3, 12)) == "2026-W11"
    assert week_id(date(2027, 1, 1)) == "2026-W53"  # ISO year differs from the calendar year
    # 2026-03-30 (Mon) .. 2026-04-05 (Sun): Thursday is April 2nd, so the week is April's
    assert week_month(week_id(date(2026, 3, 30))) == "2026-04"
    assert week_month("2026-W11") == "2026-03"


def test_first_day_builds_the_whole_tentative_tree(memory_root, fixed_today):
    memory = make_memory(memory_root, fixed_today)
    write(memory, fixed_today, "Competitor pricing #pricing")
    report = memory.compact()
    assert set(report.built) == {
        "memory/daily/2026-03-12.md",
        "memory/weekly/2026-W11.md",
        "memory/monthly/2026-03.md",
        "memory/ROOT.md",
    }
    for relative in report.built[:-1]:
        assert node(memory_root, relative).status == "tentative"
    daily = node(memory_root, "memory/daily/2026-03-12.md")
    assert daily.meta["type"] == "daily"
    assert daily.meta["source-files"] == "[memory/2026-03-12.md]"
    assert "Competitor pricing" in daily.body  # verbatim below the threshold
    assert "pricing" in daily.topics
    weekly = node(memory_root, "memory/weekly/2026-W11.md")
    assert weekly.meta["dates"] == "2026-03-09 to 2026-03-15"
    assert node(memory_root, "memory/monthly/2026-03.md").meta["weeks"] == "2026-W11"
    root = (memory_root / "memory/ROOT.md").read_text()
    assert "## Topics Index" in root and "- pricing [project, 0d]" in root


def test_nothing_dirty_means_nothing_built(memory_root, fixed_today):
    memory = make_memory(memory_root, fixed_today)
    write(memory, fixed_today, "One")
    memory.compact()
    state_before = (memory_root / "memory/.compaction-state.json").read_bytes()
    report = memory.compact()
    assert report.built == []
    assert (memory_root / "memory/.compaction-state.json").read_bytes() == state_before


def test_lifecycle_daily_fixes_next_day_weekly_and_monthly_after_grace(memory_root):
    day = date(2026, 3, 12)
    write(make_memory(memory_root, day), day, "Start")
    make_memory(memory_root, day).compact()

    report = make_memory(memory_root, day + timedelta(days=1)).compact()
    assert "memory/daily/2026-03-12.md" in report.fixed
    assert node(memory_root, "memory/weekly/2026-W11.md").status == "tentative"

    # W11 ends Sunday 2026-03-15; fixed once more than 7 days have passed (from 2026-03-23)
    make_memory(memory_root, date(2026, 3, 22)).compact()
    assert node(memory_root, "memory/weekly/2026-W11.md").status == "tentative"
    report = make_memory(memory_root, date(2026, 3, 23)).compact()
    assert "memory/weekly/2026-W11.md" in report.fixed

    # March ends on the 31st: the monthly node fixes on April 8th, not before
    make_memory(memory_root, date(2026, 4, 7)).compact()
    assert node(memory_root, "memory/monthly/2026-03.md").status == "tentative"
    make_memory(memory_root, date(2026, 4, 8)).compact()
    assert node(memory_root, "memory/monthly/2026-03.md").status == "fixed"


def test_fixed_node_is_never_rewritten_unless_a_late_entry_reopens_it(memory_root):
    day, later = date(2026, 3, 2), date(2026, 4, 20)
    write(make_memory(memory_root, day), day, "Early")
    memory = make_memory(memory_root, later)
    memory.compact()
    daily = memory_root / "memory/daily/2026-03-02.md"
    assert parse_node(daily.read_text()).status == "fixed"
    stamp = daily.stat().st_mtime_ns
    assert memory.compact().built == []
    assert daily.stat().st_mtime_ns == stamp

    write(memory, day, "Imported late", "late decision")  # --date: reopened by the write
    assert "late decision" in daily.read_text()
    assert parse_node(daily.read_text()).status == "fixed"
    state = json.loads((memory_root / "memory/.compaction-state.json").read_text())
    assert {e["node"] for e in state["hipo"]["reopened"]} == {
        "memory/daily/2026-03-02.md",
        "memory/weekly/2026-W10.md",
        "memory/monthly/2026-03.md",
    }
    assert memory.compact().built == []  # rebuilt once, then left alone


def test_foreign_fixed_node_is_adopted_not_rewritten(memory_root):
    day = date(2026, 1, 5)
    memory = make_memory(memory_root, date(2026, 3, 1))
    write(memory, day, "Something")
    (memory_root / "memory/daily").mkdir(parents=True)
    handwritten = (
        "---\ntype: daily\nstatus: fixed\nperiod: 2026-01-05\n---\n\n## Topics\nhand, made\n"
    )
    (memory_root / "memory/daily/2026-01-05.md").write_text(handwritten)
    memory.compact()
    assert (memory_root / "memory/daily/2026-01-05.md").read_text() == handwritten
    assert "hand, made" in (memory_root / "memory/weekly/2026-W02.md").read_text()


def test_above_threshold_summarizes_below_copies(memory_root, fixed_today):
    memory = make_memory(memory_root, fixed_today, daily_threshold=20)
    for index in range(6):
        write(memory, fixed_today, f"Task {index} #ops", f"deploy v1.{index} to cluster-{index}")
    report = memory.compact()
    assert "memory/daily/2026-03-12.md" in report.summarized
    daily = node(memory_root, "memory/daily/2026-03-12.md")
    assert "## Key Decisions" in daily.body
    for index in range(6):
        assert f"v1.{index}" in daily.body  # identifiers survive the summary


def test_failing_summarizer_falls_back_to_extractive(memory_root, fixed_today):
    class Broken:
        name = "broken"

        def summarize(self, level, period, sources):
            raise RuntimeError("API down")

    memory = Memory(
        memory_root,
        config=MemoryConfig(daily_threshold=2),
        summarizer=Broken(),
        today=lambda: fixed_today,
    )
    write(memory, fixed_today, "A #x", "decided alpha-42")
    report = memory.compact()
    assert any("broken summarizer failed (API down)" in e for e in report.errors)
    assert "alpha-42" in (memory_root / "memory/daily/2026-03-12.md").read_text()


def test_binary_raw_log_is_skipped_not_fatal(memory_root, fixed_today):
    memory = make_memory(memory_root, fixed_today)
    write(memory, fixed_today, "Good day")
    (memory_root / "memory/2026-03-11.md").write_bytes(b"\x00\xff\xfe binary")
    report = memory.compact()
    assert any("2026-03-11" in e for e in report.errors)
    assert (memory_root / "memory/daily/2026-03-12.md").exists()
    assert (memory_root / "memory/2026-03-11.md").read_bytes() == b"\x00\xff\xfe binary"


def test_state_is_rebuilt_when_unreadable(memory_root, fixed_today):
    memory = make_memory(memory_root, fixed_today)
    write(memory, fixed_today, "One")
    memory.compact()
    before = derived_files(memory_root)
    (memory_root / "memory/.compaction-state.json").write_text("{not json")
    memory.compact()
    assert derived_files(memory_root) == before
    json.loads((memory_root / "memory/.compaction-state.json").read_text())


days_strategy = st.lists(st.integers(min_value=0, max_value=70), min_size=1, max_size=12)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    offsets=days_strategy,
    split=st.integers(min_value=0, max_value=12),
    gap=st.integers(min_value=0, max_value=40),
)
def test_incremental_equals_from_scratch(offsets, split, gap):
    """Writing in two sessions with compactions between gives the same tree as one scratch build."""
    start = date(2026, 1, 1)
    entries = [(start + timedelta(days=o), f"Entry {i} #t{o % 3}") for i, o in enumerate(offsets)]
    first, second = entries[:split], entries[split:]
    last_day = max(d for d, _ in entries)
    middle = min((d for d, _ in second), default=last_day)
    end = last_day + timedelta(days=gap)
    with tempfile.TemporaryDirectory() as tmp:
        incremental = Path(tmp) / "inc"
        scratch = Path(tmp) / "scratch"
        # the first session's today: no earlier than any note it writes (a note dated on a day
        # to come is refused), so later sessions may bring late entries into closed periods
        memory = make_memory(incremental, max([middle, *(day for day, _ in first)]))
        for day, title in first:
            write(memory, day, title)
        memory.compact()
        memory = make_memory(incremental, end)
        for day, title in second:
            write(memory, day, title)
        memory.compact()
        assert memory.compact().built == []

        shutil.copytree(
            incremental / "memory",
            scratch / "memory",
            ignore=shutil.ignore_patterns(
                "daily", "weekly", "monthly", "ROOT.md", ".compaction-state.json", ".index"
            ),
        )
        make_memory(scratch, end).compact()
        assert derived_files(incremental) == derived_files(scratch)

        # structural invariants
        for relative, data in derived_files(incremental).items():
            meta = parse_node(data.decode()).meta
            if relative == "ROOT.md":
                continue
            level, period = relative.split("/")[0], relative.split("/")[1][:-3]
            if level == "daily":
                assert meta["status"] == (
                    "fixed" if end > date.fromisoformat(period) else "tentative"
                )
            if level == "monthly":
                assert all(week_month(w.strip()) == period for w in meta["weeks"].split(","))


def test_concurrent_compactions_build_each_node_once(memory_root, fixed_today):
    """Two processes compacting at once: one builds, the other waits and finds nothing dirty."""
    import subprocess
    import sys

    memory = make_memory(memory_root, fixed_today)
    for index in range(5):
        write(memory, fixed_today - timedelta(days=index), f"Entry {index} #t")
    script = (
        "import sys, json; from datetime import date; from hipo_jupyter.memory import Memory;"
        "m = Memory(sys.argv[1], today=lambda: date(2026, 3, 12));"
        "print(json.dumps(m.compact().built))"
    )
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(memory_root)],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(2)
    ]
    built = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert sorted(len(b) for b in built)[0] == 0  # the second pass found the tree up to date
    assert len(built[0]) + len(built[1]) == len(set(built[0]) | set(built[1]))
