"""Notes an agent keeps (Claude's memory tool, issue 14): writing, deleting and moving Layer 1
working files and the notes under knowledge/ and plans/, under the rules of `notes`.

Every write is atomic and redacted, never follows a symlink, and leaves the text index (and the
vectors) in step with a knowledge note as it now is on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..disk import anchored
from ..disk.files import MAX_NODE_BYTES
from ..disk.redact import redact
from ..disk.store import Store, WriteError
from ..errors import HipoError, PathOutsideRootError
from ..search.indexing import IndexKeeper
from . import notes


class NoteFiles:
    """The notes of one memory root, written under the root's lock."""

    def __init__(self, store: Store, indexer: IndexKeeper, lock: threading.RLock) -> None:
        self.store = store
        self._indexer = indexer
        self._lock = lock

    def write(self, relative_path: str, text: str) -> str:
        """Write a working file or a note; anything else is refused (NotWritable) with why and
        what to do instead. Returns the clean relative path."""
        relative = notes.normalize(relative_path)
        notes.check_writable(relative, "create")
        if len(text) > MAX_NODE_BYTES:  # before redacting 100 MB: it could never be read back
            raise WriteError(
                f"{relative} would be over the {MAX_NODE_BYTES:,}-byte limit every reader has; "
                "nothing was written"
            )
        path = self.file(relative)
        with self._lock:
            self.store.write_atomic(path, redact(text))
            self._index(relative)
        return relative

    def delete(self, relative_path: str) -> str:
        """Delete a note under knowledge/ or plans/ (and its index entry); nothing else. The
        entry is removed from the folder walked from the root (`anchored`), never through a
        link swapped in since the check."""
        relative = notes.normalize(relative_path)
        notes.check_writable(relative, "delete")
        self.file(relative)
        with self._lock:
            if not self._act(anchored.unlink, relative):
                raise HipoError(f"no such memory file: {relative}")
            self._index(relative)
        return relative

    def move(self, old_path: str, new_path: str) -> str:
        """Rename a note within knowledge/ and plans/; the destination must not exist."""
        old, new = notes.normalize(old_path), notes.normalize(new_path)
        notes.check_writable(old, "rename")
        notes.check_writable(new, "rename")
        self.file(old), self.file(new)
        with self._lock:
            try:
                self._act(anchored.rename, old, new)
            except FileNotFoundError:
                raise HipoError(f"no such memory file: {old}") from None
            except FileExistsError:
                raise HipoError(
                    f"{new} already exists: delete it first or choose another name"
                ) from None
            self._index(old)
            self._index(new)
        return new

    def _act(self, action: Callable[..., bool | None], *relatives: str) -> bool | None:
        """`action(root, *relatives)`, a folder met where a file was named (or a link where a
        folder was) being one line, not a traceback."""
        try:
            return action(self.store.root, *relatives)
        except IsADirectoryError:
            raise HipoError(f"{relatives[0]} is a folder, not a memory file") from None
        except NotADirectoryError:
            raise PathOutsideRootError(
                f"{relatives[-1]!r} goes through a file or a symlink; not followed"
            ) from None

    def file(self, relative: str) -> Path:
        """The file of a memory path (clean, relative), refusing any symlink on the way (in or
        out of the root): a link would let a note's write land on a raw log or outside."""
        path = self.store.inside(relative)
        if path != self.store.root.resolve() / relative:
            raise PathOutsideRootError(f"{relative!r} goes through a symlink; not followed")
        return path

    def _index(self, relative: str) -> None:
        """Bring the index (and vectors) in step with a knowledge note as it is now on disk."""
        if relative.startswith("knowledge/"):
            self._indexer.refresh_file(relative)
