"""Who wrote it decides what it may do: a checkpoint's provenance mapped to its writer, and
the one table of what each writer may do.

Every checkpoint records the front end that wrote it (`via`, see `provenance`). That names one
of five writers:

- the user: `%%remember` (magic), `hipo remember` (cli), the sidebar (sidebar), and a checkpoint
  that records no provenance at all (a hand-written log, one Hipocampus wrote, one written
  before provenance existed): whoever could write the raw log by hand is the user;
- Claude: the write-back of the Claude calls a cell made (write-back);
- agents: `hipo mcp` (mcp), Claude's memory tool (memory-tool; before it named itself, its
  checkpoints recorded only `notebook=memory tool`), a Claude Code session's turns written by
  its hooks (claude-code), and any front end this table does not
  know, which is not known to be the user;
- imports: `hipo import` of another tool's conversations (import);
- teammates: rows of the team database (never a checkpoint of this folder's logs).

`may(writer, power)` is the one answer every surface asks; the table is `POWERS`, and
docs/RELIABILITY.md shows it with the test of each cell. What the others write is kept and
searchable like the user's; it just cannot steer: a rule from anyone but the user is a
proposal until the user accepts it (`views/rules`). What a writer weighs follows from it too:
Claude's write-backs (`writer_of(c) == CLAUDE`) are its task log, not the user's notes: no
topic of their own, one grouped line in ROOT's Active Context and the sidebar's recent list,
and below the user's notes at equal relevance (`recall/ranking`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .checkpoint import Checkpoint
from .provenance import (
    MEMORY_TOOL_NOTEBOOK,
    VIA_CLAUDE_CODE,
    VIA_CLI,
    VIA_IMPORT,
    VIA_MAGIC,
    VIA_MCP,
    VIA_MEMORY_TOOL,
    VIA_SIDEBAR,
    VIA_WRITE_BACK,
)

USER = "user"
CLAUDE = "claude"
AGENT = "agent"
IMPORT = "import"
TEAMMATE = "teammate"
WRITERS = (USER, CLAUDE, AGENT, IMPORT, TEAMMATE)

RULE_IN_FORCE = "make a rule in force"
LAYER1_FILES = "write Layer 1's working files"
LIVE_HTML = "be shown as live HTML"
DELETE_TEAM_ROWS = "delete team rows"
FORGET = "forget"
REPLACE_USER_NOTES = "replace the user's own notes"
REPLACE_AGENT_NOTES = "replace what an agent wrote"
POWERS_LISTED = (
    RULE_IN_FORCE, LAYER1_FILES, LIVE_HTML, DELETE_TEAM_ROWS, FORGET, REPLACE_USER_NOTES,
    REPLACE_AGENT_NOTES,
)  # fmt: skip

POWERS: dict[str, frozenset[str]] = {
    # The user's own words make rules (and a later rule of theirs supersedes an earlier one),
    # forget, and delete the team rows this folder owns (never another folder's).
    USER: frozenset({
        RULE_IN_FORCE, LAYER1_FILES, DELETE_TEAM_ROWS, FORGET, REPLACE_USER_NOTES,
        REPLACE_AGENT_NOTES,
    }),  # fmt: skip
    # Claude's memory tool keeps its working notes in SCRATCHPAD.md, WORKING.md and
    # TASK-QUEUE.md, as the protocol has an agent do; they reach a prompt fenced as data.
    # An agent corrects what an agent wrote; its correction of the user's words is a proposal.
    AGENT: frozenset({LAYER1_FILES, REPLACE_AGENT_NOTES}),
    CLAUDE: frozenset(),
    IMPORT: frozenset(),
    TEAMMATE: frozenset(),
}
"""writer -> what it may do. Nothing is ever shown as live HTML, whoever wrote it."""

WRITER_OF_VIA = {
    VIA_MAGIC: USER,
    VIA_CLI: USER,
    VIA_SIDEBAR: USER,
    VIA_WRITE_BACK: CLAUDE,
    VIA_MCP: AGENT,
    VIA_MEMORY_TOOL: AGENT,
    VIA_CLAUDE_CODE: AGENT,
    VIA_IMPORT: IMPORT,
}


def writer_of_provenance(via: str | None, notebook: str | None = None) -> str:
    """The writer a checkpoint's `via` (and, for the memory tool's older checkpoints, its
    `notebook`) names; a front end not in `WRITER_OF_VIA` is an agent."""
    if not via:
        return AGENT if notebook == MEMORY_TOOL_NOTEBOOK else USER
    return WRITER_OF_VIA.get(via, AGENT)


def writer_of(checkpoint: Checkpoint) -> str:
    """Who wrote `checkpoint` (one of WRITERS), from its provenance."""
    return writer_of_provenance(checkpoint.via, checkpoint.notebook)


DELIBERATE_VIAS = (VIA_CLI, VIA_SIDEBAR)
"""The user's front ends whose every write is typed for this very write: a command line, the
sidebar's form. A `%%remember` cell may be a notebook run again, so it is not one of them."""


def says_again(via: str | None) -> bool:
    """Whether a write through `via` is the user deliberately saying again what they forgot:
    the user's (`may(..., FORGET)`: who may forget may take a forget back) and typed for this
    write (`DELIBERATE_VIAS`). Any other writer's copy of forgotten content is kept out."""
    return bool(via) and via in DELIBERATE_VIAS and may(writer_of_provenance(via), FORGET)


def may(writer: str, power: str) -> bool:
    """Whether `writer` may do `power` (see POWERS); an unknown writer may do nothing."""
    return power in POWERS.get(writer, frozenset())


REPLACES = "replaces"
PROPOSES = "proposes"
ACCEPTS_FIELD = "accepts"  # the `- accepts: ID` field of the user's acceptance of a proposal


def settled_away(checkpoints: Sequence[Checkpoint]) -> set[str]:
    """The ids among `checkpoints`' neighbours that a later word settled: replaced by a
    correction, or a proposal the user accepted (the acceptance stands for it). A list that
    shows each thing once (the sidebar's recent list, ROOT.md's Active Context) leaves them
    out; recall keeps them for `--all`."""
    settled = {c.replaces for c in checkpoints if c.replaces}
    for checkpoint in checkpoints:
        accepted = checkpoint.field(ACCEPTS_FIELD)
        if accepted and may(writer_of(checkpoint), RULE_IN_FORCE):
            settled.add(accepted)
    return settled


def correction(writer: str, replaced: Checkpoint) -> str | None:
    """What `writer`'s correction of `replaced` is: REPLACES (in force at once: `replaced` is
    superseded), PROPOSES (an agent's correction of what it may not replace, kept and listed
    until the user accepts it) or None (this writer corrects nothing)."""
    owner = writer_of(replaced)
    power = REPLACE_USER_NOTES if owner == USER else REPLACE_AGENT_NOTES
    if may(writer, power) and (owner in (USER, AGENT) or writer == USER):
        return REPLACES
    return PROPOSES if writer == AGENT else None


def trust_table() -> list[tuple[str, dict[str, bool]]]:
    """(writer, {power: allowed}) for every writer and power, in the order they are listed:
    what docs/RELIABILITY.md shows (a test holds the two together)."""
    return [(writer, {power: may(writer, power) for power in POWERS_LISTED}) for writer in WRITERS]
