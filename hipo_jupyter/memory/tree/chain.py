"""The compaction chain: raw -> daily -> weekly -> monthly -> ROOT, incremental and in one pass.

Each node has a key: a hash of what it is built from (a daily: its raw log; a weekly: its dailies'
keys; a monthly: its weeklies' keys) and of the threshold that decides verbatim or summary. The
keys form a Merkle chain, so finding what is dirty reads only the raw logs and the state file.

A node is *dirty* when it is missing, when its key changed and it is tentative, or when it should
now be fixed. Fixed nodes are never rewritten, with one exception the design names: a late entry
(an import, `--date`) for a fixed period changes its key, and the raw log is the truth, so the node
is rebuilt once (it stays fixed) and the rebuild is logged in the state file and the report.

Lifecycle (Hipocampus): a daily fixes when its day is over; a weekly and a monthly fix when their
period has been over for more than `grace_days` (7) and every input is fixed. Weeks are ISO weeks
and belong to the month of their Thursday. Below its threshold (200 / 300 / 500 lines) a node is
a verbatim copy or concatenation (no loss); above it the `Summarizer` writes it. If a summarizer
fails, the extractive one is used and the failure is reported: the chain never stops for it.

`.compaction-state.json` keeps Hipocampus's own keys (`lastCompactionRun`, ...) and ours under
`"hipo"`; it is written only after a whole pass succeeded.

Crashes and other tools: a pass killed half way leaves nodes old or new (each is written by
rename) and the old state, so the next pass rebuilds what the state does not vouch for; it also
settles raw-log appends whose writer was killed (`Store.repair_appends`) and deletes the
temporary files a killed pass left. A state file that is missing or unreadable is rebuilt:
tentative nodes are rebuilt, fixed ones kept when their `source-hash` still matches. A node that
is damaged (not UTF-8, no frontmatter or an unterminated one, or ours but cut short) is rebuilt
from its sources, which are the truth, fixed or not. Each of these is said in the report.
Each daily node and ROOT.md are built from the very bytes whose hash makes their key, so an
append landing during a pass only makes the next pass rebuild, never a node that lies about it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from ..config import MemoryConfig
from ..disk.checkpoint import parse_log
from ..disk.files import MAX_STATE_BYTES
from ..disk.jsonread import parse_json
from ..disk.nodes import list_value, node_head, parse_node, read_status, render_node
from ..disk.periods import month_bounds, week_bounds, week_id, week_month
from ..disk.store import ROOT_FILE, Store, decode_markdown, node_path, raw_log_day, sha256
from ..errors import ParseError
from . import root as root_node
from .summarize import ExtractiveSummarizer, Source, Summarizer
from .topic_index import collect_topics, topics_stamp, topics_to_json
from .topics import node_topics

STATE_VERSION = 1
Progress = Callable[[int, int, str], None]


@dataclass
class CompactionReport:
    """What one pass did. Empty lists mean nothing was dirty."""

    built: list[str] = field(default_factory=list)  # node paths written (relative to root)
    fixed: list[str] = field(default_factory=list)  # nodes that turned tentative -> fixed
    reopened: list[str] = field(default_factory=list)  # fixed nodes rebuilt for a late entry
    summarized: list[str] = field(default_factory=list)  # nodes above threshold (not verbatim)
    errors: list[str] = field(default_factory=list)  # sources skipped or fallbacks, with why
    deferred: list[str] = field(default_factory=list)  # summaries owed, written later (`defer`)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.built)


def _key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:32]


# --- the plan: what exists, what each node is built from, what is dirty ----------------------
@dataclass
class PlannedNode:
    level: str
    period: str
    path: str  # relative to the root
    sources: list[str]  # relative paths of inputs
    key: str
    status: str  # what it should be now: "tentative" | "fixed"
    action: str = ""  # "" (clean) | "build" | "fix" | "reopen"
    behind: bool = False  # dirty only by writes since the last pass (`_behind`)


@dataclass
class Plan:
    nodes: list[PlannedNode]
    raw_hashes: dict[str, str]
    state: dict
    root_key: str
    root_dirty: bool
    unreadable: list[str]
    notes: list[str] = field(default_factory=list)  # state or nodes found damaged, and why
    raw_data: dict[str, bytes] = field(default_factory=dict)  # the bytes raw_hashes hashed
    _superseded: dict[str, str] | None = None

    @property
    def superseded(self) -> dict[str, str]:
        """The id of each checkpoint a correction in force replaced -> the correction's id,
        from the raw logs this pass read (`superseded_by`)."""
        if self._superseded is None:
            self._superseded = superseded_by(self.raw_data)
        return self._superseded

    @property
    def dirty(self) -> list[PlannedNode]:
        return [n for n in self.nodes if n.action]

    @property
    def stale(self) -> list[PlannedNode]:
        """Dirty nodes that are not merely `behind`: a fixed node a late entry changed, a
        damaged node, a closed period never compacted, a node the state no longer vouches
        for. These make `hipo check` fail until a pass runs."""
        return [n for n in self.nodes if n.action and not n.behind]


def state_problem(state: object) -> str | None:
    """What is wrong with the shape of a compaction state, or None when it is ours."""
    if not isinstance(state, dict) or not isinstance(state.get("hipo"), dict):
        return "no hipo object"
    hipo = state["hipo"]
    nodes = hipo.get("nodes", {})
    if not isinstance(nodes, dict):
        return "nodes is not an object"
    for path, entry in nodes.items():
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("key", ""), str)
            and isinstance(entry.get("status", ""), str)
        ):
            return f"the entry of {str(path)[:60]} is not an object of key and status"
    if not isinstance(hipo.get("reopened", []), list):
        return "reopened is not a list"
    if not isinstance(hipo.get("root-key", ""), str):
        return "root-key is not a string"
    if not isinstance(state.get("lastCompactionRun", ""), str | None):
        return "lastCompactionRun is not a string"
    return None


@dataclass(frozen=True)
class OwedSummary:
    """A node owed its summarizer's summary (`Compactor.owed_job`), with the sources read
    under the locks: the summary is written from these, outside them, while the model writes."""

    node: PlannedNode
    sources: list[Source]

    def summarize(self, summarizer: Summarizer) -> str:
        return summarizer.summarize(self.node.level, self.node.period, self.sources)


class Compactor:
    def __init__(
        self,
        store: Store,
        config: MemoryConfig,
        summarizer: Summarizer,
        today: date,
        *,
        defer: bool = False,
    ) -> None:
        """`defer`: a node above its threshold is written with the extractive summary at once
        and marked in the state as owed its summarizer's (`"pending"`), for `write_owed` to
        replace later (a summarizer that calls a model, in the background): the pass then never
        waits on the model. Without it the pass writes each summary itself."""
        self.store = store
        self.config = config
        self.summarizer = summarizer
        self.today = today
        self.defer = defer and summarizer.name != ExtractiveSummarizer.name

    # state ---------------------------------------------------------------------------------
    def read_state(self) -> dict:
        return self._read_state()[0]

    def _read_state(self) -> tuple[dict, str | None]:
        """The state, and why it could not be used (None when it could, or when it is simply
        not there yet). A state that does not have our shape, down to each node's entry, is not
        used: the tree is rebuilt from the raw logs, which are the truth."""
        fresh = {"hipo": {"version": STATE_VERSION, "nodes": {}, "reopened": []}}
        try:
            state = parse_json(
                self.store.read_file(self.store.state_path, MAX_STATE_BYTES),
                self.store.relative(self.store.state_path),
            )
        except FileNotFoundError:
            return fresh, "missing"
        except (OSError, ParseError) as exc:
            return fresh, f"unreadable ({getattr(exc, 'strerror', None) or exc})"
        except (ValueError, RecursionError) as exc:
            return fresh, f"unreadable ({str(exc)[:80]})"
        problem = state_problem(state)
        if problem:
            return fresh, f"not a hipo state file ({problem})"
        return state, None

    def _status(self, level: str, period: str, inputs_fixed: bool) -> str:
        if level == "daily":
            return "fixed" if self.today > date.fromisoformat(period) else "tentative"
        end = week_bounds(period)[1] if level == "weekly" else month_bounds(period)[1]
        over = (self.today - end).days > self.config.grace_days
        return "fixed" if over and inputs_fixed else "tentative"

    def plan(self) -> Plan:
        """What exists, what each node is built from, and what a pass would rebuild now."""
        store = self.store
        state, state_problem = self._read_state()
        recorded = state["hipo"].setdefault("nodes", {})
        days = store.raw_days()
        raw_hashes, raw_data, unreadable = self._read_raw(days)
        existing = {level: store.node_files(level) for level in ("daily", "weekly", "monthly")}
        notes: list[str] = []
        if state_problem and any(existing.values()):
            notes.append(
                f"memory/.compaction-state.json {state_problem}: rebuilt; tentative nodes "
                "rebuilt, fixed ones kept where their source-hash matches"
            )
        nodes = self._planned_nodes(days, raw_hashes)
        for node in nodes:
            damaged = len(notes)
            node.action = self._action(node, recorded, existing[node.level], notes)
            node.behind = (
                bool(node.action)
                and len(notes) == damaged
                and _behind(node, recorded.get(node.path), node.period in existing[node.level])
            )
        monthly_keys = [f"{n.path}={n.key}={n.status}" for n in nodes if n.level == "monthly"]
        root_key = _key("root", self.config.root_budget, self.today.isoformat(), *monthly_keys)
        root_damage = node_head(store.root_node).damage if store.root_node.exists() else None
        if root_damage is not None:
            notes.append(f"{ROOT_FILE} was {root_damage}: rebuilt")
        root_dirty = (
            state["hipo"].get("root-key") != root_key
            or not store.root_node.exists()
            or root_damage is not None
            or any(n.action for n in nodes)
        )
        return Plan(nodes, raw_hashes, state, root_key, root_dirty, unreadable, notes, raw_data)

    def _read_raw(self, days: list[date]) -> tuple[dict[str, str], dict[str, bytes], list[str]]:
        """Each raw log's hash and bytes (read once: the pass builds from these very bytes),
        and the logs that could not be read, with why."""
        store = self.store
        raw_hashes: dict[str, str] = {}
        raw_data: dict[str, bytes] = {}
        unreadable: list[str] = []
        for day in days:
            path = store.raw_path(day)
            try:
                data = store.read_bytes(path)
            except OSError as exc:
                unreadable.append(f"{store.relative(path)}: {exc.strerror}")
                continue
            raw_hashes[store.relative(path)] = sha256(data)
            raw_data[store.relative(path)] = data
        return raw_hashes, raw_data, unreadable

    def _planned_nodes(self, days: list[date], raw_hashes: dict[str, str]) -> list[PlannedNode]:
        """Every node the raw logs call for, with its sources, key and status: dailies from the
        readable raw logs, weeklies from dailies, monthlies from weeklies."""
        store, config = self.store, self.config
        nodes: list[PlannedNode] = []
        daily_by_week: dict[str, list[PlannedNode]] = {}
        for day in days:
            raw_rel = store.relative(store.raw_path(day))
            if raw_rel not in raw_hashes:
                continue
            period = day.isoformat()
            node = PlannedNode(
                "daily",
                period,
                node_path("daily", period),
                [raw_rel],
                _key("daily", raw_hashes[raw_rel], config.daily_threshold),
                self._status("daily", period, True),
            )
            nodes.append(node)
            daily_by_week.setdefault(week_id(day), []).append(node)

        weekly_by_month: dict[str, list[PlannedNode]] = {}
        for week, dailies in sorted(daily_by_week.items()):
            node = PlannedNode(
                "weekly",
                week,
                node_path("weekly", week),
                [d.path for d in dailies],
                _key("weekly", config.weekly_threshold, *(f"{d.path}={d.key}" for d in dailies)),
                self._status("weekly", week, all(d.status == "fixed" for d in dailies)),
            )
            nodes.append(node)
            weekly_by_month.setdefault(week_month(week), []).append(node)

        for month, weeklies in sorted(weekly_by_month.items()):
            nodes.append(
                PlannedNode(
                    "monthly",
                    month,
                    node_path("monthly", month),
                    [w.path for w in weeklies],
                    _key(
                        "monthly",
                        config.monthly_threshold,
                        *(f"{w.path}={w.key}" for w in weeklies),
                    ),
                    self._status("monthly", month, all(w.status == "fixed" for w in weeklies)),
                )
            )
        return nodes

    def _action(self, node: PlannedNode, recorded: dict, existing: dict, notes: list[str]) -> str:
        period_file = existing.get(node.period)
        entry = recorded.get(node.path)
        if period_file is None:
            return "build"
        head = node_head(period_file)
        damage = head.damage
        if damage is None and entry is None and head.source_hash not in (None, node.key):
            damage = "stale: its source-hash does not match its sources (state lost)"
        if damage is not None:
            notes.append(f"{node.path} was {damage}: rebuilt from its sources")
            if (
                entry is not None
                and entry.get("status") == "fixed"
                and entry.get("key") != node.key
            ):
                return "reopen"
            return "build"
        if entry is None:
            # A node we did not write (Hipocampus, by hand) or whose state was lost.
            if head.status == "fixed":
                recorded[node.path] = {"key": node.key, "status": "fixed", "adopted": True}
                return ""
            return "build"
        if entry.get("status") == "fixed":
            return "reopen" if entry.get("key") != node.key else ""
        if entry.get("key") != node.key:
            return "build"
        return "fix" if node.status == "fixed" else ""

    # the pass ------------------------------------------------------------------------------
    def run(self, progress: Progress | None = None) -> CompactionReport:
        started = time.perf_counter()
        report = CompactionReport()
        # Run under the compaction lock (Memory.compact): no other pass is writing, so temporary
        # files are a killed pass's, and appends are settled before the logs are hashed.
        self.store.remove_stale_temp_files()
        report.errors.extend(self.store.repair_appends())
        plan = self.plan()
        report.errors.extend(f"skipped {e}" for e in plan.unreadable)
        report.errors.extend(plan.notes)
        dirty = plan.dirty
        total = len(dirty) + (1 if plan.root_dirty else 0)
        recorded = plan.state["hipo"]["nodes"]
        built_keys = {n.path for n in dirty}

        for done, node in enumerate(dirty, start=1):
            if progress:
                progress(done - 1, total, node.path)
            # A fixed parent is reopened only when a child was really rebuilt (key changed).
            try:
                text = self._build(node, report, plan)
            except ParseError as exc:
                report.errors.append(f"skipped {node.path}: {exc}")
                built_keys.discard(node.path)
                continue
            self.store.write_atomic(self.store.root / node.path, text)
            report.built.append(node.path)
            if node.action == "fix":
                report.fixed.append(node.path)
            elif node.action == "reopen":
                report.reopened.append(node.path)
                plan.state["hipo"].setdefault("reopened", []).append(
                    {"node": node.path, "on": self.today.isoformat(), "key": node.key}
                )
            elif (
                node.status == "fixed" and (recorded.get(node.path) or {}).get("status") != "fixed"
            ):
                report.fixed.append(node.path)
            recorded[node.path] = self._entry(node, report)

        if plan.root_dirty:
            if progress:
                progress(total - 1, total, ROOT_FILE)
            self.store.write_atomic(self.store.root_node, self._build_root(plan))
            report.built.append(ROOT_FILE)
            plan.state["hipo"]["root-key"] = plan.root_key
        if progress:
            progress(total, total, "done")

        if report.built or not self.store.state_path.exists():
            self._write_state(plan.state)
        report.seconds = time.perf_counter() - started
        return report

    # summaries owed: written after the pass (`defer`) -------------------------------------
    def owed(self) -> list[str]:
        """The nodes a deferred pass wrote with the extractive stand-in and whose summarizer's
        summary is still owed, in the order they are written: days, weeks, months. The state
        file is the record, so a process that died mid-summary leaves them owed for the next."""
        nodes = self.read_state()["hipo"].get("nodes", {})
        order = {"daily": 0, "weekly": 1, "monthly": 2}
        owed = [path for path, entry in nodes.items() if entry.get("pending")]
        return sorted(owed, key=lambda path: (order.get(path.split("/")[1], 3), path))

    def owed_job(self, path: str) -> OwedSummary | None:
        """Under the locks: the node `path` with its sources, when it is still owed a summary
        and clean (a node a write made dirty is left to the next pass, which defers it anew)."""
        plan = self.plan()
        node = _still_owed(plan, path)
        return OwedSummary(node, self._sources(node, CompactionReport(), plan)) if node else None

    def write_owed(self, job: OwedSummary, body: str | None, error: str = "") -> list[str]:
        """Under the locks, after the summarizer answered (`body`, or None and the `error`
        that kept it from answering: the stand-in stays): the node rewritten with its summary
        when it is still owed and clean, the clean nodes built from it rebuilt upward (a week
        over a day, a month over a week: each again owed if it is summarized) and ROOT.md after
        a month. Same keys, same statuses: the stand-in was only ever standing in, so a fixed
        node is still written once with its summary. Returns the node paths written."""
        plan = self.plan()
        recorded = plan.state["hipo"]["nodes"]
        node = _still_owed(plan, job.node.path)
        if node is None or node.key != job.node.key:
            return []  # rebuilt, written or made dirty meanwhile: the next pass decides
        if self._sources(node, CompactionReport(), plan) != job.sources:
            return []  # a node below it changed while the model wrote: owed again, afresh
        entry = recorded[job.node.path]
        entry.pop("pending", None)
        written: list[str] = []
        if body is not None:
            text = self._render(job.node, job.sources, body)
            self.store.write_atomic(self.store.root / job.node.path, text)
            written.append(job.node.path)
            written += self._rebuild_above(plan, job.node.path)
        else:
            entry["summary-error"] = error[:200]
        self.store.write_atomic(
            self.store.state_path, json.dumps(plan.state, indent=1, sort_keys=True)
        )
        return written

    def _rebuild_above(self, plan: Plan, changed_path: str) -> list[str]:
        """The clean nodes built from `changed_path`, rebuilt from the new text, and ROOT.md
        when a month changed and nothing else waits for a pass."""
        recorded = plan.state["hipo"]["nodes"]
        changed = {changed_path}
        report = CompactionReport()
        for node in plan.nodes:
            if node.action or not changed.intersection(node.sources):
                continue
            text = self._build(node, report, plan)
            self.store.write_atomic(self.store.root / node.path, text)
            entry = recorded.setdefault(node.path, {"key": node.key, "status": node.status})
            entry.pop("pending", None)
            if node.path in report.deferred:
                entry["pending"] = self.summarizer.name
            changed.add(node.path)
        months = any(path.startswith("memory/monthly/") for path in changed)
        if months and not plan.root_dirty:
            self.store.write_atomic(self.store.root_node, self._build_root(plan))
            changed.add(ROOT_FILE)
        changed.discard(changed_path)
        return sorted(changed)

    def _entry(self, node: PlannedNode, report: CompactionReport) -> dict:
        """The state's entry of a node just built: its key, its status, and the summarizer
        that still owes it a summary when the pass deferred it."""
        entry: dict = {"key": node.key, "status": node.status}
        if report.deferred and report.deferred[-1] == node.path:
            entry["pending"] = self.summarizer.name
        return entry

    def _write_state(self, state: dict) -> None:
        state["lastCompactionRun"] = datetime.now(UTC).isoformat(timespec="seconds")
        state.setdefault("rawLinesSinceLastCompaction", 0)
        state.setdefault("checkpointsSinceLastCompaction", 0)
        state["rawLinesSinceLastCompaction"] = 0
        state["checkpointsSinceLastCompaction"] = 0
        state["hipo"]["version"] = STATE_VERSION
        self.store.write_atomic(self.store.state_path, json.dumps(state, indent=1, sort_keys=True))

    def _read_source(self, relative: str, plan: Plan | None = None) -> str:
        if relative.count("/") == 1 and plan is not None and relative in plan.raw_data:
            text = decode_markdown(plan.raw_data[relative], relative)  # the bytes of the key
            return without_superseded(text, plan.superseded)
        text = self.store.read_text(self.store.root / relative)
        if relative.count("/") != 1:
            return parse_node(text).body
        return without_superseded(text, plan.superseded) if plan is not None else text

    def _build(self, node: PlannedNode, report: CompactionReport, plan: Plan | None = None) -> str:
        sources = self._sources(node, report, plan)
        threshold = {
            "daily": self.config.daily_threshold,
            "weekly": self.config.weekly_threshold,
            "monthly": self.config.monthly_threshold,
        }[node.level]
        lines = sum(s.text.count("\n") + 1 for s in sources)
        if lines <= threshold:
            body = _verbatim(node, sources)
        else:
            body = self._summarize(node, sources, report)
            report.summarized.append(node.path)
        return self._render(node, sources, body)

    def _sources(
        self, node: PlannedNode, report: CompactionReport, plan: Plan | None = None
    ) -> list[Source]:
        sources = []
        for relative in node.sources:
            try:
                sources.append(Source(relative, self._read_source(relative, plan)))
            except FileNotFoundError:
                report.errors.append(f"{node.path}: source {relative} is missing")
            except ParseError as exc:
                if node.level == "daily":
                    raise
                report.errors.append(f"{node.path}: {exc}")
        return sources

    def _render(self, node: PlannedNode, sources: list[Source], body: str) -> str:
        meta = {
            "type": node.level,
            "status": node.status,
            "period": node.period,
            "source-files": list_value([s.path for s in sources]),
            "topics": ", ".join(node_topics(body)),
            "source-hash": node.key,
        }
        if node.level == "weekly":
            monday, sunday = week_bounds(node.period)
            meta["dates"] = f"{monday.isoformat()} to {sunday.isoformat()}"
        if node.level == "monthly":
            meta["weeks"] = ", ".join(s.path.rsplit("/", 1)[1][:-3] for s in sources)
        return render_node(meta, body)

    def _summarize(self, node: PlannedNode, sources: list[Source], report: CompactionReport) -> str:
        if self.defer:  # the stand-in now, the summarizer's later (`write_owed`)
            report.deferred.append(node.path)
            return ExtractiveSummarizer().summarize(node.level, node.period, sources)
        try:
            return self.summarizer.summarize(node.level, node.period, sources)
        except Exception as exc:  # a remote summarizer may fail in any way; the chain goes on
            report.errors.append(
                f"{node.path}: {self.summarizer.name} summarizer failed ({exc}); used extractive"
            )
            return ExtractiveSummarizer().summarize(node.level, node.period, sources)

    def _build_root(self, plan: Plan) -> str:
        checkpoints = []
        for relative in sorted(plan.raw_hashes):
            try:
                text = decode_markdown(plan.raw_data[relative], relative)
            except ParseError:
                continue
            checkpoints.extend(parse_log(text, date=raw_log_day(relative)))
        monthly = {}
        for period, path in self.store.node_files("monthly").items():
            try:
                monthly[period] = parse_node(self.store.read_text(path))
            except (OSError, ParseError):
                continue
        topics = collect_topics(checkpoints, self.today)
        plan.state["hipo"]["topics"] = topics_to_json(topics)
        plan.state["hipo"]["topics-stamp"] = topics_stamp(self.store.raw_stamps())
        return root_node.build_root(
            checkpoints,
            monthly,
            today=self.today,
            budget=self.config.root_budget,
            source_hash=plan.root_key,
            topics=topics,
        )


def late_entry(store: Store, day: date, today: date) -> bool:
    """Whether a write to `day` left the tree stale, not merely behind (`_behind`): a late
    entry (`--date`, a day already over) in a tree a pass has built, whose daily node is not a
    tentative one the next pass rebuilds anyway. Its fixed node, or the closed day that has
    none, would then say less than its raw log, so the writer compacts at once, as the design
    asks of a late entry; that is rare, and never an ordinary cell's cost. Before the first
    pass every node waits for it alike."""
    if day >= today or not store.state_path.exists():
        return False
    return read_status(store.root / node_path("daily", day.isoformat())) != "tentative"


def _still_owed(plan: Plan, path: str) -> PlannedNode | None:
    """The planned node at `path` when the state marks it owed a summary and it is clean."""
    node = next((n for n in plan.nodes if n.path == path), None)
    entry = plan.state["hipo"]["nodes"].get(path) or {}
    if node is None or node.action or not entry.get("pending"):
        return None
    return node


def _behind(node: PlannedNode, entry: dict | None, exists: bool) -> bool:
    """Whether a dirty, undamaged node is only behind the writes made since the last pass.

    A write appends to the raw log, indexes the checkpoint and puts it into ROOT.md's Active
    Context and Topics Index at once (`intake/writing`, `root_update`): every word written is
    searchable and in Layer 1 before the cell ends. What it leaves behind are the *tentative*
    nodes above that day, which the protocol defines as provisional, rebuilt when their inputs
    change by the next pass (session start, `compact`, the CLI after a write). Rebuilding the
    day, its week, its month and ROOT.md on every cell would pay a summary per write for nodes
    no reader needs sooner. So a node is behind, not stale, when the last pass left it
    tentative (or its period opened since and it was never built) and it is not damaged; a
    node that was fixed, whose state was lost, or of a closed period never built is stale:
    the tree then says something the raw logs no longer back."""
    if entry is not None:
        return exists and entry.get("status") == "tentative" and node.action in ("build", "fix")
    return not exists and node.status == "tentative"


REPLACED_FIELD = "replaced-by"


def superseded_by(raw_data: dict[str, bytes]) -> dict[str, str]:
    """Replaced id -> the id of the correction in force that replaced it (`replaces=`, which
    only a correction in force carries: `disk/trust.correction`), over these raw logs."""
    found: dict[str, str] = {}
    for relative, data in sorted(raw_data.items()):
        if b"replaces=" not in data:
            continue
        for checkpoint in parse_log(decode_markdown(data, relative)):
            if checkpoint.replaces and checkpoint.id:
                found[checkpoint.replaces] = checkpoint.id
    return found


def without_superseded(text: str, superseded: dict[str, str]) -> str:
    """A raw log as a node is built from it: each checkpoint a correction replaced keeps its
    heading and comment and says `- replaced-by: ID`, its old text left out, so no node (nor a
    context that brings one) repeats what the user corrected. The raw log keeps it."""
    if not superseded or not any(old in text for old in superseded):
        return text
    lines = text.split("\n")
    found = parse_log(text)
    starts = [cp.line - 1 for cp in found] + [len(lines)]
    for index in reversed(range(len(found))):
        checkpoint = found[index]
        if checkpoint.id not in superseded or checkpoint.line < 1:
            continue
        start, end = starts[index], starts[index + 1]
        keep = 2 if start + 1 < end and lines[start + 1].startswith("<!-- hipo ") else 1
        mark = f"- {REPLACED_FIELD}: {superseded[checkpoint.id]} (a later correction; not in force)"
        lines[start:end] = [*lines[start : start + keep], mark, ""]
    return "\n".join(lines)


def _verbatim(node: PlannedNode, sources: list[Source]) -> str:
    """Below the threshold nothing is summarized: the sources are copied as they are."""
    if node.level == "daily":
        return sources[0].text.strip() if sources else ""
    title = "Weekly" if node.level == "weekly" else "Monthly"
    parts = [f"# {title} {node.period}"]
    parts.extend(f"<!-- from {s.path} -->\n{s.text.strip()}" for s in sources)
    return "\n\n".join(parts)
