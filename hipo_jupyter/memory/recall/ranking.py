"""Recall: "have I seen this before?" answered from the Topics Index, BM25, the tree and recency.

The query is run through the search index (BM25 over raw checkpoints, nodes and knowledge/) and
each hit's text relevance is normalised to the best hit (0..1). A node hit is dropped when a raw
checkpoint of its period already answers, since the raw log holds the same words in full; ROOT is
never a hit (it is in Layer 1 already). To the relevance are added:

- the Topics Index: the checkpoint carries a #tag the query names;
- recency, with a configurable half-life, as a factor on the relevance (it orders relevant hits
  and never lifts an irrelevant recent one over them);
- the day: how well the hit's whole day matches, read from the daily node's own BM25 score (the
  tree used top-down: a checkpoint in a day that is about the query is likelier to answer it);
- a named period: the query names a day, month or year ("on 9 November, 2022", "in May 2023",
  "2026-03") and the hit is dated in it, or in the week after it;
- a name: the hit's title is a name in the query (the speaker of an imported turn);
- who wrote it: a Claude call's write-back (the agent's task log) weighs `write_back_weight` of
  what the user wrote, so at equal relevance the user's own note comes first (DESIGN.md);
- then the user's current word first (`supersession.py`): a note changed later, under the change.

With `neighbours` the checkpoints around each raw hit are lifted too (a share of the hit's
relevance; `neighbours.py`): in a conversation the answer is often the reply to the turn that
matches the words. Hits with the same title and text are shown once. Every weight is a field
of the `RecallSettings` passed in (`requests.py`: its defaults and where each comes from).

Every hit carries its drill-down path, ROOT -> monthly -> weekly -> daily -> raw line, listing
the nodes that exist, so a reader (or a model) can walk the tree from coarse to fine.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

from ..disk.periods import week_id, week_month
from ..disk.provenance import VIA_WRITE_BACK
from ..errors import QueryError
from ..requests import DEFAULT_SETTINGS, RecallSettings
from ..search.contract import Document, SearchHit, SearchIndex
from ..search.query import plain_snippet
from ..tree.topic_index import Topic
from ..words import words as words_of
from .neighbours import Neighbours, lift_neighbours
from .passages import hit_snippet
from .query_hints import content_stems, coverage, period_match, query_names, query_periods
from .second_hop import connect
from .supersession import Changes, settle
from .time_span import day_map
from .topic_match import match_topics

# The weights of the score (topic, recency, the day's match, periods, names) and the keyword
# side's coverage power are `RecallSettings` fields (requests.py: defaults and where each comes
# from). A write-back records what a Claude call asked and answered, often in the very words of
# the user's note it drew on: a secondary record of the same task. Its whole score is weighed by
# the inverse of the largest recency factor (`write_back_weight`), so being newer alone never
# lifts it over an equally relevant note of the user's, however old; never a filter: a
# write-back that answers clearly better still comes first. (LoCoMo and MemAware hold none.)
CANDIDATES_PER_HIT = 6
CANDIDATE_HEADROOM = 134  # ... but never more than this many beyond the hits asked for
# Hybrid recall: the keyword side's relevance times (the largest share of the query's content
# words one keyword hit holds) to `RecallSettings.coverage_power`; 0: BM25 as it is. Everyday
# questions share few words with their note, and hits found by one loose word ("go", "team")
# should not outrank what the meaning found (issue 35). The order of the keyword hits among
# themselves is kept: weighing each hit by its own share measured worse on LoCoMo (0.812 against
# 0.845 at 2,000 tokens).


def write_back_weight(settings: RecallSettings = DEFAULT_SETTINGS) -> float:
    """What a write-back's score is multiplied by: the inverse of the largest recency factor."""
    return 1 / (1 + settings.recency_weight)



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
    author: str = ""  # team recall (hipo_jupyter/team): who wrote it; "" for one's own memory
    notebook: str = ""  # team recall: the notebook (memory folder) it was written in
    provenance: str = ""  # raw hits: notebook, cell, front end, model ("" if not recorded)
    checkpoint_id: str = ""  # raw hits: the checkpoint's id (to correct or forget it), if any
    changed_later: str = ""  # a later note on its subject that differs: its location, if any
    # Provenance as typed fields (`search.contract.Document`): what every decision reads.
    writer: str = ""  # raw hits: user | claude | agent | import | teammate (`disk/trust`)
    via: str = ""  # raw hits: the front end that wrote it, "" if unsaid
    provider: str = ""  # a write-back's SDK, "" if unsaid
    conversation: str = ""  # a `%%ask` write-back's conversation identity, "" if none
    proposal: str = ""  # a proposal the user has not accepted: what it proposes (corrections)
    superseded: bool = False  # a correction replaced it (shown only when asked: `--all`)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict[str, object]:
        """One hit as every front end's JSON gives it (the CLI's `--json`, the server, MCP)."""
        return {
            "file": self.file,
            "line": self.line,
            "date": self.date,
            "kind": self.kind,
            "type": self.type,
            "title": self.title,
            "snippet": self.snippet,
            "score": round(float(self.score), 6),
            "path": list(self.path),
            "topics": list(self.topics),
            "provenance": self.provenance,
            **({"writer": self.writer} if self.writer else {}),
            **({"proposal": self.proposal} if self.proposal else {}),
            **({"id": self.checkpoint_id} if self.checkpoint_id else {}),
            **({"changed_later": self.changed_later} if self.changed_later else {}),
            **({"author": self.author, "notebook": self.notebook} if self.author else {}),
        }

    @classmethod
    def of(
        cls,
        doc: Document,
        *,
        snippet: str,
        score: float,
        topics: tuple[str, ...],
        nodes: Collection[str],
    ) -> Hit:
        """The hit for `doc` (its snippet cut from its text when none is given), with its
        drill-down path through the nodes that exist."""
        return cls(
            file=doc.path,
            line=doc.line,
            date=doc.date,
            kind=doc.kind,
            type=doc.type,
            title=doc.title,
            snippet=snippet or plain_snippet(doc.text),
            score=score,
            path=drill_down(doc.kind, doc.path, doc.line, doc.date, nodes),
            topics=topics,
            provenance=doc.provenance,
            writer=doc.writer,
            via=doc.via,
            provider=doc.provider,
            conversation=doc.conversation,
        )


