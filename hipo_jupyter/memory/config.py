"""The engine's settings in one plain dataclass; front ends fill it from traitlets or flags."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

TEAM_ENV = "HIPO_TEAM"


def resolve_team_url(explicit: str | None = None) -> str:
    """The team database URL, decided in one place: an explicit value (`c.Hipo.team_url`,
    `hipo --team-url`), else $HIPO_TEAM, else "" (no team: nothing of it is loaded)."""
    return (explicit or os.environ.get(TEAM_ENV, "")).strip()


def _default_layer1_budgets() -> dict[str, int]:
    # ROOT is ~100 lines (~3K tokens) in Hipocampus; the working files are kept short. RULES is
    # the index of feedback rules (rules.py), a part only while there are rules.
    return {"ROOT": 3000, "SCRATCHPAD": 1500, "WORKING": 1000, "TASK-QUEUE": 500, "RULES": 500}


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
    # Semantic recall (search/semantic.py). None: on when the model is installed (the default).
    semantic: bool | None = None
    embedding_model: str = ""  # another ONNX sentence model; its tokenizer.json beside it
    embedding_tokenizer: str = ""  # that model's tokenizer.json, when it is not beside it
    # Hybrid recall. fusion "score": a vector hit's cosine (over the best one, times
    # similarity_weight) is added to its BM25 relevance (over the best one) inside keyword recall,
    # so topics, the day's match, periods, names, recency and neighbours apply to both. "rrf":
    # the keyword and vector rankings (with topics and recency lists) by reciprocal rank fusion,
    # each list weighted (0 turns one off), with RRF's k. Weights measured on LoCoMo's dev set
    # (benchmarks/LOCOMO.md); score fusion was ahead at 2,000 tokens (0.843 against 0.826).
    fusion: str = "score"
    similarity_weight: float = 0.5
    keyword_weight: float = 1.0
    vector_weight: float = 0.3
    topics_weight: float = 0.3
    recency_weight: float = 0.0
    rrf_k: float = 60.0
    # Cosine under which a vector hit is no candidate: MiniLM puts unrelated texts at 0.0-0.2
    # and related ones from about 0.35, so a query about nothing in memory finds little (the
    # first few vector hits may go lower: RecallSettings.weak_vector_hits).
    min_similarity: float = 0.3
    # Team memory (issue 16, `hipo_jupyter/team/`): a PostgreSQL URL; "" keeps everything local.
    # `team_exclude` names checkpoint types or tags ("#tag" for a tag only) never sent.
    team_url: str = field(default="", repr=False)  # it may hold a password: never in a repr
    team_exclude: tuple[str, ...] = ("user",)
    team_author: str = ""  # "" : $HIPO_AUTHOR, $JUPYTERHUB_USER, else the login name
    # A SPARQL query's time limit (seconds) and row cap: a query past either is stopped with
    # one line of error, the graph's lock released (graph_run.py).
    sparql_timeout: float = 30.0
    sparql_max_rows: int = 100_000

    def __post_init__(self) -> None:
        """Every real-number setting finite: NaN passes every `<` check and makes each score
        NaN (and the JSON invalid); an infinity means nothing as a weight or a half-life."""
        for name in FLOAT_SETTINGS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, not {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {value!r}")


FLOAT_SETTINGS = (
    "recency_half_life_days",
    "similarity_weight",
    "keyword_weight",
    "vector_weight",
    "topics_weight",
    "recency_weight",
    "rrf_k",
    "min_similarity",
    "sparql_timeout",
)
