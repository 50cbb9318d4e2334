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
`node_head` reads only a node's start and last byte, to tell the chain its status and hash and
whether the file is damaged (cut short, not UTF-8, no frontmatter), without reading its body.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .files import MAX_NODE_BYTES, UnsafeFileError, open_regular, read_fd

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


HEAD_BYTES = 4096  # what node_head reads of a node: its frontmatter, nearly always


@dataclass(frozen=True)
class NodeHead:
    """What the start (and last byte) of a node file tell without reading its body."""

    status: str = ""
    source_hash: str | None = None
    damage: str | None = None  # why the file cannot be what a writer meant, or None


def node_head(path: Path) -> NodeHead:
    """Read a node's frontmatter and judge it. Damaged: unreadable, not UTF-8, empty, without
    frontmatter or with one never closed, or ours (a source-hash) but not ending in a newline,
    as every node we write does: all signs of a write cut short or a foreign tool's accident."""
    try:
        fd = open_regular(path, os.O_RDONLY, path.name)
    except UnsafeFileError as exc:
        return NodeHead(damage=f"unreadable ({exc})")
    except OSError as exc:
        return NodeHead(damage=f"unreadable ({exc.strerror})")
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, HEAD_BYTES, 0)
        if size > len(data) and b"\n---" not in data[3:]:
            # a frontmatter this long is rare: read it all (within a node's limit) to judge
            data = read_fd(fd, MAX_NODE_BYTES, path.name)
        last = os.pread(fd, 1, max(size - 1, 0))
    except UnsafeFileError as exc:
        return NodeHead(damage=f"unreadable ({exc})")
    except OSError as exc:
        return NodeHead(damage=f"unreadable ({exc.strerror})")
    finally:
        os.close(fd)
    if b"\x00" in data:
        return NodeHead(damage="binary (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) == size or exc.start < len(data) - 3:  # a head may cut one character
            return NodeHead(damage="not UTF-8 text")
        text = data[: exc.start].decode("utf-8")
    if not text.strip():
        return NodeHead(damage="empty")
    if not text.startswith("---"):
        return NodeHead(damage="without frontmatter")
    node = parse_node(text)
    if not node.meta and not any(line.strip() == "---" for line in text.split("\n")[1:]):
        return NodeHead(damage="cut short (its frontmatter never ends)")
    source_hash = node.meta.get("source-hash")
    if source_hash is not None and last != b"\n":
        return NodeHead(node.status, source_hash, "cut short (it ends mid-line)")
    return NodeHead(node.status, source_hash)
