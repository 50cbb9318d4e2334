"""Every file hipo reads beside the memory, and every input it is handed, may lie (issue 37).

Team state (`memory/.index/team-queue.json`, `team-sync.json`), `%%ask` conversations, graph
state, a model's `hipo-embedding.json`, imports and transcripts: a FIFO or a device in their
place never hangs a command, JSON of another shape, nested 100,000 deep, a 5,000-digit number or
`1e400` is one line naming the file (and the line) instead of a traceback, a damaged state file
is set aside and started afresh, and nothing already written is lost. Driven through real
processes: the `hipo` command in a subprocess with a timeout, a real IPython shell, and a real
Jupyter server for the per-folder locks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401 - fixtures
    api_fixture,
    claude_shell_fixture,
    new_shell,
    run,
    served_fixture,
)
from IPython.core.error import UsageError

from hipo_jupyter.memory import HipoError
from hipo_jupyter.memory.search.embed_settings import load_settings

TODAY = "2026-03-12"
TIMEOUT_S = 60  # a command that hangs fails its test, not the suite
DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "1" * 5000
UNREACHABLE_TEAM = "postgresql://hipo@127.0.0.1:9/none?connect_timeout=1"

# What a damaged JSON file may hold (besides not being a file at all).
BAD_JSON = {
    "other-shape": json.dumps({"days": 5, "attempts": "x", "files": [1], "target": {}}),
    "a-list": "[1, 2, 3]",
    "deep": DEEP,
    "huge-int": '{"attempts": ' + HUGE_INT + "}",
    "overflow": '{"attempts": 1e400}',
    "not-json": "{not json",
}


def hipo(root: Path, *args: str, stdin: str = "", env: dict | None = None):
    """`hipo --root ROOT ARGS` as a process of its own, killed after TIMEOUT_S."""
    environment = {key: value for key, value in os.environ.items() if key != "HIPO_TEAM"}
    environment.update(HIPO_TODAY=TODAY, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args],
        input=stdin,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def one_line_error(done: subprocess.CompletedProcess, *names: str) -> str:
    """Exit 2 and one stderr line, naming each of `names`; no traceback."""
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    line = done.stderr.strip()
    assert "\n" not in line, line
    for name in names:
        assert name in line, line
    return line


def make_kind(path: Path, kind: str, text: str = "") -> None:
    """Put a FIFO, a /dev/zero link, a folder or the text `text` at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_text(text)