@dataclass(frozen=True)
class RecallResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    did_you_mean: list[str] = field(default_factory=list)
    topic_matches: list[str] = field(default_factory=list)
    mode: str = "keyword"  # how the hits were ranked: keyword | semantic | hybrid (semantic.py)

    def to_json(self) -> dict[str, object]:
        """The one JSON document of a recall: `hipo recall --json` and `/hipo/api/recall` give
        exactly this (fields are only ever added)."""
        return {
            "query": self.query,
            "mode": self.mode,
            "hits": [hit.to_json() for hit in self.hits],
            "did_you_mean": list(self.did_you_mean),
            "topic_matches": list(self.topic_matches),
        }

    def __iter__(self):
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]


def query_words(query: str) -> list[str]:
    """The query's folded words (`words.py`, stopwords kept): what topic names are matched by."""
    return words_of(query)


def did_you_mean(words: Sequence[str], topics: Sequence[Topic]) -> list[str]:
    """Topic names and titles (a topic's keywords are its titles' slugs) spelled close to a
    query word of four letters or more, or to the whole query: the fix of a typo. Never a
    word inside a title: "live" must not suggest "line" or "give" because a note used them."""
    vocabulary = sorted({t.name for t in topics} | {k for t in topics for k in t.keywords})
    asked = [word for word in words if len(word) >= 4]
    if len(asked) > 1:
        asked.append("-".join(asked))  # "competitor pricng" against "competitor-pricing"
    suggestions: list[str] = []
    for word in asked:
        for close in difflib.get_close_matches(word, vocabulary, n=3, cutoff=0.75):
            if close not in suggestions and close != word:
                suggestions.append(close)
    return suggestions[:5]


def drill_down(
    kind: str, file: str, line: int, day: str, nodes: Collection[str]
) -> tuple[str, ...]:
    """ROOT -> monthly -> weekly -> daily -> the raw line, keeping the nodes that exist."""

    if kind not in ("raw", "daily", "weekly", "monthly"):
        return (file,)
    path = [p for p in _node_chain(kind, day) if p in nodes]
    if kind == "raw":
        path.append(f"{file}#L{line}")
    elif file not in path:
        path.append(file)
    return tuple(path)


@lru_cache(maxsize=4096)
def _node_chain(kind: str, day: str) -> tuple[str, ...]:
    """The nodes above a `kind` hit dated `day`, coarse to fine, whether they exist or not:
    the same for every hit of a day, so worked out once per (kind, day)."""
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
    return tuple(chain)


