"""A notebook run with the extension stays small and readable once saved.

Real nbclient runs (a kernel of this interpreter): the quickstart, and a notebook that shows
the widgets first and then writes and compacts under them, so every redraw happens while they
are on screen. The saved widget state stays under 100 KB, holds no model that no output
reaches (a redraw closes what it drops), no progress bar is saved mid-way (the kernel's bar is
a display output whose last update is the finished line), and every widget output carries a
text and HTML rendering for readers that cannot restore the widget."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat

from hipo_jupyter.cli.demo import execute_notebook, notebook_today

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MAX_WIDGET_STATE = 100_000
# 0% .. 99% as a bar draws it (tqdm's "15%|", ours "15% 3/20"): a bar saved before it finished
MIDWAY = re.compile(r"\b(?:\d|[1-9]\d)%(?:\||\s+\d+/\d+)")

REDRAWS = [
    "%load_ext hipo",
    "%hipo topics",
    "%hipo budget",
    *(
        f"%%remember Pricing review {n} #pricing #{topic}\n"  # today's: the pass below has work
        f"- decisions: keep the starter tier at {n}0 EUR"
        for n, topic in zip(range(1, 9), ["q1", "churn", "q1", "churn"] * 2, strict=True)
    ),
    "%hipo compact",
    "%hipo reindex",
]


def saved(notebook: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """Write the executed notebook and read it back, as a person reopening it would."""
    path = folder / "saved.ipynb"
    nbformat.write(notebook, path)
    reopened = nbformat.read(path, as_version=4)
    nbformat.validate(reopened)
    return reopened


def widget_state(notebook: nbformat.NotebookNode) -> dict:
    return notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def reachable(state: dict, roots: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        model = todo.pop()
        if model in seen or model not in state:
            continue
        seen.add(model)
        todo += re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(state[model]["state"]))
    return seen


def check(notebook: nbformat.NotebookNode) -> dict:
    size = len(json.dumps(notebook.metadata.get("widgets", {})))
    state = widget_state(notebook)
    shown: set[str] = set()
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            text = output.get("text", "") + str(data.get("text/plain", ""))
            assert not MIDWAY.search(text), f"a bar saved mid-way in {cell.source[:30]!r}: {text}"
            if WIDGET_VIEW in data:
                shown.add(data[WIDGET_VIEW]["model_id"])
                assert data.get("text/plain", "").strip(), cell.source
                assert data.get("text/html", "").startswith("<pre>"), cell.source
    orphans = set(state) - reachable(state, shown)
    assert size <= MAX_WIDGET_STATE, f"{size:,} bytes of widget state"
    assert not orphans, f"{len(orphans)} of {len(state)} models are reached by no output"
    return {"bytes": size, "models": len(state), "widgets": len(shown)}


def test_the_run_quickstart_saves_little_widget_state(tmp_path: Path) -> None:
    notebook = tmp_path / QUICKSTART.name
    shutil.copy(QUICKSTART, notebook)
    executed = execute_notebook(notebook, today=notebook_today(QUICKSTART))
    figures = check(saved(executed, tmp_path))
    assert figures["widgets"] >= 2  # the topics and the budget are still widgets


def test_redraws_under_the_widgets_leave_no_orphans(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in REDRAWS]
    )
    path = tmp_path / "redraws.ipynb"
    nbformat.write(notebook, path)
    executed = execute_notebook(path, today="2026-03-12")
    reopened = saved(executed, tmp_path)
    figures = check(reopened)
    assert figures["widgets"] == 2
    assert "churn" in json.dumps(widget_state(reopened))  # the index shown first was redrawn
    compact = next(c for c in reopened.cells if c.source == "%hipo compact")
    finished = [o for o in compact.outputs if o.output_type == "display_data"]
    assert finished and "compacting: 100%" in finished[0].data["text/plain"]
    assert "<progress" in finished[0].data["text/html"]
