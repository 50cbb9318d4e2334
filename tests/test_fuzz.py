"""Fuzz: the checkpoint and node parsers, the magics' and the CLI's argument parsing, redaction,
the engine's request parser, memory folders in any state (hostile raw logs, state files,
append intents and nodes), Claude's memory tool with random commands, and `hipo mcp` with random
lines and tool calls.

No input may crash them with anything but their documented errors: `ParseError` for bytes that
are not UTF-8 Markdown, `UsageError` for a magic line (IPython's, one line) or a command line
(the CLI's, exit code 2), `SystemExit(0)` for the CLI's `--help`, a `ToolError` of one line
for the memory tool, a JSON-RPC reply to every line `hipo mcp` reads. Render-parse round trips hold
for checkpoints and nodes, redaction is idempotent, and `node_head` judges any bytes.

HIPO_FUZZ_CASES sets the number of cases of the whole file (default 4,000, split by weight);
`benchmarks/fuzz.py --cases 100000` runs the same properties for the figures and prints the
count of each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from test_checkpoint import CHECKPOINTS, TEXT, TRICKY_LINES

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import HipoError, Memory
from hipo_jupyter.memory.disk import JsonInputError, parse_json
from hipo_jupyter.memory.disk.checkpoint import parse_body, parse_log, parse_title, render
from hipo_jupyter.memory.disk.nodes import node_head, parse_node, read_status, render_node
from hipo_jupyter.memory.disk.redact import redact
from hipo_jupyter.memory.disk.store import decode_markdown
from hipo_jupyter.memory.errors import ParseError
from hipo_jupyter.memory.requests import CheckpointDraft, RecallQuery, RequestError

CASES = int(os.environ.get("HIPO_FUZZ_CASES", "4000"))
WEIGHTS = {
    "checkpoint_round_trip": 14,
    "raw_log_text": 14,
    "raw_log_bytes": 8,
    "node_round_trip": 10,
    "node_text": 10,
    "node_head_bytes": 6,
    "magic_lines": 16,
    "magic_runs": 2,
    "cli_argv": 10,
    "redact": 10,
    "request_values": 4,
    "folder_states": 3,
    "memory_tool_commands": 6,
    "mcp_lines": 2,
    "json_files": 4,
}
RUN = Counter()  # cases run per target, read by benchmarks/fuzz.py
FUZZ_DAY = date(2026, 11, 2)
TEXT_BYTES = TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))


def budget(name: str) -> settings:
    share = max(10, CASES * WEIGHTS[name] // sum(WEIGHTS.values()))
    return settings(
        max_examples=share,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


# --- checkpoints ----------------------------------------------------------------------------------
@budget("checkpoint_round_trip")
@given(CHECKPOINTS)
def test_checkpoint_render_parse_round_trip(cp) -> None:
    RUN["checkpoint_round_trip"] += 1
    assert parse_log(render(cp)) == [cp]


@budget("raw_log_text")
@given(TEXT, st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_raw_log_text_parses_and_round_trips(text: str, newline: str) -> None:
    RUN["raw_log_text"] += 1
    for cp in parse_log(text.replace("\n", newline)):
        assert parse_log(render(cp)) == [cp]
    title, kind, tags = parse_title(text)
    assert kind and all(tags)
    fields, _ = parse_body(text)
    assert all(key == key.lower() for key, _ in fields)


@budget("raw_log_bytes")
@given(st.binary(max_size=400) | TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_are_a_log_or_a_parse_error(data: bytes) -> None:
    RUN["raw_log_bytes"] += 1
    try:
        text = decode_markdown(data, "memory/2026-03-12.md")
    except ParseError as error:
        assert "memory/2026-03-12.md" in str(error)
        return
    parse_log(text, date="2026-03-12")


# --- nodes ----------------------------------------------------------------------------------------
META_KEYS = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
META_VALUES = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029\x85"),
    max_size=40,
).map(str.strip)


@budget("node_round_trip")
@given(st.dictionaries(META_KEYS, META_VALUES, max_size=8), TEXT | st.text())
def test_node_render_parse_round_trip(meta: dict, body: str) -> None:
    RUN["node_round_trip"] += 1
    node = parse_node(render_node(meta, body))
    assert node.meta == meta
    assert node.body == body.strip()


@budget("node_text")
@given(
    st.lists(
        st.one_of(TRICKY_LINES, st.sampled_from(["---", "status: fixed", "type:"]), st.text()),
        max_size=10,
    ).map("\n".join)
)
def test_any_node_text_parses(text: str) -> None:
    RUN["node_text"] += 1
    node = parse_node(text)
    assert isinstance(node.meta, dict) and isinstance(node.body, str)
    assert node.status == node.status.strip().lower()
    node.topics  # noqa: B018 - must not raise either


@budget("node_head_bytes")
@given(
    st.binary(max_size=600)
    | st.lists(
        st.sampled_from(["---", "status: fixed", "source-hash: ab", "x" * 300, "\ufffd", ""])
    ).map(lambda lines: "\n".join(lines).encode())
)
def test_node_head_judges_any_bytes(data: bytes) -> None:
    RUN["node_head_bytes"] += 1
    with tempfile.NamedTemporaryFile(suffix=".md") as handle:
        handle.write(data)
        handle.flush()
        head = node_head(Path(handle.name))
        status = read_status(Path(handle.name))
    assert head.damage is None or isinstance(head.damage, str)
    assert isinstance(status, str)
    whole = data.startswith(b"---\n") and b"\n---\n" in data and data.endswith(b"\n")
    if whole and b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return
        assert head.damage is None  # a whole node is never taken for a damaged one


# --- the magics' lines ----------------------------------------------------------------------------
OPTION_WORDS = st.sampled_from(
    [
        *("--type", "--tags", "--date", "-k", "--since", "--until", "--text", "--model"),
        *("--recall", "--no-memory", "--max-tokens", "--new", "-h", "--help", "--", "-"),
        *("project", "feedback", "user", "reference", "2026-03-12", "2026-02-30", "0", "-1"),
        *("status", "compact", "layer1", "budget", "topics", "check", "inject", "on", "off"),
        *("reset", "done", "[user]", "#tag", "a,b", "--type=user", "-k=3", "--typ"),
    ]
)
LINES = st.lists(st.one_of(OPTION_WORDS, st.text(max_size=8)), max_size=8).map(" ".join)


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory):
    from claude_helpers import new_shell

    from hipo_jupyter.ipython import unload_ipython_extension

    root = tmp_path_factory.mktemp("fuzz-memory")
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(root)!r}")
    shell.run_cell("%config Hipo.summarizer = 'extractive'")
    shell.run_cell("%load_ext hipo")
    yield shell
    unload_ipython_extension(shell)


def magics_of(shell) -> dict:
    from hipo_jupyter.ipython import current

    registration = current(shell).registration
    magics, ask = registration.magics, registration.ask_magics
    return {
        "remember": magics.remember,
        "recall": magics.recall,
        "hipo": magics.hipo,
        "ask": ask.ask,
    }


@settings(parent=budget("magic_lines"), suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["remember", "recall", "hipo", "ask"]), LINES)
def test_magic_lines_parse_or_raise_usage_error(shell, name: str, line: str) -> None:
    from hipo_jupyter.ipython.magics import parse_line

    RUN["magic_lines"] += 1
    try:
        args = parse_line(magics_of(shell)[name], line)
    except UsageError as error:
        assert "\n" not in str(error).strip() or name == "ask"
        return
    assert isinstance(args, argparse.Namespace)


@settings(parent=budget("magic_runs"), suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(["recall", "hipo", "remember"]),
    LINES,
    st.sampled_from(["", ": body", ": - outcome: done"]),
)
def test_magics_run_or_raise_usage_error(
    shell, capsys: pytest.CaptureFixture, name: str, line: str, body: str
) -> None:
    RUN["magic_runs"] += 1
    if name == "hipo" and any(word in line.split() for word in ("compact", "reindex")):
        line = line.replace("compact", "status").replace("reindex", "status")  # keep it quick
    with contextlib.suppress(UsageError):  # the one error a magic line may end in
        shell.run_line_magic(name, line + (body if name == "remember" else ""))
    capsys.readouterr()


# --- the CLI's arguments --------------------------------------------------------------------------
ARGV_WORDS = st.sampled_from(
    [
        *("remember", "recall", "compact", "status", "layer1", "check", "init", "reindex"),
        *("--root", "--type", "--tags", "--date", "--title", "-k", "--since", "--json", "--help"),
        *("-h", "--", "2026-13-01", "2026-03-12", "0", "-5", "99999999999999999999", "project"),
    ]
)


@budget("cli_argv")
@given(st.lists(st.one_of(ARGV_WORDS, st.text(max_size=10)), max_size=7))
def test_cli_arguments_parse_or_raise_usage_error(argv: list[str]) -> None:
    RUN["cli_argv"] += 1
    parser = cli.build_parser()
    try:
        args = parser.parse_args(argv)
    except cli.UsageError as error:
        assert str(error)
        return
    except SystemExit as exit_:  # --help: printed, exit code 0 (main() returns it)
        assert exit_.code == 0
        return
    assert args.command in cli.COMMANDS


# --- redaction ------------------------------------------------------------------------------------
SECRET_SHAPES = st.sampled_from(
    [
        "sk-ant-api03-" + "A1b2" * 10,
        "ghp_" + "x9Y8" * 9,
        "AKIA" + "Z" * 16,
        "password=hunter2",
        "https://user:p4ss@host/",
        "-----BEGIN PRIVATE KEY-----",
        "[REDACTED:token]",
        "Authorization: Bearer ",
    ]
)


@budget("redact")
@given(st.lists(st.one_of(SECRET_SHAPES, st.text(max_size=20)), max_size=8).map(" ".join))
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    RUN["redact"] += 1
    once = redact(text)
    assert redact(once) == once


# --- requests and folder states (issue 11) --------------------------------------------------------
@budget("request_values")
@given(
    st.text(max_size=60),
    st.text(max_size=12) | st.integers(),
    st.text(max_size=12),
    st.text(max_size=12),
    st.text(max_size=8),
)
def test_requests_parse_or_raise_one_line(query, k, since, body, kind) -> None:
    """Any values: a checked request, or a RequestError of one line; never anything else."""
    RUN["request_values"] += 1
    for parse in (
        lambda: RecallQuery.parse(query, k=k, since=since or None, type=kind or None),
        lambda: CheckpointDraft.parse(query, body, type=kind or None, on=since or None),
    ):
        try:
            request = parse()
        except RequestError as error:
            assert "\n" not in str(error)
        else:
            text = json_text(request)
            assert "\x00" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def json_text(request) -> str:
    return " ".join(str(value) for value in vars(request).values())


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
ENTRY_KINDS = ("bytes", "fifo", "folder", "dev-null", "link-out", "empty")
RAW_NAMES = st.sampled_from(
    ["2026-11-01.md", "2026-10-31.md", "9999-12-31.md", "0001-01-01.md", "2026-02-30.md"]
)


def make_entry(path: Path, kind: str, data: bytes, outside: Path) -> None:
    if kind == "bytes":
        path.write_bytes(data)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "dev-null":
        path.symlink_to("/dev/null")
    elif kind == "link-out":
        path.symlink_to(outside)
    else:
        path.write_bytes(b"")


@budget("folder_states")
@given(
    st.lists(
        st.tuples(RAW_NAMES, st.sampled_from(ENTRY_KINDS), st.binary(max_size=60) | TEXT_BYTES),
        max_size=4,
        unique_by=lambda entry: entry[0],
    ),
    JSON | st.binary(max_size=40),
    JSON | st.binary(max_size=40),
    st.sampled_from(ENTRY_KINDS),
)
def test_any_folder_state_keeps_the_checkpoints_and_answers(
    entries, state, intent, node_kind
) -> None:
    """A memory with one sentinel checkpoint, then any mix of hostile raw logs, a state file
    and an intent of any JSON (or bytes), a node that is anything: status, compact and recall
    answer (or raise a HipoError), and the sentinel's log is kept byte for byte and found."""
    RUN["folder_states"] += 1
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "nb"
        outside = Path(folder) / "outside.md"
        outside.write_text("outside\n")
        memory = Memory(root, today=lambda: FUZZ_DAY)
        memory.remember("Sentinel ocelot", "- outcome: kept")
        log = root / "memory" / f"{FUZZ_DAY.isoformat()}.md"
        before = log.read_bytes()
        memory.compact()
        memory.close()
        for name, kind, data in entries:
            make_entry(root / "memory" / name, kind, data, outside)
        for path, content in (
            (root / "memory" / ".compaction-state.json", state),
            (log.with_name(f".{log.name}.append"), intent),
        ):
            raw = content if isinstance(content, bytes) else json.dumps(content).encode()
            path.write_bytes(raw)
        node = root / "memory" / "daily" / f"{FUZZ_DAY.isoformat()}.md"
        node.unlink()
        make_entry(node, node_kind, b"---\nstatus: fixed\n", outside)
        memory = Memory(root, today=lambda: FUZZ_DAY)
        try:
            for call in (memory.status, memory.compact, lambda: memory.recall("ocelot")):
                with contextlib.suppress(HipoError):
                    call()
            assert log.read_bytes()[: len(before)] == before
            assert any(hit.title == "Sentinel ocelot" for hit in memory.recall("ocelot").hits)
        finally:
            memory.close()
        assert outside.read_text() == "outside\n"


