"""What the REST endpoints answer: the engine's results turned into plain JSON-ready dicts.

Kept apart from the handlers so the shapes can be read (and tested) without a server; the
sidebar's TypeScript types in labextension/src/request.ts mirror them.
"""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path
from typing import Any

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import MEMORY_DIR, Checkpoint, parse_node, provenance_text, week_month
from hipo_jupyter.memory.tree import Topic
from hipo_jupyter.memory.views import Rule


def jsonable(value: Any) -> Any:
    """Dataclasses, tuples, dates and paths as JSON values (dataclass properties are left out)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Path):
        return value.as_posix()
    return value


def has_memory(folder: Path) -> bool:
    """A folder has memory once `memory/` exists; the sidebar shows how to start otherwise."""
    return (folder / MEMORY_DIR).is_dir()


def checkpoint_view(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint with its fields and, as `provenance`, the same one-line phrase recall hits
    carry (`analysis.ipynb cell 7 via magic, model ...`, "" when not recorded), so the sidebar
    shows where a recent checkpoint came from exactly as it shows it for a hit."""
    return {**jsonable(checkpoint), "provenance": provenance_text(checkpoint)}


def rule_view(rule: Rule) -> dict[str, Any]:
    """A rule or a proposal as the sidebar lists it: its fields, and whether it is in force
    and active (properties `jsonable` leaves out)."""
    return {**jsonable(rule), "in_force": rule.in_force, "active": rule.active}


def node_statuses(memory: Memory) -> list[dict[str, str]]:
    """Every compaction node, newest period first within each level."""
    return [jsonable(node) for node in memory.nodes()]


def root_sections(root_text: str) -> list[dict[str, str]]:
    """ROOT.md's `## ` sections (Active Context, Recent Patterns, ...) in file order."""
    sections: list[dict[str, str]] = []
    for line in parse_node(root_text).body.splitlines():
        if line.startswith("## "):
            sections.append({"title": line[3:].strip(), "text": ""})
        elif sections:
            sections[-1]["text"] += line + "\n"
    for section in sections:
        section["text"] = section["text"].strip("\n")
    return sections


def topic_tree(topic: Topic, nodes: list[dict[str, str]]) -> dict[str, Any]:
    """One topic as topic -> months -> (monthly node, weekly nodes), files null where not built."""
    by_period = {(n["level"], n["period"]): n for n in nodes}
    periods = []
    for month in topic.months:
        weeks = [w for w in topic.weeks if _month_of_week(w) == month]
        periods.append(
            {
                **_node_ref(by_period, "monthly", month),
                "children": [_node_ref(by_period, "weekly", week) for week in weeks],
            }
        )
    loose = [w for w in topic.weeks if _month_of_week(w) not in topic.months]
    periods.extend({**_node_ref(by_period, "weekly", w), "children": []} for w in loose)
    return {**topic.to_json(), "periods": periods}


def _month_of_week(week: str) -> str | None:
    try:
        return week_month(week)
    except ValueError:
        return None


def _node_ref(by_period: dict, level: str, period: str) -> dict[str, Any]:
    node = by_period.get((level, period))
    return {
        "period": period,
        "level": level,
        "file": node["file"] if node else None,
        "status": node["status"] if node else None,
    }
