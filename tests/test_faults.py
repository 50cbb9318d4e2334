"""Faults: `kill -9` at random points of raw appends, compaction passes and index updates;
damaged derived files; a full disk; Claude failing in the middle of a pass.

What must hold afterwards: no raw log holds a checkpoint cut short, every checkpoint whose write
returned is there exactly once, derived files are the old or the new version (never half), and
the next load (`Memory.compact()`, which `%load_ext hipo` runs) repairs the rest by itself.

The kill loops run KILLS times per kind by default and SOAK_KILLS with `-m slow` (or
HIPO_SOAK=1). Kill points are random; the seed is printed, and HIPO_FAULT_SEED=N replays a run.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import sqlite3
import subprocess
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from claude_helpers import FakeMessagesAPI, api_fixture, new_shell  # noqa: F401
from reliability_helpers import (
    REPO,
    TODAY,
    assert_derived_whole,
    assert_raw_whole,
    assert_tree_equals_scratch,
    checked_body,
    counts,
    derived_files,
    engine_env,
    skip_soak_unless_asked,
    spawn,
    temp_files,
    token,
)

from hipo_jupyter import llm
from hipo_jupyter.ipython import current, unload_ipython_extension
from hipo_jupyter.memory import ExtractiveSummarizer, Memory, MemoryConfig
from hipo_jupyter.memory.disk import appends as appends_module
from hipo_jupyter.memory.disk import store as store_module
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, new_id, render
from hipo_jupyter.memory.disk.store import Store, WriteError
from hipo_jupyter.memory.search.fts5 import Fts5Index
from hipo_jupyter.memory.search.indexing import open_index
from hipo_jupyter.memory.tree.summarize import Source

KILLS = 10
SOAK_KILLS = 50
SEED = int(os.environ.get("HIPO_FAULT_SEED", random.randrange(1 << 30)))
# Thresholds low enough that nodes are summarized: a pass then has real work to be killed in.
SMALL_TREE = MemoryConfig(daily_threshold=8, weekly_threshold=20, monthly_threshold=40)


@pytest.fixture(autouse=True)
def _soak_only_when_asked(request: pytest.FixtureRequest) -> None:
    skip_soak_unless_asked(request)


@pytest.fixture
def child_env(tmp_path: Path) -> dict[str, str]:
    return engine_env(tmp_path, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests'}")


def fixed_memory(root: Path, config: MemoryConfig | None = None) -> Memory:
    return Memory(root, config=config, today=lambda: TODAY)


def wait_ready(process: subprocess.Popen) -> None:
    line = process.stdout.readline()
    if line.strip() != "ready":
        process.wait(timeout=60)
        raise AssertionError(f"writer did not start: {line!r} {process.stderr.read()}")


def acknowledged(process: subprocess.Popen) -> list[str]:
    """Tokens the killed writer reported written (printed only after the write returned)."""
    lines = process.stdout.read().split()
    return [line for line in lines if line.startswith("zq")]


def kill_after_random_delay(process: subprocess.Popen, rng: random.Random, most: float) -> list:
    wait_ready(process)
    time.sleep(rng.uniform(0, most))  # where the kill lands; nothing is asserted on time
    os.kill(process.pid, 9)
    process.wait(timeout=60)
    acks = acknowledged(process)
    process.stdout.close()
    process.stderr.close()
    return acks


# --- the killed writers ---------------------------------------------------------------------------
APPEND_WRITER = """
import os, sys, time
from datetime import date
from reliability_helpers import checked_body, token
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import appends as appends_module
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, parse_body, render

root, writer, day, disk = sys.argv[1], sys.argv[2], date.fromisoformat(sys.argv[3]), sys.argv[4]
if disk == "slow":  # one write() copies page by page, as the kernel does, only slower
    real_write = os.write
    def page_by_page(fd, data):
        data = bytes(data)
        for start in range(0, len(data), 4096):
            real_write(fd, data[start : start + 4096])
            time.sleep(0.002)
        return len(data)
    appends_module.os = type(os)("os_with_a_slow_disk")
    appends_module.os.__dict__.update(os.__dict__)
    appends_module.os.write = page_by_page
