"""`hipo mcp --install CLIENT` / `--uninstall CLIENT` (issue 36 item 2): the real `hipo` command
in a subprocess, with HOME (and XDG_CONFIG_HOME) pointed at a throwaway folder, merging into
config files that already hold other servers and keys. What it writes is the entry `--config`
prints; everything else in the file stays; the file is replaced by a rename (a new inode, no
temporary left), with its permissions; a file that is not a JSON object is left untouched with
one line of error. `tests/clients` checks that the clients themselves load what it writes.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hipo_jupyter.mcp import config as mcp_config

REPO = Path(__file__).resolve().parent.parent
OTHERS: dict[str, dict[str, Any]] = {
    "claude-code": {"mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}}},
    "jupyter-ai": {"mcp_servers": [{"name": "files", "command": "fs-mcp", "args": [], "env": []}]},
    "claude-desktop": {
        "mcpServers": {"files": {"command": "fs-mcp", "args": ["/data"]}},
        "globalShortcut": "Ctrl+Space",
    },
}


def hipo(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPO_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONPATH=str(REPO))
    command = mcp_config.hipo_command()
    return subprocess.run(
        [*command, "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def where(target: str, root: Path, home: Path) -> Path:
    return {
        "claude-code": root / ".mcp.json",
        "jupyter-ai": root / ".jupyter" / "mcp_settings.json",
        "claude-desktop": home / ".config" / "Claude" / "claude_desktop_config.json",
    }[target]


def printed_entry(target: str, root: Path, home: Path) -> dict[str, Any]:
    """hipo's entry as `--config` prints it, in the target's own shape. In the project's
    `.mcp.json` the root is the folder Claude Code works in, not this one's path (issue 52)."""
    printed = hipo(root, home, "mcp", "--config", target).stdout
    if target == "claude-code":
        words = shlex.split(printed)
        command, *args = words[words.index("--") + 1 :]
        assert args == ["--root", str(root), "mcp"]
        args[1] = "${CLAUDE_PROJECT_DIR:-.}"
        return {"type": "stdio", "command": command, "args": args, "env": {}}
    if target == "jupyter-ai":
        return json.loads(printed)["mcp_servers"][0]
    return json.loads(printed)["mcpServers"]["hipo"]


def hipo_of(target: str, data: dict[str, Any]) -> Any:
    if target == "jupyter-ai":
        return next((s for s in data["mcp_servers"] if s["name"] == "hipo"), None)
    return data["mcpServers"].get("hipo")


def without_hipo(target: str, data: dict[str, Any]) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    if target == "jupyter-ai":
        data["mcp_servers"] = [s for s in data["mcp_servers"] if s["name"] != "hipo"]
    else:
        data["mcpServers"].pop("hipo", None)
    return data


@pytest.mark.parametrize("target", mcp_config.CONFIG_TARGETS)
def test_install_merges_keeps_the_rest_and_uninstall_takes_it_out(
    target: str, memory_root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    path = where(target, memory_root, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(OTHERS[target]), "utf-8")
    path.chmod(0o640)
    inode = path.stat().st_ino

    done = hipo(memory_root, home, "mcp", "--install", target)
    assert done.returncode == 0, done.stderr
    lines = 2 if target == "claude-code" else 1  # Claude Code: and its hooks (issue 52)
    assert done.stdout.startswith(f"added hipo to {path}: ")
    assert len(done.stdout.splitlines()) == lines
    data = json.loads(path.read_text("utf-8"))
    assert hipo_of(target, data) == printed_entry(target, memory_root, home)
    assert without_hipo(target, data) == OTHERS[target]  # every other server and key kept
    assert path.stat().st_ino != inode and stat.S_IMODE(path.stat().st_mode) == 0o640
    hooks_folder = [".claude"] if target == "claude-code" else []  # its settings.json
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == (
        [*hooks_folder, path.name] if path.name.startswith(".") else []
    )  # no temporary file left beside it

    again = hipo(memory_root, home, "mcp", "--install", target)
    assert (
        again.returncode == 0 and "already in" in again.stdout and "nothing changed" in again.stdout
    )

    removed = hipo(memory_root, home, "mcp", "--uninstall", target)
    assert removed.returncode == 0
    assert removed.stdout.splitlines()[0] == f"removed hipo from {path}"
    assert json.loads(path.read_text("utf-8")) == OTHERS[target]
    gone = hipo(memory_root, home, "mcp", "--uninstall", target)
    assert gone.returncode == 0 and "not in" in gone.stdout


@pytest.mark.parametrize("target", mcp_config.CONFIG_TARGETS)
def test_install_creates_the_file_and_replaces_a_stale_entry(
    target: str, memory_root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    path = where(target, memory_root, home)
    assert not path.exists()
    assert hipo(memory_root, home, "mcp", "--install", target).returncode == 0
    data = json.loads(path.read_text("utf-8"))
    assert hipo_of(target, data) == printed_entry(target, memory_root, home)

    stale = json.loads(json.dumps(data))
    entry = hipo_of(target, stale)
    entry["args"] = ["--root", "/somewhere/else", "mcp"]  # an older install, another venv
    path.write_text(json.dumps(stale), "utf-8")
    done = hipo(memory_root, home, "mcp", "--install", target)
    assert done.returncode == 0 and done.stdout.startswith(f"replaced hipo in {path}: ")
    assert "/somewhere/else" in done.stdout  # what it was is said
    assert json.loads(path.read_text("utf-8")) == data


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '{"mcpServers": []}', '{"mcp_servers": {}}']
)
@pytest.mark.parametrize("target", mcp_config.CONFIG_TARGETS)
def test_a_file_it_cannot_merge_is_left_untouched(
    target: str, content: str, memory_root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    path = where(target, memory_root, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, "utf-8")
    others_key = ("mcpServers" if target == "jupyter-ai" else "mcp_servers") in content
    removed = hipo(memory_root, home, "mcp", "--uninstall", target)  # nothing to take out
    assert removed.returncode == 2 or "nothing changed" in removed.stdout, removed
    assert path.read_text("utf-8") == content
    if others_key:  # another client's key in it: merged beside it
        assert hipo(memory_root, home, "mcp", "--install", target).returncode == 0
        return
    done = hipo(memory_root, home, "mcp", "--install", target)
    assert done.returncode == 2, done
    assert done.stderr.startswith("hipo: error: ") and len(done.stderr.splitlines()) == 1
    assert str(path) in done.stderr and "Traceback" not in done.stderr
    assert path.read_text("utf-8") == content  # nothing already written is lost


def test_install_and_config_are_one_or_the_other(memory_root: Path, tmp_path: Path) -> None:
    done = hipo(memory_root, tmp_path, "mcp", "--install", "jupyter-ai", "--config", "jupyter-ai")
    assert done.returncode == 2 and "not allowed with" in done.stderr
    done = hipo(memory_root, tmp_path, "mcp", "--install", "vscode")
    assert done.returncode == 2 and "invalid choice" in done.stderr
