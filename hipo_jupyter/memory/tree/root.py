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

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from ..disk.checkpoint import Checkpoint
from ..disk.nodes import Node, list_value, render_node
from ..disk.periods import week_id
from ..disk.provenance import UNKNOWN_CALLER, caller_name
from ..disk.trust import AGENT, CLAUDE, IMPORT, RULE_IN_FORCE, may, settled_away, writer_of
from .tokens import count_tokens
from .topic_index import Topic, checkpoint_topics, collect_topics
from .topics import slug

ACTIVE_DAYS = 7
PATTERN_DAYS = 30
MAX_ACTIVE = 12
MAX_PATTERNS = 8
MAX_HISTORY = 6
GIST_CHARS = 140
NO_ACTIVE = "- (nothing in the last 7 days)"
NO_TOPICS = "- (no topics yet)"


PROPOSED_GIST = "a proposed rule, not in force until the user accepts it"
PROPOSED_CORRECTION_GIST = "a proposed correction, not in force until the user accepts it"


def steers(checkpoint: Checkpoint) -> bool:
    """Whether a checkpoint's guidance (a feedback checkpoint, a `- rule:` field) may stand in
    ROOT.md: only when its writer may make a rule in force (the user, `disk/trust`). Another
    writer's feedback is a proposal: ROOT.md, which every prompt carries, says one is waiting
    and repeats none of it."""
    return may(writer_of(checkpoint), RULE_IN_FORCE)


def _gist(checkpoint: Checkpoint) -> str:
    steering = steers(checkpoint)
    if checkpoint.proposes:  # an agent's correction of the user's words: a proposal, of any type
        return PROPOSED_CORRECTION_GIST
    if checkpoint.type == "feedback" and not steering:
        return PROPOSED_GIST
    for name in ("decisions", "outcome", "rule", "request"):
        if name == "rule" and not steering:
            continue
        value = checkpoint.field(name)
        if value:
            break
    else:
        value = checkpoint.text
    value = " ".join((value or "").split())
    return value if len(value) <= GIST_CHARS else value[: GIST_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _active_context(checkpoints: Sequence[Checkpoint], today: date) -> list[str]:
    """The user's checkpoints of the window, newest first, then one line for all the Claude
    calls' write-backs among them (`calls_line`): the agent's task log never pushes the
    user's notes out."""
    since = (today - timedelta(days=ACTIVE_DAYS)).isoformat()
    settled = settled_away([c for c in checkpoints if c.date and c.date > since])
    recent = sorted(
        (c for c in checkpoints if c.date and c.date > since and c.id not in settled),
        key=lambda c: (c.date, c.line),
        reverse=True,
    )
    calls = [c for c in recent if writer_of(c) == CLAUDE]
    own = [c for c in recent if writer_of(c) != CLAUDE]
    lines = [active_line(checkpoint) for checkpoint in own[: MAX_ACTIVE - bool(calls)]]
    if calls:
        lines.append(
            calls_line(
                calls[0].date or "",
                len(calls),
                [c.title for c in calls],
                caller_name(c.provider for c in calls),
            )
        )
    return lines or [NO_ACTIVE]


CALLS_LINE = re.compile(r"- (\d{4}-\d\d-\d\d) (\d+) ([\w.-]+) calls?: (.*)\Z")
"""The Active Context line of the write-backs: `- <latest date> N Claude calls: task; task`
(the calls named by their provider, `caller_name`)."""


def calls_line(latest: str, count: int, tasks: Sequence[str], caller: str) -> str:
    """One Active Context line for `count` write-backs of `caller`'s calls (`caller_name`), the
    latest on `latest`: their tasks (titles' slugs), newest first, as many as fit the gist's
    length."""
    names = list(dict.fromkeys(slug(task, max_words=5) for task in tasks if slug(task)))
    shown: list[str] = []
    for name in names:
        if len("; ".join([*shown, name])) > GIST_CHARS:
            break
        shown.append(name)
    more = " ..." if len(shown) < len(names) else ""
    calls = f"{count} {caller} call{'s' * (count != 1)}"
    return f"- {latest} {calls}: {'; '.join(shown)}{more}"


def calls_line_after(line: str | None, checkpoint: Checkpoint) -> str:
    """The write-backs' line (`calls_line`, None when there is none yet) after one more."""
    found = CALLS_LINE.match(line) if line else None
    caller = caller_name([checkpoint.provider])
    if found is None:
        return calls_line(checkpoint.date or "", 1, [checkpoint.title], caller)
    if found.group(3) != caller:
        caller = UNKNOWN_CALLER  # calls of two providers
    tasks = [checkpoint.title, *found.group(4).removesuffix(" ...").split("; ")]
    latest = max(found.group(1), checkpoint.date or "")
    return calls_line(latest, int(found.group(2)) + 1, tasks, caller)


# Who wrote an Active Context line, when not the user (`disk/trust`, from the checkpoint's own
# provenance): ROOT.md is in every prompt, and an agent's or an import's note must not read
# there as the user's word. (Write-backs have their one grouped line, `calls_line`.)
WRITTEN_BY = {AGENT: "written by an agent, not the user", IMPORT: "imported, not the user's"}


def active_line(checkpoint: Checkpoint) -> str:
    """One Active Context line: `- 2026-03-12 competitor-pricing [project] #q1: <gist>`; one
    another writer wrote says so: `- 2026-03-12 feast-registry [project] (written by an agent,
    not the user): <gist>`."""
    tags = "".join(f" #{t}" for t in checkpoint.tags)
    gist = _gist(checkpoint)
    line = f"- {checkpoint.date} {slug(checkpoint.title, max_words=5)} [{checkpoint.type}]{tags}"
    who = WRITTEN_BY.get(writer_of(checkpoint))
    if who:
        line = f"{line} ({who})"
    return f"{line}: {gist}" if gist else line


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
        if c.type == "feedback" and c.field("rule") and steers(c)
    ]
    for checkpoint in rules[:5]:
        lines.append(f"- rule: {' '.join(checkpoint.field('rule').split())[:GIST_CHARS]}")
    return lines or ["- (no repeated topics in the last 30 days)"]


