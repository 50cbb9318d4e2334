"""Compaction node files: YAML-style frontmatter over a Markdown body, as Hipocampus writes them.

    ---
    type: daily
    status: tentative
    period: 2026-03-12
    source-files: [memory/2026-03-12.md]
    topics: pricing, q1, starter-tier-cut
    source-hash: 3f2a...
    ---
    <body>

Only flat `key: value` lines are used, so no YAML library is needed; values in `[...]` are lists.
A node written by Hipocampus or by hand parses the same way; one without frontmatter parses as a
body with no metadata (and is then treated as tentative, so the chain rebuilds it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .files import UnsafeFileError, open_regular

FRONTMATTER_ORDER = (
    "type",
    "status",
    "period",
    "dates",
    "weeks",
    "last-updated",
    "months-covered",
    "source-files",
    "topics",
    "source-hash",
)


@dataclass(frozen=True)
class Node:
    meta: dict[str, str] = field(default_factory=dict)
    body: str = ""

    @property
    def status(self) -> str:
        return self.meta.get("status", "").strip().lower()

    @property
    def topics(self) -> list[str]:
        return [t.strip() for t in self.meta.get("topics", "").strip("[]").split(",") if t.strip()]


def render_node(meta: Mapping[str, str], body: str) -> str:
    keys = [k for k in FRONTMATTER_ORDER if k in meta] + sorted(set(meta) - set(FRONTMATTER_ORDER))
    head = "\n".join(f"{key}: {meta[key]}" for key in keys)
    return f"---\n{head}\n---\n\n{body.strip()}\n"


def parse_node(text: str) -> Node:
    if not text.startswith("---"):
        return Node({}, text)
    lines = text.split("\n")
    meta: dict[str, str] = {}
    for index in range(1, len(lines)):
        line = lines[index]
        if line.strip() == "---":
            body = "\n".join(lines[index + 1 :]).strip("\n")
            return Node(meta, body)
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip()
    return Node({}, text)  # unterminated frontmatter: a half-written file, not metadata


def list_value(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def read_status(path: Path) -> str:
    """A node's `status` from the head of its file, without reading a long body ("" if none)."""
    try:
        fd = open_regular(path, os.O_RDONLY, path.name)
    except (OSError, UnsafeFileError):
        return ""
    try:
        head = os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
    return parse_node(head + "\n---").status if head.startswith("---") else ""
