"""The search index contract: every backend (FTS5, Whoosh) passes the same tests.

Whoosh cases skip when the optional `whoosh` package is not importable.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.errors import HipoError, QueryError
from hipo_jupyter.memory.search.contract import BACKENDS, Document, SearchIndex
from hipo_jupyter.memory.search.fts5 import FTS5_FILENAME, MIGRATIONS
from hipo_jupyter.memory.search.indexing import open_index
from hipo_jupyter.memory.search.query import plain_snippet

HAS_WHOOSH = importlib.util.find_spec("whoosh") is not None

BACKEND_PARAMS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            name == "whoosh" and not HAS_WHOOSH, reason="whoosh is not installed"
        ),
    )
    for name in BACKENDS
]

RAW = "memory/2026-03-12.md"
RAW_LATER = "memory/2026-03-20.md"
DAILY = "memory/daily/2026-03-12.md"


def doc(
    path: str,
    line: int,
    title: str,
    text: str,
    *,
    kind: str = "raw",
    date: str = "2026-03-12",
    type: str = "project",
    tags: tuple[str, ...] = (),
) -> Document:
    return Document(
        id=f"{path}#L{line}",
        path=path,
        line=line,
        kind=kind,
        date=date,
        type=type,
        title=title,
        text=text,
        tags=tags,
    )


PRICING = doc(
    RAW,
    1,
    "Competitor pricing",
    "- request: Compare our pricing with the top 5 competitors\n"
    "- decisions: recommend a 15% cut on the starter tier",
    tags=("pricing", "q1"),
)
ONBOARDING = doc(
    RAW,
    9,
    "Onboarding emails",
    "- request: rewrite the welcome sequence\n- outcome: three emails drafted",
    type="feedback",
)
LATER = doc(
    RAW_LATER,
    1,
    "Churn dashboard",
    "- analysis: churn by cohort, the starter tier churns most",
    date="2026-03-20",
    type="user",
)
DAILY_NODE = doc(
    DAILY,
    1,
    "2026-03-12",
    "## Topics\npricing, onboarding, starter tier\n## Key Decisions\ncut the starter tier price",
    kind="daily",
    type="",
)


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def index(backend: str, tmp_path: Path):
    opened = open_index(tmp_path / ".index", backend)
    yield opened
    opened.close()


@pytest.fixture
def filled(index: SearchIndex) -> SearchIndex:
    index.replace_file(RAW, "h-raw-1", [PRICING, ONBOARDING])
    index.replace_file(RAW_LATER, "h-later-1", [LATER])
    index.replace_file(DAILY, "h-daily-1", [DAILY_NODE])
    return index


def ids(hits) -> list[str]:
    return [hit.doc.id for hit in hits]


# -- writing and file hashes -------------------------------------------------------------------


def test_new_index_is_empty(index: SearchIndex, backend: str) -> None:
    assert index.name == backend
    assert index.count() == 0
    assert index.file_hashes() == {}
    assert index.search("pricing") == []
    assert list(index.documents()) == []


def test_replace_file_indexes_docs_and_records_hash(filled: SearchIndex) -> None:
    assert filled.count() == 4
    assert filled.file_hashes() == {RAW: "h-raw-1", RAW_LATER: "h-later-1", DAILY: "h-daily-1"}
    assert PRICING.id in ids(filled.search("competitors"))


def test_replace_file_swaps_old_docs_for_new(filled: SearchIndex) -> None:
    rewritten = doc(RAW, 1, "Vendor contracts", "- request: renew the hosting contract")
    filled.replace_file(RAW, "h-raw-2", [rewritten])
    assert filled.file_hashes()[RAW] == "h-raw-2"
    assert filled.count() == 3
    assert filled.search("onboarding welcome", kinds={"raw"}) == []
    assert ids(filled.search("hosting contract")) == [rewritten.id]
    assert [d.id for d in filled.documents() if d.path == RAW] == [rewritten.id]


def test_a_failed_replace_file_changes_nothing(filled: SearchIndex) -> None:
    """All or nothing: a document that cannot be stored leaves the old ones and the old hash."""
    good = doc(RAW, 1, "Vendor contracts", "- request: renew the hosting contract")
    unstorable = doc(RAW, 5, "Broken", "tags that are not text", tags=(object(),))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        filled.replace_file(RAW, "h-raw-2", [good, unstorable])
    assert filled.file_hashes()[RAW] == "h-raw-1"
    assert [d.id for d in filled.documents() if d.path == RAW] == [PRICING.id, ONBOARDING.id]
    assert filled.search("hosting") == []
    filled.add(RAW, "h-raw-3", [good])  # the index is still writable: no lock left behind
    assert filled.file_hashes()[RAW] == "h-raw-3"


def test_replace_file_if_hash_writes_only_over_the_hash_it_expects(filled: SearchIndex) -> None:
    # A sync read the file when the index said "h-raw-1"; another process has indexed a newer
    # append since: the sync's older version must not overwrite it.
    newer = doc(RAW, 9, "Newest", "- request: the latest append")
    filled.add(RAW, "h-raw-2", [newer])
    older = doc(RAW, 1, "Stale", "- request: what the sync read")
    assert filled.replace_file(RAW, "h-raw-1b", [older], if_hash="h-raw-1") is False
    assert filled.file_hashes()[RAW] == "h-raw-2"
    assert ids(filled.search("latest append")) == [newer.id]
    assert filled.replace_file(RAW, "h-raw-3", [older], if_hash="h-raw-2") is True
    assert filled.file_hashes()[RAW] == "h-raw-3" and filled.search("latest append") == []
    fresh = "memory/2026-04-01.md"
    assert filled.replace_file(fresh, "h-new", [doc(fresh, 1, "New", "x")], if_hash=None)
    assert not filled.replace_file(fresh, "h-new2", [], if_hash=None)  # it is indexed now


def test_replace_file_with_no_docs_keeps_the_hash(filled: SearchIndex) -> None:
    filled.replace_file(RAW, "h-empty", [])
    assert filled.file_hashes()[RAW] == "h-empty"
    assert [d.path for d in filled.documents()] == [RAW_LATER, DAILY]


def test_replace_file_rejects_a_doc_of_another_file(index: SearchIndex) -> None:
    with pytest.raises(ValueError):
        index.replace_file(RAW_LATER, "h", [PRICING])
    assert index.count() == 0
    assert index.file_hashes() == {}


def test_add_appends_and_updates_hash(filled: SearchIndex) -> None:
    appended = doc(RAW, 17, "Hiring plan", "- decisions: open two data engineer roles")
    filled.add(RAW, "h-raw-2", [appended])
    assert filled.file_hashes()[RAW] == "h-raw-2"
    assert filled.count() == 5
    assert ids(filled.search("engineer")) == [appended.id]
    assert PRICING.id in ids(filled.search("competitors"))


def test_add_to_a_new_file_creates_it(index: SearchIndex) -> None:
    index.add(RAW, "h1", [PRICING])
    assert index.file_hashes() == {RAW: "h1"}
    assert index.count() == 1


def test_add_with_a_known_id_replaces_that_doc(filled: SearchIndex) -> None:
    edited = doc(RAW, 1, "Competitor pricing", "- outcome: report shared with the board")
    filled.add(RAW, "h-raw-2", [edited])
    assert filled.count() == 4
    assert ids(filled.search("board")) == [edited.id]
    assert filled.search("compare") == []


def test_remove_file_drops_docs_and_hash(filled: SearchIndex) -> None:
    filled.remove_file(RAW)
    assert RAW not in filled.file_hashes()
    assert filled.count() == 2
    assert all(d.path != RAW for d in filled.documents())
    assert filled.search("competitors") == []
    filled.remove_file("memory/never-indexed.md")  # not an error
    assert filled.count() == 2


def test_clear_empties_everything(filled: SearchIndex) -> None:
    filled.clear()
    assert filled.count() == 0
    assert filled.file_hashes() == {}
    assert filled.search("pricing") == []
    filled.add(RAW, "h", [PRICING])
    assert filled.count() == 1


def test_index_persists_across_open(backend: str, tmp_path: Path) -> None:
    first = open_index(tmp_path / ".index", backend)
    first.replace_file(RAW, "h-raw-1", [PRICING, ONBOARDING])
    first.close()
    second = open_index(tmp_path / ".index", backend)
    try:
        assert second.file_hashes() == {RAW: "h-raw-1"}
        assert ids(second.search("competitors")) == [PRICING.id]
    finally:
        second.close()


def test_two_open_indexes_see_each_others_writes(backend: str, tmp_path: Path) -> None:
    """Two kernels on one memory root: each sees what the other wrote, none fails on a lock."""
    one = open_index(tmp_path / ".index", backend)
    two = open_index(tmp_path / ".index", backend)
    try:
        errors: list[BaseException] = []

        def write(target: SearchIndex, prefix: str) -> None:
            line = 1 if prefix == "a" else 2
            try:
                for n in range(15):
                    path = f"memory/2026-04-{n + 1:02d}.md"
                    note = doc(path, line, f"{prefix} note {n}", "shared kernel writes")
                    target.add(path, f"{prefix}{n}", [note])
            except BaseException as error:  # reported by the assertion below
                errors.append(error)

        threads = [
            threading.Thread(target=write, args=(one, "a")),
            threading.Thread(target=write, args=(two, "b")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert one.count() == two.count() == 30
        assert len(two.search("kernel", limit=100)) == 30
    finally:
        one.close()
        two.close()


def test_documents_of_a_file_in_line_order_and_its_hash(index: SearchIndex) -> None:
    later, first = doc(RAW, 9, "Later", "second entry"), doc(RAW, 1, "First", "first entry")
    index.replace_file(RAW, "h1", [later, first])
    index.replace_file("memory/2026-03-13.md", "h2", [doc("memory/2026-03-13.md", 1, "X", "x")])
    assert index.documents_of(RAW) == [first, later]
    assert index.file_hash(RAW) == "h1"
    index.add(RAW, "h3", [doc(RAW, 20, "Third", "third entry")])
    assert [d.line for d in index.documents_of(RAW)] == [1, 9, 20]
    assert index.file_hash(RAW) == "h3"
    index.remove_file(RAW)
    assert index.documents_of(RAW) == [] and index.file_hash(RAW) is None


def test_documents_by_id_returns_the_whole_documents_asked_for(filled: SearchIndex) -> None:
    found = filled.documents_by_id([LATER.id, PRICING.id, "memory/nowhere.md#L1", PRICING.id])
    assert found == {LATER.id: LATER, PRICING.id: PRICING}
    assert filled.documents_by_id([]) == {}
    filled.remove_file(RAW_LATER)
    assert filled.documents_by_id([LATER.id]) == {}


def test_version_moves_with_every_write_of_either_handle(backend: str, tmp_path: Path) -> None:
    """What a caller keeps from the index (a log's neighbours, documents read) is valid while
    `version()` is unchanged; a backend that cannot tell says None."""
    one = open_index(tmp_path / ".index", backend)
    two = open_index(tmp_path / ".index", backend)
    try:
        if one.version() is None:
            return
        one.replace_file(RAW, "h1", [PRICING])
        before = one.version()
        one.search("competitors", snippets=False)
        one.documents_by_id([PRICING.id])
        assert one.version() == before  # reads change nothing
        seen = []
        for write in (
            lambda: one.add(RAW, "h2", [ONBOARDING]),
            lambda: two.add(RAW_LATER, "h3", [LATER]),  # another kernel
            lambda: two.remove_file(RAW_LATER),
            lambda: one.replace_file(RAW, "h4", [PRICING]),
        ):
            write()
            seen.append(one.version())
        assert len({before, *seen}) == 5
    finally:
        one.close()
        two.close()


def test_documents_read_are_never_older_than_another_handles_write(
    backend: str, tmp_path: Path
) -> None:
    one = open_index(tmp_path / ".index", backend)
    two = open_index(tmp_path / ".index", backend)
    try:
        one.replace_file(RAW, "h1", [PRICING])
        assert [hit.doc for hit in one.search("competitors")] == [PRICING]
        assert one.documents_by_id([PRICING.id]) == {PRICING.id: PRICING}
        changed = doc(RAW, 1, "Competitor pricing", "- request: compare competitors again")
        two.replace_file(RAW, "h2", [changed])
        assert one.documents_by_id([PRICING.id]) == {PRICING.id: changed}
        assert one.documents_of(RAW) == [changed]
        two.remove_file(RAW)
        assert one.documents_by_id([PRICING.id]) == {}
    finally:
        one.close()
        two.close()


def test_fts5_reads_of_one_call_are_of_one_version(tmp_path: Path) -> None:
    """What an FTS5 read keeps is tagged with the version its rows were read at: a write by
    another kernel between the version and the rows cannot slip in (one read transaction)."""
    from hipo_jupyter.memory.search.migrations import _snapshot

    one = open_index(tmp_path / ".index", "fts5")
    two = open_index(tmp_path / ".index", "fts5")
    try:
        one.replace_file(RAW, "h1", [PRICING])
        with _snapshot(one._db):
            version = one.version()
            two.replace_file(RAW, "h2", [ONBOARDING])  # commits while `one` reads
            assert one.documents_of(RAW) == [PRICING] and one.version() == version
        assert one.version() != version
        assert one.documents_of(RAW) == [ONBOARDING]
        assert [hit.doc for hit in one.search("onboarding")] == [ONBOARDING]
    finally:
        one.close()
        two.close()


def test_documents_by_id_reads_many_at_once(index: SearchIndex) -> None:
    many = [doc(RAW, line, f"Turn {line}", f"- request: item {line}") for line in range(1, 1202)]
    index.replace_file(RAW, "h-many", many)
    found = index.documents_by_id([d.id for d in many])  # more than one batch of ids
    assert len(found) == len(many) and found[many[-1].id] == many[-1]


# -- searching -------------------------------------------------------------------------------


def test_hits_carry_the_whole_document(filled: SearchIndex) -> None:
    [hit] = filled.search("competitors")
    assert hit.doc == PRICING
    assert hit.score > 0


def test_scores_are_positive_and_descending(filled: SearchIndex) -> None:
    hits = filled.search("starter tier pricing")
    assert len(hits) >= 3
    scores = [hit.score for hit in hits]
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_limit(filled: SearchIndex) -> None:
    assert len(filled.search("starter tier", limit=1)) == 1
    assert filled.search("starter tier", limit=0) == []


def test_terms_are_or_ed(filled: SearchIndex) -> None:
    hits = ids(filled.search("welcome churn"))
    assert set(hits) == {ONBOARDING.id, LATER.id}


def test_stopwords_only_finds_nothing(filled: SearchIndex) -> None:
    assert filled.search("the and of") == []
    assert filled.search("   ") == []


@pytest.mark.parametrize("word", ["pricing", "priced", "prices", "PRICE"])
def test_stemming_matches_other_forms(index: SearchIndex, word: str) -> None:
    index.replace_file(
        RAW,
        "h",
        [
            doc(RAW, 1, "Vendor call", "the vendor priced the renewal high"),
            doc(RAW, 5, "Market check", "competitor prices went up in March"),
            doc(RAW, 9, "Hiring", "two engineers joined the team"),
        ],
    )
    assert set(ids(index.search(word))) == {f"{RAW}#L1", f"{RAW}#L5"}


def test_title_match_ranks_above_a_single_mention_in_long_text(index: SearchIndex) -> None:
    filler = " ".join(f"word{n} about the quarterly plan" for n in range(80))
    in_title = doc(RAW, 1, "Budget review", "notes from the meeting with finance")
    in_text = doc(RAW, 20, "Quarterly planning", filler + " and the budget came up once")
    others = [doc(RAW, 40 + n, f"Other {n}", f"unrelated topic number {n}") for n in range(6)]
    index.replace_file(RAW, "h", [in_text, in_title, *others])
    assert ids(index.search("budget")) == [in_title.id, in_text.id]


def test_title_weighs_more_than_text_of_the_same_length(index: SearchIndex) -> None:
    words = [f"filler{n}" for n in range(40)]
    in_title = doc(RAW, 1, "Budget review", " ".join(words))
    in_text = doc(RAW, 20, "Quarterly review", " ".join([*words[:20], "budget", *words[21:]]))
    others = [doc(RAW, 40 + n, f"Other {n}", f"unrelated topic number {n}") for n in range(6)]
    index.replace_file(RAW, "h", [in_text, in_title, *others])
    assert ids(index.search("budget")) == [in_title.id, in_text.id]


def test_tags_are_searchable(filled: SearchIndex) -> None:
    assert ids(filled.search("q1")) == [PRICING.id]


def test_unicode_text(index: SearchIndex) -> None:
    zurich = doc(RAW, 1, "Réunion à Zürich", "Budget für das Büro in Zürich geprüft; café ☕")
    tokyo = doc(RAW, 8, "東京 meeting", "議事録 東京 オフィス 移転")
    index.replace_file(RAW, "h", [zurich, tokyo])
    assert ids(index.search("zürich")) == [zurich.id]
    assert ids(index.search("Zurich")) == [zurich.id]  # accents folded, as unicode61 does
    assert ids(index.search("CAFÉ")) == [zurich.id]
    assert ids(index.search("東京")) == [tokyo.id]
    [hit] = index.search("büro")
    assert "Büro" in hit.snippet


def test_snippet_is_short_plain_text_around_the_term(index: SearchIndex) -> None:
    before = " ".join(f"alpha{n}" for n in range(120))
    after = " ".join(f"omega{n}" for n in range(120))
    long = doc(RAW, 1, "Long note", f"{before}\n\n- decision: adopt **kubernetes** now\n{after}")
    index.replace_file(RAW, "h", [long])
    [hit] = index.search("kubernetes")
    assert "kubernetes" in hit.snippet.lower()
    assert len(hit.snippet) <= 210
    assert "\n" not in hit.snippet
    assert "<b>" not in hit.snippet and "[" not in hit.snippet


def test_snippet_of_a_title_only_match_is_not_empty(filled: SearchIndex) -> None:
    [hit] = filled.search("dashboard")
    assert hit.snippet


def test_without_snippets_the_same_hits_come_back_with_none(index: SearchIndex) -> None:
    """`snippets=False` (a context packed from hundreds of candidates) ranks exactly as a
    search with them; only the cuts around the matches are left out."""
    before = " ".join(f"alpha{n}" for n in range(120))
    docs = [doc(RAW, 1 + 5 * n, f"Note {n}", f"{before} kubernetes " * (n + 1)) for n in range(4)]
    index.replace_file(RAW, "h", docs)
    full, bare = index.search("kubernetes"), index.search("kubernetes", snippets=False)
    assert [(h.doc, h.score) for h in bare] == [(h.doc, h.score) for h in full]
    assert all(h.snippet for h in full) and not any(h.snippet for h in bare)


@pytest.mark.parametrize("spaces", [1, 3, 900])
def test_plain_snippet_of_a_head_equals_that_of_the_whole_text(spaces: int) -> None:
    gap = " " * spaces
    text = gap.join(f"word{n}" for n in range(400))
    flat = " ".join(text.split())
    expected = flat[:199]
    expected = expected[: expected.rindex(" ")].rstrip() + "…"
    assert plain_snippet(text) == expected
    assert plain_snippet(f"short{gap}text") == "short text"


@pytest.mark.parametrize(
    "text",
    [
        'pricing AND "unbalanced',
        "NOT pricing",
        "pricing OR",
        "NEAR(pricing starter)",
        "title:pricing",
        "price*",
        "^pricing",
        "(pricing",
        "pricing)",
        "-pricing +starter",
        "pricing{}[]<>\\'~!@#$%&=|;,./?",
        "'pricing'",
        "pric\x00ing",
        "pricing" * 200,
    ],
)
def test_query_syntax_in_user_text_is_never_an_error(filled: SearchIndex, text: str) -> None:
    filled.search(text)  # must not raise


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def shared_index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One filled index per backend for the property test (hypothesis runs many examples)."""
    opened = open_index(tmp_path_factory.mktemp("shared") / ".index", request.param)
    opened.replace_file(RAW, "h", [PRICING, ONBOARDING])
    yield opened
    opened.close()


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=60))
def test_any_user_text_searches_without_error(shared_index: SearchIndex, text: str) -> None:
    hits = shared_index.search(text)
    assert all(hit.score > 0 for hit in hits)


