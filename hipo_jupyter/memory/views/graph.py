"""The memory as RDF, and SPARQL over it: a derived view like the text index.

Every raw-log checkpoint becomes a resource, with schema.org where it fits and a small
vocabulary of our own (`hipo:`, `urn:hipo:vocab:`) for the rest:

    <urn:hipo:memory/2026-03-12.md#L14>
        a schema:CreativeWork, hipo:Checkpoint ;          # a rule is also a schema:HowToStep
        schema:name "Competitor pricing" ;
        schema:dateCreated "2026-03-12"^^xsd:date ;
        schema:identifier "2026-03-12T14:32:05Z-7f3a09c2" ;
        schema:keywords "pricing", "q1" ;                  # its tags
        schema:about "pricing" ;                           # its topics (as in ROOT.md)
        schema:text "free text" ;
        schema:isPartOf <urn:hipo:memory/daily/2026-03-12.md> ;
        hipo:type "project" ;                              # project | feedback | user | reference
        field:decisions "cut the starter tier by 15%" ;    # each `- key: value` line
        hipo:notebook "analysis.ipynb" ; hipo:cell "7" ; hipo:via "magic" ; hipo:model "..." ;
        hipo:file "memory/2026-03-12.md" ; hipo:line 14 ;
        hipo:trigger "before a deploy" ; hipo:rule "..." ;  # rules only
        hipo:proposedBy "MCP" ;  # a rule from anyone but the user: a proposal (`rules`)
        hipo:supersededBy <urn:hipo:memory/2026-03-20.md#L3> .  # an older rule, same trigger

Day, week and month nodes are `schema:CreativeWork`s named after their files (`hipo:level`,
`hipo:period`), each `schema:isPartOf` the next (a week is part of the month of its Thursday).

Storage: pyoxigraph's on-disk store in `memory/.index/graph/` (measured against rdflib in
benchmarks/graph.py: a year of memory answers a count in tens of milliseconds where rdflib
first spends tens of seconds parsing). Each raw log is a named graph, so a changed log is
replaced alone; the day, week and month nodes, shared by logs, have a graph of their own, and
so do the supersession links, which span logs and are recomputed from the store.
`graph-state.json` beside the store holds the (size, mtime) of each log it covers. Delete both
and the next query rebuilds them from the raw logs, which stay the truth.

`graph-turtle/` keeps each named graph as the store dumped it in Turtle (its triple count on
the first line), so `hipo export --format turtle` joins files instead of reading every quad
out of the store again (seconds at a year). A sync deletes the files of the graphs it
replaces first; a missing file is dumped again at the next export. pyoxigraph comes
with the `graph` extra and is imported only here.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import quote

from ..disk.checkpoint import Checkpoint
from ..disk.files import MAX_LOG_BYTES, read_regular
from ..disk.jsonread import MAX_INT_DIGITS, read_state_file
from ..disk.periods import week_id, week_month
from ..disk.store import MEMORY_DIR, node_path, raw_log_path
from ..errors import ParseError, QueryError
from ..tree.topic_index import checkpoint_topics
from . import graph_run
from .frame import require
from .rules import rule_of, trigger_key

SCHEMA = "https://schema.org/"
VOCAB = "urn:hipo:vocab:"
FIELD = "urn:hipo:field:"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
PREFIXES = {
    "schema": SCHEMA,
    "hipo": VOCAB,
    "field": FIELD,
    "xsd": XSD,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}
RULES_GRAPH = "urn:hipo:graph:rules"
PERIODS_GRAPH = "urn:hipo:graph:periods"
log = logging.getLogger(__name__)
STATE_VERSION = 2  # 2: proposals carry hipo:proposedBy
MAX_TURTLE_BYTES = 4 * MAX_LOG_BYTES  # one graph's Turtle: a few times its log


class GraphState(TypedDict, total=False):
    """graph-state.json: the (size, mtime_ns) of each raw log the store holds."""

    version: int
    logs: dict[str, list[int]]

LOCK_ATTEMPTS = 50
LOCK_WAIT_S = 0.1
MAX_QUERY_CHARS = 20_000
# A query's time limit and row cap (settable: MemoryConfig.sparql_timeout / sparql_max_rows,
# `hipo sparql --timeout / --max-rows`, `Hipo.sparql_timeout / sparql_max_rows`).
SPARQL_TIMEOUT_S = 30.0
SPARQL_MAX_ROWS = 100_000
# The store writes prefix lines ordered by IRI; the export writes them once, the same way.
PREFIX_LINES = "\n".join(
    f"@prefix {name}: <{iri}> ." for name, iri in sorted(PREFIXES.items(), key=lambda p: p[1])
)


class IRI(str):
    """An IRI in a triple's object (any other str there is a literal)."""


