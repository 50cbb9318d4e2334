"""The checkpoint format: parsing raw logs (ours and Hipocampus's), rendering, round trips."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.disk.checkpoint import (
    CHECKPOINT_TYPES,
    FEEDBACK_FIELDS,
    TASK_FIELDS,
    Checkpoint,
    new_id,
    parse_body,
    parse_log,
    parse_title,
    render,
)

DESIGN_EXAMPLE = """\
## Competitor pricing [project]
<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 tags=pricing,q1 -->
- request: Compare our pricing with the top 5 competitors
- analysis: scraped pricing pages, pulled internal data
- decisions: recommend a 15% cut on the starter tier
- outcome: report shared with the team
- references: knowledge/pricing-strategy.md
"""

HIPOCAMPUS_LOG = """\
# 2026-03-12

## [Pricing Research] [project]
- request: compare competitor pricing
- analysis: scraped 5 pricing pages
  and pulled the internal numbers
- decisions: cut starter tier by 15%
- outcome: report in knowledge/pricing.md
- references: knowledge/pricing.md

## [Tone of reports] [Feedback]
- rule: keep executive summaries under 5 bullets
- why: the team reads them on phones
- how-to-apply: every report in reports/

## Free notes
Talked to Dana about Q2.
### Follow-ups
- send the deck
"""


def test_design_example_parses_into_every_part():
    (cp,) = parse_log(DESIGN_EXAMPLE, date="2026-03-12")
    assert cp.title == "Competitor pricing"
    assert cp.type == "project"
    assert cp.id == "2026-03-12T14:32:05Z-7f3a"
    assert cp.notebook == "analysis.ipynb"
    assert cp.cell == "7"
    assert cp.tags == ("pricing", "q1")
    assert [key for key, _ in cp.fields] == list(TASK_FIELDS)
    assert cp.field("decisions") == "recommend a 15% cut on the starter tier"
    assert cp.get("references") == "knowledge/pricing-strategy.md"
    assert cp.field("missing") is None
    assert cp.text == ""
    assert (cp.date, cp.line) == ("2026-03-12", 1)


def test_hipocampus_log_without_comment_lines():
    pricing, tone, notes = parse_log(HIPOCAMPUS_LOG, date="2026-03-12")

    assert (pricing.title, pricing.type, pricing.id, pricing.tags) == (
        "Pricing Research",
        "project",
        None,
        (),
    )
    assert pricing.field("analysis") == "scraped 5 pricing pages\nand pulled the internal numbers"
    assert pricing.line == 3

    assert (tone.title, tone.type) == ("Tone of reports", "feedback")
    assert [key for key, _ in tone.fields] == list(FEEDBACK_FIELDS)
    assert tone.field("how-to-apply") == "every report in reports/"
    assert tone.line == 11

    assert notes.type == "project"
    assert notes.text == "Talked to Dana about Q2.\n### Follow-ups\n- send the deck"
    assert notes.fields == ()


def test_list_items_that_are_not_fields_stay_text():
    (cp,) = parse_log("## Notes\n- send the deck\n- see http://example.com\n- Owner: Dana\n")
    assert cp.text == "- send the deck\n- see http://example.com"
    assert cp.fields == (("owner", "Dana"),)


def test_unknown_fields_are_kept_and_keys_lower_cased():
    (cp,) = parse_log("## X\n- Request: a\n- Extra-Note-2: b\n- request: second\n")
    assert cp.fields == (("request", "a"), ("extra-note-2", "b"), ("request", "second"))
    assert cp.field("REQUEST") == "a"


def test_continuation_lines_join_and_keep_deeper_indentation():
    log = "## X\n- analysis: first\n  second\n    nested\n\n  after a blank line\n"
    (cp,) = parse_log(log)
    assert cp.field("analysis") == "first\nsecond\n  nested"
    assert cp.text == "after a blank line"


def test_text_before_the_first_heading_is_a_checkpoint_and_the_header_is_not():
    log = (
        "# 2026-03-12 session log\n\nMorning: checked the ETL job, all green.\n\n"
        "## Later [user]\nx\n"
    )
    first, second = parse_log(log, date="2026-03-12")
    assert first.title == "Morning: checked the ETL job, all green."
    assert first.text == "Morning: checked the ETL job, all green."
    assert first.line == 3
    assert first.date == "2026-03-12"
    assert (second.title, second.type, second.line) == ("Later", "user", 5)


def test_preamble_title_is_its_first_words():
    (cp,) = parse_log("one two three four five six seven eight nine ten\nmore\n")
    assert cp.title == "one two three four five six seven eight"
    assert cp.text.startswith("one two")


def test_header_alone_or_empty_text_gives_nothing():
    assert parse_log("") == []
    assert parse_log("# 2026-03-12\n\n\n") == []
    assert parse_log("\n   \n") == []


def test_only_level_two_headings_split():
    log = "## A\n### sub\n#### deeper\n##no-space is text\n# level one inside\n## B\n"
    a, b = parse_log(log)
    assert a.text == "### sub\n#### deeper\n##no-space is text\n# level one inside"
    assert b.title == "B"
    assert parse_log("## \n")[0].title == ""
    assert len(parse_log("##\n##\tTabbed\n")) == 2


def test_comment_line_only_counts_right_after_the_heading():
    log = "## A\n\n<!-- hipo id=x -->\n"
    (cp,) = parse_log(log)
    assert cp.id is None
    assert cp.text == "<!-- hipo id=x -->"


def test_comment_values_are_percent_decoded_and_unknown_keys_ignored():
    log = "## A [user]\n<!-- hipo id=1 notebook=My%20Analysis%20%3D%201.ipynb future=x -->\n"
    (cp,) = parse_log(log)
    assert cp.notebook == "My Analysis = 1.ipynb"
    assert cp.id == "1"
    assert cp.type == "user"


def test_crlf_logs_parse_like_lf_logs():
    assert parse_log(DESIGN_EXAMPLE.replace("\n", "\r\n")) == parse_log(DESIGN_EXAMPLE)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Competitor pricing [project] #pricing #q1",
            ("Competitor pricing", "project", ("pricing", "q1")),
        ),
        ("Competitor pricing", ("Competitor pricing", "project", ())),
        ("Tone [FEEDBACK]", ("Tone", "feedback", ())),
        ("[Topic Name] [reference]", ("Topic Name", "reference", ())),
        ("Notes [draft]", ("Notes [draft]", "project", ())),
        ("A [user] [project]", ("A [user]", "project", ())),
        ("Fix #12 in C# [user] #bugs", ("Fix #12 in C#", "user", ("bugs",))),
        ("Learn C# #lang", ("Learn C#", "project", ("lang",))),
        ("  spaced   [user]  ", ("spaced", "user", ())),
        ("", ("", "project", ())),
        ("#only", ("", "project", ("only",))),
        ("x[user]", ("x[user]", "project", ())),
    ],
)
def test_parse_title(line, expected):
    assert parse_title(line) == expected


def test_parse_body_takes_typed_text_literally():
    body = "- request: compare\n  across tiers\nsome notes\n## not a heading here\n\\## kept\n"
    fields, text = parse_body(body)
    assert fields == (("request", "compare\nacross tiers"),)
    assert text == "some notes\n## not a heading here\n\\## kept"


def test_render_writes_the_design_format():
    cp = Checkpoint(
        "Competitor pricing",
        fields=(("request", "Compare"), ("outcome", "shared")),
        id="2026-03-12T14:32:05Z-7f3a",
        notebook="analysis.ipynb",
        cell="7",
        tags=("pricing", "q1"),
        text="More notes.",
    )
    assert render(cp) == (
        "## Competitor pricing [project]\n"
        "<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7"
        " tags=pricing,q1 -->\n"
        "- request: Compare\n"
        "- outcome: shared\n"
        "\n"
        "More notes.\n"
    )


def test_render_without_metadata_is_plain_hipocampus():
    cp = Checkpoint("Tone", type="feedback", fields=(("rule", "short"), ("why", "phones")))
    assert render(cp) == "## Tone [feedback]\n- rule: short\n- why: phones\n"


def test_render_escapes_lines_that_would_change_structure():
    cp = Checkpoint("A", text="ok\n## heading\n- key: value\n<!-- hipo id=9 -->\n\\## was escaped")
    rendered = render(cp)
    assert rendered.splitlines()[1:] == [
        "ok",
        "\\## heading",
        "\\- key: value",
        "\\<!-- hipo id=9 -->",
        "\\\\## was escaped",
    ]
    assert parse_log(rendered) == [cp]


def test_render_percent_encodes_comment_values():
    cp = Checkpoint("A", notebook='Q1 <draft> --> "final".ipynb', cell="a=b", tags=("x,y", "z"))
    comment = render(cp).splitlines()[1]
    assert comment.count("-->") == 1 and comment.endswith(" -->")
    assert "notebook=Q1%20%3Cdraft%3E%20--%3E%20%22final%22.ipynb" in comment
    assert "tags=x%2Cy,z" in comment
    assert parse_log(render(cp)) == [cp]


@pytest.mark.parametrize("title", ["[bracketed]", "ends in #tag", "x [feedback]", "  "])
def test_titles_the_heading_cannot_carry_go_into_the_comment(title):
    cp = Checkpoint(title, type="user")
    assert parse_log(render(cp)) == [cp]
    assert render(cp).startswith(f"## {cp.title} [user]" if cp.title else "## [user]")


def test_checkpoint_normalises_values():
    cp = Checkpoint(
        " two\nlines ",
        type="Feedback",
        fields=[("Rule", " keep it short \r\n")],
        text="\n  body\r\n",
        tags=[" a ", "", "b"],
    )
    assert cp.title == "two lines"
    assert cp.type == "feedback"
    assert cp.fields == (("rule", "keep it short"),)
    assert cp.text == "body"
    assert cp.tags == ("a", "b")


def test_checkpoint_rejects_what_cannot_be_written():
    with pytest.raises(ValueError, match="type"):
        Checkpoint("x", type="misc")
    with pytest.raises(ValueError, match="field name"):
        Checkpoint("x", fields=(("two words", "v"),))


def test_equality_ignores_where_a_checkpoint_was_read():
    assert Checkpoint("x", date="2026-03-12", line=4) == Checkpoint("x")


def test_search_text_holds_title_tags_fields_and_text():
    cp = Checkpoint("Pricing", tags=("q1",), fields=(("outcome", "15% cut"),), text="Dana agreed")
    assert cp.search_text().split("\n") == ["Pricing", "q1", "outcome: 15% cut", "Dana agreed"]


def test_new_id_is_utc_seconds_and_eight_hex_digits():
    plus_two = timezone(timedelta(hours=2))
    assert new_id(datetime(2026, 3, 12, 16, 32, 5, tzinfo=plus_two)).startswith(
        "2026-03-12T14:32:05Z-"
    )
    assert new_id(datetime(2026, 3, 12, 14, 32, 5)).startswith("2026-03-12T14:32:05Z-")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ-[0-9a-f]{8}", new_id())
    assert len({new_id(datetime(2026, 1, 1)) for _ in range(50)}) > 1


# -- property tests ---------------------------------------------------------------------------

# Fragments that look like structure, mixed into arbitrary text so escapes get exercised often.
TRICKY_LINES = st.sampled_from(
    [
        "## heading",
        "##",
        "## [project]",
        "- key: value",
        "- how-to-apply:",
        "  indented",
        "\\## escaped",
        "\\\\- k: v",
        "\\",
        "<!-- hipo id=1 title=x -->",
        "<!-- hipo",
        "# title",
        "[feedback]",
        "#tag",
        "-->",
        "%20",
        "",
        " ",
    ]
)
TEXT = st.one_of(
    st.text(),
    st.lists(st.one_of(TRICKY_LINES, st.text(max_size=12)), max_size=8).map("\n".join),
)
KEYS = st.from_regex(r"[A-Za-z0-9-]{1,12}", fullmatch=True)
OPTIONAL = st.none() | TEXT
CHECKPOINTS = st.builds(
    Checkpoint,
    title=TEXT,
    type=st.sampled_from(CHECKPOINT_TYPES + ("Feedback", "USER")),
    fields=st.lists(st.tuples(KEYS, TEXT), max_size=5).map(tuple),
    text=TEXT,
    id=OPTIONAL,
    tags=st.lists(TEXT, max_size=4).map(tuple),
    notebook=OPTIONAL,
    cell=OPTIONAL,
    sources=st.lists(TEXT, max_size=3).map(tuple),  # lineage (issue 48): encoded like tags
    conversation=OPTIONAL,
    speaker=OPTIONAL,  # an imported turn's speaker: who spoke, when the title no longer says it
)


@settings(max_examples=300)
@given(CHECKPOINTS)
def test_render_then_parse_gives_the_checkpoint_back(cp):
    assert parse_log(render(cp)) == [cp]


@settings(max_examples=150)
@given(st.lists(CHECKPOINTS, min_size=1, max_size=5), st.sampled_from(["", "\n"]))
def test_a_log_of_rendered_checkpoints_parses_back_with_lines(cps, separator):
    header = "# 2026-03-12\n\n"
    blocks = [render(cp) for cp in cps]
    parsed = parse_log(header + separator.join(blocks), date="2026-03-12")
    assert parsed == cps
    expected_line = 3
    for cp, block in zip(parsed, blocks, strict=True):
        assert cp.line == expected_line
        assert cp.date == "2026-03-12"
        expected_line += block.count("\n") + separator.count("\n")


@settings(max_examples=300)
@given(TEXT)
def test_parse_log_never_raises_and_its_checkpoints_round_trip(text):
    parsed = parse_log(text)
    for cp in parsed:
        assert parse_log(render(cp)) == [cp]


@given(st.text())
def test_parse_title_and_parse_body_never_raise(text):
    title, kind, tags = parse_title(text)
    assert kind in CHECKPOINT_TYPES
    assert all(tags)
    fields, _ = parse_body(text)
    assert all(key == key.lower() for key, _ in fields)
