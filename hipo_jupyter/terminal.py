"""What a terminal is shown: stored text with its control characters made visible.

Stored text comes from many writers (a hand-edited raw log, an import, a teammate's row, an
agent), and a terminal obeys what it prints: `ESC [2J` clears the screen, an OSC 52 sequence
sets the clipboard, a C1 control (`\\x9b` is a one-byte CSI) starts a sequence of its own, a lone
`\\r` overwrites a line. So every character a terminal would act on, C0 controls other than
newline and tab, DEL and the C1 controls, and with them every escape sequence (CSI, OSC, DCS,
a bare ESC), is shown as a visible escape (`\\x1b[2J`), the same way checkpoints escape them on
disk: the engine's `storable` is the one table of them, used here as it is. So are the invisible
format characters a terminal obeys or hides (a bidi override reverses what follows it, a tag
character shows nothing): the engine's `shown` writes them as `\\u202e`, `\\U000e0041`.

- `TerminalText` wraps a text stream and writes everything through `visible`. The `hipo`
  command prints only through it (`cli.main` puts it in front of stdout and stderr for the
  whole command), so no command, message or error can forget it. Binary output (`hipo
  export` to a file or a pipe, `hipo mcp`'s JSON-RPC) goes to the stream's `buffer`, which is
  data, not something shown, and passes untouched.
- `json_text` is JSON for a terminal: `json.dumps` escapes C0 but leaves DEL and the C1
  controls raw (JSON allows them); here they are `\\u00XX` escapes, so the document stays
  valid JSON, means the same, and holds nothing a terminal acts on.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from hipo_jupyter.memory import FORMAT_CHARACTERS, shown

_JSON_RAW_RE = re.compile(
    "[\x7f-\x9f\u2028\u2029\ud800-\udfff"
    + "".join(f"{chr(first)}-{chr(last)}" for first, last in FORMAT_CHARACTERS)
    + "]"
)


def visible(text: str) -> str:
    """`text` with every control character a terminal would act on, and every invisible
    format character, as a visible escape (`shown`)."""
    return shown(text)


def json_text(data: Any, **options: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, **options)` with DEL, C1, the line separators,
    lone surrogates and the invisible format characters written as `\\uXXXX` (a pair of them
    past U+FFFF): valid JSON a terminal shows as text."""
    text = json.dumps(data, ensure_ascii=False, **options)
    return _JSON_RAW_RE.sub(lambda match: _json_escape(ord(match.group())), text)


def _json_escape(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a code point past U+FFFF as its UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class TerminalText:
    """A text stream that shows every write through `visible`; everything else (`buffer`,
    `fileno`, `isatty`, `encoding`, `flush`) is the wrapped stream's. `unfiltered` is the
    stream itself, for a progress bar whose own `\\r` must reach the terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.unfiltered = stream

    def write(self, text: str) -> int:
        self.unfiltered.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unfiltered, name)


def unfiltered(stream: TextIO) -> TextIO:
    """The stream under a `TerminalText`, or the stream itself."""
    return getattr(stream, "unfiltered", stream) if isinstance(stream, TerminalText) else stream


@contextlib.contextmanager
def standard_streams_shown_as_text() -> Iterator[None]:
    """sys.stdout and sys.stderr wrapped in `TerminalText` while the block runs (a `hipo`
    command), and put back after."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalText(sys.stdout)  # type: ignore[assignment]
    sys.stderr = TerminalText(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        sys.stdout, sys.stderr = saved
