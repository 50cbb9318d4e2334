"""Confine every path a request names to the Jupyter server root.

The sidebar names a notebook by its path relative to the server root, exactly as JupyterLab's
contents API does; the memory root is that notebook's folder. A request may never reach outside
the server root: not with `..`, not with an absolute path, not through a symlink, whether the
link is the path named or a part of the memory beside it (its memory/ folder, a raw log, a node,
the index, a knowledge file): `links_out` finds those, and the handlers refuse such a memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath

from hipo_jupyter.memory import PathOutsideRootError
from hipo_jupyter.memory.disk import MEMORY_DIR


class BadPathError(ValueError):
    """A path parameter that is not a path at all (NUL byte, backslash tricks)."""


def _relative_parts(relative: str) -> tuple[str, ...]:
    """Split an API path into its parts, refusing absolute paths and `..` before touching disk."""
    if "\x00" in relative:
        raise BadPathError("path contains a NUL byte")
    if PureWindowsPath(relative).drive or relative.startswith(("/", "\\")):
        raise PathOutsideRootError(f"absolute paths are not allowed: {relative!r}")
    parts = tuple(part for part in PurePosixPath(relative.replace("\\", "/")).parts if part != ".")
    if ".." in parts:
        raise PathOutsideRootError(f"'..' is not allowed in a path: {relative!r}")
    return parts


def confine(base: Path, relative: str) -> Path:
    """`base / relative`, resolved, or PathOutsideRootError if it (or a symlink on the way) leaves
    `base`. The result may not exist; callers decide whether that is a 404."""
    base = base.resolve()
    try:
        target = base.joinpath(*_relative_parts(relative)).resolve()
    except RuntimeError:  # "Symlink loop"
        raise BadPathError(f"path is a loop of symbolic links: {relative!r}") from None
    if not target.is_relative_to(base):
        raise PathOutsideRootError(f"path leaves the server root: {relative!r}")
    return target


def memory_folder(server_root: Path, notebook_path: str) -> Path:
    """The memory root for a notebook: its folder (or the folder itself when a folder is named).

    Raises PathOutsideRootError when it lies outside the server root and FileNotFoundError when
    neither the notebook nor its folder exists.
    """
    named = confine(server_root, notebook_path)
    folder = named if named.is_dir() else named.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"no such notebook or folder: {notebook_path!r}")
    return folder


LAYOUT = (MEMORY_DIR, "knowledge", "plans", "SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md")
MEMORY_FOLDERS = ("", "daily", "weekly", "monthly", ".index", ".index/whoosh")
WALKED = ("knowledge", "plans")


def links_out(folder: Path, base: Path) -> list[str]:
    """The symlinks of the memory at `folder` that lead out of `base`, relative to `folder`.

    Looks where the engine reads: the layout's entries, the memory/ folders it lists, and the
    trees of knowledge/ and plans/. Only links are resolved, so a plain memory costs a few
    directory listings.
    """
    base = base.resolve()
    found: list[str] = []

    def check(path: Path) -> None:
        if not path.is_symlink():
            return
        try:
            inside = path.resolve().is_relative_to(base)
        except (OSError, RuntimeError):  # a loop of links leads nowhere: the engine skips it,
            return  # and a request for it is a 400 (see `confine`)
        if not inside:
            found.append(path.relative_to(folder).as_posix())

    for name in LAYOUT:
        check(folder / name)
    if found:
        return found
    for sub in MEMORY_FOLDERS:
        directory = folder / MEMORY_DIR / sub
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.is_symlink():
                check(directory / entry.name)
    for name in WALKED:
        _walk_links(folder / name, check)
    return found


def _walk_links(top: Path, check: Callable[[Path], None]) -> None:
    """`check` each symlink under `top`, found from the directory entries' types (no stat of
    each file: a folder of 100,000 notes is read in a few listings, not 100,000 calls)."""
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        check(Path(entry.path))
                    elif entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
