"""Latency and size of hipo-jupyter's memory at scale: 30 days and one year, both search backends.

    python benchmarks/scale.py --days 30,365 --per-day 20 --backends fts5,whoosh \\
        --json out.json --keep /tmp/hipo-scale
    python benchmarks/scale.py --backends fts5,fts5+semantic    # with the [semantic] extra

A backend column `X+semantic` is backend X with semantic recall on: its index rebuild embeds
every checkpoint and node, `%%remember` embeds the new checkpoint in the same call, and `%recall`
is hybrid (keyword and vector rankings fused). The other columns run with semantic recall off.

For each size it writes a synthetic memory through the real engine (`Memory.remember`, one
checkpoint at a time, then one `compact()`), copies the folder once per extra backend and rebuilds
the copy's index with that backend, then measures each copy the way a user meets it:

- `%load_ext hipo` with nothing dirty, in fresh processes (a real IPython `InteractiveShell`, as a
  kernel loads it; import time reported apart), median of `--load-runs`;
- `%recall` latency over queries drawn from the topics, identifiers and phrases written;
- `%%remember` latency (checkpoints into today's raw log of the grown memory);
- `%recall` right after a `%%remember` (the next-cell case: the topic cache is stale);
- Layer 1 tokens and the index's bytes on disk.

The synthetic memory is deterministic for a seed (content, dates and order; checkpoint ids carry
the wall clock, as real ones do). Timings are wall-clock on a shared machine: read them as orders
of magnitude and compare the columns of one run, not runs of different days.
`--profile DIR` also writes cProfile statistics of the hot paths (load, recall, context,
remember) at the largest size.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import math
import os
import platform
import pstats
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hipo_jupyter.memory import Memory, MemoryConfig  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402

DEFAULT_END = date(2026, 3, 12)

# Targets from issue 7, at one year on FTS5 with semantic recall on.
SEMANTIC_TARGETS = {"remember_p95_ms": 60.0, "recall_p95_ms": 30.0}

# Targets from issue 13, at one year on FTS5: %recall within this many times a bare index query
# on the same index in the same run, and the context of a question within this many ms.
RECALL_OVER_BARE = 5.0
CONTEXT_P95_MS = 25.0

# Targets from issue 2, at one year on FTS5.
TARGETS = {
    "remember_p95_ms": 50.0,
    "recall_p95_ms": 20.0,
    "load_ext_s": 0.5,
    "layer1_growth": 0.10,  # |tokens(1 year) / tokens(30 days) - 1|
}


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


# ---------------------------------------------------------------------------------------------
# Measurements.

LOAD_SCRIPT = r"""
import contextlib, io, json, os, sys, time
started = time.perf_counter()
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
ipython_imported = time.perf_counter() - started
mode = sys.argv[2]
started = time.perf_counter()
if mode == "ipython":
    import hipo  # noqa: F401  (the %load_ext entry, and the engine under it)
else:
    from hipo_jupyter.memory import Memory, MemoryConfig
imported = time.perf_counter() - started
profile = None
if sys.argv[3]:
    import cProfile
    profile = cProfile.Profile()
backend, _, extra = sys.argv[1].partition("+")
if mode == "ipython":
    config = Config()
    config.Hipo.search_backend = backend
    config.Hipo.semantic = extra == "semantic"
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    started, cpu_started = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    with contextlib.redirect_stdout(io.StringIO()) as screen:
        shell.run_line_magic("load_ext", "hipo")
    if profile:
        profile.disable()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    from hipo_jupyter.ipython.session import current
    startup = current(shell).startup
    built = len(startup.report.built) if startup.report else -1
    error = startup.error
else:
    started, cpu_started = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    memory = Memory(
        os.environ["HIPO_ROOT"],
        config=MemoryConfig(search_backend=backend, semantic=extra == "semantic"),
    )
    report = memory.compact()
    memory.layer1()
    memory.status()
    if profile:
        profile.disable()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    built, error = len(report.built), None
if profile:
    profile.dump_stats(sys.argv[3])
print(json.dumps({"ipython_import_s": ipython_imported, "import_s": imported, "load_s": seconds,
                  "cpu_s": cpu, "built": built, "error": error}))
