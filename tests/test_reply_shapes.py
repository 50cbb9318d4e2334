"""A reply is taken for what it is (issue 43). A stream cut short or stopped at max_tokens is
kept, marked incomplete, in the conversation, in the cell (one line) and in the write-back;
a malformed answer (an empty stream, plain JSON where a stream was asked for, an error event,
missing fields, an event that is not JSON) is one line naming what was wrong, never the SDK's
bare AssertionError, and the conversation is unchanged. The real anthropic SDK talks to the
fake Messages API (`BrokenStream`) on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    TODAY,
    BrokenStream,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from IPython.core.error import UsageError


def conversations(memory_root: Path) -> dict[str, dict]:
    folder = memory_root / "memory" / ".conversations"
    return {
        path.name: json.loads(path.read_text())
        for path in sorted(folder.glob("*.json"))
        if not path.name.endswith(".sent.json")
    }


def raw_log(memory_root: Path) -> str:
    path = memory_root / "memory" / f"{TODAY}.md"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("cut before any text", "no reply text arrived: the stream ended before the reply did"),
        ("empty", "the reply stream was empty (no event at all)"),
        ("json", "the answer was application/json, not the event stream that was asked for"),
        ("error_event", "the reply stream ended in an error: overloaded_error: Overloaded"),
        ("missing_fields", "an event of the reply stream after message_start lacked a field"),
        ("not_json", "an event of the reply stream was not JSON"),
        ("no_start", "the reply stream never started a message (no message_start event)"),
    ],
)
def test_a_malformed_answer_is_one_line_and_changes_nothing(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys, kind: str, expected: str
) -> None:
    run(claude_shell, "%%ask\nWhat did we decide?")
    before = conversations(memory_root)
    capsys.readouterr()
    api.replies.append(
        BrokenStream("cut", "x") if kind == "cut before any text" else BrokenStream(kind)
    )

    with pytest.raises(UsageError) as raised:
        run(claude_shell, "%%ask\nAnd what next?")
    shown = capsys.readouterr()
    message = str(raised.value)
    assert message == f"Claude API: {expected}" + message.split(expected, 1)[1]
    assert "\n" not in message and message.endswith("(the conversation is unchanged)")
    assert "Traceback" not in shown.out + shown.err and "AssertionError" not in message
    assert conversations(memory_root) == before


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("cut", "the stream ended before the reply did (no message_stop event)"),
        ("max_tokens", "stopped at the max_tokens limit"),
        ("dropped", "the connection dropped before the reply ended"),
    ],
)
def test_a_reply_cut_short_is_kept_marked_incomplete_everywhere(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys, kind: str, why: str
) -> None:
    api.replies.append(BrokenStream(kind, "Cut the starter tier by 15% and then"))
    run(claude_shell, "%%ask\nWhat should we change?")
    shown = capsys.readouterr().out

    incomplete = [line for line in shown.splitlines() if "incomplete" in line]
    assert len(incomplete) == 1 and why in incomplete[0]  # one visible line in the cell
    (conversation,) = conversations(memory_root).values()
    reply = conversation["active"][-1]
    assert reply["role"] == "assistant" and why in reply["incomplete"]
    assert reply["text"].startswith("Cut the starter")
    log = raw_log(memory_root)
    assert "- outcome: incomplete reply (" in log  # the write-back says so too
    if kind != "dropped":  # (there, the SDK's snapshot only knows no message_stop came)
        assert f"- outcome: incomplete reply ({why}" in log

    run(claude_shell, "%%ask\nGo on.")  # and the model is told when the turn goes back
    sent = api.message_requests()[-1]["messages"]
    assert "[hipo: this reply is incomplete: " in sent[1]["content"]


def test_a_whole_reply_is_not_marked(claude_shell, memory_root: Path, capsys) -> None:
    run(claude_shell, "%%ask\nWhat did we decide?")
    assert "incomplete" not in capsys.readouterr().out
    (conversation,) = conversations(memory_root).values()
    assert conversation["active"][-1]["incomplete"] is None
    assert "incomplete reply" not in raw_log(memory_root)


def test_the_users_own_cut_stream_is_written_back_marked_incomplete(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    api.replies.append(BrokenStream("cut", "Cut the starter tier by 15% and then"))
    run(
        claude_shell,
        "import anthropic\n"
        "client = anthropic.Anthropic()\n"
        "with client.messages.stream(model='claude-sonnet-5-5', max_tokens=100,\n"
        "        messages=[{'role': 'user', 'content': 'What should we change?'}]) as s:\n"
        "    text = ''.join(s.text_stream)\n",
    )
    log = raw_log(memory_root)
    assert "- outcome: incomplete reply (the stream ended before the reply did" in log
