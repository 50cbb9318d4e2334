"""Where a memory lives and what day it is there: each decided in one place, for every front end.

The root is a folder (the notebook's, by default); the day is the local date unless HIPO_TODAY
pins it, so tests and demos get the same tree on any day.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from .disk.files import expanded
from .requests import parse_day


def resolve_root(explicit: str | Path | None = None, notebook_path: str | None = None) -> Path:
    """The memory root, decided in one place: an explicit value (`c.Hipo.root`, `--root`), then
    the HIPO_ROOT environment variable, then the notebook's folder, then the working directory."""
    if explicit:
        return expanded(explicit, "memory root")
    if os.environ.get("HIPO_ROOT"):
        return expanded(os.environ["HIPO_ROOT"], "memory root (HIPO_ROOT)")
    if notebook_path:
        return expanded(notebook_path, "notebook path").parent
    return Path.cwd()


def today_from_env() -> date:
    """HIPO_TODAY=YYYY-MM-DD pins the clock (tests, demos); otherwise the local date."""
    pinned = os.environ.get("HIPO_TODAY", "").strip()
    return parse_day(pinned, "HIPO_TODAY") or date.today() if pinned else date.today()
