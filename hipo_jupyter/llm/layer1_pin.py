"""Layer 1 for the prompt cache: what a session's checkpoints change goes after the breakpoint.

Layer 1 is the first system block of every call, and the API caches the prefix up to its
breakpoint only while those bytes stay the same. Since each checkpoint now updates ROOT.md
at once (`memory.root_update`), and a `%%ask` cell's write-back writes one, an unpinned Layer 1
would change between every two calls and the cache would never be read.

So a kernel pins ROOT.md as it first sent it: the cached Layer 1 block keeps that text, and
the ROOT.md lines written since (new Active Context lines, new or changed Topics Index lines)
go in a small block of their own after the breakpoints (`FRESH_PREAMBLE` says they are newer
than the block above). The working files (SCRATCHPAD.md and the others) are not pinned: an edit
to them is the user's and goes into the cached block as before. The pin is dropped, and the
next call caches Layer 1 afresh, when a compaction pass rewrites ROOT.md, when the memory root
changes, when the fresh lines outgrow `MAX_FRESH_TOKENS`, or when the memory's forget ledger
moved (a forget or a correction, by any process: the pinned text may hold what was forgotten
or superseded, and must not be sent again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from hipo_jupyter.memory import Layer1
from hipo_jupyter.memory.tree import count_tokens

MAX_FRESH_TOKENS = 600
"""Fresh lines beyond this are folded into a new cached Layer 1 (one cache write, then reads)."""

FRESH_PREAMBLE = (
    "Layer 1 updates written during this session, newer than the Layer 1 block above: these "
    "lines of memory/ROOT.md are new or replace the lines of the same topic or date above."
)


@dataclass(frozen=True)
class PromptLayer1:
    """Layer 1 as a call sends it: `stable` in the cached block, `fresh` after the breakpoints
    ("" when nothing changed since the pin)."""

    stable: str
    fresh: str = ""

    @property
    def text(self) -> str:
        """Both, as one text (for counting)."""
        return self.stable + (f"\n{self.fresh}\n" if self.fresh else "")


class Layer1Pin:
    """ROOT.md's text as a kernel's calls first sent it, per memory root."""

    def __init__(self, max_fresh_tokens: int = MAX_FRESH_TOKENS) -> None:
        self.max_fresh_tokens = max_fresh_tokens
        self._pinned: tuple[Path, str] | None = None
        self._generation = 0  # the forget ledger's, when pinned

    def reset(self) -> None:
        """Cache Layer 1 afresh at the next call (a compaction pass rewrote ROOT.md)."""
        self._pinned = None

    def split(self, root: Path, layer1: Layer1, generation: int = 0) -> PromptLayer1:
        """`layer1` with ROOT.md as pinned, and ROOT.md's lines written since as `fresh`;
        `generation` is the forget ledger's now (`Memory.forgotten`)."""
        if generation != self._generation:
            self._pinned, self._generation = None, generation
        index = next((i for i, part in enumerate(layer1.parts) if part.name == "ROOT"), None)
        if index is None:
            return PromptLayer1(layer1.text)
        current = layer1.parts[index].text
        if self._pinned is None or self._pinned[0] != root:
            self._pinned = (root, current)
            return PromptLayer1(layer1.text)
        pinned = self._pinned[1]
        if current == pinned:
            return PromptLayer1(layer1.text)
        known = set(pinned.splitlines())
        fresh = "\n".join(
            line for line in current.splitlines() if line.strip() and line not in known
        )
        if fresh and count_tokens(fresh) > self.max_fresh_tokens:
            self._pinned = (root, current)
            return PromptLayer1(layer1.text)
        parts = list(layer1.parts)
        parts[index] = replace(parts[index], text=pinned)
        return PromptLayer1(replace(layer1, parts=tuple(parts)).text, fresh)
