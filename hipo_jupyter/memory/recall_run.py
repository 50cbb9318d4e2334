"""Running a recall for `Memory`: the mode it runs in, the vectors it asks, the provenance it adds.

`Memory.recall_query` and `Memory.context` are thin delegations to this module, so the write
path, team and structured memory in `memory.py` and the recall path here change apart.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .store import NODE_LEVELS, Store


def log_stamp(path: Path) -> tuple[int, int] | None:
    """A raw log's (size, mtime_ns), as `Store.raw_stamps` gives it, from one lstat of that
    log alone; None when it is gone or not a regular file."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


class NodePaths:
    """`Store.node_paths()` (the nodes a hit's drill-down may name), kept while the node
    folders and ROOT.md are unchanged: a folder's mtime moves whenever a file is created,
    removed or renamed in it (a node rewrite is a rename), which is all that changes the set.
    At a year of memory, listing ~430 nodes was a tenth of every recall."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._key: tuple[object, ...] | None = None
        self._paths: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        key = tuple(
            _folder_stamp(path)
            for path in (
                *(self.store.level_dir(level) for level in NODE_LEVELS),
                self.store.root_node,
            )
        )
        if key != self._key:
            self._paths = frozenset(self.store.node_paths())
            self._key = key
        return self._paths


def _folder_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_mode)