class AnsweredPeriods:
    """The days, ISO weeks and months (by their weeks' Thursdays) that raw hits fall in, each
    worked out once per recall: a node of such a period is no hit of its own, the raw log
    answering in full. (Asked per node against every raw day, this was a week_id per pair.)"""

    def __init__(self, raw_days: Collection[str]) -> None:
        self.days = set(raw_days)
        self.weeks: set[str] = set()
        for day in self.days:
            try:
                self.weeks.add(week_id(date.fromisoformat(day)))
            except ValueError:
                continue
        self.months = {week_month(week) for week in self.weeks}

    def answered(self, kind: str, start: str) -> bool:
        """Is the period of a node (`kind` daily, weekly or monthly, starting on `start`) one
        a raw hit's day falls in?"""
        if kind == "daily":
            return start in self.days
        if kind == "weekly":
            return week_id(date.fromisoformat(start)) in self.weeks
        if kind == "monthly":
            return start[:7] in self.months
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
    neighbours: Neighbours | None = None,
    similar: Sequence[tuple[Document, float]] = (),
    similar_weight: float = 0.5,
    snippets: bool = True,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> RecallResult:
    """Rank what the index finds for `query` (see the module docstring for the score), best first.

    With `neighbours` (the checkpoints of a raw log, in order), a raw hit also lifts the
    checkpoints next to it: in a conversation the answer is often the reply to the
    turn that matches the words, and in a task log the step before or after.

    `similar` (documents near the query by meaning, with their cosine similarity, from the
    semantic extra) joins BM25 as text relevance, weighted by `similar_weight` (see
    `blend_relevance`): everything else (topics, the day's match, periods, names, recency,
    neighbours) then applies to what either found. `snippets=False` leaves out the index's
    cuts around the matched words (`SearchIndex.search`): a context shows whole texts.
    `settings` names the stages that fill a context (the second hop, implicit needs, the time
    span), each only when asked for.
    """
    query = query.strip()
    if not query:
        raise QueryError("recall needs a query, e.g. %recall pricing")
    if k < 1:
        raise QueryError(f"-k must be at least 1, not {k}")
    words = query_words(query)
    matched = match_topics(words, topics)
    matched_names = {t.name for t in matched}
    filters = {"type": type, "since": since, "until": until}
    found = _candidates(index, query, k, similar, similar_weight, settings, **filters)
    day_prior = _day_prior(found)
    if settings.time_span:
        day_prior = day_map(query, found, day_prior)  # time_span.py
    found = _without_answered_nodes(found)
    best = max((h.score for h in found), default=1.0) or 1.0
    relevance: dict[str, float] = {}
    candidates: dict[str, tuple[Document, str]] = {}
    for hit in found:
        relevance[hit.doc.id] = max(relevance.get(hit.doc.id, 0.0), hit.score / best)
        candidates.setdefault(hit.doc.id, (hit.doc, hit.snippet))
    if neighbours is not None:
        lift_neighbours(found, best, neighbours, relevance, candidates, type, since, until)
    scored = _scored(
        candidates, relevance, matched_names, query, today, half_life_days, day_prior, settings
    )
    scored, changes = settle(scored, query, written_back, settings=settings)
    hits = _distinct_best(scored, k, nodes, changes, query if snippets else None)
    return RecallResult(
        query=query,
        hits=hits,
        did_you_mean=[] if hits else did_you_mean(words, topics),
        topic_matches=sorted(matched_names),
    )


def _scored(
    candidates: dict[str, tuple[Document, str]],
    relevance: dict[str, float],
    matched_names: set[str],
    query: str,
    today: date,
    half_life_days: float,
    day_prior: dict[str, float],
    settings: RecallSettings,
) -> list[tuple[float, Document, str, tuple[str, ...]]]:
    """(score, document, snippet, topics) of each candidate: its relevance with the priors
    (`_priors`), the topic boost and a write-back's weight (see the module docstring)."""
    periods = query_periods(query)
    names = query_names(query)
    scored = []
    by_day: dict[str, tuple[float, float]] = {}  # date -> (its date's prior, recency factor)
    for doc_id, (doc, snippet) in candidates.items():
        known = by_day.get(doc.date)
        if known is None or (names and doc.kind == "raw"):
            added, factor = _priors(
                doc, today, half_life_days, day_prior, periods, names, by_day, settings=settings
            )
        else:  # what `_priors` gives once its date is known and no name can add
            added, factor = known if doc.kind == "raw" else (0.0, known[1])
        score = relevance[doc_id] * factor + added
        hit_topics = tuple(sorted(matched_names.intersection(doc.tags))) if matched_names else ()
        if hit_topics:
            score += settings.topic_boost
        if written_back(doc):
            score *= write_back_weight(settings)
        scored.append((score, doc, snippet, hit_topics))
    return scored


