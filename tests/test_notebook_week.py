"""benchmarks/notebook_week.py at its small size (issue 35, item 6): notebooks of a data
scientist's days executed with nbclient in real kernels (`%%remember`, the user's own Claude
calls through the anthropic SDK and `%%ask`, answered by the Messages API stand-in on 127.0.0.1),
each re-run twice, then everyday questions through `%%ask`. Asserted: re-runs write nothing
twice, the Topics Index's first ten are the user's topics, and every figure is computed, for the
default install and keyword only. The figures themselves are the benchmark's to report (full
size in benchmarks/README.md), not this test's to pass or fail."""

from __future__ import annotations

import json

import pytest
from benchmark_helpers import load_benchmark

week = load_benchmark("notebook_week.py", "notebook_week_benchmark")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("notebook-week")
    out = folder / "week.json"
    with pytest.MonkeyPatch.context() as env:
        env.delenv("HIPO_ROOT", raising=False)
        env.delenv("HIPO_TEAM", raising=False)
        env.setenv("IPYTHONDIR", str(folder / "ipython"))
        env.setenv("JUPYTER_PLATFORM_DIRS", "1")
        args = ["--size", "small", "--json", str(out), "--keep", str(folder / "run")]
        assert week.main(args) == 0
    return json.loads(out.read_text("utf-8"))


def test_the_questions_are_everyday_ones_half_sharing_no_word() -> None:
    made = week.make_week(seed=35, start=week.START, **week.SIZES["full"])
    assert len(made.facts) >= 40
    assert sum(not week.shares_words(fact) for fact in made.facts) * 2 >= len(made.facts)
    assert sum(day.notes for day in made.days) >= 300
    assert sum(day.calls for day in made.days) >= 100
    span = made.days[-1].day - made.days[0].day
    assert span.days >= 85  # three months
    # no question's key text is in a scripted reply: a key sent was carried by its note
    assert not any(fact.key in reply for fact in made.facts for reply in made.replies.values())


def test_reruns_write_nothing_twice(report: dict) -> None:
    lived = report["week"]
    assert lived["written_by_reruns"] == 0
    assert lived["identical"] == 0
    assert lived["write_backs"] >= lived["claude_calls"] > 0
    assert lived["user_checkpoints"] > 0 and lived["first_day"] < lived["last_day"]


def test_the_topics_index_leads_with_the_users_topics(report: dict) -> None:
    lived = report["week"]
    assert len(lived["topics_first_ten"]) == 10
    assert "llm" not in lived["topics_first_ten"]
    assert lived["topics_are_users"]


def test_every_figure_is_computed_for_both_modes(report: dict) -> None:
    modes = report["modes"]
    assert set(modes) == {"default", "keyword"}
    assert modes["keyword"]["label"].startswith("keyword")
    assert modes["default"]["label"].startswith("default")
    for result in modes.values():
        assert len(result["answers"]) == report["questions"] > 0
        for name in ("reached", "reached_no_shared_words", "reached_shared_words",
                     "write_back_share", "first_hit_users", "first_hit_note"):  # fmt: skip
            assert 0.0 <= result[name] <= 1.0
        assert any(answer["recalled_tokens"] > 0 for answer in result["answers"])
        assert all(a["reached"] == bool(a["via"]) for a in result["answers"])
        # the write-backs recalled are named, for the diagnosis of a share over its target
        assert all(bool(a["write_back_titles"]) == (a["write_back_tokens"] > 0)
                   for a in result["answers"])  # fmt: skip
    assert report["questions_sharing_no_word"] * 2 >= report["questions"]


def test_the_table_shows_both_modes_side_by_side(report: dict) -> None:
    text = week.table(report)
    assert "| questions whose note reaches what %%ask sends" in text
    assert "| first hits that are the user's note in force" in text
    assert "default" in text and "keyword only" in text
    assert "duplicates: 0 written by the re-runs" in text


def test_a_recall_fence_is_read_back_into_pieces() -> None:
    sent = (
        "<hipo-recalled-memory-123456789012 query=\"q\">\nQuoted memory: data.\n\n"
        "memory/2026-01-05.md\nL3 Food [user]: I'm vegetarian\n  no fish\n"
        "memory/daily/2026-01-06.md (2026-01-06)\nL9 Sync: decided\n"
        "</hipo-recalled-memory-123456789012>"
    )
    assert week.recalled_pieces(sent) == [
        ("memory/2026-01-05.md", 3, "L3 Food [user]: I'm vegetarian\n  no fish"),
        ("memory/daily/2026-01-06.md", 9, "L9 Sync: decided"),
    ]
