"""`Memory.frame()`, `%recall --df` and `hipo export --format csv|parquet|jsonl`: one row per
checkpoint with its type, tags, topics, fields, rule and provenance, from the raw logs."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from claude_helpers import (  # noqa: F401
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.views.frame import COLUMNS

OLD_LOG = """\
## Hand-written note
- outcome: no comment line at all
"""


@pytest.fixture
def memory(memory_root: Path) -> Memory:
    memory = Memory(memory_root)
    memory.remember("Competitor pricing #pricing #q1", "- decisions: cut the starter tier by 15%",
                    on="2026-03-05", notebook="analysis.ipynb", cell="7", via="magic")  # fmt: skip
    memory.remember("Deploys", "- why: thin on-call", on="2026-03-06", trigger="before a deploy",
                    rule="never on a Friday")  # fmt: skip
    memory.remember("Deploys v2", "ok", on="2026-03-07", trigger="before a deploy", rule="Mon-Wed")
    (memory_root / "memory" / "2026-03-01.md").write_text(OLD_LOG, encoding="utf-8")
    return memory


def test_one_row_per_checkpoint_with_every_column(memory: Memory) -> None:
    frame = memory.frame()
    assert list(frame.columns) == list(COLUMNS)
    assert list(frame["title"]) == ["Hand-written note", "Competitor pricing", "Deploys",
                                    "Deploys v2"]  # fmt: skip
    assert str(frame["date"].dtype).startswith("datetime64")
    pricing = frame[frame.title == "Competitor pricing"].iloc[0]
    assert pricing.tags == ["pricing", "q1"] and pricing.topics == ["pricing", "q1"]
    assert pricing.fields == {"decisions": "cut the starter tier by 15%"}
    assert (pricing.notebook, pricing.cell, pricing.via) == ("analysis.ipynb", "7", "magic")
    assert (pricing.file, pricing.line) == ("memory/2026-03-05.md", 1)
    old = frame.iloc[0]
    assert pd.isna(old.id) and pd.isna(old.via)  # no comment line: still a row
    rules = frame.dropna(subset=["trigger"])
    assert list(rules.rule) == ["never on a Friday", "Mon-Wed"]
    assert rules.iloc[0].superseded_by == "memory/2026-03-07.md#L1"
    assert pd.isna(rules.iloc[1].superseded_by)
    assert len(frame[frame.date >= "2026-03-06"]) == 2


def test_the_row_cache_follows_the_raw_logs_in_another_process(memory: Memory) -> None:
    assert len(memory.frame()) == 4
    cache = memory.root / "memory" / ".index" / "catalog.sqlite"
    with closing(sqlite3.connect(cache)) as db:  # a fresh process reads them, parsing no log
        assert db.execute("SELECT count(*) FROM logs").fetchone()[0] == 4  # one row per log
    log = memory.root / "memory" / "2026-03-05.md"
    log.write_text(log.read_text(encoding="utf-8").replace("15%", "20%"), encoding="utf-8")
    memory.remember("Deploys v3", "ok", on="2026-03-08", trigger="before a deploy", rule="Tue")
    fresh = Memory(memory.root)
    frame = fresh.frame()
    pricing = frame[frame.title == "Competitor pricing"].iloc[0]
    assert pricing.fields == {"decisions": "cut the starter tier by 20%"}  # edited by hand
    assert [r.rule for r in fresh.rules() if r.active] == ["Tue"]
    assert frame[frame.title == "Deploys v2"].iloc[0].superseded_by == "memory/2026-03-08.md#L1"
    out = io.BytesIO()  # jsonl and parquet join the kept lines: the pointers must be set there too
    assert Memory(memory.root).export("jsonl", out) == 5
    by_title = {row["title"]: row for row in map(json.loads, out.getvalue().splitlines())}
    assert by_title["Deploys"]["superseded_by"] == "memory/2026-03-08.md#L1"
    assert by_title["Deploys v3"]["superseded_by"] is None
    parquet = memory.root / "rows.parquet"
    assert Memory(memory.root).export("parquet", parquet) == 5
    table = pd.read_parquet(parquet)
    assert table[table.title == "Deploys v2"].iloc[0].superseded_by == "memory/2026-03-08.md#L1"
    assert str(table.date.dtype).startswith("datetime64")
    cache.write_bytes(b"not a database")  # damaged: rebuilt from the raw logs
    assert len(Memory(memory.root).frame()) == 5
    assert [r.rule for r in Memory(memory.root).rules() if r.active] == ["Tue"]


def test_recall_df_returns_the_hits_as_a_dataframe(claude_shell) -> None:
    run(claude_shell, "%%remember Launch date #launch\n- decisions: launch on April 2")
    frame = claude_shell.run_line_magic("recall", "launch --df")
    assert isinstance(frame, pd.DataFrame)
    assert frame.iloc[0].title == "Launch date" and frame.iloc[0].kind == "raw"
    assert frame.iloc[0].provenance.startswith("cell ")  # a console cell: no notebook
    assert {"score", "file", "line", "snippet", "path"} <= set(frame.columns)


@pytest.mark.parametrize("format", ["csv", "parquet", "jsonl"])
def test_export_writes_every_checkpoint(memory: Memory, format: str, tmp_path: Path,
                                        capsys) -> None:  # fmt: skip
    out = tmp_path / f"memory.{format}"
    argv = ["--root", str(memory.root), "export", "--format", format, "-o", str(out)]
    assert cli.main(argv) == 0
    assert "4 checkpoints" in capsys.readouterr().err
    if format == "jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert rows[1]["tags"] == ["pricing", "q1"] and rows[1]["via"] == "magic"
        assert rows[2]["fields"]["trigger"] == "before a deploy"
        return
    frame = pd.read_csv(out) if format == "csv" else pd.read_parquet(out)
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 4
    pricing = frame[frame.title == "Competitor pricing"].iloc[0]
    assert pricing.tags == "pricing,q1"
    assert json.loads(pricing.fields) == {"decisions": "cut the starter tier by 15%"}


def test_export_to_stdout_and_its_errors(memory: Memory, monkeypatch, capsys) -> None:
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="utf-8"))
    assert cli.main(["--root", str(memory.root), "export", "--format", "jsonl"]) == 0
    sys.stdout.flush()
    assert len(buffer.getvalue().decode().splitlines()) == 4
    monkeypatch.undo()
    capsys.readouterr()
    assert cli.main(["--root", str(memory.root), "export", "--format", "parquet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "-o FILE.parquet" in err
    assert cli.main(["--root", str(memory.root), "export", "--format", "xml"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_missing_extra_is_one_line_naming_it(memory: Memory, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    from hipo_jupyter.memory import HipoError

    with pytest.raises(HipoError, match=r"needs the frame extra: pip install 'hipo-jupyter\["):
        memory.frame()
