"""The team under load on a real PostgreSQL: 8 people writing and syncing at once while others
search, and a sync killed with `kill -9` in the middle of its batches. Nothing lost, nothing
twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402

from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.disk.checkpoint import parse_log  # noqa: E402

WORKER = Path(__file__).with_name("team_load_worker.py")
PEOPLE = 8
PER_PERSON = 250


def worker(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def finished(process: subprocess.Popen, timeout: float = 600) -> dict:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def team_ids(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM team_checkpoints")]


def local_ids(root: Path) -> list[str]:
    ids = []
    for log in sorted((root / "memory").glob("????-??-??.md")):  # raw logs, not ROOT.md
        ids += [c.id for c in parse_log(log.read_text(encoding="utf-8"), date=log.stem)]
    return ids


def test_eight_people_sync_concurrently_while_others_search(tmp_path, team_url):
    stop = tmp_path / "stop"
    for i in range(PEOPLE):
        (tmp_path / f"person{i}").mkdir()
    searchers = [
        worker("search", str(tmp_path / f"reader{i}"), team_url, str(stop)) for i in range(2)
    ]
    writers = [
        worker("write", str(tmp_path / f"person{i}"), team_url, f"person{i}", str(PER_PERSON))
        for i in range(PEOPLE)
    ]
    results = [finished(w) for w in writers]
    stop.touch()
    reads = [finished(s) for s in searchers]

    written = [cid for result in results for cid in result["ids"]]
    assert len(written) == PEOPLE * PER_PERSON == len(set(written))
    stored = team_ids(team_url)
    assert len(stored) == len(set(stored))  # 0 duplicated
    assert set(stored) == set(written)  # 0 lost
    for i in range(PEOPLE):  # and each raw log holds its person's checkpoints once
        assert sorted(local_ids(tmp_path / f"person{i}")) == sorted(results[i]["ids"])
    assert all(r["searches"] > 0 for r in reads)
    assert all(r["searches"] == PER_PERSON // 25 for r in results)


def test_a_sync_killed_with_kill_9_mid_batch_and_rerun_loses_nothing(tmp_path, team_url):
    root = tmp_path / "big"
    finished_seed = subprocess.run(
        [sys.executable, str(WORKER), "seed", str(root), "120", "40"], check=True
    )
    assert finished_seed.returncode == 0
    expected = local_ids(root)
    assert len(expected) == 4800
    env = {**os.environ, "HIPO_TEAM": team_url, "HIPO_AUTHOR": "kim"}
    sync = subprocess.Popen(
        [sys.executable, "-m", "hipo_jupyter.cli", "team", "sync", "--root", str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    state = root / "memory" / ".index" / "team-sync.json"
    deadline = time.monotonic() + 120
    killed_at = None
    while time.monotonic() < deadline and sync.poll() is None:
        try:
            count = len(team_ids(team_url))
        except psycopg.Error:  # the schema is not there yet
            count = 0
        # mid-run: rows in and the state written once (after the first push: on a loaded
        # machine the kill could land between the two, with no state file yet to check)
        if count >= 400 and state.exists():
            sync.send_signal(signal.SIGKILL)
            killed_at = count
            break
        time.sleep(0.01)
    sync.wait()
    assert killed_at is not None and killed_at < len(expected), "the sync ended before the kill"
    assert sync.returncode == -signal.SIGKILL
    assert json.loads(state.read_text())["files"]  # written whole (rename), never torn
    rerun = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "team", "sync", "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert rerun.returncode == 0, rerun.stderr
    stored = team_ids(team_url)
    assert len(stored) == len(set(stored)) == len(expected)
    assert set(stored) == set(expected)
    again = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "team", "sync", "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "0 new or updated" in again.stdout
    assert Memory(root).recall("seeded 7-3", k=1)  # the folder itself is untouched and readable
