"""Long work shows its progress, and what goes wrong in it is one line.

Real `hipo` processes: an import under a pseudo-terminal draws tqdm's bar on stderr and leaves
the summary; turns dated after today are reported in one line and kept on their dates; a team
database that is down is one line, with none of the pool's own retries logged around it."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

HIPO = [sys.executable, "-m", "hipo_jupyter.cli"]
TODAY = "2026-03-12"


def hipo_env() -> dict[str, str]:
    return {**os.environ, "HIPO_TODAY": TODAY, "HIPO_SEMANTIC": "0"}


def write_turns(path: Path, days: list[str]) -> Path:
    turns = [
        {"speaker": "user", "text": f"turn {n} about the churn model", "time": day}
        for n, day in enumerate(days)
    ]
    path.write_text(json.dumps(turns), "utf-8")
    return path


def test_future_dated_turns_are_reported_in_one_line(memory_root: Path, tmp_path: Path) -> None:
    turns = write_turns(tmp_path / "chat.json", ["2026-03-10", "2026-03-11", "2026-03-14"] * 2)
    done = subprocess.run(
        [*HIPO, "--root", str(memory_root), "import", str(turns)],
        env=hipo_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"hipo: warning: 2 imported turns are dated after today ({TODAY}): 2026-03-14; "
        "kept on those dates"
    ]
    assert "turn 2 about" in (memory_root / "memory" / "2026-03-14.md").read_text("utf-8")


def test_an_import_in_a_terminal_draws_a_bar(memory_root: Path, tmp_path: Path) -> None:
    days = [f"2026-02-{day:02d}" for day in range(1, 29)]
    turns = write_turns(tmp_path / "chat.json", days)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a `hipo import` whose stdout and stderr are a terminal
        os.environ.update(hipo_env())
        os.execv(sys.executable, [*HIPO, "--root", str(memory_root), "import", str(turns)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    _, status = os.waitpid(pid, 0)
    text = screen.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "100%|" in text and "it/s]" in text  # tqdm's bar, drawn while the tree was built
    assert "Imported 28 turns" in text


def test_a_team_database_that_is_down_is_one_line(memory_root: Path) -> None:
    pytest.importorskip("psycopg_pool")
    subprocess.run(
        [*HIPO, "--root", str(memory_root), "remember", "--title", "Churn model #churn"],
        input="- outcome: shipped\n",
        env=hipo_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    started = time.monotonic()
    done = subprocess.run(
        [*HIPO, "--root", str(memory_root), "--team-url", "postgresql://hipo@127.0.0.1:1/team"]
        + ["team", "sync"],
        env=hipo_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("hipo: error: the team database 127.0.0.1:1/team")
    assert "connection refused" in done.stderr  # the reason a user acts on
    assert time.monotonic() - started < 20