def test_syntax_characters_do_not_hide_the_words(filled: SearchIndex) -> None:
    assert PRICING.id in ids(filled.search('"competitors" AND ('))
    assert ids(filled.search("title:dashboard")) == [LATER.id]


# -- filters ---------------------------------------------------------------------------------


def test_kinds_filter(filled: SearchIndex) -> None:
    assert ids(filled.search("starter", kinds={"daily"})) == [DAILY_NODE.id]
    assert set(ids(filled.search("starter", kinds={"raw"}))) == {PRICING.id, LATER.id}
    assert len(filled.search("starter", kinds={"raw", "daily"})) == 3
    assert filled.search("starter", kinds=set()) == []


def test_types_filter(filled: SearchIndex) -> None:
    assert ids(filled.search("starter", types={"user"})) == [LATER.id]
    assert ids(filled.search("starter", types={""})) == [DAILY_NODE.id]
    assert set(ids(filled.search("starter tier", types={"project", "user"}))) == {
        PRICING.id,
        LATER.id,
    }


def test_since_and_until_are_inclusive(filled: SearchIndex) -> None:
    assert ids(filled.search("starter", since="2026-03-20")) == [LATER.id]
    assert set(ids(filled.search("starter", until="2026-03-12"))) == {PRICING.id, DAILY_NODE.id}
    assert ids(filled.search("starter", since="2026-03-13", until="2026-03-20")) == [LATER.id]
    assert filled.search("starter", since="2026-03-13", until="2026-03-19") == []


