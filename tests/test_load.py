"""Load: several processes on one memory folder at once, and locks that die with their holder.

The load run: a Jupyter kernel and an IPython shell process doing `%%remember` (each also runs
`%hipo compact` and `%recall` now and then), a `hipo remember` loop (one process per checkpoint,
some filed under past days with `--date`), `hipo compact` runs in between, and a real
`jupyter server` on 127.0.0.1 answering recalls for the checkpoints as they are acknowledged.
Afterwards every checkpoint is in the raw logs exactly once, whole, with a unique id; the index
(opened as it is, not re-synced) returns each; and the tree equals a compaction from scratch.

WRITES checkpoints per writer by default; SOAK_WRITES with `-m slow` (or HIPO_SOAK=1).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from reliability_helpers import (
    PYTHON,
    REPO,
    TODAY,
    assert_raw_whole,
    assert_tree_equals_scratch,
    checked_body,
    counts,
    engine_env,
    raw_checkpoints,
    skip_soak_unless_asked,
    spawn,
    token,
)

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import new_id
from hipo_jupyter.memory.search.indexing import open_index

WRITES = 60
SOAK_WRITES = 500
HANG_GUARD = 600  # seconds; only so that a deadlock fails the test instead of hanging it
SEED = int(os.environ.get("HIPO_LOAD_SEED", random.randrange(1 << 30)))


def hipo(*args: str, env: dict, stdin: str = "") -> subprocess.CompletedProcess:
    """The `hipo` command, as a process of its own."""
    return subprocess.run(
        [PYTHON, "-m", "hipo_jupyter.cli", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Writer:
    """One writing process's record: what it was told was written, and what went wrong."""

    name: str
    acked: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


class JupyterServer:
    """A real `jupyter server` on 127.0.0.1 with the hipo extension, token-protected."""

    def __init__(self, root_dir: Path, env: dict, tmp_path: Path) -> None:
        self.port, self.token = free_port(), secrets.token_hex(16)
        config = tmp_path / "jupyter_server_config.json"
        extensions = {"hipo_jupyter.server": True, "jupyterlab": False}
        config.write_text(json.dumps({"ServerApp": {"jpserver_extensions": extensions}}))
        self.log = (tmp_path / "server.log").open("w")
        self.process = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "jupyter_server",
                f"--config={config}",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root_dir}",
                "--ServerApp.open_browser=False",
                "--allow-root",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        for _ in range(600):  # up to a minute for the server to listen
            try:
                self.get("/api/status")
                return
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise AssertionError(f"jupyter server did not start: {self.log.name}")

    def get(self, endpoint: str, **params: str) -> tuple[int, dict]:
        query = urllib.parse.urlencode(params)
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{endpoint}?{query}",
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


SHELL_WRITER = """
import sys
from datetime import date, timedelta
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
from reliability_helpers import TODAY, checked_body, token

root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = Config()
config.HistoryAccessor.enabled = False
shell = InteractiveShell.instance(config=config)
shell.run_cell(f"%config Hipo.root = {root!r}")
assert shell.run_cell("%load_ext hipo").success
for number in range(count):
    tag = token(name, number)
    day = TODAY - timedelta(days=number % 3)
    cell = f"%%remember Shell {tag} --date {day.isoformat()}\\n{checked_body(tag)}"
    result = shell.run_cell(cell, store_history=True)
    print(tag if result.success else f"FAIL {tag} {result.error_in_exec!r}", flush=True)
    if number % 25 == 24:
        shell.run_cell("%hipo compact")
    if number % 10 == 9:
        shell.run_cell(f"%recall {token(name, number - 5)}")
"""


def shell_writer(root: Path, env: dict, record: Writer, count: int) -> None:
    process = spawn(SHELL_WRITER, root, record.name, count, env=env)
    for line in process.stdout:  # acknowledged as they come, so the server is asked about them
        if line.startswith("zq"):
            record.acked.append(line.strip())
        elif line.startswith("FAIL"):
            record.failures.append(line)
    err = process.stderr.read()
    if process.wait(HANG_GUARD):
        record.failures.append(f"shell exited {process.returncode}: {err[-2000:]}")


