"""Layer 1: the four small files that go into every prompt, each held to a token budget.

ROOT.md is the topic index of everything remembered; SCRATCHPAD.md, WORKING.md and TASK-QUEUE.md
are the working files a user or an agent keeps by hand (Hipocampus's hot memory). They are read
as they are on disk every time, so an edit shows up in the next prompt. The lines an agent
added to one (through Claude's memory tool: `tree/line_writers`) are shown as the agent's
(`mark_writers`), so none reads as the user's rules. A file over its budget is
cut at a line boundary and flagged, never rewritten: shrinking the file itself is the compaction
chain's job (ROOT) or the user's (the working files).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import MemoryConfig
from ..disk.files import MAX_NODE_BYTES, UnsafeFileError, read_regular
from ..disk.nodes import parse_node
from ..disk.provenance import VIA_PHRASES
from ..disk.store import ROOT_FILE
from ..errors import MemoryRootError
from ..requests import storable
from .line_writers import UNKNOWN, LineWriters, line_key
from .tokens import count_tokens, truncate_to_tokens

log = logging.getLogger(__name__)

LAYER1_FILES: dict[str, str] = {
    "ROOT": ROOT_FILE,
    "SCRATCHPAD": "SCRATCHPAD.md",
    "WORKING": "WORKING.md",
    "TASK-QUEUE": "TASK-QUEUE.md",
}
"""Part name -> path relative to the memory root, in prompt order (the index first)."""

# As Hipocampus's spec/file-formats.md and templates/ give them, so a Hipocampus agent reading the
# folder finds what it expects. ROOT.md has no template: the compaction chain writes it.
TEMPLATES: dict[str, str] = {
    "SCRATCHPAD": """\
# SCRATCHPAD

Warm context for all active tasks. Update after every task. Keep under ~150 lines.

## Global
### Cross-Task Lessons
(none yet)
### Pending Decisions
(none)
""",
    "WORKING": """\
# Active Tasks

Hot context: 2-5 currently active tasks. Update after every task.

(no active tasks)

<!-- Format per task:
## [Task Name]
- Status: in-progress | blocked | completed
- Progress: brief description
-->
""",
    "TASK-QUEUE": """\
# Task Queue

## Queued
<!-- task description — context sufficient to start after session reset -->

## Completed
<!-- task description — date completed -->
""",
}

WRITTEN_BY = "[the lines below starting with > were written by {who} not the user: its notes]"
"""Put over each run of a working file's lines another writer than the user added."""

TRUNCATION_NOTE = "[hipo: {path} cut to its {budget}-token budget; the file has {tokens} tokens]"
"""Appended to a cut part so the model knows the file goes on (counted inside the budget)."""


@dataclass(frozen=True)
class Layer1Part:
    name: str  # "ROOT" | "SCRATCHPAD" | "WORKING" | "TASK-QUEUE"
    path: str  # relative to the memory root
    tokens: int  # tokens of the file as it is on disk
    budget: int
    text: str  # what goes into the prompt: the file, truncated to the budget if over
    truncated: bool
    exists: bool

    @property
    def fill(self) -> float:
        """tokens / budget: 1.0 is full, above it the part is cut. A zero budget is 0 or inf."""
        if self.budget > 0:
            return self.tokens / self.budget
        return 0.0 if self.tokens == 0 else float("inf")

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": self.path,
            "tokens": self.tokens,
            "budget": self.budget,
            "fill": self.fill if self.budget > 0 else None,
            "truncated": self.truncated,
            "exists": self.exists,
        }


@dataclass(frozen=True)
class Layer1:
    parts: tuple[Layer1Part, ...]
    counter: Callable[[str], int] = field(default=count_tokens, compare=False, repr=False)

    @property
    def total_tokens(self) -> int:
        """Tokens of the prompt block (`text`): the parts after truncation plus their headers."""
        return self.counter(self.text)

    @property
    def total_budget(self) -> int:
        return sum(part.budget for part in self.parts)

    @property
    def used_tokens(self) -> int:
        """The parts' own tokens as on disk (before cuts, without headers)."""
        return sum(part.tokens for part in self.parts)

    @property
    def over_budget(self) -> bool:
        """Any part over its own budget (one full part is not rescued by an empty one)."""
        return any(part.over_budget for part in self.parts)

    @property
    def text(self) -> str:
        """Each non-empty part under a "# <path>" header, in LAYER1_FILES order."""
        blocks = [
            f"# {part.path}\n\n{part.text.strip()}" for part in self.parts if part.text.strip()
        ]
        return "\n\n".join(blocks) + "\n" if blocks else ""

    def to_json(self) -> dict[str, object]:
        """The context budget as every front end's JSON gives it (the server's `/budget`, the
        sidebar, `hipo status --json`): each part against its budget, then the totals."""
        return {
            "parts": [part.to_json() for part in self.parts],
            "total_tokens": self.total_tokens,
            "total_budget": self.total_budget,
            "over_budget": self.over_budget,
        }


def assemble_layer1(
    root: Path, budgets: Mapping[str, int], count: Callable[[str], int] = count_tokens
) -> Layer1:
    """Read the Layer 1 files under `root` and fit each into its budget.

    ROOT.md enters without its frontmatter: `source-hash` and friends are bookkeeping for the
    chain, not knowledge, and `months-covered` would grow the prompt every month. `count` may be
    a cached counter (TokenCountCache.count). A part missing from `budgets` gets MemoryConfig's
    default. Missing files are empty parts;
    undecodable bytes become U+FFFD and an unreadable file is logged and left empty, because a
    damaged file must never stop the prompt from being built.
    """
    defaults = MemoryConfig().layer1_budgets
    parts = []
    for name, relative in LAYER1_FILES.items():
        budget = budgets.get(name, defaults[name])
        parts.append(_read_part(Path(root), name, relative, budget, count))
    return Layer1(parts=tuple(parts), counter=count)


