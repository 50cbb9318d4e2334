"""Passages (issue 13): a context shows the part of a long piece that matches the question, and
the Layer 1 lines about it, not the heads of either."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.recall.passages import (
    ELLIPSIS,
    matching_lines,
    passage,
    query_stems,
    stem,
)
from hipo_jupyter.memory.tree.tokens import count_tokens

FILLER = "We talked about the weather and the traffic on the way to the office that morning. "
LONG = (
    FILLER * 4
    + "The car wash on February 3rd cost $15 and the parking ticket was $40. "
    + FILLER * 4
)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_short_text_is_shown_whole() -> None:
    text = "- decisions: cut the starter tier by 15%\n- outcome: report shared"
    assert passage(text, query_stems("starter tier"), 40) == text


def test_a_long_text_shows_the_sentences_that_match_marked_as_cut() -> None:
    shown = passage(LONG, query_stems("how much did cleaning the car and the ticket cost?"), 40)
    assert "car wash on February 3rd cost $15" in shown
    assert "parking ticket was $40" in shown
    assert shown.startswith(f"{ELLIPSIS} ") and shown.endswith(f" {ELLIPSIS}")
    assert count_tokens(shown) <= 42  # the cap, and the two marks


def test_nothing_matching_shows_the_head() -> None:
    shown = passage(LONG, query_stems("quantum chromodynamics"), 40)
    assert shown.startswith("We talked about the weather")
    assert shown.endswith(ELLIPSIS)


def test_one_sentence_longer_than_the_cap_is_cut_inside_it() -> None:
    text = " ".join(f"word{n}" for n in range(300))
    shown = passage(text, query_stems("word7"), 20)
    assert count_tokens(shown) <= 22 and shown.endswith(ELLIPSIS)


def test_stems_meet_inflections() -> None:
    assert stem("Cleaning") == stem("cleaned") == stem("cleans") == "clean"
    assert stem("fines") == stem("fine") and stem("is") == "is"
    assert query_stems("the parking tickets, and what it is") == {"park", "ticket"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abc xyz.!?\n", min_size=0, max_size=60), min_size=0, max_size=12
    ).map(" ".join),
    st.sampled_from(["abc", "xyz", "abc xyz", "nothing"]),
    st.integers(min_value=4, max_value=60),
)
def test_a_passage_is_a_piece_of_the_text_within_the_cap(text: str, query: str, cap: int) -> None:
    shown = passage(text, query_stems(query), cap)
    inner = shown.removeprefix(f"{ELLIPSIS} ").removesuffix(f" {ELLIPSIS}")
    assert flat(inner) in flat(text)
    assert count_tokens(inner) <= cap


LAYER1 = """# memory/ROOT.md

# ROOT: memory index

## Active Context
- 2026-03-11 weekly-sync [project]: Caroline shared the hiring plan
- 2026-03-10 competitor-pricing [project] #pricing: recommend a 15% cut on the starter tier

## Topics Index
- pricing [project, 2d]: competitor-pricing -> 2026-03 (W11)
- hiring [project, 1d]: weekly-sync -> 2026-03 (W11)

# SCRATCHPAD.md

# SCRATCHPAD
- starter tier copy still to review
"""


def test_layer1_lines_about_the_question_under_their_headings() -> None:
    shown = matching_lines(LAYER1, query_stems("what did we decide on the starter tier?"), 200)
    assert shown.splitlines() == [
        "# memory/ROOT.md",
        "# ROOT: memory index",
        "## Active Context",
        "- 2026-03-10 competitor-pricing [project] #pricing: recommend a 15% cut on the starter"
        " tier",
        "# SCRATCHPAD.md",
        "# SCRATCHPAD",
        "- starter tier copy still to review",
    ]


def test_a_line_sharing_one_word_of_several_is_left_out() -> None:
    assert matching_lines(LAYER1, query_stems("Caroline's garden party"), 200) == ""
    assert "hiring [project" in matching_lines(LAYER1, query_stems("hiring"), 200)


def test_layer1_lines_keep_within_the_cap_best_first() -> None:
    query = query_stems("starter tier pricing cut")
    shown = matching_lines(LAYER1, query, 45)
    assert count_tokens(shown) <= 45
    assert "recommend a 15% cut on the starter tier" in shown  # shares four words
    assert "SCRATCHPAD" not in shown  # shares two, and no longer fits
    assert matching_lines(LAYER1, query, 30).endswith("- starter tier copy still to review")


def test_lines_under_a_skipped_heading_are_never_taken() -> None:
    query = query_stems("starter tier pricing")
    assert "starter tier" in matching_lines(LAYER1, query, 200)
    shown = matching_lines(LAYER1, query, 200, skip=("Active Context",))
    assert "Active Context" not in shown and "15% cut" not in shown
    assert "- starter tier copy still to review" in shown