class SparqlError(QueryError):
    """A query the store cannot read: one line, with the position (`line:column`)."""


def resource(relative: str, line: int | None = None) -> str:
    """The IRI of a file of the memory, or of the checkpoint at `line` of a raw log."""
    iri = "urn:hipo:" + quote(relative, safe="/-._~")
    return f"{iri}#L{line}" if line is not None else iri


def log_graph(relative: str) -> str:
    return "urn:hipo:graph:" + quote(relative, safe="/-._~")


def checkpoint_triples(checkpoint: Checkpoint) -> list[tuple[str, str, Any]]:
    """(subject, predicate, object) of one checkpoint; an object is an `IRI` or a Python value
    for a literal (str, int, date)."""
    day = checkpoint.date or ""
    file = raw_log_path(day)
    subject = resource(file, checkpoint.line)
    out: list[tuple[str, str, Any]] = [
        (subject, RDF_TYPE, IRI(SCHEMA + "CreativeWork")),
        (subject, RDF_TYPE, IRI(VOCAB + "Checkpoint")),
        (subject, SCHEMA + "name", checkpoint.title),
        (subject, VOCAB + "type", checkpoint.type),
        (subject, VOCAB + "file", file),
        (subject, VOCAB + "line", checkpoint.line),
    ]
    if day:
        out.append((subject, SCHEMA + "dateCreated", date.fromisoformat(day)))
        out.append((subject, SCHEMA + "isPartOf", IRI(resource(node_path("daily", day)))))
    if checkpoint.id:
        out.append((subject, SCHEMA + "identifier", checkpoint.id))
    out += [(subject, SCHEMA + "keywords", tag) for tag in checkpoint.tags]
    out += [(subject, SCHEMA + "about", topic) for topic in checkpoint_topics(checkpoint)]
    if checkpoint.text:
        out.append((subject, SCHEMA + "text", checkpoint.text))
    out += [(subject, FIELD + key, value) for key, value in checkpoint.fields]
    for key in ("notebook", "cell", "via", "model"):
        value = getattr(checkpoint, key)
        if value is not None:
            out.append((subject, VOCAB + key, value))
    rule = rule_of(checkpoint)
    if rule is not None:
        out.append((subject, RDF_TYPE, IRI(SCHEMA + "HowToStep")))
        out.append((subject, VOCAB + "trigger", rule.trigger))
        out.append((subject, VOCAB + "rule", rule.rule))
        if not rule.in_force:  # a proposal (`rules`): it supersedes nothing and is not superseded
            out.append((subject, VOCAB + "proposedBy", rule.provenance or rule.writer))
    return out


def period_triples(day: str) -> list[tuple[str, str, Any]]:
    """The day, week and month nodes above a day, and how they nest."""
    when = date.fromisoformat(day)
    week = week_id(when)
    month = week_month(week)
    daily = resource(node_path("daily", day))
    weekly = resource(node_path("weekly", week))
    monthly = resource(node_path("monthly", month))
    out: list[tuple[str, str, Any]] = []
    for node, level, period in ((daily, "daily", day), (weekly, "weekly", week),
                                (monthly, "monthly", month)):  # fmt: skip
        out += [
            (node, RDF_TYPE, IRI(SCHEMA + "CreativeWork")),
            (node, VOCAB + "level", level),
            (node, VOCAB + "period", period),
            (node, SCHEMA + "name", f"{level} {period}"),
        ]
    out.append((daily, SCHEMA + "isPartOf", IRI(weekly)))
    out.append((weekly, SCHEMA + "isPartOf", IRI(monthly)))
    return out