def with_rules_index(
    layer1: Layer1,
    text: str,
    budgets: Mapping[str, int],
    count: Callable[[str], int] = count_tokens,
) -> Layer1:
    """Layer 1 with the feedback rules index (`rules.rules_index_text`) right after ROOT.md,
    within a budget of its own; unchanged when there are no rules."""
    if not text:
        return layer1
    budget = budgets.get("RULES", MemoryConfig().layer1_budgets["RULES"])
    part = generated_part("RULES", "rules", text, budget, count)
    return replace(layer1, parts=(layer1.parts[0], part, *layer1.parts[1:]))


def _read_part(
    root: Path, name: str, relative: str, budget: int, count: Callable[[str], int]
) -> Layer1Part:
    path = root / relative
    exists = os.path.lexists(path)
    text = ""
    if exists:
        try:
            text = read_regular(path, MAX_NODE_BYTES, relative).decode("utf-8", errors="replace")
        except (OSError, UnsafeFileError) as error:
            exists = False
            log.warning("hipo: cannot read %s, left out of Layer 1: %s", relative, error)
    if untouched_template(name, text):
        text = ""  # the template as `init` made it says nothing yet: 0 tokens in the prompt
    if name == "ROOT" and text.startswith("---"):
        text = parse_node(text).body + "\n"
    elif name != "ROOT" and text:
        text = mark_writers(text, LineWriters(root).of(relative, text))
    text = storable(text)  # control characters visible, as in checkpoints (a prompt sees it)
    return generated_part(name, relative, text, budget, count, exists=exists)


def untouched_template(name: str, text: str) -> bool:
    """Whether a working file is still its template as `init` wrote it (HTML comments and
    all, whitespace at the ends aside): it holds nothing the model should pay tokens for, so
    Layer 1 leaves it out. One edited character and it is the user's file, sent whole."""
    template = TEMPLATES.get(name)
    return template is not None and text.strip() == template.strip()


def mark_writers(text: str, writers: Mapping[str, str]) -> str:
    """A working file's text with the lines another writer than the user added (`writers`:
    line hash -> `via`, from `tree/line_writers`) shown as theirs: each run of them under a
    WRITTEN_BY line naming who, each of its lines behind `> `. Whatever shape such a line has
    (a `# rules` heading, a `- rule:` field, a Layer 1 part's header), it reads as quoted
    from that writer, never as the user's rules or words."""
    if not writers:
        return text
    out: list[str] = []
    current: str | None = None  # the writer of the run being shown, None: the user's lines
    for line in text.split("\n"):
        if not line.strip():  # a blank line neither starts nor ends a run
            out.append(line)
            continue
        via = writers.get(line_key(line))
        if via is None:
            current = None
            out.append(line)
            continue
        if via != current:
            out.append(WRITTEN_BY.format(who=_who(via)))
            current = via
        out.append(f"> {line}")
    return "\n".join(out)


def _who(via: str) -> str:
    if via == UNKNOWN:
        return "someone hipo cannot name (its record of who wrote which line is unreadable)"
    return f"{VIA_PHRASES.get(via, via or 'an unknown front end')}, an agent,"


def generated_part(
    name: str,
    relative: str,
    text: str,
    budget: int,
    count: Callable[[str], int] = count_tokens,
    *,
    exists: bool = True,
) -> Layer1Part:
    """A part from text held to its budget like a file: how derived parts (the rules index)
    enter Layer 1 with a budget of their own."""
    tokens = count(text)
    truncated = tokens > budget
    prompt_text = _fit(text, relative, tokens, budget) if truncated else text
    return Layer1Part(
        name=name,
        path=relative,
        tokens=tokens,
        budget=budget,
        text=prompt_text,
        truncated=truncated,
        exists=exists,
    )


def _fit(text: str, relative: str, tokens: int, budget: int) -> str:
    """The file cut to `budget` tokens, ending with TRUNCATION_NOTE when the note fits too."""
    note = TRUNCATION_NOTE.format(path=relative, budget=budget, tokens=tokens)
    room = budget - count_tokens("\n" + note)
    while room > 0:
        kept = truncate_to_tokens(text, room)
        if not kept.endswith("\n"):
            kept += "\n"
        fitted = kept + note
        excess = count_tokens(fitted) - budget
        if excess <= 0:
            return fitted
        room -= excess  # tokens merge differently across the join; give back what they took
    return truncate_to_tokens(text, budget)


def write_templates(root: Path) -> list[str]:
    """Create whichever of SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md is missing; returns the
    created paths (relative to `root`). An existing file, even empty, is never touched."""
    root = Path(root)
    if not root.is_dir():
        raise MemoryRootError(f"memory root {root} is not a folder")
    created = []
    for name, template in TEMPLATES.items():
        relative = LAYER1_FILES[name]
        if _create_new(root / relative, template):
            created.append(relative)
    return created


def _create_new(path: Path, content: str) -> bool:
    """Write `content` to `path` atomically unless `path` exists; True if we created it.

    The content goes to a temp file in the same folder first, so a reader never sees half a
    file. It is then hard-linked into place, which fails if another kernel created the file
    meanwhile, so nobody's file is overwritten; where hard links are unsupported, os.replace
    after a last existence check is the fallback.
    """
    if os.path.lexists(path):
        return False
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
        except OSError:
            if os.path.lexists(path):
                return False
            os.replace(temp, path)
        return True
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
