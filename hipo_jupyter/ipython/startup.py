"""What the session-start ritual of `%load_ext hipo` found: shown once when the extension loads,
and read later by `%hipo check` (was Layer 1 there before the first LLM call?).

Its own module because both the session, which fills it, and the write-back, which checks
against it, need it, and neither should import the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hipo_jupyter.memory import CompactionReport, Layer1


@dataclass
class Startup:
    """What the session-start ritual found: shown once by `%load_ext hipo`."""

    root: Path
    report: CompactionReport | None = None
    layer1: Layer1 | None = None
    topics: int = 0
    error: str | None = None  # a HipoError that stopped the ritual, as one line
    owed: int = 0  # summaries the model writes in the background after the pass