def _candidates(
    index: SearchIndex,
    query: str,
    k: int,
    similar: Sequence[tuple[Document, float]],
    similar_weight: float,
    settings: RecallSettings,
    *,
    type: str | None,
    since: str | None,
    until: str | None,
) -> list[SearchHit]:
    """What recall ranks: the index's hits for `query`, the vectors' `similar` blended in as
    more relevance, and what the stages `settings` asks for connect to them (`second_hop`)."""
    found = index.search(
        query,
        limit=candidate_count(k),
        kinds={"raw"} if type else {"raw", "daily", "weekly", "monthly", "knowledge"},
        types={type} if type else None,
        since=since,
        until=until,
        snippets=False,  # the passage that answers is cut below, for the hits shown only
    )
    if similar:
        found = blend_relevance(found, similar, similar_weight, query, settings=settings)
    return connect(found, query, index, settings, type=type, since=since, until=until)


def written_back(doc: Document) -> bool:
    """Whether a raw hit is an LLM call's write-back (`via=write-back`), as its typed field
    says (never its display phrase, which starts with a notebook's name)."""
    return doc.kind == "raw" and doc.via == VIA_WRITE_BACK


def _distinct_best(
    scored: list[tuple[float, Document, str, tuple[str, ...]]],
    k: int,
    nodes: Collection[str],
    changes: Changes,
    query: str | None = None,
) -> list[Hit]:
    """The `k` best of (score, document, snippet, topics), as hits; the same title and text
    twice (a repeated import, a copy) is shown once, and so is one task of Claude's task log
    (write-backs of one title: a recurring call, asked again on other days), by its best run:
    its other runs would fill the context with the agent's log, not the user's notes. Only
    the hits walked are fingerprinted.
    With `query`, each hit's snippet is the passage of its text that answers it
    (`passages.hit_snippet`), whichever backend found it. Of `changes` (`supersession`): a
    write-back another on its subject shows is left out, and a note changed later says so."""
    scored.sort(key=lambda item: (-item[0], item[1].date, item[1].id))
    hits: list[Hit] = []
    seen_texts: set[str] = set()
    for score, doc, snippet, hit_topics in scored:
        text = "(a task of Claude's)" if written_back(doc) else doc.text
        fingerprint = _fingerprint(doc.title, text)
        if fingerprint in seen_texts or doc.id in changes.repeated_write_backs:
            continue
        seen_texts.add(fingerprint)
        if query is not None:
            snippet = hit_snippet(doc.text, query)
        hit = Hit.of(doc, snippet=snippet, score=round(score, 4), topics=hit_topics, nodes=nodes)
        hits.append(changes.marked(hit, doc.id) if doc.id in changes.later else hit)
        if len(hits) == k:
            break
    return hits


@lru_cache(maxsize=1024)  # the ~170 hits a context walks, a few queries' worth
def _fingerprint(title: str, text: str) -> str:
    """A hit's title and text as `_distinct_best` compares them (whitespace and case folded),
    once per text: a topic's notes are walked query after query."""
    return " ".join(f"{title}\n{text}".split()).casefold()


def candidate_count(k: int) -> int:
    """How many hits recall asks of BM25 (and of the vectors, in hybrid recall) to show `k`:
    enough that the boosts and the neighbours can reorder them: six per hit for the few a
    person reads (30 for `%recall`), at most CANDIDATE_HEADROOM more than asked for the many a
    context packs from (300, not 1,000, for 166 hits at 2,000 tokens). Each candidate costs
    Python time; on LoCoMo's dev set the cap moved all-evidence by -0.003 at 2,000 tokens and
    -0.006 at 4,000, and a year's context went from 95 to 68 ms CPU (p50, cold caches)."""
    return max(min(k * CANDIDATES_PER_HIT, k + CANDIDATE_HEADROOM), 30)


