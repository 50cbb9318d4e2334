"""`hipo mcp --install TARGET` / `--uninstall TARGET`: hipo merged into a client's config file.

Each client keeps its MCP servers in a JSON file of its own; this puts the entry `--config`
prints into that file, or takes it out, and says what it changed. Everything else in the file
(other servers, every other key) is kept as it was; the new file replaces the old in one
`os.replace` from a temporary file beside it, with the old file's permissions, so a client
reading at the same time sees the old file or the new, never half of one. A file that is not a
JSON object is left untouched and named in a one-line error.

- claude-code: `.mcp.json` in the memory root (Claude Code's project scope: used when Claude
  Code runs in that folder, after it asks once whether to trust the project's servers), and
  its hooks in `.claude/settings.json` beside it (`hooks_config`: Layer 1 at a session's
  start, recall for each prompt, the session written back); with `user=True` (`--scope user`)
  the user's `~/.claude.json` and `~/.claude/settings.json`, for every project. The server's
  root is `${CLAUDE_PROJECT_DIR:-.}` (Claude Code expands it; `.` is the folder it starts the
  server in) and the hooks name none, so a copied folder or a clone talks to its own memory;
- jupyter-ai: `.jupyter/mcp_settings.json` in the memory root (jupyter-ai 3 reads it for the
  chats beside it and hands its servers to its ACP agent personas);
- claude-desktop: `claude_desktop_config.json` in Claude Desktop's folder (`~/.config/Claude`
  on Linux, `~/Library/Application Support/Claude` on macOS, `%APPDATA%\\Claude` on Windows).

Imports no MCP SDK and no engine: it answers in a fraction of a second.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from hipo_jupyter.memory import ParseError
from hipo_jupyter.memory.disk import MAX_SETTINGS_BYTES, parse_json, read_user_file

from . import hooks_config
from .config import SERVER_NAME, ConfigTargetError, server_entry

RESTART = {
    "claude-code": "Claude Code asks once, in this folder, whether to use the project's servers",
    "jupyter-ai": "restart JupyterLab (or open a new chat) to load it",
    "claude-desktop": "restart Claude Desktop to load it",
}


USER_RESTART = "Claude Code starts it in every project (a new session picks it up)"


class InstallError(ValueError):
    """The client's config file cannot be merged (not JSON, not an object, unreadable)."""


def claude_desktop_folder(home: Path) -> Path:
    """Where Claude Desktop keeps its config on this system."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"


PROJECT_ROOT = "${CLAUDE_PROJECT_DIR:-.}"  # Claude Code expands it in .mcp.json's args


def config_file(target: str, root: Path, home: Path | None = None, *, user: bool = False) -> Path:
    """The file `target` reads its MCP servers from, for the memory at `root` (`user`: Claude
    Code's own file, for every project)."""
    home = Path.home() if home is None else home
    if target == "claude-code":
        return home / ".claude.json" if user else root / ".mcp.json"
    if target == "jupyter-ai":
        return root / ".jupyter" / "mcp_settings.json"
    if target == "claude-desktop":
        return claude_desktop_folder(home) / "claude_desktop_config.json"
    raise ConfigTargetError(
        f"--install takes claude-code, jupyter-ai or claude-desktop: {target!r}"
    )


def entry_for(target: str, root: Path) -> dict[str, Any]:
    """hipo's entry in `target`'s own format (the one `--config` prints)."""
    entry = server_entry(root)
    if target == "claude-code":  # the folder Claude Code works in, not this one's path
        entry = {**entry, "args": ["--root", PROJECT_ROOT, "mcp"]}
        return {"type": "stdio", **entry, "env": {}}
    if target == "jupyter-ai":
        return {"name": SERVER_NAME, **entry, "env": []}
    return entry


def read_config(path: Path) -> dict[str, Any]:
    """The file as a JSON object; {} when it does not exist yet."""
    try:  # a regular file only (a FIFO or device is refused at once), at most 1 MiB
        raw = read_user_file(path, MAX_SETTINGS_BYTES, str(path))
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise InstallError(f"cannot read {path}: {error.strerror or error}") from None
    except ParseError as error:
        raise InstallError(f"{error}: left as it is") from None
    if not raw.strip():
        return {}
    try:  # the engine's one parser: bounded depth and numbers, the line named
        data = parse_json(raw, str(path))
    except ParseError as error:
        raise InstallError(f"{error}: left as it is") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} is not a JSON object: left as it is")
    return data


