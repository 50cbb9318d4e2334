"""What `hipo import` is given: a file, a folder of files, or a zip (an export as downloaded),
checked whole before anything is written, then read again in batches to write.

An input is one file or zip member. Its format is detected from its content; a ChatGPT or
Claude.ai export (a JSON list of conversations) is streamed conversation by conversation
(`stream.py`), so a 200 MB `conversations.json` is never held whole; every other format is
read whole, bounded by MAX_IMPORT_BYTES (`importers.parse_text`).

Two passes, because a bad record must leave the memory as it was: `plan_import` parses every
input and keeps only counts (turns, conversations, what was left out by kind, turns without a
time) and the inputs' names, and `ImportPlan.batches` parses them again, a few conversations
at a time, for `Memory.import_batches` to write. Memory stays near one batch plus one
conversation.

In a folder or zip, files that are not chats (ChatGPT's `user.json`, Claude.ai's
`projects.json`, images) are left out and named in the plan; a zip member is read bounded
(its stated size is not trusted), only regular members are read, and a member whose name
climbs out (`../`) or is absolute is refused, though nothing is ever extracted to disk.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from ..disk.files import MAX_IMPORT_BYTES, UnsafeFileError, kind_of, read_user_file
from .exports import conversation_records, kind_of_export
from .importers import EXPORTS, ImportFormatError, ImportRecord, NoTurnsError, parse_text
from .stream import StreamError, array_elements

CHAT_SUFFIXES = (".json", ".jsonl", ".chat")
MAX_FILES = 10_000  # files of a folder or members of a zip looked at
MAX_FOLDER_DEPTH = 4
BATCH_TURNS = 2_000  # turns handed to the writer at once, at most
BATCH_CHARS = 2 << 20  # and at most about this much text
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Input:
    """One file of what was given: a path, or a member of a zip."""

    name: str  # as shown: "conversations.json", "export.zip:conversations.json"
    size: int
    modified: datetime | None
    path: Path
    member: str | None = None  # the zip member, when it is one

    def open(self) -> BinaryIO:
        if self.member is None:
            return _open_regular(self.path, self.name)
        archive = zipfile.ZipFile(self.path)
        try:
            stream = archive.open(self.member)
        except (RuntimeError, zipfile.BadZipFile, NotImplementedError) as error:
            archive.close()
            raise ImportFormatError(f"{self.name}: cannot read ({error})") from None
        return _Bounded(stream, archive, self.name)

    def read(self) -> bytes:
        if self.member is None:
            try:
                return read_user_file(self.path, MAX_IMPORT_BYTES, self.name)
            except UnsafeFileError as error:
                raise ImportFormatError(str(error)) from None
        with self.open() as stream:
            return stream.read()


class _Bounded(io.RawIOBase):
    """A zip member's stream that refuses to give more than MAX_IMPORT_BYTES."""

    def __init__(self, stream: BinaryIO, archive: zipfile.ZipFile, name: str) -> None:
        self._stream, self._archive, self._name, self._given = stream, archive, name, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        want = MAX_IMPORT_BYTES + 1 - self._given if size < 0 else size
        try:
            data = self._stream.read(min(want, MAX_IMPORT_BYTES + 1 - self._given))
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise ImportFormatError(f"{self._name}: damaged zip member ({error})") from None
        self._given += len(data)
        if self._given > MAX_IMPORT_BYTES:
            raise ImportFormatError(f"{self._name}: over {MAX_IMPORT_BYTES:,} bytes; not read")
        return data

    def close(self) -> None:
        self._stream.close()
        self._archive.close()
        super().close()


