"""`hipo check` over a memory folder: raw logs parse, compaction is fresh, Layer 1 is within
budget. Each rule fails with a line that says what is wrong."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.views.check import CheckResult, check_folder, results_text

TODAY = date(2026, 3, 12)


def memory_at(root: Path) -> Memory:
    return Memory(root, today=lambda: TODAY)


def by_rule(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {result.rule: result for result in results}


def test_a_compacted_folder_passes_every_rule(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.remember("Pricing", "- decisions: cut the starter tier by 15%", on=date(2026, 3, 10))
    memory.compact()
    results = check_folder(memory)
    assert [r.rule for r in results] == [
        "raw logs parse",
        "compaction state is fresh",
        "Layer 1 is within budget",
        "forgotten checkpoints leave no trace",
        "forgets are obeyed by every copy",
    ]
    assert all(r.passed for r in results), results
    assert by_rule(results)["raw logs parse"].detail == "1 day, 1 checkpoints"
    assert results[0].line() == "pass  raw logs parse: 1 day, 1 checkpoints"


def test_an_uncompacted_entry_fails_freshness(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.compact()  # then another tool writes a closed day's log: no pass vouches for it
    (memory_root / "memory" / "2026-03-11.md").write_text("## Late note\n- outcome: found it\n")
    fresh = by_rule(check_folder(memory))["compaction state is fresh"]
    assert not fresh.passed and "to rebuild: run compact" in fresh.detail
    assert fresh.line().startswith("FAIL  compaction state is fresh: ")


def test_writes_since_the_last_pass_leave_tentative_nodes_behind_and_pass(
    memory_root: Path,
) -> None:
    memory = memory_at(memory_root)
    memory.compact()
    memory.remember("Today", "- outcome: the tentative day, week and month wait for a pass")
    fresh = by_rule(check_folder(memory))["compaction state is fresh"]
    assert fresh.passed and fresh.detail.startswith("3 tentative nodes behind the latest writes")
    memory.remember("Late note", "- outcome: found the bug", on=date(2026, 3, 2))  # folded now
    assert (memory_root / "memory" / "daily" / "2026-03-02.md").exists()
    assert all(result.passed for result in check_folder(memory))


def test_an_unreadable_raw_log_fails_and_is_named(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.remember("Fine", "- outcome: ok", on=date(2026, 3, 10))
    (memory_root / "memory" / "2026-03-11.md").write_bytes(b"## Broken\n\xff\xfe not utf-8\n")
    raw = by_rule(check_folder(memory))["raw logs parse"]
    assert not raw.passed and "memory/2026-03-11.md" in raw.detail and "UTF-8" in raw.detail


def test_a_layer1_part_over_budget_fails(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.init()
    (memory_root / "SCRATCHPAD.md").write_text("# SCRATCHPAD\n" + "note about pricing\n" * 2000)
    budget = by_rule(check_folder(memory))["Layer 1 is within budget"]
    assert not budget.passed and budget.detail.startswith("over budget: SCRATCHPAD ")


def test_results_read_as_lines_and_a_verdict() -> None:
    results = [CheckResult("a rule", True, "fine"), CheckResult("another", False, "broken")]
    assert results_text(results) == "pass  a rule: fine\nFAIL  another: broken\n1 of 2 rules fail"
    assert results_text(results[:1]).endswith("\nall rules pass")


def test_hipo_check_exit_codes(memory_root: Path, monkeypatch, capsys) -> None:
    from hipo_jupyter.cli import commands as cli

    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    memory = memory_at(memory_root)
    memory.init()
    (memory_root / "memory" / "2026-03-10.md").write_text("## Pricing\n- decisions: cut\n")
    assert cli.main(["--root", str(memory_root), "check"]) == 1  # not compacted yet
    assert "FAIL  compaction state is fresh" in capsys.readouterr().out
    memory.compact()
    assert cli.main(["--root", str(memory_root), "check"]) == 0