def test_filters_combine(filled: SearchIndex) -> None:
    hits = filled.search("starter", kinds={"raw"}, types={"project"}, until="2026-03-12")
    assert ids(hits) == [PRICING.id]


def test_a_bad_date_filter_is_a_query_error(filled: SearchIndex) -> None:
    with pytest.raises(QueryError, match="YYYY-MM-DD"):
        filled.search("starter", since="last tuesday")


# -- documents() -----------------------------------------------------------------------------


def test_documents_round_trip_in_path_and_line_order(filled: SearchIndex) -> None:
    assert list(filled.documents()) == [PRICING, ONBOARDING, LATER, DAILY_NODE]


def test_documents_filtered_by_kind(filled: SearchIndex) -> None:
    assert list(filled.documents(kinds={"daily"})) == [DAILY_NODE]
    assert list(filled.documents(kinds={"weekly"})) == []


# -- opening and recovery --------------------------------------------------------------------


def test_unknown_backend_is_a_hipo_error(tmp_path: Path) -> None:
    with pytest.raises(HipoError, match="unknown search backend"):
        open_index(tmp_path, "lucene")


def test_whoosh_missing_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "whoosh", None)  # import whoosh now raises ImportError
    monkeypatch.delitem(sys.modules, "hipo_jupyter.memory.search.whoosh_backend", raising=False)
    with pytest.raises(HipoError, match=r"pip install 'hipo-jupyter\[whoosh\]'") as raised:
        open_index(tmp_path, "whoosh")
    assert "\n" not in str(raised.value)


