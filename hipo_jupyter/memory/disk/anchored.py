"""File operations anchored at the memory root by directory file descriptors.

Checking a path for symlinks and then acting on it by name is a race: between the check and
the act another process can swap `knowledge/d` for a symlink to a folder outside the root, and
the act (an unlink, a rename, a temporary file) lands outside. So every engine write walks from
the root one component at a time with `os.open(part, O_DIRECTORY | O_NOFOLLOW, dir_fd=parent)`
and then acts with `dir_fd=` on the last folder it holds open. A folder swapped for a symlink
anywhere on the way makes the walk fail (ELOOP / ENOTDIR); a folder swapped after the walk is
irrelevant, because the open fd still names the folder that was checked. Nothing is ever
resolved by name twice.

The root itself is taken as given (the user chose it, and it may be reached through a link).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import PathOutsideRootError
from .files import current_umask, not_regular, read_fd

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def split(relative: str) -> list[str]:
    """The parts of a clean relative path (as `notes.normalize` gives it)."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise PathOutsideRootError(f"not a path inside the memory root: {relative!r}")
    return parts


def below(root: Path, path: Path) -> str | None:
    """`path` relative to `root` when it lies (by name) below it, else None: such a path is
    reached through directory fds from the root, never by name."""
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return relative if relative not in ("", ".") and ".." not in relative.split("/") else None


def _refused(shown: str, error: OSError) -> OSError | PathOutsideRootError:
    """A walk that met a symlink (or a file) where a folder was expected: one clear line."""
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return PathOutsideRootError(f"{shown!r} goes through a symlink or a file; not followed")
    return error


def open_dir(root: Path, folders: Sequence[str], *, create: bool = False) -> int:
    """An fd of the folder `root/folders...`, reached without following any link below the
    root; `create` makes missing folders (each made through its parent's fd)."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in folders:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as error:
                raise _refused("/".join(folders), error) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def parent(root: Path, relative: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(fd of the folder holding `relative`, its last name), the fd closed on exit."""
    parts = split(relative)
    fd = open_dir(root, parts[:-1], create=create)
    try:
        yield fd, parts[-1]
    finally:
        os.close(fd)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry's own stat (never through a link), None when there is none."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_file_at(dir_fd: int, name: str, flags: int, shown: str, mode: int = 0o666) -> int:
    """An fd of the regular file `name` in the folder `dir_fd`: never a link, never blocking,
    and never opening a FIFO or device at all (looked at first without following it)."""
    info = lstat_at(dir_fd, name)
    if info is None and not flags & os.O_CREAT:
        raise FileNotFoundError(errno.ENOENT, "no such file", shown)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise not_regular(shown, info.st_mode)
    try:
        fd = os.open(name, flags | _NOFOLLOW | _NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise not_regular(shown, stat.S_IFLNK) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise not_regular(shown, info.st_mode)
    return fd


def read_bytes(root: Path, relative: str, limit: int) -> bytes:
    """The bytes of the regular file `relative`, reached through folders only, bounded."""
    with parent(root, relative) as (dir_fd, name):
        fd = open_file_at(dir_fd, name, os.O_RDONLY, relative)
        try:
            return read_fd(fd, limit, relative)
        finally:
            os.close(fd)


def exists(root: Path, relative: str) -> bool:
    """Whether `relative` names an entry, reached through folders only (a link is not)."""
    try:
        with parent(root, relative) as (dir_fd, name):
            return lstat_at(dir_fd, name) is not None
    except (OSError, PathOutsideRootError):
        return False


def write_at(dir_fd: int, name: str, data: bytes) -> None:
    """`name` in `dir_fd` replaced by `data`: a temporary file in that same folder (created
    there through the fd, exclusively, never through a link), synced, renamed over `name`.
    The temporary file is removed on any failure."""
    temp = f".{name[:80]}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666 & ~current_umask(), dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise


def write_bytes(root: Path, relative: str, data: bytes) -> None:
    """`write_at` for `relative` under the root, making its folders on the way."""
    with parent(root, relative, create=True) as (dir_fd, name):
        write_at(dir_fd, name, data)


def unlink(root: Path, relative: str) -> bool:
    """Delete the regular file (or link) `relative`; False when there was none. The entry is
    removed from the folder that was walked, never from where a link points."""
    with parent(root, relative) as (dir_fd, name):
        info = lstat_at(dir_fd, name)
        if info is None:
            return False
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", relative)
        os.unlink(name, dir_fd=dir_fd)
        return True


def rename(root: Path, old: str, new: str) -> None:
    """Move `old` to `new` (its folders made as needed), both reached through folders only;
    FileExistsError when `new` exists."""
    with (
        parent(root, old) as (old_fd, old_name),
        parent(root, new, create=True) as (
            new_fd,
            new_name,
        ),
    ):
        if lstat_at(new_fd, new_name) is not None:
            raise FileExistsError(errno.EEXIST, "exists", new)
        info = lstat_at(old_fd, old_name)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", old)
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(old, info.st_mode)
        os.rename(old_name, new_name, src_dir_fd=old_fd, dst_dir_fd=new_fd)
