"""Issue 25: a conversation with an assistant is stored as exchanges (user turn + reply)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import DEFAULT_SETTINGS, Memory, RecallSettings
from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory.disk.exchanges import REPLY_INDEX_TOKENS, pair
from hipo_jupyter.memory.intake.importers import ImportRecord, parse_text

TODAY = date(2026, 3, 20)
HIPO = Path(sys.executable).parent / "hipo"

# A reply whose first words say what it is about and whose tail (past the words the index
# keeps) holds a word of its own.
LONG_TAIL = " ".join(["filler"] * (REPLY_INDEX_TOKENS + 50)) + " zanzibarite"
CHAT = [
    {
        "role": "user",
        "content": "Which sourdough starter ratio should I use?",
        "time": "2026-03-02",
    },
    {
        "role": "assistant",
        "content": "A 1:1:1 ratio of starter, flour and water keeps it lively. " + LONG_TAIL,
    },
    {"role": "user", "content": "I graduated in Business Administration in 2019."},
    {"role": "assistant", "content": "Congratulations!"},
    {"role": "assistant", "content": "That degree helps with marketing roles."},
]


def memory_at(root: Path) -> Memory:
    return Memory(root, today=lambda: TODAY)


def checkpoints(root: Path) -> list:
    found = []
    for day in sorted((root / "memory").glob("2026-*.md")):
        found.extend(parse_log(day.read_text(), date=day.stem))
    return found


def test_a_user_turn_and_its_reply_are_one_checkpoint(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    report = memory.import_records(parse_text(json.dumps(CHAT), name="chat.json"))
    memory.close()
    assert report.written == 2
    first, second = checkpoints(memory_root)
    # titled by the request's first words, never "user" (issue 53); an id from the words (48)
    assert first.title == "Which sourdough starter ratio should I use" and first.via == "import"
    assert first.id.startswith("turn-")
    assert first.field("request") == CHAT[0]["content"]
    assert first.field("outcome") == CHAT[1]["content"]  # whole in the raw log
    # two assistant turns in a row are one reply
    assert second.field("outcome") == "Congratulations!\n\nThat degree helps with marketing roles."


def test_importing_again_adds_nothing(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    records = parse_text(json.dumps(CHAT), name="chat.json")
    memory.import_records(records)
    again = memory.import_records(records)
    memory.close()
    assert (again.written, again.skipped) == (0, 2)
    assert len(checkpoints(memory_root)) == 2


def test_two_people_without_an_assistant_stay_turns() -> None:
    day = date(2026, 3, 1)
    records = [
        ImportRecord(day, "Ana", "I adopted a cat", "c:1"),
        ImportRecord(day, "Ben", "What is its name?", "c:2"),
    ]
    assert pair(records) == records
    # an assistant turn with no user turn before it stays a checkpoint of its own
    lone = [ImportRecord(day, "assistant", "Hello, how can I help?", "c:0"), *records]
    assert [r.reply for r in pair(lone)] == ["", "", ""]


def test_claude_code_reply_split_by_tool_calls_is_one_reply(memory_root: Path) -> None:
    def line(kind: str, content, uuid: str, second: int) -> str:
        return json.dumps(
            {
                "type": kind,
                "uuid": uuid,
                "timestamp": f"2026-02-03T10:00:{second:02d}Z",
                "message": {"role": kind, "content": content},
            }
        )

    transcript = "\n".join(
        [
            line("user", "Why does test_sync fail on CI?", "u-1", 0),
            line("assistant", [{"type": "text", "text": "Let me read the fixture."}], "a-1", 1),
            line("user", [{"type": "tool_result", "tool_use_id": "t", "content": "x"}], "u-2", 2),
            line("assistant", [{"type": "text", "text": "It shares a temp dir."}], "a-2", 3),
        ]
    )
    records = pair(parse_text(transcript, name="s.jsonl"))
    assert len(records) == 1 and records[0].source == "u-1"
    assert records[0].reply == "Let me read the fixture.\n\nIt shares a temp dir."


def test_context_shows_the_request_then_the_matching_reply(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = memory_at(memory_root)
    memory.import_records(parse_text(json.dumps(CHAT), name="chat.json"))
    no_reply = RecallSettings(reply_passage_tokens=0)
    text = memory.context("a lively starter", budget=500, layer1=False, settings=no_reply).text
    assert "Which sourdough" in text and "1:1:1" not in text  # asked for no reply
    # found through its reply ("lively" is only there): the request, then the reply's passage
    text = memory.context("a lively starter", budget=500, layer1=False).text
    assert "Which sourdough starter ratio should I use?" in text
    assert "-> A 1:1:1 ratio of starter" in text
    assert text.index("Which sourdough") < text.index("-> A 1:1:1")
    assert "zanzibarite" not in text  # the reply is shown as its passage, not whole
    # found through the request's words: the reply's passage still says what was answered
    text = memory.context("sourdough starter ratio", budget=500, layer1=False).text
    assert "Which sourdough starter ratio should I use?" in text
    assert "-> A 1:1:1 ratio" in text
    # the reply's first words are indexed (they find the exchange), its long tail is not
    assert [h.kind for h in memory.recall("lively", k=3).hits][0] == "raw"
    assert "raw" not in [h.kind for h in memory.recall("zanzibarite", k=3).hits]
    memory.close()


def test_cli_import_of_a_chat_writes_exchanges(memory_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT))
    env = {**os.environ, "HIPO_TODAY": TODAY.isoformat()}
    command = [str(HIPO), "--root", str(memory_root), "import", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Imported 2 turns" in done.stdout
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert [c.field("request") for c in checkpoints(memory_root)] == [
        CHAT[0]["content"],
        CHAT[2]["content"],
    ]


# A request of five sentences (about 60 tokens): the middle one holds the query's words.
LONG_REQUEST = (
    "I have been planning a long weekend away with my sister for months now. "
    "We both love the coast and old lighthouses. "
    "Which ferry goes from Oban to the island of Mull in April? "
    "Neither of us drives, so trains and buses are what we can use. "
    "We would like to stay somewhere quiet near the harbour."
)


def test_a_long_request_shows_its_passage_a_dialogue_turn_stays_whole(
    memory_root: Path,
) -> None:
    """An exchange's request over `exchange_long_piece` tokens is shown as its passage that
    matches the question (more exchanges fit the budget); a turn of a two-person dialogue
    (no assistant, LoCoMo) is shown whole up to `long_piece`, as before."""
    assert DEFAULT_SETTINGS.exchange_long_piece < DEFAULT_SETTINGS.long_piece
    memory = memory_at(memory_root)
    chat = [
        {"role": "user", "content": LONG_REQUEST, "time": "2026-03-02"},
        {"role": "assistant", "content": "The CalMac ferry runs hourly."},
    ]
    titled = {"title": "Trip to Mull", "messages": chat}  # the title, not the request's words
    memory.import_records(parse_text(json.dumps(titled), name="chat.json"))
    memory.import_records(
        [
            ImportRecord(date(2026, 3, 3), "Ana", LONG_REQUEST, "d:1"),
            ImportRecord(date(2026, 3, 3), "Ben", "Sounds lovely.", "d:2"),
        ]
    )
    text = memory.context("ferry from Oban to Mull", budget=1000, layer1=False).text
    memory.close()
    exchange, dialogue = text.split("memory/2026-03-03.md")
    assert "Which ferry goes from Oban to the island of Mull in April?" in exchange
    assert "planning a long weekend" not in exchange and "…" in exchange
    assert "planning a long weekend" in dialogue and "quiet near the harbour" in dialogue
