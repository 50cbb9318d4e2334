"""JSON that may lie: one parser and one set of limits for every JSON hipo reads.

Files beside the memory (team state, `%%ask` conversations, graph state, token counts, the
compaction state), settings the user writes (`hipo-embedding.json`), inputs (`hipo import`
files and lines, transcripts) and lines from outside (MCP requests) are parsed here, so none
of them can end in a traceback, a RecursionError or a hang:

- bounded depth: nesting past MAX_DEPTH is refused before the parser recurses (a 100,000-deep
  array is one line of error, not a RecursionError, whatever the recursion limit);
- bounded numbers: an integer of more than MAX_INT_DIGITS digits, a float that overflows
  (`1e400`) and NaN / Infinity are refused (Python's 4,300-digit int limit and `inf` never
  reach the code that reads the value);
- a typed shape: `shape_problem(value, Type)` checks a decoded value against a type hint (a
  dataclass, a TypedDict, `list[...]`, `dict[str, ...]`, unions, Literal), so each file's
  schema is its own small type, written once, and the first mismatch is named by its path;
- files: `read_json_file` opens a regular file only (`files.read_regular`: no FIFO, device or
  final symlink, non-blocking, fstat before read) and caps its size; `read_state_file` sets a
  damaged state file aside (renamed `NAME.damaged-STAMP`, one line saying so) and starts
  afresh, since state is derived and the raw logs stay the truth.

Every error is a `JsonInputError` (a ParseError, so every reader that skips a damaged file skips
these too) whose message names the file and the line.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import types
import typing
from collections.abc import Callable
from datetime import datetime
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ParseError
from .files import MAX_STATE_BYTES, read_regular, read_user_file

MAX_DEPTH = 64  # no file or message of ours nests deeper than a handful of levels
MAX_INT_DIGITS = 20  # any 64-bit integer (a nanosecond time has 19 digits)
MAX_LINE_BYTES = 16 << 20  # one JSON line from outside (an MCP request, a transcript record)
MAX_SETTINGS_BYTES = 1 << 20  # a settings file a person writes (hipo-embedding.json)

T = TypeVar("T")

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class JsonInputError(ParseError):
    """JSON that cannot be used: not JSON, too deep, a number out of bounds, or the wrong shape.
    The message names where (the file, and the line when there is one)."""

    def __init__(
        self, message: str, *, where: str = "", line: int | None = None, syntax: str = ""
    ) -> None:
        super().__init__(message)
        self.where = where
        self.line = line
        self.syntax = syntax  # for text that is not JSON: the parser's words and the column


class _NumberOutOfBounds(ValueError):
    def __init__(self, literal: str, why: str) -> None:
        super().__init__(why)
        self.literal = literal


def _bounded_int(literal: str) -> int:
    digits = len(literal) - literal.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise _NumberOutOfBounds(
            literal, f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS} are read)"
        )
    return int(literal)


def _bounded_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NumberOutOfBounds(literal, f"the number {literal[:40]} is out of range")
    return value


def _no_constant(literal: str) -> float:
    raise _NumberOutOfBounds(literal, f"{literal} is not a JSON number")


def nesting_depth(text: str) -> int:
    """How deep the arrays and objects of `text` nest (strings skipped), without recursion."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def _too_deep_at(text: str, max_depth: int) -> int:
    """Where in `text` the nesting first goes past `max_depth` (only asked once it does)."""
    depth = 0
    for match in _TOKEN.finditer(text):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        elif match.group() in "]}":
            depth -= 1
    return 0


def _where(where: str, line: int | None) -> str:
    return f"{where} line {line}" if line is not None else where


