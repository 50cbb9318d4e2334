"""The ipywidgets, built without a kernel, checked after the memory changes under them."""

from __future__ import annotations

import textwrap
from datetime import date
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hipo_jupyter.ipython.widgets import (
    HEALTHY,
    OVER,
    TIGHT,
    ContextBudget,
    TopicIndex,
    budget_text,
    live_level,
    part_level,
    show_budget,
    show_topics,
    topics_text,
)
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.tree.tokens import count_tokens

PRICING = """\
- request: Compare our pricing with the top 5 competitors
- decisions: recommend a 15% cut on the starter tier
- outcome: report shared with the team
"""


@pytest.fixture
def memory(memory_root: Path, fixed_today: date) -> Memory:
    memory = Memory(memory_root, today=lambda: fixed_today)
    yield memory
    memory.close()


@pytest.fixture
def remembered(memory: Memory) -> Memory:
    memory.remember("Competitor pricing", PRICING, tags=["pricing", "q1"])
    return memory


def fill_scratchpad(memory: Memory, tokens: int) -> None:
    """Write SCRATCHPAD.md with about `tokens` tokens (one token per repeated word)."""
    words = " ".join(["memory"] * tokens)
    (memory.root / "SCRATCHPAD.md").write_text(words)
    assert abs(count_tokens(words) - tokens) <= 2


# --- TopicIndex ----------------------------------------------------------------------------


def test_topic_index_shows_a_new_topic_after_remember(memory):
    index = TopicIndex(memory)
    assert index.topic_names == []
    assert "empty" in index.header.value
    memory.remember("Competitor pricing", PRICING, tags=["pricing"])
    assert "pricing" in index.topic_names
    titles = index.topics_view.titles
    assert any(title.startswith("pricing [project, 0d]") for title in titles)
    assert len(index.topics_view.children) == len(index.topic_names)


def test_topic_nodes_are_disabled_until_compaction_builds_them(remembered):
    index = TopicIndex(remembered)
    month = _node_button(index, "pricing", "2026-03")
    assert month.disabled
    remembered.compact()  # the "compact" event redraws the index
    month = _node_button(index, "pricing", "2026-03")
    assert not month.disabled
    month.click()
    assert index.opened == "memory/monthly/2026-03.md"
    assert "starter tier" in index.content.value


def test_clicking_the_raw_log_shows_the_checkpoint_inline(remembered):
    index = TopicIndex(remembered)
    _node_button(index, "pricing", "2026-03-12 (raw)").click()
    assert index.opened == "memory/2026-03-12.md"
    assert "## Competitor pricing" in index.content.value


def _node_button(index: TopicIndex, topic: str, label: str):
    box = index.topics_view.children[index.topic_names.index(topic)]
    for row in box.children:
        for child in getattr(row, "children", ()):
            if getattr(child, "description", None) == label:
                return child
    raise AssertionError(f"no node button {label!r} under {topic!r}")


def test_search_box_runs_recall_and_lists_hits_with_their_path(remembered):
    index = TopicIndex(remembered)
    index.search_box.value = "starter tier"  # what pressing Enter in the box does
    assert index.last_result is not None and index.last_result.hits
    assert len(index.results.children) == len(index.last_result.hits)
    first = index.last_result.hits[0]
    summary = index.results.children[0].children[1].value
    assert "Competitor pricing" in summary
    assert (first.path[-1] if first.path else first.file) in summary
    index.results.children[0].children[0].click()  # "open"
    assert index.opened == first.file


def test_search_without_hits_says_so(remembered):
    index = TopicIndex(remembered)
    result = index.search("zebra migration patterns")
    assert result is not None and not result.hits
    assert "No memory of" in index.results.children[0].value


def test_closed_index_stops_listening(memory):
    index = TopicIndex(memory)
    index.close()
    memory.remember("Churn dashboard", "- outcome: dashboard live", tags=["churn"])
    assert index.topic_names == []


def test_topic_index_falls_back_to_text(remembered):
    bundle = TopicIndex(remembered)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == topics_text(remembered)
    assert "- pricing [project, 0d]" in bundle["text/plain"]


# --- ContextBudget -------------------------------------------------------------------------


def test_budget_has_one_bar_per_layer1_part(memory):
    budget = ContextBudget(memory)
    assert list(budget.part_bars) == ["ROOT", "SCRATCHPAD", "WORKING", "TASK-QUEUE"]
    assert all(bar.value == 0 and bar.bar_style == "success" for bar in budget.part_bars.values())
    assert budget.live_row.layout.display == "none"


