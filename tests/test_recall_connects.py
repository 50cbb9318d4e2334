"""Recall that connects (issue 45): the second hop from what the first hits name, and a plan's
question reaching the user's preferences and constraints that share no word with it. Through
`Memory.context`, the call every front end makes, and `hipo recall --context`."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

from hipo_jupyter.memory import Memory, RecallSettings
from hipo_jupyter.memory.recall.implicit_needs import plan_like, states_preference
from hipo_jupyter.memory.recall.second_hop import bridge_terms
from hipo_jupyter.memory.recall.time_span import SPAN_DAY_FACTOR, WEEK_SHARE, day_map, spans_time
from hipo_jupyter.memory.search.contract import Document, SearchHit

TODAY = date(2026, 3, 12)
# Notes of other work, so that a small budget cannot hold everything.
FILLER = [
    (f"Weekly sync {n}", f"Reviewed the sprint board, moved tickets {n} and {n + 1} forward, "
     f"and agreed to revisit the staging config next week.")
    for n in range(30)
]  # fmt: skip


def memory_with(root: Path, notes: list[tuple[str, str, str]]) -> Memory:
    """A memory holding (title, body, type) notes, one day apart, then the filler."""
    memory = Memory(root, today=lambda: TODAY)
    start = TODAY - timedelta(days=len(notes) + len(FILLER) + 1)
    for n, (title, body, kind) in enumerate(notes):
        memory.remember(title, body, type=kind or None, on=start + timedelta(days=n))
    for n, (title, body) in enumerate(FILLER):
        memory.remember(title, body, on=start + timedelta(days=len(notes) + n))
    return memory


# --- the second hop -----------------------------------------------------------------------------


def test_a_fact_named_only_by_the_first_hit_is_in_the_context(tmp_path: Path) -> None:
    memory = memory_with(
        tmp_path,
        [
            ("Churn dashboard", "For the churn dashboard we picked Zephyrix to build it.", ""),
            ("Contractor quote", "Zephyrix quoted 42,000 EUR for the work, due in May.", ""),
            ("Lunch", "Tried the new ramen place near the office.", ""),
        ],
    )
    asked = "Who builds the churn dashboard and what will it cost?"
    context = memory.context(asked, budget=300, settings=RecallSettings(second_hop=True))
    assert "picked Zephyrix to build it" in context.text  # the first hop: the question's words
    assert "quoted 42,000 EUR" in context.text  # the second: through "Zephyrix" alone
    assert "ramen" not in context.text
    # asked for by name, never inferred from how many hits are asked: off by default
    assert "quoted 42,000 EUR" not in memory.context(asked, budget=300).text
    # a short list a person reads (%recall's 5) stays what the question's words found
    titles = [hit.title for hit in memory.recall("churn dashboard cost", k=5)]
    assert "Churn dashboard" in titles and "Contractor quote" not in titles
    memory.close()


def test_the_cli_context_is_the_same_call(tmp_path: Path) -> None:
    """`hipo recall --context` in its own process: the same engine call, the same pieces."""
    memory = memory_with(
        tmp_path,
        [
            ("Bench cluster", "The GPU benchmarks run on the Kestrel cluster from now on.", ""),
            ("Kestrel access", "Kestrel needs a VPN token; ask Priya for one.", ""),
        ],
    )
    memory.close()
    out = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(tmp_path), "recall",
         "where do the GPU benchmarks run", "--context", "--budget", "300"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    memory = Memory(tmp_path, today=lambda: TODAY)
    same = memory.context("where do the GPU benchmarks run", budget=300).text
    memory.close()
    assert "Kestrel cluster" in out.stdout
    assert [line for line in out.stdout.splitlines() if line.startswith("L")] == [
        line for line in same.splitlines() if line.startswith("L")
    ]


def _hit(text: str, title: str = "note") -> SearchHit:
    doc = Document(f"memory/x.md#L{len(text)}", "memory/x.md", len(text), "raw", "2026-03-01",
                   "project", title, text)  # fmt: skip
    return SearchHit(doc, 1.0, "")


def test_bridge_terms_are_what_the_question_lacks_and_few_candidates_hold() -> None:
    seeds = [_hit("Met Priya and Jon in Lisbon; Jon booked flight LX1234 for 2026.")]
    # "Jon" is in every candidate (the other speaker, say): no bridge to one fact
    crowd = [_hit(f"Jon said {n}") for n in range(30)]
    terms = bridge_terms(seeds, "When did Priya travel?", [*seeds, *crowd])
    assert "priya" not in terms and "jon" not in terms  # asked already; everywhere
    assert "lisbon" in terms and "2026" not in terms  # never a bare number
    assert "lx1234" in terms


# --- implicit needs: a plan's question and the user's standing preferences --------------------


def test_a_plan_recalls_the_users_preference_that_shares_no_word(tmp_path: Path) -> None:
    memory = memory_with(
        tmp_path,
        [
            ("Dataframes", "I prefer polars over pandas for every dataframe job.", "user"),
            ("Deploys", "Never push to main on a Friday.", "feedback"),
            ("Client onboarding", "The new client sends nightly CSV exports to our bucket.", ""),
        ],
    )
    routed = RecallSettings(implicit_needs=True)
    plan = memory.context("Help me plan the ETL pipeline for the new client", budget=400,
                          settings=routed)  # fmt: skip
    assert "nightly CSV exports" in plan.text  # the question's own words
    assert "polars over pandas" in plan.text and "main on a Friday" in plan.text
    fact = memory.context("Which bucket does the new client export to?", budget=400,
                          settings=routed)  # fmt: skip
    assert "polars" not in fact.text  # a question of fact gets no route
    memory.close()


def test_plans_and_preferences_are_told_by_the_shape_of_the_words() -> None:
    for question in ("Help me plan the launch", "Should I move the job to Friday?",
                     "I'm trying to decide between two laptops", "How do we set up CI?"):
        assert plan_like(question), question
    for question in ("When did we ship v2?", "What did Priya say about the cluster?",
                     "How do I fix this KeyError in the merge?", "help me read this traceback",
                     "I need to drop the duplicate rows", "how can we speed up the groupby?"):
        assert not plan_like(question), question
    assert states_preference("I prefer tabs.") and states_preference("We always use uv.")
    assert states_preference("My budget is 2,000 EUR.")
    assert not states_preference("The cluster was down on Friday.")


# --- questions that span time read the tree's days and weeks as the map -------------------------


def test_a_span_question_reads_the_weeks_as_the_map_of_its_days() -> None:
    for question in ("How did pricing change since the launch?", "what happened before the move",
                     "the migration so far", "how has the model evolved"):
        assert spans_time(question), question
    assert not spans_time("What is the staging password rotation policy?")
    week = Document("memory/weekly/2026-W10.md#L1", "memory/weekly/2026-W10.md", 1, "weekly",
                    "2026-03-02", "", "2026-W10", "pricing")  # fmt: skip
    found = [SearchHit(week, 4.0, "")]
    days = {"2026-03-03": 1.0}  # that day's own node matched best
    spread = day_map("How did pricing change since March?", found, days)
    assert spread["2026-03-03"] == SPAN_DAY_FACTOR * 1.0
    assert spread["2026-03-08"] == SPAN_DAY_FACTOR * WEEK_SHARE  # the week's Sunday, no node
    assert "2026-03-09" not in spread
    assert day_map("What is the price?", found, days) == days  # not a span: as it was


def test_the_hops_cost_grows_with_the_candidates_count_not_their_length() -> None:
    """300 candidates of 20 KB cost the bridge terms at most 3x what 300 of 300 characters do
    (issue 49: 2 ms -> 301 ms before the texts were read to TERM_CHARS)."""
    import time

    def timed(length: int) -> float:
        filler = ("lorem ipsum dolor sit amet " * (length // 27 + 1))[:length]
        crowd = [_hit(f"Priya met Kestrel{n} at {n}. {filler}") for n in range(300)]
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            bridge_terms(crowd[:5], "When did Priya travel?", crowd)
            best = min(best, time.perf_counter() - start)
        return best

    assert timed(20_000) <= 3 * timed(300) + 0.002
