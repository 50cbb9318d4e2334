"""All-or-nothing appends to a raw log, and the repair of one whose writer was killed.

The kernel may stop a `write` part-way (a `kill -9` landing between two pages of a checkpoint; a
full disk takes what fits), so before writing, an append puts an *intent* beside the log,
`memory/.YYYY-MM-DD.md.append`: the log's size before it, and the payload itself with its length
and sha256. The intent is removed once the payload is written and synced. A writer whose write
fails cuts the log back itself; one that was killed leaves the intent behind, and the next
process to take the log's exclusive lock settles it here.

A repair removes only bytes it can prove are its own append's: the log must end, right after
the recorded size, in a strict prefix of the recorded payload, whose hash must match. Anything
else (a garbage or foreign intent, a note appended by hand after a half checkpoint, a log edited
since) is kept byte for byte, and the repair says what it did in one line. Callers hold the
log's lock; these functions only read and cut. (The intent is not fsynced: it covers a process
killed or failing, not a power cut.)
"""

from __future__ import annotations

import base64
import contextlib
import errno
import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParseError
from .files import MAX_LOG_BYTES, read_fd, read_regular
from .jsonread import parse_json

MAX_INTENT_BYTES = 2 * MAX_LOG_BYTES  # base64 makes a payload 4/3 as long


@dataclass(frozen=True)
class Appended:
    """Where an append landed, and the file's hash before and after it (for the index)."""

    line: int
    size_before: int
    hash_before: str
    hash_after: str
    text_after: str
    # The log's (size, mtime_ns) as `raw_stamps` gives them, under its lock (`StructuredViews`)
    stamp_before: tuple[int, int] = (0, 0)
    stamp_after: tuple[int, int] = (0, 0)


Compose = Callable[[bytes, tuple[int, int]], "str | None"]
"""What an append writes, given the log's bytes and (size, mtime_ns) under its lock: the block,
or None to write nothing (`Store.append_raw_composed`)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def intent_path(raw: Path) -> Path:
    return raw.with_name(f".{raw.name}.append")


@dataclass(frozen=True)
class AppendIntent:
    """What an append is about to write: the log's size before it, and the payload itself with
    its length and hash. The payload is kept so that a repair can prove, byte for byte, that a
    tail it cuts off is what this append wrote and nothing else."""

    size: int
    length: int
    digest: str
    payload: bytes | None = None  # None: an intent that proves nothing (old or foreign)

    @property
    def end(self) -> int:
        return self.size + self.length

    @property
    def proven(self) -> bool:
        """The payload is there and matches the announced length and hash."""
        return (
            self.payload is not None
            and len(self.payload) == self.length
            and sha256(self.payload) == self.digest
        )

    def cut_is_proven(self, data: bytes) -> bool:
        """The log `data` ends in a strict prefix of this intent's own payload, right after the
        size it recorded: those bytes, and only those, are the append's."""
        return (
            self.proven
            and self.payload is not None
            and self.size < len(data) < self.end
            and data[self.size :] == self.payload[: len(data) - self.size]
        )


UNREADABLE = AppendIntent(-1, 0, "")
"""An intent file that is there but cannot be read: it proves nothing."""


def intent_record(size: int, payload: bytes) -> dict[str, object]:
    """The JSON of an append intent: the log's size before, and the payload that follows."""
    return {
        "size": size,
        "length": len(payload),
        "sha256": sha256(payload),
        "payload": base64.b64encode(payload).decode("ascii"),
    }


def read_intent(path: Path) -> AppendIntent | None:
    """The intent in `path`, or None when there is none, it is not a regular file, or it was
    itself cut short (then the append it announced never started: the intent is written whole
    before the payload)."""
    try:
        data = parse_json(read_regular(path, MAX_INTENT_BYTES, path.name), path.name)
        payload = data.get("payload")
        return AppendIntent(
            int(data["size"]),
            int(data["length"]),
            str(data["sha256"]),
            base64.b64decode(payload, validate=True) if isinstance(payload, str) else None,
        )
    except (OSError, ParseError, ValueError, KeyError, TypeError, AttributeError):
        return None