"""


def load_mode() -> str:
    """'ipython' when the extension imports, else 'engine' (the equivalent engine calls)."""
    try:
        import hipo  # noqa: F401
    except ImportError:
        return "engine"
    return "ipython"


def measure_load(root: Path, backend: str, end: date, runs: int, profile_to: str = "") -> dict:
    """`%load_ext hipo` in `runs` fresh interpreters; medians of import and load wall time."""
    mode = load_mode()
    samples = []
    with tempfile.TemporaryDirectory(prefix="hipo-ipython-") as ipython_dir:
        env = {
            **os.environ,
            "HIPO_ROOT": str(root),
            "HIPO_TODAY": end.isoformat(),
            "IPYTHONDIR": ipython_dir,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        for run in range(runs):
            target = profile_to if run == runs - 1 else ""
            done = subprocess.run(
                [sys.executable, "-c", LOAD_SCRIPT, backend, mode, target],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"load subprocess failed:\n{done.stderr[-2000:]}")
            samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "load_mode": mode,
        "ipython_import_s": statistics.median(s["ipython_import_s"] for s in samples),
        "import_s": statistics.median(s["import_s"] for s in samples),
        "load_ext_s": statistics.median(s["load_s"] for s in samples),
        "load_ext_with_import_s": statistics.median(s["import_s"] + s["load_s"] for s in samples),
        "load_ext_cpu_s": statistics.median(s["cpu_s"] for s in samples),
        "load_ext_runs_s": [round(s["load_s"], 4) for s in samples],
        "load_nodes_built": max(s["built"] for s in samples),
        "load_error": next((s["error"] for s in samples if s["error"]), None),
    }


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass
class Timings:
    """Milliseconds per call: wall clock (what a user waits) and this process's CPU time (what
    the work costs, less sensitive to other load on a shared machine)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def timed(calls: Iterator[Callable[[], object]], into: Timings | None = None) -> Timings:
    into = into or Timings()
    for call in calls:
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        into.cpu.append((time.process_time() - cpu_started) * 1000)
        into.wall.append((time.perf_counter() - started) * 1000)
    return into


def open_warm(root: Path, backend: str, end: date) -> Memory:
    """A Memory as a kernel holds it after `%load_ext hipo`: compacted, index synced, topics
    cached."""
    memory = Memory(root, config=memory_config(backend), today=lambda: end)
    memory.compact()
    memory.topics()
    return memory