# --- the memory tool and hipo mcp with random commands -------------------------------------------
TOOL_FIELDS = ["command", "path", "file_text", "view_range", "old_str", "new_str", "insert_line",
               "insert_text", "old_path", "new_path"]  # fmt: skip
TOOL_PATHS = st.sampled_from(
    ["/memories", "/memories/SCRATCHPAD.md", "/memories/knowledge/a.md", "/memories/plans/b.md",
     "/memories/memory/2026-11-02.md", "/memories/memory/ROOT.md", "/memories/../x.md",
     "/memories/knowledge/\nx.md", "/etc/passwd", "/memories/.env"]
)  # fmt: skip
TOOL_VALUES = st.one_of(
    TOOL_PATHS, st.none(), st.booleans(), st.integers(-5, 50), st.floats(allow_nan=True),
    st.text(max_size=30), st.lists(st.one_of(st.integers(-3, 9), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip
TOOL_COMMANDS = st.fixed_dictionaries(
    {"command": st.sampled_from(["view", "create", "str_replace", "insert", "delete", "rename",
                                 "undo_edit", ""]) | TOOL_VALUES},
    optional={name: TOOL_VALUES for name in TOOL_FIELDS[1:]},
)  # fmt: skip


@pytest.fixture(scope="module")
def memory_tool(tmp_path_factory: pytest.TempPathFactory):
    from hipo_jupyter.memory_tool import HipoMemoryTool

    base = tmp_path_factory.mktemp("fuzz-tool")
    (base / "outside.md").write_text("outside\n")
    root = base / "root"
    memory = Memory(root, today=lambda: FUZZ_DAY)
    memory.init()
    tool = HipoMemoryTool(memory)
    yield tool, base
    memory.close()


@budget("memory_tool_commands")
@given(st.one_of(TOOL_COMMANDS, TOOL_VALUES))
def test_memory_tool_answers_or_refuses_in_one_line(memory_tool, command) -> None:
    from anthropic.lib.tools import ToolError

    RUN["memory_tool_commands"] += 1
    tool, base = memory_tool
    try:
        answer = tool.call(command)
        assert isinstance(answer, str)
    except ToolError as error:
        assert len(str(error).splitlines()) == 1, str(error)
    assert (base / "outside.md").read_text() == "outside\n"
    assert sorted(p.name for p in base.iterdir()) == ["outside.md", "root"]


@pytest.fixture(scope="module")
def mcp_process(tmp_path_factory: pytest.TempPathFactory):
    import subprocess
    import sys

    pytest.importorskip("mcp")
    root = tmp_path_factory.mktemp("fuzz-mcp")
    Memory(root, today=lambda: FUZZ_DAY).init()
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update(HIPO_SEMANTIC="0", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    process = subprocess.Popen(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "fuzz", "version": "0"}}  # fmt: skip
    assert mcp_reply(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    yield process
    process.stdin.close()
    process.wait(timeout=30)


def mcp_reply(process, message: object) -> dict:
    """One line written (bytes as they are, anything else as JSON); its reply within 20 s."""
    import select

    line = message if isinstance(message, bytes) else json.dumps(message).encode()
    process.stdin.write(line + b"\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], 20)
    assert ready, f"no reply to {line[:80]!r}"
    return json.loads(process.stdout.readline())


MCP_TOOLS = st.sampled_from(["recall", "remember", "topics", "layer1", "read", "status", "nope"])
MCP_ARGUMENTS = st.dictionaries(
    st.sampled_from(["query", "k", "since", "until", "type", "budget", "title", "body", "tags",
                     "path", "x"]),
    TOOL_VALUES,
    max_size=4,
)  # fmt: skip
GARBAGE = st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b)


@budget("mcp_lines")
@given(st.integers(1, 10**6), st.one_of(st.tuples(MCP_TOOLS, MCP_ARGUMENTS), GARBAGE))
def test_mcp_answers_every_line(mcp_process, number: int, message) -> None:
    RUN["mcp_lines"] += 1
    if isinstance(message, bytes):
        with contextlib.suppress(ValueError):
            parsed = json.loads(message)
            if isinstance(parsed, dict) and "method" in parsed and "id" not in parsed:
                return  # a notification: JSON-RPC answers none
        reply = mcp_reply(mcp_process, message)
        assert reply["error"]["code"] in (-32700, -32600), reply
        return
    name, arguments = message
    call = {"name": name, "arguments": arguments}
    request = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call}
    reply = mcp_reply(mcp_process, request)
    try:  # the bounds every JSON from outside meets (issue 37): no NaN or Infinity, no huge ints
        parse_json(json.dumps(request), "a fuzzed MCP line")
    except JsonInputError:  # JSON all the same: an invalid request, with its id (issue 43)
        assert reply["error"]["code"] == -32600 and reply["id"] == number, reply
        return
    assert reply["id"] == number
    if "result" in reply and reply["result"].get("isError"):
        (block,) = reply["result"]["content"]
        assert len(block["text"].splitlines()) == 1, block["text"]


# --- every JSON hipo reads: state, conversations, settings, imports (issue 37) -----------------
HOSTILE_JSON = st.one_of(
    JSON.map(json.dumps),
    st.integers(1, 120_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 120_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(15, 6000).map(lambda n: '{"attempts": ' + "7" * n + ', "days": [], "a": 1}'),
    st.sampled_from(
        ["1e400", '{"folded": -1e400}', "NaN", '{"days": [Infinity]}', '{"days": ["2026-02-30"]}',
         '{"days": 5}', '{"files": [1]}', '{"version": 1, "anchor": 5}', '{"version": 1,'
         ' "active": [{"role": "bot", "text": 1}]}', '{"pooling": "max"}', "[{}]", '"x"']
    ),
    st.text(max_size=40),
)  # fmt: skip
JSON_FILE_KINDS = ("text", "fifo", "folder", "dev-zero", "link-out", "empty")


def json_file_readers(root: Path) -> dict[str, tuple[Path, object]]:
    """Each reader of a JSON file beside the memory or handed in: (where it reads, a call)."""
    from hipo_jupyter.llm.conversation import Conversation
    from hipo_jupyter.memory.disk import Store
    from hipo_jupyter.memory.intake.importers import read_file
    from hipo_jupyter.memory.search.embed_settings import load_settings

    index = root / "memory" / ".index"
    conversation = root / "memory" / ".conversations" / "console.json"
    model = root / "model" / "model.onnx"
    readers = {
        "conversation": (conversation, lambda: Conversation.load(conversation)),
        "embedding": (model.with_name("hipo-embedding.json"), lambda: load_settings(model)),
        "import": (root / "in" / "turns.json", lambda: read_file(root / "in" / "turns.json")),
        "transcript": (root / "in" / "s.jsonl", lambda: read_file(root / "in" / "s.jsonl")),
    }
    with contextlib.suppress(ImportError):
        from hipo_jupyter.memory import MemoryConfig
        from hipo_jupyter.team import TeamDatabase, TeamSync

        team = TeamSync(Store(root), MemoryConfig(), TeamDatabase("postgresql://x@127.0.0.1:9/x"))
        readers["team-queue"] = (index / "team-queue.json", team.queued)
        readers["team-sync"] = (index / "team-sync.json", team._sent)
    return readers


@budget("json_files")
@given(st.sampled_from(JSON_FILE_KINDS), HOSTILE_JSON, st.integers(0, 5))
def test_any_json_file_is_read_or_set_aside_in_one_line(kind: str, text: str, which: int) -> None:
    """Every reader of a JSON file, given any JSON (deep, huge numbers, wrong shapes) or a FIFO,
    device, folder or link out in its place: a value, or one line of HipoError / ValueError
    naming the file; nothing hangs (a FIFO is never opened), nothing outside is touched."""
    from hipo_jupyter.memory.intake.importers import ImportFormatError

    RUN["json_files"] += 1
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "nb"
        outside = Path(folder) / "outside.json"
        outside.write_text('{"outside": true}')
        readers = json_file_readers(root)
        name = sorted(readers)[which % len(readers)]
        path, call = readers[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        if name == "embedding":
            path.with_name("model.onnx").write_bytes(b"onnx")
        if kind == "text":
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        elif kind == "dev-zero":
            path.symlink_to("/dev/zero")
        else:
            make_entry(path, kind, b"", outside)
        try:
            value = call()
        except (HipoError, ValueError) as error:
            assert name in ("conversation", "embedding", "import", "transcript"), error
            assert "\n" not in str(error) and "Traceback" not in str(error)
            assert isinstance(error, HipoError | ImportFormatError) or name == "conversation"
        else:
            expected = {"conversation": object, "import": list, "transcript": list}
            assert isinstance(value, expected.get(name, dict | object)), value
            if name.startswith("team"):
                assert isinstance(value, dict)
                if kind in ("fifo", "dev-zero", "folder", "link-out"):  # set aside, one line
                    assert list(path.parent.glob(f"{path.name}.damaged-*")), kind
        assert outside.read_text() == '{"outside": true}'
