"""benchmarks/scale.py's synthetic memory: a year of checkpoints written through the real engine.

Deterministic for a seed: topics in play, identifiers, numbers and paths in the task fields,
feedback rules; `build_memory` writes them (`Memory.remember`, then one `compact()`) and
`reindex_copy` rebuilds a copy's index with another backend.
"""

from __future__ import annotations

import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from hipo_jupyter.memory import Memory, MemoryConfig  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Synthetic memory: ~10 topics in play at a time (plus a few cross-cutting #tags), each
# checkpoint with task fields full of identifiers, numbers and paths. By default the same 10
# topics cycle all year; `--topics 24` draws them from a larger pool whose active window moves
# one topic every two weeks, so old topics go quiet and new ones appear.


@dataclass(frozen=True)
class Theme:
    tag: str
    prefix: str  # ticket prefix, e.g. PRC-1042
    titles: tuple[str, ...]
    objects: tuple[str, ...]
    decisions: tuple[str, ...]
    metric: str


# fmt: off
THEMES = (
    Theme("pricing", "PRC", ("Competitor pricing", "Starter tier review", "Discount audit"),
          ("starter tier", "enterprise plan", "annual discount"),
          ("cut the starter tier by {p}%", "keep enterprise list price", "cap discounts at {p}%"),
          "conversion"),
    Theme("churn", "CHN", ("Churn cohort analysis", "Retention drivers", "Cancellation survey"),
          ("monthly cohorts", "cancellation reasons", "win-back emails"),
          ("target the month-3 cohort", "add an exit survey", "drop the win-back discount"),
          "churn rate"),
    Theme("forecast", "FCT", ("Revenue forecast", "Demand model refresh", "Forecast backtest"),
          ("ARIMA baseline", "prophet model", "holiday regressors"),
          ("switch to the prophet model", "retrain weekly", "widen intervals to {p}%"),
          "MAPE"),
    Theme("etl", "ETL", ("Nightly ETL failure", "Warehouse load tuning", "Schema migration"),
          ("orders table", "events stream", "dbt models"),
          ("partition orders by day", "retry loads {n} times", "pin dbt to 1.7"),
          "load time"),
    Theme("dashboard", "DSH", ("Sales dashboard", "KPI tiles redesign", "Dashboard latency"),
          ("regional KPIs", "pipeline funnel", "cache layer"),
          ("precompute the funnel", "drop the map tile", "refresh every {n} minutes"),
          "render time"),
    Theme("abtest", "EXP", ("Checkout A/B test", "Onboarding experiment", "Test power analysis"),
          ("checkout button", "onboarding flow", "sample size"),
          ("ship variant B", "extend the test {n} days", "stop for futility"),
          "uplift"),
    Theme("hiring", "HR", ("Data hiring plan", "Interview loop", "Take-home review"),
          ("analyst role", "ML engineer role", "take-home task"),
          ("open two analyst roles", "shorten the loop to {n} rounds", "pay for take-homes"),
          "time to hire"),
    Theme("security", "SEC", ("Access review", "Secrets rotation", "PII audit"),
          ("warehouse grants", "API tokens", "customer emails"),
          ("rotate tokens every {n} days", "mask emails in views", "remove stale grants"),
          "open findings"),
    Theme("inventory", "INV", ("Stockout analysis", "Reorder point model", "Supplier lead times"),
          ("SKU velocity", "safety stock", "supplier SLAs"),
          ("raise safety stock {p}%", "reorder weekly", "drop supplier 7"),
          "stockout rate"),
    Theme("marketing", "MKT", ("Campaign attribution", "Channel mix model", "Budget reallocation"),
          ("paid search", "email campaigns", "affiliate channel"),
          ("move {p}% to email", "pause affiliates", "use last-touch for now"),
          "CAC"),
    Theme("support", "SUP", ("Ticket backlog triage", "Support SLA report", "Macro cleanup"),
          ("ticket backlog", "first response time", "help macros"),
          ("auto-close after {n} days", "add a billing queue", "retire old macros"),
          "first response"),
    Theme("infra", "OPS", ("GPU cluster costs", "Kubernetes upgrade", "Spot instance policy"),
          ("GPU nodes", "node pools", "spot fleet"),
          ("move training to spot", "upgrade to 1.29", "cap GPU hours at {n}"),
          "monthly cost"),
    Theme("nlp", "NLP", ("Ticket classifier", "Embedding refresh", "Label quality audit"),
          ("intent labels", "sentence embeddings", "annotation guide"),
          ("relabel {n} intents", "use MiniLM embeddings", "add a review pass"),
          "macro F1"),
    Theme("finance", "FIN", ("Quarter close", "Budget variance", "Invoice reconciliation"),
          ("ledger exports", "cost centers", "vendor invoices"),
          ("accrue the Q1 bonus", "split cost center 40", "flag variances over {p}%"),
          "variance"),
    Theme("privacy", "PRV", ("GDPR request log", "Retention policy", "Consent banner"),
          ("deletion requests", "log retention", "consent rates"),
          ("keep logs {n} days", "automate deletions", "A/B the banner copy"),
          "requests closed"),
    Theme("search", "SRC", ("Site search relevance", "Query log analysis", "Synonym list"),
          ("query logs", "BM25 weights", "synonym list"),
          ("boost titles {n}x", "add {n} synonyms", "log zero-result queries"),
          "zero-result rate"),
    Theme("mobile", "MOB", ("App crash triage", "Release readiness", "Push notification test"),
          ("crash reports", "release train", "push opt-ins"),
          ("block release on crash rate", "batch pushes daily", "drop Android 9"),
          "crash-free users"),
    Theme("billing", "BIL", ("Failed payment retries", "Dunning emails", "Tax engine switch"),
          ("card retries", "dunning sequence", "VAT rules"),
          ("retry on day {n}", "add a SMS reminder", "switch tax engine in Q2"),
          "recovered revenue"),
    Theme("quality", "DQ", ("Data quality checks", "Freshness alerts", "Null audit"),
          ("freshness SLAs", "null rates", "great_expectations suites"),
          ("alert after {n} hours stale", "fail on null ids", "own checks per team"),
          "failing checks"),
    Theme("partners", "PTN", ("Partner API usage", "Reseller report", "Partner tiering"),
          ("API quotas", "reseller margins", "partner tiers"),
          ("raise quota to {n}k", "cut reseller margin {p}%", "add a gold tier"),
          "API calls"),
    Theme("research", "RES", ("Literature review", "Causal impact study", "Survey design"),
          ("uplift papers", "synthetic control", "survey panel"),
          ("use synthetic control", "survey {n} customers", "pre-register the study"),
          "effect size"),
    Theme("onboarding", "ONB", ("Activation funnel", "Trial length test", "Welcome tour"),
          ("activation events", "trial length", "product tour"),
          ("define activation as {n} events", "keep the 14-day trial", "shorten the tour"),
          "activation rate"),
    Theme("logistics", "LOG", ("Carrier comparison", "Delivery delays", "Route optimisation"),
          ("carrier rates", "late deliveries", "route plans"),
          ("switch carrier in the north", "promise {n}-day delivery", "batch routes nightly"),
          "on-time rate"),
    Theme("llm", "LLM", ("Prompt evaluation", "RAG pipeline", "Token cost review"),
          ("prompt suite", "retrieval index", "token spend"),
          ("cache the system prompt", "chunk at {n} tokens", "use haiku for triage"),
          "answer accuracy"),
)
# fmt: on

ACTIVE_THEMES = 10
DEFAULT_TOPICS = 10
ROTATE_EVERY_DAYS = 14
SECONDARY_TAGS = ("q1", "q2", "urgent", "followup", "exec", "weekly-review")
VERBS = ("Compare", "Investigate", "Summarise", "Rebuild", "Check", "Estimate", "Review")
TEAMS = ("sales", "finance", "growth", "ops", "product", "data platform")
OUTCOMES = (
    "report shared with {team} in notebooks/{tag}_analysis.ipynb",
    "ticket {ticket} closed; follow-up {ticket2} opened",
    "numbers agreed with {team}; next review on {next_day}",
    "merged commit {sha} into main; dashboard updated",
)
FEEDBACK_RULES = (
    ("always show {metric} with its confidence interval", "{team} misread a point estimate"),
    ("check {path} freshness before quoting it", "stale extract on {day}"),
    ("keep {tag} notebooks under 50 cells", "reviews took too long"),
)


@dataclass(frozen=True)
class Written:
    """One synthetic checkpoint, ready for `Memory.remember`."""

    day: date
    title: str
    body: str
    type: str
    tags: tuple[str, ...]


@dataclass
class QueryPool:
    """Queries a user would type, collected while writing: (kind, text, expected day or "")."""

    items: list[tuple[str, str, str]] = field(default_factory=list)

    def draw(self, n: int, rng: random.Random) -> list[tuple[str, str, str]]:
        """`n` queries, the kinds taking turns (topic, phrase, title, identifier)."""
        by_kind: dict[str, list[tuple[str, str, str]]] = {}
        for item in self.items:
            by_kind.setdefault(item[0], []).append(item)
        kinds = sorted(by_kind)
        return [rng.choice(by_kind[kinds[i % len(kinds)]]) for i in range(n)] if kinds else []


def active_themes(day_number: int, topics: int = len(THEMES)) -> list[Theme]:
    """The topics in play on a day: a window of up to 10 over the first `topics` themes, moving
    one topic every two weeks (with 10 topics or fewer, the same ones all the time)."""
    pool = THEMES[: max(1, min(topics, len(THEMES)))]
    offset = day_number // ROTATE_EVERY_DAYS
    return [pool[(offset + i) % len(pool)] for i in range(min(ACTIVE_THEMES, len(pool)))]


def synthetic_days(
    end: date, days: int, per_day: int, seed: int, topics: int = DEFAULT_TOPICS
) -> tuple[list[list[Written]], QueryPool]:
    """`days` days ending on `end`, `per_day` checkpoints each, and the queries they suggest."""
    rng = random.Random(seed)
    pool = QueryPool()
    sequence = 1000
    out: list[list[Written]] = []
    start = end - timedelta(days=days - 1)
    for number in range(days):
        day = start + timedelta(days=number)
        themes = active_themes(number, topics)
        today: list[Written] = []
        for slot in range(per_day):
            theme = themes[(slot + rng.randrange(3)) % len(themes)]
            sequence += 1
            written = _checkpoint(rng, theme, day, slot, sequence)
            today.append(written)
            if slot == 0 or rng.random() < 0.15:  # at least one query a day
                _collect_queries(pool, rng, theme, written, f"{theme.prefix}-{sequence}")
        out.append(today)
    return out, pool


def _checkpoint(rng: random.Random, theme: Theme, day: date, slot: int, seq: int) -> Written:
    tag = theme.tag
    ticket = f"{theme.prefix}-{seq}"
    team = rng.choice(TEAMS)
    path = f"data/{tag}/{day.isoformat()}/extract_{slot:02d}.parquet"
    sha = f"{rng.getrandbits(28):07x}"
    p, n = rng.choice((5, 10, 12, 15, 20, 25)), rng.randint(2, 30)
    values = {
        "p": p,
        "n": n,
        "team": team,
        "tag": tag,
        "ticket": ticket,
        "sha": sha,
        "path": path,
        "ticket2": f"{theme.prefix}-{seq + 7}",
        "next_day": (day + timedelta(days=7)).isoformat(),
        "metric": theme.metric,
        "day": day.isoformat(),
    }
    tags = [tag] + ([rng.choice(SECONDARY_TAGS)] if rng.random() < 0.3 else [])
    roll = rng.random()
    if roll < 0.08:
        rule, why = (part.format(**values) for part in rng.choice(FEEDBACK_RULES))
        body = (
            f"- rule: {rule}\n- why: {why}\n"
            f"- how-to-apply: add a check to notebooks/{tag}_analysis.ipynb before sharing"
        )
        return Written(day, f"{theme.metric.capitalize()} rule", body, "feedback", tuple(tags))
    subject = rng.choice(theme.objects)
    rows = rng.randint(1_000, 2_000_000)
    before, after = round(rng.uniform(1, 60), 1), round(rng.uniform(1, 60), 1)
    body = "\n".join(
        [
            f"- request: {rng.choice(VERBS)} {subject} for {team} ({ticket})",
            f"- analysis: pulled {rows:,} rows from {path}; {theme.metric} {before}% -> {after}% "
            f"week over week; outliers on {(day - timedelta(days=rng.randint(1, 6))).isoformat()}",
            f"- decisions: {rng.choice(theme.decisions).format(**values)}",
            f"- outcome: {rng.choice(OUTCOMES).format(**values)}",
            f"- references: knowledge/{tag}-notes.md, {path}, commit {sha}, {ticket}",
        ]
    )
    kind = "reference" if roll > 0.95 else "user" if roll > 0.92 else "project"
    return Written(day, rng.choice(theme.titles), body, kind, tuple(tags))


def _collect_queries(
    pool: QueryPool, rng: random.Random, theme: Theme, written: Written, ticket: str
) -> None:
    pool.items.append(("topic", theme.tag, ""))
    pool.items.append(("phrase", f"{rng.choice(theme.objects)} {theme.metric}", ""))
    pool.items.append(("title", written.title.lower(), ""))
    if written.type != "feedback":
        pool.items.append(("identifier", ticket, written.day.isoformat()))


def memory_config(column: str) -> MemoryConfig:
    """ "fts5", "whoosh", "fts5+semantic": the backend, and semantic recall on or off."""
    backend, _, extra = column.partition("+")
    return MemoryConfig(search_backend=backend, semantic=extra == "semantic")


def build_memory(root: Path, days: list[list[Written]], end: date) -> dict:
    """Write every checkpoint through `Memory.remember` (FTS5), then compact once, as a user
    opening the notebook on `end` would."""
    memory = Memory(root, config=memory_config("fts5"), today=lambda: end)
    started = time.perf_counter()
    count = 0
    for written_day in days:
        for w in written_day:
            memory.remember(w.title, w.body, type=w.type, tags=w.tags, on=w.day)
            count += 1
    remembered = time.perf_counter() - started
    started = time.perf_counter()
    report = memory.compact()
    compacted = time.perf_counter() - started
    memory.close()
    return {
        "checkpoints": count,
        "remember_all_s": round(remembered, 2),
        "compact_s": round(compacted, 2),
        "nodes_built": len(report.built),
        "nodes_summarized": len(report.summarized),
        "raw_bytes": sum(p.stat().st_size for p in (root / "memory").glob("*.md")),
    }


def reindex_copy(source: Path, target: Path, backend: str, end: date) -> float:
    """Copy a built memory without its index and rebuild the index with `backend`."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".index"))
    memory = Memory(target, config=memory_config(backend), today=lambda: end)
    started = time.perf_counter()
    memory.reindex()
    seconds = time.perf_counter() - started
    memory.close()
    return seconds
