"""Forget's later steps: the derived copies of a forgotten checkpoint's text found and removed.

`views/forgetting` rewrites the raw log; then these find the text wherever the memory derived
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..disk import anchored
from ..disk.layout import CONVERSATIONS_DIR
from ..errors import HipoError
from ..recall.forgotten import FORGOTTEN_MARK

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
    memory: ScrubbedMemory, pieces: list[str], rewrite: Callable[[str], str] | None = None
) -> list[str]:
    """`%%ask` conversations and last-sent records: each string quoting the text (its
    `pieces`, or what `rewrite` finds by the ledger's hashes) has those words replaced by
    FORGOTTEN_MARK (the turns stay, so the conversation goes on)."""
    folder = memory.root / CONVERSATIONS_DIR
    if not (pieces or rewrite) or not folder.is_dir():
        return []
    scrubbed = []
    longest_first = sorted(pieces, key=len, reverse=True)
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.is_symlink() or path.suffix != ".json":
            continue
        raw = path.read_bytes()
        if rewrite is not None:
            if _rewrite_json(memory, path, raw, rewrite):
                scrubbed.append(memory.store.relative(path))
            continue
        if not any(piece.encode("utf-8") in raw for piece in pieces):
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if data is None:
            anchored.unlink(memory.root, memory.store.relative(path))
        else:
            fresh = json.dumps(_replace_in(data, longest_first), ensure_ascii=False, indent=1)
            anchored.write_bytes(memory.root, memory.store.relative(path), fresh.encode())
        scrubbed.append(memory.store.relative(path))
    return scrubbed


def _rewrite_json(
    memory: ScrubbedMemory, path: Path, raw: bytes, rewrite: Callable[[str], str]
) -> bool:
    """Rewrite every string of the JSON file `path` with `rewrite`; True when one changed."""
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    fresh = _map_strings(data, rewrite)
    if fresh == data:
        return False
    text = json.dumps(fresh, ensure_ascii=False, indent=1)
    anchored.write_bytes(memory.root, memory.store.relative(path), text.encode())
    return True


def _replace_in(value: object, pieces: list[str]) -> object:
    def replaced(text: str) -> str:
        for piece in pieces:
            text = text.replace(piece, FORGOTTEN_MARK)
        return text

    return _map_strings(value, replaced)


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
