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

from . import recall as recall_module
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
from .layer1 import Layer1, assemble_layer1, generated_part, write_templates
from .nodes import parse_node, read_status
from .provenance import provenance_text
from .recall import Hit, RecallResult
from .redact import redact
from .requests import CheckpointDraft, RecallQuery, parse_day, storable
from .root import Topic, add_to_topics, collect_topics, topics_from_json
from .rules import Rule, collect_rules, rules_index_text
from .search import Document, SearchIndex, document_id, memory_index, open_index
from .semantic import (
    BACKLOG_LIMIT,
    FUSIONS,
    MODES,
    FusionWeights,
    SemanticBacklog,
    SemanticIndex,
    fuse,
    vector_hits_as_hits,
)
from .store import Appended, Store, sha256
from .summarize import ExtractiveSummarizer, Summarizer
from .tokens import TokenCountCache
from .tree import CompactionReport, Compactor, period_start, stamp_key

if TYPE_CHECKING:
    import pandas

    from .graph import MemoryGraph, SparqlResult  # pyoxigraph: imported only with the extra
    from .vectors import VectorHit  # numpy: imported only with the extra

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
        self._index: SearchIndex | None = None
        self._index_backend = ""
        self._synced = False
        self._topics: tuple[dict, date, list[Topic]] | None = None  # (raw stamps, today, topics)
        self._token_cache = TokenCountCache(self.store.index_dir / "token-counts.json")
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.RLock()
        self._neighbours = recall_module.LogNeighbours(self.root, self._documents)  # issue 5
        self.catalog = CheckpointCatalog(self.store)  # issue 15: rules, frame, graph
        self._graph: MemoryGraph | None = None
        self.semantic = SemanticIndex(
            self.store.index_dir,
            setting=self.config.semantic,
            model_path=self.config.embedding_model or None,
            tokenizer_path=self.config.embedding_tokenizer or None,
            embedder=embedder,
        )

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
                self._index_raw_append(day, written, checkpoint)
            except (HipoError, sqlite3.Error, OSError) as exc:
                # The checkpoint is safe in the raw log; the index catches up at the next sync.
                # Raising here would invite the user to write it a second time.
                self._synced = False
                log.warning("hipo: checkpoint saved but not indexed yet: %s", exc)
            self._embed_raw_append(day, written, checkpoint)
            self._topics_after_append(day, written, checkpoint)
        self._notify("remember")
        return checkpoint

    def _index_raw_append(self, day: date, written, checkpoint: Checkpoint) -> None:
        index = self._open_index()
        relative = self.store.relative(self.store.raw_path(day))
        held = index.file_hashes().get(relative)
        if held == written.hash_before or (held is None and written.line == 1):
            index.add(relative, written.hash_after, [_raw_document(relative, checkpoint)])
        else:  # the index missed an earlier write (another tool, a crash): re-read the file
            docs = [
                _raw_document(relative, c)
                for c in parse_log(written.text_after, date=day.isoformat())
            ]
            index.replace_file(relative, written.hash_after, docs)

    def _embed_raw_append(self, day: date, written, checkpoint: Checkpoint) -> None:
        """The vector side of `_index_raw_append`, when semantic recall is on."""
        relative = self.store.relative(self.store.raw_path(day))

        def write(vectors) -> None:
            held = vectors.file_hash(relative)
            if held == written.hash_before or (held is None and written.line == 1):
                vectors.add(relative, written.hash_after, [_raw_document(relative, checkpoint)])
            elif held != written.hash_after:  # missed a write: the file again, as the truth
                found = self._file_documents(relative)
                if found is not None:
                    vectors.replace_file(relative, *found)

        self._vectors_in_step(write)

    def _vectors_in_step(self, write: Callable[..., object]) -> None:
        """Mirror a text-index write into the vectors in the same call (no indexing lag), when
        semantic recall is on; a failure turns semantic recall off, never the write."""
        if not self.semantic.enabled:
            return
        self.semantic.guarded(
            lambda: write(self.semantic.ready(self._open_index(), self._file_documents))
        )

    def _file_documents(self, relative: str) -> tuple[str, list[Document]] | None:
        """(sha256, documents) of a file as it is now, for the vectors to catch up from."""
        try:
            data = self._read_searchable(relative, self.root / relative)
        except (OSError, ParseError):
            return None
        try:
            return sha256(data), self._documents(relative, data)
        except ParseError:
            return sha256(data), []

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
            data = self.store.read_file(path)
            docs = self._documents(relative, data)
            self._open_index().replace_file(relative, sha256(data), docs)
            self._vectors_in_step(
                lambda vectors: vectors.replace_file(relative, sha256(data), docs)
            )
        self._notify("remember")
        return relative

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
                self._sync_index(progress, backlog=True)
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
            self._sync_index()
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
    def _open_index(self) -> SearchIndex:
        if self._index is None or self._index_backend != self.config.search_backend:
            if self._index is not None:
                self._index.close()
            self._index = self._open_saved_or_memory_index()
            self._index_backend = self.config.search_backend
            self._synced = False
        return self._index

    def _open_saved_or_memory_index(self) -> SearchIndex:
        """The index under memory/.index; in a folder this process cannot write, one built in
        memory instead, so recall and status still answer (and say, once, why it is not kept)."""
        self.store.check_root()
        try:
            self.store.confined(self.store.memory_dir)
            self.store.index_dir.mkdir(parents=True, exist_ok=True)
            return open_index(self.store.index_dir, self.config.search_backend)
        except (OSError, HipoError, sqlite3.Error) as error:
            if isinstance(error, PathOutsideRootError) or os.access(self.store.memory_dir, os.W_OK):
                raise
            reason = getattr(error, "strerror", None) or str(error)
            log.warning(
                "hipo: the search index could not be saved in memory/.index (%s); recall uses "
                "one built in memory for this process",
                reason,
            )
            return memory_index()

    def _searchable_files(self) -> dict[str, Path]:
        files = {
            self.store.relative(self.store.raw_path(d)): self.store.raw_path(d)
            for d in self.store.raw_days()
        }
        for level in NODE_KINDS:
            for path in self.store.node_files(level).values():
                files[self.store.relative(path)] = path
        knowledge = self.root / "knowledge"
        if knowledge.is_dir():
            for path in sorted(knowledge.rglob("*.md")):
                if path.is_file() and not path.is_symlink():
                    files[self.store.relative(path)] = path
        return files

    def _read_searchable(self, relative: str, path: Path) -> bytes:
        """A raw log (under its lock, repaired), or a node or knowledge file: bounded reads of
        regular files only."""
        if self.store.is_raw(path):
            return self.store.read_bytes(path)
        return self.store.read_file(path)

    def _sync_index(self, progress: Progress | None = None, *, backlog: bool = False) -> int:
        """Make the index match the files: re-send changed files, drop deleted ones. With
        `backlog` (reindex, import) the vectors catch up however many texts wait."""
        index = self._open_index()
        held = index.file_hashes()
        files = self._searchable_files()
        changed = 0
        total = len(files)
        for done, (relative, path) in enumerate(sorted(files.items()), start=1):
            try:
                data = self._read_searchable(relative, path)
            except (OSError, ParseError):
                continue  # gone, or not a regular file: the store warned
            digest = sha256(data)
            if held.get(relative) != digest:
                try:
                    docs = self._documents(relative, data)
                except ParseError:
                    docs = []
                # Only over what was recorded when this sync began: another process that
                # appended and indexed since then holds a newer version than the one read here.
                changed += index.replace_file(relative, digest, docs, if_hash=held.get(relative))
            if progress and (done % 25 == 0 or done == total):
                progress(done, total, relative)
        for relative in set(held) - set(files):
            index.remove_file(relative)
            changed += 1
        self._synced = True
        # The vectors follow: at once when they are in use (the model is loaded) or for a
        # rebuild or an import (in batches, with progress); otherwise before their first use,
        # so `%load_ext hipo` never waits for the model, even on a day whose nodes it rebuilt.
        if self.semantic.is_open or (backlog and self.semantic.enabled):
            self.semantic.guarded(
                lambda: self.semantic.catch_up(
                    index,
                    self._file_documents,
                    progress=progress,
                    limit=None if backlog else BACKLOG_LIMIT,
                )
            )
        return changed

    def _documents(self, relative: str, data: bytes) -> list[Document]:
        from .store import decode_markdown

        text = decode_markdown(data, relative)
        parts = relative.split("/")
        if parts[0] == "knowledge":
            title = parse_node(text).meta.get("title") or Path(relative).stem.replace("-", " ")
            return [
                Document(
                    f"{relative}#L1",
                    relative,
                    1,
                    "knowledge",
                    self.today.isoformat(),
                    "",
                    title,
                    text,
                )
            ]
        if len(parts) == 2:  # memory/YYYY-MM-DD.md
            day = parts[1][:-3]
            return [_raw_document(relative, c) for c in parse_log(text, date=day)]
        level, period = parts[1], parts[2][:-3]
        node = parse_node(text)
        try:
            start = period_start(level, period).isoformat()
        except ValueError:
            return []
        return [
            Document(
                f"{relative}#L1",
                relative,
                1,
                level,
                start,
                "",
                f"{level} {period}",
                node.body,
                tuple(node.topics),
            )
        ]

    def _ensure_index(self) -> SearchIndex:
        index = self._open_index()
        if not self._synced:
            self._sync_index()
        return index

    def reindex(self, *, progress: Progress | None = None) -> int:
        """Drop the index and build it again from the Markdown files. Vectors whose text did not
        change are kept (they are keyed by a hash of the text); the rest are embedded again."""
        with self._lock:
            index = self._open_index()
            index.clear()
            self._sync_index(progress, backlog=True)
            count = index.count()
        self._notify("reindex")
        return count

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
    ) -> RecallResult:
        """Ranked hits for `query`; `neighbours=True` also lifts the checkpoints just before and
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
        return self.recall_query(request, neighbours=neighbours)

    def recall_query(self, request: RecallQuery, *, neighbours: bool = False) -> RecallResult:
        """`recall` for a request already parsed (the front ends parse it first); raw hits
        carry their checkpoint's provenance."""
        result = self._recall_query(request, neighbours=neighbours)
        with self._lock:
            hits = [self._with_provenance(hit) for hit in result.hits]
        return replace(result, hits=hits)

    def _with_provenance(self, hit: Hit) -> Hit:
        if hit.kind != "raw":
            return hit
        checkpoint = self.catalog.at(hit.file, hit.line)
        return replace(hit, provenance=provenance_text(checkpoint)) if checkpoint else hit

    def _recall_query(self, request: RecallQuery, *, neighbours: bool = False) -> RecallResult:
        query, k, type = request.query, request.k, request.type
        since_day = request.since.isoformat() if request.since else None
        until_day = request.until.isoformat() if request.until else None
        mode = self._recall_mode(request.mode)
        with self._lock:
            index = self._ensure_index()
            nodes = self.store.node_paths()

            def keyword(count: int, similar: Sequence[tuple[Document, float]] = ()) -> RecallResult:
                return recall_module.recall(
                    index,
                    self.topics(),
                    query,
                    k=count,
                    since=since_day,
                    until=until_day,
                    type=type,
                    today=self.today,
                    half_life_days=self.config.recency_half_life_days,
                    nodes=nodes,
                    neighbours=self._neighbours if neighbours else None,
                    similar=similar,
                    similar_weight=self.config.similarity_weight,
                )

            if mode == "keyword":
                return keyword(k)
            # Candidates from the vectors: as many as BM25 gives keyword recall for score
            # fusion; twice what is shown for RRF (enough for an answer one list ranks low
            # and the other high, measured on LoCoMo); `k` for semantic recall alone.
            fusion = self.config.fusion
            if fusion not in FUSIONS:
                raise HipoError(f"fusion must be one of {', '.join(FUSIONS)}, not {fusion!r}")
            rrf = fusion == "rrf"
            if mode == "semantic":
                limit = k
            else:
                limit = max(2 * k, 10) if rrf else recall_module.candidate_count(k)
            try:
                found = self.semantic.search(
                    index,
                    self._file_documents,
                    query,
                    limit=limit,
                    kinds={"raw"} if type else {"raw", "daily", "weekly", "monthly", "knowledge"},
                    types={type} if type else None,
                    since=since_day,
                    until=until_day,
                )
            except SemanticBacklog:
                if mode == "semantic":
                    raise
                return keyword(k)  # the status says: run reindex
            except HipoError as error:
                if mode == "semantic":
                    raise
                self.semantic.turn_off(str(error))  # answer by keyword, and keep saying why
                return keyword(k)
            found = [hit for hit in found if hit.score >= self.config.min_similarity]
            # Documents come from the text index in one query (not by parsing each hit's file:
            # at a year of memory that was most of a hybrid recall's time).
            if mode == "semantic":
                return RecallResult(
                    query=query.strip(),
                    hits=vector_hits_as_hits(found, _lookup(index, found), nodes),
                    mode="semantic",
                )
            if not rrf:
                docs = index.documents_by_id([hit.id for hit in found])
                similar = [(docs[hit.id], hit.score) for hit in found if hit.id in docs]
                return replace(keyword(k, similar), mode="hybrid")
            ranked = keyword(limit)
            hits = fuse(
                ranked.hits,
                found,
                k=k,
                topic_names=ranked.topic_matches,
                lookup=_lookup(index, found, ranked.hits),
                nodes=nodes,
                weights=self._fusion_weights(),
            )
            return replace(
                ranked,
                hits=hits,
                did_you_mean=[] if hits else ranked.did_you_mean,
                mode="hybrid",
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
        if self._index is not None:
            self._index.close()
            self._index = None
        self.semantic.close()


def _write_out(out: Path | BinaryIO, data: bytes) -> None:
    """Bytes to a path (atomically, beside it) or a binary stream."""
    if isinstance(out, Path):
        temp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, out)
    else:
        out.write(data)


def _lookup(
    index: SearchIndex, found: Sequence[VectorHit], hits: Sequence[Hit] = ()
) -> Callable[[str, int], Document | None]:
    """(path, line) -> the Document there, for these vector and keyword hits, read at once."""
    ids = [hit.id for hit in found] + [document_id(hit.file, hit.line) for hit in hits]
    by_place = {(doc.path, doc.line): doc for doc in index.documents_by_id(ids).values()}
    return lambda path, line: by_place.get((path, line))


def _body_text(checkpoint: Checkpoint) -> str:
    """Fields and free text; the title and tags have columns of their own in the index."""
    parts = [f"{key}: {value}" for key, value in checkpoint.fields]
    if checkpoint.text:
        parts.append(checkpoint.text)
    return "\n".join(parts)


def _raw_document(relative: str, checkpoint: Checkpoint) -> Document:
    return Document(
        id=f"{relative}#L{checkpoint.line}",
        path=relative,
        line=checkpoint.line,
        kind="raw",
        date=checkpoint.date or relative[len("memory/") : -len(".md")],
        type=checkpoint.type,
        title=checkpoint.title,
        text=_body_text(checkpoint),
        tags=checkpoint.tags,
    )
