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

Who wrote a rule decides whether it is in force (`disk/trust`): only the user's own words are.
A rule stated by anyone else (an agent through MCP or the memory tool, Claude's write-back, an
import) is a *proposal*: it is kept in its raw log and listed apart (`proposals`, with who
proposed it), but it is in no rules index, supersedes nothing and is superseded by nothing.
The user accepts one by writing it again in their own name: a feedback checkpoint that restates
its trigger and rule with `- accepts: <the proposal's id>` (`acceptance_body`); that checkpoint
is the rule in force, and the proposal it names is no longer listed. Everything here is derived
from the raw logs, which stay append-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..disk.checkpoint import Checkpoint, pick_by_id
from ..disk.provenance import provenance_text
from ..disk.store import raw_log_path
from ..disk.trust import ACCEPTS_FIELD, RULE_IN_FORCE, USER, may, writer_of, writer_of_provenance
from ..errors import HipoError

RULES_HEADER = "Rules (trigger -> rule -> checkpoint); read the checkpoint for why and how."
PROPOSALS_HEADER = "Proposed rules (not in force until you accept one: {accept} ID):"


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
    writer: str = USER  # who wrote it (`disk/trust`): only the user's rules are in force
    provenance: str = ""  # where it came from, as `provenance_text` says it
    accepts: str | None = None  # the id of the proposal this rule (the user's) accepts

    @property
    def pointer(self) -> str:
        return f"{self.file}#L{self.line}"

    @property
    def in_force(self) -> bool:
        """Whether its writer may make a rule in force; else it is a proposal."""
        return may(self.writer, RULE_IN_FORCE)

    @property
    def active(self) -> bool:
        return self.in_force and self.superseded_by is None

    def line_text(self) -> str:
        text = f"- {self.trigger} -> {self.rule} -> {self.pointer}"
        if self.superseded_by:
            text += f" (superseded by {self.superseded_by})"
        return text

    def proposal_text(self) -> str:
        """A proposal's line: `- [ID] trigger -> rule (proposed by MCP) -> pointer`."""
        who = f"proposed by {self.provenance}" if self.provenance else f"proposed by {self.writer}"
        named = self.id or "no ID: write it yourself to make it a rule"
        return f"- [{named}] {self.trigger} -> {self.rule} ({who}) -> {self.pointer}"


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
        writer=writer_of(checkpoint),
        provenance=provenance_text(checkpoint),
        accepts=checkpoint.field(ACCEPTS_FIELD),
    )


def collect_rules(checkpoints: Iterable[Checkpoint]) -> list[Rule]:
    """Every rule in force in `checkpoints` (given oldest first, in file order), the newest of
    each trigger active and the older ones marked superseded; active rules first, each group
    ordered by trigger, then newest first. Proposals are left out (`proposals`)."""
    return mark_superseded([rule for rule in map(rule_of, checkpoints) if rule is not None])


def mark_superseded(found: list[Rule]) -> list[Rule]:
    """The rules in force of `found` (oldest first) with each trigger's older rules marked
    superseded by its newest, ordered as `collect_rules` gives them. Apart from it so rules
    kept in the catalog's row cache are ordered exactly as rules read from the raw logs. A
    proposal is not among them: it neither supersedes nor is superseded."""
    found = [rule for rule in found if rule.in_force]
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


def proposals(found: list[Rule]) -> list[Rule]:
    """The proposals of `found` (all rules, oldest first) that the user has not accepted yet,
    newest first: a rule in force that `accepts` a proposal's id settles it."""
    accepted = {rule.accepts for rule in found if rule.in_force and rule.accepts}
    waiting = [rule for rule in found if not rule.in_force and rule.id not in accepted]
    return waiting[::-1]


def proposals_text(waiting: list[Rule], accept: str = "hipo rules accept") -> str:
    """The proposals as `hipo rules` and `%hipo rules` list them after the rules; "" without."""
    if not waiting:
        return ""
    lines = [PROPOSALS_HEADER.format(accept=accept), *(rule.proposal_text() for rule in waiting)]
    return "\n".join(lines) + "\n"


def find_proposal(found: list[Rule], wanted: str, *, accepted_via: str) -> Rule:
    """The proposal of `found` (all rules) whose id is `wanted`, or ends with it (its random
    part, at least MIN_ID_CHARS characters, when only one id does), for the front end
    `accepted_via` to accept. HipoError, one line, when that front end is not the user's, or
    for an id that names no proposal, one already accepted or a rule already in force."""
    if not may(writer_of_provenance(accepted_via), RULE_IN_FORCE):
        raise HipoError(f"only the user accepts a rule, not {accepted_via!r}")
    rule = pick_by_id(
        found,
        wanted,
        plural="rules",
        none="accept needs the ID of a proposed rule (hipo rules lists them)",
        unknown="no proposed rule has the ID {wanted!r} (hipo rules lists them)",
    )
    if rule.in_force:
        raise HipoError(f"{rule.id} is already a rule in force (written by you)")
    if rule.id in {r.accepts for r in found if r.in_force}:
        raise HipoError(f"the proposed rule {rule.id} is already accepted")
    return rule


def acceptance_body(proposal: Rule) -> str:
    """The body of the user's checkpoint that accepts `proposal`: its trigger and rule in the
    user's name, the proposal's id, and where it came from."""
    lines = [
        f"- trigger: {proposal.trigger}",
        f"- rule: {proposal.rule}",
        f"- {ACCEPTS_FIELD}: {proposal.id}",
        f"- why: accepted a rule proposed by {proposal.provenance or proposal.writer} "
        f"({proposal.pointer})",
    ]
    return "\n".join(lines)


def accepted_text(checkpoint: Checkpoint) -> str:
    """What accepting a proposal says (`hipo rules accept`, `%hipo rules accept`): the rule now
    in force and where the user's checkpoint holding it is."""
    return (
        f"accepted {checkpoint.field(ACCEPTS_FIELD)}: {checkpoint.field('trigger')} -> "
        f"{checkpoint.field('rule')} is now your rule "
        f"({raw_log_path(checkpoint.date or '')}#L{checkpoint.line})"
    )