def _week_floor(today: date) -> str:

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
        return [NO_TOPICS]
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


def render_root(
    meta: Mapping[str, str],
    active: Sequence[str],
    patterns: Sequence[str],
    history: Sequence[str],
    topic_lines: Sequence[str],
) -> str:
    """ROOT.md from its four sections' lines, under its frontmatter."""
    body = "\n".join(
        [
            "# ROOT: memory index",
            "",
            "## Active Context",
            *active,
            "",
            "## Recent Patterns",
            *patterns,
            "",
            "## Historical Summary",
            *history,
            "",
            "## Topics Index",
            *topic_lines,
        ]
    )
    return render_node(meta, body)


def fit_root(
    meta: Mapping[str, str],
    active: Sequence[str],
    patterns: Sequence[str],
    history: Sequence[str],
    topics: Sequence[Topic],
    budget: int,
) -> str:
    """ROOT.md within `budget` tokens with `history` as given: the oldest topics fold first
    (two at a time), then Active Context and Recent Patterns shorten. What a compaction pass
    does once the Historical Summary is as short as it goes, and what a write does
    (`root_update`)."""

    def render(folded: int) -> str:
        return render_root(meta, active, patterns, history, _topic_lines(topics, folded))

    whole = render(0)
    if count_tokens(whole) <= budget:
        return whole  # the common case, at every write: one render and one count
    steps = [0, *range(2, len(topics) + 1, 2)]
    # Folding more never adds tokens, so the fewest steps that fit are found by bisection:
    # a few dozen renders for 10,000 topics where trying each step was quadratic.
    low, high = 1, len(steps)
    while low < high:
        middle = (low + high) // 2
        if count_tokens(render(steps[middle])) <= budget:
            high = middle
        else:
            low = middle + 1
    if low < len(steps):
        return render(steps[low])
    folded_all = _topic_lines(topics, len(topics))
    for active_n, patterns_n in ((6, 4), (3, 2), (1, 1)):
        text = render_root(meta, active[:active_n], patterns[:patterns_n], history, folded_all)
        if count_tokens(text) <= budget:
            return text
    return text


def build_root(
    checkpoints: Sequence[Checkpoint],
    monthly: Mapping[str, Node],
    *,
    today: date,
    budget: int,
    source_hash: str,
    topics: Sequence[Topic] | None = None,
) -> str:
    replaced = {c.replaces for c in checkpoints if c.replaces}  # superseded by a correction
    checkpoints = [c for c in checkpoints if c.id not in replaced]
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
    # Shrink in the order the design gives until the file fits its budget.
    for keep, words in ((MAX_HISTORY, 8), (3, 4), (3, 0)):
        history = _history_lines(monthly, today, keep, words)
        text = render_root(meta, active, patterns, history, _topic_lines(topics, 0))
        if count_tokens(text) <= budget:
            return text
    return fit_root(meta, active, patterns, _history_lines(monthly, today, 0, 0), topics, budget)
