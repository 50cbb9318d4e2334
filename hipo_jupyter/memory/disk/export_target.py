"""Where `hipo export -o TARGET` writes, and how, so that an export never costs data.

- The memory's own files are never a target: nothing under memory/, knowledge/ or plans/, and
  no Layer 1 file (SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md), by name or through a link; an
  export over a raw log would replace the truth with CSV.
- A regular file (or a new name) is replaced atomically: a temporary file in the same folder,
  synced and renamed over it, removed on any failure, so a reader sees the old file or the new.
- A FIFO or a character device is written as a stream (opened, never replaced by a file);
  `/dev/stdout`, `/dev/stderr` and `/dev/fd/N` (what a shell's `>(cmd)` gives) are written to
  the process's own open descriptor, keeping its offset and append mode.
- A folder, a symlink, a socket or a block device is a one-line error (`ExportTargetError`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ..errors import HipoError
from .anchored import write_at
from .files import kind_of
from .layout import MEMORY_DIR, WORKING_FILES

_OWN_FD = re.compile(r"/(?:dev/(?:fd/(?P<fd>\d+)|(?P<std>stdout|stderr))|proc/self/fd/(?P<p>\d+))")
_STD = {"stdout": 1, "stderr": 2}
_FOLDERS = (MEMORY_DIR, "knowledge", "plans")


class ExportTargetError(HipoError):
    """An export target that would cost data or cannot take a stream: said in one line."""


def write_export(root: Path, target: Path, data: bytes) -> None:
    """Write `data` to `target` as the module doc says, never into the memory at `root`."""
    own = _OWN_FD.fullmatch(str(target))
    if own:
        fd = int(own["fd"] or own["p"] or _STD[own["std"]])
        _write_own_fd(root, target, fd, data)
        return
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    _refuse_memory_file(root, target)
    if info is None or stat.S_ISREG(info.st_mode):
        _replace(target, data)
    elif stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode):
        fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    else:
        raise ExportTargetError(
            f"{target} is a {kind_of(info.st_mode)}: export writes a file, a FIFO, a device or "
            "stdout ('-'); give a file name"
        )


def _refuse_memory_file(root: Path, target: Path) -> None:
    """ExportTargetError when `target` (its folder resolved, then its name) is one of the
    memory's own files or lies in one of its folders."""
    real_root = root.resolve()
    real = Path(target).absolute().parent.resolve() / Path(target).name
    with_links = real.resolve() if real.is_symlink() else real
    for candidate in (real, with_links):
        if not candidate.is_relative_to(real_root):
            continue
        parts = candidate.relative_to(real_root).parts
        if parts and (parts[0] in _FOLDERS or (len(parts) == 1 and parts[0] in WORKING_FILES)):
            raise ExportTargetError(
                f"{target} is inside the memory ({'/'.join(parts)}): export never writes into "
                "memory/, knowledge/, plans/ or the Layer 1 files; choose another file"
            )


def _replace(target: Path, data: bytes) -> None:
    """`target` replaced atomically through its folder's descriptor (no temp file left)."""
    folder = Path(target).absolute().parent
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise ExportTargetError(f"{target}: no such folder {folder}") from None
    try:
        write_at(dir_fd, Path(target).name, data)
    except IsADirectoryError:
        raise ExportTargetError(f"{target} is a folder: give a file name") from None
    finally:
        os.close(dir_fd)


def _write_own_fd(root: Path, target: Path, fd: int, data: bytes) -> None:
    """A stream to one of this process's descriptors; a regular file behind it is checked
    like any target (a shell redirect into memory/ is refused too)."""
    try:
        info = os.fstat(fd)
    except OSError as error:
        if error.errno == errno.EBADF:
            raise ExportTargetError(f"{target}: descriptor {fd} is not open") from None
        raise
    if stat.S_ISREG(info.st_mode):
        try:
            behind = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            behind = None
        if behind is not None and behind.is_absolute():
            _refuse_memory_file(root, behind)
    _write_all(fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