def _open_regular(path: Path, shown: str) -> BinaryIO:
    """A user's regular file, opened without blocking (a FIFO or device is refused)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ImportFormatError(f"{shown} is a {kind_of(info.st_mode)}, not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise ImportFormatError(f"cannot read {shown}: {error.strerror or error}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO since the stat
        os.close(fd)
        raise ImportFormatError(f"{shown} is not a regular file")
    return os.fdopen(fd, "rb", buffering=0)


def inputs_of(path: Path) -> tuple[list[Input], list[str]]:
    """(the inputs, names left out as not chat files or unsafe) of a file, folder or zip."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise ImportFormatError(f"cannot read {path}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        return _folder(path), []
    if not stat.S_ISREG(info.st_mode):
        raise ImportFormatError(f"{path} is a {kind_of(info.st_mode)}, not a regular file")
    modified = _time(info.st_mtime)
    if path.suffix.lower() == ".zip" or (path.suffix.lower() not in CHAT_SUFFIXES
                                         and zipfile.is_zipfile(path)):  # fmt: skip
        return _zip(path)
    return [Input(path.name, info.st_size, modified, path)], []


def _time(seconds: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(seconds)
    except (OverflowError, OSError, ValueError):
        return None


def _folder(folder: Path) -> list[Input]:
    """The chat files of a folder and its subfolders (symlinks not followed), sorted."""
    found: list[Input] = []
    for current, folders, files in os.walk(folder, followlinks=False):
        depth = len(Path(current).relative_to(folder).parts)
        folders[:] = sorted(name for name in folders if depth < MAX_FOLDER_DEPTH)
        for name in sorted(files):
            path = Path(current) / name
            if not name.lower().endswith(CHAT_SUFFIXES):
                continue
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                shown = str(path.relative_to(folder.parent))
                found.append(Input(shown, info.st_size, _time(info.st_mtime), path))
            if len(found) >= MAX_FILES:
                return found
    return found


def _zip(path: Path) -> tuple[list[Input], list[str]]:
    """The chat members of a zip; names that climb out, links and folders are left out."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()[:MAX_FILES]
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ImportFormatError(f"{path.name}: not a readable zip ({error})") from None
    found, refused = [], []
    for member in members:
        name = member.filename
        mode = member.external_attr >> 16
        pure = PurePosixPath(name.replace("\\", "/"))
        if member.is_dir() or not name.lower().endswith(CHAT_SUFFIXES):
            continue
        shown = f"{path.name}:{name}"
        kind = stat.S_IFMT(mode)  # 0 when the zip says nothing (a zip made on Windows)
        if pure.is_absolute() or ".." in pure.parts or (kind and kind != stat.S_IFREG):
            refused.append(shown)
            continue
        when = _zip_time(member.date_time)
        found.append(Input(shown, member.file_size, when, path, member=name))
    return found, refused


def _zip_time(parts: tuple[int, ...]) -> datetime | None:
    try:
        return datetime(*parts)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


# --- the two passes ------------------------------------------------------------------------


@dataclass
class ImportPlan:
    """What a checked import will write: its inputs (format known) and what they hold."""

    inputs: list[tuple[Input, str | None]] = field(default_factory=list)  # (input, format)
    turns: int = 0
    conversations: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    undated: int = 0  # turns without a time
    undated_as: str = ""  # what dated them ("the file's time", "now") and the day
    not_chats: list[str] = field(default_factory=list)  # files left out: not chats
    unsafe: list[str] = field(default_factory=list)  # zip members refused
    total_bytes: int = 0

    def batches(self, progress: Progress | None = None) -> Iterator[list[ImportRecord]]:
        """The records again, a few conversations at a time, in the order of the inputs."""
        done = 0
        batch: list[ImportRecord] = []
        chars = 0
        for source, format in self.inputs:
            base = done

            def moved(read: int, base: int = base, name: str = source.name) -> None:
                if progress is not None:
                    progress(
                        min(base + read, self.total_bytes), self.total_bytes, f"importing {name}"
                    )

            for records in _conversations(source, format, Counter(), moved):
                batch.extend(records)
                chars += sum(len(record.body) + len(record.reply) for record in records)
                if len(batch) >= BATCH_TURNS or chars >= BATCH_CHARS:
                    yield batch
                    batch, chars = [], 0
            done += source.size
        if batch:
            yield batch


def plan_import(
    path: Path, format: str | None = None, progress: Progress | None = None
) -> ImportPlan:
    """Check everything `path` holds (a file, folder or zip) before anything is written;
    ImportFormatError, one line naming the input and the record, when anything is wrong."""
    path = Path(path)
    inputs, unsafe = inputs_of(path)
    plan = ImportPlan(unsafe=unsafe, total_bytes=sum(source.size for source in inputs))
    many = len(inputs) > 1 or path.is_dir()
    done = 0
    for source in inputs:
        try:
            found = format or detect(source)
        except ImportFormatError:
            if not many:
                raise
            plan.not_chats.append(source.name)
            continue
        base = done

        def moved(read: int, base: int = base, name: str = source.name) -> None:
            if progress is not None:
                progress(min(base + read, plan.total_bytes), plan.total_bytes, f"checking {name}")

        try:
            _count(plan, _conversations(source, found, plan.left_out, moved), found)
        except NoTurnsError:
            if not many:
                raise
            plan.not_chats.append(source.name)
            continue
        plan.inputs.append((source, found))
        done += source.size
    plan.total_bytes = sum(source.size for source, _ in plan.inputs)  # what pass 2 reads
    if not plan.turns:
        what = f"{path.name}: no turns to import"
        if plan.not_chats:
            what += f" (not chat files: {', '.join(plan.not_chats[:3])})"
        raise ImportFormatError(what)
    return plan


def _count(plan: ImportPlan, conversations: Iterator[list[ImportRecord]], format: str) -> None:
    """Add what one input holds to the plan (checked, not kept)."""
    for records in conversations:
        plan.conversations += 1 if format in EXPORTS else 0
        plan.turns += len(records)
        undated = [record for record in records if record.dated]
        if undated and not plan.undated_as:
            plan.undated_as = f"{undated[0].day.isoformat()}, {undated[0].dated}"
        plan.undated += len(undated)


def detect(source: Input) -> str:
    """The format of one input: an export when it is a list whose first element is a ChatGPT
    or Claude.ai conversation (read from the stream), else what `detect_format` says."""
    with source.open() as stream:
        head = stream.read(4096)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        # only the name of the first element in an error: an export's keys come first
        export = b'"mapping"' in head or b'"chat_messages"' in head
        with source.open() as stream:
            what = "conversation" if export else "record"
            try:
                first = next(iter(array_elements(stream, source.name, what=what)), None)
            except StreamError as error:
                raise ImportFormatError(str(error)) from None
        found = kind_of_export(first)
        if found:
            return found
    from .importers import detect_format

    return detect_format(_text(source), source.name)


def _text(source: Input) -> str:
    data = source.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportFormatError(f"{source.name} is not UTF-8 text (byte {error.start})") from None


def _conversations(
    source: Input, format: str | None, left_out: Counter[str], moved: Callable[[int], Any]
) -> Iterator[list[ImportRecord]]:
    """The records of one input, a conversation at a time (the whole file at once when it is
    not an export)."""
    if format not in EXPORTS:
        records = parse_text(_text(source), format, name=source.name,
                             undated=source.modified, left_out=left_out)  # fmt: skip
        moved(source.size)
        yield records
        return
    assert format is not None
    with source.open() as stream:
        elements = array_elements(stream, source.name, what="conversation", progress=moved)
        number = 0
        try:
            for number, conversation in enumerate(elements, start=1):  # noqa: B007
                where = f"{source.name} conversation {number}"
                yield conversation_records(format, conversation, where, left_out, source.modified)
        except StreamError as error:
            raise ImportFormatError(str(error)) from None
    moved(source.size)  # the bar ends at its total whatever the reads' sizes were
