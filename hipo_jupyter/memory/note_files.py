"""Notes an agent keeps (Claude's memory tool, issue 14): writing, deleting and moving Layer 1
working files and the notes under knowledge/ and plans/, under the rules of `notes`.

Every write is atomic and redacted, never follows a symlink, and leaves the text index (and the
vectors) in step with a knowledge note as it now is on disk.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from . import notes
from .errors import HipoError, PathOutsideRootError
from .indexing import IndexKeeper
from .redact import redact
from .store import Store


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
        path = self.file(relative)
        with self._lock:
            self.store.write_atomic(path, redact(text))
            self._index(relative)
        return relative

    def delete(self, relative_path: str) -> str:
        """Delete a note under knowledge/ or plans/ (and its index entry); nothing else."""
        relative = notes.normalize(relative_path)
        notes.check_writable(relative, "delete")
        path = self.file(relative)
        if not path.is_file():
            raise HipoError(f"no such memory file: {relative}")
        with self._lock:
            path.unlink()
            self._index(relative)
        return relative

    def move(self, old_path: str, new_path: str) -> str:
        """Rename a note within knowledge/ and plans/; the destination must not exist."""
        old, new = notes.normalize(old_path), notes.normalize(new_path)
        notes.check_writable(old, "rename")
        notes.check_writable(new, "rename")
        source, target = self.file(old), self.file(new)
        if not source.is_file():
            raise HipoError(f"no such memory file: {old}")
        if target.exists():
            raise HipoError(f"{new} already exists: delete it first or choose another name")
        with self._lock:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            self._index(old)
            self._index(new)
        return new

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
