"""`hipo hook stop|pre-compact|session-end`, answered before anything heavy loads.

These three hooks write the session back, which takes a second or more (the engine, the
transcript, the index); Claude Code waits for a hook, and gives SessionEnd 1.5 s. So the `hipo`
script (`entry.py`) sends them here before the CLI and the engine import: the event's JSON is
read from stdin (at most MAX_EVENT_BYTES) and handed, unparsed, to a detached `hipo hook write`
(`hooks.py`), which parses it with the engine's bounded parser, finds the memory and writes.
This module imports only the standard library, and never fails: whatever goes wrong, exit 0
(a detached writer that cannot start leaves the exchanges for the next hook).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

HANDED_OFF = ("stop", "pre-compact", "session-end")
MAX_EVENT_BYTES = 16 << 20  # as the engine's one JSON line (`jsonread.MAX_LINE_BYTES`)


def hands_off(words: Sequence[str]) -> bool:
    """`hipo [--root DIR] hook EVENT` for one of HANDED_OFF: the shapes `--install` writes."""
    rest = list(words[2:]) if len(words) >= 2 and words[0] == "--root" else list(words)
    return len(rest) == 2 and rest[0] == "hook" and rest[1] in HANDED_OFF


def writer_command(words: Sequence[str]) -> list[str]:
    """The detached writer for `words` (`hands_off`): the same root, `hook write --event E`."""
    root = list(words[:2]) if words[0] == "--root" else []
    event = words[-1]
    return [sys.executable, "-m", "hipo_jupyter.cli", *root, "hook", "write", "--event", event]


def start_writer(command: list[str], event: bytes) -> None:
    """`command` detached (its own session, no terminal), the event's JSON on its stdin."""
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(event)  # an event is a few hundred bytes: the pipe holds it
    finally:
        process.stdin.close()


def main(words: Sequence[str]) -> int:
    """Hand the event to a detached writer; always 0."""
    try:
        event = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
        if len(event) <= MAX_EVENT_BYTES:
            start_writer(writer_command(words), event)
    except Exception:  # noqa: BLE001, S110 - a hook never fails the session
        pass
    return 0