def pending_intent(raw: Path) -> AppendIntent | None:
    """The intent beside `raw` (UNREADABLE when one is there but cannot be read), or None."""
    intent_file = intent_path(raw)
    if not os.path.lexists(intent_file):
        return None
    return read_intent(intent_file) or UNREADABLE


def drop_intent(intent_file: Path) -> None:
    """Remove an intent file (or whatever lies at its name, but a folder)."""
    with contextlib.suppress(OSError):
        os.unlink(intent_file)


def write_all(fd: int, data: bytes) -> None:
    """os.write until all of `data` is written: a write may take only part of it."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def repair_locked(fd: int, raw: Path, where: str) -> str | None:
    """Settle the intent a killed writer left beside the raw log `raw` (open as `fd`, its lock
    held): cut off a half append only when the intent proves those bytes are its own. Returns a
    line for a report when it did anything, else None."""
    intent_file = intent_path(raw)
    if not os.path.lexists(intent_file):
        return None
    pending = read_intent(intent_file)
    data = read_fd(fd, MAX_LOG_BYTES, where)
    size = len(data)
    if pending is not None and pending.cut_is_proven(data):
        os.ftruncate(fd, pending.size)
        os.fsync(fd)
        drop_intent(intent_file)  # only once the cut is done: else the next one tries again
        return (
            f"{where}: cut off {size - pending.size} bytes of a checkpoint whose writer "
            "stopped mid-append (its write had not returned; the bytes matched its intent)"
        )
    drop_intent(intent_file)
    if pending is None or not pending.proven:
        return (
            f"{where}: an append intent that proves nothing (unreadable, or no payload "
            "matching its hash) was removed; the log was kept as it is"
        )
    if size <= pending.size:
        return None  # the append never started
    if size >= pending.end and data[pending.size : pending.end] == pending.payload:
        return None  # the append was whole: its writer died before removing the intent
    return (
        f"{where}: a half append is followed by bytes its intent does not account for; "
        "nothing was cut (the log was kept as it is)"
    )


def write_intent(raw: Path, size: int, payload: bytes) -> None:
    """Write the intent as a new regular file (whatever was at its name is replaced, never
    written through)."""
    intent_file = intent_path(raw)
    drop_intent(intent_file)
    fd = os.open(
        intent_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666
    )
    try:
        write_all(fd, json.dumps(intent_record(size, payload)).encode("ascii"))
    finally:
        os.close(fd)


class AppendFailed(Exception):
    """An append's write failed (a full disk, a read-only folder); `kept` says what is left."""

    def __init__(self, error: OSError, kept: str) -> None:
        super().__init__(error.strerror or str(error))
        self.error, self.kept = error, kept


def append_all_or_nothing(fd: int, raw: Path, size: int, payload: bytes) -> None:
    """Announce, write, sync, retract (the log's lock held); on failure cut the log back to
    `size` and raise AppendFailed (an interrupt is cut back too, and raised as it is)."""
    intent_file = intent_path(raw)
    try:
        write_intent(raw, size, payload)
        write_all(fd, payload)
        os.fsync(fd)
    except BaseException as exc:  # a full disk, or Ctrl-C in the middle: undo it all
        kept = "the log is as it was"
        try:
            os.ftruncate(fd, size)
            os.unlink(intent_file)
        except FileNotFoundError:
            pass
        except OSError:  # the intent stays: the next reader or writer cuts the tail off
            kept = "the partial checkpoint is cut off at the next access"
        if not isinstance(exc, OSError):
            raise
        raise AppendFailed(exc, kept) from exc
    drop_intent(intent_file)


def lock_current(fd: int, path: Path, reopen: Callable[[], int]) -> int:
    """An fd of the log `path` names now, held with the exclusive lock. A forget
    (`forget/forgetting`) renames a rewritten log over the file a waiting writer had opened;
    appending to that one would lose the checkpoint, so the writer opens the log again."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    while True:
        try:
            current = os.stat(path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            return fd
        if current == os.fstat(fd).st_ino:
            return fd
        os.close(fd)
        fd = reopen()
        fcntl.flock(fd, fcntl.LOCK_EX)
