"""Forget's later steps: the derived copies of a forgotten checkpoint's text found and removed.

`forget/forgetting` rewrites the raw log; then these find the text wherever the memory derived
it: conversations and last-sent records have its words replaced (`scrub_conversations`), each
SQLite file of the index is compacted so no free page keeps it (`compact_sqlite`), and a derived
store still holding it is deleted to be rebuilt (`drop_derived_holding`). The text is looked for
as bytes (`needles`) when the forget has it, or by the ledger's keyed hashes (`also`,
`ForgetLedger.hides`) when a forget killed after the log's rewrite is finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..disk import anchored
from ..disk.layout import CONVERSATIONS_DIR
from ..errors import HipoError
from .ledger import FORGOTTEN_MARK

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from ..disk.store import Store
    from ..search.indexing import IndexKeeper
    from ..search.semantic import SemanticIndex

SCAN_LIMIT = 512 * 1024 * 1024  # files larger than this are read in chunks


class ScrubbedMemory(Protocol):
    """What these steps reach: the files, the index keeper and the vectors."""

    root: Path
    store: Store
    config: MemoryConfig
    semantic: SemanticIndex
    _indexer: IndexKeeper


Holds = Callable[[str], bool]  # whether a text holds a piece of a forget (`ForgetLedger.hides`)


def holds(path: Path, needles: list[bytes], also: Holds | None = None) -> bool:
    """Whether the regular file `path` contains any of `needles` (read in chunks), or a
    piece `also` finds in its text (read whole, up to SCAN_LIMIT)."""
    if also is not None:
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            if also(handle.read(SCAN_LIMIT).decode("utf-8", errors="replace")):
                return True
    if not needles:
        return False
    overlap = max(len(n) for n in needles)
    try:
        with open(path, "rb") as handle:
            tail = b""
            while chunk := handle.read(1 << 20):
                data = tail + chunk
                if any(needle in data for needle in needles):
                    return True
                tail = data[-overlap:]
    except OSError:
        return False
    return False


def scrub_conversations(
    memory: ScrubbedMemory,
    pieces: list[str],
    rewrite: Callable[[str], str] | None = None,
    *,
    forgotten_ids: Collection[str] = (),
) -> list[str]:
    """`%%ask` conversations and last-sent records: a turn lineage says was made from a
    forgotten checkpoint (`sources`) is dropped with its question (`without_lineage`), then
    every string goes through `rewrite` (the quoted lines and values of the note replaced by
    FORGOTTEN_MARK: `forget/ledger.quote_scrubber`, or the ledger's `scrubber`). The other
    turns stay, so the conversation goes on. A file that is not JSON and holds a piece's bytes
    is deleted (it is derived)."""
    folder = memory.root / CONVERSATIONS_DIR
    if not (pieces or rewrite or forgotten_ids) or not folder.is_dir() or folder.is_symlink():
        return []
    change = rewrite or (lambda text: text)
    scrubbed = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.is_symlink() or path.suffix != ".json":
            continue
        raw = path.read_bytes()
        try:
            data = json.loads(raw)
        except ValueError:
            if any(piece.encode("utf-8") in raw for piece in pieces):
                anchored.unlink(memory.root, memory.store.relative(path))
                scrubbed.append(memory.store.relative(path))
            continue
        fresh = _map_strings(without_lineage(data, forgotten_ids), change)
        if fresh == data:
            continue
        text = json.dumps(fresh, ensure_ascii=False, indent=1)
        anchored.write_bytes(memory.root, memory.store.relative(path), text.encode())
        scrubbed.append(memory.store.relative(path))
    return scrubbed


def made_from(value: object, forgotten_ids: Collection[str]) -> bool:
    """Whether a saved turn's or zone's `sources` (its lineage) name a forgotten checkpoint."""
    return isinstance(value, list) and any(source in forgotten_ids for source in value)


def without_lineage(data: object, forgotten_ids: Collection[str]) -> object:
    """A saved conversation (`llm/conversation`'s JSON) less what lineage says was made from a
    forgotten checkpoint: each turn whose `sources` name one, and the anchor or summary whose
    `anchor_sources` / `summary_sources` do (replaced by FORGOTTEN_MARK). Anything else, and
    a file saved before lineage was kept, is returned as it is."""
    if not forgotten_ids or not isinstance(data, dict) or not isinstance(data.get("active"), list):
        return data
    fresh = dict(data)
    fresh["active"] = [turn for turn in data["active"]
                       if not (isinstance(turn, dict) and made_from(turn.get("sources"),
                                                                    forgotten_ids))]  # fmt: skip
    for zone in ("anchor", "summary"):
        if made_from(data.get(f"{zone}_sources"), forgotten_ids):
            fresh[zone] = FORGOTTEN_MARK
            fresh[f"{zone}_sources"] = []
    return fresh


def _map_strings(value: object, change: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    return value


def _sqlite_files(memory: ScrubbedMemory) -> Iterator[Path]:
    index = memory.store.index_dir
    if index.is_dir():
        for path in sorted(index.iterdir()):
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as handle:
                    if handle.read(16) == b"SQLite format 3\x00":
                        yield path


def compact_sqlite(path: Path) -> None:
    """Leave no free page or old segment of `path` holding deleted text: `secure_delete`
    (freed pages are zeroed), FTS5 tables merged (`optimize` drops deleted rows' terms),
    VACUUM (a new file of live pages only) and the write-ahead log truncated."""
    connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        connection.execute("PRAGMA secure_delete = ON")
        tables = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts5%'"
        ).fetchall()
        for (table,) in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            connection.execute(f"INSERT INTO {quoted}({quoted}) VALUES ('optimize')")
        connection.execute("VACUUM")
        busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise sqlite3.OperationalError("another process is reading it; try again")
    finally:
        connection.close()


def compact_sqlite_files(memory: ScrubbedMemory) -> list[str]:
    memory._indexer.close()
    memory.semantic.close()
    done = []
    for path in _sqlite_files(memory):
        try:
            compact_sqlite(path)
        except sqlite3.Error as error:
            raise HipoError(f"could not compact {memory.store.relative(path)}: {error}") from error
        done.append(memory.store.relative(path))
    return done


def _derived_files(memory: ScrubbedMemory) -> Iterator[Path]:
    """Every regular file of the memory that is not a raw log, a node, ROOT.md or the
    conversations (those are rewritten above): the index folder, state and caches."""
    for folder, _dirs, names in os.walk(memory.store.index_dir):
        for name in names:
            yield Path(folder) / name


def drop_derived_holding(
    memory: ScrubbedMemory, needles: list[bytes], also: Holds | None = None
) -> list[str]:
    """A derived store that still holds the text after the sync and compaction (the graph's
    files, a cache) is deleted, and Whoosh's folder always (its segments are compressed: no
    scan can vouch for them): each is rebuilt from the logs when needed."""
    dropped: list[str] = []
    index = memory.store.index_dir
    whoosh = index / "whoosh"  # its segments keep a deleted document's terms, compressed
    if memory.config.search_backend == "whoosh" and whoosh.is_dir():
        memory._indexer.close()
        shutil.rmtree(whoosh, ignore_errors=True)
        dropped.append(memory.store.relative(whoosh))
    for path in list(_derived_files(memory)):
        if path.is_symlink() or not path.is_file() or not holds(path, needles, also):
            continue
        top = index / path.relative_to(index).parts[0]
        if top.is_dir():
            shutil.rmtree(top, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                top.unlink()
        dropped.append(memory.store.relative(top))
    return dropped


def regular_files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                yield path
