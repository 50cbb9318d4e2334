"""The search contract: what a document is, what a hit is, what every backend offers.

Both backends keep it (`fts5.py`, the default, and `whoosh_backend.py`), and so does the team
database (`hipo_jupyter/team`), which turns its rows into `Document`s and `SearchHit`s; recall
knows only this contract, never a backend. `tests/test_search_contract.py` holds every backend
to it. Which backend a memory uses is chosen in one place, `indexing.open_index`.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

BACKENDS = ("fts5", "whoosh")


@dataclass(frozen=True)
class Document:
    """One searchable piece of memory: a checkpoint, or a section of a node or knowledge file."""

    id: str  # unique in the index: f"{path}#L{line}"
    path: str  # relative to the memory root, e.g. "memory/2026-03-12.md"
    line: int  # 1-based
    kind: str  # "raw" | "daily" | "weekly" | "monthly" | "root" | "knowledge"
    date: str  # ISO date "YYYY-MM-DD" (period start for nodes): filters and recency
    type: str  # checkpoint type (project|feedback|user|reference) or "" for nodes
    title: str
    text: str
    tags: tuple[str, ...] = ()
    provenance: str = ""  # a raw checkpoint's `provenance_text` (notebook, cell, via, model)
    # Provenance as typed fields, read from the checkpoint when it is indexed: what every
    # decision reads (who may supersede whom, what is a write-back or an import, which
    # conversation), never the display phrase above, which starts with a notebook's name.
    writer: str = ""  # `disk/trust.writer_of`: user | claude | agent | import | teammate; "" node
    via: str = ""  # the front end that wrote it (`disk/provenance.FRONT_ENDS`), "" if unsaid
    provider: str = ""  # a write-back's SDK (anthropic, openai, litellm), "" if unsaid
    conversation: str = ""  # a `%%ask` write-back's conversation identity, "" if none
    speaker: str = ""  # an imported turn's speaker (`Checkpoint.speaker`), "" if unsaid
    # An agent's proposed correction (`proposes=`): what it is, never whose id (a forgotten
    # checkpoint's id must not stay in the index through a correction that named it).
    proposes: bool = False


PROVENANCE_FIELDS = ("writer", "via", "provider", "conversation", "speaker", "proposes")
"""The typed provenance fields of a `Document`, as every backend stores them."""

ANY_HASH = object()  # `replace_file(..., if_hash=...)` not given: replace whatever is recorded


def document_id(path: str, line: int) -> str:
    """The id of the document at `line` of `path`."""
    return f"{path}#L{line}"


@dataclass(frozen=True)
class SearchHit:
    doc: Document
    score: float  # higher is better, always > 0
    snippet: str  # plain text around the matched terms, at most ~SNIPPET_CHARS ("" if not asked)


class SearchIndex(Protocol):
    """What every backend offers; `tests/test_search_contract.py` holds them all to it."""

    name: str

    def replace_file(
        self, path: str, file_hash: str, docs: Sequence[Document], *, if_hash: object = ANY_HASH
    ) -> bool:
        """Make `docs` the whole content of `path` and record its hash, in one transaction.
        With `if_hash` (a hash, or None for a file not indexed), only if the recorded hash is
        still that one: a sync that read a file must not overwrite what another process
        indexed since (its append is newer). Returns whether it wrote."""

    def add(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        """Append `docs` to `path` (a raw-log append; a doc with a known id replaces it)."""

    def remove_file(self, path: str) -> None: ...

    def file_hashes(self) -> dict[str, str]: ...

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
        """Ranked hits, best first. `snippets=False`: each hit's snippet is "" (a caller cuts
        one from the text if it shows it): a caller that shows whole texts (a context packed
        to a budget, from hundreds of candidates) need not pay for cuts it drops."""

    def documents(self, *, kinds: Collection[str] | None = None) -> Iterator[Document]: ...

    def documents_by_id(self, ids: Collection[str]) -> dict[str, Document]:
        """The documents with these ids (unknown ids left out): hybrid recall's vector hits,
        read in one go rather than by parsing each hit's Markdown file."""

    def documents_of(self, path: str) -> list[Document]:
        """The documents of one file in line order (a raw log's checkpoints: the neighbours
        of a hit, read from the index rather than by parsing the log again)."""

    def file_hash(self, path: str) -> str | None:
        """The hash recorded for `path` (None: not indexed): what a cache of `documents_of`
        is keyed by."""

    def version(self) -> Hashable | None:
        """A value that changes whenever the index may have changed, by this handle or any
        other (another kernel): what is read from the index may be kept while it holds, so
        a recall asks a log's hash once, not once per query. None: this backend cannot tell
        cheaply, and nothing read may be kept."""

    def count(self) -> int: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


def check_paths(path: str, docs: Sequence[Document]) -> None:
    for doc in docs:
        if doc.path != path:
            raise ValueError(f"document {doc.id!r} belongs to {doc.path!r}, not {path!r}")


def remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