def kernel_writer(root: Path, env: dict, record: Writer, count: int) -> None:
    """A real ipykernel, driven over ZMQ as a notebook front end drives it."""
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)

        def run(code: str) -> tuple[str, str]:
            out: list[str] = []

            def hook(message: dict) -> None:
                if message["msg_type"] == "stream":
                    out.append(message["content"]["text"])

            reply = client.execute_interactive(code, timeout=HANG_GUARD, output_hook=hook)
            return reply["content"]["status"], "".join(out)

        status, out = run(f"%config Hipo.root = {str(root)!r}\n%load_ext hipo")
        assert status == "ok", out
        for number in range(count):
            tag = token(record.name, number)
            status, out = run(f"%%remember Kernel {tag}\n{checked_body(tag)}")
            if status == "ok" and "remembered" in out:
                record.acked.append(tag)
            else:
                record.failures.append(f"{tag}: {status} {out[-500:]}")
            if number % 30 == 29:
                run("%hipo compact")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def cli_writer(root: Path, env: dict, record: Writer, count: int) -> None:
    """`hipo remember` once per checkpoint; every fourth is a late entry (`--date`)."""
    for number in range(count):
        tag = token(record.name, number)
        day = TODAY - timedelta(days=number % 4 * 2)
        done = hipo(
            "--root", str(root), "remember", f"CLI {tag}", "--date", day.isoformat(),
            env=env, stdin=checked_body(tag),
        )  # fmt: skip
        if done.returncode == 0:
            record.acked.append(tag)
        else:
            record.failures.append(f"{tag}: {done.stderr.strip()}")


def until_stopped(stop: threading.Event, work: Callable[[], None], pause: float) -> None:
    while not stop.is_set():
        work()
        stop.wait(pause)


@pytest.fixture(autouse=True)
def _soak_only_when_asked(request: pytest.FixtureRequest) -> None:
    skip_soak_unless_asked(request)


