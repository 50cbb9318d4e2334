"""Structured memory (issue 15): the feedback rules, a table and a graph of the checkpoints, and
their export. Each is derived from the raw logs (through the `CheckpointCatalog`), like the text
index: rebuilt from the files, deletable.

pandas and pyoxigraph are imported only when a table or the graph is asked for (the `frame`
and `graph` extras).
"""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .catalog import CheckpointCatalog
from .errors import HipoError
from .frame import EXPORT_FORMATS, checkpoint_rows, export_table, to_frame, write_jsonl
from .rules import Rule, collect_rules
from .store import Store

if TYPE_CHECKING:
    import pandas

    from .graph import MemoryGraph, SparqlResult  # pyoxigraph: imported only with the extra


class StructuredViews:
    """Rules, frame, graph, SPARQL and export for one memory root, read under its lock."""

    def __init__(self, store: Store, catalog: CheckpointCatalog, lock: threading.RLock) -> None:
        self.store = store
        self.catalog = catalog
        self._lock = lock
        self._graph: MemoryGraph | None = None

    def rules(self) -> list[Rule]:
        """The feedback rules with triggers, active first, by trigger (see `rules`). Layer 1
        asks at every prompt, so only the raw logs holding a `- trigger:` line are parsed."""
        with self._lock:
            logs = self.catalog.logs_holding(b"\n- trigger:")
            return collect_rules(c for log in logs for c in self.catalog.of_log(log))

    def frame(self) -> pandas.DataFrame:
        """One row per checkpoint (see `frame.COLUMNS`), with pandas (the `frame` extra)."""
        with self._lock:
            return to_frame(checkpoint_rows(self.catalog.checkpoints()))

    def graph(self) -> MemoryGraph:
        """The memory as RDF (the `graph` extra), brought up to date with the raw logs."""
        with self._lock:
            if self._graph is None:
                from .graph import MemoryGraph

                self._graph = MemoryGraph(
                    self.store.index_dir, self.store.raw_stamps, self.catalog.of_log
                )
            self._graph.sync()
            return self._graph

    def sparql(self, query: str) -> SparqlResult:
        """SPARQL over `graph()`; a query it cannot read raises SparqlError (line:column)."""
        graph = self.graph()
        with self._lock:
            return graph.query(query)

    def export(self, format: str, out: Path | BinaryIO) -> int:
        """Write the memory as csv, parquet, jsonl (one row per checkpoint) or turtle (the
        graph) to a path or a binary stream; returns rows written (triples for turtle)."""
        if format not in EXPORT_FORMATS:
            raise HipoError(
                f"export format must be one of {', '.join(EXPORT_FORMATS)}, not {format!r}"
            )
        if format == "turtle":
            graph = self.graph()
            with self._lock:
                data, count = graph.turtle()
            write_out(out, data)
            return count
        with self._lock:
            rows = checkpoint_rows(self.catalog.checkpoints())
        if format == "jsonl":
            text = io.StringIO()
            write_jsonl(rows, text)
            write_out(out, text.getvalue().encode("utf-8"))
            return len(rows)
        if isinstance(out, Path):
            return export_table(rows, format, out)
        buffer = io.BytesIO()
        export_table(rows, format, buffer)
        write_out(out, buffer.getvalue())
        return len(rows)


def write_out(out: Path | BinaryIO, data: bytes) -> None:
    """Bytes to a path (atomically, beside it) or a binary stream."""
    if isinstance(out, Path):
        temp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, out)
    else:
        out.write(data)
