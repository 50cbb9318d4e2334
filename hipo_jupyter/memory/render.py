"""Plain text of the engine's results: the one renderer every front end prints.

The CLI, IPython's plain-text reprs, MCP's tool answers and the widgets' text fallbacks show a
recall, a status, the Topics Index, Layer 1's budget and a compaction pass as these functions
write them, so a user moving between a terminal, a notebook and an agent reads the same lines.
HTML (the notebook's and the widgets') is built by the front ends from the same fields
(`to_json()`), with the drill-down joined by the same `ARROW`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .disk.provenance import provenance_line
from .disk.store import raw_log_path

if TYPE_CHECKING:
    from .disk.checkpoint import Checkpoint
    from .recall.ranking import Hit, RecallResult
    from .tree.chain import CompactionReport
    from .tree.layer1 import Layer1
    from .tree.status import Status
    from .tree.topic_index import Topic

ARROW = " -> "
"""Between the steps of a drill-down: ROOT -> month -> week -> day -> raw line."""


def counted(number: int, noun: str) -> str:
    """ "1 day", "2 days", "1,204 checkpoints"."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


# --- recall -------------------------------------------------------------------------------
def drill_down(hit: Hit) -> str:
    """The way down the tree to the hit, or its file:line when it has none (knowledge)."""
    return ARROW.join(hit.path) if hit.path else hit.location


def hit_heading(hit: Hit) -> str:
    """`2026-03-12 [decision] Competitor pricing (by ana in pricing.ipynb)`."""
    by = f" (by {hit.author} in {hit.notebook})" if hit.author else ""
    return f"{hit.date} [{hit.type or hit.kind}] {hit.title}{by}"


def no_hits_text(result: RecallResult) -> str:
    text = f"No memory of {result.query!r}."
    if result.did_you_mean:
        text += " Did you mean: " + ", ".join(result.did_you_mean) + "?"
    return text


def recall_caption(result: RecallResult) -> str:
    """`recall 'pricing': 2 hits (hybrid) (topics: pricing)`: the ranking is named when meaning
    took part, and the Topics Index entries the query named."""
    caption = f"recall {result.query!r}: {counted(len(result.hits), 'hit')}"
    if result.mode in ("semantic", "hybrid"):
        caption += f" ({result.mode})"
    if result.topic_matches:
        caption += f" (topics: {', '.join(result.topic_matches)})"
    return caption


def recall_text(result: RecallResult, *, paths: bool = True) -> str:
    """Each hit's answer first: its heading, the passage that matched and where it came from;
    then, with `paths`, the way down the tree to it (`hipo recall --paths`; agents get it, as
    it names the nodes they can read)."""
    if not result.hits:
        return no_hits_text(result)
    lines = [recall_caption(result)]
    for number, hit in enumerate(result.hits, 1):
        lines.append(f"{number}. {hit_heading(hit)}")
        snippet = " ".join(hit.snippet.split())
        if snippet:
            lines.append(f"   {snippet}")
        if hit.provenance or hit.checkpoint_id:
            lines.append(f"   {hit_source(hit)}")
        if paths:
            lines.append(f"   {drill_down(hit)}")
    return "\n".join(lines)


def hit_source(hit: Hit) -> str:
    """Where a hit came from and the id to correct or forget it by: "from a notebook cell ·
    id 2026-03-12T10:00:00Z-1a2b3c4d" (either part alone when the other is not known)."""
    parts = [provenance_line(hit.provenance)] if hit.provenance else []
    if hit.checkpoint_id:
        parts.append(f"id {hit.checkpoint_id}")
    return " · ".join(parts)


# --- checkpoints ----------------------------------------------------------------------------
def checkpoint_where(checkpoint: Checkpoint) -> str:
    """`memory/2026-03-12.md:14`: the raw log line a checkpoint starts at."""
    where = raw_log_path(checkpoint.date) if checkpoint.date else "the raw log"
    return f"{where}:{checkpoint.line}" if checkpoint.line else where


def checkpoint_line(checkpoint: Checkpoint) -> str:
    """The confirmation a write prints: what, where, the id to find it again and what was
    redacted; for a checkpoint found already there (`repeated`), that nothing was written."""
    tags = " " + " ".join(f"#{tag}" for tag in checkpoint.tags) if checkpoint.tags else ""
    what = f"{checkpoint.title!r} [{checkpoint.type}]{tags}"
    if checkpoint.repeated:
        return repeated_line(checkpoint, what)
    where = f"{checkpoint_where(checkpoint)} (id {checkpoint.id})"
    return f"remembered {what} in {where}{redacted_note(checkpoint.redacted)}"


def written_where(checkpoint: Checkpoint) -> str:
    """`memory/2026-03-12.md:14  <id>; redacted 1 password`: a write's answer to an agent."""
    return f"{checkpoint_where(checkpoint)}  {checkpoint.id}{redacted_note(checkpoint.redacted)}"


