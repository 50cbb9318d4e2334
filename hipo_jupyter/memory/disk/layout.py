"""The layout's names, relative to the root: the one place that spells them (front ends link to
these paths and never build them). `store` re-exports them; see its docstring for the files."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import date

RAW_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
INTENT_NAME = re.compile(r"^\.(\d{4}-\d{2}-\d{2}\.md)\.append$")
NODE_LEVELS = ("daily", "weekly", "monthly")

RawStamps = dict[str, tuple[int, int]]  # raw log name -> (size, mtime_ns), `Store.raw_stamps`
MEMORY_DIR = "memory"
ROOT_FILE = f"{MEMORY_DIR}/ROOT.md"
CONVERSATIONS_DIR = f"{MEMORY_DIR}/.conversations"
WORKING_FILES = ("SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md")  # Layer 1's files in the root
CONSOLE_STEM = "console"  # a terminal IPython's conversation: no notebook to name it
NOTEBOOK_DIGITS = 12


def notebook_stem(notebook: str | None) -> str:
    """The file stem of a notebook's `%%ask` conversation and "last sent" record: its name
    as a readable prefix, then 12 hex digits of the SHA-256 of its identity (its path relative
    to the root, or its kernel's name when Jupyter gives no path), so that two notebooks never
    share one, whatever their names slug to: "report.ipynb" is `report-<digits>`, "The
    report.ipynb" `the-report-<digits>`, "数据.ipynb" `数据-<digits>`. `console` without one."""
    if not notebook:
        return CONSOLE_STEM
    identity = unicodedata.normalize("NFC", notebook.replace("\\", "/"))
    name = identity.rsplit("/", 1)[-1].removesuffix(".ipynb")
    prefix = re.sub(r"[\W_]+", "-", name.lower()).strip("-")[:40].strip("-") or "notebook"
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}-{digest[:NOTEBOOK_DIGITS]}"


def raw_log_path(day: date | str) -> str:
    """`memory/2026-03-12.md`: the raw log of a day (a date or its ISO text)."""
    return f"{MEMORY_DIR}/{day.isoformat() if isinstance(day, date) else day}.md"


def raw_log_day(relative: str) -> str:
    """`memory/2026-03-12.md` -> `2026-03-12`: the day a raw log's path names."""
    return relative.removeprefix(f"{MEMORY_DIR}/").removesuffix(".md")


def node_path(level: str, period: str) -> str:
    """`memory/weekly/2026-W11.md`: the compaction node of a level and period."""
    if level not in NODE_LEVELS:
        raise ValueError(f"not a node level: {level!r}")
    return f"{MEMORY_DIR}/{level}/{period}.md"


def stamp_key(stamps: RawStamps) -> str:
    """One string for a set of raw-log stamps (name, size, mtime): which logs a saved state (the
    compaction's, the topics') was read from."""
    parts = (f"{name}:{size}:{mtime}" for name, (size, mtime) in sorted(stamps.items()))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
