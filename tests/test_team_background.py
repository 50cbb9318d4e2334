"""The sync after `%%remember`: in the background, queued on disk, bounded, retried."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

from hipo_jupyter.memory import Memory, MemoryConfig  # noqa: E402
from hipo_jupyter.team import (  # noqa: E402
    TeamDatabase,
    TeamSync,
    database,
    sync,
    wait_for_background,
)
from hipo_jupyter.team.link import TeamLink  # noqa: E402

TODAY = "2026-03-12"


def test_remember_magic_sends_the_checkpoint_in_the_background(
    team_url, memory_root, tmp_path, monkeypatch
):
    from claude_helpers import RaisingShell
    from traitlets.config import Config

    import hipo_jupyter.ipython as hipo_ipython

    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.setenv("HIPO_TEAM", team_url)  # Hipo.team_url's default
    monkeypatch.setenv("HIPO_AUTHOR", "ana")
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    try:
        shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
        shell.run_cell("%load_ext hipo")
        shell.run_cell("%%remember Churn drivers [project] #churn\n- outcome: onboarding drop-off")
        shell.run_cell("%%remember About me [user]\n- rule: short answers")
        assert wait_for_background(str(memory_root.absolute()))
    finally:
        hipo_ipython.unload_ipython_extension(shell)
    db = TeamDatabase(team_url)
    assert db.count() == 1  # the user-type checkpoint stayed local
    (match,) = db.search("churn", limit=5)
    assert (match.row.author, match.row.notebook, match.row.day) == ("ana", memory_root.name, TODAY)
    assert match.row.cell  # provenance: the cell it was written in


def test_remember_with_the_team_down_returns_and_warns_once(
    memory_root, postgres_cluster, monkeypatch, caplog
):
    monkeypatch.setattr(database, "POOL_TIMEOUT_S", 0.3)
    monkeypatch.setattr(sync, "RETRY_DELAYS", (0.05, 0.05))
    url = postgres_cluster.url("not_there")
    config = MemoryConfig(team_url=url, team_author="ana")
    memory = Memory(memory_root, config=config, today=lambda: date(2026, 3, 12), team=TeamLink)
    with caplog.at_level(logging.WARNING, logger="hipo_jupyter.team.sync"):
        first = memory.remember("One [project]", "- outcome: a")
        second = memory.remember("Two [project]", "- outcome: b", on="2026-03-11")
        assert wait_for_background(str(memory.root))
    assert first.id and second.id  # both written: the raw log is the truth
    log_text = (memory_root / "memory" / "2026-03-12.md").read_text()
    assert "One" in log_text
    warnings = [r for r in caplog.records if "team sync waits" in r.getMessage()]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage()
    queued = TeamSync(memory.store, config, TeamDatabase(url)).queued()
    assert queued["days"] == ["2026-03-11", "2026-03-12"] and queued["attempts"] >= 1


def test_the_queue_is_bounded_and_falls_back_to_a_full_sync(memory_root: Path, team_url):
    memory = Memory(memory_root)
    memory.init()
    queue = TeamSync(memory.store, MemoryConfig(team_url=team_url), TeamDatabase(team_url))
    start = date(2024, 1, 1)
    for offset in range(sync.MAX_QUEUED_DAYS):
        queue.enqueue(start + timedelta(days=offset))
    assert len(queue.queued()["days"]) == sync.MAX_QUEUED_DAYS
    queue.enqueue(start + timedelta(days=sync.MAX_QUEUED_DAYS))
    assert queue.queued() == {"all": True, "attempts": 0}  # bounded: one flag, not 367 days
    size = (memory.store.index_dir / sync.QUEUE_FILE).stat().st_size
    assert size < 100
    queue.flush_queue()
    assert queue.queued() == {}


def test_a_checkpoint_written_while_its_day_is_pushed_stays_queued(
    memory_root: Path, team_url, monkeypatch
):
    """A day queued again while its push ran is already in the queue that push took: cleared
    with the rest, the checkpoint written meanwhile waited for the next sync of that day (a
    full sync then found it missing)."""
    day = date(2026, 3, 12)
    memory = Memory(memory_root, today=lambda: day)
    memory.init()
    config = MemoryConfig(team_url=team_url, team_author="ana")
    queue = TeamSync(memory.store, config, TeamDatabase(team_url))
    memory.remember("One [project]", "- outcome: a")
    queue.enqueue(day)
    push = TeamSync.sync

    def push_then_remember(self, *args, **kwargs):
        report = push(self, *args, **kwargs)
        memory.remember("Two [project]", "- outcome: b")  # after the push read the log
        self.enqueue(day)
        return report

    monkeypatch.setattr(TeamSync, "sync", push_then_remember)
    queue.flush_queue()
    assert queue.queued()["days"] == [day.isoformat()]
    monkeypatch.setattr(TeamSync, "sync", push)
    queue.flush_queue()
    assert queue.queued() == {} and TeamDatabase(team_url).count() == 2


def test_hipo_remember_queues_for_the_team_and_exits_cleanly(memory_root, team_url):
    """A short-lived `hipo remember` may exit before its push: the day stays queued, and the
    next `hipo team sync` sends it; nothing is printed but the checkpoint line."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HIPO_TEAM": team_url, "HIPO_AUTHOR": "eve"}
    command = [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(memory_root)]
    for n in range(3):
        done = subprocess.run(
            [*command, "remember", f"Note {n} [project]"],
            input="- outcome: noted",
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
    synced = subprocess.run([*command, "team", "sync"], env=env, capture_output=True, text=True)
    assert synced.returncode == 0, synced.stderr
    assert TeamDatabase(team_url).count() == 3


def test_load_ext_resumes_what_a_past_session_queued(memory_root, team_url, tmp_path, monkeypatch):
    from claude_helpers import RaisingShell
    from traitlets.config import Config

    import hipo_jupyter.ipython as hipo_ipython

    memory = Memory(memory_root)
    memory.remember("Queued while down [project]", "- outcome: waits", on="2026-03-12")
    config = MemoryConfig(team_url=team_url)
    TeamSync(memory.store, config, TeamDatabase(team_url)).enqueue(date(2026, 3, 12))
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.chdir(tmp_path)
    shell_config = Config()
    shell_config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=shell_config)
    try:
        shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
        shell.run_cell(f"%config Hipo.team_url = {team_url!r}")
        shell.run_cell("%load_ext hipo")
        assert wait_for_background(str(memory_root.absolute()))
    finally:
        hipo_ipython.unload_ipython_extension(shell)
    assert TeamDatabase(team_url).count() == 1
    assert TeamSync(memory.store, config, TeamDatabase(team_url)).queued() == {}