def _corrupt_fts5(index_dir: Path, how: str) -> None:
    db_path = index_dir / FTS5_FILENAME
    if how == "garbage":
        db_path.write_bytes(b"this is not a database\n" * 100)
    elif how == "foreign":
        other = sqlite3.connect(db_path)
        other.execute("create table invoices (id integer primary key, total real)")
        other.commit()
        other.close()
    elif how == "truncated":
        data = db_path.read_bytes()
        db_path.write_bytes(data[: len(data) // 3])
    elif how == "header-damaged":
        data = bytearray(db_path.read_bytes())
        data[100:4096] = b"\xff" * (4096 - 100)
        db_path.write_bytes(bytes(data))
    elif how == "missing-table":
        other = sqlite3.connect(db_path)
        other.execute("drop table files")
        other.commit()
        other.close()
    elif how == "folder":
        db_path.mkdir()
        (db_path / "stray.txt").write_text("x")


@pytest.mark.parametrize(
    "how", ["garbage", "foreign", "truncated", "header-damaged", "missing-table", "folder"]
)
def test_open_index_recovers_a_corrupt_fts5_file(tmp_path: Path, how: str) -> None:
    index_dir = tmp_path / ".index"
    if how not in ("garbage", "foreign", "folder"):
        seeded = open_index(index_dir)
        seeded.replace_file(RAW, "h", [PRICING, ONBOARDING])
        seeded.close()
    else:
        index_dir.mkdir()
    _corrupt_fts5(index_dir, how)
    recovered = open_index(index_dir)
    try:
        assert recovered.count() == 0
        assert recovered.file_hashes() == {}
        recovered.replace_file(RAW, "h2", [PRICING])
        assert ids(recovered.search("competitors")) == [PRICING.id]
    finally:
        recovered.close()


@pytest.mark.skipif(not HAS_WHOOSH, reason="whoosh is not installed")
@pytest.mark.parametrize("how", ["garbage-files", "file-in-place", "truncated-segments"])
def test_open_index_recovers_a_corrupt_whoosh_index(tmp_path: Path, how: str) -> None:
    index_dir = tmp_path / ".index"
    seeded = open_index(index_dir, "whoosh")
    seeded.replace_file(RAW, "h", [PRICING, ONBOARDING])
    seeded.close()
    whoosh_dir = index_dir / "whoosh"
    if how == "garbage-files":
        for path in whoosh_dir.iterdir():
            path.write_bytes(b"\x00garbage" * 10)
    elif how == "file-in-place":
        for path in whoosh_dir.iterdir():
            path.unlink()
        whoosh_dir.rmdir()
        whoosh_dir.write_text("not a folder")
    elif how == "truncated-segments":
        for path in whoosh_dir.iterdir():
            if path.suffix == ".seg":
                path.write_bytes(path.read_bytes()[:10])
    recovered = open_index(index_dir, "whoosh")
    try:
        recovered.replace_file(RAW, "h2", [PRICING])
        assert recovered.file_hashes() == {RAW: "h2"}
        assert ids(recovered.search("competitors")) == [PRICING.id]
    finally:
        recovered.close()


def test_fts5_records_its_migrations_and_uses_wal(tmp_path: Path) -> None:
    opened = open_index(tmp_path / ".index")
    opened.close()
    db = sqlite3.connect(tmp_path / ".index" / FTS5_FILENAME)
    try:
        applied = [row[0] for row in db.execute("select name from _migrations order by rowid")]
        assert applied == [fn.__name__ for fn in MIGRATIONS]
        assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_fts5_reopen_does_not_reapply_migrations(tmp_path: Path) -> None:
    for _ in range(2):
        open_index(tmp_path / ".index").close()
    db = sqlite3.connect(tmp_path / ".index" / FTS5_FILENAME)
    try:
        assert db.execute("select count(*) from _migrations").fetchone()[0] == len(MIGRATIONS)
    finally:
        db.close()
