"""How engine results look in IPython: plain text for terminals and logs, HTML for notebooks.

The engine returns plain dataclasses and knows nothing of HTML; this module is the only place
that turns them into something to read. `RecallView` wraps a RecallResult with rich reprs, so
`%recall pricing` renders in a notebook and `hits = %recall pricing` is still the result.
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from IPython.display import Markdown, display

from hipo_jupyter.memory import (
    Checkpoint,
    CompactionReport,
    Hit,
    Layer1,
    RecallResult,
    Status,
    Topic,
)
from hipo_jupyter.memory.rules import Rule, rules_index_text
from hipo_jupyter.memory.tokens import count_tokens

ARROW = " -> "


# --- recall -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecallView(RecallResult):
    """A RecallResult that knows how to show itself; iterates, indexes and counts its hits."""

    @classmethod
    def of(cls, result: RecallResult) -> RecallView:
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)})

    def __str__(self) -> str:
        return recall_text(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(recall_text(self))

    def _repr_html_(self) -> str:
        return recall_html(self)


def drill_down(hit: Hit) -> str:
    """ROOT -> month -> week -> day -> raw line: the way down the tree to the hit."""
    return ARROW.join(hit.path) if hit.path else hit.location


def _hit_heading(hit: Hit) -> str:
    kind = hit.type or hit.kind
    return f"{hit.date} [{kind}] {hit.title}" + _author_note(hit)


def _author_note(hit: Hit) -> str:
    """Team recall: who wrote it, in which notebook."""
    author = getattr(hit, "author", "")
    return f" (by {author} in {hit.notebook})" if author else ""


def _no_hits(result: RecallResult) -> str:
    text = f"nothing remembered about {result.query!r}"
    if result.did_you_mean:
        text += "; did you mean " + ", ".join(result.did_you_mean) + "?"
    return text


def recall_text(result: RecallResult) -> str:
    if not result.hits:
        return _no_hits(result)
    count = counted(len(result.hits), "hit")
    lines = [f"recall {result.query!r}: {count}" + _mode_note(result) + _topics_note(result)]
    for number, hit in enumerate(result.hits, 1):
        lines.append(f"{number}. {_hit_heading(hit)}")
        snippet = " ".join(hit.snippet.split())
        if snippet:
            lines.append(f"   {snippet}")
        lines.append(f"   {drill_down(hit)}")
        if getattr(hit, "provenance", ""):
            lines.append(f"   source: {hit.provenance}")
    return "\n".join(lines)


def _mode_note(result: RecallResult) -> str:
    """Say so when meaning, not only words, ranked the hits."""
    mode = getattr(result, "mode", "keyword")
    return f" ({mode})" if mode in ("semantic", "hybrid") else ""


def _topics_note(result: RecallResult) -> str:
    return f" (topics: {', '.join(result.topic_matches)})" if result.topic_matches else ""


def recall_html(result: RecallResult) -> str:
    esc = html.escape
    if not result.hits:
        return f"<div class='hipo-recall'><em>{esc(_no_hits(result))}</em></div>"
    rows = []
    for hit in result.hits:
        rows.append(
            "<tr>"
            f"<td style='white-space:nowrap'>{esc(hit.date)}</td>"
            f"<td>{esc(hit.type or hit.kind)}</td>"
            f"<td><b>{esc(hit.title)}</b>{esc(_author_note(hit))}<br>{esc(hit.snippet)}<br>"
            f"<small><code>{esc(drill_down(hit))}</code></small>"
            + (f"<br><small>source: {esc(hit.provenance)}</small>" if hit.provenance else "")
            + "</td>"
            "</tr>"
        )
    caption = esc(f"recall {result.query!r}" + _mode_note(result) + _topics_note(result))
    return (
        "<div class='hipo-recall'><table>"
        f"<caption style='text-align:left'>{caption}</caption>"
        "<thead><tr><th>date</th><th>type</th><th>memory</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


# --- rules ----------------------------------------------------------------------------------
def rules_text(rules: Sequence[Rule]) -> str:
    """`%hipo rules`: the rules index, active rules first, then the superseded ones."""
    if not rules:
        return (
            "no rules yet: %%remember TITLE --type feedback --trigger \"before a deploy\" "
            "--rule \"...\" writes one"
        )
    return rules_index_text(list(rules)).rstrip()


# --- checkpoints ----------------------------------------------------------------------------
def checkpoint_line(checkpoint: Checkpoint) -> str:
    """The confirmation `%%remember` prints: what, where, and the id to find it again."""
    where = f"memory/{checkpoint.date}.md" if checkpoint.date else "the raw log"
    if checkpoint.line:
        where += f":{checkpoint.line}"
    tags = " " + " ".join(f"#{tag}" for tag in checkpoint.tags) if checkpoint.tags else ""
    what = f"{checkpoint.title!r} [{checkpoint.type}]{tags}"
    return f"remembered {what} in {where} (id {checkpoint.id})"


# --- compaction, status, Layer 1, topics ------------------------------------------------------
def report_text(report: CompactionReport) -> str:
    """One line for a pass (plus one per note: a skipped source, a repair, a fallback)."""
    if not report.built and not report.fixed and not report.reopened:
        line = "compaction: up to date, nothing to rebuild"
    else:
        line = (
            f"compaction: {len(report.built)} built, {len(report.fixed)} fixed, "
            f"{len(report.reopened)} reopened, {len(report.summarized)} summarized "
            f"in {report.seconds:.1f}s"
        )
    return "\n".join([line, *(f"  note: {error}" for error in report.errors)])


def _tokens(used: int, budget: int) -> str:
    return f"{used:,} / {budget:,} tokens"


def layer1_line(layer1: Layer1) -> str:
    """Layer 1 against its budget on one line, part by part."""
    used = sum(part.tokens for part in layer1.parts)
    parts = "  ".join(
        f"{part.name} {part.tokens:,}/{part.budget:,}{' (cut)' if part.truncated else ''}"
        for part in layer1.parts
    )
    return f"Layer 1: {_tokens(used, layer1.total_budget)}  [{parts}]"


def budget_table(layer1: Layer1) -> str:
    """Each Layer 1 part's tokens against its budget, as an aligned text table."""
    rows = [("part", "file", "tokens", "budget", "fill")]
    for part in layer1.parts:
        fill = "-" if part.budget <= 0 else f"{part.fill:.0%}"
        mark = " cut" if part.truncated else ("" if part.exists else " (no file)")
        rows.append((part.name, part.path, f"{part.tokens:,}", f"{part.budget:,}", fill + mark))
    used = sum(part.tokens for part in layer1.parts)
    total_fill = f"{used / layer1.total_budget:.0%}" if layer1.total_budget else "-"
    rows.append(("total", "", f"{used:,}", f"{layer1.total_budget:,}", total_fill))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for row in rows:
        left = f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}"
        right = f"{row[2]:>{widths[2]}}  {row[3]:>{widths[3]}}  {row[4]}"
        lines.append(f"{left}  {right}".rstrip())
    lines.append(f"prompt block: {layer1.total_tokens:,} tokens (after cuts, with headers)")
    return "\n".join(lines)


