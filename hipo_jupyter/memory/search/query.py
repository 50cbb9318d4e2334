"""Search queries as pure functions, shared by every backend: user text -> terms -> FTS5 MATCH.

User text never reaches FTS5 as syntax: `build_match_query` keeps the words, drops stopwords and
quotes every term. Built here, run in `fts5.py` (and the Whoosh and team backends), so tests
can read a query without an index; `search_sql` is the FTS5 backend's whole ranked query.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import date

from ..errors import QueryError
from ..words import STOPWORDS as STOPWORDS
from ..words import TERM, fold
from ..words import WORD as WORD
from ..words import words as words_of

SNIPPET_CHARS = 200

# Column weights for bm25(): title, text, tags (the order of the FTS5 columns).
TITLE_WEIGHT = 5.0
TEXT_WEIGHT = 1.0
TAGS_WEIGHT = 3.0
RANK_FUNCTION = f"bm25({TITLE_WEIGHT}, {TEXT_WEIGHT}, {TAGS_WEIGHT})"

MAX_QUERY_TERMS = 32  # a pasted paragraph still searches fast; the first terms are kept

# A word, a term (words joined by one connector, searched as a phrase) and the stopwords a query
# drops are the engine's one definition (`words.py`), shared with every stage of recall.
_POSSESSIVE = re.compile(r"['’]s\Z")  # on folded text


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The searchable terms of user text, each a tuple of lower-cased words (a phrase when
    several: "2026-03-12" -> ("2026", "03", "12")). A possessive loses its "'s" ("Melanie's" ->
    ("melanie",)). Terms made only of stopwords and repeats are dropped, and at most
    MAX_QUERY_TERMS are kept."""
    terms: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    for match in TERM.finditer(fold(text)):
        term = tuple(words_of(match.group()))
        if len(term) > 1 and _POSSESSIVE.search(match.group()):
            term = term[:-1]  # "Melanie's" finds "Melanie" too, not only "Melanie's"
        if all(word in STOPWORDS for word in term) or term in seen:
            continue
        seen.add(term)
        terms.append(term)
        if len(terms) == MAX_QUERY_TERMS:
            break
    return terms


def quote_fts(words: Sequence[str]) -> str:
    """One FTS5 string (a phrase when there are several words); quotes inside are doubled."""
    return '"' + " ".join(words).replace('"', '""') + '"'


def build_match_query(text: str) -> str:
    """User text -> an FTS5 MATCH expression: every term quoted, OR-ed, stopwords dropped.

    Quoting means no user text is ever FTS5 syntax (AND, NEAR, `col:`, `*`, `^`, brackets are
    just words), so a query can never be a syntax error. "" when nothing is searchable.
    """
    return " OR ".join(quote_fts(words) for words in query_terms(text))


def normalize_day(value: str | date | None, name: str) -> str | None:
    """An inclusive date filter as "YYYY-MM-DD" (a `date` is accepted too), or QueryError."""
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise QueryError(f"{name}={value!r} is not a date; use YYYY-MM-DD") from None


def plain_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Whitespace collapsed to single spaces and cut to `limit` characters at a word boundary.
    Only a head of the text is flattened, widened until it holds more than `limit`: the
    same result as flattening it all, without splitting a long node for 200 characters."""
    window = 2 * limit + 16
    while True:
        flat = " ".join(text[:window].split())  # a prefix of the whole text's flattening
        if window >= len(text) or len(flat) > limit:
            break
        window *= 4
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


SNIPPET_SQL = "snippet(documents_fts, -1, '', '', '…', 20)"
DOC_COLUMNS = (
    "d.id, d.path, d.line, d.kind, d.date, d.type, d.title, d.text, d.tags, d.provenance,"
    " d.writer, d.via, d.provider, d.conversation, d.proposes, d.speaker"
)


def placeholders(values: Collection[str]) -> str:
    """One `?` per value, for an `in (...)` list."""
    return ", ".join("?" for _ in values)


def search_sql(
    match: str,
    *,
    limit: int,
    kinds: Collection[str] | None = None,
    types: Collection[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    snippets: bool = True,
    columns: str = DOC_COLUMNS,
) -> tuple[str, list[object]]:
    """The SQL and parameters of one ranked, filtered search; pure, so tests can read it.

    Rows: the document columns, the score (-bm25, > 0) and the raw snippet. Ranking goes through
    FTS5's `rank` column (`rank match 'bm25(...)'`, `order by rank`): FTS5 then sorts inside the
    virtual table, measured 1.5-2x faster than `order by bm25(...)` on a common term.
    Without `snippets` the snippet column is empty: FTS5's snippet() re-reads each row's text,
    and at a year of memory, over a thousand candidates, it was four fifths of the query.
    `columns` (the document's, `DOC_COLUMNS`, by default): "d.id" reads each row's id alone,
    for a caller that keeps the documents it read (`Fts5Index.search`).
    """
    where = ["documents_fts match ?", "documents_fts.rank match ?"]
    params: list[object] = [match, RANK_FUNCTION]
    if kinds is not None:
        where.append(f"d.kind in ({placeholders(kinds)})")
        params.extend(kinds)
    if types is not None:
        where.append(f"d.type in ({placeholders(types)})")
        params.extend(types)
    if since is not None:
        where.append("d.date >= ?")
        params.append(since)
    if until is not None:
        where.append("d.date <= ?")
        params.append(until)
    params.append(limit)
    sql = f"""
        select {columns},
            -documents_fts.rank as score,
            {SNIPPET_SQL if snippets else "''"} as snippet
        from documents_fts join documents d on d.pk = documents_fts.rowid
        where {" and ".join(where)}
        order by documents_fts.rank
        limit ?
    """
    return sql, params
