"""The pure query builder: user text -> FTS5 MATCH expression, never a syntax error."""

from __future__ import annotations

import re
import sqlite3

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.search.query import (
    MAX_QUERY_TERMS,
    RANK_FUNCTION,
    STOPWORDS,
    build_match_query,
    query_terms,
    search_sql,
)

# A quoted FTS5 string ("" doubles a quote inside), and the whole expression: strings OR-ed.
_STRING = r'"(?:[^"]|"")*"'
_EXPRESSION = re.compile(rf"{_STRING}(?: OR {_STRING})*")


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("create virtual table t using fts5(title, text, tokenize='porter unicode61')")
    db.executemany(
        "insert into t values (?, ?)",
        [
            ("Competitor pricing", "compare our prices with the top 5 competitors"),
            ("Release 2026-03-12", "shipped v2.1 of the foo_bar service"),
            ("Zürich office", "das Büro in Zürich"),
        ],
    )
    return db


def matches(db: sqlite3.Connection, text: str) -> list[str]:
    expression = build_match_query(text)
    if not expression:
        return []
    rows = db.execute("select title from t where t match ? order by rank", (expression,))
    return [row[0] for row in rows]


@settings(max_examples=400, deadline=None)
@given(st.text())
@example('"')
@example('""')
@example('pricing "unbalanced')
@example("NOT AND OR NEAR")
@example("NEAR(a b, 3)")
@example("col:term")
@example("* ^ + - ( ) { } :")
@example("\x00")
@example("a\u0301")  # a combining accent
@example("ﬁnance")  # a ligature, NFKC turns it into "finance"
def test_any_text_gives_a_query_fts5_accepts(fts: sqlite3.Connection, text: str) -> None:
    expression = build_match_query(text)
    assert expression == "" or _EXPRESSION.fullmatch(expression)
    if expression:
        fts.execute("select count(*) from t where t match ?", (expression,)).fetchone()


@given(st.text())
def test_every_term_is_quoted_and_searchable(text: str) -> None:
    terms = query_terms(text)
    assert len(terms) <= MAX_QUERY_TERMS
    assert len(set(terms)) == len(terms)
    for words in terms:
        assert words
        assert not all(word in STOPWORDS for word in words)
        assert all(word == word.casefold() and word.strip() for word in words)
    assert build_match_query(text).count(" OR ") == max(len(terms) - 1, 0)


def test_words_become_quoted_or_terms() -> None:
    assert build_match_query("pricing starter") == '"pricing" OR "starter"'


def test_stopwords_are_dropped() -> None:
    assert build_match_query("what is the pricing of the starter tier") == (
        '"pricing" OR "starter" OR "tier"'
    )


@pytest.mark.parametrize("text", ["", "   ", "the of and", "!!! ... ---", "\x00\x01", '""'])
def test_nothing_searchable_gives_empty(text: str) -> None:
    assert build_match_query(text) == ""


def test_fts5_operators_are_just_words() -> None:
    assert build_match_query("pricing AND NOT starter") == '"pricing" OR "starter"'
    assert build_match_query("NEAR(pricing)") == '"near" OR "pricing"'
    assert build_match_query("title:pricing") == '"title" OR "pricing"'


def test_joined_words_stay_a_phrase() -> None:
    assert build_match_query("2026-03-12") == '"2026 03 12"'
    assert build_match_query("foo_bar v2.1") == '"foo bar" OR "v2 1"'
    assert build_match_query("state-of-the-art") == '"state of the art"'


def test_repeats_are_dropped_case_insensitively() -> None:
    assert build_match_query("Pricing pricing PRICING") == '"pricing"'


def test_long_text_keeps_the_first_terms() -> None:
    text = " ".join(f"term{n}" for n in range(100))
    terms = query_terms(text)
    assert len(terms) == MAX_QUERY_TERMS
    assert terms[0] == ("term0",)


def test_unicode_is_normalized() -> None:
    assert build_match_query("ﬁnance") == '"finance"'
    assert build_match_query("Zürich") == '"zürich"'


def test_queries_find_what_they_name(fts: sqlite3.Connection) -> None:
    assert matches(fts, "pricing") == ["Competitor pricing"]
    assert matches(fts, "2026-03-12") == ["Release 2026-03-12"]
    assert matches(fts, "foo_bar") == ["Release 2026-03-12"]
    assert matches(fts, "zurich") == ["Zürich office"]
    assert matches(fts, 'price* AND "competitor') == ["Competitor pricing"]


def test_search_sql_filters_are_parameters() -> None:
    sql, params = search_sql(
        '"pricing"',
        limit=5,
        kinds=["raw"],
        types=["project"],
        since="2026-03-01",
        until="2026-03-31",
    )
    assert params == ['"pricing"', RANK_FUNCTION, "raw", "project", "2026-03-01", "2026-03-31", 5]
    assert "2026" not in sql and "raw" not in sql
