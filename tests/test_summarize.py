"""The extractive summarizer: sections, what goes where, budgets, merging, determinism."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.tree.summarize import (
    DEFAULT_MAX_LINES,
    ExtractiveSummarizer,
    Source,
    Summarizer,
)
from hipo_jupyter.memory.tree.topics import identifiers

DAY = """\
# 2026-03-12

## Competitor pricing [project] #pricing #q1
<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 tags=pricing,q1 -->
- request: Compare our pricing with the top 5 competitors
- analysis: scraped pricing pages, pulled internal data from sales_2026q1.csv; Acme charges $29/mo
- decisions: recommend a 15% cut on the starter tier, keep Enterprise at $499
- outcome: report shared with the team
- references: knowledge/pricing-strategy.md, https://example.com/pricing

## Always cite sources [feedback]
- rule: cite the source file for every number in a report
- why: @maria could not trace the 15% figure
- how-to-apply: add a references line with paths

## Churn model retrain [project] #ml
- request: retrain ChurnModel v2.3.1 on March data
- decisions: switched to LightGBM, max_depth=6; AUC 0.81 -> 0.86
- outcome: model saved to models/churn-v2.4.0.pkl, PR-142 merged
- next: deploy to staging, blocked on INFRA-77 (KeyError in feature_store.load)

ok thanks, sounds good lol
"""

DAY_SUMMARY = """\
## Topics
pricing, q1, ml, competitor-pricing, cite-sources, churn-model-retrain, cite, data, model, \
report, retrain, acme, add, auc, blocked

## Key Decisions
- competitor-pricing: recommend a 15% cut on the starter tier, keep Enterprise at $499
- churn-model-retrain: switched to LightGBM, max_depth=6; AUC 0.81 -> 0.86