def redacted_note(counts: Iterable[tuple[str, int]] | Mapping[str, int]) -> str:
    """`; redacted 2 password, 1 github-token`: what redaction replaced in a write, the count
    per kind (`Checkpoint.redacted`, `ImportReport.redacted`); empty when nothing was."""
    pairs = list(counts.items() if isinstance(counts, Mapping) else counts)
    return "; redacted " + ", ".join(f"{n} {kind}" for kind, n in pairs) if pairs else ""


def repeated_line(checkpoint: Checkpoint, what: str = "") -> str:
    """One line for a write that found the same checkpoint already in its day's log, or
    content the user forgot (a forget is remembered: nothing is written again)."""
    what = what or f"{checkpoint.title!r}"
    if checkpoint.forgotten:
        return (f"not remembered: {what} is what you forgot (id {checkpoint.id}); a forget "
                "is kept (to say it again on purpose: hipo remember, or the sidebar)")  # fmt: skip
    return (
        f"already remembered: {what} is in {checkpoint_where(checkpoint)} "
        f"(id {checkpoint.id}); nothing written twice"
    )


# --- status, topics, Layer 1, compaction ------------------------------------------------------
def owed_text(owed: int) -> str:
    return f"{owed} (the model writes them in the background)"


def status_text(status: Status) -> str:
    nodes = ", ".join(f"{count} {kind}" for kind, count in status.nodes.items())
    rows = [
        ("root", status.root),
        (
            "raw logs",
            f"{counted(status.raw_days, 'day')}, {counted(status.checkpoints, 'checkpoint')}",
        ),
        ("nodes", nodes or "none"),
        ("topics", f"{status.topics}"),
        ("layer 1", f"{status.layer1_tokens:,} / {status.layer1_budget:,} tokens"),
        ("search backend", status.backend),
        ("last compaction", status.last_compaction or "never"),
        ("dirty nodes", f"{status.dirty_nodes}"),
        *([("summaries owed", owed_text(status.owed_summaries))] if status.owed_summaries else []),
        *([("semantic", status.semantic)] if status.semantic else []),
    ]
    return "\n".join(f"{name + ':':<16} {value}" for name, value in rows)


def topic_line(topic: Topic) -> str:
    """A Topics Index line as ROOT.md writes it, and how many checkpoints mention the topic."""
    return f"{topic.line()}  ·  {counted(topic.count, 'checkpoint')}"


def topics_text(topics: Sequence[Topic]) -> str:
    if not topics:
        return "Topics Index: empty. Remember something (%%remember, hipo remember), then compact."
    return "\n".join(
        [f"Topics Index ({counted(len(topics), 'topic')})"]
        + [topic_line(topic) for topic in topics]
    )


def layer1_line(layer1: Layer1) -> str:
    """Layer 1 against its budget on one line, part by part."""
    parts = "  ".join(
        f"{part.name} {part.tokens:,}/{part.budget:,}{' (cut)' if part.truncated else ''}"
        for part in layer1.parts
    )
    return f"Layer 1: {layer1.total_tokens:,} / {layer1.total_budget:,} tokens  [{parts}]"


def budget_text(layer1: Layer1) -> str:
    """Each Layer 1 part's tokens against its budget, as an aligned table. The headline and
    the total are `Layer1.total_tokens`, what Layer 1 costs in every prompt (cuts and the
    parts' headers counted): the one figure `%hipo status`, the sidebar and the cache line
    give too."""
    rows = [("part", "file", "tokens", "budget", "fill")]
    for part in layer1.parts:
        fill = "-" if part.budget <= 0 else f"{part.fill:.0%}"
        mark = " cut" if part.truncated else ("" if part.exists else " (no file)")
        rows.append((part.name, part.path, f"{part.tokens:,}", f"{part.budget:,}", fill + mark))
    used = layer1.total_tokens
    total_fill = f"{used / layer1.total_budget:.0%}" if layer1.total_budget else "-"
    rows.append(("total", "", f"{used:,}", f"{layer1.total_budget:,}", total_fill))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [f"Layer 1: {used:,} / {layer1.total_budget:,} tokens (in every prompt)"]
    for row in rows:
        left = f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}"
        right = f"{row[2]:>{widths[2]}}  {row[3]:>{widths[3]}}  {row[4]}"
        lines.append(f"{left}  {right}".rstrip())
    lines.append("(the total is Layer 1 as sent: the parts after cuts, with their headers)")
    return "\n".join(lines)


def compaction_text(report: CompactionReport, *, list_built: bool = True) -> str:
    """One line for a pass, then (with `list_built`) one per node built, and one per note (a
    skipped source, a repair, a fallback)."""
    if not report.built and not report.fixed and not report.reopened:
        lines = [f"Nothing to compact: the tree is up to date ({report.seconds:.2f}s)."]
    else:
        lines = [
            f"Compacted: {len(report.built)} built ({len(report.summarized)} summarized), "
            f"{len(report.fixed)} fixed, {len(report.reopened)} reopened "
            f"in {report.seconds:.2f}s."
        ]
    if list_built:
        lines += [f"  {path}" for path in report.built]
    lines += [f"  note: {error}" for error in report.errors]
    return "\n".join(lines)
