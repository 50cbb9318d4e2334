"""Team recall reads who wrote a row from a typed field (issue 49): every team hit is written
by a "teammate", who may replace nothing, so a teammate's later note never marks the user's
own notes "changed later", in a team recall or a team context (real PostgreSQL)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

from hipo_jupyter.memory import Memory, MemoryConfig  # noqa: E402
from hipo_jupyter.memory.recall.supersession import CHANGED_LATER  # noqa: E402
from hipo_jupyter.team import wait_for_background  # noqa: E402
from hipo_jupyter.team.link import TeamLink  # noqa: E402

TODAY = date(2026, 3, 12)


def team_memory(root: Path, url: str, author: str) -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(team_url=url, team_author=author, semantic=False)
    return Memory(root, config=config, today=lambda: TODAY, team=TeamLink)


def test_a_teammates_later_note_changes_nothing(tmp_path: Path, team_url: str) -> None:
    ana = team_memory(tmp_path / "ana", team_url, "ana")
    bo = team_memory(tmp_path / "bo", team_url, "bo")
    try:
        ana.remember("Launch plan", "- launch: April", on="2026-03-02", via="magic")
        bo.remember("Launch plan", "- launch: May", on="2026-03-10", via="magic")
        bo.remember("Launch note", "moved the launch to June", on="2026-03-11", via="magic")
        for memory in (ana, bo):
            wait_for_background(str(memory.root))
            memory.team_sync()
        hits = ana.recall("when is the launch?", team=True, k=10).hits
        assert {hit.writer for hit in hits} == {"teammate"}
        assert {hit.to_json()["writer"] for hit in hits} == {"teammate"}
        assert not any(hit.changed_later for hit in hits)
        text = ana.context("when is the launch?", team=True, budget=600, layer1=False).text
        assert "launch: April" in text and CHANGED_LATER not in text
        assert "[a teammate's]" in text  # each group of pieces says whose they are
    finally:
        ana.close()
        bo.close()
