"""ROOT.md: the Layer 1 topic index of everything, kept under its token budget.

Four sections (DESIGN.md): Active Context (the last ~7 days), Recent Patterns, Historical Summary
and the Topics Index, whose lines answer "do I know about X?" without loading anything else:

    - pricing [project, 3d]: competitor-analysis, starter-tier-cut -> 2026-03 (W10, W11)

A topic is a checkpoint's `#tag`; a checkpoint without tags is its own topic (its title's slug).
When the file is over budget, the Historical Summary shrinks first, then the oldest topics fold
into coarser periods (keywords and weeks dropped, then one line per month), so the prompt stays
the same size however long the memory grows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from .checkpoint import Checkpoint
from .nodes import Node, list_value, render_node
from .tokens import count_tokens
from .topics import slug

ACTIVE_DAYS = 7
PATTERN_DAYS = 30
MAX_KEYWORDS = 4
MAX_ACTIVE = 12
MAX_PATTERNS = 8
MAX_HISTORY = 6
GIST_CHARS = 140


@dataclass(frozen=True)
class Topic:
    """One Topics Index line: `- pricing [project, 3d]: competitor-analysis -> 2026-03 (W11)`."""

    name: str
    type: str  # project | feedback | user | reference
    age_days: int  # days since it was last mentioned
    keywords: tuple[str, ...]  # titles (slugged) of its checkpoints, newest first
    months: tuple[str, ...]  # "2026-03", newest first
    weeks: tuple[str, ...]  # "2026-W11", newest first
    last_date: str  # ISO date of the last mention
    count: int  # checkpoints that mention it

    def line(self, detail: int = 2) -> str:
        """detail 2: keywords and weeks; 1: months only; 0: name and age only."""
        head = f"- {self.name} [{self.type}, {self.age_days}d]"
        if detail >= 2 and self.keywords:
            head += ": " + ", ".join(self.keywords)
        if detail >= 1:
            pointers = []
            for month in self.months[:2]:
                weeks = [w.split("-")[1] for w in self.weeks if _week_in_month(w, month)][:3]
                pointers.append(f"{month} ({', '.join(weeks)})" if detail >= 2 and weeks else month)
            head += " -> " + ", ".join(pointers)
        return head


def checkpoint_topics(checkpoint: Checkpoint) -> list[str]:
    return list(checkpoint.tags) or [slug(checkpoint.title, max_words=3) or "untitled"]


def collect_topics(checkpoints: Iterable[Checkpoint], today: date) -> list[Topic]:
    """Aggregate checkpoints into topics, most recently mentioned first."""
    from .tree import week_id, week_month  # tree imports this module

    grouped: dict[str, list[Checkpoint]] = {}
    for checkpoint in checkpoints:
        if not checkpoint.date:
            continue
        for name in checkpoint_topics(checkpoint):
            grouped.setdefault(name, []).append(checkpoint)
    topics = []
    for name, members in grouped.items():
        members.sort(key=lambda c: (c.date, c.line), reverse=True)
        last = members[0].date
        types = Counter(c.type for c in members)
        keywords: list[str] = []
        for member in members:
            keyword = slug(member.title, max_words=3)
            if keyword and keyword != name and keyword not in keywords:
                keywords.append(keyword)
        weeks = sorted({week_id(date.fromisoformat(c.date)) for c in members}, reverse=True)
        months = sorted({week_month(w) for w in weeks}, reverse=True)
        topics.append(
            Topic(
                name=name,
                type=max(types, key=lambda t: (types[t], t == members[0].type)),
                age_days=max(0, (today - date.fromisoformat(last)).days),
                keywords=tuple(keywords[:MAX_KEYWORDS]),
                months=tuple(months),
                weeks=tuple(weeks),
                last_date=last,
                count=len(members),
            )
        )
    topics.sort(key=lambda t: (t.last_date, t.count, t.name), reverse=True)
    return topics


def add_to_topics(topics: Sequence[Topic], checkpoint: Checkpoint, today: date) -> list[Topic]:
    """The topics after one more checkpoint, without re-reading every raw log.

    What a full `collect_topics` would give for counts, dates, keywords and periods; a topic's
    type stays as it was (the majority vote is redone at the next compaction).
    """
    from .tree import week_id, week_month

    if not checkpoint.date:
        return list(topics)
    by_name = {t.name: t for t in topics}
    week = week_id(date.fromisoformat(checkpoint.date))
    keyword = slug(checkpoint.title, max_words=3)
    for name in checkpoint_topics(checkpoint):
        old = by_name.get(name)
        keywords = [k for k in (keyword,) if k and k != name]
        if old:
            keywords += [k for k in old.keywords if k not in keywords]
            if checkpoint.date < old.last_date:
                keywords = list(old.keywords)  # a late entry does not lead the list
        last = max(checkpoint.date, old.last_date) if old else checkpoint.date
        weeks = sorted({week, *(old.weeks if old else ())}, reverse=True)
        by_name[name] = Topic(
            name=name,
            type=old.type if old else checkpoint.type,
            age_days=max(0, (today - date.fromisoformat(last)).days),
            keywords=tuple(keywords[:MAX_KEYWORDS]),
            months=tuple(sorted({week_month(w) for w in weeks}, reverse=True)),
            weeks=tuple(weeks),
            last_date=last,
            count=(old.count if old else 0) + 1,
        )
    return sorted(by_name.values(), key=lambda t: (t.last_date, t.count, t.name), reverse=True)


def topics_to_json(topics: Sequence[Topic]) -> list[dict]:
    return [
        {
            "name": t.name,
            "type": t.type,
            "keywords": list(t.keywords),
            "months": list(t.months),
            "weeks": list(t.weeks),
            "last_date": t.last_date,
            "count": t.count,
        }
        for t in topics
    ]


def topics_from_json(items: Sequence[dict], today: date) -> list[Topic]:
    """Topics saved by a compaction pass, with their ages taken against `today`."""
    return [
        Topic(
            name=item["name"],
            type=item["type"],
            age_days=max(0, (today - date.fromisoformat(item["last_date"])).days),
            keywords=tuple(item["keywords"]),
            months=tuple(item["months"]),
            weeks=tuple(item["weeks"]),
            last_date=item["last_date"],
            count=item["count"],
        )
        for item in items
    ]


def _week_in_month(week: str, month: str) -> bool:
    from .tree import week_month

    return week_month(week) == month


def _gist(checkpoint: Checkpoint) -> str:
    for name in ("decisions", "outcome", "rule", "request"):
        value = checkpoint.field(name)
        if value:
            break
    else:
        value = checkpoint.text
    value = " ".join((value or "").split())
    return value if len(value) <= GIST_CHARS else value[: GIST_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _active_context(checkpoints: Sequence[Checkpoint], today: date) -> list[str]:
    since = (today - timedelta(days=ACTIVE_DAYS)).isoformat()
    recent = sorted(
        (c for c in checkpoints if c.date and c.date > since),
        key=lambda c: (c.date, c.line),
        reverse=True,
    )
    lines = []
    for checkpoint in recent[:MAX_ACTIVE]:
        tags = "".join(f" #{t}" for t in checkpoint.tags)
        gist = _gist(checkpoint)
        line = (
            f"- {checkpoint.date} {slug(checkpoint.title, max_words=5)} [{checkpoint.type}]{tags}"
        )
        lines.append(f"{line}: {gist}" if gist else line)
    return lines or ["- (nothing in the last 7 days)"]


def _recent_patterns(
    checkpoints: Sequence[Checkpoint], topics: Sequence[Topic], today: date
) -> list[str]:
    since = (today - timedelta(days=PATTERN_DAYS)).isoformat()
    counts: Counter[str] = Counter()
    for checkpoint in checkpoints:
        if checkpoint.date and checkpoint.date > since:
            counts.update(checkpoint_topics(checkpoint))
    by_name = {t.name: t for t in topics}
    lines = []
    for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if count < 2 or len(lines) >= MAX_PATTERNS:
            continue
        weeks = [w for w in by_name[name].weeks if w >= _week_floor(today)]
        span = f"{weeks[-1]}..{weeks[0]}" if len(weeks) > 1 else (weeks[0] if weeks else "")
        lines.append(f"- {name}: {count} checkpoints in 30d" + (f", {span}" if span else ""))
    rules = [
        c
        for c in sorted(checkpoints, key=lambda c: (c.date or "", c.line), reverse=True)
        if c.type == "feedback" and c.field("rule")
    ]
    for checkpoint in rules[:5]:
        lines.append(f"- rule: {' '.join(checkpoint.field('rule').split())[:GIST_CHARS]}")
    return lines or ["- (no repeated topics in the last 30 days)"]


def _week_floor(today: date) -> str:
    from .tree import week_id

    return week_id(today - timedelta(days=PATTERN_DAYS))


def _history_lines(monthly: Mapping[str, Node], today: date, keep: int, words: int) -> list[str]:
    current = f"{today.year:04d}-{today.month:02d}"
    months = sorted((m for m in monthly if m < current), reverse=True)
    lines = []
    for month in months[:keep]:
        topics = monthly[month].topics[:words]
        lines.append(f"- {month}: {', '.join(topics)}" if topics else f"- {month}")
    if len(months) > keep:
        lines.append(f"- earlier: {months[-1]} .. {months[keep]} (memory/monthly/)")
    return lines or ["- (no earlier months)"]


def _topic_lines(topics: Sequence[Topic], folded: int) -> list[str]:
    """The newest topics in full; the `folded` oldest with less detail, grouped by month last."""
    if not topics:
        return ["- (no topics yet)"]
    full = len(topics) - folded
    lines = [t.line(2) for t in topics[:full]]
    old = topics[full:]
    # Fold in stages: first drop keywords/weeks, then group by month.
    half = len(old) // 2
    lines += [t.line(1) for t in old[:half]]
    grouped: dict[str, list[str]] = {}
    for topic in old[half:]:
        grouped.setdefault(topic.months[0] if topic.months else "?", []).append(topic.name)
    for month in sorted(grouped, reverse=True):
        lines.append(f"- earlier topics -> {month}: {', '.join(grouped[month])}")
    return lines


def build_root(
    checkpoints: Sequence[Checkpoint],
    monthly: Mapping[str, Node],
    *,
    today: date,
    budget: int,
    source_hash: str,
    topics: Sequence[Topic] | None = None,
) -> str:
    topics = list(topics) if topics is not None else collect_topics(checkpoints, today)
    months = sorted({t for topic in topics for t in topic.months} | set(monthly))
    meta = {
        "type": "root",
        "status": "tentative",
        "last-updated": today.isoformat(),
        "months-covered": list_value(months),
        "source-hash": source_hash,
    }
    active = _active_context(checkpoints, today)
    patterns = _recent_patterns(checkpoints, topics, today)

    def render(history: list[str], topic_lines: list[str], active_n: int, patterns_n: int) -> str:
        body = "\n".join(
            [
                "# ROOT: memory index",
                "",
                "## Active Context",
                *active[:active_n],
                "",
                "## Recent Patterns",
                *patterns[:patterns_n],
                "",
                "## Historical Summary",
                *history,
                "",
                "## Topics Index",
                *topic_lines,
            ]
        )
        return render_node(meta, body)

    # Shrink in the order the design gives until the file fits its budget.
    stages: list[tuple[int, int]] = [(MAX_HISTORY, 8), (3, 4), (3, 0), (0, 0)]
    for keep, words in stages:
        text = render(
            _history_lines(monthly, today, keep, words),
            _topic_lines(topics, 0),
            MAX_ACTIVE,
            MAX_PATTERNS,
        )
        if count_tokens(text) <= budget:
            return text
    history = _history_lines(monthly, today, 0, 0)
    for folded in range(2, len(topics) + 1, 2):
        text = render(history, _topic_lines(topics, folded), MAX_ACTIVE, MAX_PATTERNS)
        if count_tokens(text) <= budget:
            return text
    for active_n, patterns_n in ((6, 4), (3, 2), (1, 1)):
        text = render(history, _topic_lines(topics, len(topics)), active_n, patterns_n)
        if count_tokens(text) <= budget:
            return text
    return text