def measure_session(
    root: Path,
    backend: str,
    end: date,
    queries: list[tuple[str, str, str]],
    samples: int,
    seed: int,
) -> dict:
    memory = open_warm(root, backend, end)
    layer1_tokens = memory.layer1().total_tokens
    found = checked = 0
    # The first recall of a session loads the embedding model (semantic recall only): timed
    # apart, so the percentiles are those of a kernel in use.
    first = timed(iter([lambda: memory.recall(queries[0][1], k=5, mode="auto")])).wall[0]

    def recall_one(query: tuple[str, str, str]) -> Callable[[], object]:
        def call() -> None:
            nonlocal found, checked
            result = memory.recall(query[1], k=5, mode="auto")
            if query[0] == "identifier":
                checked += 1
                found += any(hit.date == query[2] for hit in result.hits)

        return call

    recall = timed(recall_one(q) for q in queries)
    # Side by side on the same index, in turn per query so the machine's load weighs on each
    # alike: a bare index query (SearchIndex.search, limit 5: the FTS5 MATCH hipo builds, its
    # rows read, nothing else), %recall again, and the context a model is sent
    # (Memory.context, budget 2,000, keyword recall as the target asks).
    bare_index = open_index(memory.store.index_dir, memory.config.search_backend)
    bare, again, context = Timings(), Timings(), Timings()
    for query in queries:
        timed(iter([lambda q=query: bare_index.search(q[1], limit=5)]), bare)
        timed(iter([recall_one(query)]), again)
        timed(iter([lambda q=query: memory.context(q[1], budget=2000, mode="keyword")]), context)
    bare_index.close()
    rng = random.Random(seed + 1)
    fresh, _ = synthetic_days(end, 1, samples + 40, seed + 2)
    remember = timed(
        (lambda w=w: memory.remember(w.title, w.body, type=w.type, tags=w.tags))
        for w in fresh[0][:samples]
    )
    # The notebook's next cell: a recall, then a context, right after a %%remember.
    after, context_after = Timings(), Timings()
    picked = rng.sample(queries, min(20, len(queries)))
    for w, query in zip(fresh[0][samples : samples + 20], picked, strict=False):
        memory.remember(w.title, w.body, type=w.type, tags=w.tags)
        timed(iter([recall_one(query)]), after)
    for w, query in zip(fresh[0][samples + 20 :], picked, strict=False):
        memory.remember(w.title, w.body, type=w.type, tags=w.tags)
        context_one = [lambda q=query: memory.context(q[1], budget=2000, mode="keyword")]
        timed(iter(context_one), context_after)
    semantic = memory.semantic.status()[1] if memory.config.semantic else ""
    memory.close()
    return {
        "first_recall_ms": first,
        "semantic": semantic,
        "recall_p50_ms": statistics.median(recall.wall),
        "recall_p95_ms": percentile(recall.wall, 95),
        "recall_p95_cpu_ms": percentile(recall.cpu, 95),
        "remember_p50_ms": statistics.median(remember.wall),
        "remember_p95_ms": percentile(remember.wall, 95),
        "remember_p95_cpu_ms": percentile(remember.cpu, 95),
        "recall_after_remember_p50_ms": statistics.median(after.wall) if after.wall else None,
        "context_after_remember_p50_ms": (
            statistics.median(context_after.wall) if context_after.wall else None
        ),
        "context_after_remember_p50_cpu_ms": (
            statistics.median(context_after.cpu) if context_after.cpu else None
        ),
        "bare_p50_ms": statistics.median(bare.wall),
        "bare_p95_ms": percentile(bare.wall, 95),
        "bare_p95_cpu_ms": percentile(bare.cpu, 95),
        "recall_over_bare_p95_cpu": percentile(again.cpu, 95) / max(percentile(bare.cpu, 95), 1e-6),
        "recall_interleaved_p95_ms": percentile(again.wall, 95),
        "recall_over_bare_p95": percentile(again.wall, 95) / max(percentile(bare.wall, 95), 1e-6),
        "context_p50_ms": statistics.median(context.wall),
        "context_p95_ms": percentile(context.wall, 95),
        "context_p50_cpu_ms": statistics.median(context.cpu),
        "context_p95_cpu_ms": percentile(context.cpu, 95),
        "context_over_bare_p95_cpu": percentile(context.cpu, 95)
        / max(percentile(bare.cpu, 95), 1e-6),
        "identifier_found_at_5": round(found / checked, 3) if checked else None,
        "layer1_tokens": layer1_tokens,
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# Profiles of the hot paths (load, recall, context, remember) at the largest size.


def top_functions(stats_path: str, limit: int = 15) -> str:
    buffer = io.StringIO()
    stats = pstats.Stats(stats_path, stream=buffer)
    stats.strip_dirs().sort_stats("cumulative").print_stats(limit)
    return buffer.getvalue()


def profile_hot_paths(
    root: Path, backend: str, end: date, queries: list[tuple[str, str, str]], out: Path, seed: int
) -> dict[str, str]:
    """cProfile of 200 recalls, 200 contexts (budget 2,000, keyword), 200 remembers and 20
    remember+recall pairs on a copy of `root`."""
    out.mkdir(parents=True, exist_ok=True)
    work = out / "memory-copy"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(root, work)
    paths = {"load": str(out / "load.prof")}
    measure_load(work, backend, end, 1, profile_to=paths["load"])
    memory = open_warm(work, backend, end)
    fresh, _ = synthetic_days(end, 1, 220, seed + 3)
    jobs = {
        "recall": lambda: [memory.recall(q[1], k=5) for q in queries],
        "context": lambda: [memory.context(q[1], budget=2000, mode="keyword") for q in queries],
        "remember": lambda: [
            memory.remember(w.title, w.body, type=w.type, tags=w.tags) for w in fresh[0][:200]
        ],
        "recall_after_remember": lambda: [
            (memory.remember(w.title, w.body, tags=w.tags), memory.recall(q[1], k=5))
            for w, q in zip(fresh[0][200:], queries, strict=False)
        ],
    }
    for name, job in jobs.items():
        profiler = cProfile.Profile()
        profiler.runcall(job)
        paths[name] = str(out / f"{name}.prof")
        profiler.dump_stats(paths[name])
    memory.close()
    shutil.rmtree(work)
    return {name: top_functions(path) for name, path in paths.items()}


# ---------------------------------------------------------------------------------------------
# Report.


def machine() -> dict:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        import whoosh

        whoosh_version = whoosh.versionstring()
    except ImportError:
        whoosh_version = None
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "whoosh": whoosh_version,
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


ROWS = (
    # (key, label, format)
    ("checkpoints", "checkpoints", "{:,}"),
    ("reindex_s", "index rebuild (s)", "{:.2f}"),
    ("ipython_import_s", "import IPython (s)", "{:.3f}"),
    ("import_s", "import hipo (s)", "{:.3f}"),
    ("load_ext_s", "`%load_ext hipo`, nothing dirty, after import (s)", "{:.3f}"),
    ("load_ext_cpu_s", "`%load_ext hipo` CPU time, after import (s)", "{:.3f}"),
    ("load_ext_with_import_s", "`%load_ext hipo` incl. import hipo (s)", "{:.3f}"),
    ("remember_p50_ms", "`%%remember` p50 (ms)", "{:.1f}"),
    ("remember_p95_ms", "`%%remember` p95 (ms)", "{:.1f}"),
    ("remember_p95_cpu_ms", "`%%remember` p95, CPU time (ms)", "{:.1f}"),
    ("first_recall_ms", "first `%recall` of a session (ms)", "{:.1f}"),
    ("recall_p50_ms", "`%recall` p50 (ms)", "{:.1f}"),
    ("recall_p95_ms", "`%recall` p95 (ms)", "{:.1f}"),
    ("recall_p95_cpu_ms", "`%recall` p95, CPU time (ms)", "{:.1f}"),
    ("recall_after_remember_p50_ms", "`%recall` after a `%%remember`, p50 (ms)", "{:.1f}"),
    ("bare_p50_ms", "bare index query (FTS5 MATCH, limit 5) p50 (ms)", "{:.1f}"),
    ("bare_p95_ms", "bare index query p95 (ms)", "{:.1f}"),
    ("recall_interleaved_p95_ms", "`%recall` p95, in turn with the bare query (ms)", "{:.1f}"),
    ("recall_over_bare_p95", "`%recall` p95 / bare query p95", "{:.1f}x"),
    ("bare_p95_cpu_ms", "bare index query p95, CPU time (ms)", "{:.1f}"),
    ("recall_over_bare_p95_cpu", "`%recall` p95 / bare query p95, CPU time", "{:.1f}x"),
    ("context_p50_ms", "`Memory.context(budget=2000)` p50, keyword (ms)", "{:.1f}"),
    ("context_p95_ms", "`Memory.context(budget=2000)` p95, keyword (ms)", "{:.1f}"),
    ("context_p50_cpu_ms", "`Memory.context` p50, CPU time (ms)", "{:.1f}"),
    ("context_p95_cpu_ms", "`Memory.context` p95, CPU time (ms)", "{:.1f}"),
    ("context_over_bare_p95_cpu", "`Memory.context` p95 / bare query p95, CPU time", "{:.1f}x"),
    ("context_after_remember_p50_ms", "`Memory.context` after a `%%remember`, p50 (ms)", "{:.1f}"),
    ("context_after_remember_p50_cpu_ms", "... the same, CPU time (ms)", "{:.1f}"),
    ("identifier_found_at_5", "identifier queries found in top 5", "{:.0%}"),
    ("layer1_tokens", "Layer 1 tokens", "{:,}"),
    ("index_bytes", "index on disk (MB)", "{:.2f}"),
)


def _cell(value: object, fmt: str, key: str) -> str:
    if value is None:
        return "-"
    if key == "index_bytes":
        value = value / 1_000_000
    return fmt.format(value)


def _build_line(days: int, per_day: int, build: dict) -> str:
    return (
        f"- {days} days x {per_day}/day: {build['checkpoints']:,} checkpoints written in "
        f"{build['remember_all_s']:.1f} s through `Memory.remember` (FTS5), compacted in "
        f"{build['compact_s']:.1f} s ({build['nodes_built']} nodes, "
        f"{build['nodes_summarized']} summarized); raw logs {build['raw_bytes'] / 1e6:.1f} MB"
    )


def markdown(result: dict) -> str:
    sizes = result["sizes"]
    columns = [(s, b) for s in sizes for b in s["backends"]]
    head = "| metric | " + " | ".join(f"{s['days']} d, {b}" for s, b in columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]
    for key, label, fmt in ROWS:
        cells = []
        for size, backend in columns:
            value = (
                size["build"].get(key) if key == "checkpoints" else size["backends"][backend][key]
            )
            cells.append(_cell(value, fmt, key))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    builds = "\n".join(_build_line(s["days"], s["per_day"], s["build"]) for s in sizes)
    m = result["machine"]
    about = (
        f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}, SQLite {m['sqlite']}, "
        f"Whoosh {m['whoosh']}, load average at start {m['load_average']}."
    )
    params = result["params"]
    about += (
        f" Synthetic memory: seed {params['seed']}, {params['topics']} topics, ending "
        f"{params['end']}; {params['samples']} recall and remember calls, load median of "
        f"{params['load_runs']} fresh processes ({_load_mode(result)})."
    )
    parts = [text, "", builds, "", about]
    if result.get("layer1_ratio") is not None:
        parts.append(
            f"Layer 1 tokens, {result['layer1_ratio']['days']} / {result['layer1_ratio']['base']} "
            f"days: {result['layer1_ratio']['ratio']:.3f}"
        )
    if result["targets"]:
        parts.append("")
        parts.append("Targets (largest size, FTS5):")
        for t in result["targets"]:
            verdict = "met" if t["met"] else f"MISSED by {t['value'] - t['limit']:.3g}"
            parts.append(f"- {t['name']}: {t['value']:.3g} (limit {t['limit']:.3g}) {verdict}")
    return "\n".join(parts)


