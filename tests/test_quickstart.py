"""notebooks/quickstart.ipynb runs top to bottom in a fresh folder, with a real kernel of this
interpreter, and leaves a memory beside it: the walkthrough in the README cannot rot silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hipo_jupyter.cli.demo import execute_notebook, notebook_today

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def output_text(cell: nbformat.NotebookNode) -> str:
    """Everything a code cell showed: streams, results and rich displays (text and HTML)."""
    chunks = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            chunks.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in output.data:
                    chunks.append(str(output.data[mime]))
        elif output.output_type == "error":
            chunks.append(f"{output.ename}: {output.evalue}")
    return "\n".join(chunks)


def cells_with(notebook: nbformat.NotebookNode, source_start: str) -> list[str]:
    """What each cell starting with `source_start` showed; a cell that drew widgets also shows
    the widgets' saved state (their text lives there, not in the output)."""
    widget_state = json.dumps(notebook.metadata.get("widgets", {}))
    shown = []
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.source.lstrip().startswith(source_start):
            text = output_text(cell)
            if any(WIDGET_VIEW in output.get("data", {}) for output in cell.outputs):
                text += "\n" + widget_state
            shown.append(text)
    return shown


def test_committed_notebook_has_no_outputs() -> None:
    notebook = nbformat.read(QUICKSTART, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, nbformat.NotebookNode]:
    folder = tmp_path_factory.mktemp("quickstart")
    notebook = folder / QUICKSTART.name
    shutil.copyfile(QUICKSTART, notebook)
    return folder, execute_notebook(notebook, timeout=120, today=notebook_today(notebook))


@pytest.mark.skipif(
    not (REPO / "hipo_jupyter" / "ipython" / "__init__.py").is_file(),
    reason="the IPython extension is not there yet",
)
class TestQuickstart:
    def test_runs_without_errors(self, executed) -> None:
        _, notebook = executed
        errors = [
            output
            for cell in notebook.cells
            for output in cell.get("outputs", [])
            if output.output_type == "error"
        ]
        assert errors == []
        code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(cell.execution_count for cell in code_cells)

    def test_memory_lives_in_the_notebook_folder(self, executed) -> None:
        folder, _ = executed
        memory = folder / "memory"
        assert (memory / "ROOT.md").is_file()
        assert list((memory / "daily").glob("*.md"))
        assert list((memory / "weekly").glob("*.md"))
        raw_days = sorted(p.stem for p in memory.glob("????-??-??.md"))
        assert len(raw_days) >= 4  # entries spread over several days with --date
        root = (memory / "ROOT.md").read_text(encoding="utf-8")
        assert "## Topics Index" in root and "pricing" in root

    def test_checkpoints_were_written_by_the_cells(self, executed) -> None:
        folder, notebook = executed
        titles = [
            cell.source.splitlines()[0]
            for cell in notebook.cells
            if cell.cell_type == "code" and cell.source.startswith("%%remember")
        ]
        assert len(titles) >= 5
        logs = "".join(p.read_text(encoding="utf-8") for p in (folder / "memory").glob("*.md"))
        assert "[feedback]" in logs
        assert "Competitor pricing" in logs

    def test_outputs_show_topics_recall_and_budget(self, executed) -> None:
        _, notebook = executed
        (topics,) = cells_with(notebook, "%hipo topics")
        for topic in ("pricing", "onboarding", "churn"):
            assert topic in topics
        (recall,) = cells_with(notebook, "%recall pricing")
        assert "Competitor pricing" in recall
        (budget,) = cells_with(notebook, "%hipo budget")
        assert "ROOT" in budget
        (status,) = cells_with(notebook, "%hipo status")
        assert "checkpoints" in status.lower()

    def test_outputs_show_rules_a_dataframe_and_sparql(self, executed) -> None:
        _, notebook = executed
        (rules,) = cells_with(notebook, "%hipo rules")
        assert "- before a price change -> tell sales a week ahead -> memory/2026-03-11" in rules
        (layer1,) = cells_with(notebook, "%hipo layer1")
        assert "before a price change -> tell sales a week ahead" in layer1
        (frame,) = cells_with(notebook, "%recall --df churn")
        assert "Churn model" in frame and "score" in frame
        (sparql,) = cells_with(notebook, "%%sparql")
        assert "checkpoints" in sparql and "project" in sparql and "feedback" in sparql
