"""The Whoosh search backend (extra `[whoosh]`, package `whoosh-reloaded`), behind `SearchIndex`.

On disk: `index_dir / "whoosh/"`, a Whoosh file index (segments, a table of contents, a write
lock). Each Document is one Whoosh document (record "doc"); each indexed file is one more
(record "file", its path and hash), so a file's documents and its hash change in one commit,
the same atomic unit as the FTS5 backend's transaction.

It analyses text the way FTS5's `porter unicode61` does: runs of letters and digits, lower-cased,
accents folded, Porter-stemmed; queries come from the same `query_terms` as FTS5 (stopwords
dropped, terms OR-ed), built as query objects, so user text is never Whoosh query syntax.
Scoring is Whoosh's BM25F with the title and tags boosted above the text.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from whoosh import fields, index, query
from whoosh.analysis import CharsetFilter, LowercaseFilter, RegexTokenizer, StemFilter
from whoosh.lang.porter import stem
from whoosh.support.charset import accent_map
from whoosh.writing import CLEAR, LockError

from ..errors import HipoError, QueryError
from .contract import ANY_HASH, PROVENANCE_FIELDS, Document, SearchHit, check_paths, remove_path
from .query import (
    SNIPPET_CHARS,
    TAGS_WEIGHT,
    TEXT_WEIGHT,
    TITLE_WEIGHT,
    WORD,
    normalize_day,
    plain_snippet,
    query_terms,
)

WHOOSH_DIRNAME = "whoosh"
WRITE_TIMEOUT_S = 10.0

ANALYZER = (
    RegexTokenizer(WORD.pattern) | LowercaseFilter() | CharsetFilter(accent_map) | StemFilter()
)

SCHEMA = fields.Schema(
    id=fields.ID(stored=True, unique=True),
    record=fields.ID(),  # "doc" | "file"
    path=fields.ID(stored=True),
    line=fields.STORED(),
    kind=fields.ID(stored=True),
    date=fields.ID(stored=True),
    type=fields.ID(stored=True),
    title=fields.TEXT(analyzer=ANALYZER, stored=True),
    text=fields.TEXT(analyzer=ANALYZER, stored=True),
    tags=fields.TEXT(analyzer=ANALYZER, stored=True),  # stored as "\n"-joined
    hash=fields.STORED(),
    provenance=fields.STORED(),
    writer=fields.STORED(),
    via=fields.STORED(),
    provider=fields.STORED(),
    conversation=fields.STORED(),
    speaker=fields.STORED(),
    proposes=fields.STORED(),
)

_FIELD_BOOSTS = {"title": TITLE_WEIGHT, "text": TEXT_WEIGHT, "tags": TAGS_WEIGHT}


def _file_record_id(path: str) -> str:
    return f"@file:{path}"


def build_whoosh_query(text: str) -> query.Query | None:
    """User text -> an OR of every term over title, text and tags; None if nothing searchable."""
    alternatives: list[query.Query] = []
    for words in query_terms(text):
        tokens = [token.text for token in ANALYZER(" ".join(words), mode="query")]
        if not tokens:
            continue
        for field, boost in _FIELD_BOOSTS.items():
            if len(tokens) == 1:
                alternatives.append(query.Term(field, tokens[0], boost=boost))
            else:
                alternatives.append(query.Phrase(field, tokens, boost=boost))
    return query.Or(alternatives) if alternatives else None


def _filter_query(
    kinds: Collection[str] | None,
    types: Collection[str] | None,
    since: str | None,
    until: str | None,
) -> query.Query | None:
    """The filters as one query, or None. File records need no filtering out: they have no
    title, text or tags to match, nor kind, type or date to pass a filter."""
    parts: list[query.Query] = []
    if kinds is not None:
        parts.append(query.Or([query.Term("kind", kind) for kind in kinds]))
    if types is not None:
        parts.append(query.Or([query.Term("type", type_) for type_ in types]))
    if since is not None or until is not None:
        parts.append(query.TermRange("date", since, until))
    return query.And(parts) if parts else None


@functools.lru_cache(maxsize=50_000)
def _fold(word: str) -> str:
    """A word as ANALYZER indexes it (lower-cased, accents folded, stemmed), without the cost of
    running the whole token pipeline on every word of a long text."""
    return stem(word.lower().translate(accent_map))


def _snippet(text: str, query_words: set[str]) -> str:
    """~SNIPPET_CHARS of `text` around the first word that matches the query (Whoosh's own
    highlighter re-analyses every word of every hit: most of a search's time on long nodes)."""
    for match in WORD.finditer(text):
        if _fold(match.group()) in query_words:
            start = max(0, match.start() - SNIPPET_CHARS // 3)
            if start:
                space = text.find(" ", start, match.start())
                start = space + 1 if space != -1 else start
            prefix = "…" if start else ""
            return prefix + plain_snippet(text[start:], SNIPPET_CHARS - len(prefix))
    return ""


def _stored_to_document(fields_: dict[str, Any]) -> Document:
    tags = fields_.get("tags") or ""
    return Document(
        id=fields_["id"],
        path=fields_["path"],
        line=fields_["line"],
        kind=fields_["kind"],
        date=fields_["date"],
        type=fields_.get("type", ""),
        title=fields_.get("title", ""),
        text=fields_.get("text", ""),
        tags=tuple(tags.split("\n")) if tags else (),
        provenance=fields_.get("provenance", ""),
        writer=fields_.get("writer", ""),
        via=fields_.get("via", ""),
        provider=fields_.get("provider", ""),
        conversation=fields_.get("conversation", ""),
        speaker=fields_.get("speaker", ""),
        proposes=bool(fields_.get("proposes", False)),
    )


def _hit(stored: dict[str, Any], score: float, query_words: set[str]) -> SearchHit:
    doc = _stored_to_document(stored)
    snippet = ""
    if query_words:  # none: the caller asked for no snippets (`SearchIndex.search`)
        snippet = _snippet(doc.text, query_words) or _snippet(doc.title, query_words)
    if query_words and not snippet:
        snippet = plain_snippet(doc.text)
    return SearchHit(doc=doc, score=float(score), snippet=snippet)


def _doc_fields(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "record": "doc",
        "path": doc.path,
        "line": doc.line,
        "kind": doc.kind,
        "date": doc.date,
        "type": doc.type,
        "title": doc.title,
        "text": doc.text,
        "tags": "\n".join(doc.tags),
        "provenance": doc.provenance,
        **{name: getattr(doc, name) for name in PROVENANCE_FIELDS},
    }


class _Outdated(Exception):
    """replace_file(if_hash=...) found another hash recorded: write nothing."""


class WhooshIndex:
    """Whoosh search index in `index_dir / "whoosh/"`. Use `open_index(..., "whoosh")`."""

    name = "whoosh"

    def __init__(self, directory: Path) -> None:
        self.path = directory
        self._lock = threading.RLock()
        if index.exists_in(directory):
            self._ix = index.open_dir(str(directory))
        else:
            self._ix = index.create_in(str(directory), SCHEMA)
        if set(self._ix.schema.names()) != set(SCHEMA.names()):
            raise ValueError(f"foreign Whoosh schema: {self._ix.schema.names()}")
        self._searcher = self._ix.searcher()
        self._searcher.doc_count()  # reads the segments: fails here if they are damaged

    # -- writing ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self, **commit_options: Any) -> Iterator[Any]:
        """One Whoosh writer: committed if the block ends well, cancelled (lock freed) if not.
        A writer waits up to WRITE_TIMEOUT_S for another kernel's writer to finish."""
        with self._lock:
            try:
                writer = self._ix.writer(timeout=WRITE_TIMEOUT_S)
            except LockError as error:
                raise HipoError(
                    f"the search index {self.path} is locked by another process; try again"
                ) from error
            try:
                yield writer
            except BaseException:
                writer.cancel()
                raise
            writer.commit(**commit_options)

    def _put(self, writer: Any, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        for doc in docs:
            writer.update_document(**_doc_fields(doc))
        writer.update_document(id=_file_record_id(path), record="file", path=path, hash=file_hash)

    def replace_file(
        self, path: str, file_hash: str, docs: Sequence[Document], *, if_hash: object = ANY_HASH
    ) -> bool:
        check_paths(path, docs)
        try:
            with self._writing() as writer:
                if if_hash is not ANY_HASH:
                    with self._ix.searcher() as searcher:  # the latest commit: we hold the lock
                        record = searcher.document(id=_file_record_id(path))
                    if (record["hash"] if record else None) != if_hash:
                        raise _Outdated  # the writer is cancelled: nothing written
                writer.delete_by_term("path", path)
                self._put(writer, path, file_hash, docs)
        except _Outdated:
            return False
        return True

    def add(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        check_paths(path, docs)
        with self._writing() as writer:
            self._put(writer, path, file_hash, docs)

    def remove_file(self, path: str) -> None:
        with self._writing() as writer:
            writer.delete_by_term("path", path)

    def clear(self) -> None:
        with self._writing(mergetype=CLEAR):
            pass

    # -- reading ----------------------------------------------------------------------------

    def _fresh_searcher(self):
        """The shared searcher, reopened if another writer (or this one) committed since.

        (Not `Searcher.refresh()`: it fails when the old reader is an empty index's.)"""
        if not self._searcher.up_to_date():
            self._searcher.close()
            self._searcher = self._ix.searcher()
        return self._searcher

    def file_hashes(self) -> dict[str, str]:
        with self._lock:
            searcher = self._fresh_searcher()
            return {stored["path"]: stored["hash"] for stored in searcher.documents(record="file")}

    def count(self) -> int:
        with self._lock:
            return sum(1 for _ in self._fresh_searcher().document_numbers(record="doc"))

    def documents(self, *, kinds: Collection[str] | None = None) -> Iterator[Document]:
        with self._lock:
            docs = [
                _stored_to_document(stored)
                for stored in self._fresh_searcher().documents(record="doc")
                if kinds is None or stored["kind"] in kinds
            ]
        docs.sort(key=lambda doc: (doc.path, doc.line))
        return iter(docs)

    def documents_of(self, path: str) -> list[Document]:
        with self._lock:
            stored = self._fresh_searcher().documents(path=path, record="doc")
            docs = [_stored_to_document(fields_) for fields_ in stored]
        return sorted(docs, key=lambda doc: doc.line)

    def file_hash(self, path: str) -> str | None:
        with self._lock:
            record = self._fresh_searcher().document(id=_file_record_id(path))
        return record.get("hash") if record else None

    def version(self) -> None:
        """None (the contract allows it): nothing read from a Whoosh index is kept, every
        read asks the index as before."""
        return None

    def documents_by_id(self, ids: Collection[str]) -> dict[str, Document]:
        found: dict[str, Document] = {}
        with self._lock:
            searcher = self._fresh_searcher()
            for doc_id in dict.fromkeys(ids):
                stored = searcher.document(id=doc_id)
                if stored is not None and "kind" in stored:  # a document, not a file record
                    found[doc_id] = _stored_to_document(stored)
        return found

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        snippets: bool = True,
    ) -> list[SearchHit]:
        since, until = normalize_day(since, "since"), normalize_day(until, "until")
        parsed = build_whoosh_query(query)
        if parsed is None or limit <= 0:
            return []
        if (kinds is not None and not kinds) or (types is not None and not types):
            return []
        with self._lock:
            searcher = self._fresh_searcher()
            try:
                results = searcher.search(
                    parsed, limit=limit, filter=_filter_query(kinds, types, since, until)
                )
                query_words = (
                    {text for _field, text in parsed.iter_all_terms()} if snippets else set()
                )
                return [_hit(result.fields(), result.score, query_words) for result in results]
            except HipoError:
                raise
            except Exception as error:  # Whoosh raises plain exceptions for bad queries
                raise QueryError(f"search could not run {query!r}: {error}") from error

    def close(self) -> None:
        with self._lock:
            self._searcher.close()
            self._ix.close()


def open_whoosh(index_dir: Path) -> WhooshIndex:
    """Open or create the Whoosh index; a damaged or foreign one is replaced by an empty one."""
    directory = Path(index_dir) / WHOOSH_DIRNAME
    for attempt in range(2):
        if directory.exists() and not directory.is_dir():
            remove_path(directory)
        try:
            directory.mkdir(exist_ok=True)
            return WhooshIndex(directory)
        except LockError as error:
            raise HipoError(f"the search index {directory} is locked; try again") from error
        except PermissionError as error:  # not damage: never delete what we may not read
            raise HipoError(f"cannot open the search index {directory}: {error}") from error
        except Exception as error:  # damaged segments raise anything from EOFError to KeyError
            if attempt:
                raise HipoError(f"cannot create the search index {directory}: {error}") from error
            remove_path(directory)
    raise AssertionError("unreachable")