def status_text(status: Status) -> str:
    nodes = ", ".join(f"{count} {level}" for level, count in status.nodes.items())
    return "\n".join(
        [
            f"hipo memory at {status.root} (search: {status.backend})",
            f"  raw logs: {counted(status.raw_days, 'day')}, "
            f"{counted(status.checkpoints, 'checkpoint')}",
            f"  nodes: {nodes or 'none yet'}; {status.dirty_nodes} to rebuild",
            f"  topics: {status.topics}",
            f"  Layer 1: {_tokens(status.layer1_tokens, status.layer1_budget)}",
            f"  last compaction: {status.last_compaction or 'never'}",
            *([f"  {status.semantic}"] if status.semantic else []),
        ]
    )


def topics_text(topics: Sequence[Topic]) -> str:
    if not topics:
        return "no topics yet: %%remember something, then %hipo compact"
    return "\n".join(topic.line() for topic in topics)


def startup_text(
    root: Path,
    report: CompactionReport | None,
    layer1: Layer1 | None,
    topics: int,
    error: str | None = None,
) -> str:
    """The one screen `%load_ext hipo` shows: where, what was compacted, Layer 1, topics."""
    lines = [f"hipo: memory at {root}"]
    if error:
        lines.append(f"  could not start: {error}")
        lines.append("  fix it (e.g. %config Hipo.root = '...'), then %hipo compact")
        return "\n".join(lines)
    if report is not None:
        lines.extend("  " + line.strip() for line in report_text(report).splitlines())
    if layer1 is not None:
        lines.append("  " + layer1_line(layer1))
    lines.append(f"  topics: {topics}")
    return "\n".join(lines)


