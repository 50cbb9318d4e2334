"""The `hipo` script's entry point, kept light: `hipo --root DIR mcp` (what every printed MCP
config runs) starts answering its client before the CLI, the engine and the MCP SDK have
loaded (`mcp.early`), and `hipo --root DIR mcp --config TARGET` prints its snippet without
them (`mcp.config`); every other command goes straight to `commands.main`."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path


def serves_mcp(argv: Sequence[str]) -> bool:
    """`hipo --root DIR mcp` with an existing DIR and the SDK installed: the one shape the
    configs print. Anything else (another command, --config, --help, a root to resolve or that
    is wrong) takes the ordinary path, where errors are the CLI's one-line messages."""
    words = list(argv)
    if words.count("mcp") != 1 or any(w.startswith("-") for w in words if w != "--root"):
        return False
    if len(words) != 3 or words[0] != "--root" or words[2] != "mcp":
        return False
    return os.path.isdir(words[1]) and importlib.util.find_spec("mcp") is not None


def prints_config(argv: Sequence[str]) -> bool:
    """`hipo --root DIR mcp --config TARGET` with an existing DIR and a known TARGET."""
    from hipo_jupyter.mcp.config import CONFIG_TARGETS

    words = list(argv)
    return (
        len(words) == 5
        and (words[0], words[2], words[3]) == ("--root", "mcp", "--config")
        and words[4] in CONFIG_TARGETS
        and os.path.isdir(words[1])
    )


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if prints_config(words):
        from hipo_jupyter.mcp import config as mcp_config

        root = Path(words[1]).expanduser().absolute()  # as hipo_jupyter.memory.resolve_root
        print(mcp_config.config_snippet(words[4], root))
        print(f"hipo: {mcp_config.CONFIG_WHERE[words[4]]}", file=sys.stderr)
        return 0
    from . import hook_handoff

    if hook_handoff.hands_off(words):  # Claude Code waits: the writer is detached at once
        return hook_handoff.main(words)
    if serves_mcp(words):
        from hipo_jupyter.mcp import early as mcp_early

        mcp_early.answer_first()
    from .commands import main as cli_main

    return cli_main(words)