def _load_mode(result: dict) -> str:
    modes = {b["load_mode"] for size in result["sizes"] for b in size["backends"].values()}
    if modes == {"ipython"}:
        return "`%load_ext hipo` in an IPython InteractiveShell"
    return "engine calls compact + layer1 + status: the IPython extension did not import"


def check_targets(result: dict) -> list[dict]:
    largest = max(result["sizes"], key=lambda s: s["days"])
    fts5 = largest["backends"].get("fts5")
    semantic = largest["backends"].get("fts5+semantic")
    targets = []
    if fts5 is not None:
        targets += [
            {"name": name, "value": fts5[name], "limit": limit, "met": fts5[name] < limit}
            for name, limit in TARGETS.items()
            if name in fts5
        ]
    if fts5 is not None and "recall_over_bare_p95" in fts5:
        targets += [
            {
                "name": "recall_p95 / bare FTS5 p95",
                "value": fts5["recall_over_bare_p95"],
                "limit": RECALL_OVER_BARE,
                "met": fts5["recall_over_bare_p95"] <= RECALL_OVER_BARE,
            },
            {
                "name": "context_p95_ms",
                "value": fts5["context_p95_ms"],
                "limit": CONTEXT_P95_MS,
                "met": fts5["context_p95_ms"] < CONTEXT_P95_MS,
            },
        ]
    if semantic is not None:
        targets += [
            {
                "name": f"{name} (fts5+semantic)",
                "value": semantic[name],
                "limit": limit,
                "met": semantic[name] < limit,
            }
            for name, limit in SEMANTIC_TARGETS.items()
        ]
    ratio = result.get("layer1_ratio")
    if ratio:
        growth = abs(ratio["ratio"] - 1)
        targets.append(
            {
                "name": "layer1_growth",
                "value": growth,
                "limit": TARGETS["layer1_growth"],
                "met": growth <= TARGETS["layer1_growth"],
            }
        )
    return targets


# ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", default="30,365", help="comma-separated sizes in days")
    parser.add_argument("--per-day", type=int, default=20, help="checkpoints a day")
    parser.add_argument(
        "--backends",
        default="fts5,whoosh",
        help="columns: fts5, whoosh, fts5+semantic, whoosh+semantic (the last two need the "
        "[semantic] extra)",
    )
    parser.add_argument("--json", dest="json_out", help="also write the results as JSON here")
    parser.add_argument("--keep", help="build the memories in this folder and keep them")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--topics",
        type=int,
        default=DEFAULT_TOPICS,
        help=f"topic pool (10 cycle all year; up to {len(THEMES)} rotate, 10 active at a time)",
    )
    parser.add_argument("--end", default=DEFAULT_END.isoformat(), help="last day (= today)")
    parser.add_argument("--samples", type=int, default=200, help="remember and recall calls")
    parser.add_argument("--load-runs", type=int, default=5, help="fresh processes for load")
    parser.add_argument("--profile", help="write cProfile stats of the hot paths here")
    args = parser.parse_args(argv)
    args.day_sizes = sorted({int(d) for d in args.days.split(",") if d.strip()})
    args.backend_list = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(args.backend_list) - {"fts5", "whoosh", "fts5+semantic", "whoosh+semantic"}
    if unknown or not args.backend_list or not args.day_sizes or min(args.day_sizes) < 1:
        parser.error(
            "--days needs positive sizes; --backends takes fts5, whoosh, fts5+semantic, "
            "whoosh+semantic"
        )
    if any(b.endswith("+semantic") for b in args.backend_list):
        from hipo_jupyter.memory.search.embed import semantic_available

        on, message = semantic_available()
        if not on:
            parser.error(f"a +semantic column needs the extra: {message}")
    if not 1 <= args.topics <= len(THEMES):
        parser.error(f"--topics takes 1 to {len(THEMES)}")
    args.end_day = date.fromisoformat(args.end)
    return args


