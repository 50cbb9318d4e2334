"""The engine's settings in one plain dataclass; front ends fill it from traitlets or flags."""

from __future__ import annotations

from dataclasses import dataclass, field


def _default_layer1_budgets() -> dict[str, int]:
    # ROOT is ~100 lines (~3K tokens) in Hipocampus; the working files are kept short.
    return {"ROOT": 3000, "SCRATCHPAD": 1500, "WORKING": 1000, "TASK-QUEUE": 500}


@dataclass
class MemoryConfig:
    """Thresholds in lines, budgets in tokens, half-life in days."""

    daily_threshold: int = 200
    weekly_threshold: int = 300
    monthly_threshold: int = 500
    root_budget: int = 3000
    layer1_budgets: dict[str, int] = field(default_factory=_default_layer1_budgets)
    recency_half_life_days: float = 30.0
    search_backend: str = "fts5"  # or "whoosh" (extra [whoosh])
    grace_days: int = 7  # weekly and monthly nodes fix 7 days after their period ends
