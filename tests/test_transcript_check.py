"""`hipo check --transcript`: a Claude Code session loaded the memory before its first real
answer and wrote a checkpoint before it ended; `--strict` fails a read-after-respond."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory.intake.transcript_check import check_transcript

LONG = "Here is the plan for the migration: " + "we move the orders table first " * 4


def user(text: str, n: int) -> dict:
    return {"type": "user", "uuid": f"u{n}", "timestamp": "2026-03-12T10:00:00Z",
            "message": {"role": "user", "content": text}}  # fmt: skip


def assistant(n: int, *blocks: dict) -> dict:
    return {"type": "assistant", "uuid": f"a{n}", "timestamp": "2026-03-12T10:00:01Z",
            "message": {"role": "assistant", "content": list(blocks)}}  # fmt: skip


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool(name: str, **given: str) -> dict:
    return {"type": "tool_use", "id": "t", "name": name, "input": given}


READ_ROOT = tool("Read", file_path="/work/notes/memory/ROOT.md")
WRITE_LOG = tool("Edit", file_path="/work/notes/memory/2026-03-12.md")


def transcript(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "session.jsonl"
    lines = [json.dumps({"type": "summary", "summary": "Migration"})]
    path.write_text("\n".join(lines + [json.dumps(r) for r in records]) + "\n")
    return path


def hipo_check(path: Path, capsys, *extra: str) -> tuple[int, str]:
    code = cli.main(["check", "--transcript", str(path), *extra])
    return code, capsys.readouterr().out


def test_a_session_that_reads_root_first_and_checkpoints_passes(tmp_path, capsys) -> None:
    path = transcript(
        tmp_path,
        user("How do we migrate the orders table?", 1),
        assistant(2, text("Let me check my memory."), READ_ROOT),
        assistant(3, text(LONG)),
        assistant(4, WRITE_LOG),
    )
    code, out = hipo_check(path, capsys, "--strict")
    assert code == 0
    assert "pass  memory was loaded before the first answer: Read /work/notes/memory/ROOT.md " \
           "at line 3, first answer at line 4" in out  # fmt: skip
    assert "pass  a checkpoint was written before the session ended: 1 checkpoint" in out
    assert out.rstrip().endswith("all rules pass")


def test_read_after_respond_warns_and_fails_with_strict(tmp_path, capsys) -> None:
    path = transcript(
        tmp_path,
        user("How do we migrate?", 1),
        assistant(2, text(LONG)),
        assistant(3, tool("mcp__hipo__recall", query="orders migration")),
        assistant(4, tool("Bash", command="hipo remember 'Migration plan' < notes.md")),
    )
    code, out = hipo_check(path, capsys)
    assert code == 0 and "pass  memory was loaded before the first answer: warning: read " \
                         "after respond: first answer at line 3" in out  # fmt: skip
    code, out = hipo_check(path, capsys, "--strict")
    assert code == 1
    assert "FAIL  memory was loaded before the first answer: read after respond" in out


def test_layer1_in_the_context_counts_and_a_missing_checkpoint_fails(tmp_path, capsys) -> None:
    path = transcript(
        tmp_path,
        user("# memory/ROOT.md\n\n## Topics Index\n- orders [project]", 1),
        assistant(2, text(LONG)),
    )
    code, out = hipo_check(path, capsys, "--strict")
    assert code == 1
    assert "pass  memory was loaded before the first answer: Layer 1 in the context" in out
    assert "FAIL  a checkpoint was written before the session ended: no write" in out
    assert out.rstrip().endswith("1 of 2 rules fail")


def test_no_memory_at_all_fails_both(tmp_path) -> None:
    path = transcript(tmp_path, user("Hi", 1), assistant(2, text(LONG)))
    assert [result.passed for result in check_transcript(path)] == [False, False]


def test_a_broken_transcript_is_one_line_exit_2(tmp_path, capsys) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"type": "user"}\n{"type": "assis')
    assert cli.main(["check", "--transcript", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cut.jsonl line 2: not a JSON record" in err
    assert cli.main(["check", "--transcript", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert cli.main(["check", "--strict"]) == 2


@pytest.mark.parametrize("short", ["Let me look.", "Checking memory first, one moment."])
def test_a_short_preamble_is_not_an_answer(tmp_path, short: str) -> None:
    path = transcript(tmp_path, user("Q", 1), assistant(2, text(short)), assistant(3, READ_ROOT),
                      assistant(4, text(LONG)), assistant(5, WRITE_LOG))  # fmt: skip
    assert all(result.passed for result in check_transcript(path, strict=True))