memory = Memory(root)
fields = lambda name: parse_body(checked_body(name, 6000))[0]
print("ready", flush=True)
number = 0
while number < 400:
    if number % 2 == 0:  # the real path: redact, append, index
        name = token(writer, number)
        memory.remember(f"Fault {name}", checked_body(name, 6000), on=day)
        print(name, flush=True)
        number += 1
    else:  # an import: one append of whole checkpoints with their source ids
        names = [token(writer, number + i) for i in range(3)]
        block = "\\n".join(
            render(Checkpoint(f"Import {name}", fields=fields(name), id=f"import-{name}"))
            for name in names
        )
        memory.store.append_raw(day, block)
        print(" ".join(names), flush=True)
        number += len(names)
time.sleep(600)
"""


@pytest.mark.parametrize("kills", counts(KILLS, SOAK_KILLS))
def test_kill_during_raw_appends_leaves_no_half_checkpoint(
    memory_root: Path, child_env: dict, kills: int, tmp_path: Path
) -> None:
    """Half of the writers run on a slow disk (each write() copies page by page with a pause),
    so many kills land inside a write; the others on the real disk, where a kill inside a
    write is rarer but happens (the kernel checks for a fatal signal between pages)."""
    rng = random.Random(SEED)
    acked: list[str] = []
    cut = {"slow": 0, "real": 0}
    for trial in range(kills):
        day = TODAY - timedelta(days=trial)
        disk = "slow" if trial % 2 == 0 else "real"
        writer = spawn(APPEND_WRITER, memory_root, f"a{trial}", day, disk, env=child_env)
        acked += kill_after_random_delay(writer, rng, 0.25)
        log = memory_root / "memory" / f"{day.isoformat()}.md"
        intent = appends_module.read_intent(log.with_name(f".{log.name}.append"))
        half = log.exists() and intent is not None and intent.size < log.stat().st_size < intent.end
        report = fixed_memory(memory_root).compact()  # the next load
        messages = [e for e in report.errors if "stopped mid-append" in e]
        assert len(messages) == int(half), (SEED, trial, report.errors)
        cut[disk] += half
        assert_raw_whole(memory_root, acked)
    memory = fixed_memory(memory_root)
    index = memory._ensure_index()
    for name in acked[:: max(1, len(acked) // 200)]:
        assert [hit for hit in index.search(name, limit=3) if name in hit.doc.title], name
    memory.close()
    if kills == SOAK_KILLS:
        assert cut["slow"], f"no kill landed inside a write in {kills} kills (seed {SEED})"
    print(f"raw-append kills: {kills}; cut off half checkpoints: {cut}; seed {SEED}")


COMPACTION_WRITER = """
import random, sys
from datetime import date, timedelta
from pathlib import Path
from reliability_helpers import TODAY, checked_body, token
from hipo_jupyter.memory import Memory, MemoryConfig

root, writer, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = MemoryConfig(daily_threshold=8, weekly_threshold=20, monthly_threshold=40)
memory = Memory(root, config=config, today=lambda: TODAY)
rng = random.Random(seed)
print("ready", flush=True)
number = 0
while True:
    day = TODAY - timedelta(days=rng.randrange(30))
    name = token(writer, number)
    memory.remember(f"Late {name}", checked_body(name), on=day)  # a late entry: reopens a chain
    print(name, flush=True)
    number += 1
    if rng.random() < 0.3:  # now and then a pass that rebuilds every tentative node
        Path(root, "memory", ".compaction-state.json").unlink(missing_ok=True)
    memory.compact()