@dataclass(frozen=True)
class SparqlResult:
    """A SELECT's variables and rows (values as Python str/int/float/bool/None), an ASK's
    boolean, or a CONSTRUCT's triples as N-Triples lines."""

    variables: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    boolean: bool | None = None
    triples: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if self.boolean is not None:
            return {"boolean": self.boolean}
        if self.triples:
            return {"triples": list(self.triples)}
        return {"variables": list(self.variables), "rows": [list(row) for row in self.rows]}


class MemoryGraph:
    """The graph of one memory root, kept in step with its raw logs (see the module doc).

    The store is opened for each operation and closed after it, so kernels and `hipo sparql`
    take turns at its lock instead of one holding it for a whole session."""

    def __init__(
        self,
        index_dir: Path,
        stamps: Callable[[], dict[str, tuple[int, int]]],
        log_checkpoints: Callable[[str, tuple[int, int]], list[Checkpoint]],
    ) -> None:
        self.ox = require("pyoxigraph", "graph", "the RDF graph")
        self.index_dir = Path(index_dir)
        self._stamps = stamps
        self._log_checkpoints = log_checkpoints

    @property
    def store_path(self) -> Path:
        return self.index_dir / "graph"

    @property
    def state_path(self) -> Path:
        return self.index_dir / "graph-state.json"

    # --- keeping it in step ------------------------------------------------------------------
    def sync(self) -> int:
        """Bring the store up to date with the raw logs; returns how many logs changed. When
        the state file already covers every log's stamp the store is not opened at all: the
        query or export that follows opens it (each opening costs ~0.1 s at a year)."""
        held = self._held()
        if held and not self.store_path.is_dir():  # the store deleted, its state kept: the
            self.state_path.unlink(missing_ok=True)  # state vouches for nothing, rebuild
            held = {}
        if held and held == {name: list(stamp) for name, stamp in self._stamps().items()}:
            return 0
        with self._opened() as store:
            return self._sync(store)

    @contextmanager
    def _opened(self) -> Iterator[Any]:
        """The on-disk store, waiting a little for another process that holds its lock; a
        store that cannot be opened (damaged, another version) is deleted and rebuilt."""
        self.index_dir.mkdir(parents=True, exist_ok=True)
        store = None
        for attempt in range(LOCK_ATTEMPTS):
            try:
                store = self.ox.Store(str(self.store_path))
                break
            except OSError as error:
                if "lock" not in str(error).lower():
                    shutil.rmtree(self.store_path, ignore_errors=True)
                    self.state_path.unlink(missing_ok=True)
                elif attempt == LOCK_ATTEMPTS - 1:
                    raise SparqlError(
                        "the graph is busy in another process (memory/.index/graph); "
                        "try again in a moment"
                    ) from None
                time.sleep(LOCK_WAIT_S)
        try:
            yield store
        finally:
            store.flush()
            del store  # closes the store and releases its lock
            for old_log in self.store_path.glob("LOG.old.*"):  # RocksDB's log of each opening,
                old_log.unlink(missing_ok=True)  # not data: one a query would pile up

    def _held(self) -> dict[str, list[int]]:
        """The stamps of the logs the store holds; {} (a rebuild) when the state is missing,
        of another version, or damaged (then set aside with one line: `read_state_file`)."""
        state = read_state_file(
            self.state_path,
            GraphState,
            shown=f"{MEMORY_DIR}/.index/{self.state_path.name}",
            report=lambda line: log.warning("hipo: %s", line),
        )
        if state is None or state.get("version") != STATE_VERSION:
            return {}
        return {str(k): list(v) for k, v in state.get("logs", {}).items()}

    def _sync(self, store: Any) -> int:
        held = self._held()
        if not held and len(store):
            store.clear()  # a store without its state: rebuilt, not trusted
        stamps = {name: list(stamp) for name, stamp in self._stamps().items()}
        changed = [name for name, stamp in stamps.items() if held.get(name) != stamp]
        gone = [name for name in held if name not in stamps]
        if not changed and not gone:
            return 0
        ox = self.ox
        # Their Turtle first: a crash after this leaves a file missing (dumped again), never
        # one older than the store.
        for graph in [PERIODS_GRAPH, RULES_GRAPH, *(log_graph(f"{MEMORY_DIR}/{n}") for n in gone)]:
            self._turtle_path(graph).unlink(missing_ok=True)
        for name in changed:
            self._turtle_path(log_graph(f"{MEMORY_DIR}/{name}")).unlink(missing_ok=True)
        for name in [*gone, *changed]:
            graph = ox.NamedNode(log_graph(f"{MEMORY_DIR}/{name}"))
            if store.contains_named_graph(graph):
                store.remove_graph(graph)
        lines: list[str] = []
        for name in changed:
            # Day, week and month nodes go to one graph, each quad once however many logs
            # share a week or month: the union of graphs would otherwise repeat them.
            lines += nquads(period_triples(name[:-3]), PERIODS_GRAPH)
            triples = []
            for checkpoint in self._log_checkpoints(name, tuple(stamps[name])):
                triples += checkpoint_triples(checkpoint)
            lines += nquads(triples, log_graph(f"{MEMORY_DIR}/{name}"))
        data = "".join(lines).encode("utf-8")
        if held:
            store.load(data, format=ox.RdfFormat.N_QUADS)  # a transaction
        else:
            store.bulk_load(data, format=ox.RdfFormat.N_QUADS)  # the first build: faster
        self._link_superseded(store)
        store.flush()
        # The state is written after the store: a crash in between re-reads those logs.
        temp = self.state_path.with_name(f".graph-state.{os.getpid()}.tmp")
        temp.write_text(json.dumps({"version": STATE_VERSION, "logs": stamps}), encoding="utf-8")
        os.replace(temp, self.state_path)
        return len(changed) + len(gone)

    def _link_superseded(self, store: Any) -> None:
        """Recompute `hipo:supersededBy` over every rule in the store: the newest rule of a
        trigger (latest date, then latest line) supersedes the others."""
        ox = self.ox
        graph = ox.NamedNode(RULES_GRAPH)
        if store.contains_named_graph(graph):
            store.remove_graph(graph)
        found = store.query(
            "SELECT ?rule ?trigger ?date ?line WHERE { ?rule hipo:trigger ?trigger ; "
            "schema:dateCreated ?date ; hipo:line ?line "
            "FILTER NOT EXISTS { ?rule hipo:proposedBy ?who } }",
            prefixes=PREFIXES,
            use_default_graph_as_union=True,
        )
        rules = sorted(
            (row["date"].value, int(row["line"].value), row["rule"].value, row["trigger"].value)
            for row in found
        )
        newest = {trigger_key(trigger): iri for _, _, iri, trigger in rules}
        links = [
            (iri, VOCAB + "supersededBy", IRI(newest[trigger_key(trigger)]))
            for _, _, iri, trigger in rules
            if newest[trigger_key(trigger)] != iri
        ]
        if links:
            data = "".join(nquads(links, RULES_GRAPH)).encode("utf-8")
            store.load(data, format=ox.RdfFormat.N_QUADS)

    # --- reading -------------------------------------------------------------------------------
    def query(
        self, sparql: str, *, timeout: float = SPARQL_TIMEOUT_S, max_rows: int = SPARQL_MAX_ROWS
    ) -> SparqlResult:
        """Run SPARQL over the union of every graph, with the prefixes schema:, hipo:, field:,
        xsd: and rdf: predefined, in a child process stopped after `timeout` seconds or
        `max_rows` rows (`graph_run.py`: the store's lock is released whatever happens).
        SERVICE and LOAD are refused; every failure is a one-line SparqlError (a syntax
        error names the line and column)."""
        if len(sparql) > MAX_QUERY_CHARS:
            raise SparqlError(f"the query is {len(sparql):,} characters; the limit is "
                              f"{MAX_QUERY_CHARS:,}")  # fmt: skip
        if not sparql.strip():
            raise SparqlError("SPARQL needs a query, e.g. SELECT (COUNT(*) AS ?n) "
                              "WHERE { ?c a hipo:Checkpoint }")  # fmt: skip
        refused = graph_run.refusal(sparql)
        if refused:
            raise SparqlError(refused)
        with self._opened() as store:
            self._sync(store)
            del store
        request = {
            "store": str(self.store_path),
            "query": sparql,
            "prefixes": PREFIXES,
            "max_rows": max_rows,
            "attempts": LOCK_ATTEMPTS,
            "wait": LOCK_WAIT_S,
        }
        answer = graph_run.run(request, timeout)
        if "error" in answer:
            raise SparqlError(str(answer["error"]))
        if "boolean" in answer:
            return SparqlResult(boolean=bool(answer["boolean"]))
        if "triples" in answer:
            return SparqlResult(triples=tuple(answer["triples"]))
        rows = tuple(tuple(row) for row in answer["rows"])
        return SparqlResult(variables=tuple(answer["variables"]), rows=rows)

    @property
    def turtle_dir(self) -> Path:
        return self.index_dir / "graph-turtle"

    def _turtle_path(self, graph: str) -> Path:
        name = graph.removeprefix("urn:hipo:graph:").replace("/", "_")
        return self.turtle_dir / f"{name}.ttl"

    def turtle(self) -> tuple[bytes, int]:
        """Every triple of the memory as Turtle with the prefixes above, and how many quads
        the store holds. Each named graph is dumped by the store itself, once: its Turtle is
        kept in `graph-turtle/` until a sync replaces that graph (see the module doc)."""
        chunks = [PREFIX_LINES]
        count = 0
        with self._opened() as store:
            self._sync(store)
            self.turtle_dir.mkdir(parents=True, exist_ok=True)
            for graph in sorted(g.value for g in store.named_graphs()):
                triples, body = self._graph_turtle(store, graph)
                count += triples
                if body:
                    chunks.append(body)
            del store
        return ("\n".join(chunks) + "\n").encode("utf-8"), count

    def _graph_turtle(self, store: Any, graph: str) -> tuple[int, str]:
        """(triples, Turtle without prefix lines) of one named graph, from its file when the
        last sync left it, else dumped from the store (under its lock) and kept."""
        path = self._turtle_path(graph)
        try:
            text = read_regular(path, MAX_TURTLE_BYTES, path.name).decode("utf-8")
            head, _, body = text.partition("\n")
            if len(head) <= MAX_INT_DIGITS:
                return int(head), body
        except (OSError, ValueError, ParseError):
            pass  # missing or damaged: dumped again from the store below
        ox = self.ox
        node = ox.NamedNode(graph)
        text = store.dump(format=ox.RdfFormat.TURTLE, from_graph=node, prefixes=PREFIXES)
        lines = text.decode("utf-8").split("\n")
        body = "\n".join(line for line in lines if not line.startswith("@prefix ")).strip()
        counted = store.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
        triples = int(next(iter(counted))["n"].value)  # counted in the store, not in Python
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            temp.write_text(f"{triples}\n{body}", encoding="utf-8")
            os.replace(temp, path)
        except OSError:
            temp.unlink(missing_ok=True)  # not kept: dumped again next time
        return triples, body

    def __len__(self) -> int:
        """Quads in the store (each log's graph and the supersession links)."""
        with self._opened() as store:
            self._sync(store)
            return len(store)


