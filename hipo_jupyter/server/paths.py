"""Confine every path a request names to the Jupyter server root.

The sidebar names a notebook by its path relative to the server root, exactly as JupyterLab's
contents API does; the memory root is that notebook's folder. A request may never reach outside
the server root: not with `..`, not with an absolute path, not through a symlink.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from hipo_jupyter.memory.errors import PathOutsideRootError


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
    target = base.joinpath(*_relative_parts(relative)).resolve()
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
