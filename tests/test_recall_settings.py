"""Recall's tunables are one typed object (issue 54, items 3 and 5): `RecallSettings`, passed to
`Memory.recall` and `Memory.context`, checked when made; and one default mode for the library
and every front end."""

from __future__ import annotations

import inspect
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.cli.parser import build_parser
from hipo_jupyter.ipython import widgets
from hipo_jupyter.ipython.config import Hipo
from hipo_jupyter.mcp import server as mcp_server
from hipo_jupyter.memory import (
    DEFAULT_RECALL_MODE,
    DEFAULT_SETTINGS,
    Memory,
    RecallSettings,
    RequestError,
)
from hipo_jupyter.server import handlers

TODAY = date(2026, 3, 12)


def test_the_library_and_every_front_end_default_to_one_mode() -> None:
    for method in (Memory.recall, Memory.context):
        assert inspect.signature(method).parameters["mode"].default == DEFAULT_RECALL_MODE
    assert build_parser().parse_args(["recall", "pricing"]).mode == DEFAULT_RECALL_MODE
    assert Hipo().recall_mode == DEFAULT_RECALL_MODE  # %recall and %%ask
    # the server's `mode=`, MCP's recall and the recall widget: the same constant, no literal
    for module in (handlers, mcp_server, widgets):
        source = inspect.getsource(module)
        assert "DEFAULT_RECALL_MODE" in source and 'mode="auto"' not in source
        assert '"mode") or "auto"' not in source


def test_recall_with_no_mode_is_the_front_ends_recall(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: TODAY)
    memory.remember("Pricing", "- decisions: cut the starter tier by 15%", on=TODAY)
    library = memory.recall("starter tier")
    asked = memory.recall("starter tier", mode=DEFAULT_RECALL_MODE)
    assert [h.location for h in library.hits] == [h.location for h in asked.hits]
    assert library.mode == asked.mode
    memory.close()


def test_a_weight_passed_in_orders_the_hits(memory_root: Path) -> None:
    """`topic_boost` is read from the settings passed: a note tagged with the query's topic but
    matching less comes first only when the boost is large."""
    memory = Memory(memory_root, today=lambda: TODAY)
    memory.remember("Budget #pricing", "- note: the budget review", on=date(2026, 3, 2))
    memory.remember(
        "Pricing review", "- decisions: pricing pricing review of the pricing page",
        on=date(2026, 3, 3),
    )
    plain = memory.recall("pricing", k=2, settings=RecallSettings(topic_boost=0.0))
    boosted = memory.recall("pricing", k=2, settings=RecallSettings(topic_boost=5.0))
    assert plain.hits[0].title == "Pricing review"
    assert boosted.hits[0].title == "Budget"
    memory.close()


def test_defaults_are_one_object_and_bad_values_are_one_line() -> None:
    assert RecallSettings() == DEFAULT_SETTINGS
    with pytest.raises(RequestError, match="day_weight must be a finite number"):
        RecallSettings(day_weight=float("nan"))
    with pytest.raises(RequestError, match="subject_depth must be a whole number"):
        RecallSettings(subject_depth=2.5)  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="weak_vector_hits must be a whole number"):
        RecallSettings(weak_vector_hits=3.0)  # type: ignore[arg-type]  (a slice needs an int)
    with pytest.raises(RequestError, match="second_hop must be true or false"):
        RecallSettings(second_hop="yes")  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="layer1_share must be a number at least 0"):
        RecallSettings(layer1_share=-0.1)
