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
from ..disk.store import Store
from ..errors import ParseError
from ..search.contract import SearchIndex
from .chain import Plan
from .layer1 import Layer1

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


def recent_checkpoints(store: Store, n: int = 10) -> list[Checkpoint]:
    """The `n` latest checkpoints, newest first, reading only as many logs as it takes."""
    found: list[Checkpoint] = []
    for day in reversed(store.raw_days()):
        try:
            text = store.read_text(store.raw_path(day))
        except (OSError, ParseError):
            continue
        found.extend(reversed(parse_log(text, date=day.isoformat())))
        if len(found) >= n:
            break
    return found[:n]