## Tasks Completed
- competitor-pricing: report shared with the team (refs: 5, sales_2026q1.csv, $29/mo, \
knowledge/pricing-strategy.md, https://example.com/pricing)
- churn-model-retrain: model saved to models/churn-v2.4.0.pkl, PR-142 merged \
(refs: ChurnModel, v2.3.1)

## Lessons Learned
- cite-sources: cite the source file for every number in a report \u2014 why: @maria could \
not trace the 15% figure \u2014 apply: add a references line with paths

## Open Items
- churn-model-retrain: deploy to staging, blocked on INFRA-77 (KeyError in feature_store.load)
"""

DAY2 = """\
## Billing retry [project] #billing
- decisions: retry failed charges 3 times over 72 h (BILL-88)
- outcome: retry job deployed to prod, v0.9.2
- references: services/billing/retry.py

## Pricing follow-up [project] #pricing
- decisions: recommend a 15% cut on the starter tier, keep Enterprise at $499
- outcome: CFO approved the starter tier cut
- todo: update pricing page before 2026-03-20
"""

DAILY = ("Topics", "Key Decisions", "Tasks Completed", "Lessons Learned", "Open Items")
WEEKLY = (
    "Topics",
    "Key Decisions",
    "Tasks Completed",
    "Entities Referenced",
    "Lessons Learned",
    "Open Items",
)
MONTHLY = (
    "Topics",
    "Key Themes",
    "Major Decisions",
    "Completed Work",
    "Recurring Entities",
    "Lessons & Patterns",
    "Carried Forward",
)
SECTIONS = {"daily": DAILY, "weekly": WEEKLY, "monthly": MONTHLY}


def daily(text: str, day: str = "2026-03-12", **options) -> str:
    source = Source(f"memory/{day}.md", text)
    return ExtractiveSummarizer(**options).summarize("daily", day, [source])


def section(body: str, name: str) -> list[str]:
    """The lines of one `## name` section of a summary."""
    match = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    assert match, f"no section {name!r} in:\n{body}"
    return [line for line in match.group(1).splitlines() if line]


def without_topics(body: str) -> str:
    """The summary minus its Topics line (where every content word may show up as a topic)."""
    return re.sub(r"^## Topics\n.*\n", "", body, flags=re.M)


def headings(body: str) -> list[str]:
    return [line[3:] for line in body.splitlines() if line.startswith("## ")]


def big_day(checkpoints: int = 40) -> tuple[str, list[str]]:
    """A ~300-line day and its decision values."""
    topics = ["pricing", "churn", "onboarding", "billing", "search", "latency"]
    lines = ["# 2026-03-12", ""]
    decisions = []
    for i in range(checkpoints):
        topic = topics[i % len(topics)]
        decision = (
            f"ship {topic.upper()}-{1000 + i} as v1.{i}.0 with a ${i * 100 + 50} budget, "
            f"cut {i % 20 + 1}% of {topic}_queue_{i}"
        )
        decisions.append(decision)
        lines += [
            f"## {topic.title()} review {i} [project] #{topic}",
            f"<!-- hipo id=2026-03-12T10:{i:02d}:00Z-{i:04x} tags={topic} -->",
            f"- request: look at the {topic} numbers for segment {i}",
            f"- analysis: pulled data/{topic}_{i}.csv, {i * 10 + 5} rows, p95 {100 + i} ms",
            f"- decisions: {decision}",
            f"- outcome: notebook {topic}_report_{i}.ipynb shared",
            "",
            "ok, thanks, that was useful",
        ]
    return "\n".join(lines) + "\n", decisions


# --- protocol and shape --------------------------------------------------------------------
def test_extractive_summarizer_is_a_summarizer():
    summarizer = ExtractiveSummarizer()
    assert isinstance(summarizer, Summarizer)
    assert summarizer.name == "extractive"


def test_daily_summary_of_a_hand_made_day():
    assert daily(DAY) == DAY_SUMMARY


def test_unknown_level_is_refused():
    try:
        ExtractiveSummarizer().summarize("yearly", "2026", [])
    except ValueError as exc:
        assert "yearly" in str(exc)
    else:
        raise AssertionError("no ValueError")


def test_no_sources_still_give_the_full_skeleton():
    for level, period in (("daily", "2026-03-12"), ("weekly", "2026-W11"), ("monthly", "2026-03")):
        body = ExtractiveSummarizer().summarize(level, period, [])
        assert headings(body) == list(SECTIONS[level])
        assert len(body.encode()) >= 50  # Hipocampus: no node under 50 bytes
        assert "(none)" in body


# --- what goes where -----------------------------------------------------------------------
def test_decisions_are_prefixed_with_the_checkpoint_slug():
    assert section(daily(DAY), "Key Decisions")[0] == (
        "- competitor-pricing: recommend a 15% cut on the starter tier, keep Enterprise at $499"
    )


def test_outcomes_carry_the_identifiers_of_request_analysis_and_references():
    done = section(daily(DAY), "Tasks Completed")[0]
    assert done.startswith("- competitor-pricing: report shared with the team (refs: ")
    for ref in ("sales_2026q1.csv", "$29/mo", "knowledge/pricing-strategy.md", "example.com"):
        assert ref in done


def test_feedback_becomes_a_lesson_with_its_reason():
    (lesson,) = section(daily(DAY), "Lessons Learned")
    assert lesson.startswith("- cite-sources: cite the source file for every number")
    assert "why: @maria could not trace the 15% figure" in lesson
    assert "apply: add a references line" in lesson


def test_open_items_collect_todo_next_pending_blocked_and_unchecked_boxes():
    log = """\
## Release [project]
- decisions: go with v3.0.0
- outcome: staged on canary, pending sign-off from @lee
- [ ] write the changelog
- [x] tag the release
TODO: rotate the API token
We are blocked on SEC-9
Next: announce in #releases
This line is plain chatter
"""
    body = daily(log)
    assert section(body, "Open Items") == [
        "- release: staged on canary, pending sign-off from @lee",
        "- release: write the changelog",
        "- release: TODO: rotate the API token",
        "- release: We are blocked on SEC-9",
        "- release: Next: announce in #releases",
    ]
    assert section(body, "Tasks Completed") == [
        "- release: staged on canary, pending sign-off from @lee",
        "- release: tag the release",
    ]
    assert section(body, "Key Decisions") == ["- release: go with v3.0.0"]
    assert "chatter" not in without_topics(body)


def test_free_text_is_sorted_by_cue_words():
    log = """\
## Search tuning [project]
We decided to switch the default backend to FTS5
Lesson: the Whoosh index must be rebuilt after upgrades
Fixed the tokenizer bug in search.py
The weather was nice
"""
    body = daily(log)
    assert section(body, "Key Decisions") == [
        "- search-tuning: We decided to switch the default backend to FTS5"
    ]
    assert section(body, "Lessons Learned") == [
        "- search-tuning: Lesson: the Whoosh index must be rebuilt after upgrades"
    ]
    assert section(body, "Tasks Completed") == [
        "- search-tuning: Fixed the tokenizer bug in search.py"
    ]
    assert "weather" not in without_topics(body)


def test_fields_continue_on_indented_lines_and_sub_bullets():
    log = """\
## Budget [project]
- decisions:
  - cap spend at $2,000 per month
  - review on 2026-04-01
- outcome: first part
  and its continuation
"""
    body = daily(log)
    assert section(body, "Key Decisions") == [
        "- budget: cap spend at $2,000 per month",
        "- budget: review on 2026-04-01",
    ]
    assert section(body, "Tasks Completed") == ["- budget: first part and its continuation"]


def test_hipo_comments_frontmatter_code_and_filler_are_dropped():
    log = """\
---
type: daily
period: 2026-03-12
---
## Notes [project]
<!-- hipo id=2026-03-12T14:32:05Z-7f3a tags=x -->
<!-- a comment
over two lines with decided inside -->
```
decided = True  # code is not a decision
```
- decisions: basically we just really go with plan B <!-- hipo inline -->
"""
    body = daily(log)
    assert "hipo" not in body and "<!--" not in body and "type: daily" not in body
    assert "code is not" not in body and "over two lines" not in body
    assert section(body, "Key Decisions") == ["- notes: we go with plan B"]


def test_untitled_text_gets_a_slug_from_its_own_words():
    body = daily("- decisions: adopt ruff for linting\n")
    assert section(body, "Key Decisions") == ["- adopt-ruff-linting: adopt ruff for linting"]


def test_hipocampus_style_bracketed_titles_are_read():
    body = daily("## [Legal research] [project]\n- decisions: cite Civil Act 750\n")
    assert section(body, "Key Decisions") == ["- legal-research: cite Civil Act 750"]


# --- trimming and budgets ------------------------------------------------------------------
def test_long_values_are_trimmed_on_a_word_boundary_keeping_identifiers():
    value = ("lorem ipsum dolor sit amet " * 10) + "so ship JIRA-77 at v4.1.0 for $3,500 and 12%"
    body = daily(f"## Long [project]\n- decisions: {value}\n")
    (line,) = section(body, "Key Decisions")
    text = line.removeprefix("- long: ")
    head, _, kept = text.partition(" \u2026 ")
    assert len(head) <= 200 and value.startswith(head) and value[len(head)] == " "
    assert kept == "[JIRA-77, v4.1.0, $3,500, 12%]"


def test_a_300_line_day_keeps_every_decisions_identifiers_and_is_much_shorter():
    text, decisions = big_day()
    assert len(text.splitlines()) >= 300
    body = daily(text)
    lines = body.splitlines()
    assert len(lines) <= DEFAULT_MAX_LINES["daily"] == 66
    assert len(body) < 0.6 * len(text)
    for decision in decisions:
        for ident in identifiers(decision):
            assert ident in body, (ident, decision)
    decided = section(body, "Key Decisions")
    assert decided[0].startswith("- pricing-review-0: ship PRICING-1000 as v1.0.0")
    assert decided[-1].startswith("- also: ")
    assert "ok, thanks" not in body


def test_max_lines_caps_every_level_and_overflow_names_the_rest():
    text, decisions = big_day(12)
    for level in ("daily", "weekly", "monthly"):
        body = ExtractiveSummarizer(max_lines=30).summarize(level, "p", [Source("a.md", text)])
        assert len(body.splitlines()) <= 30
        assert "- also: " in body
        for decision in decisions:
            for ident in identifiers(decision):
                assert ident in body, (level, ident)


def test_small_sections_are_shown_whole_before_big_ones_split_the_rest():
    text, _ = big_day(30)
    log = text + "\n## Hardening [feedback]\n- rule: never log tokens\n- why: SEC-1 leak\n"
    body = daily(log, max_lines=40)
    assert section(body, "Lessons Learned") == [
        "- hardening: never log tokens \u2014 why: SEC-1 leak"
    ]
    assert len(body.splitlines()) <= 40


# --- summaries of summaries ----------------------------------------------------------------
def test_weekly_summary_of_dailies_merges_sections_in_order_without_duplicates():
    day1, day2 = daily(DAY), daily(DAY2, "2026-03-13")
    body = ExtractiveSummarizer().summarize(
        "weekly",
        "2026-W11",
        [Source("memory/daily/2026-03-12.md", day1), Source("memory/daily/2026-03-13.md", day2)],
    )
    assert body.startswith("# Weekly Summary: 2026-W11\n\n## Topics\n")
    assert headings(body) == list(WEEKLY)
    assert section(body, "Key Decisions") == [
        "- competitor-pricing: recommend a 15% cut on the starter tier, keep Enterprise at $499",
        "- churn-model-retrain: switched to LightGBM, max_depth=6; AUC 0.81 -> 0.86",
        "- billing-retry: retry failed charges 3 times over 72 h (BILL-88)",
    ]  # day 2 repeats the pricing decision word for word: kept once
    assert [line.split(":")[0] for line in section(body, "Tasks Completed")] == [
        "- competitor-pricing",
        "- churn-model-retrain",
        "- billing-retry",
        "- pricing-follow-up",
    ]
    assert section(body, "Open Items") == [
        "- churn-model-retrain: deploy to staging, blocked on INFRA-77 (KeyError in "
        "feature_store.load)",
        "- pricing-follow-up: update pricing page before 2026-03-20",
    ]
    topics = section(body, "Topics")[0].split(", ")
    assert topics[:2] == ["pricing", "billing"]  # the days' topics, interleaved
    assert {"competitor-pricing", "billing-retry", "pricing-follow-up"} <= set(topics)


def test_weekly_entities_list_users_services_files_and_errors():
    body = ExtractiveSummarizer().summarize(
        "weekly", "2026-W11", [Source("memory/daily/2026-03-12.md", DAY)]
    )
    entities = dict(line.split(": ", 1) for line in section(body, "Entities Referenced"))
    assert entities["users"] == "@maria"
    assert entities["errors"] == "KeyError"
    for name in ("ChurnModel", "LightGBM", "PR-142", "INFRA-77", "feature_store"):
        assert name in entities["services"].split(", ")
    for name in ("knowledge/pricing-strategy.md", "models/churn-v2.4.0.pkl", "sales_2026q1.csv"):
        assert name in entities["files"].split(", ")


def test_weekly_from_a_verbatim_concatenation_reads_through_the_headers():
    verbatim = (
        "# Weekly 2026-W11\n\n<!-- from memory/daily/2026-03-12.md -->\n"
        + DAY
        + "\n\n<!-- from memory/daily/2026-03-13.md -->\n"
        + DAY2
    )
    body = ExtractiveSummarizer().summarize(
        "monthly", "2026-03", [Source("memory/weekly/2026-W11.md", verbatim)]
    )
    assert "from memory" not in body
    assert "weekly-2026-w11" not in body
    assert "- billing-retry: retry failed charges 3 times over 72 h (BILL-88)" in section(
        body, "Major Decisions"
    )


def test_monthly_summary_has_themes_with_their_weeks_and_merged_entities():
    summarizer = ExtractiveSummarizer()
    week11 = summarizer.summarize(
        "weekly",
        "2026-W11",
        [
            Source("memory/daily/2026-03-12.md", daily(DAY)),
            Source("memory/daily/2026-03-13.md", daily(DAY2, "2026-03-13")),
        ],
    )
    week12 = summarizer.summarize(
        "weekly", "2026-W12", [Source("memory/daily/2026-03-19.md", daily(DAY2, "2026-03-19"))]
    )
    body = summarizer.summarize(
        "monthly",
        "2026-03",
        [Source("memory/weekly/2026-W11.md", week11), Source("memory/weekly/2026-W12.md", week12)],
    )
    assert body.startswith("# Monthly Summary: 2026-03\n\n## Topics\n")
    assert headings(body) == list(MONTHLY)
    themes = section(body, "Key Themes")
    assert "- starter-tier: 2026-W11, 2026-W12 \u2014 competitor-pricing, pricing-follow-up" in (
        themes
    )
    assert section(body, "Major Decisions")[:3] == section(week11, "Key Decisions")
    assert section(body, "Carried Forward") == section(week11, "Open Items")
    entities = dict(line.split(": ", 1) for line in section(body, "Recurring Entities"))
    # seen in both weeks first
    assert entities["files"].split(", ")[0] == "services/billing/retry.py"
    assert section(body, "Lessons & Patterns") == section(week11, "Lessons Learned")


# --- determinism and robustness ------------------------------------------------------------
def test_same_inputs_give_byte_identical_output():
    text, _ = big_day(25)
    sources = [Source("memory/2026-03-12.md", text), Source("memory/2026-03-13.md", DAY)]
    for level in ("daily", "weekly", "monthly"):
        first = ExtractiveSummarizer().summarize(level, "p", sources)
        again = ExtractiveSummarizer().summarize(level, "p", list(sources))
        assert first == again


MARKDOWN_LINE = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "## Title [project] #tag",
            "## [feedback]",
            "## Key Decisions",
            "## Entities Referenced",
            "users: @a, b",
            "# Weekly Summary: 2026-W11",
            "<!-- hipo id=x tags=a,b -->",
            "<!-- unclosed",
            "```",
            "- decisions: 15% on v2.3.1 for $5",
            "- outcome:",
            "  continued",
            "  - sub bullet",
            "- [ ] todo",
            "- [x] done",
            "- rule: r",
            "- why: w",
            "- slug-like: text",
            "---",
            "type: daily",
            "x" * 450,
        ]
    ),
)
MARKDOWN = st.lists(MARKDOWN_LINE, max_size=40).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["daily", "weekly", "monthly"]),
    st.text(max_size=20),
    st.lists(st.tuples(st.text(max_size=30), st.one_of(st.text(), MARKDOWN)), max_size=3),
)
def test_never_raises_and_is_deterministic_on_arbitrary_text(level, period, raw_sources):
    sources = [Source(path, text) for path, text in raw_sources]
    body = ExtractiveSummarizer().summarize(level, period, sources)
    assert body == ExtractiveSummarizer().summarize(level, period, sources)
    assert body.endswith("\n") and body.splitlines() == body[:-1].split("\n")
    assert headings(body) == list(SECTIONS[level])
    assert len(body.splitlines()) <= DEFAULT_MAX_LINES[level]
    assert "<!-- hipo" not in body
