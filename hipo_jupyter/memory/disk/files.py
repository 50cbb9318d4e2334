"""Reading and writing files in a memory folder that may lie.

A memory folder is edited by people and other tools, so any name in it may turn out to be a
FIFO (opening it blocks until someone writes), a device (`/dev/zero` never ends), a socket, a
folder, or a symlink to any of those or to a file outside the root. Every read the engine makes
goes through `read_regular`, which:

- looks at the name without following it (`lstat`), so a FIFO or device is never opened;
- opens it with `O_NOFOLLOW | O_NONBLOCK`, so a symlink swapped in after the look is refused
  and nothing can block, then checks with `fstat` that what was opened is a regular file;
- reads at most `limit` bytes, and refuses a file that is larger.

Derived files are written by `write_atomic_bytes`: a temporary file beside the target, synced and
renamed over it, created with the mode the umask gives (like the raw logs), so a teammate who can
read the notebook can read its memory. `mkstemp` alone would make them `-rw-------`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import threading
from pathlib import Path

from ..errors import HipoError, MemoryRootError, ParseError

MiB = 1 << 20
MAX_LOG_BYTES = 64 * MiB  # a raw daily log: some 600 checkpoints at the body limit
MAX_NODE_BYTES = 16 * MiB  # a node, ROOT.md, a Layer 1 file, a knowledge file
MAX_STATE_BYTES = 16 * MiB  # the compaction state and other JSON kept beside the memory
MAX_IMPORT_BYTES = 256 * MiB  # a transcript given to `hipo import`

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_umask_lock = threading.Lock()


class UnsafeFileError(ParseError):
    """A name in the memory folder that is not a regular file, or one too large to read.

    A ParseError, so every reader that skips a damaged log or node skips these too."""


def kind_of(mode: int) -> str:
    """What a file mode is, in words, for messages."""
    for test, name in (
        (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISDIR, "folder"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"


def not_regular(shown: str, mode: int) -> UnsafeFileError:
    return UnsafeFileError(
        f"{shown} is a {kind_of(mode)}, not a regular file: hipo reads and writes only regular "
        "files inside the memory root"
    )


def open_regular(path: Path, flags: int, shown: str, *, create_mode: int = 0o666) -> int:
    """An fd of the regular file at `path`, never through a final symlink and never blocking.

    `flags` are the access flags (O_RDONLY, O_RDWR | O_APPEND, with O_CREAT to create)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(shown, info.st_mode)
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, create_mode)
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink put there since the lstat
            raise not_regular(shown, stat.S_IFLNK) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(shown, mode)
    return fd


def read_fd(fd: int, limit: int, shown: str, offset: int = 0) -> bytes:
    """All the bytes of an open regular file from `offset`, refusing more than `limit`."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise too_large(shown, size, limit)
    chunks = []
    while True:
        chunk = os.pread(fd, min(limit + 1 - offset, 1 << 20) or 1, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        if offset > limit:
            raise too_large(shown, offset, limit)
    return b"".join(chunks)


def too_large(shown: str, size: int, limit: int) -> UnsafeFileError:
    return UnsafeFileError(
        f"{shown} is {size:,} bytes, over the {limit:,}-byte limit for such a file; not read"
    )


def read_regular(path: Path, limit: int, shown: str | None = None) -> bytes:
    """The bytes of the regular file `path`; UnsafeFileError for anything else or too large."""
    shown = shown or path.name
    fd = open_regular(path, os.O_RDONLY, shown)
    try:
        return read_fd(fd, limit, shown)
    finally:
        os.close(fd)


def read_user_file(path: Path, limit: int, shown: str | None = None) -> bytes:
    """The bytes of a file the user hands in from outside the memory (an import, a transcript,
    a model's settings): a symlink to a regular file is followed (it is the user's own file),
    but a FIFO, device, socket or folder is refused before it is opened, the open never
    blocks, `fstat` checks what was opened, and more than `limit` bytes are refused."""
    shown = shown or str(path)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFileError(f"{shown} is a {kind_of(info.st_mode)}, not a regular file")
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFileError(f"{shown} is a {kind_of(mode)}, not a regular file")
        return read_fd(fd, limit, shown)
    finally:
        os.close(fd)


def read_regular_text(path: Path, limit: int, shown: str | None = None) -> str:
    """`read_regular` decoded as UTF-8 (a ParseError naming the byte when it is not)."""
    shown = shown or path.name
    data = read_regular(path, limit, shown)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ParseError(f"{shown} is not UTF-8 text (byte {error.start})") from None


def expanded(path: str | Path, what: str, error: type[HipoError] = MemoryRootError) -> Path:
    """`path` with a leading `~` or `~user` expanded, absolute; `error` naming `what` and the
    path when it cannot be (`~nosuchuser/x`, no home directory) instead of pathlib's
    RuntimeError."""
    try:
        return Path(path).expanduser().absolute()
    except RuntimeError:
        user = str(path).split("/", 1)[0]
        raise error(
            f"{what} {str(path)!r}: {user} cannot be expanded (no such user, or no home folder)"
        ) from None


def current_umask() -> int:
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """Write `path` by temporary file + fsync + rename, with the umask's mode (OSError on
    failure; the previous version is then untouched)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def decode_markdown(data: bytes, where: str) -> str:
    """Raw logs and nodes are UTF-8 text; anything else is refused with the file named."""
    if b"\x00" in data:
        raise ParseError(f"{where} looks binary (it contains NUL bytes); not a Markdown log")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{where} is not UTF-8 text (byte {exc.start}); not a Markdown log"
        ) from exc
