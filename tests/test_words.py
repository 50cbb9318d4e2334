"""One definition of a word for every recall stage (`hipo_jupyter/memory/words.py`, issue 54).

The properties hold for any text; the stage tests give each stage a text whose words only the
one definition reads right: a full-width word ("ＫＥＳＴＲＥＬ" is "kestrel" after NFKC, not
after case folding alone), a ligature ("ﬁne-tuning"), a dotted identifier and an apostrophe.
A stage that went back to its own split or fold would see other words and fail here.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.forget.ledger import RUN, runs
from hipo_jupyter.memory.recall.passages import passage, query_stems
from hipo_jupyter.memory.recall.query_hints import content_stems, coverage
from hipo_jupyter.memory.recall.ranking import match_topics, query_words
from hipo_jupyter.memory.recall.second_hop import bridge_terms
from hipo_jupyter.memory.recall.supersession import changed_words, word_stems
from hipo_jupyter.memory.search.contract import Document, SearchHit
from hipo_jupyter.memory.search.query import query_terms
from hipo_jupyter.memory.tree.topic_index import Topic
from hipo_jupyter.memory.words import (
    STOPWORDS,
    TERM,
    WORD,
    content_words,
    fold,
    ledger_words,
    stem,
    stems,
    words,
)

# Full width, a ligature, a dotted identifier, a possessive, an underscore, an accent.
PROBE = "ＫＥＳＴＲＥＬ ﬁne-tuning of pkg.module_v2 on Caroline's Zürich cluster"
PROBE_WORDS = ["kestrel", "fine", "tuning", "of", "pkg", "module", "v2", "on", "caroline",
               "s", "zürich", "cluster"]  # fmt: skip


# --- the definition, for any text ------------------------------------------------------------


def test_the_probe_splits_as_the_docstring_says() -> None:
    assert words(PROBE) == PROBE_WORDS
    assert content_words(PROBE) == [w for w in PROBE_WORDS if w not in {"of", "on", "s"}]
    assert stem("Cleaning") == "clean" and stem("ＦＩＮＥＳ") == "fine"
    assert stems("the Cleaning of fines") == {"clean", "fine"}


@settings(max_examples=600, deadline=None)
@given(st.text())
@example("İstanbul ǰ ℌ ﬁ ＡＢＣ ß")  # folds that change length or need a second NFKC
@example("a_b it's v2.1 q1/q2 2026-03-12")
def test_words_are_nonempty_folded_and_splitting_them_again_changes_nothing(text: str) -> None:
    found = words(text)
    for word in found:
        assert word and WORD.fullmatch(word)
        assert fold(word) == word  # lower-cased (folded) as promised
    assert words(" ".join(found)) == found  # idempotent
    assert fold(fold(text)) == fold(text)
    assert content_words(text) == [w for w in found if w not in STOPWORDS]
    assert all(stem(w) == fold(stem(w)) for w in found)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_terms_and_the_ledgers_words_are_pieces_of_the_text(text: str) -> None:
    folded = fold(text)
    for match in TERM.finditer(folded):
        assert words(match.group())  # a term is one word or more, never only connectors
    for word in ledger_words(text):
        assert len(word) >= 2 and word in text  # the ledger's words are as written, unfolded


@settings(max_examples=40, deadline=None)
@given(
    unit=st.text(alphabet="a_.-'’@ \u0301Z9ﬁ", min_size=1, max_size=3),
    tail=st.sampled_from(["", "!", "a", "-", "_"]),
)
def test_a_long_run_costs_its_length_not_its_square(unit: str, tail: str) -> None:
    """No pattern backtracks over a run: 200,000 characters of any repeated unit split in well
    under a second (a quadratic split would take minutes), on a loaded 2-core machine."""
    text = unit * (200_000 // len(unit)) + tail
    for split in (words, ledger_words, lambda t: TERM.findall(fold(t)), stems):
        started = time.perf_counter()
        split(text)
        assert time.perf_counter() - started < 2.0, (unit, tail)


def test_the_ledgers_words_keep_their_stored_shape() -> None:
    """Hashes of runs of these words are in every `memory/.forgotten.json` written so far: the
    split is a format, and a change would miss the quotes of forgets already made."""
    text = "mail alice.smith@example.com re: it's Q3's plan -- a_b_c x"
    assert ledger_words(text) == [
        "mail", "alice.smith@example.com", "re", "it's", "Q3's", "plan", "a_b_c",
    ]  # fmt: skip
    assert runs(text) == {
        RUN + "mail alice.smith@example.com re it's",
        RUN + "alice.smith@example.com re it's Q3's",
        RUN + "re it's Q3's plan",
        RUN + "it's Q3's plan a_b_c",
    }


# --- every stage reads the one definition ----------------------------------------------------


def _hit(text: str, title: str = "note") -> SearchHit:
    doc = Document(f"memory/x.md#L{len(text)}", "memory/x.md", len(text), "raw", "2026-03-01",
                   "project", title, text)  # fmt: skip
    return SearchHit(doc, 1.0, "")


def test_search_sends_the_one_words_as_terms() -> None:
    terms = query_terms(PROBE)
    searched = [w for w in PROBE_WORDS if w not in {"of", "on", "s"}]  # stopwords, possessive
    assert [w for term in terms for w in term] == searched
    assert ("fine", "tuning") in terms and ("pkg", "module", "v2") in terms  # phrases


def test_ranking_matches_topics_by_the_one_words() -> None:
    assert query_words(PROBE) == PROBE_WORDS
    topics = [Topic(name, "project", 1, (), (), (), "2026-03-01", 1)
              for name in ("kestrel", "fine-tuning", "next.js", "pricing")]  # fmt: skip
    asked = query_words("ＫＥＳＴＲＥＬ and Next.js tuning")
    assert [t.name for t in match_topics(asked, topics)] == ["kestrel", "fine-tuning", "next.js"]


def test_supersession_reads_the_one_words_and_stems() -> None:
    assert word_stems(PROBE) == stems(PROBE)
    assert "kestrel" in word_stems(PROBE) and "fine" in word_stems(PROBE)
    # the words after a change word: "moved" then the full-width launch and its day
    assert changed_words("We moved the ＬＡＵＮＣＨ to May") == {"launch", "may"}


def test_the_second_hop_does_not_follow_a_name_the_question_already_asks() -> None:
    seeds = [_hit("Met Priya about the Zephyrix quote and the Kestrel cluster.")]
    asked = bridge_terms(seeds, "What did ＺＥＰＨＹＲＩＸ quote?", seeds)
    assert "zephyrix" not in asked and "priya" in asked and "kestrel" in asked


def test_coverage_and_passages_read_the_one_words() -> None:
    assert content_stems(PROBE) == {w[:5] for w in content_words(PROBE)}
    assert coverage(content_stems("kestrel cluster"), "the ＫＥＳＴＲＥＬ rack") == 0.5
    assert query_stems("ＣＬＥＡＮＩＮＧ the Kestrel") == {"clean", "kestrel"}
    filler = " ".join(f"Sentence {n} is about nothing in particular at all." for n in range(60))
    text = f"{filler} The ＫＥＳＴＲＥＬ cluster was cleaned on Monday. {filler}"
    shown = passage(text, query_stems("kestrel cleaning"), cap=30)
    assert "ＫＥＳＴＲＥＬ cluster was cleaned" in shown


@pytest.mark.parametrize("text", ["", "   ", "--- ... '' __"])
def test_a_text_without_letters_or_digits_has_no_words(text: str) -> None:
    assert words(text) == [] and stems(text) == frozenset() and query_terms(text) == []


_TEXT = st.text(alphabet="abcdeRST ﬁＫß_'.-0123456789\n", max_size=120)


@settings(max_examples=400, deadline=None)
@given(query=_TEXT, text=_TEXT)
def test_coverage_is_the_share_of_stems_some_word_of_the_text_starts_with(query: str, text: str):
    """coverage looks for the query's stems in the text instead of cutting every word: the
    same share as comparing each of the text's words' first STEM_LETTERS letters."""
    from hipo_jupyter.memory.recall.query_hints import STEM_LETTERS

    for asked in (content_stems(query), content_stems(f"{query} {text}")):
        held = {word[:STEM_LETTERS] for word in words(text)}
        expected = len(asked & held) / len(asked) if asked else 1.0
        assert coverage(asked, text) == expected
