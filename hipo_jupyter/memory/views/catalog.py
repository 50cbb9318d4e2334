"""Every checkpoint of the raw logs, parsed once and kept while its log is unchanged.

The rules index, `Memory.frame()`, `hipo export` and the graph all start from the list of
checkpoints. Parsing a year of raw logs for each of them costs seconds, so:

- in the process, each log's checkpoints are kept against its (size, mtime) and only a changed
  log is read again;
- on disk, `memory/.index/catalog.sqlite` keeps, against the same stamp, each log's table rows
  (`frame.checkpoint_row`) as JSON lines, the rows of its rules apart, and the rows as the
  exports write them (flat JSON lines for parquet, CSV lines). A fresh process (`hipo export`,
  a kernel's first Layer 1) reads them instead of parsing every log, and an export joins them
  as they are; a changed log is parsed and its entry replaced alone. The rules column is tiny,
  so Layer 1 reads only that one.

The raw logs stay the truth: the file is derived, deleted and rebuilt when it cannot be read,
and a failure to write it costs only speed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

from ..disk.checkpoint import Checkpoint, parse_log
from ..disk.jsonread import parse_json
from ..disk.store import MEMORY_DIR, Store
from ..errors import ParseError
from .frame import checkpoint_row, csv_lines, flat_rows, row_rules

ROWS_FILE = "catalog.sqlite"
ROW_CACHE_SHOWN = f"{MEMORY_DIR}/.index/{ROWS_FILE}"
FEW_LOGS = 50  # up to this many stale logs are looked up by name, more in one scan
ROWS_VERSION = 5  # bump when the table or checkpoint_row changes: every log is parsed again
ROWS_SCHEMA = """
CREATE TABLE IF NOT EXISTS logs (
    name TEXT PRIMARY KEY,     -- raw log, YYYY-MM-DD.md
    size INTEGER NOT NULL,     -- its stamp when the rows were made
    mtime_ns INTEGER NOT NULL,
    version INTEGER NOT NULL,  -- ROWS_VERSION they were made with
    rows TEXT NOT NULL,        -- frame.checkpoint_row of each checkpoint, a JSON line each
    rules TEXT NOT NULL,       -- the same for the rows that state a rule (usually empty)
    flat TEXT NOT NULL,        -- frame.flat_rows of them, a JSON line each (for parquet)
    csv TEXT NOT NULL          -- the same flat rows as CSV lines, no header (for csv)
)
"""
COLUMNS = ("rows", "rules", "flat", "csv")
Stamp = tuple[int, int]
Rows = list[dict[str, Any]]


def json_lines(rows: Rows) -> str:
    """Rows as JSON lines, as `hipo export --format jsonl` writes them."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


RENDER: dict[str, Callable[[Rows], str]] = {
    "rows": json_lines,
    "rules": lambda rows: json_lines([row for row in rows if row["trigger"]]),
    "flat": lambda rows: json_lines(flat_rows(rows)),
    "csv": lambda rows: csv_lines(flat_rows(rows)),
}