"""


def seeded_memory(root: Path, days: int = 40, per_day: int = 3) -> list[str]:
    memory = fixed_memory(root, SMALL_TREE)
    names = []
    for offset in range(days):
        for number in range(per_day):
            name = token(f"s{offset}", number)
            memory.remember(f"Seed {name}", checked_body(name), on=TODAY - timedelta(days=offset))
            names.append(name)
    memory.compact()
    memory.close()
    return names


@pytest.mark.parametrize("kills", counts(KILLS, SOAK_KILLS))
def test_kill_during_compaction_passes_leaves_old_or_new_nodes(
    memory_root: Path, child_env: dict, kills: int, tmp_path: Path
) -> None:
    rng = random.Random(SEED + 1)
    acked = seeded_memory(memory_root, days=30)
    left_tmp = mid_pass = 0
    for trial in range(kills):
        writer = spawn(
            COMPACTION_WRITER, memory_root, f"c{trial}", rng.randrange(1 << 30), env=child_env
        )
        acked += kill_after_random_delay(writer, rng, 1.5)
        assert_derived_whole(memory_root)  # before any repair: every node old or new, not half
        left_tmp += bool(temp_files(memory_root))
        mid_pass += nodes_newer_than_state(memory_root)
        memory = fixed_memory(memory_root, SMALL_TREE)
        memory.compact()  # the next load
        memory.close()
        assert temp_files(memory_root) == []
        assert_raw_whole(memory_root, acked)
        assert_tree_equals_scratch(memory_root, tmp_path, SMALL_TREE)
    print(
        f"compaction kills: {kills}; {mid_pass} between writing nodes and the state, "
        f"{left_tmp} between a temporary file and its rename; seed {SEED}"
    )


def nodes_newer_than_state(root: Path) -> bool:
    """Was the pass killed after writing nodes but before the state that vouches for them?"""
    state = root / "memory" / ".compaction-state.json"
    if not state.exists():
        return False
    written = state.stat().st_mtime_ns
    nodes = [
        p
        for level in ("daily", "weekly", "monthly")
        for p in (root / "memory" / level).glob("*.md")
    ]
    return any(p.stat().st_mtime_ns > written for p in [*nodes, root / "memory" / "ROOT.md"])


def test_a_killed_pass_s_temporary_files_are_removed_by_the_next(memory_root: Path) -> None:
    seeded_memory(memory_root, days=3)
    stale = [
        memory_root / "memory" / "daily" / ".2026-03-12.md.k1l2.tmp",
        memory_root / "memory" / ".ROOT.md.x9y8.tmp",
        memory_root / "memory" / "..compaction-state.json.a1b2.tmp",
    ]
    for path in stale:
        path.write_text("half")
    fixed_memory(memory_root, SMALL_TREE).compact()
    assert temp_files(memory_root) == []


def test_a_pass_leaves_the_live_temporary_files_of_other_writers(memory_root: Path) -> None:
    """memory/ holds files other processes write under other locks (a team folder's id, the
    forget ledger, the writers' records): a pass removing their temporary file mid-write made
    that write fail ('cannot write memory/.team-folder-id: No such file or directory')."""
    seeded_memory(memory_root, days=3)
    others = ("..team-folder-id", "..forgotten.json", "..note-writers.json")
    live = [memory_root / "memory" / f"{name}.c3d4.tmp" for name in others]
    for path in live:
        path.write_text("being written")
    fixed_memory(memory_root, SMALL_TREE).compact()
    assert all(path.read_text() == "being written" for path in live)


INDEX_WRITER = """
import sys
from reliability_helpers import checked_body, token
from hipo_jupyter.memory import Memory, MemoryConfig

root, writer, backend = sys.argv[1], sys.argv[2], sys.argv[3]
memory = Memory(root, config=MemoryConfig(search_backend=backend))
print("ready", flush=True)
number = 0
while True:
    name = token(writer, number)
    memory.remember(f"Indexed {name}", checked_body(name, 500))
    print(name, flush=True)
    number += 1
    if number % 4 == 0:
        memory.reindex()  # drop everything and index it again: a long run of index writes
"""


@pytest.mark.parametrize("kills", counts(KILLS, SOAK_KILLS))
@pytest.mark.parametrize("backend", ["fts5", "whoosh"])
def test_kill_during_index_updates_the_next_load_repairs_the_index(
    memory_root: Path, child_env: dict, kills: int, backend: str
) -> None:
    rng = random.Random(SEED + 2)
    config = MemoryConfig(search_backend=backend)
    runs = kills if backend == "fts5" else max(3, kills // 5)  # Whoosh reindexes slowly
    acked: list[str] = []
    for trial in range(runs):
        writer = spawn(INDEX_WRITER, memory_root, f"i{trial}", backend, env=child_env)
        new = kill_after_random_delay(writer, rng, 0.6)
        acked += new
        index = open_index(memory_root / "memory" / ".index", backend)  # opens: not damaged
        index.close()
        memory = fixed_memory(memory_root, config)
        memory.compact()  # the next load syncs the index with the Markdown files
        raw = assert_raw_whole(memory_root, acked)
        index = memory._open_index()
        held = {(d.path, d.line, d.title) for d in index.documents(kinds={"raw"})}
        on_disk = {(f"memory/{c.date}.md", c.line, c.title) for c in raw}
        assert held == on_disk, (SEED, trial)
        for name in new[-3:]:
            assert [h for h in index.search(name, limit=3) if name in h.doc.title], name
        memory.close()


# --- an interrupted append, settled by the next reader or writer ----------------------------------
def half_append(root: Path, day: date = TODAY) -> tuple[Path, bytes, bytes]:
    """A log with one whole checkpoint, then half of a second one and the intent that announced
    it, as a writer killed mid-write leaves them."""
    memory = fixed_memory(root)
    memory.remember(f"Whole {token('h', 1)}", checked_body(token("h", 1)), on=day)
    memory.close()
    log = root / "memory" / f"{day.isoformat()}.md"
    before = log.read_bytes()
    payload = (
        b"\n"
        + render(
            Checkpoint(
                title=f"Half {token('h', 2)}", fields=(("request", "x" * 9000),), id=new_id()
            )
        ).encode()
    )
    intent = appends_module.intent_record(len(before), payload)  # as a killed writer left it
    log.with_name(f".{log.name}.append").write_text(json.dumps(intent))
    with log.open("ab") as handle:
        handle.write(payload[:5000])
    return log, before, payload


def test_a_reader_never_sees_a_half_append_and_cuts_it_off(memory_root: Path) -> None:
    log, before, _ = half_append(memory_root)
    text = Store(memory_root).read_text(log)
    assert text.encode() == before
    assert log.read_bytes() == before
    assert not log.with_name(f".{log.name}.append").exists()


def test_the_next_append_cuts_a_half_append_off_first(memory_root: Path) -> None:
    log, before, _ = half_append(memory_root)
    memory = fixed_memory(memory_root)
    memory.remember(f"Next {token('h', 3)}", checked_body(token("h", 3)))
    assert_raw_whole(memory_root, [token("h", 1), token("h", 3)])
    assert token("h", 2) not in log.read_text()


def test_load_ext_repairs_a_half_append_and_says_so(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    log, before, _ = half_append(memory_root)
    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%load_ext hipo")
    try:
        report = current(shell).startup.report
        assert any("stopped mid-append" in e for e in report.errors), report.errors
        assert log.read_bytes() == before
        shell.run_cell(f"%%remember After {token('h', 4)}\n{checked_body(token('h', 4))}")
        assert_raw_whole(memory_root, [token("h", 1), token("h", 4)])
    finally:
        unload_ipython_extension(shell)
    capsys.readouterr()


def test_an_append_written_whole_before_the_kill_is_kept(memory_root: Path) -> None:
    log, before, payload = half_append(memory_root)
    log.write_bytes(before + payload)  # the writer finished the write, then died
    report = fixed_memory(memory_root).compact()
    assert log.read_bytes() == before + payload
    assert not [e for e in report.errors if "mid-append" in e]
    assert not log.with_name(f".{log.name}.append").exists()


def test_an_intent_cut_short_means_the_log_was_never_touched(memory_root: Path) -> None:
    log, before, _ = half_append(memory_root)
    log.write_bytes(before)
    log.with_name(f".{log.name}.append").write_text('{"size": 12')
    fixed_memory(memory_root).compact()
    assert log.read_bytes() == before
    assert not log.with_name(f".{log.name}.append").exists()


# --- a full disk ----------------------------------------------------------------------------------
def failing_write(monkeypatch: pytest.MonkeyPatch, after_bytes: int) -> None:
    """os.write as on a disk that fills up: it takes `after_bytes` more, then ENOSPC."""
    real_write = os.write
    budget = {"left": after_bytes}

    def write(fd: int, data) -> int:
        if budget["left"] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = real_write(fd, bytes(data[: budget["left"]]))
        budget["left"] -= taken
        return taken

    monkeypatch.setattr(store_module.os, "write", write)


def test_a_full_disk_mid_append_keeps_the_log_as_it_was(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = fixed_memory(memory_root)
    memory.remember(f"Before {token('d', 1)}", checked_body(token("d", 1)))
    log = memory_root / "memory" / f"{TODAY.isoformat()}.md"
    before = log.read_bytes()
    failing_write(monkeypatch, after_bytes=700)  # the intent fits, half the checkpoint does
    with pytest.raises(WriteError) as caught:
        memory.remember(f"Lost {token('d', 2)}", checked_body(token("d", 2), 4000))
    message = str(caught.value)
    assert "No space left on device" in message and "nothing was written" in message
    assert "\n" not in message
    assert log.read_bytes() == before
    monkeypatch.undo()  # space is freed
    memory.remember(f"After {token('d', 3)}", checked_body(token("d", 3)))
    assert_raw_whole(memory_root, [token("d", 1), token("d", 3)])
    memory.compact()
    assert_derived_whole(memory_root)


def test_a_full_disk_during_compaction_says_so_and_the_next_run_recovers(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    names = seeded_memory(memory_root, days=10)
    memory = fixed_memory(memory_root, SMALL_TREE)
    # today's write leaves the tentative nodes above it behind, for the next pass (a late
    # entry would compact at once, in the write)
    memory.remember(f"Today {token('f', 1)}", checked_body(token("f", 1)))
    state = (memory_root / "memory" / ".compaction-state.json").read_bytes()
    real_replace, calls = os.replace, {"n": 0}

    def replace(src, dst, **fds):  # the store renames through its folder's fd (dir_fd=)
        calls["n"] += 1
        if calls["n"] == 2:  # the second node of the pass finds the disk full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst, **fds)

    monkeypatch.setattr(store_module.os, "replace", replace)
    with pytest.raises(WriteError, match="No space left on device; the previous version is kept"):
        memory.compact()
    monkeypatch.undo()
    assert (memory_root / "memory" / ".compaction-state.json").read_bytes() == state
    assert_derived_whole(memory_root)
    assert temp_files(memory_root) == []
    memory.compact()
    assert_raw_whole(memory_root, [*names, token("f", 1)])
    assert_tree_equals_scratch(memory_root, tmp_path, SMALL_TREE)


def test_load_ext_on_a_full_disk_prints_one_line_and_loads(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    seeded_memory(memory_root, days=3)
    (memory_root / "memory" / ".compaction-state.json").unlink()
    shutil.rmtree(memory_root / "memory" / "daily")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    monkeypatch.setattr(store_module.os, "replace", full)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%load_ext hipo")
    try:
        session = current(shell)
        assert session.startup is not None and session.startup.error
        assert "No space left on device" in session.startup.error
        out = capsys.readouterr().out
        assert "Traceback" not in out and "No space left on device" in out
        monkeypatch.undo()
        shell.run_cell("%hipo compact")
        assert (memory_root / "memory" / "daily").is_dir()
        assert_derived_whole(memory_root)
    finally:
        unload_ipython_extension(shell)


def tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_a_really_full_disk(tmp_path: Path) -> None:
    """On a 1 MB tmpfs (mounting needs root; skipped otherwise), with 700 kB of ballast:
    checkpoints until the disk is full. Every append lands whole or fails with a one-line
    WriteError and leaves nothing; once space is freed the next load works."""
    disk = tmp_path / "disk"
    if os.geteuid() != 0 or not tmpfs(disk, "1m"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    memory = None
    try:
        ballast = disk / "ballast"
        ballast.write_bytes(b"\0" * 700_000)
        root = disk / "nb"
        root.mkdir()
        memory = fixed_memory(root)
        written, append_failures, other_failures = [], [], []
        for number in range(300):
            name = token("t", number)
            try:
                memory.remember(f"Fill {name}", checked_body(name, 3000))
                written.append(name)
            except WriteError as error:
                append_failures.append(str(error))
            except Exception as error:  # noqa: BLE001 - the index's own error, listed below
                other_failures.append(f"{type(error).__name__}: {error}")
            if len(append_failures) >= 5:
                break
        assert append_failures, "the disk never filled"
        assert all("No space left on device" in f and "\n" not in f for f in append_failures)
        assert all("disk is full" in f for f in other_failures), other_failures
        memory.close()
        assert_raw_whole(root, written)
        ballast.unlink()  # space is freed: the next load works and repairs the index
        memory = fixed_memory(root)
        memory.compact()
        assert_derived_whole(root)
        for name in (written[0], written[-1]):
            assert any(name in hit.title for hit in memory.recall(name).hits), name
    finally:
        if memory is not None:
            memory.close()
        if subprocess.run(["umount", str(disk)], check=False).returncode:
            subprocess.run(["umount", "-l", str(disk)], check=False)


def test_an_index_that_cannot_be_written_does_not_fail_a_written_checkpoint(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = fixed_memory(memory_root)
    memory.remember(f"First {token('x', 1)}", checked_body(token("x", 1)))

    def disk_full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Fts5Index, "_put", disk_full)  # the raw log has room, the index not
    checkpoint = memory.remember(f"Second {token('x', 2)}", checked_body(token("x", 2)))
    assert checkpoint.id
    monkeypatch.undo()
    assert any(token("x", 2) in hit.title for hit in memory.recall(token("x", 2)).hits)


# --- damaged derived files ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (b"", "missing"),
        (b"{not json", "unreadable"),
        (b'{"hipo": {"version": 1, "no', "unreadable"),
        (b"[1, 2, 3]", "not a hipo state file"),
        (b'{"hipo": {"nodes": "nope"}}', "not a hipo state file"),
    ],
)
def test_a_missing_or_unreadable_state_is_rebuilt_and_said(
    memory_root: Path, tmp_path: Path, damage: bytes, why: str
) -> None:
    names = seeded_memory(memory_root, days=12)
    raw = {p.name: p.read_bytes() for p in (memory_root / "memory").glob("2026-*.md")}
    state = memory_root / "memory" / ".compaction-state.json"
    if damage:
        state.write_bytes(damage)
    else:
        state.unlink()
    report = fixed_memory(memory_root, SMALL_TREE).compact()
    assert any(".compaction-state.json" in e and why in e for e in report.errors), report.errors
    assert {p.name: p.read_bytes() for p in (memory_root / "memory").glob("2026-*.md")} == raw
    assert json.loads(state.read_text())["hipo"]["nodes"]
    assert_raw_whole(memory_root, names)
    assert_tree_equals_scratch(memory_root, tmp_path, SMALL_TREE)


@pytest.mark.parametrize(
    ("node", "cut"),
    [
        ("daily/2026-03-12.md", 30),  # tentative, cut inside the frontmatter
        ("daily/2026-03-02.md", 30),  # fixed, cut inside the frontmatter
        ("daily/2026-03-02.md", -40),  # fixed, cut in the body mid-line
        ("weekly/2026-W10.md", 0),  # emptied
        ("monthly/2026-03.md", -1),  # a garbage byte instead of the end
        ("ROOT.md", 20),
    ],
)
def test_a_half_written_node_is_rebuilt_from_its_sources(
    memory_root: Path, tmp_path: Path, node: str, cut: int
) -> None:
    seeded_memory(memory_root, days=15)
    path = memory_root / "memory" / node
    data = path.read_bytes()
    if cut == -1:
        path.write_bytes(data[:-10] + b"\xff")
    else:
        path.write_bytes(data[:cut])  # another tool stopped writing here
    report = fixed_memory(memory_root, SMALL_TREE).compact()
    assert any(e.startswith(f"memory/{node} was ") for e in report.errors), report.errors
    assert path.read_bytes() == data
    assert_tree_equals_scratch(memory_root, tmp_path, SMALL_TREE)


def test_a_corrupt_or_missing_index_is_rebuilt(memory_root: Path) -> None:
    names = seeded_memory(memory_root, days=5)
    database = memory_root / "memory" / ".index" / "fts5.sqlite3"
    for damage in ("garbage", "missing", "foreign"):
        if damage == "garbage":
            database.write_bytes(b"SQLite format 3\x00" + os.urandom(5000))
        elif damage == "missing":
            shutil.rmtree(database.parent)
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{database}{suffix}").unlink(missing_ok=True)
            with sqlite3.connect(database) as other:
                other.execute("create table accounts (name text)")
        memory = fixed_memory(memory_root)
        hits = memory.recall(names[7])
        assert any(names[7] in hit.title for hit in hits.hits), damage
        memory.close()


# --- Claude failing in the middle of a pass -------------------------------------------------------
SUMMARY = "## Topics\nreliability, checks\n## Key Decisions\n- keep going\n"


def test_claude_failing_on_the_second_call_the_pass_finishes_extractively(
    memory_root: Path, api: FakeMessagesAPI
) -> None:
    api.replies.extend([SUMMARY] * 20)
    api.failures.extend([None, 500])  # the first call answers, the second fails, then fine
    memory = Memory(
        memory_root,
        config=SMALL_TREE,
        summarizer=llm.ClaudeSummarizer(client=api.client()),
        today=lambda: TODAY,
    )
    for offset in range(3):
        day = TODAY - timedelta(days=offset)
        for number in range(4):
            name = token(f"k{offset}", number)
            memory.remember(f"Step {name}", checked_body(name), on=day)
    report = memory.compact()
    failed = [e for e in report.errors if "claude summarizer failed" in e]
    assert len(failed) == 1, report.errors
    assert "used extractive" in failed[0]
    node = failed[0].split(":")[0]
    assert (memory_root / "memory" / ".compaction-state.json").exists()  # the pass finished
    summarized = [n for n in report.summarized if n.startswith("memory/daily/")]
    assert len(summarized) == 3 and node in summarized
    day = node.rsplit("/", 1)[1]
    source = (memory_root / "memory" / day).read_text()
    sources = [Source(f"memory/{day}", source)]
    extractive = ExtractiveSummarizer().summarize("daily", day[:-3], sources)
    assert extractive.strip() in (memory_root / node).read_text()
    for other in summarized:
        if other != node:
            assert "- keep going" in (memory_root / other).read_text()
    assert len(api.message_requests()) >= 3
    assert derived_files(memory_root)
