"""Topic extraction: slugs, hashtags, key phrases, identifiers and the topics of a node."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.tree.root import _topic_lines, fit_root, render_root
from hipo_jupyter.memory.tree.tokens import count_tokens
from hipo_jupyter.memory.tree.topic_index import Topic
from hipo_jupyter.memory.tree.topics import (
    STOPWORDS,
    comment_tags,
    hashtags,
    identifiers,
    is_period_heading,
    key_phrases,
    node_topics,
    section_category,
    slug,
)

LOG = """\
# 2026-03-12

## Competitor pricing [project] #pricing #q1
<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 tags=pricing,q1 -->
- request: Compare our pricing with the top 5 competitors
- analysis: scraped pricing pages of the competitors
- decisions: recommend a 15% cut on the starter tier
- outcome: starter tier report shared with the team

## Churn model retrain [project]
<!-- hipo id=2026-03-12T16:00:00Z-0b1c tags=ml -->
- decisions: keep the starter tier model, retrain churn weekly
- outcome: churn dashboard updated
"""

# Markdown-ish lines, so the property tests reach the parser's branches, not only plain text.
MARKDOWN_LINE = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "## Title [project] #tag",
            "## [feedback]",
            "## Topics",
            "# Weekly 2026-W11",
            "<!-- hipo id=x tags=a,%2C,b -->",
            "<!-- unclosed",
            "-->",
            "```",
            "- decisions: 15% on v2.3.1",
            "- [ ] todo #12",
            "  - nested",
            "---",
            "type: daily",
            "https://example.com/a#frag",
            "@user KeyError $5",
        ]
    ),
)
MARKDOWN = st.lists(MARKDOWN_LINE, max_size=30).map("\n".join)
ANY_TEXT = st.one_of(st.text(), MARKDOWN)


# --- slug ----------------------------------------------------------------------------------
def test_slug_of_a_title():
    assert slug("Competitor pricing (Q1)!") == "competitor-pricing-q1"


def test_slug_drops_stopwords_and_keeps_max_words():
    assert slug("Cut the price of the starter tier") == "cut-price-starter-tier"
    assert slug("Cut the price of the starter tier", max_words=2) == "cut-price"
    assert slug("one two three four five six", max_words=0) == "two-three-four-five-six"


def test_slug_keeps_stopwords_when_nothing_else_is_left():
    assert slug("The Who") == "the-who"


def test_slug_keeps_dotted_and_hyphenated_words_whole():
    assert slug("Release v2.3.1 to prod") == "release-v2-3-1-prod"
    assert slug("Pricing follow-up") == "pricing-follow-up"
    assert slug("Don't ship on Fridays") == "ship-fridays"


def test_slug_of_text_without_words_is_empty():
    assert slug("!!! ... ???") == ""
    assert slug("") == ""


def test_slug_keeps_non_ascii_letters():
    assert slug("Café Résumé") == "café-résumé"


# --- hashtags and comment tags -------------------------------------------------------------
def test_hashtags_lower_case_ordered_unique():
    assert hashtags("#pricing #q1") == ["pricing", "q1"]
    assert hashtags("#Pricing then #ML and #pricing again") == ["pricing", "ml"]


def test_hashtags_ignore_headings_anchors_entities_and_issue_numbers():
    text = "## Heading\nC# code, https://x.org/page#intro, &#39; issue #12 but (#real-tag)."
    assert hashtags(text) == ["real-tag"]


def test_comment_tags_are_read_and_percent_decoded():
    text = (
        "## A\n<!-- hipo id=1 tags=pricing,q1%20plan -->\n"
        "## B\n<!-- hipo id=2 notebook=x.ipynb tags=ml,pricing -->\n"
        "<!-- not ours tags=nope -->"
    )
    assert comment_tags(text) == ["pricing", "q1 plan", "ml"]


# --- key phrases ---------------------------------------------------------------------------
def test_key_phrases_rank_by_frequency_with_bigrams_counting_double():
    text = "starter tier pricing\nstarter tier discount\npricing review pricing\nchurn\n"
    # "starter tier" x2 scores 4 and covers "starter"/"tier"; "pricing" x3 scores 3;
    # the single words tie at 1 and are ordered alphabetically.
    assert key_phrases(text) == ["starter tier", "pricing", "churn", "discount", "review"]
    assert key_phrases(text, limit=2) == ["starter tier", "pricing"]


def test_key_phrases_leave_out_stopwords_labels_comments_and_urls():
    text = (
        "- decisions: the pricing is what we will do\n"
        "<!-- hipo id=1 tags=secretword -->\n"
        "see https://example.com/pricingpage for pricing\n"
    )
    phrases = key_phrases(text)
    assert phrases == ["pricing"]
    assert not set(phrases) & STOPWORDS


def test_key_phrases_do_not_cross_punctuation():
    assert key_phrases("alpha beta, gamma\nalpha beta. gamma") == ["alpha beta", "gamma"]


# --- identifiers ---------------------------------------------------------------------------
def test_identifiers_keep_what_people_search_for_verbatim():
    text = (
        "Ship PRICE-42 as v2.3.1 by 2026-03-20: cut 15% to $29/mo, p95 120 ms, see "
        "knowledge/pricing-strategy.md and https://example.com/x; @maria hit KeyError in "
        "feature_store via FastAPI (`load_rows()`), commit 3f9a2b7c, issue #88, 1,200 rows."
    )
    assert identifiers(text) == [
        "PRICE-42",
        "v2.3.1",
        "2026-03-20",
        "15%",
        "$29/mo",
        "120 ms",
        "knowledge/pricing-strategy.md",
        "https://example.com/x",
        "@maria",
        "KeyError",
        "feature_store",
        "FastAPI",
        "load_rows()",
        "3f9a2b7c",
        "#88",
        "1,200 rows",
    ]


def test_identifiers_skip_prose_slashes_and_noise_acronyms():
    assert identifiers("and/or TODO OK w/o") == []


# --- section names and period headings -----------------------------------------------------
def test_section_category_maps_every_level_to_one_category():
    assert section_category("Key Decisions") == "decisions"
    assert section_category("## Major Decisions") == "decisions"
    assert section_category("Lessons & Patterns") == "lessons"
    assert section_category("Carried Forward") == "open"
    assert section_category("Entities Referenced") == "entities"
    assert section_category("Competitor pricing") is None


def test_period_headings_are_recognised():
    assert is_period_heading("2026-03-12")
    assert is_period_heading("Weekly Summary: 2026-W11")
    assert is_period_heading("Weekly 2026-W11")
    assert not is_period_heading("Session 2 pricing")
    assert not is_period_heading("")


# --- node topics ---------------------------------------------------------------------------
def test_node_topics_tags_then_titles_then_key_phrases():
    # Comment lines give tags only: "analysis.ipynb" (notebook=) is not a topic.
    assert node_topics(LOG) == [
        "pricing",
        "q1",
        "ml",
        "competitor-pricing",
        "churn-model-retrain",
        "starter tier",
        "churn",
        "competitors",
        "model",
        "retrain",
        "compare",
        "competitor",
    ]


def test_node_topics_limit_keeps_room_for_key_phrases():
    topics = node_topics(LOG, limit=4)
    assert topics == ["pricing", "q1", "ml", "starter tier"]


def test_node_topics_of_a_summary_reads_its_topics_section():
    summary = (
        "# Weekly Summary: 2026-W11\n\n## Topics\nbilling, starter tier, Q1 plan\n\n"
        "## Key Decisions\n- billing-retry: retry failed charges 3 times\n"
    )
    topics = node_topics(summary)
    assert topics[:3] == ["billing", "starter tier", "q1 plan"]
    assert "weekly-summary-2026-w11" not in topics
    assert "key-decisions" not in topics


def test_node_topics_skip_period_headers_and_comments_of_a_verbatim_weekly():
    verbatim = "# Weekly 2026-W11\n\n<!-- from memory/daily/2026-03-12.md -->\n" + LOG
    topics = node_topics(verbatim)
    assert topics == node_topics(LOG)


def test_node_topics_dedupe_across_spellings():
    text = "## Starter tier\n<!-- hipo tags=starter-tier -->\nstarter tier, starter tier"
    assert node_topics(text) == ["starter-tier"]


# --- properties ----------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(ANY_TEXT, st.integers(min_value=-2, max_value=20))
def test_everything_is_deterministic_and_never_raises(text, limit):
    assert slug(text, limit) == slug(text, limit)
    assert hashtags(text) == hashtags(text)
    assert key_phrases(text, limit) == key_phrases(text, limit)
    assert node_topics(text, limit) == node_topics(text, limit)
    assert identifiers(text) == identifiers(text)
    assert comment_tags(text) == comment_tags(text)


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT)
def test_slug_is_kebab_case(text):
    assert re.fullmatch(r"(?:[^\W_]+(?:-[^\W_]+)*)?", slug(text))


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT, st.integers(min_value=0, max_value=20))
def test_node_topics_are_safe_for_a_frontmatter_line(text, limit):
    topics = node_topics(text, limit)
    assert len(topics) <= limit
    for topic in topics:
        assert topic and topic == topic.strip()
        assert not set(topic) & set(",:\n\r")
        assert len(topic.splitlines()) == 1
    keys = [re.sub(r"[\s_-]+", "-", t.lower()) for t in topics]
    assert len(keys) == len(set(keys))


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT)
def test_hashtags_are_lower_case_and_unique(text):
    tags = hashtags(text)
    assert len(tags) == len(set(tags))
    assert all(tag == tag.lower() and " " not in tag for tag in tags)


# --- ROOT.md's Topics Index folded to its budget -------------------------------------------------

TOPIC = st.builds(
    Topic,
    name=st.from_regex(r"[a-z][a-z0-9-]{0,14}", fullmatch=True),
    type=st.sampled_from(["project", "feedback", "user", "reference"]),
    age_days=st.integers(0, 400),
    keywords=st.lists(st.from_regex(r"[a-z]{1,12}", fullmatch=True), max_size=4).map(tuple),
    months=st.lists(st.sampled_from(["2026-03", "2026-02", "2025-12"]), min_size=1, max_size=2).map(
        tuple
    ),
    weeks=st.just(("2026-W11", "2026-W06")),
    last_date=st.just("2026-03-12"),
    count=st.integers(1, 9),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(TOPIC, max_size=40), st.integers(60, 600))
def test_root_folds_as_few_topics_as_the_budget_needs(topics: list[Topic], budget: int) -> None:
    """fit_root bisects over the folds; it must pick what trying each fold in turn picks."""
    args = ({"type": "root"}, ["- 2026-03-12: a"], ["- b"], ["- (no earlier months)"])
    expected = None
    for folded in (0, *range(2, len(topics) + 1, 2)):
        text = render_root(*args, _topic_lines(topics, folded))
        if count_tokens(text) <= budget:
            expected = text
            break
    got = fit_root(*args, topics, budget)
    if expected is not None:
        assert got == expected
    else:
        assert "## Topics Index" in got
