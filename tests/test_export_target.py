"""`hipo export -o TARGET` (real `hipo` processes): never into the memory's own files, a file
replaced atomically, a FIFO, a device, `/dev/stdout` or `/dev/fd/N` written as a stream, `-` as
stdout, a folder or a symlink a one-line error, and never a temporary file left behind."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from datetime import date
from pathlib import Path

import pytest
from test_mcp import hipo_mcp, run_hipo, server_env

from hipo_jupyter.memory import Memory

TODAY = "2026-03-12"
RAW = f"memory/{TODAY}.md"


@pytest.fixture
def root(memory_root: Path) -> Path:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    memory.init()
    memory.remember("Pricing", "- decisions: cut the starter tier by 15%")
    memory.remember("Churn", "- outcome: annual plans churn less")
    memory.compact()
    memory.close()
    return memory_root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the memory but the derived index, by path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".index" not in p.parts
    }


def temp_files(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("*") if p.name.endswith(".tmp")]


def one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "target",
    [RAW, "memory/daily/x.csv", "memory/ROOT.md", "knowledge/x.csv", "plans/p.md", "SCRATCHPAD.md"],
)
def test_export_never_writes_into_the_memory(root: Path, target: str) -> None:
    before = snapshot(root)
    one_line_error(run_hipo(root, "export", "--format", "csv", "-o", target), "inside the memory")
    assert snapshot(root) == before
    assert not temp_files(root)


def test_export_through_a_link_into_the_memory_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "via").symlink_to(root / "memory")
    before = snapshot(root)
    result = run_hipo(
        root, "export", "--format", "csv", "-o", str(tmp_path / "via" / f"{TODAY}.md")
    )
    one_line_error(result, "inside the memory")
    assert snapshot(root) == before


def test_a_shell_redirect_into_a_raw_log_is_refused(root: Path) -> None:
    before = snapshot(root)
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"} | server_env()
    with open(root / RAW, "ab") as log:
        result = subprocess.run(
            [*hipo_mcp.hipo_command(), "--root", str(root), "export", "-o", "/dev/stdout"],
            stdout=log,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    one_line_error(result, "inside the memory")
    assert snapshot(root) == before


def test_a_folder_or_a_symlink_is_a_one_line_error(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    one_line_error(run_hipo(root, "export", "-o", str(folder)), "folder")
    (tmp_path / "real.jsonl").write_text("keep\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    one_line_error(run_hipo(root, "export", "-o", str(tmp_path / "link.jsonl")), "symbolic link")
    assert (tmp_path / "real.jsonl").read_text() == "keep\n"
    assert (tmp_path / "link.jsonl").is_symlink()
    one_line_error(run_hipo(root, "export", "-o", str(tmp_path / "no" / "x.csv")), "no such")
    assert not temp_files(tmp_path)


def test_a_regular_file_is_replaced_whole(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.jsonl"
    out.write_text("old\n" * 10_000)
    result = run_hipo(root, "export", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert [row["title"] for row in rows(out.read_text())] == ["Pricing", "Churn"]
    assert not temp_files(tmp_path, root)


def test_a_fifo_and_a_device_are_written_as_streams(root: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run_hipo(root, "export", "-o", str(fifo))
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert fifo.is_fifo() and len(rows(got[0].decode())) == 2
    assert run_hipo(root, "export", "-o", "/dev/null").returncode == 0
    assert Path("/dev/null").is_char_device()
    assert not temp_files(tmp_path)


def test_stdout_dash_and_a_descriptor_are_streams(root: Path) -> None:
    for target in ("-", "/dev/stdout"):
        result = run_hipo(root, "export", "-o", target)
        assert result.returncode == 0 and len(rows(result.stdout)) == 2, result.stderr
    read_end, write_end = os.pipe()
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"} | server_env()
    command = [
        *hipo_mcp.hipo_command(),
        "--root",
        str(root),
        "export",
        "-o",
        f"/dev/fd/{write_end}",
    ]
    process = subprocess.Popen(command, pass_fds=(write_end,), env=env, stderr=subprocess.PIPE)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        data = stream.read()
    assert process.wait(timeout=120) == 0, process.stderr.read()
    process.stderr.close()
    assert len(rows(data.decode())) == 2
