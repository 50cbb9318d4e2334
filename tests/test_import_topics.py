"""What imported chats put in the Topics Index (Layer 1, read as the user's).

A turn titled by its speaker (a conversation's people, LoCoMo's "Ana") is a topic; one titled
by its first words (a chat export's "I've been trying to...") is not: thousands of them
filled the index. They are still recalled. Topics saved under the earlier rule are collected
again, so an upgraded memory's index loses them too.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.layout import stamp_key
from hipo_jupyter.memory.intake.importers import read_file

TODAY = date(2026, 3, 12)
TINY_LOCOMO = Path(__file__).parent / "data" / "tiny-conversation.json"
CHAT = [
    {"role": "user", "content": "I've been trying to reduce my carbon footprint lately."},
    {"role": "assistant", "content": "A reusable bottle is a good start."},
    {"role": "user", "content": "Helpful! Which bottle keeps drinks hot for six hours?"},
    {"role": "assistant", "content": "Hydro Flask keeps them hot for twelve."},
]


def _root_topics(root: Path) -> str:
    text = (root / "memory" / "ROOT.md").read_text()
    return text.split("## Topics Index", 1)[1]


def test_a_chat_exports_turns_make_no_topics_and_are_still_recalled(memory_root: Path) -> None:
    chat = memory_root.parent / "chat.json"
    chat.write_text(json.dumps(CHAT))
    memory = Memory(memory_root, today=lambda: TODAY)
    try:
        memory.remember("Pricing review", "Cut the starter tier by 15%.", tags=["pricing"],
                        on=TODAY)  # fmt: skip
        memory.import_records(read_file(chat))
        assert [topic.name for topic in memory.topics()] == ["pricing"]
        listed = _root_topics(memory_root)
        assert "- pricing [" in listed and "carbon" not in listed and "helpful" not in listed
        assert any("Hydro Flask" in hit.snippet for hit in memory.recall("bottle hot").hits)
    finally:
        memory.close()


def test_a_conversations_speakers_are_still_its_topics(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: TODAY)
    try:
        memory.import_records(read_file(TINY_LOCOMO))
        assert sorted(topic.name for topic in memory.topics()) == ["ana", "ben"]
    finally:
        memory.close()


def test_topics_saved_under_the_earlier_rule_are_collected_again(memory_root: Path) -> None:
    chat = memory_root.parent / "chat.json"
    chat.write_text(json.dumps(CHAT))
    memory = Memory(memory_root, today=lambda: TODAY)
    try:
        memory.import_records(read_file(chat))
        stamps = memory.store.raw_stamps()
    finally:
        memory.close()
    state_path = memory_root / "memory" / ".compaction-state.json"
    state = json.loads(state_path.read_text())
    state["hipo"]["topics"] = [{"name": "helpful", "type": "project", "keywords": [],
                                "months": ["2026-03"], "weeks": [], "last_date": "2026-03-12",
                                "count": 1}]  # fmt: skip
    state["hipo"]["topics-stamp"] = stamp_key(stamps)  # how the earlier rule saved them
    state_path.write_text(json.dumps(state))
    memory = Memory(memory_root, today=lambda: TODAY)
    try:
        assert [topic.name for topic in memory.topics()] == []
    finally:
        memory.close()
