"""Rules with triggers: the procedural memory kept in feedback checkpoints.

A feedback checkpoint with a `- trigger:` field is a rule: "when <trigger>, <rule>". Its rule
text is the `- rule:` field (else `- how-to-apply:`, else the title). The rules form a sparse
index that goes into Layer 1 every session, one line each,

    - before a deploy -> never deploy on a Friday -> memory/2026-03-12.md#L14

ordered by trigger, so an agent sees which rules fire without loading any checkpoint; the full
text stays in the raw log, read on demand through the pointer. A newer rule with the same
trigger (compared without case and extra spaces) supersedes the older one: the older stays in
its raw log (nothing is rewritten) and is listed under "Superseded" at the end of the index,
which is the part a tight budget cuts first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..disk.checkpoint import Checkpoint
from ..disk.store import raw_log_path

RULES_HEADER = "Rules (trigger -> rule -> checkpoint); read the checkpoint for why and how."


@dataclass(frozen=True)
class Rule:
    trigger: str
    rule: str
    file: str  # raw log, relative to the root
    line: int  # 1-based line of the checkpoint heading
    date: str
    id: str | None = None
    title: str = ""
    superseded_by: str | None = None  # pointer of the newer rule with the same trigger

    @property
    def pointer(self) -> str:
        return f"{self.file}#L{self.line}"

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    def line_text(self) -> str:
        text = f"- {self.trigger} -> {self.rule} -> {self.pointer}"
        if self.superseded_by:
            text += f" (superseded by {self.superseded_by})"
        return text


def trigger_key(trigger: str) -> str:
    """Triggers compare without case or extra spaces: `Before a  deploy` = `before a deploy`."""
    return " ".join(trigger.split()).casefold()


def rule_of(checkpoint: Checkpoint) -> Rule | None:
    """The rule a checkpoint states, or None when it is not a feedback checkpoint with a trigger."""
    trigger = checkpoint.field("trigger")
    if checkpoint.type != "feedback" or not trigger or not trigger.strip():
        return None
    text = checkpoint.field("rule") or checkpoint.field("how-to-apply") or checkpoint.title
    date = checkpoint.date or ""
    return Rule(
        trigger=" ".join(trigger.split()),
        rule=" ".join(text.split()),
        file=raw_log_path(date),
        line=checkpoint.line,
        date=date,
        id=checkpoint.id,
        title=checkpoint.title,
    )


def collect_rules(checkpoints: Iterable[Checkpoint]) -> list[Rule]:
    """Every rule in `checkpoints` (given oldest first, in file order), the newest of each
    trigger active and the older ones marked superseded; active rules first, each group
    ordered by trigger, then newest first."""
    return mark_superseded([rule for rule in map(rule_of, checkpoints) if rule is not None])


def mark_superseded(found: list[Rule]) -> list[Rule]:
    """`found` (oldest first) with each trigger's older rules marked superseded by its newest,
    ordered as `collect_rules` gives them. Apart from it so rules kept in the catalog's row
    cache are ordered exactly as rules read from the raw logs."""
    newest: dict[str, Rule] = {}
    for rule in found:  # later in the list is newer: a later day, or later in the same log
        newest[trigger_key(rule.trigger)] = rule
    marked = []
    for rule in found:
        latest = newest[trigger_key(rule.trigger)]
        if latest is not rule:
            rule = replace(rule, superseded_by=latest.pointer)
        marked.append(rule)
    order = {id(rule): n for n, rule in enumerate(marked)}
    return sorted(marked, key=lambda r: (not r.active, trigger_key(r.trigger), -order[id(r)]))


def rules_index_text(rules: list[Rule]) -> str:
    """The Layer 1 part: the active rules, then the superseded ones; "" without rules."""
    if not rules:
        return ""
    lines = [RULES_HEADER, *(rule.line_text() for rule in rules if rule.active)]
    superseded = [rule.line_text() for rule in rules if not rule.active]
    if superseded:
        lines += ["", "Superseded (kept in the raw log):", *superseded]
    return "\n".join(lines) + "\n"
