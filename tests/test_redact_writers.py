"""Issue 50, item 4: each writer says in its one-line report what redaction replaced, the count
per kind (`%%remember`, `hipo remember`, `hipo import`, MCP `remember`, the write-back of a
notebook's own calls), and what it stored holds the markers, not the secrets. Every idiom and
format of tests/test_redact_idioms.py goes through every writer in tests/test_secrets.py.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path

import anyio
import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.ipython import current

PASSWORD = "Tr0ub4dor&3x" + "Qz"
KAGGLE = "9f8e7d6c5b4a3928" + "1706f5e4d3c2b1a0"
VAULT = "hvs." + "CAESI" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY" * 2
PASTE = (
    f'os.environ["DB_PASSWORD"] = "{PASSWORD}"\n'
    f'{{"username": "dana", "key": "{KAGGLE}"}}\n'
    f"vault login {VAULT}\n"
)
REPORTED = "; redacted 1 password, 1 key, 1 vault-token"


def raw_logs(root: Path) -> str:
    return "\n".join(p.read_text() for p in sorted((root / "memory").glob("2026-*.md")))


def assert_stored_redacted(root: Path) -> None:
    stored = raw_logs(root)
    assert PASSWORD not in stored and KAGGLE not in stored and VAULT not in stored
    for kind in ("password", "key", "vault-token"):
        assert f"[REDACTED:{kind}]" in stored


def test_remember_magic_reports_what_it_redacted(claude_shell, memory_root, capsys):
    run(claude_shell, f"%%remember Wired the warehouse\n{PASTE}")
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("remembered 'Wired the warehouse'") and line.endswith(REPORTED)
    assert_stored_redacted(memory_root)


def test_remember_magic_says_nothing_of_redaction_when_there_was_none(claude_shell, capsys):
    run(claude_shell, "%%remember Plain\n- outcome: nothing secret here\n")
    assert "redacted" not in capsys.readouterr().out


def test_cli_remember_reports_what_it_redacted(memory_root, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(PASTE))
    assert cli.main(["--root", str(memory_root), "remember", "Pasted from the terminal"]) == 0
    assert capsys.readouterr().out.strip().endswith(REPORTED)
    assert_stored_redacted(memory_root)


def test_cli_import_reports_what_it_redacted_across_turns(memory_root, tmp_path, capsys):
    turns = [
        {"speaker": "ops", "text": line, "time": f"2026-03-0{n + 1}"}
        for n, line in enumerate(PASTE.splitlines())
    ]
    transcript = tmp_path / "ops-chat.json"
    transcript.write_text(json.dumps(turns))
    assert cli.main(["--root", str(memory_root), "import", str(transcript)]) == 0
    first = capsys.readouterr().out.strip().splitlines()[0]
    assert first.startswith("Imported 3 turns") and first.endswith(REPORTED + ".")
    assert_stored_redacted(memory_root)


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp extra")
def test_mcp_remember_reports_what_it_redacted(memory_root):
    from test_mcp import call, session

    async def remember() -> str:
        async with session(memory_root) as client:
            text, error = await call(client, "remember", title="From an agent", body=PASTE)
            assert not error, text
            return text

    assert anyio.run(remember).endswith(REPORTED)
    assert_stored_redacted(memory_root)


CALL = (
    "import anthropic\n"
    "client = anthropic.Anthropic()\n"
    "reply = client.messages.create(model='claude-sonnet-5-5', max_tokens=100,\n"
    "    messages=[{{'role': 'user', 'content': {content!r}}}])\n"
)


def test_write_back_reports_what_it_redacted(claude_shell, api: FakeMessagesAPI, memory_root: Path):
    api.replies.append("Connected; the warehouse answers.")
    run(claude_shell, CALL.format(content=f"Use these to connect:\n{PASTE}"))
    log = current(claude_shell).log
    line = next(entry for entry in reversed(log) if "auto-checkpoint" in entry)
    # the checkpoint keeps the prompt's first lines (a digest): what it kept is what it says
    assert line.endswith("; redacted 1 password, 1 key")
    stored = raw_logs(memory_root)
    assert PASSWORD not in stored and KAGGLE not in stored and VAULT not in stored
    assert "[REDACTED:password]" in stored and "[REDACTED:key]" in stored
