"""Layer 1 kept fresh at write time: ROOT.md's Active Context and Topics Index updated in place.

A compaction pass rebuilds ROOT.md from every raw log; that happens at session start and on
`compact`, so without this module a checkpoint written mid-session would be missing from Layer 1
(the part every prompt carries) until the next session. Each checkpoint written through
`Memory.write_checkpoint`, whatever the front end, therefore updates ROOT.md incrementally:

- its Active Context line goes in date order at the top of `## Active Context` (lines older
  than the active window, and the placeholder, drop out; at most `MAX_ACTIVE` lines);
- `## Topics Index` is rendered again from the topics the write just updated (`TopicsCache`,
  already incremental), folded to the budget as a compaction pass folds it;
- Recent Patterns and the Historical Summary stay as the last pass wrote them.

The cost is one read and one atomic write of a file of ~3,000 tokens, whatever the memory's
size. The update takes the compaction lock without waiting: while a pass runs (in any
process), the write leaves ROOT.md to that pass or the next. A ROOT.md that is damaged is left
for the next pass too (it says so and rebuilds it); a missing one is written from the last
week's raw logs. The frontmatter keeps the pass's `source-hash`, so the next pass still knows
what it built from; the topics are saved in the compaction state under the logs' new stamps, so
the next process (a CLI call) reads them instead of every raw log.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator, Sequence
from datetime import date, timedelta

from ..disk.checkpoint import Checkpoint
from ..disk.files import MAX_STATE_BYTES
from ..disk.jsonread import parse_json
from ..disk.nodes import list_value, parse_node
from ..disk.store import RawStamps, Store
from ..disk.trust import CLAUDE, writer_of
from ..errors import HipoError, ParseError
from . import root as root_node
from .status import read_checkpoints
from .topic_index import Topic, TopicsCache, topics_stamp, topics_to_json

log = logging.getLogger(__name__)

SECTIONS = ("Active Context", "Recent Patterns", "Historical Summary", "Topics Index")


@contextlib.contextmanager
def compaction_lock_nowait(store: Store) -> Iterator[bool]:
    """The compaction lock (`Store.compaction_lock`'s file) if it is free now: True when held.

    A write never waits for a compaction pass: the pass rebuilds ROOT.md anyway."""
    fd = os.open(store.memory_dir / ".compaction.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def sections(body: str) -> dict[str, list[str]]:
    """ROOT.md's body as section name -> its non-blank lines (the `# ROOT` title dropped)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body.split("\n"):
        if line.startswith("## "):
            current = found.setdefault(line[3:].strip(), [])
        elif current is not None and line.strip():
            current.append(line)
    return found


def _line_date(line: str) -> str:
    """The ISO date an Active Context line starts with ("" for the placeholder)."""
    word = line[2:12]
    return word if len(word) == 10 and word[4] == "-" and word[7] == "-" else ""


def with_checkpoint(
    active: Sequence[str], checkpoint: Checkpoint, today: date, replaced: Checkpoint | None = None
) -> list[str]:
    """Active Context after one more checkpoint: newest date first (a checkpoint goes before
    the others of its day, as it is the latest written), none older than the window. A Claude
    call's write-back only updates the one line of them all, last (`root.calls_line`). The
    line of the checkpoint a correction `replaced` goes."""
    since = (today - timedelta(days=root_node.ACTIVE_DAYS)).isoformat()
    gone = root_node.active_line(replaced) if replaced is not None else None
    kept = [line for line in active if _line_date(line) > since and line != gone]
    calls = [line for line in kept if root_node.CALLS_LINE.match(line)][:1]
    kept = [line for line in kept if not root_node.CALLS_LINE.match(line)]
    if checkpoint.date and checkpoint.date > since:
        if writer_of(checkpoint) == CLAUDE:
            calls = [root_node.calls_line_after(calls[0] if calls else None, checkpoint)]
        else:
            day = checkpoint.date
            at = next((i for i, line in enumerate(kept) if _line_date(line) <= day), None)
            kept.insert(len(kept) if at is None else at, root_node.active_line(checkpoint))
    return kept[: root_node.MAX_ACTIVE - len(calls)] + calls or [root_node.NO_ACTIVE]


def updated_root(
    text: str,
    checkpoint: Checkpoint,
    topics: Sequence[Topic],
    today: date,
    budget: int,
    replaced: Checkpoint | None = None,
) -> str:
    """ROOT.md's `text` with `checkpoint` in its Active Context and `topics` as its index."""
    node = parse_node(text)
    found = sections(node.body)
    months = {m for topic in topics for m in topic.months}
    months |= {m.strip() for m in node.meta.get("months-covered", "").strip("[]").split(",")}
    meta = {
        **node.meta,
        "last-updated": today.isoformat(),
        "months-covered": list_value(sorted(m for m in months if m)),
    }
    active = with_checkpoint(found.get("Active Context", []), checkpoint, today, replaced)
    patterns = found.get("Recent Patterns") or ["- (no repeated topics in the last 30 days)"]
    history = found.get("Historical Summary") or ["- (no earlier months)"]
    return root_node.fit_root(meta, active, patterns, history, topics, budget)


def first_root(store: Store, topics: Sequence[Topic], today: date, budget: int) -> str:
    """ROOT.md for a memory that has none yet, from the last week's raw logs and `topics`;
    the next compaction pass rebuilds it whole (its source-hash is no pass's)."""
    since = today - timedelta(days=root_node.ACTIVE_DAYS)
    recent = read_checkpoints(store, [day for day in store.raw_days() if day > since])
    return root_node.build_root(
        recent, {}, today=today, budget=budget, source_hash="written-at-remember", topics=topics
    )


def refresh_root(
    store: Store,
    checkpoint: Checkpoint,
    topics: Sequence[Topic],
    today: date,
    budget: int,
    *,
    save: bool = True,
) -> bool:
    """Bring ROOT.md up to date with `checkpoint` (just written) and `topics` (just updated);
    False when it was left to a compaction pass (one is running, or ROOT.md is damaged).
    `save=False` leaves the topics out of the compaction state: a kernel that keeps them at
    hand saves a write (and its fsync) per checkpoint; a new process saves them again."""
    with compaction_lock_nowait(store) as held:
        if not held:
            return False
        try:
            text = store.read_text(store.root_node)
        except FileNotFoundError:
            new = first_root(store, topics, today, budget)
        except (OSError, ParseError) as exc:
            log.debug("hipo: ROOT.md left for the next compaction: %s", exc)
            return False
        else:
            if not text.startswith("---"):
                return False  # not a node: a pass reports and rebuilds it
            replaced = _replaced(store, checkpoint, today)
            new = updated_root(text, checkpoint, topics, today, budget, replaced)
        store.write_atomic(store.root_node, new)
        if save:
            save_topics(store, topics, store.raw_stamps())
        return True


def _replaced(store: Store, checkpoint: Checkpoint, today: date) -> Checkpoint | None:
    """The checkpoint of the Active Context window a correction replaces, if any."""
    if not checkpoint.replaces:
        return None
    since = today - timedelta(days=root_node.ACTIVE_DAYS)
    recent = read_checkpoints(store, [day for day in store.raw_days() if day > since])
    return next((c for c in recent if c.id == checkpoint.replaces), None)


def refresh_root_after_write(
    store: Store, checkpoint: Checkpoint, topics: TopicsCache, today: date, budget: int
) -> None:
    """`refresh_root` after a write, where a failure only logs: the checkpoint is safe in its
    raw log and the next compaction pass rebuilds ROOT.md."""
    try:
        refresh_root(
            store,
            checkpoint,
            topics.topics(today),
            today,
            budget,
            save=not topics.kept_in_place,  # a kernel keeps them at hand
        )
    except (HipoError, OSError) as exc:
        log.warning("hipo: saved; Layer 1 catches up at the next compaction: %s", exc)


def save_topics(store: Store, topics: Sequence[Topic], stamps: RawStamps) -> None:
    """Save `topics` in the compaction state for the raw logs' `stamps` (as a pass does), so
    the next process finds them; nothing when there is no state of ours yet. Called under
    the compaction lock: no pass rewrites the state meanwhile."""
    try:
        state = parse_json(
            store.read_file(store.state_path, MAX_STATE_BYTES), store.relative(store.state_path)
        )
        hipo = state["hipo"]
        if not isinstance(hipo, dict):
            return
    except (OSError, ParseError, LookupError, TypeError):
        return
    hipo["topics"] = topics_to_json(topics)
    hipo["topics-stamp"] = topics_stamp(stamps)
    store.write_atomic(store.state_path, json.dumps(state, indent=1, sort_keys=True))
