"""Correcting: a checkpoint written to replace another (`hipo remember --replaces ID`,
`%%remember --replaces ID`, the MCP remember tool's `replaces`, the sidebar's Correct).

Who may is `disk/trust.correction`: the user corrects anything, an agent what an agent wrote;
an agent's correction of the user's words is written as a proposal (`proposes=ID`), listed by
`proposals` and made the user's own by `accept` (the same text, written by the user with
`replaces=ID`). A correction in force supersedes the one it names: recall and contexts show
the correction, the replaced checkpoint only when asked for (`recall/corrections`). Nothing is
rewritten: the replaced checkpoint stays in its raw log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any, Protocol

from ..disk.checkpoint import Checkpoint, render
from ..disk.provenance import provenance_text
from ..disk.trust import REPLACES, USER, correction, writer_of_provenance
from ..errors import HipoError
from ..forget import drop_nodes, find_checkpoint
from ..requests import CheckpointDraft


class CorrectingMemory(Protocol):
    """What a correction reads and writes: every checkpoint, and the one way a checkpoint is
    written. The engine's `Memory` is one; this room never imports the facade above it."""

    def _all_checkpoints(self) -> list[Checkpoint]: ...

    def write_checkpoint(
        self,
        draft: CheckpointDraft,
        *,
        notebook: str | None = None,
        cell: str | None = None,
        via: str | None = None,
    ) -> Checkpoint: ...

    def compact(self) -> Any: ...


def correct(
    memory: CorrectingMemory,
    replaced_id: str,
    title: str,
    body: str,
    *,
    via: str,
    type: str | None = None,
    tags: str | Sequence[str] | None = None,
    on: str | date | None = None,
    notebook: str | None = None,
    cell: str | None = None,
) -> Checkpoint:
    """Write the correction of `replaced_id` (title and type default to the replaced one's),
    as `remember` reads `type`, `tags` and `on`, from `notebook` and `cell` when a magic wrote
    it; HipoError, one line, for an unknown id or a writer that corrects nothing."""
    replaced = find_checkpoint(memory._all_checkpoints(), replaced_id)
    kind = correction(writer_of_provenance(via), replaced)
    if kind is None:
        raise HipoError(f"{via!r} may not correct a checkpoint")
    draft = CheckpointDraft.parse(
        title.strip() or replaced.title, body,
        type=type or (None if title.strip() else replaced.type), tags=tags, on=on,
    )  # fmt: skip
    draft = replace(draft, **{kind: replaced.id})
    written = memory.write_checkpoint(draft, via=via, notebook=notebook, cell=cell)
    if kind == REPLACES:
        reach_the_tree(memory, written, replaced.date)
    return written


def reach_the_tree(memory: CorrectingMemory, written: Checkpoint, replaced_day: str | None) -> None:
    """A correction in force reaches the tree: the nodes over the replaced checkpoint's day
    (its daily, weekly and monthly, which quoted it) and ROOT.md are built again, where it
    now reads `- replaced-by: ID` (`tree/chain.without_superseded`), so no node brings the
    old text into a context unmarked. A tree that cannot be rebuilt now is left to the next
    pass (`hipo check` says so); the correction is written either way."""
    if written.repeated or not written.replaces or not replaced_day:
        return
    with contextlib.suppress(HipoError, OSError, ValueError):
        drop_nodes(memory, date.fromisoformat(replaced_day), [])  # type: ignore[arg-type]
        memory.compact()


def proposals(memory: CorrectingMemory) -> list[Checkpoint]:
    """Corrections agents proposed to the user's words and the user has not accepted yet."""
    everything = memory._all_checkpoints()
    accepted = {(cp.replaces, cp.title) for cp in everything if cp.replaces}
    return [
        cp for cp in everything
        if cp.proposes and (cp.proposes, cp.title) not in accepted and cp.id
    ]  # fmt: skip


def accept(memory: CorrectingMemory, proposal_id: str, *, via: str) -> Checkpoint:
    """The user's own correction restating the proposal `proposal_id`: then it is in force."""
    if writer_of_provenance(via) != USER:
        raise HipoError(f"only the user accepts a proposed correction, not {via!r}")
    waiting = proposals(memory)
    proposal = find_checkpoint(waiting, proposal_id) if waiting else None
    if proposal is None or proposal.proposes is None:
        raise HipoError(f"no proposed correction has the ID {proposal_id!r}")
    body = render(replace(proposal, title="x", id=None, via=None, notebook=None, cell=None,
                          model=None, proposes=None, tags=()))  # fmt: skip
    body = body.split("\n", 1)[1]
    draft = CheckpointDraft.parse(proposal.title, body, type=proposal.type, tags=proposal.tags)
    written = memory.write_checkpoint(replace(draft, replaces=proposal.proposes), via=via)
    replaced = [cp for cp in memory._all_checkpoints() if cp.id == proposal.proposes]
    reach_the_tree(memory, written, replaced[0].date if replaced else None)
    return written


def proposals_text(waiting: list[Checkpoint], accept_with: str) -> str:
    """One line each: the proposal's id, what it corrects, its title and who proposed it."""
    if not waiting:
        return "no proposed corrections\n"
    lines = [f"Proposed corrections (not in force until you accept one: {accept_with} ID):"]
    for cp in waiting:
        lines.append(f"- {cp.id}: corrects {cp.proposes}: {cp.title} ({provenance_text(cp)})")
    return "\n".join(lines) + "\n"

