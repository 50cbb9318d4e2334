"""Errors a user will meet in %%ask: no key, 401, 429, 529, timeouts. Each ends in one line
(after the SDK's retries where the API allows them); the conversation is intact and nothing
already written is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    TIMEOUT,
    TODAY,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    isolate_credentials,
    run,
    served_fixture,
)
from IPython.core.error import UsageError

from hipo_jupyter import llm


def conversation_file(memory_root: Path) -> Path:
    return memory_root / "memory" / ".conversations" / "console.json"


@pytest.fixture
def started(claude_shell, memory_root: Path, capsys):
    """One remembered note and one good exchange: what a failure must not lose."""
    run(claude_shell, "%%remember Pricing plan #pricing\n- decisions: cut the starter tier by 15%")
    run(claude_shell, "%%ask\nWhat did we decide?")
    capsys.readouterr()
    raw = (memory_root / "memory" / f"{TODAY}.md").read_text()
    return claude_shell, raw, conversation_file(memory_root).read_text()


def failing_ask(shell, capsys) -> str:
    with pytest.raises(UsageError) as raised:
        run(shell, "%%ask\nAnd what next?")
    shown = capsys.readouterr()
    assert "Traceback" not in shown.out + shown.err
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_no_api_key_says_how_to_set_it(
    claude_shell, api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    isolate_credentials(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no credentials profile on disk either
    message = failing_ask(claude_shell, capsys)
    assert message == llm.NO_KEY_MESSAGE
    assert "ANTHROPIC_API_KEY" in message and "%env" in message
    assert api.requests == []  # nothing was sent


@pytest.mark.parametrize(
    ("failures", "requests", "expected"),
    [
        ([401], 1, "Claude API: the API key was rejected (401): check ANTHROPIC_API_KEY"),
        ([429, 429], 2, "Claude API: rate limited (429) after 1 retry: wait a minute"),
        ([529, 529], 2, "Claude API: overloaded (529) after 1 retry: try again in a little while"),
        ([TIMEOUT, TIMEOUT], 2, "Claude API: the request timed out after 1 retry"),
    ],
)
def test_api_errors_end_in_one_line_and_lose_nothing(
    started, api: FakeMessagesAPI, memory_root: Path, capsys, failures, requests, expected
) -> None:
    shell, raw_before, conversation_before = started
    shell.run_cell("%config Hipo.timeout = 0.5")
    api.timeout_seconds = 1.5
    sent_before = len(api.requests)
    api.failures.extend(failures)

    message = failing_ask(shell, capsys)
    assert message.startswith(expected) and message.endswith("(the conversation is unchanged)")
    assert len(api.requests) - sent_before == requests  # the first try and the SDK's retries
    assert conversation_file(memory_root).read_text() == conversation_before
    assert (memory_root / "memory" / f"{TODAY}.md").read_text() == raw_before  # no half write

    run(shell, "%%ask\nAnd what next?")  # the next try carries on the same conversation
    body = api.message_requests()[-1]
    assert [m["content"] for m in body["messages"]][::2] == [
        "What did we decide?",
        "And what next?",
    ]


def test_a_recovered_retry_is_invisible(started, api: FakeMessagesAPI, capsys) -> None:
    shell, _, _ = started
    api.failures.append(529)
    run(shell, "%%ask\nAnd what next?")
    out = capsys.readouterr().out
    assert "Reply 3: you asked about And what next?" in out and "tokens: input" in out


def test_error_lines_name_each_problem() -> None:
    assert llm.error_line(TypeError("Could not resolve authentication method"), retries=2) == (
        llm.NO_KEY_MESSAGE
    )
    assert llm.error_line(ValueError("a bug"), retries=2) is None  # not the API's: traceback