def set_aside(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.damaged-*"))


# --- team state ---------------------------------------------------------------------------------
QUEUE_CASES = ["fifo", "dev-zero", "folder", *BAD_JSON]


@pytest.mark.parametrize("kind", QUEUE_CASES)
def test_a_damaged_team_queue_never_hangs_or_fails_remember(memory_root: Path, kind: str) -> None:
    pytest.importorskip("psycopg", reason="the team extra is not installed")
    queue = memory_root / "memory" / ".index" / "team-queue.json"
    make_kind(queue, kind, BAD_JSON.get(kind, ""))
    done = hipo(
        memory_root,
        "remember",
        "Pricing decision [project]",
        stdin="- decisions: cut the starter tier by 15%",
        env={"HIPO_TEAM": UNREACHABLE_TEAM, "HIPO_AUTHOR": "eve"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "Pricing decision" in (memory_root / "memory" / f"{TODAY}.md").read_text()
    assert "team-queue.json" in done.stderr and "set aside" in done.stderr
    assert set_aside(queue.parent, queue.name), list(queue.parent.iterdir())
    # the queue starts afresh as a full sync, so no day that was queued is lost
    assert json.loads(queue.read_text()).get("all") is True


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep", "other-shape", "huge-int"])
def test_a_damaged_team_sync_state_never_hangs_team_sync(
    memory_root: Path, team_url: str, kind: str
) -> None:
    env = {"HIPO_TEAM": team_url, "HIPO_AUTHOR": "eve"}
    assert hipo(memory_root, "remember", "Kept [project]", stdin="- outcome: kept").returncode == 0
    state = memory_root / "memory" / ".index" / "team-sync.json"
    make_kind(state, kind, BAD_JSON.get(kind, ""))
    done = hipo(memory_root, "team", "sync", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "team-sync.json" in done.stderr and "set aside" in done.stderr
    assert set_aside(state.parent, state.name)
    assert json.loads(state.read_text())["files"]  # started afresh, and the log was sent


# --- imports and transcripts --------------------------------------------------------------------
CLAUDE_LINE = json.dumps(
    {
        "type": "user",
        "uuid": "u1",
        "timestamp": "2026-03-11T10:00:00Z",
        "message": {"role": "user", "content": "hello"},
    }
)


@pytest.mark.parametrize(
    ("second_line", "words"),
    [
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested deeper"),
        ('{"type": "user", "n": ' + HUGE_INT + "}", "digits"),
        ('{"type": "user", "n": 1e400}', "out of range"),
        ("[" * 100_000, "nested deeper"),
    ],
)
@pytest.mark.parametrize("command", [("import",), ("check", "--transcript")])
def test_hostile_transcript_lines_are_one_line_naming_the_line(
    memory_root: Path, tmp_path: Path, second_line: str, words: str, command: tuple[str, ...]
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(CLAUDE_LINE + "\n" + second_line + "\n")
    done = hipo(memory_root, *command, str(transcript))
    one_line_error(done, "session.jsonl", "line 2", words)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (DEEP, "nested deeper"),
        ('[{"role": "user", "content": "hi", "time": ' + HUGE_INT + "}]", "digits"),
        ('[{"role": "user", "content": "hi", "time": "' + HUGE_INT + '"}]', "time"),
        (
            json.dumps(
                {
                    "speaker_a": "A",
                    "speaker_b": "B",
                    "session_1": [],
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_" + HUGE_INT: [],
                }
            ),
            "session",
        ),
    ],
)
def test_hostile_json_imports_are_one_line_naming_the_file(
    memory_root: Path, tmp_path: Path, content: str, words: str
) -> None:
    source = tmp_path / "turns.json"
    source.write_text(content)
    done = hipo(memory_root, "import", str(source))
    one_line_error(done, "turns.json", words)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_an_import_that_is_not_a_file_is_refused_at_once(
    memory_root: Path, tmp_path: Path, kind: str
) -> None:
    source = tmp_path / "turns.jsonl"
    make_kind(source, kind)
    one_line_error(hipo(memory_root, "import", str(source)), "turns.jsonl")


# --- the root -----------------------------------------------------------------------------------
def test_a_root_of_an_unknown_user_is_one_line(tmp_path: Path) -> None:
    done = hipo(Path("~nosuchuser-hipo/x"), "status")
    one_line_error(done, "~nosuchuser-hipo")
    environment = {**os.environ, "HIPO_ROOT": "~nosuchuser-hipo/x"}
    done = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "status"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=tmp_path,
    )
    one_line_error(done, "~nosuchuser-hipo", "HIPO_ROOT")


def test_config_root_of_an_unknown_user_is_a_usage_error(memory_root: Path) -> None:
    shell = new_shell()
    run(shell, "%config Hipo.root = '~nosuchuser-hipo/x'")
    with pytest.raises(UsageError) as raised:
        run(shell, "%load_ext hipo")
        run(shell, "%hipo status")
    assert "~nosuchuser-hipo" in str(raised.value) and "\n" not in str(raised.value)


# --- %%ask conversations ------------------------------------------------------------------------
CONVERSATION_DAMAGE = {
    "anchor-number": {"version": 1, "anchor": 5},
    "summary-list": {"version": 1, "summary": ["a"]},
    "turn-role": {"version": 1, "active": [{"role": 7, "text": "hi"}]},
    "folded-overflow": '{"version": 1, "folded": 1e400}',
    "deep": DEEP,
}


@pytest.mark.parametrize("damage", [*CONVERSATION_DAMAGE, "fifo", "dev-zero"])
def test_a_damaged_conversation_is_set_aside_and_ask_works(
    claude_shell, memory_root: Path, damage: str, capsys
) -> None:
    path = memory_root / "memory" / ".conversations" / "console.json"
    value = CONVERSATION_DAMAGE.get(damage, "")
    text = value if isinstance(value, str) else json.dumps(value)
    make_kind(path, damage if damage in ("fifo", "dev-zero") else "text", text)
    run(claude_shell, "%%ask\nWhat did we decide?")
    shown = capsys.readouterr().out
    assert "set aside" in shown and "console.json" in shown and "Traceback" not in shown
    assert json.loads(path.read_text())["active"]  # the new conversation was saved
    assert len(list(path.parent.glob("console-*.json"))) == 1  # the damaged one, kept


# --- a model's settings -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"max_tokens": ' + HUGE_INT + "}", "digits"),
        (DEEP, "nested deeper"),
        ('{"max_tokens": 1e400}', "out of range"),
    ],
)
def test_hostile_embedding_settings_are_one_line(tmp_path: Path, content: str, words: str) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx")
    (tmp_path / "hipo-embedding.json").write_text(content)
    with pytest.raises(HipoError) as raised:
        load_settings(model)
    assert "hipo-embedding.json" in str(raised.value) and words in str(raised.value)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_embedding_settings_that_are_no_small_file_are_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx")
    settings = tmp_path / "hipo-embedding.json"
    if kind == "huge":  # 2 GB, sparse: refused by its size, never read
        with settings.open("wb") as handle:
            handle.truncate(2 << 30)
    else:
        make_kind(settings, kind)
    started = time.perf_counter()
    with pytest.raises(HipoError, match="hipo-embedding.json"):
        load_settings(model)
    assert time.perf_counter() - started < 2  # refused by fstat: was 13 s and 4 GB read whole


