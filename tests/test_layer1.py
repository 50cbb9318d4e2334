"""Layer 1: the always-loaded files read under their budgets, and the working-file templates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hipo_jupyter.memory.config import MemoryConfig
from hipo_jupyter.memory.errors import MemoryRootError
from hipo_jupyter.memory.tree.layer1 import (
    LAYER1_FILES,
    TEMPLATES,
    Layer1,
    Layer1Part,
    assemble_layer1,
    write_templates,
)
from hipo_jupyter.memory.tree.tokens import count_tokens

BUDGETS = {"ROOT": 3000, "SCRATCHPAD": 1500, "WORKING": 1000, "TASK-QUEUE": 500}


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_empty_root(memory_root: Path) -> None:
    layer1 = assemble_layer1(memory_root, BUDGETS)
    assert [part.name for part in layer1.parts] == list(LAYER1_FILES)
    assert [part.path for part in layer1.parts] == list(LAYER1_FILES.values())
    for part in layer1.parts:
        assert not part.exists
        assert part.tokens == 0
        assert part.text == ""
        assert not part.truncated
        assert part.fill == 0.0
        assert part.budget == BUDGETS[part.name]
    assert layer1.text == ""
    assert layer1.total_tokens == 0
    assert layer1.total_budget == 6000
    assert not layer1.over_budget


def test_files_within_budget_go_in_whole_in_order(memory_root: Path) -> None:
    write(memory_root, "TASK-QUEUE.md", "# Task Queue\n- ship the sidebar\n")
    write(memory_root, "memory/ROOT.md", "## Topics Index\n- pricing [project, 3d]: starter-tier\n")
    write(memory_root, "WORKING.md", "   \n\n")  # whitespace only: nothing to say
    layer1 = assemble_layer1(memory_root, BUDGETS)

    root_part, scratch, working, queue = layer1.parts
    assert root_part.exists and queue.exists and working.exists and not scratch.exists
    assert root_part.text == "## Topics Index\n- pricing [project, 3d]: starter-tier\n"
    assert root_part.tokens == count_tokens(root_part.text)
    assert not layer1.over_budget

    assert layer1.text == (
        "# memory/ROOT.md\n\n## Topics Index\n- pricing [project, 3d]: starter-tier\n\n"
        "# TASK-QUEUE.md\n\n# Task Queue\n- ship the sidebar\n"
    )
    assert layer1.total_tokens == count_tokens(layer1.text)
    assert layer1.total_tokens >= root_part.tokens + queue.tokens


def test_oversized_files_are_truncated_and_flagged(memory_root: Path) -> None:
    scratch_lines = [
        f"- note {i}: measured latency of the recall query on 20k documents\n" for i in range(400)
    ]
    write(memory_root, "SCRATCHPAD.md", "".join(scratch_lines))
    write(memory_root, "WORKING.md", "# Active Tasks\n- one small task\n")
    budgets = {**BUDGETS, "SCRATCHPAD": 200}
    layer1 = assemble_layer1(memory_root, budgets)

    scratch = layer1.parts[1]
    assert scratch.truncated
    assert scratch.tokens == count_tokens("".join(scratch_lines))
    assert scratch.tokens > 200
    assert scratch.fill == scratch.tokens / 200 > 1.0
    assert count_tokens(scratch.text) <= 200
    assert scratch.text.startswith(scratch_lines[0])
    assert "cut to its 200-token budget" in scratch.text
    assert f"{scratch.tokens} tokens" in scratch.text
    # Cut at a line boundary: every kept note line is whole.
    kept_notes = [line for line in scratch.text.splitlines(keepends=True) if line.startswith("- ")]
    assert kept_notes == scratch_lines[: len(kept_notes)]
    assert len(kept_notes) > 5

    working = layer1.parts[2]
    assert not working.truncated
    assert layer1.over_budget
    assert layer1.total_tokens <= layer1.total_budget
    assert "note 399" not in layer1.text


def test_tiny_budget_never_overflows(memory_root: Path) -> None:
    write(memory_root, "WORKING.md", "word " * 300)
    layer1 = assemble_layer1(memory_root, {**BUDGETS, "WORKING": 3})
    working = layer1.parts[2]
    assert working.truncated
    assert 0 < count_tokens(working.text) <= 3  # too small for the note, still some text


def test_zero_budget(memory_root: Path) -> None:
    write(memory_root, "WORKING.md", "something")
    working = assemble_layer1(memory_root, {**BUDGETS, "WORKING": 0}).parts[2]
    assert working.truncated and working.text == "" and working.fill == float("inf")


def test_missing_budget_uses_config_default(memory_root: Path) -> None:
    layer1 = assemble_layer1(memory_root, {"ROOT": 10})
    defaults = MemoryConfig().layer1_budgets
    assert [part.budget for part in layer1.parts] == [10] + [
        defaults[name] for name in ("SCRATCHPAD", "WORKING", "TASK-QUEUE")
    ]


def test_damaged_file_does_not_break_the_prompt(memory_root: Path) -> None:
    (memory_root / "SCRATCHPAD.md").write_bytes(b"# SCRATCHPAD\nok line\n\xff\xfe broken \xc3\n")
    layer1 = assemble_layer1(memory_root, BUDGETS)
    scratch = layer1.parts[1]
    assert scratch.exists
    assert "ok line" in scratch.text
    assert "\ufffd" in scratch.text
    assert "# SCRATCHPAD.md" in layer1.text


def test_a_folder_in_place_of_a_file_is_skipped(memory_root: Path) -> None:
    (memory_root / "WORKING.md").mkdir()
    working = assemble_layer1(memory_root, BUDGETS).parts[2]
    assert not working.exists and working.text == ""


def test_parts_are_frozen() -> None:
    part = Layer1Part("ROOT", "memory/ROOT.md", 5, 10, "x", False, True)
    layer1 = Layer1(parts=(part,))
    with pytest.raises(AttributeError):
        part.tokens = 1  # type: ignore[misc]
    assert part.fill == 0.5
    assert layer1.total_budget == 10


def test_templates_created_once_never_overwritten(memory_root: Path) -> None:
    created = write_templates(memory_root)
    assert created == ["SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md"]
    for name in ("SCRATCHPAD", "WORKING", "TASK-QUEUE"):
        path = memory_root / LAYER1_FILES[name]
        assert path.read_text(encoding="utf-8") == TEMPLATES[name]

    (memory_root / "WORKING.md").write_text("# Active Tasks\n- mine, keep it\n", encoding="utf-8")
    assert write_templates(memory_root) == []
    assert (memory_root / "WORKING.md").read_text(encoding="utf-8") == (
        "# Active Tasks\n- mine, keep it\n"
    )
    assert not (memory_root / "memory" / "ROOT.md").exists()  # the chain writes ROOT, not us
    assert sorted(os.listdir(memory_root)) == ["SCRATCHPAD.md", "TASK-QUEUE.md", "WORKING.md"]


def test_templates_fill_only_the_gaps(memory_root: Path) -> None:
    write(memory_root, "TASK-QUEUE.md", "")  # empty, but the user's: left alone
    assert write_templates(memory_root) == ["SCRATCHPAD.md", "WORKING.md"]
    assert (memory_root / "TASK-QUEUE.md").read_text(encoding="utf-8") == ""


def test_templates_refuse_a_missing_root(tmp_path: Path) -> None:
    with pytest.raises(MemoryRootError):
        write_templates(tmp_path / "absent")


def test_untouched_templates_are_left_out_and_count_nothing(memory_root: Path) -> None:
    """A working file still as `init` made it, HTML comments and all, says nothing: it is not
    sent and counts 0 tokens; one line of the user's and the file goes whole (issue 53)."""
    write_templates(memory_root)
    layer1 = assemble_layer1(memory_root, MemoryConfig().layer1_budgets)
    for part in layer1.parts[1:]:
        assert part.exists and not part.truncated
        assert part.tokens == 0 and part.text == ""
    assert layer1.text == "" and layer1.total_tokens == 0
    path = memory_root / "TASK-QUEUE.md"
    path.write_text(TEMPLATES["TASK-QUEUE"] + "\n\n", encoding="utf-8")  # a save added blanks
    assert assemble_layer1(memory_root, BUDGETS).total_tokens == 0
    path.write_text(TEMPLATES["TASK-QUEUE"].replace("## Queued", "## Queued\n- ship it"))
    layer1 = assemble_layer1(memory_root, BUDGETS)
    assert "# TASK-QUEUE.md\n\n# Task Queue\n\n## Queued\n- ship it" in layer1.text
    assert "<!-- task description" in layer1.text  # the user's file, comments and all
    assert 0 < layer1.parts[3].tokens < 100
    assert "SCRATCHPAD" not in layer1.text and "WORKING" not in layer1.text
