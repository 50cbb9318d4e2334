"""`Memory`: the one object every front end (magics, CLI, widgets, server, LLM calls) goes through.

A Memory is a root folder laid out as Hipocampus lays it out (see `store`). It writes checkpoints
to the raw log and indexes them in the same call, keeps the compaction tree and the search index
up to date from the Markdown files (which stay the truth), and answers recall.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from . import context_pack, notes, recall_run
from .catalog import CheckpointCatalog
from .checkpoint import (
    Checkpoint,
    new_id,
    parse_body,
    parse_log,
    render,
)
from .config import MemoryConfig
from .embed import Embedder, SemanticUnavailable
from .errors import HipoError, ParseError, PathOutsideRootError, QueryError
from .files import MAX_STATE_BYTES
from .frame import EXPORT_FORMATS, checkpoint_rows, export_table, to_frame, write_jsonl
from .importers import ImportRecord, ImportReport, blocks_by_day
from .indexing import IndexKeeper
from .layer1 import Layer1, assemble_layer1, generated_part, write_templates
from .neighbours import IndexNeighbours
from .nodes import read_status
from .provenance import provenance_text
from .recall import Hit, RecallResult
from .recall_run import NodePaths, RecallSources, log_stamp
from .redact import redact
from .requests import (
    DEFAULT_BUDGET,
    MAX_K,
    CheckpointDraft,
    RecallQuery,
    parse_day,
    storable,
)
from .rules import Rule, collect_rules, rules_index_text
from .search import Document, SearchIndex
from .semantic import (
    MODES,
    FusionWeights,
    SemanticIndex,
)
from .store import Appended, Store
from .summarize import ExtractiveSummarizer, Summarizer
from .tokens import TokenCountCache
from .topic_index import Topic, add_to_topics, collect_topics, topics_from_json
from .tree import CompactionReport, Compactor, stamp_key

if TYPE_CHECKING:
    import pandas

    from .graph import MemoryGraph, SparqlResult  # pyoxigraph: imported only with the extra

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
"""progress(done, total, label): called during long work (compaction, reindex)."""

NODE_KINDS = ("daily", "weekly", "monthly")


@dataclass(frozen=True)
class Status:
    root: str
    raw_days: int
    checkpoints: int
    nodes: dict[str, int]  # {"daily": n, "weekly": n, "monthly": n, "root": 0|1}
    topics: int
    layer1_tokens: int
    layer1_budget: int
    backend: str
    last_compaction: str | None  # ISO timestamp of the last successful pass
    dirty_nodes: int  # nodes a compaction would rebuild now
    semantic: str = ""  # "semantic recall is on: ..." or why it is off and how to turn it on


@dataclass(frozen=True)
class NodeInfo:
    """A compaction node as the sidebar and widgets list it."""

    level: str  # daily | weekly | monthly
    period: str  # 2026-03-12 | 2026-W11 | 2026-03
    file: str  # relative to the root
    status: str  # tentative | fixed (a node without frontmatter reads as tentative)


def resolve_root(explicit: str | Path | None = None, notebook_path: str | None = None) -> Path:
    """The memory root, decided in one place: an explicit value (`c.Hipo.root`, `--root`), then
    the HIPO_ROOT environment variable, then the notebook's folder, then the working directory."""
    if explicit:
        return Path(explicit).expanduser().absolute()
    if os.environ.get("HIPO_ROOT"):
        return Path(os.environ["HIPO_ROOT"]).expanduser().absolute()
    if notebook_path:
        return Path(notebook_path).expanduser().absolute().parent
    return Path.cwd()


def _today_from_env() -> date:
    """HIPO_TODAY=YYYY-MM-DD pins the clock (tests, demos); otherwise the local date."""
    pinned = os.environ.get("HIPO_TODAY", "").strip()
    return parse_day(pinned, "HIPO_TODAY") or date.today() if pinned else date.today()


