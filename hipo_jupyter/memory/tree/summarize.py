"""Summaries of compaction nodes: the `Summarizer` protocol and the offline `ExtractiveSummarizer`.

Why extractive: the tree has to work from the first day with no API key, and nodes are read
mostly by search, not by people. So the offline summary keeps what search needs (decisions,
outcomes, lessons, open items, identifiers, numbers, titles, key phrases) in Hipocampus's section
layout and drops the chatter. It is deterministic (the same sources give the same bytes, so a
rebuilt node whose inputs did not change is identical) and never raises on odd text, because one
strange log must not stop a compaction pass.

The summary is made in two steps, each a module: `digest` reads the sources line by line into
items per section (what goes where, trimmed, deduplicated, identifiers kept); this module chooses
the topics and themes and renders the sections within the level's line budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .digest import LIST_CATEGORIES, Digest, Item
from .topics import identifiers, key_phrases, node_topics, slug

__all__ = [
    "DEFAULT_MAX_LINES",
    "LEVELS",
    "ExtractiveSummarizer",
    "Source",
    "Summarizer",
]

LEVELS = ("daily", "weekly", "monthly")
THRESHOLDS = {"daily": 200, "weekly": 300, "monthly": 500}  # Hipocampus's smart thresholds
DEFAULT_MAX_LINES = {level: lines // 3 for level, lines in THRESHOLDS.items()}

_LAYOUT = {
    "daily": (
        ("Topics", "topics"),
        ("Key Decisions", "decisions"),
        ("Tasks Completed", "completed"),
        ("Lessons Learned", "lessons"),
        ("Open Items", "open"),
    ),
    "weekly": (
        ("Topics", "topics"),
        ("Key Decisions", "decisions"),
        ("Tasks Completed", "completed"),
        ("Entities Referenced", "entities"),
        ("Lessons Learned", "lessons"),
        ("Open Items", "open"),
    ),
    "monthly": (
        ("Topics", "topics"),
        ("Key Themes", "themes"),
        ("Major Decisions", "decisions"),
        ("Completed Work", "completed"),
        ("Recurring Entities", "entities"),
        ("Lessons & Patterns", "lessons"),
        ("Carried Forward", "open"),
    ),
}
_HEADERS = {"weekly": "# Weekly Summary: {period}", "monthly": "# Monthly Summary: {period}"}
_TOPIC_LIMIT = {"daily": 15, "weekly": 20, "monthly": 25}
_EXTRA_TOPICS = 20  # identifiers with no other home, after the topics
_THEMES = 8
_ENTITY_LIMIT = {"daily": 0, "weekly": 30, "monthly": 20}


@dataclass(frozen=True)
class Source:
    """One input of a node: a raw log, or a node's body with its frontmatter already removed."""

    path: str  # e.g. "memory/2026-03-12.md" or "memory/daily/2026-03-12.md"
    text: str


@runtime_checkable
class Summarizer(Protocol):
    """Writes the body of a node that is above its level's threshold.

    `level` is "daily", "weekly" or "monthly"; `period` is "2026-03-12", "2026-W11" or "2026-03".
    The result is Markdown without frontmatter, in Hipocampus's sections for the level.
    """

    name: str

    def summarize(self, level: str, period: str, sources: Sequence[Source]) -> str: ...


class ExtractiveSummarizer:
    """The offline, deterministic summarizer (`digest` says what it keeps and where)."""

    name = "extractive"

    def __init__(self, max_lines: int | None = None) -> None:
        """`max_lines` caps the output; by default a third of the level's threshold (daily 66,
        weekly 100, monthly 166), so a summary stays well under the size that triggered it.
        The section skeleton is always written, even when it alone is over a tiny cap."""
        self.max_lines = max_lines

    def summarize(self, level: str, period: str, sources: Sequence[Source]) -> str:
        if level not in _LAYOUT:
            raise ValueError(f"unknown level {level!r}: use one of {', '.join(LEVELS)}")
        digest = Digest()
        for index, source in enumerate(sources):
            digest.read(index, source.text)
        limit = _TOPIC_LIMIT[level]
        per_source = [node_topics(source.text, limit=limit) for source in sources]
        topics = _dedupe_topics(_round_robin(per_source))[:limit]
        topics = _dedupe_topics(topics + list(digest.orphans))[: limit + _EXTRA_TOPICS]
        lists = {cat: list(digest.items[cat].values()) for cat in LIST_CATEGORIES}
        if level == "monthly":
            lists["themes"] = _themes(sources, lists) + lists["themes"]
        entities = digest.entity_lines(_ENTITY_LIMIT[level])
        max_lines = DEFAULT_MAX_LINES[level] if self.max_lines is None else self.max_lines
        return _render(level, period, topics, lists, entities, max_lines)