# --- the server's per-folder locks --------------------------------------------------------------
async def test_bad_paths_leave_no_lock_behind(jp_fetch, jp_serverapp) -> None:
    from tornado.httpclient import HTTPClientError

    from hipo_jupyter.server.handlers import LOCKS_KEY

    for number in range(300):
        bad = [f"no/such/{number}/x.ipynb", f"../{number}", f"/etc/{number}"][number % 3]
        with pytest.raises(HTTPClientError) as raised:
            await jp_fetch("hipo/api/budget", params={"path": bad})
        assert raised.value.code in (400, 403, 404)
    locks = jp_serverapp.web_app.settings.get(LOCKS_KEY)
    assert locks is not None and len(locks) == 0


# --- MCP lines ----------------------------------------------------------------------------------
def test_mcp_refuses_a_line_over_the_bound_and_goes_on(memory_root: Path) -> None:
    """A 17 MB line, a 100,000-deep one and a 5,000-digit id: each a JSON-RPC error reply, and
    the next request is answered; a 200 MB line is read through without being kept (peak
    memory stays under 200 MB)."""
    import select

    pytest.importorskip("mcp")
    env = {key: value for key, value in os.environ.items() if key != "HIPO_ROOT"}
    env.update(HIPO_SEMANTIC="0", HIPO_TODAY=TODAY)
    process = subprocess.Popen(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(memory_root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )

    def reply(line: bytes) -> dict:
        process.stdin.write(line + b"\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT_S)
        assert ready, f"no reply to {line[:60]!r}"
        return json.loads(process.stdout.readline())

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
        start = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        assert "result" in reply(json.dumps(start).encode())
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        huge_id = b'{"jsonrpc": "2.0", "id": ' + HUGE_INT.encode() + b', "method": "ping"}'
        for bad in (b"[" * (17 << 20), DEEP.encode(), huge_id):
            assert reply(bad)["error"]["code"] in (-32700, -32600)
        assert reply(b" " * (200 << 20))["error"]["code"] == -32700  # 200 MB, never held whole
        peak_kb = int(Path(f"/proc/{process.pid}/status").read_text().split("VmHWM:")[1].split()[0])
        assert peak_kb < 200 << 10, f"peak {peak_kb // 1024} MB"
        answer = reply(b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
        assert answer["id"] == 7 and "result" in answer
    finally:
        process.stdin.close()
        process.wait(timeout=TIMEOUT_S)


@pytest.mark.parametrize("first", [DEEP.encode(), b'{"id": ' + HUGE_INT.encode() + b"}"])
def test_mcp_answers_a_hostile_first_line_and_then_initialize(memory_root: Path, first) -> None:
    """The first line is read before the SDK starts (`mcp.early`): a 100,000-deep one was a
    RecursionError traceback, and a first line longer than 8 KiB lost its end (and so the next
    line). Now: a -32700 reply, then `initialize` is answered."""
    import select

    pytest.importorskip("mcp")
    env = {key: value for key, value in os.environ.items() if key != "HIPO_ROOT"}
    env.update(HIPO_SEMANTIC="0", HIPO_TODAY=TODAY)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
    start = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
    errors = (memory_root.parent / "mcp-stderr.txt").open("w+b")  # a file: a pipe could fill
    process = subprocess.Popen(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(memory_root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        env=env,
    )
    try:
        replies = []
        # one line at a time: a bad first line and `initialize` in one write race in the SDK's
        # start on main as well (about one run in three loses `initialize`)
        for line in (first, json.dumps(start).encode()):
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], TIMEOUT_S)
            assert ready, (replies, process.poll())
            replies.append(json.loads(process.stdout.readline()))
        assert replies[0]["error"]["code"] in (-32700, -32600)
        assert replies[1]["id"] == 0 and "result" in replies[1]
    finally:
        process.stdin.close()
        process.wait(timeout=TIMEOUT_S)
    errors.seek(0)
    assert b"Traceback" not in errors.read()


def test_a_conversations_folder_linking_out_is_neither_read_nor_written(
    claude_shell, memory_root: Path, tmp_path: Path, capsys
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "console.json").write_text('{"outside": true}')
    (memory_root / "memory").mkdir(exist_ok=True)
    (memory_root / "memory" / ".conversations").symlink_to(outside)
    run(claude_shell, "%%ask\nWhat did we decide?")
    shown = capsys.readouterr().out
    assert ".conversations is a symbolic link" in shown and "Traceback" not in shown
    assert [p.name for p in outside.iterdir()] == ["console.json"]
    assert (outside / "console.json").read_text() == '{"outside": true}'


# --- the one parser ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        (DEEP, "line 1: JSON nested deeper than 64 levels"),
        ('{\n "a": [\n  ' + HUGE_INT + "]}", "line 3: an integer of 5,000 digits"),
        ("[1,\n1e400]", "line 2: the number 1e400 is out of range"),
        ("[NaN]", "NaN is not a JSON number"),
        ('{"a": 1,\n', "line 2 column 1: not valid JSON"),
        (b"\xff[]", "not UTF-8"),
    ],
)
def test_the_one_parser_names_the_file_and_the_line(text, words: str) -> None:
    from hipo_jupyter.memory.disk import JsonInputError, parse_json

    with pytest.raises(JsonInputError) as raised:
        parse_json(text, "memory/x.json")
    assert str(raised.value).startswith("memory/x.json") and words in str(raised.value)
    assert "\n" not in str(raised.value)