def blend_relevance(
    found: Sequence[SearchHit],
    similar: Sequence[tuple[Document, float]],
    weight: float,
    query: str = "",
    *,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> list[SearchHit]:
    """BM25 hits and documents near by meaning as one list, best first: each document's
    relevance is its BM25 score over the best one plus `weight` times its cosine over the best
    one (a convex-style combination of normalised scores). Scores, not ranks: a close paraphrase
    keeps its lead over a distant one, which rank fusion forgets; and, being candidates of this
    recall, the meaning hits get the boosts and neighbours keyword hits get. On LoCoMo this was
    ahead of reciprocal rank fusion at 2,000 tokens (benchmarks/LOCOMO.md). With `query`, a
    keyword side is weighed by how much of the query its words found (`keyword_confidence`)."""
    best_text = max((hit.score for hit in found), default=0.0) or 1.0
    best_meaning = max((score for _, score in similar), default=0.0)
    relevance: dict[str, float] = {}
    entries: dict[str, tuple[Document, str]] = {}
    confidence = keyword_confidence(found, query, settings=settings) if similar else 1.0
    for hit in found:
        relevance[hit.doc.id] = max(
            relevance.get(hit.doc.id, 0.0), confidence * hit.score / best_text
        )
        entries.setdefault(hit.doc.id, (hit.doc, hit.snippet))
    if best_meaning > 0 and weight > 0:
        for doc, score in similar:
            if score <= 0:
                continue
            relevance[doc.id] = relevance.get(doc.id, 0.0) + weight * score / best_meaning
            entries.setdefault(doc.id, (doc, ""))
    blended = [SearchHit(entries[i][0], relevance[i], entries[i][1]) for i in relevance]
    blended.sort(key=lambda hit: -hit.score)
    return blended


def keyword_confidence(
    found: Sequence[SearchHit], query: str, *, settings: RecallSettings = DEFAULT_SETTINGS
) -> float:
    """How well the words found the query, 0..1: the best share of its content words that one
    keyword hit holds, to the power `settings.coverage_power` (1.0 with no query or no content
    word)."""
    power = settings.coverage_power
    stems = content_stems(query) if query and power else frozenset()
    if not stems or not found:
        return 1.0
    held = 0.0
    for hit in found:  # a hit holding every word ends the search: none holds more
        text = f"{hit.doc.title} {hit.doc.text} {' '.join(hit.doc.tags)}"
        held = max(held, coverage(stems, text))
        if held >= 1.0:
            break
    return held**power


def _without_answered_nodes(found: Sequence[SearchHit]) -> list[SearchHit]:
    """The hits less the nodes whose period a raw hit falls in (the raw log answers in full)."""
    answered = AnsweredPeriods({h.doc.date for h in found if h.doc.kind == "raw"})
    return [
        h
        for h in found
        if h.doc.kind in ("raw", "knowledge") or not answered.answered(h.doc.kind, h.doc.date)
    ]


def _day_prior(found: Sequence[SearchHit]) -> dict[str, float]:
    """How well each day's whole log (its daily node) matches, 0..1 against the best day."""
    days = [h for h in found if h.doc.kind == "daily"]
    best = max((h.score for h in days), default=0.0)
    if best <= 0:
        return {}
    prior: dict[str, float] = {}
    for hit in days:
        prior[hit.doc.date] = max(prior.get(hit.doc.date, 0.0), hit.score / best)
    return prior


def _priors(
    doc: Document,
    today: date,
    half_life_days: float,
    day_prior: dict[str, float],
    periods: Sequence[tuple[date, date]],
    names: Collection[str],
    by_day: dict[str, tuple[float, float]] | None = None,
    *,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> tuple[float, float]:
    """(added, factor): what is added to a hit's text relevance (the day's match, a named
    period, a name; raw checkpoints only, a node's date being its period's start), and the
    recency factor it is multiplied by, so that recency orders relevant hits and never lifts an
    irrelevant one over them. `by_day` keeps what depends on the date alone, worked out once
    per date of a recall's candidates (hundreds of them share a few dozen days)."""
    known = by_day.get(doc.date) if by_day is not None else None
    if known is None:
        try:
            day = date.fromisoformat(doc.date)
        except ValueError:
            return 0.0, 1.0
        age = max(0, (today - day).days)
        known = (
            settings.day_weight * day_prior.get(doc.date, 0.0)
            + settings.period_boost * period_match(day, periods),
            1.0 + settings.recency_weight * 0.5 ** (age / max(half_life_days, 0.1)),
        )
        if by_day is not None:
            by_day[doc.date] = known
    added, factor = known
    if doc.kind != "raw":
        return 0.0, factor
    if names and doc.title.casefold() in names:
        added += settings.name_boost
    return added, factor
