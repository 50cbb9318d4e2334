"""Recall without asking: `%%ask` recalls memory with the cell's own question by default.

Driven through a real shell against the fake Messages API (a real anthropic client over HTTP):
the request of a plain `%%ask` carries a relevant memory written 90 days ago (out of Layer 1's
Active Context, so only recall brings it), fenced as quoted data, and the context-status note
says what recall took; `--recall QUERY` replaces the query; `--no-recall` and
`Hipo.auto_recall = False` send none; `Hipo.auto_recall_sdk` does the same for the SDK calls
made in the kernel (off by default).
"""

from __future__ import annotations

import re

import anthropic
import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from IPython.core.error import UsageError

from hipo_jupyter import llm

OLD_DAY = "2025-12-12"  # 90 days before the tests' today, 2026-03-12
DIET = (
    f"%%remember Diet [user] #food --date {OLD_DAY}\n"
    "- decisions: I am vegetarian, so no meat when I cook\n"
)


def recalled_blocks(body: dict) -> list[str]:
    return [b["text"] for b in body["system"] if llm.RECALL_PREAMBLE in b["text"]]


def test_ask_recalls_with_the_question_itself(claude_shell, api: FakeMessagesAPI) -> None:
    run(claude_shell, DIET)
    run(claude_shell, "%%ask\nWhat should I cook tonight?")
    (body,) = api.message_requests()
    (recalled,) = recalled_blocks(body)
    assert llm.RECALL_TAG in recalled and "What should I cook tonight?" in recalled  # the query
    assert "I am vegetarian" in recalled and OLD_DAY in recalled
    layer1 = body["system"][0]["text"]
    assert "I am vegetarian" not in layer1  # 90 days old: only recall brought it
    status = next(b["text"] for b in body["system"] if b["text"].startswith("[context status]"))
    tokens = int(re.search(r"Recalled memory: ([\d,]+) tokens \(budget 2,000\)\.", status)[1])
    assert 0 < tokens <= 2000
    assert body["system"].index(next(b for b in body["system"] if b["text"] == recalled)) > 0


def test_recall_query_no_recall_and_the_setting(claude_shell, api: FakeMessagesAPI) -> None:
    run(claude_shell, DIET)
    run(claude_shell, "%%ask --recall vegetarian meat\nAnything to keep in mind?")
    run(claude_shell, "%%ask --no-recall\nWhat should I cook tonight?")
    run(claude_shell, "%config Hipo.auto_recall = False")
    run(claude_shell, "%%ask\nWhat should I cook tonight?")
    run(claude_shell, "%%ask --recall cook\nAnd tomorrow?")  # asked for: recalled all the same
    replaced, no_recall, setting_off, asked_for = api.message_requests()
    (recalled,) = recalled_blocks(replaced)
    assert 'query="vegetarian meat"' in recalled and "I am vegetarian" in recalled
    assert recalled_blocks(no_recall) == [] and recalled_blocks(setting_off) == []
    assert all("Recalled memory" not in b["text"] for b in no_recall["system"])
    assert len(recalled_blocks(asked_for)) == 1
    with pytest.raises(UsageError, match="choose one"):
        claude_shell.run_cell("%%ask --recall cook --no-recall\nWhich?")
    assert len(api.message_requests()) == 4  # nothing sent


def test_sdk_calls_recall_only_when_asked(claude_shell, api: FakeMessagesAPI) -> None:
    run(claude_shell, DIET)
    question = [{"role": "user", "content": "What should I cook tonight?"}]
    client = anthropic.Anthropic()
    client.messages.create(model="claude-sonnet-5-5", max_tokens=10, messages=question)
    run(claude_shell, "%config Hipo.auto_recall_sdk = True")
    client.messages.create(
        model="claude-sonnet-5-5", max_tokens=10, system="Be brief.", messages=question
    )
    plain, recalling = api.message_requests()
    assert recalled_blocks(plain) == []
    (recalled,) = recalled_blocks(recalling)
    assert "I am vegetarian" in recalled
    texts = [b["text"] for b in recalling["system"]]
    assert texts.index("Be brief.") < texts.index(recalled)  # after the caller's (cached) text
