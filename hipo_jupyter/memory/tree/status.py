"""What a memory holds, at a glance: `Status` (the `hipo status` numbers), the compaction nodes
as the sidebar lists them, and the latest checkpoints.

Read only: nothing here writes a file. The numbers come from the store, the compaction plan,
Layer 1 and the text index, which `Memory.status` hands over already measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date

from ..disk.checkpoint import Checkpoint, parse_log
from ..disk.nodes import read_status
from ..disk.provenance import VIA_WRITE_BACK, caller_name
from ..disk.store import Store
from ..disk.trust import CLAUDE, settled_away, writer_of
from ..errors import ParseError
from ..search.contract import SearchIndex
from .chain import Plan
from .layer1 import Layer1
from .root import calls_line

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
    behind_nodes: int = 0  # of dirty_nodes: tentative ones only behind the writes since a pass
    owed_summaries: int = 0  # nodes standing in with the extractive summary for a model's

    def to_json(self) -> dict[str, object]:
        """`hipo status --json` and MCP's status: every field, as named here."""
        return {**asdict(self), "nodes": dict(self.nodes)}


@dataclass(frozen=True)
class NodeInfo:
    """A compaction node as the sidebar and widgets list it."""

    level: str  # daily | weekly | monthly
    period: str  # 2026-03-12 | 2026-W11 | 2026-03
    file: str  # relative to the root
    status: str  # tentative | fixed (a node without frontmatter reads as tentative)


def memory_status(
    store: Store,
    *,
    plan: Plan,
    layer1: Layer1,
    index: SearchIndex,
    topics: int,
    backend: str,
    semantic: str,
) -> Status:
    """The status of one root from its parts, each measured once by the caller."""
    nodes = {level: len(store.node_files(level)) for level in NODE_KINDS}
    nodes["root"] = int(store.root_node.exists())
    return Status(
        root=str(store.root),
        raw_days=len(store.raw_days()),
        checkpoints=sum(1 for d in index.documents(kinds={"raw"})),
        nodes=nodes,
        topics=topics,
        layer1_tokens=layer1.total_tokens,
        layer1_budget=layer1.total_budget,
        backend=backend,
        last_compaction=plan.state.get("lastCompactionRun"),
        dirty_nodes=len(plan.dirty),
        semantic=semantic,
        behind_nodes=sum(1 for node in plan.dirty if node.behind),
        owed_summaries=sum(
            1 for entry in plan.state["hipo"].get("nodes", {}).values() if entry.get("pending")
        ),
    )


def list_nodes(store: Store) -> list[NodeInfo]:
    """Every compaction node, newest period first within each level (frontmatter only)."""
    found = []
    for level in NODE_KINDS:
        for period, path in sorted(store.node_files(level).items(), reverse=True):
            status = read_status(path) or "tentative"
            found.append(NodeInfo(level, period, store.relative(path), status))
    return found


def read_checkpoints(store: Store, days: Sequence[date] | None = None) -> list[Checkpoint]:
    """The checkpoints of the raw logs of `days` (every day when None), oldest first; a log
    that cannot be read is passed over (`hipo check` is where it is reported)."""
    checkpoints: list[Checkpoint] = []
    for day in days if days is not None else store.raw_days():
        try:
            text = store.read_text(store.raw_path(day))
        except (OSError, ParseError):
            continue
        checkpoints.extend(parse_log(text, date=day.isoformat()))
    return checkpoints


GROUPED_DAYS = 31  # logs a grouped list reads at most, looking for the user's own notes


def recent_checkpoints(store: Store, n: int = 10, *, grouped: bool = False) -> list[Checkpoint]:
    """The `n` latest checkpoints, newest first, reading only as many logs as it takes; one a
    correction in the logs read replaced is left out (the correction stands for it).

    `grouped` (the sidebar's list): the user's own checkpoints, and the Claude calls'
    write-backs among them as one entry, last (`grouped_calls`), so the agent's task log never
    pushes the user's notes out of the list."""
    found: list[Checkpoint] = []
    own = 0
    for read, day in enumerate(reversed(store.raw_days())):
        if grouped and read >= GROUPED_DAYS:
            break
        try:
            text = store.read_text(store.raw_path(day))
        except (OSError, ParseError):
            continue
        found.extend(reversed(parse_log(text, date=day.isoformat())))
        settled = settled_away(found)  # a correction or an acceptance shows, not what it settled
        found = [c for c in found if c.id not in settled]
        own = sum(writer_of(c) != CLAUDE for c in found) if grouped else len(found)
        if own >= n:
            break
    if not grouped:
        return found[:n]
    calls = [c for c in found if writer_of(c) == CLAUDE]
    mine = [c for c in found if writer_of(c) != CLAUDE][: n - bool(calls)]
    if calls and mine and len(found) > len(mine) + len(calls):
        oldest = (mine[-1].date or "", mine[-1].line)
        calls = [c for c in calls if (c.date or "", c.line) > oldest]  # those in the list's span
    return [*mine, grouped_calls(calls)] if calls else mine


def grouped_calls(calls: Sequence[Checkpoint]) -> Checkpoint:
    """One entry for the Claude calls' write-backs `calls` (newest first): titled "N Claude
    calls: task; task", at the newest one's place, with the write-back's provenance."""
    caller = caller_name(c.provider for c in calls)
    line = calls_line(calls[0].date or "", len(calls), [c.title for c in calls], caller)
    title = line.split(" ", 2)[2]  # the line less its "- <date> "
    models = ",".join(dict.fromkeys(c.model for c in calls if c.model)) or None
    providers = {c.provider for c in calls}
    return Checkpoint(
        title=title,
        type="project",
        text="\n".join(f"{c.date} {c.title}" for c in calls),
        notebook=calls[0].notebook,
        via=VIA_WRITE_BACK,
        model=models,
        provider=providers.pop() if len(providers) == 1 else None,
        date=calls[0].date,
        line=calls[0].line,
    )