def run(args: argparse.Namespace, workdir: Path) -> dict:
    result: dict = {
        "machine": machine(),
        "params": {
            "days": args.day_sizes,
            "per_day": args.per_day,
            "backends": args.backend_list,
            "seed": args.seed,
            "topics": args.topics,
            "end": args.end,
            "samples": args.samples,
            "load_runs": args.load_runs,
        },
        "sizes": [],
    }
    largest = max(args.day_sizes)
    for days in args.day_sizes:
        print(f"[scale] {days} days: writing {days * args.per_day:,} checkpoints", file=sys.stderr)
        written, pool = synthetic_days(args.end_day, days, args.per_day, args.seed, args.topics)
        queries = pool.draw(args.samples, random.Random(args.seed))
        built_root = workdir / f"days-{days}" / "built"
        if built_root.exists():
            shutil.rmtree(built_root)
        build = build_memory(built_root, written, args.end_day)
        print(f"[scale] {days} days: built {build}", file=sys.stderr)
        size = {"days": days, "per_day": args.per_day, "build": build, "backends": {}}
        for backend in args.backend_list:
            root = workdir / f"days-{days}" / backend
            metrics: dict = {"reindex_s": reindex_copy(built_root, root, backend, args.end_day)}
            metrics["index_bytes"] = folder_bytes(root / "memory" / ".index")
            metrics.update(measure_load(root, backend, args.end_day, args.load_runs))
            metrics.update(
                measure_session(root, backend, args.end_day, queries, args.samples, args.seed)
            )
            size["backends"][backend] = metrics
            print(f"[scale] {days} days, {backend}: {metrics}", file=sys.stderr)
        if args.profile and days == largest:
            first = args.backend_list[0]
            size["profiles"] = profile_hot_paths(
                built_root if first == "fts5" else workdir / f"days-{days}" / first,
                first,
                args.end_day,
                queries,
                Path(args.profile),
                args.seed,
            )
        shutil.rmtree(built_root)
        result["sizes"].append(size)
    base, top = result["sizes"][0], result["sizes"][-1]
    backend = args.backend_list[0]
    if len(result["sizes"]) > 1 and base["backends"][backend]["layer1_tokens"]:
        result["layer1_ratio"] = {
            "base": base["days"],
            "days": top["days"],
            "ratio": top["backends"][backend]["layer1_tokens"]
            / base["backends"][backend]["layer1_tokens"],
        }
    result["targets"] = check_targets(result)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep:
        workdir = Path(args.keep).absolute()
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(args, workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="hipo-scale-") as tmp:
            result = run(args, Path(tmp))
    print(markdown(result))
    for size in result["sizes"]:
        for name, text in size.get("profiles", {}).items():
            print(f"\n### Profile: {name} ({size['days']} days)\n\n```\n{text.strip()}\n```")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
