"""A JSON list read one element at a time: a 200 MB chat export imported without holding it.

ChatGPT's and Claude.ai's `conversations.json` are one JSON array of conversations, and a
year of use makes it hundreds of megabytes. `array_elements` decodes it element by element
from a binary stream: bytes are decoded incrementally (UTF-8, a BOM allowed) into a sliding
buffer, each element is decoded with the C decoder (`jsonread.decode_at`: numbers bounded, a
nesting too deep refused), and the buffer keeps only what follows the last whole element.
When an element is not whole yet the read doubles (so a large element costs linear time, not
a re-parse per chunk), up to MAX_ELEMENT_CHARS: one conversation larger than that is refused
by number, never read without end. Memory therefore stays near the largest element plus one
chunk, whatever the file's size (measured in tests/test_import_exports.py with tracemalloc).

Errors are `ImportFormatError`s naming the input and the element ("conversations.json
conversation 3: ..."), with the file's line where the text is not JSON.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from ..disk.jsonread import JsonInputError, decode_at
from ..errors import HipoError

CHUNK_BYTES = 1 << 20
MAX_ELEMENT_CHARS = 64 << 20  # one conversation; the largest real ones are a few MB
_WHITESPACE = " \t\n\r"


class StreamError(HipoError):
    """The stream is not a JSON list, or one element is not JSON or too large."""


class _Reader:
    """Text from a binary stream, in a buffer that drops what was consumed."""

    def __init__(self, stream: BinaryIO, name: str, progress: Any = None) -> None:
        self.stream = stream
        self.name = name
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buffer = ""
        self.pos = 0  # where unread text starts in `buffer`
        self.line = 1  # the file's line at `pos`
        self.bytes_read = 0
        self.eof = False
        self.progress = progress  # called with the bytes read so far

    def more(self, at_least: int = CHUNK_BYTES) -> bool:
        """Append at least `at_least` bytes' text (less at the end); False at the end."""
        if self.eof:
            return False
        data = self.stream.read(at_least)
        if not data:
            self.eof = True
            tail = self._decode(b"", final=True)
            self.buffer += tail
            return bool(tail)
        self.bytes_read += len(data)
        self.buffer += self._decode(data, final=False)
        if self.progress is not None:
            self.progress(self.bytes_read)
        return True

    def _decode(self, data: bytes, *, final: bool) -> str:
        try:
            return self.decoder.decode(data, final)
        except UnicodeDecodeError as error:
            at = self.bytes_read - len(data) + error.start
            raise StreamError(f"{self.name} is not UTF-8 text (byte {at:,})") from None

    def consume(self, end: int) -> None:
        """Everything before `end` is read: drop it (counting its lines)."""
        self.line += self.buffer.count("\n", self.pos, end)
        self.pos = end
        if self.pos > CHUNK_BYTES:
            self.buffer = self.buffer[self.pos :]
            self.pos = 0

    def next_char(self) -> str:
        """The next non-blank character (not consumed), or "" at the end."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                if self.buffer[self.pos] == "\n":
                    self.line += 1
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self.more():
                return ""


def array_elements(
    stream: BinaryIO, name: str, *, what: str = "element", progress: Any = None
) -> Iterator[Any]:
    """Each element of the JSON array in `stream`, decoded, in order; StreamError naming
    `name` and the element (`what` N) when the text is not a JSON array of whole elements."""
    reader = _Reader(stream, name, progress)
    first = reader.next_char()
    if first != "[":
        shown = "empty" if not first else f"not a JSON list (it starts with {first[:1]!r})"
        raise StreamError(f"{name} is {shown}")
    reader.consume(reader.pos + 1)
    number = 0
    while True:
        char = reader.next_char()
        if char == "]" and number == 0:
            reader.consume(reader.pos + 1)
            break
        number += 1
        where = f"{name} {what} {number}"
        if not char:
            raise StreamError(f"{where}: the file ends inside the list (cut off?)")
        yield _element(reader, where)
        char = reader.next_char()
        if char == ",":
            reader.consume(reader.pos + 1)
        elif char == "]":
            reader.consume(reader.pos + 1)
            break
        else:
            if not char:
                raise StreamError(f"{where}: the file ends inside the list (cut off?)")
            raise StreamError(
                f"{where}: expected ',' or ']' after it, found {char!r} (line {reader.line})"
            )
    if reader.next_char():
        raise StreamError(f"{name} line {reader.line}: text after the end of the list")


def _element(reader: _Reader, where: str) -> Any:
    """Decode the element at the reader's position, reading more while it is not whole."""
    want = CHUNK_BYTES
    while True:
        start = reader.pos
        try:
            value, end = decode_at(reader.buffer, start, where)
        except json.JSONDecodeError as error:
            if _might_be_cut(reader, error) and reader.more(want):
                want = min(max(want, len(reader.buffer) - start), MAX_ELEMENT_CHARS)
                _check_size(reader, start, where)
                continue
            line = reader.line + reader.buffer.count("\n", start, error.pos)
            raise StreamError(f"{where} (line {line}): not valid JSON ({error.msg})") from None
        except JsonInputError as error:  # it names `where` already
            raise StreamError(str(error)) from None
        if end >= len(reader.buffer) and reader.more(want):
            continue  # a number may go on in the next chunk: decode it whole
        reader.consume(end)
        return value


def _might_be_cut(reader: _Reader, error: json.JSONDecodeError) -> bool:
    """The error may only mean the element goes on past the buffer (not at the end yet)."""
    if reader.eof:
        return False
    return error.pos >= len(reader.buffer) - 8 or error.msg.startswith("Unterminated string")


def _check_size(reader: _Reader, start: int, where: str) -> None:
    if len(reader.buffer) - start > MAX_ELEMENT_CHARS:
        raise StreamError(
            f"{where}: over {MAX_ELEMENT_CHARS:,} characters in one element; not read"
        )