@pytest.mark.parametrize("writes", counts(WRITES, SOAK_WRITES))
def test_three_writers_a_server_and_compactions_lose_nothing(
    tmp_path: Path, writes: int, capsys: pytest.CaptureFixture
) -> None:
    rng = random.Random(SEED)
    server_root = tmp_path / "srv"
    root = server_root / "nb"
    root.mkdir(parents=True)
    env = engine_env(tmp_path, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests'}")
    assert hipo("--root", str(root), "init", env=env).returncode == 0
    server = JupyterServer(server_root, env, tmp_path)

    writers = [Writer("k"), Writer("s"), Writer("c")]
    jobs = [
        threading.Thread(target=kernel_writer, args=(root, env, writers[0], writes)),
        threading.Thread(target=shell_writer, args=(root, env, writers[1], writes)),
        threading.Thread(target=cli_writer, args=(root, env, writers[2], writes)),
    ]
    reads = {"recalls": 0, "found": 0, "other": 0, "bad": []}
    compactions: list[int] = []

    def recall_the_latest() -> None:
        acked = [w.acked[-1] for w in writers if w.acked]
        if not acked:
            return
        tag = rng.choice(acked)
        status, answer = server.get("/hipo/api/recall", path="nb/", q=tag, k="10")
        reads["recalls"] += 1
        if status != 200:
            reads["bad"].append((status, answer))
        elif any(tag in hit["title"] for hit in answer["hits"]):
            reads["found"] += 1
        else:
            reads["bad"].append(("not found", tag))
        for endpoint in ("tree", "recent", "budget"):
            status, answer = server.get(f"/hipo/api/{endpoint}", path="nb/")
            reads["other"] += 1
            if status != 200:
                reads["bad"].append((endpoint, status, answer))

    def compact() -> None:
        compactions.append(hipo("--root", str(root), "compact", env=env).returncode)

    stop = threading.Event()
    helpers = [
        threading.Thread(target=until_stopped, args=(stop, recall_the_latest, 0.05)),
        threading.Thread(target=until_stopped, args=(stop, compact, 1.0)),
    ]
    try:
        for job in [*jobs, *helpers]:
            job.start()
        for job in jobs:
            job.join(HANG_GUARD)
            assert not job.is_alive(), "a writer hung"
    finally:
        stop.set()
        for job in helpers:
            job.join(HANG_GUARD)
        server.stop()

    failures = [f for w in writers for f in w.failures]
    assert failures == [], failures[:5]
    acked = [tag for w in writers for tag in w.acked]
    assert len(acked) == 3 * writes
    assert reads["bad"] == [], reads["bad"][:5]
    assert reads["recalls"] and reads["found"] == reads["recalls"]
    assert compactions and set(compactions) == {0}

    # every checkpoint once and whole, each with its own id
    checkpoints = assert_raw_whole(root, acked, unique_ids=True)
    assert len(checkpoints) == len(acked)
    # the index as the writers left it (not re-synced) returns each of them
    index = open_index(root / "memory" / ".index")
    try:
        raw_docs = {d.title for d in index.documents(kinds={"raw"})}
        assert raw_docs == {c.title for c in checkpoints}
        for tag in acked:
            hits = index.search(tag, limit=3, kinds={"raw"})
            assert [h for h in hits if h.doc.title.endswith(tag)], tag
    finally:
        index.close()
    # the last compaction ran before the last writes: one more, then compare with from-scratch
    assert hipo("--root", str(root), "compact", env=env).returncode == 0
    assert_tree_equals_scratch(root, tmp_path)
    duplicate_ids = len(checkpoints) - len({c.id for c in checkpoints})
    with capsys.disabled():
        print(
            f"\nload: {len(writers)} writers x {writes} checkpoints = {len(acked)} held; "
            f"{len(compactions)} `hipo compact` runs; {reads['recalls']} recalls (all found) "
            f"and {reads['other']} other reads through the server; duplicate ids: "
            f"{duplicate_ids}; seed {SEED}"
        )


# --- ids ------------------------------------------------------------------------------------------
def test_ids_made_in_the_same_second_are_unique() -> None:
    now = datetime(2026, 3, 12, 14, 32, 5, tzinfo=UTC)
    ids = [new_id(now) for _ in range(2000)]
    assert len(set(ids)) == len(ids)


# --- locks that die with their holder -------------------------------------------------------------
STUCK_APPEND = """
import os, sys, time
from datetime import date
from reliability_helpers import checked_body
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import appends as appends_module

real_write = os.write
def stuck(fd, data):  # a disk that takes one page of the checkpoint, then hangs, the lock held
    if b"zqstuck" not in bytes(data):  # the intent (its payload is base64) goes through
        return real_write(fd, data)
    real_write(fd, bytes(data[:4096]))
    print("writing", flush=True)
    time.sleep(600)
appends_module.os = type(os)("os_with_a_stuck_disk")
appends_module.os.__dict__.update(os.__dict__)
appends_module.os.write = stuck
Memory(sys.argv[1]).remember("Stuck zqstuck", checked_body("zqstuck", 9000), on=date(2026, 3, 12))
"""

STUCK_COMPACTION = """
import sys, time
from datetime import date
from hipo_jupyter.memory import Memory, MemoryConfig

class Stuck:  # a summarizer that never answers: the pass holds the compaction lock
    name = "stuck"
    def summarize(self, level, period, sources):
        print("summarizing", flush=True)
        time.sleep(600)

config = MemoryConfig(daily_threshold=2)
Memory(sys.argv[1], config=config, summarizer=Stuck(), today=lambda: date(2026, 3, 12)).compact()
"""

STUCK_INDEX = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("begin immediate")  # the index's write lock, as a writer mid-transaction holds it
db.execute("insert into files (path, hash) values ('memory/x.md', 'half')")
print("locked", flush=True)
time.sleep(600)
"""


def held(path: Path) -> bool:
    """Is an exclusive flock held on `path` by someone else? Asked without waiting."""
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def start_stuck(script: str, *args: object, env: dict, ready: str) -> subprocess.Popen:
    process = spawn(script, *args, env=env)
    line = process.stdout.readline().strip()
    assert line == ready, (line, process.stderr.read() if process.poll() is not None else "")
    return process


@pytest.fixture
def child_env(tmp_path: Path) -> dict[str, str]:
    return engine_env(tmp_path, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests'}")


def test_a_writer_killed_holding_the_raw_log_lock_stops_nobody(
    memory_root: Path, child_env: dict
) -> None:
    first = Memory(memory_root, today=lambda: TODAY)
    first.remember(f"Before {token('l', 1)}", checked_body(token("l", 1)))
    first.close()
    log = memory_root / "memory" / f"{TODAY.isoformat()}.md"
    stuck = start_stuck(STUCK_APPEND, memory_root, env=child_env, ready="writing")
    assert held(log)  # mid-append: one page written, the lock held
    os.kill(stuck.pid, signal.SIGKILL)
    stuck.wait(HANG_GUARD)
    assert not held(log)  # the kernel released it with the process
    done = hipo("--root", str(memory_root), "remember", f"After {token('l', 2)}", env=child_env,
                stdin=checked_body(token("l", 2)))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_raw_whole(memory_root, [token("l", 1), token("l", 2)])
    assert "zqstuck" not in log.read_text()  # its half append was cut off first


def test_a_pass_killed_holding_the_compaction_lock_stops_nobody(
    memory_root: Path, child_env: dict, tmp_path: Path
) -> None:
    memory = Memory(memory_root, today=lambda: TODAY)
    for number in range(4):
        memory.remember(f"Entry {token('p', number)}", checked_body(token("p", number)))
    memory.close()
    lock = memory_root / "memory" / ".compaction.lock"
    stuck = start_stuck(STUCK_COMPACTION, memory_root, env=child_env, ready="summarizing")
    assert held(lock)
    os.kill(stuck.pid, signal.SIGKILL)
    stuck.wait(HANG_GUARD)
    assert not held(lock)
    done = hipo("--root", str(memory_root), "compact", env=child_env)
    assert done.returncode == 0, done.stderr
    assert_tree_equals_scratch(memory_root, tmp_path)


def test_a_writer_killed_inside_an_index_transaction_stops_nobody(
    memory_root: Path, child_env: dict
) -> None:
    memory = Memory(memory_root, today=lambda: TODAY)
    memory.remember(f"Entry {token('q', 1)}", checked_body(token("q", 1)))
    memory.close()
    database = memory_root / "memory" / ".index" / "fts5.sqlite3"
    stuck = start_stuck(STUCK_INDEX, database, env=child_env, ready="locked")
    os.kill(stuck.pid, signal.SIGKILL)
    stuck.wait(HANG_GUARD)
    done = hipo("--root", str(memory_root), "remember", f"Next {token('q', 2)}", env=child_env,
                stdin=checked_body(token("q", 2)))  # fmt: skip
    assert done.returncode == 0, done.stderr
    index = open_index(database.parent)
    try:
        assert "memory/x.md" not in index.file_hashes()  # the dead transaction was rolled back
        assert index.search(token("q", 2))
    finally:
        index.close()
    assert len(raw_checkpoints(memory_root)) == 2


def test_sqlite_holds_its_lock_while_the_writer_lives(memory_root: Path, child_env: dict) -> None:
    """The converse, so the test above means something: a live holder does block a writer."""
    Memory(memory_root).init()
    index = open_index(memory_root / "memory" / ".index")
    index.close()
    database = memory_root / "memory" / ".index" / "fts5.sqlite3"
    stuck = start_stuck(STUCK_INDEX, database, env=child_env, ready="locked")
    try:
        import sqlite3

        other = sqlite3.connect(database, timeout=0, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("begin immediate")
        other.close()
    finally:
        os.kill(stuck.pid, signal.SIGKILL)
        stuck.wait(HANG_GUARD)
    assert sys.platform != "win32"