def test_brackets_inside_strings_are_not_depth() -> None:
    from hipo_jupyter.memory.disk import parse_json

    text = json.dumps({"code": "[" * 10_000 + '\\"{' * 100, "n": -(10**19)})
    assert parse_json(text, "x")["n"] == -(10**19)


# --- files added since: the last-sent record and the MCP clients' config files ------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep", "huge-int", "overflow"])
def test_a_client_config_that_lies_is_left_as_it_is_in_one_line(tmp_path: Path, kind: str) -> None:
    config = tmp_path / "claude_desktop_config.json"
    make_kind(config, kind, BAD_JSON.get(kind, ""))
    script = (
        "import sys; from pathlib import Path\n"
        "from hipo_jupyter.mcp.install import InstallError, read_config\n"
        "try: read_config(Path(sys.argv[1]))\n"
        "except InstallError as error: print(error)\n"
    )
    done = subprocess.run(  # a process of its own: a FIFO hung it
        [sys.executable, "-c", script, str(config)], capture_output=True, text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-1000:]
    assert str(config) in done.stdout and done.stdout.count("\n") == 1


@pytest.mark.parametrize("kind", ["fifo", "deep", "huge-int", "overflow", "other-shape"])
def test_a_sent_record_that_lies_reads_as_none(memory_root: Path, kind: str) -> None:
    from hipo_jupyter.memory.disk import Store
    from hipo_jupyter.memory.disk.sent import read_sent, sent_path

    store = Store(memory_root)
    make_kind(memory_root / sent_path("a.ipynb"), kind, BAD_JSON.get(kind, ""))
    assert read_sent(store, "a.ipynb") is None
