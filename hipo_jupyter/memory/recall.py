"""Recall: "have I seen this before?" answered from the Topics Index, BM25 and recency.

The query is run through the search index (BM25 over raw checkpoints, nodes and knowledge/),
each hit's relevance is normalised to the best hit, and two boosts are added: a hit whose
checkpoint belongs to a topic the query names (Topics Index), and recency with a configurable
half-life. A node hit is dropped when a raw checkpoint of its period already answers, since the
raw log holds the same words in full; ROOT is never a hit (it is in Layer 1 already).

Every hit carries its drill-down path, ROOT -> monthly -> weekly -> daily -> raw line, listing
the nodes that exist, so a reader (or a model) can walk the tree from coarse to fine.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date

from .errors import QueryError
from .root import Topic
from .search import SearchHit, SearchIndex

TOPIC_BOOST = 0.25
RECENCY_WEIGHT = 0.15
CANDIDATES_PER_HIT = 6
WORD = re.compile(r"[\w][\w.-]*", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    """One recalled piece of memory and the way down the tree to it."""

    file: str  # relative to the memory root, e.g. "memory/2026-03-12.md"
    line: int  # 1-based line of the checkpoint heading (or node start)
    date: str  # ISO date of the checkpoint, or the node's period start
    kind: str  # "raw" | "daily" | "weekly" | "monthly" | "knowledge"
    type: str  # checkpoint type (project, feedback, user, reference) or "" for nodes
    title: str
    snippet: str
    score: float
    path: tuple[str, ...] = ()  # drill-down: ROOT -> monthly -> weekly -> daily -> raw
    topics: tuple[str, ...] = ()  # Topics Index entries that matched the query

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class RecallResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    did_you_mean: list[str] = field(default_factory=list)
    topic_matches: list[str] = field(default_factory=list)

    def __iter__(self):
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]


def query_words(query: str) -> list[str]:
    return [w.strip(".-").lower() for w in WORD.findall(query) if w.strip(".-")]


def match_topics(words: Sequence[str], topics: Sequence[Topic]) -> list[Topic]:
    """Topics whose name (or one of its parts) is a word of the query, or starts like one."""
    wanted = {w for w in words if len(w) >= 2}
    matched = []
    for topic in topics:
        parts = set(topic.name.split("-")) | {topic.name}
        if wanted & parts or any(
            len(w) >= 4 and any(p.startswith(w[:5]) and len(p) >= 4 for p in parts) for w in wanted
        ):
            matched.append(topic)
    return matched


def did_you_mean(words: Sequence[str], topics: Sequence[Topic]) -> list[str]:
    vocabulary = sorted({t.name for t in topics} | {k for t in topics for k in t.keywords})
    parts = sorted({p for v in vocabulary for p in v.split("-") if len(p) >= 3})
    suggestions: list[str] = []
    for word in words:
        for close in difflib.get_close_matches(word, vocabulary + parts, n=3, cutoff=0.7):
            if close not in suggestions and close != word:
                suggestions.append(close)
    return suggestions[:5]


def drill_down(
    kind: str, file: str, line: int, day: str, nodes: Collection[str]
) -> tuple[str, ...]:
    """ROOT -> monthly -> weekly -> daily -> the raw line, keeping the nodes that exist."""
    from .tree import week_id, week_month  # tree imports root, which this module imports

    if kind not in ("raw", "daily", "weekly", "monthly"):
        return (file,)
    start = date.fromisoformat(day)
    week = week_id(start)
    chain = [
        "memory/ROOT.md",
        f"memory/monthly/{week_month(week) if kind != 'monthly' else day[:7]}.md",
    ]
    if kind in ("raw", "daily", "weekly"):
        chain.append(f"memory/weekly/{week}.md")
    if kind in ("raw", "daily"):
        chain.append(f"memory/daily/{day}.md")
    path = [p for p in chain if p in nodes]
    if kind == "raw":
        path.append(f"{file}#L{line}")
    elif file not in path:
        path.append(file)
    return tuple(path)


def _covers(hit: SearchHit, raw_days: set[str]) -> bool:
    """Does a raw hit already answer for this node's period?"""
    from .tree import week_id, week_month

    doc = hit.doc
    if doc.kind == "daily":
        return doc.date in raw_days
    if doc.kind == "weekly":
        week = week_id(date.fromisoformat(doc.date))
        return any(week_id(date.fromisoformat(d)) == week for d in raw_days)
    if doc.kind == "monthly":
        month = doc.date[:7]
        return any(week_month(week_id(date.fromisoformat(d))) == month for d in raw_days)
    return False


def recall(
    index: SearchIndex,
    topics: Sequence[Topic],
    query: str,
    *,
    k: int = 5,
    since: str | None = None,
    until: str | None = None,
    type: str | None = None,
    today: date,
    half_life_days: float,
    nodes: Collection[str] = (),
) -> RecallResult:
    query = query.strip()
    if not query:
        raise QueryError("recall needs a query, e.g. %recall pricing")
    if k < 1:
        raise QueryError(f"-k must be at least 1, not {k}")
    words = query_words(query)
    matched = match_topics(words, topics)
    matched_names = {t.name for t in matched}
    found = index.search(
        query,
        limit=max(k * CANDIDATES_PER_HIT, 30),
        kinds={"raw"} if type else {"raw", "daily", "weekly", "monthly", "knowledge"},
        types={type} if type else None,
        since=since,
        until=until,
    )
    raw_days = {h.doc.date for h in found if h.doc.kind == "raw"}
    found = [h for h in found if h.doc.kind in ("raw", "knowledge") or not _covers(h, raw_days)]
    best = max((h.score for h in found), default=1.0) or 1.0
    scored = []
    for hit in found:
        doc = hit.doc
        score = hit.score / best
        try:
            age = max(0, (today - date.fromisoformat(doc.date)).days)
            score += RECENCY_WEIGHT * 0.5 ** (age / max(half_life_days, 0.1))
        except ValueError:
            pass
        hit_topics = tuple(sorted(matched_names & set(doc.tags)))
        if hit_topics:
            score += TOPIC_BOOST
        scored.append((score, hit, hit_topics))
    scored.sort(key=lambda item: (-item[0], item[1].doc.date, item[1].doc.id))
    hits = [
        Hit(
            file=hit.doc.path,
            line=hit.doc.line,
            date=hit.doc.date,
            kind=hit.doc.kind,
            type=hit.doc.type,
            title=hit.doc.title,
            snippet=hit.snippet,
            score=round(score, 4),
            path=drill_down(hit.doc.kind, hit.doc.path, hit.doc.line, hit.doc.date, nodes),
            topics=hit_topics,
        )
        for score, hit, hit_topics in scored[:k]
    ]
    return RecallResult(
        query=query,
        hits=hits,
        did_you_mean=[] if hits else did_you_mean(words, topics),
        topic_matches=sorted(matched_names),
    )