def parse_json(
    text: str | bytes, where: str, *, line: int | None = None, max_depth: int = MAX_DEPTH
) -> Any:
    """`text` decoded as JSON within the bounds above; JsonInputError naming `where` and the
    line (`line` is the line of `text` in its file, for JSON Lines) otherwise."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise JsonInputError(
                f"{_where(where, line)}: not UTF-8 text (byte {error.start})",
                where=where,
                line=line,
            ) from None
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        at = (line or 1) + text.count("\n", 0, _too_deep_at(text, max_depth))
        raise JsonInputError(
            f"{where} line {at}: JSON nested deeper than {max_depth} levels; not read",
            where=where,
            line=at,
        )
    try:
        return json.loads(
            text,
            parse_int=_bounded_int,
            parse_float=_bounded_float,
            parse_constant=_no_constant,
        )
    except json.JSONDecodeError as error:
        at = error.lineno if line is None else line + error.lineno - 1
        message = f"{where} line {at} column {error.colno}: not valid JSON ({error.msg})"
        syntax = f"{error.msg}, column {error.colno}"
        raise JsonInputError(message, where=where, line=at, syntax=syntax) from None
    except _NumberOutOfBounds as error:
        found = text.find(error.literal)
        at = (line or 1) + text.count("\n", 0, found) if found >= 0 else line
        raise JsonInputError(f"{_where(where, at)}: {error}", where=where, line=at) from None
    except RecursionError:  # only when the caller's own stack is already deep
        raise JsonInputError(
            f"{_where(where, line)}: JSON nested too deeply; not read", where=where, line=line
        ) from None



_BOUNDED_DECODER = json.JSONDecoder(
    parse_int=_bounded_int, parse_float=_bounded_float, parse_constant=_no_constant
)


def decode_at(text: str, pos: int, where: str) -> tuple[Any, int]:
    """(value, end) of the JSON value at `pos` in `text` (leading blanks allowed), numbers
    bounded as `parse_json` bounds them: for a reader that walks a long text one value at a
    time (`intake/stream.py`). A syntax error stays a `json.JSONDecodeError`, since only the
    caller knows whether its text was cut short; a number out of bounds or a nesting deeper
    than the stack is a JsonInputError naming `where`."""
    try:
        return _BOUNDED_DECODER.raw_decode(text, pos)
    except _NumberOutOfBounds as error:
        raise JsonInputError(f"{where}: {error}", where=where) from None
    except RecursionError:
        raise JsonInputError(
            f"{where}: JSON nested deeper than the parser's stack allows; not read", where=where
        ) from None

# --- the shape -------------------------------------------------------------------------------


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _hint_name(hint: object) -> str:
    if hint is type(None):
        return "null"
    if isinstance(hint, type):
        return {str: "a string", int: "an integer", float: "a number", bool: "true/false"}.get(
            hint, hint.__name__
        )
    return str(hint).replace("typing.", "")


def shape_problem(value: object, hint: Any, path: str = "") -> str | None:
    """What is wrong with `value` as an instance of the type hint `hint`, named by its path
    (`active[2].role: expected a string, got a number`), or None when it fits.

    Supported: str, int (not bool), float (int accepted), bool, None, Any, `X | Y`, Literal,
    list[X], tuple[X, ...], dict[str, X], dataclasses and TypedDicts (a JSON object: missing
    keys must have a default, or be optional in a TypedDict; unknown keys are ignored)."""
    here = path or "the value"
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        return None
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        problems = [shape_problem(value, option, path) for option in options]
        if not all(problems):
            return None
        for option, problem in zip(options, problems, strict=True):
            if _container_of(value, option):  # a list or object of the right kind: say what
                return problem  # inside it is wrong
        names = " or ".join(_hint_name(option) for option in options)
        return f"{here}: expected {names}, got {_kind(value)}"
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        if value in allowed and type(value) in {type(a) for a in allowed}:
            return None
        return f"{here}: expected one of {', '.join(map(repr, allowed))}, got {_kind(value)}"
    if hint is type(None) or hint is None:
        return None if value is None else f"{here}: expected null, got {_kind(value)}"
    if hint is bool:
        return (
            None if isinstance(value, bool) else f"{here}: expected true/false, got {_kind(value)}"
        )
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return None
        return f"{here}: expected an integer, got {_kind(value)}"
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return None
        return f"{here}: expected a number, got {_kind(value)}"
    if hint is str:
        return None if isinstance(value, str) else f"{here}: expected a string, got {_kind(value)}"
    if origin in (list, tuple) or hint in (list, tuple):
        if not isinstance(value, list):
            return f"{here}: expected a list, got {_kind(value)}"
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        item = args[0] if args else Any
        for index, element in enumerate(value):
            problem = shape_problem(element, item, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            return f"{here}: expected an object, got {_kind(value)}"
        args = typing.get_args(hint)
        item = args[1] if len(args) == 2 else Any
        for key, element in value.items():
            problem = shape_problem(element, item, f"{path}[{str(key)[:40]!r}]")
            if problem:
                return problem
        return None
    if dataclasses.is_dataclass(hint) or typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return f"{here}: expected an object, got {_kind(value)}"
        for name, field_hint, required in _fields(hint):
            if name not in value:
                if required:
                    return f"{path + '.' if path else ''}{name}: missing"
                continue
            problem = shape_problem(value[name], field_hint, f"{path + '.' if path else ''}{name}")
            if problem:
                return problem
        return None
    raise TypeError(f"shape_problem does not know the type {hint!r}")


def _container_of(value: object, hint: Any) -> bool:
    """Whether `value` is the list or object that `hint` describes (its items aside)."""
    origin = typing.get_origin(hint) or hint
    if isinstance(value, list):
        return origin in (list, tuple)
    if isinstance(value, dict):
        return origin is dict or dataclasses.is_dataclass(hint) or typing.is_typeddict(hint)
    return False


def _fields(hint: Any) -> list[tuple[str, Any, bool]]:
    """(name, type, required) of a dataclass's or TypedDict's fields."""
    hints = typing.get_type_hints(hint)
    if typing.is_typeddict(hint):
        required = getattr(hint, "__required_keys__", frozenset(hints))
        return [(name, kind, name in required) for name, kind in hints.items()]
    out = []
    for field in dataclasses.fields(hint):
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        out.append((field.name, hints[field.name], not has_default))
    return out


def parse_typed(text: str | bytes, hint: Any, where: str, *, line: int | None = None) -> Any:
    """`parse_json`, then `shape_problem` against `hint`: the decoded value, or JsonInputError
    naming where and the first thing of the wrong shape."""
    value = parse_json(text, where, line=line)
    problem = shape_problem(value, hint)
    if problem:
        raise JsonInputError(f"{_where(where, line)}: {problem}", where=where, line=line)
    return value


# --- files -----------------------------------------------------------------------------------


def read_json_file(
    path: Path,
    hint: Any = Any,
    *,
    shown: str | None = None,
    limit: int = MAX_STATE_BYTES,
    read: Callable[[Path, int], bytes] | None = None,
) -> Any:
    """The JSON of the regular file `path` (at most `limit` bytes), of the shape `hint`.

    FileNotFoundError when there is none; a ParseError (UnsafeFileError for a FIFO, device,
    symlink or too large a file; JsonInputError for the rest) naming `shown` otherwise. `read`
    reads the bytes instead of `files.read_regular` (a Store's anchored `read_file`)."""
    shown = shown or str(path)
    try:
        data = read(path, limit) if read is not None else read_regular(path, limit, shown)
    except IsADirectoryError:
        raise JsonInputError(f"{shown} is a folder, not a file", where=shown) from None
    return parse_typed(data, hint, shown)


def read_record(path: Path, hint: Any, *, shown: str) -> Any:
    """A record hipo keeps beside the memory (who wrote which note or line): its JSON of the
    shape `hint`, `{}` when there is none yet, None when it cannot be read (damaged, too
    large, not a regular file), which each caller takes as "nothing here is the user's"."""
    try:
        return read_json_file(path, hint, shown=shown)
    except FileNotFoundError:
        return {}
    except (OSError, ParseError):
        return None


def read_settings_file(path: Path, hint: Any = Any, *, limit: int = MAX_SETTINGS_BYTES) -> Any:
    """A settings file the user wrote, outside the memory (a symlink to a regular file is
    followed): its JSON of the shape `hint`, or a one-line error naming the file and the line
    (JsonInputError, UnsafeFileError; OSError when it cannot be opened)."""
    return read_json_file(
        path, hint, shown=str(path), limit=limit, read=lambda p, n: read_user_file(p, n, str(p))
    )


def set_aside(path: Path) -> Path:
    """Rename a damaged file to `NAME.damaged-YYYYMMDDTHHMMSS` beside it (never opened, so a
    FIFO or device is moved as safely as a file); the new path."""
    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    counter = 2
    while os.path.lexists(target):
        target = path.with_name(f"{path.name}.damaged-{stamp}-{counter}")
        counter += 1
    os.rename(path, target)
    return target


def read_state_file(
    path: Path,
    hint: Any,
    *,
    shown: str | None = None,
    limit: int = MAX_STATE_BYTES,
    read: Callable[[Path, int], bytes] | None = None,
    report: Callable[[str], None] | None = None,
) -> Any | None:
    """A derived state file, or None when there is none or it was damaged. A damaged one
    (not a regular file, too large, not JSON, too deep, the wrong shape) is set aside and one
    line saying so goes to `report`; the caller starts afresh (state is rebuilt from the raw
    logs, which are the truth). When it cannot even be moved, it is left and ignored."""
    shown = shown or str(path)
    try:
        return read_json_file(path, hint, shown=shown, limit=limit, read=read)
    except FileNotFoundError:
        return None
    except (ParseError, OSError) as error:
        why = str(error) if isinstance(error, ParseError) else (error.strerror or str(error))
        try:
            moved = set_aside(path)
        except OSError as failure:
            line = f"{shown} cannot be used ({why}) nor set aside ({failure.strerror}); ignored"
        else:
            line = f"{why}; set aside as {moved.name}, started afresh"
            if shown not in why:
                line = f"{shown}: {line}"
        if report is not None:
            report(line)
        return None