# --- topics and themes -----------------------------------------------------------------------
def _round_robin(lists: list[list[str]]) -> list[str]:
    out = []
    for index in range(max((len(values) for values in lists), default=0)):
        out.extend(values[index] for values in lists if index < len(values))
    return out


def _dedupe_topics(topics: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for topic in topics:
        seen.setdefault(re.sub(r"[\s_-]+", "-", topic.lower()), topic.replace(",", " "))
    return list(seen.values())


def _period_of(path: str) -> str:
    """ "memory/weekly/2026-W11.md" -> "2026-W11" (one line, never empty)."""
    name = re.split(r"[\\/]", path)[-1]
    name = name[:-3] if name.endswith(".md") else name
    return " ".join(name.replace(",", " ").split()) or "?"


def _themes(sources: Sequence[Source], lists: dict[str, list[Item]]) -> list[Item]:
    """Monthly Key Themes: the leading key phrases, with the periods and tasks they appear in."""
    phrases = key_phrases("\n".join(source.text for source in sources), limit=_THEMES)
    themes = []
    for phrase in phrases:
        words = r"\s+".join(re.escape(word) for word in phrase.split())
        pattern = re.compile(r"(?<![\w-])" + words + r"(?![\w-])")
        periods = [_period_of(s.path) for s in sources if pattern.search(s.text.lower())]
        related = [
            item.slug
            for item in lists["decisions"] + lists["completed"]
            if item.slug and pattern.search(item.text.lower())
        ]
        if not periods:
            continue
        text = ", ".join(dict.fromkeys(periods))
        related = list(dict.fromkeys(related))[:5]
        if related:
            text += " \u2014 " + ", ".join(related)
        themes.append(Item(slug(phrase, 0), text))
    return themes


# --- rendering -----------------------------------------------------------------------------
def _allocate(sizes: dict[str, int], room: int) -> dict[str, int]:
    """Share `room` lines between sections, one line at a time in priority order (so small
    sections are shown whole and big ones split the rest); every section gets at least one."""
    alloc = {category: 1 for category in sizes}
    room -= len(sizes)
    while room > 0:
        grew = False
        for category in LIST_CATEGORIES:
            if category in sizes and alloc[category] < sizes[category] and room > 0:
                alloc[category] += 1
                room -= 1
                grew = True
        if not grew:
            break
    return alloc


def _overflow_line(items: list[Item]) -> str:
    """One line naming every item that did not fit, with its identifiers and numbers."""
    merged: dict[str, dict[str, None]] = {}
    for item in items:
        name = item.slug or slug(item.text, 3) or "item"
        merged.setdefault(name, {}).update(dict.fromkeys(identifiers(item.text)))
    parts = [f"{name} ({', '.join(keys)})" if keys else name for name, keys in merged.items()]
    return "- also: " + ", ".join(parts)


def _render(
    level: str,
    period: str,
    topics: list[str],
    lists: dict[str, list[Item]],
    entities: list[str],
    max_lines: int,
) -> str:
    layout = _LAYOUT[level]
    header = _HEADERS.get(level)
    used = 2 * len(layout) - 1 + (2 if header else 0) + 1  # headings, blank lines, topics line
    if any(category == "entities" for _, category in layout):
        used += max(1, len(entities))
    shown = [category for _, category in layout if category in LIST_CATEGORIES]
    used += sum(1 for category in shown if not lists[category])
    alloc = _allocate({c: len(lists[c]) for c in shown if lists[c]}, max_lines - used)

    lines = [header.format(period=" ".join(period.split())), ""] if header else []
    for name, category in layout:
        lines.append(f"## {name}")
        if category == "topics":
            lines.append(", ".join(topics) if topics else "(none)")
        elif category == "entities":
            lines.extend(entities or ["(none)"])
        elif not lists[category]:
            lines.append("(none)")
        else:
            items = lists[category]
            room = alloc[category]
            if room >= len(items):
                lines.extend(item.line() for item in items)
            else:
                lines.extend(item.line() for item in items[: room - 1])
                lines.append(_overflow_line(items[room - 1 :]))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
