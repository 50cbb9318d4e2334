"""`hipo import` takes the chat formats people have (issue 44, item 6): OpenAI and Anthropic
message arrays with or without times, `{"messages": [...]}` wrappers and jupyter-ai `.chat`
files; a file it cannot read is one line naming what it expected. The real `hipo` command."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_cli import TODAY, run_hipo

from hipo_jupyter.memory.disk.checkpoint import parse_log

OPENAI = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Which tier do we cut for the spring launch?"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "{\"tiers\": 3}"},
    {"role": "assistant", "content": "Cut the starter tier by 15 percent."},
]
ANTHROPIC = {
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Where is the churn notebook?"}],
         "time": "2026-03-02T10:00:00"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {}},
            {"type": "text", "text": "It is analysis/churn.ipynb."},
        ]},
    ]
}  # fmt: skip
JUPYTER_AI_CHAT = {
    "messages": [
        {"type": "msg", "id": "m1", "sender": "u-1", "time": 1772877600.5,
         "body": "@Jupyternaut what does the retention cohort show?", "raw_time": False},
        {"type": "msg", "id": "m2", "sender": "jupyter-ai-personas::jupyter_ai::Jupyternaut",
         "time": 1772877605.0, "body": "Retention drops after week 6 for the trial cohort."},
        {"type": "msg", "id": "m3", "sender": "u-1", "time": 1772877700.0, "body": "",
         "deleted": True},
    ],
    "users": {
        "u-1": {"username": "u-1", "name": "Ana", "display_name": "Ana Lima"},
        "jupyter-ai-personas::jupyter_ai::Jupyternaut": {
            "username": "jupyter-ai-personas::jupyter_ai::Jupyternaut", "name": "Jupyternaut",
            "display_name": "Jupyternaut", "bot": True,
        },
    },
    "metadata": {},
    "attachments": {},
}  # fmt: skip


def log_of(root: Path, day: str) -> list:
    return parse_log((root / "memory" / f"{day}.md").read_text(), date=day)


def test_an_openai_array_without_times_takes_the_files_time(memory_root: Path) -> None:
    chat = memory_root.parent / "openai.json"
    chat.write_text(json.dumps(OPENAI))
    os.utime(chat, (1772877600, 1772877600))  # 2026-03-07 in any time zone near UTC
    done = run_hipo(memory_root, "import", str(chat))
    assert done.returncode == 0, done.stderr
    assert "3 turns of openai.json had no time: dated 2026-03-07, the file's time" in done.stdout
    # the system message and the tool call are left out and counted (issue 48, item 6)
    assert "Left out: 1 system message, 1 tool call." in done.stdout
    (exchange,) = log_of(memory_root, "2026-03-07")
    assert "Which tier do we cut" in exchange.field("request")
    assert exchange.title.startswith("Which tier do we cut")  # never "user" (issue 53)
    assert "starter tier by 15 percent" in exchange.field("outcome")
    assert '[tool result]\n{"tiers": 3}' in exchange.field("outcome")  # its figures kept
    assert run_hipo(memory_root, "check").returncode == 0  # an import leaves check passing


def test_anthropic_blocks_and_a_jupyter_ai_chat(memory_root: Path) -> None:
    anthropic = memory_root.parent / "claude.json"
    anthropic.write_text(json.dumps(ANTHROPIC))
    chat = memory_root.parent / "retention.chat"
    chat.write_text(json.dumps(JUPYTER_AI_CHAT))
    for source in (anthropic, chat):
        done = run_hipo(memory_root, "import", str(source))
        assert done.returncode == 0, done.stderr
        assert "had no time" not in done.stdout
    (exchange,) = log_of(memory_root, "2026-03-02")
    assert exchange.field("outcome") == "It is analysis/churn.ipynb."
    (turn,) = log_of(memory_root, "2026-03-07")  # Ana and Jupyternaut's reply: one exchange
    assert "retention cohort" in turn.field("request") and "week 6" in turn.field("outcome")
    hits = run_hipo(memory_root, "recall", "retention week 6")
    assert "week 6" in hits.stdout


def test_a_file_it_cannot_read_is_one_line_naming_what_it_expected(memory_root: Path) -> None:
    for name, content in [
        ("numbers.json", "{\"rows\": [1, 2, 3]}"),
        ("no-role.json", "[{\"content\": \"hello\"}]"),
        ("bad-content.json", "[{\"role\": \"user\", \"content\": 42}]"),
    ]:
        source = memory_root.parent / name
        source.write_text(content)
        done = run_hipo(memory_root, "import", str(source))
        assert done.returncode == 2, done.stdout
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("hipo: error: ") and name in line and "expected" in line
    assert not (memory_root / "memory").exists() or not list((memory_root / "memory").glob("2*.md"))
    assert TODAY  # the pinned day of the CLI runs