def parse_lines(text: str) -> Rows:
    """Rows from their JSON lines (the row cache in memory/.index/), bounded like every JSON
    hipo reads; a line that is not a row is a ParseError naming the cache, not a traceback."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        row = parse_json(line, ROW_CACHE_SHOWN, line=number)
        if not isinstance(row, dict):
            raise ParseError(f"{ROW_CACHE_SHOWN} line {number}: not a row (delete it to rebuild)")
        rows.append(row)
    return rows


class CheckpointCatalog:
    """`checkpoints()` of one store, re-reading only the raw logs whose stamp changed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_log: dict[str, tuple[tuple[int, int], list[Checkpoint]]] = {}
        self._texts: dict[str, dict[str, tuple[Stamp, str]]] = {c: {} for c in COLUMNS}
        self._parsed: dict[str, tuple[str, Rows]] = {}  # log -> (its rows text, the rows)
        self.rows_path: Path = store.index_dir / ROWS_FILE

    def rows(self) -> Rows:
        """The table row (`frame.checkpoint_row`) of every checkpoint, oldest day first, from
        the row cache; only the logs whose stamp changed are parsed. Shared: do not mutate."""
        return [row for name, text in self._cached("rows") for row in self._rows_of(name, text)]

    def rule_rows(self, stamps: dict[str, Stamp] | None = None) -> Rows:
        """The rows of the checkpoints that state a rule, oldest first: what Layer 1 needs,
        read from the small rules column of the row cache. `stamps`: the raw logs' stamps
        when the caller has just listed them (`Store.raw_stamps`)."""
        return [row for _, text in self._cached("rules", stamps) for row in parse_lines(text)]

    def export_lines(self, column: str) -> str:
        """Every row as the export writes it, `superseded_by` set: a JSON line of the nested
        row ("rows", the jsonl export) or of the flat one ("flat", for parquet), or a CSV line
        ("csv"), joined from the cache as they are. Only the logs holding a superseded rule
        are rendered again, from their rows."""
        superseded = {(rule.file, rule.line): rule.superseded_by
                      for rule in row_rules(self.rule_rows()) if rule.superseded_by}  # fmt: skip
        touched = {file.removeprefix(f"{MEMORY_DIR}/") for file, _ in superseded}
        render = RENDER[column]
        texts = self._cached(column)
        rows_texts = dict(self._cached("rows")) if touched else {}
        out = []
        for name, text in texts:
            if name in touched:
                rows = [dict(row, superseded_by=superseded.get((row["file"], row["line"])))
                        for row in self._rows_of(name, rows_texts[name])]  # fmt: skip
                text = render(rows)
            out.append(text)
        return "".join(out)

    def _rows_of(self, name: str, text: str) -> Rows:
        held = self._parsed.get(name)
        if held is None or held[0] is not text:
            held = (text, parse_lines(text))
            self._parsed[name] = held
        return held[1]

    def _cached(self, column: str, stamps: dict[str, Stamp] | None = None) -> list[tuple[str, str]]:
        """(log, text of `column`) for every raw log, oldest first: kept in the process, else
        read from the file, else made from the parsed log (and written to the file)."""
        stamps = self.store.raw_stamps() if stamps is None else stamps
        held = self._texts[column]
        for name in set(held) - set(stamps):
            del held[name]
            self._parsed.pop(name, None)
        stale = [name for name in stamps if name not in held or held[name][0] != stamps[name]]
        if stale:
            disk = self._read_rows(column, stale)
            made: dict[str, dict[str, str]] = {}
            for name in stale:
                if disk.get(name, (None,))[0] == stamps[name]:
                    held[name] = disk[name]
                    continue
                rows = [checkpoint_row(c) for c in self.of_log(name, stamps[name])]
                made[name] = {column: RENDER[column](rows) for column in COLUMNS}
                held[name] = (stamps[name], made[name][column])
            if made:
                self._write_rows(made, stamps, gone=set(disk) - set(stamps))
        return [(name, held[name][1]) for name in sorted(stamps)]

    # --- the row cache on disk -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.rows_path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.rows_path, timeout=5, isolation_level=None)
        try:
            if connection.execute("PRAGMA user_version").fetchone()[0] != ROWS_VERSION:
                # Another layout (an older hipo): its rows are dropped and made again.
                connection.execute("BEGIN IMMEDIATE")
                connection.execute("DROP TABLE IF EXISTS logs")
                connection.execute(ROWS_SCHEMA)
                connection.execute(f"PRAGMA user_version = {ROWS_VERSION}")
                connection.execute("COMMIT")
        except BaseException:
            connection.close()
            raise
        return connection

    def _read_rows(self, column: str, names: list[str]) -> dict[str, tuple[Stamp, str]]:
        """The rows the file holds for `names` (all of its logs when asked for most of them,
        one scan instead of many look-ups), with their stamps; {} when it cannot be read."""
        assert column in COLUMNS
        query = f"SELECT name, size, mtime_ns, {column} FROM logs WHERE version = ?"
        few = len(names) <= FEW_LOGS
        if few:  # e.g. today's log after a remember: read it alone
            query += f" AND name IN ({', '.join('?' * len(names))})"
        wanted = set(names)
        try:
            with closing(self._connect()) as db:
                found = db.execute(query, (ROWS_VERSION, *(names if few else ()))).fetchall()
            return {
                name: ((size, mtime_ns), text)
                for name, size, mtime_ns, text in found
                if name in wanted
            }
        except (sqlite3.OperationalError, OSError):
            return {}  # busy or not writable: parse this time
        except (sqlite3.DatabaseError, ValueError):
            self._discard_rows()
            return {}

    def _write_rows(
        self, made: dict[str, dict[str, str]], stamps: dict[str, Stamp], gone: set[str]
    ) -> None:
        """Replace the rows of the logs just parsed (one transaction); never raises: the cache
        only saves time."""
        try:
            with closing(self._connect()) as db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("DELETE FROM logs WHERE name = ?", [(name,) for name in gone])
                db.executemany(
                    f"INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?{', ?' * len(COLUMNS)})",
                    [
                        (name, *stamps[name], ROWS_VERSION, *(texts[c] for c in COLUMNS))
                        for name, texts in made.items()
                    ],
                )
                db.execute("COMMIT")
        except (sqlite3.Error, OSError):
            pass

    def _discard_rows(self) -> None:
        """A row cache that cannot be read (damaged, not SQLite) is deleted; the next call
        writes a new one from the raw logs."""
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.rows_path}{suffix}").unlink(missing_ok=True)

    def checkpoints(self) -> list[Checkpoint]:
        """All checkpoints, oldest day first and in file order within a day."""
        stamps = self.store.raw_stamps()
        for name in set(self._by_log) - set(stamps):
            del self._by_log[name]
        found: list[Checkpoint] = []
        for name in sorted(stamps):
            held = self._by_log.get(name)
            if held is None or held[0] != stamps[name]:
                held = (stamps[name], self._parse(name))
                self._by_log[name] = held
            found.extend(held[1])
        return found

    def of_log(self, name: str, stamp: tuple[int, int] | None = None) -> list[Checkpoint]:
        """The checkpoints of one raw log (`YYYY-MM-DD.md`), reading only that log; `stamp`
        is its (size, mtime) when the caller has just listed the logs."""
        stamp = stamp or self.store.raw_stamps().get(name)
        if stamp is None:
            self._by_log.pop(name, None)
            return []
        held = self._by_log.get(name)
        if held is None or held[0] != stamp:
            held = (stamp, self._parse(name))
            self._by_log[name] = held
        return held[1]

    def at(self, relative: str, line: int) -> Checkpoint | None:
        """The checkpoint whose heading is at `line` of the raw log `relative`
        (`memory/YYYY-MM-DD.md`)."""
        found = self.of_log(relative.removeprefix(f"{MEMORY_DIR}/"))
        return next((c for c in found if c.line == line), None)

    def _parse(self, name: str) -> list[Checkpoint]:
        day = date.fromisoformat(name[:-3])
        try:
            text = self.store.read_text(self.store.raw_path(day))
        except (OSError, ParseError):
            return []  # gone or unreadable: the store warned; `hipo check` says which
        return parse_log(text, date=day.isoformat())