def nquads(triples: Iterable[tuple[str, str, Any]], graph: str) -> list[str]:
    """N-Quads lines of `triples` in `graph`: written as text and parsed by the store in one
    call, several times faster than building a Python object per term."""
    tail = f" <{graph}> .\n"
    return [f"<{s}> <{p}> {_nt_term(o)}{tail}" for s, p, o in triples]


def _nt_term(value: Any) -> str:
    if isinstance(value, IRI):
        return f"<{value}>"
    if isinstance(value, bool):
        return f'"{str(value).lower()}"^^<{XSD}boolean>'
    if isinstance(value, int):
        return f'"{value}"^^<{XSD}integer>'
    if isinstance(value, date):
        return f'"{value.isoformat()}"^^<{XSD}date>'
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", "\\n").replace("\r", "\\r") + '"'


def result_frame(result: SparqlResult, to_frame: Callable[..., Any]) -> Any:
    """A SELECT as a DataFrame (one column per variable); ASK and CONSTRUCT as one column."""
    if result.boolean is not None:
        return to_frame([{"boolean": result.boolean}], columns=["boolean"])
    if result.triples:
        return to_frame([{"triple": t} for t in result.triples], columns=["triple"])
    rows = [dict(zip(result.variables, row, strict=True)) for row in result.rows]
    return to_frame(rows, columns=list(result.variables))