# --- Claude calls ----------------------------------------------------------------------------
def claude_line(inject: bool, model: str, summarizer: str) -> str:
    """The line `%load_ext hipo` adds about LLM calls."""
    state = "injected into every anthropic call" if inject else "not injected (%hipo inject on)"
    return f"  Claude: Layer 1 {state}; %%ask model {model}; summaries {summarizer}"


def usage_line(usage: Any, model: str) -> str:
    """One line under a %%ask reply: input, output, cache-read and cache-write tokens."""

    def number(name: str) -> str:
        value = getattr(usage, name, None)
        return f"{value:,}" if isinstance(value, int) else "-"

    return (
        f"tokens: input {number('input_tokens')} · output {number('output_tokens')} · "
        f"cache read {number('cache_read_input_tokens')} · "
        f"cache write {number('cache_creation_input_tokens')}  ({model})"
    )


def cache_text(usage: Any, model: str, layer1_tokens: int, minimum: int) -> str:
    """`%hipo budget`'s prompt-cache lines: whether Layer 1 reaches the model's minimum
    cacheable prefix, and the cache read and write tokens the API reported for the last call."""
    verdict = (
        "cached (a breakpoint ends it)"
        if layer1_tokens >= minimum
        else "under the minimum, so not cached until the memory grows"
    )
    lines = [
        f"prompt cache ({model}: minimum {minimum:,} tokens): Layer 1 block ~{layer1_tokens:,} "
        f"tokens, {verdict}"
    ]
    if usage is None:
        lines.append("last Claude call: none yet in this kernel")
    else:

        def number(name: str) -> str:
            value = getattr(usage, name, None)
            return f"{value:,}" if isinstance(value, int) else "-"

        lines.append(
            f"last Claude call: cache read {number('cache_read_input_tokens')} · cache write "
            f"{number('cache_creation_input_tokens')} · input {number('input_tokens')} tokens"
        )
    return "\n".join(lines)


def conversation_text(conversation: Any, path: str, window: int) -> str:
    """`%ask status`: the three zones and the compaction log of the conversation."""
    active = sum(turn.tokens for turn in conversation.active)
    lines = [
        f"conversation {path}: {conversation.turns} turns, "
        f"live {conversation.live_tokens():,} / {window:,} tokens",
        f"  anchor: {count_tokens(conversation.anchor):,} tokens (sha256 "
        f"{conversation.anchor_hash or '-'})",
        f"  summary: {count_tokens(conversation.summary):,} tokens, "
        f"{conversation.folded} turns folded",
        f"  active: {len(conversation.active)} turns, {active:,} tokens",
    ]
    for event in conversation.compactions[-5:]:
        lines.append(f"  {event.at} {event.line()}")
    return "\n".join(lines)


class ReplyView:
    """A reply as it streams in: Markdown updated in place in a notebook (a few times a
    second, not per token), plain text in a terminal."""

    UPDATE_SECONDS = 0.1

    def __init__(self, shell: Any) -> None:
        self.text = ""
        self._in_kernel = getattr(shell, "kernel", None) is not None
        self._handle: Any = None
        self._last = 0.0

    def add(self, chunk: str) -> None:
        self.text += chunk
        if not self._in_kernel:
            sys.stdout.write(chunk)
            sys.stdout.flush()
            return
        now = time.monotonic()
        if self._handle is None:
            self._handle = self._show()
        elif now - self._last >= self.UPDATE_SECONDS:
            self._handle.update(self._markdown())
        else:
            return
        self._last = now

    def close(self) -> None:
        if not self._in_kernel:
            if self.text and not self.text.endswith("\n"):
                print()
        elif self._handle is None:
            if self.text:
                self._show()
        else:
            self._handle.update(self._markdown())

    def _markdown(self) -> Any:
        return Markdown(self.text)

    def _show(self) -> Any:
        return display(self._markdown(), display_id=True)


def counted(number: int, noun: str) -> str:
    """ "1 day", "2 days", "1,204 checkpoints"."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
