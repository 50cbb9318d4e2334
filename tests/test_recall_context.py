"""Recall for a model's context (issue 5): neighbouring turns, the day's match from the tree,
periods and names in the query, possessives, and hits shown once."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.intake.importers import parse_text
from hipo_jupyter.memory.recall.neighbours import LogNeighbours
from hipo_jupyter.memory.recall.query_hints import period_match, query_names, query_periods
from hipo_jupyter.memory.search.query import query_terms

TODAY = date(2026, 3, 12)


def memory_with(root: Path, turns: list[tuple[str, str, str]]) -> Memory:
    """A memory holding conversation turns (day, speaker, text), imported and compacted."""
    data = [
        {"speaker": s, "text": t, "time": d, "id": f"t{n}"} for n, (d, s, t) in enumerate(turns)
    ]
    memory = Memory(root, today=lambda: TODAY)
    memory.import_records(parse_text(json.dumps(data), name="chat.json"))
    return memory


def texts(result) -> list[str]:
    return [hit.snippet for hit in result.hits]


# --- query handling -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "periods"),
    [
        ("What did Nate make on 9 November, 2022?", [("2022-11-09", "2022-11-09")]),
        ("what happened on November 9th 2022", [("2022-11-09", "2022-11-09")]),
        ("the 1st of March 2026", [("2026-03-01", "2026-03-01")]),
        ("notes from 2026-03-12", [("2026-03-12", "2026-03-12")]),
        ("Where did Joanna travel in July 2022?", [("2022-07-01", "2022-07-31")]),
        ("pricing in Feb. 2024", [("2024-02-01", "2024-02-29")]),
        ("pricing 2026-02", [("2026-02-01", "2026-02-28")]),
        ("what did we ship in 2025", [("2025-01-01", "2025-12-31")]),
        ("between August 11 and August 15 2023", [("2023-08-11", "2023-08-15")]),
        ("I may go in June", []),  # no year: not a date
        ("v2.1 release 3 May", []),
        ("error 404 on port 8080", []),
    ],
)
def test_query_periods(query: str, periods: list[tuple[str, str]]) -> None:
    found = [(start.isoformat(), end.isoformat()) for start, end in query_periods(query)]
    assert found == periods


def test_period_match_and_its_grace_week() -> None:
    may = [(date(2023, 5, 1), date(2023, 5, 31))]
    assert period_match(date(2023, 5, 20), may) == 1.0
    assert period_match(date(2023, 6, 5), may) == 0.5  # told a few days later
    assert period_match(date(2023, 6, 20), may) == 0.0
    assert period_match(date(2023, 4, 30), may) == 0.0


def test_query_names_are_capitalised_words_without_possessives() -> None:
    assert query_names("What is Caroline's identity? When did Jon and Gina meet?") == {
        "caroline",
        "jon",
        "gina",
    }
    assert query_names("what did we decide") == set()


def test_a_possessive_searches_the_name_itself() -> None:
    assert query_terms("Melanie's kids’ Nate’s it's") == [("melanie",), ("kids",), ("nate",)]


# --- ranking -----------------------------------------------------------------------------------


CHAT = [
    ("2023-05-08", "Ana", "Did you ever try the new climbing gym downtown?"),
    ("2023-05-08", "Ben", "Yes! I went twice and loved the bouldering wall."),
    ("2023-05-08", "Ana", "Nice, I should join you sometime."),
    ("2023-05-08", "Ben", "Definitely, Thursdays work for me."),
    ("2023-06-01", "Ana", "My sister visited and we baked bread."),
    ("2023-06-01", "Ben", "Homemade bread is the best."),
]


def test_neighbours_lift_the_reply_to_the_matching_turn(memory_root: Path) -> None:
    memory = memory_with(memory_root, CHAT)
    plain = memory.recall("climbing gym", k=3)
    assert texts(plain) == ["Did you ever try the new climbing gym downtown?"]
    lifted = memory.recall("climbing gym", k=3, neighbours=True)
    assert texts(lifted) == [
        "Did you ever try the new climbing gym downtown?",
        "Yes! I went twice and loved the bouldering wall.",  # the reply
        "Nice, I should join you sometime.",  # and what followed it
    ]
    assert lifted.hits[1].line > lifted.hits[0].line > 0
    # filters still hold for lifted checkpoints
    memory.remember("Gym rule [feedback]", "- rule: stretch first", on=date(2023, 5, 8))
    after_thursdays = memory.recall("Thursdays", k=5, neighbours=True)
    assert "Gym rule" in [hit.title for hit in after_thursdays.hits]
    only_turns = memory.recall("Thursdays", k=5, neighbours=True, type="project")
    assert only_turns.hits and all(hit.type == "project" for hit in only_turns.hits)


def test_the_turn_before_is_lifted_too(memory_root: Path) -> None:
    memory = memory_with(memory_root, CHAT)
    result = memory.recall("bouldering wall", k=2, neighbours=True)
    assert texts(result)[1] in (
        "Nice, I should join you sometime.",
        "Did you ever try the new climbing gym downtown?",
    )
    assert "Did you ever try the new climbing gym downtown?" in texts(
        memory.recall("bouldering wall", k=4, neighbours=True)
    )


def test_neighbours_follow_the_raw_log_as_it_grows(memory_root: Path) -> None:
    memory = memory_with(memory_root, CHAT)
    assert len(memory.recall("bread", k=5, neighbours=True)) == 2  # the last turns of their day
    memory.remember("Ben", "I can bring the sourdough starter.", on=date(2023, 6, 1))
    result = memory.recall("visited baked", k=5, neighbours=True)
    assert "I can bring the sourdough starter." in texts(result)


def test_log_neighbours_reads_each_log_once_per_version(memory_root: Path) -> None:
    memory = memory_with(memory_root, CHAT)
    reads: list[str] = []

    def documents(path: str, data: bytes):
        reads.append(path)
        return memory._documents(path, data)

    neighbours = LogNeighbours(memory_root, documents)
    assert [doc.line for doc in neighbours("memory/2023-05-08.md")] == [1, 5, 9, 13]
    before, after = neighbours.around("memory/2023-05-08.md", 5)  # the second turn's heading
    assert before is not None and before.line == 1 and after is not None and after.line == 9
    assert neighbours.around("memory/2023-05-08.md", 1)[0] is None
    assert neighbours.around("memory/2023-05-08.md", 999) == (None, None)
    assert neighbours.around("memory/1999-01-01.md", 1) == (None, None)
    assert neighbours("memory/1999-01-01.md") == []
    assert reads == ["memory/2023-05-08.md"]
    memory.remember("Ana", "One more thing.", on=date(2023, 5, 8))
    assert neighbours.around("memory/2023-05-08.md", 13)[1].text == "One more thing."
    assert reads == ["memory/2023-05-08.md"] * 2


def test_a_turn_in_a_day_about_the_query_ranks_first(memory_root: Path) -> None:
    """Two turns match "garden" alike; the one whose whole day is about gardening (its daily
    node matches better) comes first, whatever the order of the days."""
    turns = [
        ("2023-03-01", "Ana", "The garden needs work."),
        ("2023-03-01", "Ben", "Tomatoes and basil in the raised beds."),
        ("2023-03-01", "Ana", "Compost and mulch for the raised beds."),
        ("2023-03-09", "Ana", "The garden needs work."),
        ("2023-03-09", "Ben", "My car broke down on the highway."),
    ]
    memory = memory_with(memory_root, turns)
    result = memory.recall("garden raised beds", k=5)
    garden = [h for h in result.hits if h.snippet == "The garden needs work."]
    assert len(garden) == 1  # the same words twice are shown once ...
    assert garden[0].date == "2023-03-01"  # ... from the day that is about the garden


def test_a_named_month_ranks_its_turns_first(memory_root: Path) -> None:
    turns = [
        ("2023-01-10", "Ana", "We went hiking in the hills."),
        ("2023-07-10", "Ana", "We went hiking in the hills."),
        ("2023-07-10", "Ben", "Sounds lovely."),
    ]
    memory = memory_with(memory_root, turns)
    assert memory.recall("hiking in January 2023", k=1).hits[0].date == "2023-01-10"
    assert memory.recall("hiking in July 2023", k=1).hits[0].date == "2023-07-10"


def test_a_named_speaker_ranks_their_turns_first(memory_root: Path) -> None:
    """The same words from both speakers, each naming the other, among small talk that names
    both too: the names weigh nothing in BM25 and recency favours Ana's turn; the query names
    Ben."""
    topics = [
        "weather",
        "coffee",
        "trains",
        "music",
        "books",
        "garden",
        "football",
        "cooking",
        "movies",
        "holidays",
    ]
    small_talk = [
        (f"2026-02-{day:02d}", speaker, f"{other}, what about {topics[day % 10]} {day}?")
        for day in range(1, 21)
        for speaker, other in (("Ana", "Ben"), ("Ben", "Ana"))
    ]
    turns = [
        ("2026-01-10", "Ben", "Ana, I adopted a dog last week."),
        *small_talk,
        ("2026-03-11", "Ana", "Ben, I adopted a dog last week."),
    ]
    memory = memory_with(memory_root, turns)
    assert memory.recall("Did Ana adopt a dog?", k=1).hits[0].title == "Ana"
    assert memory.recall("Did Ben adopt a dog?", k=1).hits[0].title == "Ben"


def test_the_same_authors_next_words_are_not_lifted(memory_root: Path) -> None:
    """In a log of one person's requests (the replies not kept), the next checkpoint is only
    another thing they said: lifting it would take budget from real hits."""
    memory = memory_with(
        memory_root,
        [
            ("2023-05-08", "User", "Which climbing gym downtown has the best bouldering?"),
            ("2023-05-08", "User", "Also, what should I cook for dinner tonight?"),
            ("2023-05-08", "User", "And remind me to water the plants."),
        ],
    )
    lifted = memory.recall("climbing gym", k=3, neighbours=True)
    assert texts(lifted) == ["Which climbing gym downtown has the best bouldering?"]


def test_neighbours_follow_another_kernels_append(memory_root: Path) -> None:
    """The neighbours of a log are kept while the index is unchanged (`IndexNeighbours`);
    a turn another kernel appends to that log (indexed by it) is lifted at the next recall."""
    ours = memory_with(
        memory_root,
        [
            ("2023-05-08", "User", "Which climbing gym downtown has the best bouldering?"),
            ("2023-05-08", "Coach", "Try the one by the river."),
        ],
    )
    assert len(ours.recall("climbing gym", k=5, neighbours=True)) == 2
    other = Memory(memory_root, today=lambda: TODAY)
    other.remember("Friend", "The river one opens at six on weekdays.", on="2023-05-08")
    lifted = ours.recall("climbing gym", k=5, neighbours=True)
    assert [hit.title for hit in lifted][-1] == "Friend"
    assert ours.context("climbing gym").text.count("opens at six") == 1
    other.close()


def test_neighbours_kept_from_a_closed_index_are_checked_again(memory_root: Path) -> None:
    """A reopened index is another connection, whose versions start again: what was kept
    under the old one is checked against the new one, not taken for current."""
    memory_with(
        memory_root,
        [
            ("2023-05-08", "User", "Which climbing gym downtown has the best bouldering?"),
            ("2023-05-08", "Coach", "Try the one by the river."),
        ],
    ).close()
    ours = Memory(memory_root, today=lambda: TODAY)
    assert len(ours.recall("climbing gym", k=5, neighbours=True)) == 2
    ours.close()
    other = Memory(memory_root, today=lambda: TODAY)
    other.remember("Friend", "The river one opens at six on weekdays.", on="2023-05-08")
    other.close()
    lifted = ours.recall("climbing gym", k=5, neighbours=True)
    assert [hit.title for hit in lifted][-1] == "Friend"


def test_drill_down_paths_follow_the_node_folders_as_they_change(memory_root: Path) -> None:
    """Recall keeps the node list while the node folders are unchanged (`NodePaths`); a node
    built or removed since shows in (or leaves) the next hit's drill-down path at once."""
    memory = Memory(memory_root, today=lambda: TODAY)
    memory.remember("Pricing review", "- decisions: cut the starter tier by 15%", on=TODAY)
    [hit] = memory.recall("starter tier")
    assert f"memory/daily/{TODAY.isoformat()}.md" not in hit.path  # not compacted yet
    memory.compact()
    [hit] = memory.recall("starter tier")
    assert f"memory/daily/{TODAY.isoformat()}.md" in hit.path
    (memory_root / "memory" / "daily" / f"{TODAY.isoformat()}.md").unlink()
    [hit] = memory.recall("starter tier")
    assert f"memory/daily/{TODAY.isoformat()}.md" not in hit.path