class Memory:
    """A memory root. Cheap to construct; files are created on first write (or `init`)."""

    _said_team_keyword_only = False  # once per process: team recall has no vectors

    def __init__(
        self,
        root: str | Path,
        *,
        config: MemoryConfig | None = None,
        summarizer: Summarizer | None = None,
        today: Callable[[], date] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        """`embedder` replaces the semantic extra's model (tests, another model in code)."""
        self.store = Store(root)
        self.root = self.store.root
        self.config = config or MemoryConfig()
        self.summarizer = summarizer or ExtractiveSummarizer()
        self._today = today or _today_from_env
        self._topics: tuple[dict, date, list[Topic]] | None = None  # (raw stamps, today, topics)
        self._token_cache = TokenCountCache(self.store.index_dir / "token-counts.json")
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.RLock()
        self._team_sync = None  # hipo_jupyter.team.TeamSync, built when first needed
        self.catalog = CheckpointCatalog(self.store)  # issue 15: rules, frame, graph
        self._graph: MemoryGraph | None = None
        self.semantic = SemanticIndex(
            self.store.index_dir,
            setting=self.config.semantic,
            model_path=self.config.embedding_model or None,
            tokenizer_path=self.config.embedding_tokenizer or None,
            embedder=embedder,
        )
        self._indexer = IndexKeeper(self.store, self.config, self.semantic, self._today)
        self._neighbours = IndexNeighbours(self._indexer.open)  # recall's neighbouring turns
        self._node_paths = NodePaths(self.store)  # recall's drill-down paths, kept while valid

    def __repr__(self) -> str:
        return f"Memory({str(self.root)!r})"

    @property
    def today(self) -> date:
        return self._today()

    # --- files -----------------------------------------------------------------------------
    def init(self) -> list[str]:
        """Create memory/, knowledge/, plans/ and the Layer 1 files from their templates."""
        self.store.ensure_layout()
        return write_templates(self.root)

    def has_memory(self) -> bool:
        """Whether the root holds a memory yet. Read-only front ends (recall, status, check)
        say so instead of creating one."""
        return self.store.has_memory()

    def read(self, relative_path: str) -> str:
        """A file under the root (node, raw log, knowledge); refuses paths outside the root."""
        path = self.store.inside(relative_path.split("#", 1)[0])
        if not os.path.lexists(path):
            raise HipoError(f"no such memory file: {relative_path}")
        return self.store.read_text(path)

    # --- writing ---------------------------------------------------------------------------
    def remember(
        self,
        title: str,
        body: str = "",
        *,
        type: str | None = None,
        tags: Sequence[str] = (),
        on: str | date | None = None,
        notebook: str | None = None,
        cell: str | None = None,
        via: str | None = None,
        model: str | None = None,
        trigger: str | None = None,
        rule: str | None = None,
    ) -> Checkpoint:
        """Append one checkpoint to the raw log of `on` (default today) and index it at once.

        `title` is a title line as `%%remember` reads it (`[type]` and `#tags` at its end);
        an explicit `type` wins over the title's. Input is checked once, by `CheckpointDraft`.
        `via` names the front end and `model` the Claude model a write-back came from
        (provenance, in the comment line); `trigger` and `rule` make a feedback rule."""
        draft = CheckpointDraft.parse(
            title, body, type=type, tags=tags, on=on, trigger=trigger, rule=rule
        )
        return self.write_checkpoint(draft, notebook=notebook, cell=cell, via=via, model=model)

    def write_checkpoint(
        self,
        draft: CheckpointDraft,
        *,
        notebook: str | None = None,
        cell: str | None = None,
        via: str | None = None,
        model: str | None = None,
    ) -> Checkpoint:
        """Write a checked draft: redacted, appended to its day's raw log, indexed at once."""
        fields, text = parse_body(redact(draft.body))
        title_text = redact(draft.title)
        if not title_text:
            title_text = " ".join(text.split()[:8]) or (fields[0][1][:60] if fields else "")
        if not fields and not text.strip():
            raise HipoError("a checkpoint needs a body: '- request: ...' lines or free text")
        try:
            checkpoint = Checkpoint(
                title=title_text,
                type=draft.type,
                fields=fields,
                text=text,
                id=new_id(),
                tags=draft.tags,
                notebook=redact(storable(notebook)) if notebook else None,
                cell=storable(cell) if cell else None,
                via=storable(via) if via else None,
                model=storable(model) if model else None,
            )
        except ValueError as exc:  # the dataclass validates keys and type
            raise HipoError(f"not a valid checkpoint: {exc}") from None
        day = draft.day or self.today
        with self._lock:
            written = self.store.append_raw(day, render(checkpoint))
            checkpoint = replace(checkpoint, date=day.isoformat(), line=written.line)
            try:
                self._indexer.add_raw_append(day, written, checkpoint)
            except (HipoError, sqlite3.Error, OSError) as exc:
                # The checkpoint is safe in the raw log; the index catches up at the next sync.
                # Raising here would invite the user to write it a second time.
                self._indexer.stale()
                log.warning("hipo: checkpoint saved but not indexed yet: %s", exc)
            self._indexer.embed_raw_append(day, written, checkpoint)
            self._topics_after_append(day, written, checkpoint)
        self._notify("remember")
        if self.config.team_url:
            self._team_after_write(day)
        return checkpoint

    def save_knowledge(self, title: str, text: str, *, on: date | None = None) -> str:
        """Offload a large text (a long reply, a tool result) to knowledge/ and index it.

        The live context then keeps only the returned path. The name is the day and the title's
        slug; an existing file is never overwritten (a counter is added instead).
        """
        from .topics import slug

        self.store.ensure_layout()
        stem = f"{(on or self.today).isoformat()}-{slug(title, max_words=6) or 'note'}"
        folder = self.root / "knowledge"
        path = folder / f"{stem}.md"
        counter = 2
        while path.exists():
            path = folder / f"{stem}-{counter}.md"
            counter += 1
        body = f"# {' '.join(title.split())}\n\n{redact(text).strip()}\n"
        with self._lock:
            self.store.write_atomic(path, body)
            relative = self.store.relative(path)
            self._indexer.refresh_file(relative)
        self._notify("remember")
        return relative

    # --- notes an agent keeps (issue 14: Claude's memory tool; the rules live in notes.py) -----
    def write_note(self, relative_path: str, text: str) -> str:
        """Write a Layer 1 working file or a note under knowledge/ or plans/ (atomically, secrets
        redacted); a knowledge note is indexed at once. Anything else is refused (NotWritable)
        with why and what to do instead. Returns the clean relative path."""
        relative = notes.normalize(relative_path)
        notes.check_writable(relative, "create")
        path = self.note_file(relative)
        with self._lock:
            self.store.write_atomic(path, redact(text))
            self._index_note(relative)
        self._notify("remember")
        return relative

    def delete_note(self, relative_path: str) -> str:
        """Delete a note under knowledge/ or plans/ (and its index entry); nothing else."""
        relative = notes.normalize(relative_path)
        notes.check_writable(relative, "delete")
        path = self.note_file(relative)
        if not path.is_file():
            raise HipoError(f"no such memory file: {relative}")
        with self._lock:
            path.unlink()
            self._index_note(relative)
        self._notify("remember")
        return relative

    def move_note(self, old_path: str, new_path: str) -> str:
        """Rename a note within knowledge/ and plans/; the destination must not exist."""
        old, new = notes.normalize(old_path), notes.normalize(new_path)
        notes.check_writable(old, "rename")
        notes.check_writable(new, "rename")
        source, target = self.note_file(old), self.note_file(new)
        if not source.is_file():
            raise HipoError(f"no such memory file: {old}")
        if target.exists():
            raise HipoError(f"{new} already exists: delete it first or choose another name")
        with self._lock:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            self._index_note(old)
            self._index_note(new)
        self._notify("remember")
        return new

    def note_file(self, relative: str) -> Path:
        """The file of a memory path (clean, relative), refusing any symlink on the way (in or
        out of the root): a link would let a note's write land on a raw log or outside."""
        path = self.store.inside(relative)
        if path != self.root.resolve() / relative:
            raise PathOutsideRootError(f"{relative!r} goes through a symlink; not followed")
        return path

    def _index_note(self, relative: str) -> None:
        """Bring the index (and vectors) in step with a knowledge note as it is now on disk."""
        if relative.startswith("knowledge/"):
            self._indexer.refresh_file(relative)

    # --- import (issue 5: `hipo import`; parsing lives in importers.py) -----------------------
    def import_records(
        self, records: Sequence[ImportRecord], *, progress: Progress | None = None
    ) -> ImportReport:
        """Write imported turns into the raw logs of their own dates, then compact.

        Every checkpoint is rendered before the first write, and each day gets one append of
        whole checkpoints. A turn whose source id is already in its day's log is skipped, so a
        repeated import (or one re-run after a failed write) adds nothing twice.
        """
        days = sorted({record.day for record in records})
        with self._lock:
            known = {c.id for c in self._all_checkpoints(days) if c.id}
            blocks, counts, skipped = blocks_by_day(records, known)
            for day, block in blocks.items():
                self.store.append_raw(day, block)
        compaction = self.compact(progress=progress) if blocks else None
        if blocks and self.semantic.enabled:  # every turn embedded now, with the progress bar
            with self._lock:
                self._indexer.sync(progress, backlog=True)
        return ImportReport(
            written=sum(counts.values()),
            skipped=skipped,
            days=tuple(day.isoformat() for day in counts),
            compaction=compaction,
            per_day={day.isoformat(): n for day, n in counts.items()},
        )

    # --- the tree ----------------------------------------------------------------------------
    def _compactor(self) -> Compactor:
        return Compactor(self.store, self.config, self.summarizer, self.today)

    def compact(self, *, progress: Progress | None = None) -> CompactionReport:
        """Bring the tree up to date (every dirty node in one pass), then the index."""
        self.store.ensure_layout()
        write_templates(self.root)
        with self._lock, self.store.compaction_lock():
            report = self._compactor().run(progress)
            self._indexer.sync()
            self._topics = None
        if report.built:
            self._notify("compact")
        return report

    def layer1(self) -> Layer1:
        """Layer 1 measured; counts are remembered by content, so an unchanged Layer 1 is
        measured without building the tokenizer."""
        layer1 = assemble_layer1(self.root, self.config.layer1_budgets, self._token_cache.count)
        rules = rules_index_text(self.rules())
        if rules:  # the rules index, right after ROOT.md, within its own budget
            budget = self.config.layer1_budgets.get("RULES", MemoryConfig().layer1_budgets["RULES"])
            part = generated_part("RULES", "rules", rules, budget, self._token_cache.count)
            layer1 = replace(layer1, parts=(layer1.parts[0], part, *layer1.parts[1:]))
        layer1.total_tokens  # noqa: B018 - counted now so the count is saved with the rest
        self._token_cache.save()
        return layer1

    def rules(self) -> list[Rule]:
        """The feedback rules with triggers, active first, by trigger (see `rules`). Layer 1
        asks at every prompt, so only the raw logs holding a `- trigger:` line are parsed."""
        with self._lock:
            logs = self.catalog.logs_holding(b"\n- trigger:")
            return collect_rules(c for log in logs for c in self.catalog.of_log(log))

    # --- structured views (issue 15): a table and a graph, derived from the raw logs ----------
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
            _write_out(out, data)
            return count
        with self._lock:
            rows = checkpoint_rows(self.catalog.checkpoints())
        if format == "jsonl":
            text = io.StringIO()
            write_jsonl(rows, text)
            _write_out(out, text.getvalue().encode("utf-8"))
            return len(rows)
        if isinstance(out, Path):
            return export_table(rows, format, out)
        buffer = io.BytesIO()
        export_table(rows, format, buffer)
        _write_out(out, buffer.getvalue())
        return len(rows)

    def topics(self) -> list[Topic]:
        """The Topics Index as data (what ROOT.md lists).

        Cheap when nothing changed: kept in memory against the raw logs' sizes and times, saved
        by each compaction pass, and updated in place by `remember`; only a raw log changed by
        someone else makes it re-read every log.
        """
        stamps, today = self.store.raw_stamps(), self.today
        cached = self._topics
        if cached and cached[0] == stamps and cached[1] == today:
            return cached[2]
        topics = self._saved_topics(stamps, today)
        if topics is None:
            topics = collect_topics(self._all_checkpoints(), today)
        self._topics = (stamps, today, topics)
        return topics

    def _saved_topics(self, stamps: dict, today: date) -> list[Topic] | None:
        try:
            saved = json.loads(self.store.read_file(self.store.state_path, MAX_STATE_BYTES))
            saved = saved["hipo"]
            if saved.get("topics-stamp") == stamp_key(stamps):
                return topics_from_json(saved["topics"], today)
        except (
            OSError, HipoError, ValueError, LookupError, TypeError, AttributeError, RecursionError
        ):
            pass  # no saved topics, or not ours: they are collected from the raw logs
        return None

    def _topics_after_append(self, day: date, written: Appended, checkpoint: Checkpoint) -> None:
        cached = self._topics
        name = self.store.raw_path(day).name
        if not cached or cached[0].get(name, (0, 0))[0] != written.size_before:
            self._topics = None  # someone else wrote too: re-read on the next question
            return
        info = os.stat(self.store.raw_path(day))
        stamps = {**cached[0], name: (info.st_size, info.st_mtime_ns)}
        self._topics = (stamps, cached[1], add_to_topics(cached[2], checkpoint, cached[1]))

    def _all_checkpoints(self, days: Sequence[date] | None = None) -> list[Checkpoint]:
        checkpoints: list[Checkpoint] = []
        for day in days if days is not None else self.store.raw_days():
            try:
                text = self.store.read_text(self.store.raw_path(day))
            except (OSError, ParseError):
                continue
            checkpoints.extend(parse_log(text, date=day.isoformat()))
        return checkpoints

    def nodes(self) -> list[NodeInfo]:
        """Every compaction node, newest period first within each level (frontmatter only)."""
        found = []
        for level in NODE_KINDS:
            for period, path in sorted(self.store.node_files(level).items(), reverse=True):
                status = read_status(path) or "tentative"
                found.append(NodeInfo(level, period, self.store.relative(path), status))
        return found

    def recent_checkpoints(self, n: int = 10) -> list[Checkpoint]:
        found: list[Checkpoint] = []
        for day in reversed(self.store.raw_days()):
            try:
                text = self.store.read_text(self.store.raw_path(day))
            except (OSError, ParseError):
                continue
            found.extend(reversed(parse_log(text, date=day.isoformat())))
            if len(found) >= n:
                break
        return found[:n]

    # --- search ------------------------------------------------------------------------------
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Drop the index and build it again from the Markdown files. Vectors whose text did not
        change are kept (they are keyed by a hash of the text); the rest are embedded again."""
        with self._lock:
            count = self._indexer.rebuild(progress)
        self._notify("reindex")
        return count

    # The index, for the engine's own tests and tools (the keeper is `indexing.IndexKeeper`).
    def _open_index(self) -> SearchIndex:
        return self._indexer.open()

    def _ensure_index(self) -> SearchIndex:
        return self._indexer.ensure()

    def _documents(self, relative: str, data: bytes) -> list[Document]:
        return self._indexer.documents(relative, data)

    def recall(
        self,
        query: str,
        *,
        k: int | str = 5,
        since: str | date | None = None,
        until: str | date | None = None,
        type: str | None = None,
        neighbours: bool = False,
        mode: str | None = None,
        team: bool = False,
    ) -> RecallResult:
        """Ranked hits for `query`; `team=True` searches the team database instead (see
        `team_recall`); `neighbours=True` also lifts the checkpoints just before and
        after each raw hit (a conversation's reply, a task's next step): what a model's context
        wants, where a person searching wants only the matches.

        `mode`: "keyword" (BM25 with the tree, topics and recency; the default, as before the
        extra existed), "semantic" (the nearest vectors alone), "hybrid" (both, fused as
        `config.fusion` says: "score" adds each document's similarity to its BM25 relevance
        inside keyword recall, see `recall.blend_relevance`; "rrf" fuses the two rankings by
        reciprocal rank fusion, see `semantic.fuse`) or "auto" (hybrid when semantic recall is
        on: what the front ends ask for by default). Hybrid without the extra answers by
        keyword, and says so in the result's `mode`."""
        request = RecallQuery.parse(query, k=k, since=since, until=until, type=type, mode=mode)
        if team:
            return self.team_recall(request)
        return self.recall_query(request, neighbours=neighbours)

    # --- team memory (issue 16): hipo_jupyter/team, imported only when a team URL is set ----
    def _team(self):
        """The team package's sync for this root, built on first use. psycopg is imported
        here, lazily: without a team URL nothing of it is ever loaded."""
        if not self.config.team_url:
            raise HipoError("no team database: set Hipo.team_url, $HIPO_TEAM or --team-url URL")
        if self._team_sync is None:
            try:
                from hipo_jupyter.team import TeamDatabase, TeamSync
            except ImportError as error:
                raise HipoError(
                    f"team memory needs the team extra (pip install 'hipo-jupyter[team]'): "
                    f"{error}"
                ) from None
            self._team_sync = TeamSync(self.store, self.config, TeamDatabase(self.config.team_url))
        return self._team_sync

    def team_sync(self, *, full: bool = False):
        """Push the raw checkpoints to the team database (`hipo team sync`): idempotent by
        checkpoint id; types and tags in `config.team_exclude` stay local; redacted first."""
        sync = self._team()
        report = sync.sync(full=full)
        sync.flush_queue()  # whatever waited is in now
        return report

    def team_recall(self, request: RecallQuery) -> RecallResult:
        """`recall` over the team database: ranked with local recall's recency and dates,
        each hit naming its author and notebook. (`Memory.context(..., team=True)` should
        build its recalled part from this.)"""
        from hipo_jupyter.team import team_recall

        wants_meaning = request.mode in ("semantic", "hybrid") or (
            request.mode == "auto" and self.semantic.enabled
        )
        if wants_meaning and not Memory._said_team_keyword_only:
            Memory._said_team_keyword_only = True
            log.warning(
                "hipo: team recall is keyword only (PostgreSQL full-text search): the team's "
                "vectors would need pgvector, which this team database is not set up with"
            )
        return team_recall(
            self._team().database,
            request,
            today=self.today,
            half_life_days=self.config.recency_half_life_days,
        )

    def team_resume(self) -> None:
        """Push in the background what a past session queued for the team (`%load_ext hipo`);
        nothing without a team URL, and nothing but a warning if it cannot."""
        if self.config.team_url:
            self._team_after_write(None)

    def _team_after_write(self, day: date | None) -> None:
        """Queue the day for the team and return at once; a thread pushes it (never raises)."""
        try:
            from hipo_jupyter.team import sync_in_background

            sync_in_background(self._team(), day)
        except HipoError as error:
            log.warning("hipo: checkpoint saved, not sent to the team: %s", error)

    def recall_query(
        self, request: RecallQuery, *, neighbours: bool = False, snippets: bool = True
    ) -> RecallResult:
        """`recall` for a request already parsed (the front ends parse it first); raw hits
        carry their checkpoint's provenance. `snippets=False` (what `context` asks): hits
        carry the start of their text, not the index's cut around the matches."""
        result = self._recall_query(request, neighbours=neighbours, snippets=snippets)
        return replace(result, hits=self._provenance(result.hits))

    def _provenance(self, hits: Sequence[Hit]) -> list[Hit]:
        """The hits, each raw one with its checkpoint's provenance."""
        with self._lock:
            stamps: dict[str, tuple[int, int] | None] = {}
            return [self._with_provenance(hit, stamps) for hit in hits]

    def _with_provenance(self, hit: Hit, stamps: dict[str, tuple[int, int] | None]) -> Hit:
        """The hit with its checkpoint's provenance. `stamps` holds each raw log's (size,
        mtime) for this one recall: a log is stat-ed once per query, never the whole folder
        listed per hit (at a year of memory that listing was most of a context's time)."""
        if hit.kind != "raw":
            return hit
        name = hit.file.removeprefix("memory/")
        if name not in stamps:
            stamps[name] = log_stamp(self.store.memory_dir / name)
        stamp = stamps[name]
        if stamp is None:
            return hit
        found = self.catalog.of_log(name, stamp)
        checkpoint = next((c for c in found if c.line == hit.line), None)
        return replace(hit, provenance=provenance_text(checkpoint)) if checkpoint else hit

    def _recall_query(
        self, request: RecallQuery, *, neighbours: bool = False, snippets: bool = True
    ) -> RecallResult:
        """The recall itself (`recall_run.run`), over what this memory holds now."""
        mode = self._recall_mode(request.mode)
        with self._lock:
            sources = RecallSources(
                index=self._ensure_index(),
                topics=self.topics(),
                nodes=self._node_paths(),
                today=self.today,
                config=self.config,
                neighbours=self._neighbours if neighbours else None,
                semantic=self.semantic,
                file_documents=self._indexer.file_documents,
                weights=self._fusion_weights(),
            )
            return recall_run.run(sources, request, mode, snippets=snippets)

    def context(
        self,
        query: str,
        *,
        budget: int = DEFAULT_BUDGET,
        layer1: bool = True,
        since: str | date | None = None,
        until: str | date | None = None,
        type: str | None = None,
        mode: str | None = None,
        team: bool = False,
    ) -> context_pack.Context:
        """The text a model is sent for `query`, within `budget` tokens: Layer 1 (at most an
        eighth; `layer1=False` leaves it out, as `%%ask` does, which sends it as its own
        block), then the recalled memory fenced as quoted data, in time order with each
        piece's date and source (see `context_pack`). One call for every front end and the
        benchmarks, so what is measured is what users get. `mode` as for `recall`, None
        meaning "auto" (hybrid when semantic recall is on). `team=True` recalls from the team
        database instead (`team_recall`); each piece then names its author and notebook."""
        if team:
            return context_pack.build(
                query,
                budget=budget,
                layer1=(lambda: self.layer1().text) if layer1 else None,
                recall=lambda k: self.team_recall(
                    RecallQuery.parse(query, k=min(k, MAX_K), since=since, until=until, type=type)
                ),
                documents=lambda ids: {},  # the team's text is in its hits, not this index
            )

        def recall(k: int) -> RecallResult:
            request = RecallQuery.parse(
                query, k=k, since=since, until=until, type=type, mode=mode or "auto"
            )
            return self._recall_query(request, neighbours=True, snippets=False)

        def documents(ids: Sequence[str]) -> dict[str, Document]:
            with self._lock:
                return self._ensure_index().documents_by_id(list(ids))

        built = context_pack.build(
            query,
            budget=budget,
            layer1=(lambda: self.layer1().text) if layer1 else None,
            recall=recall,
            documents=documents,
        )
        # Provenance for the pieces the text holds, not for every candidate packing saw.
        return replace(built, hits=self._provenance(built.hits))

    def context_query(
        self, request: RecallQuery, *, layer1: bool = True, team: bool = False
    ) -> context_pack.Context:
        """`context` for a request already parsed: its budget (DEFAULT_BUDGET when it has
        none), dates, type and mode. What the CLI, the server and MCP call."""
        return self.context(
            request.query,
            budget=request.budget or DEFAULT_BUDGET,
            layer1=layer1,
            since=request.since,
            until=request.until,
            type=request.type,
            mode=request.mode,
            team=team,
        )

    def _recall_mode(self, mode: str | None) -> str:
        """The mode a recall runs in: "auto" and "hybrid" become keyword when semantic recall is
        off; "semantic" then fails with how to turn it on."""
        mode = (mode or "keyword").lower()
        if mode not in (*MODES, "auto"):
            raise QueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if mode == "keyword":
            return mode
        on, message = self.semantic.status()
        if mode == "semantic" and not on:
            raise SemanticUnavailable(message)
        if mode in ("auto", "hybrid"):
            return "hybrid" if on else "keyword"
        return mode

    def _fusion_weights(self) -> FusionWeights:
        """RRF's weights (`config.fusion == "rrf"`)."""
        config = self.config
        return FusionWeights(
            keyword=config.keyword_weight,
            vector=config.vector_weight,
            topics=config.topics_weight,
            recency=config.recency_weight,
            k=config.rrf_k,
        )

    # --- status ------------------------------------------------------------------------------
    def status(self) -> Status:
        compactor = self._compactor()
        plan = compactor.plan()
        layer1 = self.layer1()
        index = self._ensure_index()
        nodes = {level: len(self.store.node_files(level)) for level in NODE_KINDS}
        nodes["root"] = int(self.store.root_node.exists())
        return Status(
            root=str(self.root),
            raw_days=len(self.store.raw_days()),
            checkpoints=sum(1 for d in index.documents(kinds={"raw"})),
            nodes=nodes,
            topics=len(self.topics()),
            layer1_tokens=layer1.total_tokens,
            layer1_budget=layer1.total_budget,
            backend=self.config.search_backend,
            last_compaction=plan.state.get("lastCompactionRun"),
            dirty_nodes=len(plan.dirty),
            semantic=self.semantic.status()[1],
        )

    # --- events ------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(event)` after "remember", "compact" or "reindex"; returns unsubscribe.

        Widgets and the sidebar refresh through this; the engine knows nothing of them.
        """
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def _notify(self, event: str) -> None:
        for callback in list(self._listeners):
            try:
                callback(event)
            except Exception:  # a broken widget must never break a checkpoint
                continue

    def close(self) -> None:
        self._indexer.close()
        self.semantic.close()


def _write_out(out: Path | BinaryIO, data: bytes) -> None:
    """Bytes to a path (atomically, beside it) or a binary stream."""
    if isinstance(out, Path):
        temp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, out)
    else:
        out.write(data)
