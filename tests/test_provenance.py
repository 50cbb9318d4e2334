"""Provenance: every checkpoint says where it came from (notebook, cell, front end, and for a
write-back the model id of the request), in the comment line; old checkpoints stay valid; the
`%recall` hits, `hipo recall` and the server's hits show it."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from hypothesis import given
from hypothesis import strategies as st

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, parse_log, render
from hipo_jupyter.memory.disk.provenance import FRONT_ENDS, provenance_line, provenance_text
from hipo_jupyter.memory.intake.importers import ImportRecord

OLD_LOG = """\
## Competitor pricing [project]
<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 tags=pricing -->
- decisions: cut the starter tier by 15%
"""


def test_a_checkpoint_without_provenance_fields_still_parses() -> None:
    (checkpoint,) = parse_log(OLD_LOG, date="2026-03-12")
    assert checkpoint.notebook == "analysis.ipynb" and checkpoint.cell == "7"
    assert checkpoint.via is None and checkpoint.model is None
    assert render(checkpoint) == OLD_LOG  # rewritten exactly as it was: no new keys appear
    assert provenance_text(checkpoint) == "analysis.ipynb cell 7"


def test_via_and_model_are_written_in_the_comment_line() -> None:
    checkpoint = Checkpoint(
        "Churn", text="x", id="i", notebook="a.ipynb", cell="3", via="write-back",
        model="claude-sonnet-4-5", provider="anthropic",
    )  # fmt: skip
    comment = render(checkpoint).split("\n")[1]
    assert comment == (
        "<!-- hipo id=i notebook=a.ipynb cell=3 via=write-back model=claude-sonnet-4-5 "
        "provider=anthropic -->"
    )
    assert provenance_text(checkpoint) == (
        "a.ipynb cell 3 (a Claude call's write-back, model claude-sonnet-4-5)"
    )


@given(
    via=st.one_of(st.none(), st.sampled_from(FRONT_ENDS), st.text(min_size=1, max_size=20)),
    model=st.one_of(st.none(), st.text(min_size=1, max_size=40)),
)
def test_provenance_round_trips_for_any_value(via: str | None, model: str | None) -> None:
    checkpoint = Checkpoint("T", text="body", id="x", via=via, model=model)
    (parsed,) = parse_log(render(checkpoint))
    assert (parsed.via, parsed.model) == (checkpoint.via, checkpoint.model)


def test_the_magic_records_itself_and_recall_shows_it(claude_shell, memory_root: Path) -> None:
    run(claude_shell, "%%remember Launch date #launch\n- decisions: launch on April 2")
    (checkpoint,) = Memory(memory_root).recent_checkpoints(5)
    assert checkpoint.via == "magic" and checkpoint.cell
    hits = claude_shell.run_line_magic("recall", "launch")
    assert hits[0].provenance == f"cell {checkpoint.cell}"
    assert f"\n   from cell {checkpoint.cell} · id {checkpoint.id}\n" in str(hits) + "\n"
    assert "from cell" in hits._repr_html_() and "via" not in str(hits)


def test_a_write_back_records_the_model_of_the_request(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    run(
        claude_shell,
        "import anthropic\n"
        "anthropic.Anthropic().messages.create(model='claude-opus-9-1', max_tokens=50,\n"
        "    messages=[{'role': 'user', 'content': 'Which segment churns most?'}])\n",
    )
    (checkpoint,) = Memory(memory_root).recent_checkpoints(5)
    assert checkpoint.via == "write-back"
    assert checkpoint.model == "claude-opus-9-1"  # from the request, not from the reply's text
    hits = claude_shell.run_line_magic("recall", "segment churns")
    assert "model claude-opus-9-1" in hits[0].provenance


def test_cli_and_import_name_themselves(memory_root: Path, monkeypatch, capsys) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("- outcome: shipped the parser"))
    assert cli.main(["--root", str(memory_root), "remember", "Parser shipped"]) == 0
    memory = Memory(memory_root)
    record = ImportRecord(memory.today, "user", "we migrated the warehouse", "turn-1")
    memory.import_records([record])
    vias = {c.title: c.via for c in memory.recent_checkpoints(5)}
    assert vias["Parser shipped"] == "cli"
    assert [via for title, via in vias.items() if title != "Parser shipped"] == ["import"]
    capsys.readouterr()
    assert cli.main(["--root", str(memory_root), "recall", "parser", "--json"]) == 0
    assert '"provenance": "the command line"' in capsys.readouterr().out
    assert cli.main(["--root", str(memory_root), "recall", "parser"]) == 0
    shown = capsys.readouterr().out
    assert "\n   from the command line" in shown and "via cli" not in shown
    assert "\n   outcome: shipped the parser\n" in shown  # the passage, not the title again


def test_an_index_made_before_provenance_was_indexed_gets_it_on_opening(memory_root) -> None:
    """m003 adds the provenance column and forgets the files' hashes: the next sync re-sends
    every file, so hits name their notebook without the raw log being parsed per recall."""
    import sqlite3
    from datetime import date

    from hipo_jupyter.memory import Memory

    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    memory.remember("Churn model", "- outcome: AUC 0.81", notebook="churn.ipynb", cell="4")
    memory.close()
    index = memory_root / "memory" / ".index" / "fts5.sqlite3"
    with sqlite3.connect(index) as db:  # the index as the release before m003 left it
        db.execute("alter table documents drop column provenance")
        db.execute("delete from _migrations where name = 'm003_document_provenance'")
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    hits = memory.recall("churn model").hits
    assert hits and hits[0].provenance == "churn.ipynb cell 4"
    memory.close()


@pytest.mark.parametrize(
    ("fields", "phrase"),
    [
        ({"via": "cli"}, "the command line"),
        ({"via": "mcp"}, "MCP"),
        ({"via": "import"}, "an import"),
        ({"notebook": "analysis.ipynb", "cell": "3", "via": "magic"}, "analysis.ipynb cell 3"),
        ({"notebook": "memory tool"}, "Claude's memory tool"),
        ({"via": "write-back", "model": "m"}, "an LLM call's write-back (model m)"),  # unsaid
        ({"via": "write-back", "provider": "anthropic"}, "a Claude call's write-back"),
        ({"via": "write-back", "provider": "openai"}, "an OpenAI call's write-back"),
        ({}, ""),
    ],
)
def test_provenance_reads_as_a_phrase_after_from(fields: dict, phrase: str) -> None:
    checkpoint = Checkpoint("T", text="body", id="x", **fields)
    assert provenance_text(checkpoint) == phrase
    assert provenance_line(phrase) == (f"from {phrase}" if phrase else "")