def merged(target: str, data: dict[str, Any], entry: dict[str, Any] | None) -> dict[str, Any]:
    """`data` with hipo's entry set to `entry` (None: taken out); nothing else changes."""
    data = dict(data)
    if target == "jupyter-ai":
        servers = data.get("mcp_servers", [])
        if not isinstance(servers, list):
            raise InstallError("its mcp_servers is not a list: left as it is")
        kept = [s for s in servers if not (isinstance(s, dict) and s.get("name") == SERVER_NAME)]
        if entry is not None:
            at = next((i for i, s in enumerate(servers) if s not in kept), len(kept))
            kept.insert(at, entry)
        data["mcp_servers"] = kept
        return data
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError("its mcpServers is not an object: left as it is")
    servers = {name: value for name, value in servers.items() if name != SERVER_NAME}
    if entry is not None:
        servers[SERVER_NAME] = entry
    data["mcpServers"] = servers
    return data


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    """`data` as `path`'s new content, replacing the old file in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def install(
    target: str, root: Path, *, remove: bool = False, home: Path | None = None, user: bool = False
) -> str:
    """Merge hipo into (or, `remove`, take it out of) `target`'s config; what changed, as one
    line: added, replaced (and how it was), already there, removed or not there. For Claude
    Code a second line says the same of its hooks (`install_hooks`)."""
    if user and target != "claude-code":
        raise InstallError("--scope user is for claude-code (Claude Code's settings of the user)")
    line = install_server(target, root, remove=remove, home=home, user=user)
    if target != "claude-code":
        return line
    return f"{line}\n{install_hooks(root, remove=remove, home=home, user=user)}"


def install_server(target: str, root: Path, *, remove: bool, home: Path | None, user: bool) -> str:
    """`install`'s first line: the MCP server entry."""
    path = config_file(target, root, home, user=user)
    try:
        data = read_config(path)
        before = _hipo_in(target, data)
        entry = None if remove else entry_for(target, root)
        if before == entry:
            state = "not in" if remove else "already in"
            return f"hipo is {state} {path}: nothing changed"
        write_atomically(path, merged(target, data, entry))
    except InstallError as error:
        message = str(error)
        raise InstallError(message if str(path) in message else f"{path}: {message}") from None
    if remove:
        return f"removed hipo from {path}"
    done = "added hipo to" if before is None else "replaced hipo in"
    was = f" (was: {json.dumps(before)})" if before is not None else ""
    restart = USER_RESTART if user else RESTART[target]
    return f"{done} {path}: {shown(entry)}{was}; {restart}"


def install_hooks(root: Path, *, remove: bool, home: Path | None, user: bool) -> str:
    """Claude Code's hooks of ours merged into (or taken out of) its settings.json, every
    other hook and setting kept (`hooks_config`); what changed, as one line."""
    path = hooks_config.settings_file(root, user=user, home=home)
    try:
        data = read_config(path)
        before = hooks_config.ours_in(data)
        after = hooks_config.without_ours(data) if remove else hooks_config.with_ours(data)
        if hooks_config.ours_in(after) == before and (before or remove):
            state = "not in" if remove else "already in"
            return f"hipo's hooks are {state} {path}: nothing changed"
        write_atomically(path, after)
    except (InstallError, hooks_config.HooksShapeError) as error:
        message = str(error)
        raise InstallError(message if str(path) in message else f"{path}: {message}") from None
    if remove:
        return f"removed hipo's hooks from {path}"
    events = ", ".join(hooks_config.HOOKS)
    return (
        f"{'replaced' if before else 'added'} hipo's hooks in {path} ({events}): Layer 1 at "
        "each session's start, memory recalled for each prompt, the session written back"
    )


def _hipo_in(target: str, data: dict[str, Any]) -> Any:
    """hipo's entry as the file has it now, or None."""
    if target == "jupyter-ai":
        servers = data.get("mcp_servers")
        listed = servers if isinstance(servers, list) else []
        ours = [s for s in listed if isinstance(s, dict) and s.get("name") == SERVER_NAME]
        return ours[0] if ours else None
    servers = data.get("mcpServers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def shown(entry: dict[str, Any] | None) -> str:
    """The command an entry runs, as one line."""
    if entry is None:
        return ""
    return " ".join([entry["command"], *entry["args"]])