def test_budget_bars_follow_the_files_and_turn_tight_then_over(memory):
    budget = ContextBudget(memory)
    fill_scratchpad(memory, 1300)  # of 1,500
    budget.refresh()
    assert budget.part_bars["SCRATCHPAD"].bar_style == "warning"
    assert 85 <= budget.part_bars["SCRATCHPAD"].value <= 88
    fill_scratchpad(memory, 2000)
    budget.refresh()
    assert budget.part_bars["SCRATCHPAD"].bar_style == "danger"
    assert budget.part_bars["SCRATCHPAD"].value == 100
    assert "cut to budget" in budget.part_labels["SCRATCHPAD"].value


def test_budget_shows_root_once_written_and_after_compaction(remembered):
    budget = ContextBudget(remembered)
    assert budget.part_bars["ROOT"].value > 0  # the write itself updated ROOT.md
    remembered.compact()
    assert budget.part_bars["ROOT"].value > 0
    assert "/ 3,000 tokens" in budget.part_labels["ROOT"].value


@pytest.mark.parametrize(
    ("live", "style", "level"),
    [(41_000, "success", HEALTHY), (100_000, "warning", TIGHT), (160_000, "danger", OVER)],
)
def test_live_conversation_bar_is_coloured_at_50_and_80_percent(memory, live, style, level):
    budget = ContextBudget(memory, live_tokens=live, window=200_000)
    assert budget.live_row.layout.display is None
    assert budget.live_bar.bar_style == style
    assert budget.live_level == level
    assert f"{live:,} / 200,000 tokens" in budget.live_label.value


def test_set_live_shows_and_hides_the_conversation(memory):
    budget = ContextBudget(memory)
    budget.set_live(150_000, 200_000)
    assert budget.live_bar.value == 75 and budget.live_bar.bar_style == "warning"
    budget.set_live(None, None)
    assert budget.live_row.layout.display == "none"
    assert "Conversation" not in budget.text()


def test_levels_at_their_thresholds():
    assert [live_level(f) for f in (0.49, 0.5, 0.79, 0.8)] == [HEALTHY, TIGHT, TIGHT, OVER]
    assert [part_level(f) for f in (0.79, 0.8, 1.0, 1.01)] == [HEALTHY, TIGHT, TIGHT, OVER]


def test_budget_text_lists_parts_and_the_live_fill(remembered):
    remembered.compact()
    text = budget_text(remembered, live_tokens=41_000, window=200_000)
    assert text.splitlines()[0].startswith("Layer 1: ")
    assert [line.split()[0] for line in text.splitlines()[2:6]] == [
        "ROOT",
        "SCRATCHPAD",
        "WORKING",
        "TASK-QUEUE",
    ]
    assert "Conversation:" in text and "41,000 / 200,000 tokens" in text and "healthy" in text


# --- show_* --------------------------------------------------------------------------------


def test_show_outside_a_kernel_prints_text(remembered, capsys):
    show_topics(remembered)
    show_budget(remembered)
    out = capsys.readouterr().out
    assert "Topics Index (2 topics)" in out  # #pricing and #q1
    assert "- pricing [project, 0d]" in out
    assert "Layer 1:" in out and "SCRATCHPAD" in out


def test_show_in_a_kernel_displays_the_widget_with_a_text_fallback(memory_root, tmp_path):
    """A real kernel (as nbconvert runs it): the output carries the widget view and, for viewers
    without widget state, the text rendering."""
    repo = Path(__file__).resolve().parent.parent
    source = textwrap.dedent(
        f"""
        import sys; sys.path.insert(0, {str(repo)!r})
        from hipo_jupyter.memory import Memory
        from hipo_jupyter.ipython.widgets import show_topics, show_budget
        memory = Memory({str(memory_root)!r})
        memory.remember("Competitor pricing", "- outcome: report shared", tags=["pricing"])
        show_topics(memory)
        show_budget(memory, live_tokens=41000, window=200000)
        """
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()
    outputs = notebook.cells[0].outputs
    assert [o["output_type"] for o in outputs] == ["display_data", "display_data"], outputs
    topics, budget = (o["data"] for o in outputs)
    assert "application/vnd.jupyter.widget-view+json" in topics
    assert "- pricing [project, 0d]" in topics["text/plain"]
    assert "Conversation:" in budget["text/plain"]
