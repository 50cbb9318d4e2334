"""Issue 36, item 6, with real processes: `hipo check` passes right after `hipo remember`, and
each notebook keeps its own `%%ask` conversation when run headless (nbclient names no notebook
to the kernel: no JPY_SESSION_NAME, no `__session__`)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from claude_helpers import SDK_CREDENTIAL_VARIABLES, TODAY, FakeMessagesAPI, serve
from test_mcp import run_hipo

from hipo_jupyter.cli.demo import execute_notebook


def test_hipo_check_passes_right_after_hipo_remember(memory_root: Path) -> None:
    for number, title in enumerate(("Launch date #launch", "Churn model [project] #churn")):
        written = run_hipo(memory_root, "remember", title, stdin=f"- decisions: step {number}")
        assert written.returncode == 0, written.stderr
        checked = run_hipo(memory_root, "check")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "pass  compaction state is fresh" in checked.stdout
        assert checked.stdout.strip().endswith("all rules pass")


def ask_notebook(path: Path, questions: list[str]) -> None:
    cells = ["%load_ext hipo", *(f"%%ask\n{question}" for question in questions)]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(notebook, path)


def user_turns(conversation: Path) -> list[str]:
    data = json.loads(conversation.read_text("utf-8"))
    text = json.dumps(data)
    return [q for q in ("pricing", "hiring", "churn", "budget") if q in text]


def test_two_notebooks_run_headless_keep_their_own_conversations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "pricing.ipynb", tmp_path / "hiring.ipynb"
    ask_notebook(first, ["What about pricing?", "And churn?"])
    ask_notebook(second, ["What about hiring?", "And the budget?"])
    api = FakeMessagesAPI()
    with serve(api) as url:
        for name in (*SDK_CREDENTIAL_VARIABLES, "JPY_SESSION_NAME"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        execute_notebook(first, timeout=180, today=TODAY)
        execute_notebook(second, timeout=180, today=TODAY)
    # Each notebook's follow-up carried its own first exchange, and nothing of the other's
    asked = [json.dumps(body["messages"]) for body in api.message_requests()]
    assert len(asked) == 4
    assert "pricing" in asked[1] and "hiring" not in asked[1]
    assert "hiring" in asked[3] and "pricing" not in asked[3] and "churn" not in asked[3]
    kept = (tmp_path / "memory" / ".conversations").glob("*.json")
    conversations = sorted(path for path in kept if not path.name.endswith(".sent.json"))
    sent = sorted(path.name for path in kept_sent(tmp_path))
    assert len(sent) == 2 and not any(name.startswith("console") for name in sent), sent
    assert len(conversations) == 2, conversations
    assert sorted(user_turns(path) for path in conversations) == [
        ["hiring", "budget"],
        ["pricing", "churn"],
    ]


def kept_sent(root: Path) -> list[Path]:
    """What each notebook's last %%ask sent (the sidebar's record), one per conversation."""
    return list((root / "memory" / ".conversations").glob("*.sent.json"))
