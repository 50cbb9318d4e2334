"""Running a recall for `Memory`: the mode it runs in, the vectors it asks, the provenance it adds.

`Memory.recall_query` and `Memory.context` are thin delegations to this module, so the write
path, team and structured memory in `memory.py` and the recall path here change apart.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def log_stamp(path: Path) -> tuple[int, int] | None:
    """A raw log's (size, mtime_ns), as `Store.raw_stamps` gives it, from one lstat of that
    log alone; None when it is gone or not a regular file."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None
