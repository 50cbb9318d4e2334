"""The hooks `hipo mcp --install claude-code` merges into Claude Code's `settings.json`.

Claude Code reads hooks from `.claude/settings.json` in the project (and `~/.claude/settings.json`
for every project): `{"hooks": {EVENT: [{"matcher"?: ..., "hooks": [{"type": "command",
"command": ..., "timeout": s}]}]}}`. Ours run `hipo hook EVENT` (`cli/hooks.py`), with no root
in the command: the hook finds the memory from the folder Claude Code works in, so a copied
folder or a clone talks to its own memory.

Merging keeps everything else as it was: other tools' hooks (in the same matcher group too),
other events, every other setting. Ours are told apart by the command alone (`is_ours`: a `hipo`
script or `python -m hipo_jupyter.cli`, then `hook EVENT`), so an uninstall takes out exactly
what an install put in, wherever the `hipo` of that install lived.

Pure functions of the settings' data; `install.py` reads and writes the file.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from .config import hipo_command

# Claude Code event -> (matcher or None, `hipo hook` event, timeout in seconds)
HOOKS: dict[str, tuple[str | None, str, int]] = {
    "SessionStart": ("startup|resume|clear|compact", "session-start", 10),
    "UserPromptSubmit": (None, "prompt", 10),
    "Stop": (None, "stop", 10),
    "PreCompact": (None, "pre-compact", 10),
    "SessionEnd": (None, "session-end", 5),
}
HOOK_EVENTS = frozenset(event for _, event, _ in HOOKS.values())


class HooksShapeError(ValueError):
    """The settings' `hooks` is not the shape Claude Code reads: left as it is."""


def settings_file(root: Path, *, user: bool, home: Path | None = None) -> Path:
    """Where Claude Code reads hooks: the project's `.claude/settings.json`, or the user's."""
    if user:
        return (Path.home() if home is None else home) / ".claude" / "settings.json"
    return root / ".claude" / "settings.json"


def hook_command(event: str) -> str:
    """The command line of one hook: `/path/to/venv/bin/hipo hook prompt`."""
    return shlex.join([*hipo_command(), "hook", event])


def is_ours(command: object) -> bool:
    """Whether a hook's command is one `hook_command` wrote (any install's `hipo`)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 3 or words[-2] != "hook" or words[-1] not in HOOK_EVENTS:
        return False
    program = words[:-2]
    module = program[1:] == ["-m", "hipo_jupyter.cli"]
    return (len(program) == 1 and Path(program[0]).name in ("hipo", "hipo.exe")) or module


def our_hooks() -> dict[str, dict[str, Any]]:
    """Claude Code event -> the matcher group of ours for it."""
    groups = {}
    for name, (matcher, event, timeout) in HOOKS.items():
        hook = {"type": "command", "command": hook_command(event), "timeout": timeout}
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        groups[name] = {**group, "hooks": [hook]}
    return groups


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with every hook of ours taken out (a group left empty by it goes too, an
    event left empty too); nothing else changes."""
    hooks = settings.get("hooks")
    if hooks is None:
        return dict(settings)
    if not isinstance(hooks, dict):
        raise HooksShapeError("its hooks is not an object: left as it is")
    kept_events: dict[str, Any] = {}
    for name, groups in hooks.items():
        if not isinstance(groups, list):
            kept_events[name] = groups  # not ours to judge
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            mine = [h for h in inner if isinstance(h, dict) and is_ours(h.get("command"))]
            if not mine:
                kept_groups.append(group)
            elif len(mine) < len(inner):
                kept_groups.append({**group, "hooks": [h for h in inner if h not in mine]})
        if kept_groups or not groups:
            kept_events[name] = kept_groups
    out = dict(settings)
    if kept_events:
        out["hooks"] = kept_events
    else:
        del out["hooks"]
    return out


def with_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with our hooks in (an earlier install's replaced), others' kept as they are."""
    out = without_ours(settings)
    hooks = dict(out.get("hooks") or {})
    for name, group in our_hooks().items():
        existing = hooks.get(name, [])
        if not isinstance(existing, list):
            raise HooksShapeError(f"its hooks.{name} is not a list: left as it is")
        hooks[name] = [*existing, group]
    out["hooks"] = hooks
    return out


def ours_in(settings: dict[str, Any]) -> list[str]:
    """The commands of ours the settings hold now, in order."""
    hooks = settings.get("hooks")
    found: list[str] = []
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                if isinstance(hook, dict) and is_ours(hook.get("command")):
                    found.append(hook["command"])
    return found
