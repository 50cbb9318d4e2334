"""Structured memory (issue 15): the feedback rules, a table and a graph of the checkpoints, and
their export. Each is derived from the raw logs (through the `CheckpointCatalog`), like the text
index: rebuilt from the files, deletable.

pandas and pyoxigraph are imported only when a table or the graph is asked for (the `frame`
and `graph` extras).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..disk.checkpoint import Checkpoint
from ..disk.export_target import write_export
from ..disk.store import Appended, Store
from ..errors import HipoError
from .catalog import CheckpointCatalog
from .frame import EXPORT_FORMATS, all_row_rules, table_export, to_frame, with_superseded
from .rules import Rule, mark_superseded, proposals

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
        # the raw logs' stamps, every rule they state, and the rules in force among them
        self._rules: tuple[dict[str, tuple[int, int]], list[Rule], list[Rule]] | None = None

    def rules(self, stamps: dict[str, tuple[int, int]] | None = None) -> list[Rule]:
        """The feedback rules in force, active first, by trigger (see `rules`). Layer 1
        asks at every prompt, so they come from the catalog's row cache (see `catalog`), and
        are kept while the raw logs' stamps (`stamps`, listed now when not given) hold: a
        context at a year of memory spent a tenth of its time (under cProfile) making the
        same rules again."""
        return list(self._kept(stamps)[2])

    def proposals(self, stamps: dict[str, tuple[int, int]] | None = None) -> list[Rule]:
        """The rules others proposed that the user has not accepted, newest first."""
        return proposals(self._kept(stamps)[1])

    def proposal_places(self, stamps: dict[str, tuple[int, int]] | None = None) -> list[str]:
        """Where each rule `proposals` lists starts (`Hit.location`): recall says, on its hit,
        that it is a proposal the user has not accepted (`recall/corrections`)."""
        return [f"{rule.file}:{rule.line}" for rule in self.proposals(stamps)]

    def all_rules(self) -> list[Rule]:
        """Every rule the raw logs state, proposals included, oldest first."""
        return list(self._kept(None)[1])

    def _kept(
        self, stamps: dict[str, tuple[int, int]] | None
    ) -> tuple[dict[str, tuple[int, int]], list[Rule], list[Rule]]:
        """(stamps, every rule of the raw logs oldest first, the rules in force), kept while
        the stamps hold (see `rules`)."""
        with self._lock:
            stamps = self.store.raw_stamps() if stamps is None else stamps
            if self._rules is None or self._rules[0] != stamps:
                found = all_row_rules(self.catalog.rule_rows(stamps))
                self._rules = (stamps, found, mark_superseded(found))
            return self._rules

    def after_append(self, name: str, written: Appended, checkpoint: Checkpoint) -> None:
        """This process appended `checkpoint` to the raw log `name`: the rules kept stay the
        rules, under the log's new stamp, when it states none and the log was, up to the
        append, the one they were made from (its stamp before it). Layer 1 after a
        `%%remember` then reads no raw log again (a year's today's log: ~30 ms a context)."""
        with self._lock:
            kept = self._rules
            if kept is None:
                return
            if checkpoint.type == "feedback" or kept[0].get(name) != written.stamp_before:
                self._rules = None
                return
            self._rules = ({**kept[0], name: written.stamp_after}, kept[1], kept[2])

    def frame(self) -> pandas.DataFrame:
        """One row per checkpoint (see `frame.COLUMNS`), with pandas (the `frame` extra)."""
        with self._lock:
            return to_frame(with_superseded(self.catalog.rows()))

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

    def sparql(self, query: str, *, timeout: float, max_rows: int) -> SparqlResult:
        """SPARQL over `graph()`, stopped after `timeout` seconds or `max_rows` rows; a query
        it cannot read raises SparqlError (line:column)."""
        graph = self.graph()
        with self._lock:
            return graph.query(query, timeout=timeout, max_rows=max_rows)

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
            write_out(self.store.root, out, data)
            return count
        with self._lock:
            data, count = table_export(self.catalog, format)
        write_out(self.store.root, out, data)
        return count


def write_out(root: Path, out: Path | BinaryIO, data: bytes) -> None:
    """Bytes to a path (`export_target`: never into the memory, a file replaced atomically, a
    FIFO or device as a stream) or a binary stream."""
    if isinstance(out, Path):
        write_export(root, out, data)
    else:
        out.write(data)
