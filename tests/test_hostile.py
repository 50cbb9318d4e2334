"""A memory folder that lies, and input that bites: no data lost, no hang, no traceback.

Each case builds one hostile folder state or one hostile input, drives a real `hipo` process
(under a timeout, so a hang fails instead of blocking the suite), a real IPython shell or the
engine, and checks the promise of the README: bad input is exit 2 with one line (or a one-line
UsageError), never a traceback; nothing hangs; and every checkpoint written before is still in
its raw log byte for byte and found by recall.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from hipo_jupyter.memory.disk import appends
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, new_id, render
from hipo_jupyter.memory.requests import CheckpointDraft, RecallQuery, storable

TODAY = "2026-11-02"
TIMEOUT = 60
SENTINEL_TITLE = "Sentinel zebrafish census"


def run_hipo(root: Path | None, *args: str, stdin: bytes = b"", cwd: Path | None = None):
    """A real `hipo` process; (exit code, stdout, stderr). A hang fails the test."""
    env = {**os.environ, "HIPO_TODAY": TODAY, "HIPO_SEMANTIC": "0"}
    argv = [sys.executable, "-m", "hipo_jupyter.cli"]
    if root is not None:
        argv += ["--root", str(root)]
    done = subprocess.run(
        [*argv, *args], input=stdin, capture_output=True, timeout=TIMEOUT, env=env, cwd=cwd
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hipo: error:"), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture
def seeded(memory_root: Path) -> tuple[Path, bytes]:
    """A memory with one checkpoint on TODAY; returns (its raw log, the log's bytes)."""
    code, _, err = run_hipo(
        memory_root, "remember", SENTINEL_TITLE, stdin=b"- outcome: 41 fish in tank 7\n"
    )
    assert code == 0, err
    log = memory_root / "memory" / f"{TODAY}.md"
    return log, log.read_bytes()


def assert_kept(memory_root: Path, log: Path, before: bytes) -> None:
    """The log still starts with every byte written before, and recall still finds it."""
    assert log.read_bytes()[: len(before)] == before
    code, out, err = run_hipo(memory_root, "recall", "zebrafish", "--json")
    assert code == 0, err
    assert any(hit["title"] == SENTINEL_TITLE for hit in json.loads(out)["hits"]), out


# --- append intents: a repair removes only what it can prove it wrote --------------------------


def test_a_garbage_intent_never_truncates_the_log(memory_root: Path, seeded) -> None:
    log, before = seeded
    intent = log.with_name(f".{log.name}.append")
    intent.write_text(json.dumps({"size": 0, "length": 1000000, "sha256": "00"}))
    code, _, err = run_hipo(memory_root, "status")
    assert code == 0, err
    assert log.read_bytes() == before
    assert "proves nothing" in err and "kept" in err
    assert_kept(memory_root, log, before)


@pytest.mark.parametrize(
    "garbage",
    ["[]", "null", "1", '"x"', "{", '{"size": "a", "length": 1, "sha256": "x"}'],
)
def test_an_intent_of_any_shape_keeps_the_log(memory_root: Path, seeded, garbage: str) -> None:
    log, before = seeded
    log.with_name(f".{log.name}.append").write_text(garbage)
    assert run_hipo(memory_root, "compact")[0] == 0
    assert log.read_bytes() == before


def killed_writer(log: Path, before: bytes) -> bytes:
    """What a writer killed mid-append leaves: its intent and the first part of its payload."""
    payload = b"\n" + render(Checkpoint("Half a checkpoint", text="y" * 6000, id=new_id())).encode()
    intent = appends.intent_record(len(before), payload)
    log.with_name(f".{log.name}.append").write_text(json.dumps(intent))
    with log.open("ab") as handle:
        handle.write(payload[:3000])
    return payload


def test_a_note_appended_after_a_killed_writer_is_never_cut(memory_root: Path, seeded) -> None:
    log, before = seeded
    killed_writer(log, before)
    with log.open("ab") as handle:  # a person (or another tool) adds a note by hand
        handle.write(b"\n\n## Hand note about axolotl feeding\nfed at noon\n")
    written = log.read_bytes()
    code, out, err = run_hipo(memory_root, "recall", "axolotl")
    assert code == 0, err
    assert "axolotl" in out.lower()
    assert log.read_bytes() == written  # nothing removed: the tail is not only the append's
    assert "nothing was cut" in err
    code, out, _ = run_hipo(memory_root, "recall", "axolotl")
    assert "axolotl" in out.lower() and log.read_bytes() == written


def test_a_proven_half_append_is_cut_exactly(memory_root: Path, seeded) -> None:
    log, before = seeded
    killed_writer(log, before)
    code, _, err = run_hipo(memory_root, "status")
    assert code == 0, err
    assert log.read_bytes() == before
    assert "matched its intent" in err


# --- raw logs that are not regular files ------------------------------------------------------


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()


@pytest.mark.parametrize(
    "make",
    [
        make_fifo,
        make_socket,
        lambda path: path.mkdir(),
        lambda path: path.symlink_to("/dev/zero"),
        lambda path: path.symlink_to("/dev/null"),
        lambda path: path.symlink_to("/proc/self/status"),
        lambda path: path.symlink_to(path.name),  # a link to itself: a loop
    ],
    ids=["fifo", "socket", "folder", "dev-zero", "dev-null", "proc", "loop"],
)
@pytest.mark.parametrize("command", [["status"], ["recall", "zebrafish"], ["compact"], ["check"]])
def test_a_raw_log_that_is_not_a_file_is_skipped(
    memory_root: Path, seeded, make, command: list[str]
) -> None:
    log, before = seeded
    make(memory_root / "memory" / "2026-11-01.md")
    code, _, err = run_hipo(memory_root, *command)
    assert code in (0, 1), err  # check may fail a rule; it must answer
    assert "Traceback" not in err
    assert_kept(memory_root, log, before)


def test_a_fifo_node_and_layer1_file_never_block(memory_root: Path, seeded) -> None:
    log, before = seeded
    assert run_hipo(memory_root, "compact")[0] == 0
    for name in ("memory/daily/2026-11-02.md", "SCRATCHPAD.md", "memory/.compaction-state.json"):
        target = memory_root / name
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    for command in (["status"], ["layer1"], ["compact"], ["recall", "zebrafish"]):
        code, _, err = run_hipo(memory_root, *command)
        assert code == 0 and "Traceback" not in err, (command, err)
    assert_kept(memory_root, log, before)


# --- writes and reads that escape the root ------------------------------------------------------


def test_remember_never_writes_through_a_symlinked_raw_log(memory_root: Path, tmp_path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("private\n")
    (memory_root / "memory").mkdir()
    (memory_root / "memory" / f"{TODAY}.md").symlink_to(outside)
    code, _, err = run_hipo(memory_root, "remember", "Leak", stdin=b"- outcome: x\n")
    assert_one_line_error(code, err, "symbolic link")
    assert outside.read_text() == "private\n"


def test_a_memory_folder_that_is_a_link_out_is_not_written(memory_root: Path, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (memory_root / "memory").symlink_to(elsewhere)
    code, _, err = run_hipo(memory_root, "remember", "Leak", stdin=b"- outcome: x\n")
    assert_one_line_error(code, err, "outside the memory root")
    assert not list(elsewhere.iterdir())


# --- dates, counts and text at the door --------------------------------------------------------


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "1899-12-31", "2200-01-01"])
def test_dates_out_of_range_are_refused_everywhere(memory_root: Path, seeded, day: str) -> None:
    log, before = seeded
    code, _, err = run_hipo(memory_root, "remember", "Far", "--date", day, stdin=b"x\n")
    assert_one_line_error(code, err, "out of range")
    assert_one_line_error(*run_hipo(memory_root, "recall", "x", "--since", day)[::2], "range")
    assert not (memory_root / "memory" / f"{day}.md").exists()
    assert_kept(memory_root, log, before)


@pytest.mark.parametrize("day", ["1900-01-01", "2199-12-31"])
def test_the_edges_of_the_range_work(memory_root: Path, day: str) -> None:
    code, _, err = run_hipo(memory_root, "remember", "Edge", "--date", day, stdin=b"x\n")
    if day > TODAY:  # a note is never dated after today; a log written by hand still is read
        assert_one_line_error(code, err, "in the future")
        (memory_root / "memory").mkdir(parents=True, exist_ok=True)
        (memory_root / "memory" / f"{day}.md").write_text("## Edge\nx\n")
    else:
        assert code == 0, err
    assert run_hipo(memory_root, "compact")[0] == 0
    code, out, _ = run_hipo(memory_root, "recall", "edge")
    assert code == 0 and "Edge" in out
    names = {p.name for p in (memory_root / "memory" / "weekly").iterdir()}
    assert all(len(name.split("-W")[0]) == 4 for name in names), names


def test_a_raw_log_named_for_year_9999_is_skipped(memory_root: Path, seeded) -> None:
    log, before = seeded
    (memory_root / "memory" / "9999-12-31.md").write_text("## Far future\n- outcome: x\n")
    for command in (["status"], ["compact"], ["check"], ["recall", "zebrafish"]):
        code, _, err = run_hipo(memory_root, *command)
        assert code in (0, 1) and "OverflowError" not in err and "Traceback" not in err, err
    assert "9999-12-31" in run_hipo(memory_root, "status")[2]
    assert_kept(memory_root, log, before)


@pytest.mark.parametrize(
    "turn",
    [{"time": "9999-12-31"}, {"time": 1e20}, {"time": -1e20}, {"time": "0001-01-01T00:00:00"}],
)
def test_import_refuses_times_out_of_range(memory_root: Path, tmp_path, turn: dict) -> None:
    file = tmp_path / "chat.json"
    file.write_text(json.dumps([{"speaker": "user", "text": "hello", **turn}]))
    code, _, err = run_hipo(memory_root, "import", str(file))
    assert_one_line_error(code, err)
    assert not list(memory_root.rglob("*.md"))  # refused before anything was written


def test_import_of_a_device_or_deep_json_is_one_line(memory_root: Path, tmp_path) -> None:
    assert_one_line_error(*run_hipo(memory_root, "import", "/dev/zero")[::2], "not a regular")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert_one_line_error(*run_hipo(memory_root, "import", str(deep))[::2], "nested")


@pytest.mark.parametrize(
    ("args", "stdin", "words"),
    [
        (["remember", "T"], b"\xff\xfe not utf-8", ["not UTF-8"]),
        (["remember", "x" * 100_000], b"body\n", ["title", "limit"]),
        (["recall", "x", "-k", "4000000000000000000"], b"", ["at most"]),
        (["recall", "x", "-k", "-3"], b"", ["at least 1"]),
        (["remember", "T", "--date", "20260301"], b"x\n", ["bad date"]),
        (["remember", "T", "--date", "2026-W10-1"], b"x\n", ["bad date"]),
        (["recall", "x", "--since", "2026-03-12", "--until", "2026-03-01"], b"", ["after"]),
    ],
)
def test_bad_input_is_one_line(memory_root: Path, seeded, args, stdin, words) -> None:
    log, before = seeded
    assert_one_line_error(*run_hipo(memory_root, *args, stdin=stdin)[::2], *words)
    assert_kept(memory_root, log, before)


def test_control_characters_are_stored_escaped_and_the_day_stays(memory_root: Path) -> None:
    body = b"- outcome: nul\x00 bell\x07 esc\x1b[31m done\r\n- analysis: tab\tok\n"
    code, _, err = run_hipo(memory_root, "remember", "Control\x01 quail", stdin=body)
    assert code == 0, err
    log = (memory_root / "memory" / f"{TODAY}.md").read_bytes()
    assert b"\x00" not in log and b"\x07" not in log and b"\x1b" not in log and b"\r" not in log
    assert b"nul\\x00 bell\\x07" in log and b"tab\tok" in log
    assert run_hipo(memory_root, "compact")[0] == 0
    assert (memory_root / "memory" / "daily" / f"{TODAY}.md").is_file()  # the day is in the tree
    code, out, _ = run_hipo(memory_root, "recall", "quail")
    assert code == 0 and "quail" in out


def test_one_rule_for_text_every_way_in() -> None:
    """The draft (magic, CLI, MCP), the import and the write-back store the same text."""
    raw = "a\x00b\ud800c\r\nd\x85e"
    assert storable(raw) == "a\\x00b\\ud800c\nd\\x85e"
    draft = CheckpointDraft.parse("T", raw)
    assert draft.body == storable(raw)
    from hipo_jupyter.memory.intake.importers import ImportRecord, to_checkpoint

    assert to_checkpoint(ImportRecord(None, "T", raw, "s")).text == storable(raw)  # type: ignore[arg-type]


# --- consistency: global options, read commands, modes ------------------------------------------


def test_global_options_after_the_command_and_version(memory_root: Path, seeded) -> None:
    code, out, err = run_hipo(None, "status", "--root", str(memory_root))
    assert code == 0 and "checkpoint" in out, err
    code, out, _ = run_hipo(None, "--version")
    assert code == 0 and out.startswith("hipo ")


@pytest.mark.parametrize("command", [["recall", "x"], ["status"], ["check"], ["layer1"]])
def test_read_commands_create_nothing_where_there_is_no_memory(memory_root: Path, command) -> None:
    assert_one_line_error(*run_hipo(memory_root, *command)[::2], "no memory", "hipo init")
    assert not list(memory_root.iterdir())


def test_broken_pipe_exits_quietly(memory_root: Path, seeded) -> None:
    env = {**os.environ, "HIPO_TODAY": TODAY, "HIPO_SEMANTIC": "0"}
    pipeline = (
        f"{sys.executable} -m hipo_jupyter.cli --root {memory_root} layer1 2>{memory_root}/err"
        " | head -c 1 >/dev/null"
    )
    subprocess.run(["bash", "-c", pipeline], timeout=TIMEOUT, env=env, check=True)
    err = (memory_root / "err").read_text()
    assert "error" not in err.lower() and "Traceback" not in err, err


def test_derived_files_follow_the_umask(memory_root: Path, seeded) -> None:
    assert run_hipo(memory_root, "compact")[0] == 0
    mask = os.umask(0)
    os.umask(mask)
    expected = 0o666 & ~mask
    for path in [memory_root / "memory" / "ROOT.md", *(memory_root / "memory").rglob("daily/*.md")]:
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def test_a_state_file_of_the_wrong_shape_is_rebuilt(memory_root: Path, seeded) -> None:
    log, before = seeded
    assert run_hipo(memory_root, "compact")[0] == 0
    state = memory_root / "memory" / ".compaction-state.json"
    for wrong in (
        {"hipo": {"nodes": {"memory/daily/2026-11-01.md": "x"}}},
        {"hipo": {"nodes": []}},
        {"hipo": []},
        {"hipo": {"nodes": {}, "reopened": "x"}},
        [],
        "text",
        17,
        None,
    ):
        state.write_text(json.dumps(wrong))
        for command in (["status"], ["compact"], ["recall", "zebrafish"]):
            code, _, err = run_hipo(memory_root, *command)
            assert code == 0 and "Traceback" not in err, (wrong, command, err)
    assert_kept(memory_root, log, before)


# --- the magics share the engine's parser -------------------------------------------------------


@pytest.fixture
def shell(memory_root: Path, monkeypatch: pytest.MonkeyPatch):
    from claude_helpers import new_shell

    from hipo_jupyter.ipython.extension import unload_ipython_extension

    monkeypatch.setenv("HIPO_TODAY", TODAY)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%load_ext hipo")
    yield shell
    unload_ipython_extension(shell)


def magic_error(shell, cell: str) -> str:
    """The one-line UsageError a magic raises for `cell` (the shell raises cell errors)."""
    with pytest.raises(UsageError) as raised:
        shell.run_cell(cell)
    assert "\n" not in str(raised.value)
    return str(raised.value)


@pytest.mark.parametrize(
    ("cell", "cli_args"),
    [
        ("%%remember T --date 20260301\nbody", ["remember", "T", "--date", "20260301"]),
        ("%%remember T --date 9999-12-31\nbody", ["remember", "T", "--date", "9999-12-31"]),
        ("%recall x -k 4000000000000000000", ["recall", "x", "-k", "4000000000000000000"]),
        (
            "%recall x --since 2026-03-12 --until 2026-03-01",
            ["recall", "x", "--since", "2026-03-12", "--until", "2026-03-01"],
        ),
        ("%recall x --type diary", ["recall", "x", "--type", "diary"]),
        ("%recall x --mode fuzzy", ["recall", "x", "--mode", "fuzzy"]),
    ],
)
def test_magics_and_cli_give_the_same_error(shell, memory_root: Path, cell, cli_args) -> None:
    from_magic = magic_error(shell, cell)
    code, _, err = run_hipo(memory_root, *cli_args, stdin=b"body\n")
    assert code == 2
    assert err.strip() == f"hipo: error: {from_magic}"


def test_a_lone_surrogate_in_a_magic_body_is_stored(shell, memory_root: Path) -> None:
    shell.run_cell("%%remember Surrogate heron\n- outcome: a\ud800b\x00c")
    log = (memory_root / "memory" / f"{TODAY}.md").read_text()
    assert "a\\ud800b\\x00c" in log
    assert shell.run_cell("%recall heron").result


def test_a_root_that_is_a_file_is_a_usage_error(shell, tmp_path: Path) -> None:
    file = tmp_path / "not-a-folder"
    file.write_text("x")
    shell.run_cell(f"%config Hipo.root = {str(file)!r}")
    for cell in ("%recall pricing", "%%remember T\nbody", "%hipo status"):
        magic_error(shell, cell)


def test_a_title_over_the_limit_is_refused_everywhere() -> None:
    with pytest.raises(Exception, match="title is 100,000 characters"):
        CheckpointDraft.parse("x" * 100_000, "body")
    with pytest.raises(Exception, match="after"):
        RecallQuery.parse("x", since="2026-03-12", until="2026-03-01")


def read_only_mounts() -> bool:
    try:
        mounts = "mount --bind / /mnt && mount -o remount,bind,ro /mnt"
        probe = ["unshare", "-m", "sh", "-c", mounts]
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(not read_only_mounts(), reason="needs unshare -m and bind mounts (root)")
@pytest.mark.parametrize("index", ["kept", "deleted"])
@pytest.mark.parametrize("command", [["recall", "zebrafish"], ["status"]])
def test_read_commands_work_in_a_read_only_folder(memory_root: Path, seeded, index, command):
    """The folder on a read-only mount (root ignores file modes, a mount does not): the index
    that cannot be opened for writing is built in memory, and one line says so."""
    log, before = seeded
    assert run_hipo(memory_root, "compact")[0] == 0
    if index == "deleted":
        shutil.rmtree(memory_root / "memory" / ".index")
    killed_writer(log, before)  # and an intent it may not act on: it must not read the half
    hipo = f"{sys.executable} -m hipo_jupyter.cli --root {memory_root} " + " ".join(command)
    script = (
        f"mount --bind {memory_root} {memory_root} && "
        f"mount -o remount,bind,ro {memory_root} && exec {hipo}"
    )
    env = {**os.environ, "HIPO_TODAY": TODAY, "HIPO_SEMANTIC": "0"}
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=TIMEOUT, env=env
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "Traceback" not in err
    assert "could not be saved" in err
    assert SENTINEL_TITLE in out if command[0] == "recall" else "1 checkpoint" in out
    assert "Half a checkpoint" not in out
