"""Which memory files an agent may write, and how: the protocol's rules in one place.

A memory root is a notebook's folder, so most of what is in it is not memory. Of what is:

    SCRATCHPAD.md  WORKING.md  TASK-QUEUE.md     Layer 1 working files: edited freely (atomically)
    knowledge/**.md  plans/**.md                 Layer 2 notes: created, edited, moved, deleted
    memory/YYYY-MM-DD.md                         raw logs: only ever appended to (checkpoints)
    memory/daily|weekly|monthly/*.md, ROOT.md    derived by compaction: never written by hand

Front ends that let an agent touch files (Claude's memory tool) ask `kind_of` what a path is and
`refusal` why a write is not allowed and what to do instead, so every agent gets the same answer.

`NoteFiles` does the writing, deleting and moving of Layer 1 working files and notes under these
rules: every write is atomic and redacted, never follows a symlink, and leaves the text index (and
the vectors) in step with a knowledge note as it now is on disk.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..disk import anchored
from ..disk.files import MAX_NODE_BYTES
from ..disk.note_writers import NoteWriters
from ..disk.redact import redact
from ..disk.store import ROOT_FILE, Store, WriteError
from ..disk.trust import writer_of_provenance
from ..errors import HipoError, ParseError, PathOutsideRootError
from ..search.indexing import IndexKeeper
from ..tree.layer1 import LAYER1_FILES, TEMPLATES
from ..tree.line_writers import LineWriters, added_lines, line_key, steers

WORKING_FILES = tuple(path for name, path in LAYER1_FILES.items() if name != "ROOT")
NOTE_FOLDERS = ("knowledge", "plans")
NODE_FOLDERS = ("daily", "weekly", "monthly")
RAW_FOLDER = "memory"
ROOT_NODE = ROOT_FILE
_RAW_NAME = re.compile(r"\d{4}-\d{2}-\d{2}\.md\Z")
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators: a name with one of
# these would break every listing, log line and prompt it is shown in.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

# kinds of path
WORKING = "working"  # a Layer 1 working file
NOTE = "note"  # under knowledge/ or plans/
RAW = "raw"  # a raw daily log
RAW_FOLDER_FILE = "raw-folder"  # another name directly under memory/: a create there appends
NODE = "node"  # a compaction node
ROOT = "root"  # memory/ROOT.md
FOLDER = "folder"  # a folder of the memory (memory/, memory/daily/, knowledge/...)
OTHER = "other"  # not part of the memory

WRITABLE = (WORKING, NOTE)
SERVED = (WORKING, NOTE, RAW, NODE, ROOT)  # the one allow-list of files any front end serves

APPEND_INSTEAD = (
    "to record something, append a checkpoint: create or insert under /memories/memory/ "
    "(it is added to today's raw log, never rewritten)"
)
NOTE_INSTEAD = "keep notes under /memories/knowledge/ or /memories/plans/, or in SCRATCHPAD.md"


class NotWritable(HipoError):
    """A write the protocol does not allow on that file (a raw log, a node, not memory)."""


class BadName(HipoError):
    """A memory path with a newline or control character in it."""


class NotServed(HipoError):
    """A read of a file that is not the memory's own (a hidden file, the index, `.env`)."""


def normalize(relative: str) -> str:
    """`relative` as a clean POSIX path under the root ("" for the root itself); refuses
    absolute paths, `..` and NUL, before anything touches the disk."""
    if "\x00" in relative or relative.startswith(("/", "\\")):
        raise PathOutsideRootError(f"not a path inside the memory root: {relative!r}")
    if _CONTROL.search(relative):
        raise BadName(
            f"{relative!r} has a newline or control character in its name: memory file names "
            "are printable text"
        )
    parts = [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise PathOutsideRootError(f"{relative!r} points outside the memory root ('..')")
    return "/".join(parts)


def check_served(relative: str) -> str:
    """`relative` (normalized) when it is one of the memory's own files (Layer 1, a note, a
    raw log, a node, ROOT.md): the one allow-list MCP's `read`, the server and the memory tool
    serve from. Anything else in the folder (`.env`, `creds.json`, the index, hidden files) is
    refused with NotServed, whatever its name looks like."""
    if kind_of(relative) not in SERVED:
        raise NotServed(
            f"{relative!r} is not a memory file; only SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md, "
            "memory/ROOT.md, the raw logs and nodes under memory/, and knowledge/ and plans/ "
            "notes (.md) are served"
        )
    return relative


def kind_of(relative: str, *, is_dir: bool = False) -> str:
    """What the (normalized) path is under the protocol."""
    path = PurePosixPath(relative)
    parts = path.parts
    if not parts:
        return FOLDER
    if any(part.startswith(".") for part in parts):
        return OTHER  # the index, the compaction state, editors' temporary files
    if is_dir:
        memory_folders = {RAW_FOLDER, *(f"{RAW_FOLDER}/{n}" for n in NODE_FOLDERS)}
        if relative in memory_folders or parts[0] in NOTE_FOLDERS:
            return FOLDER
        return OTHER
    if relative in WORKING_FILES:
        return WORKING
    if relative == ROOT_NODE:
        return ROOT
    if parts[0] in NOTE_FOLDERS and len(parts) > 1:
        return NOTE if path.suffix == ".md" else OTHER
    if parts[0] == RAW_FOLDER:
        if len(parts) == 2:
            return RAW if _RAW_NAME.match(parts[1]) else RAW_FOLDER_FILE
        if len(parts) == 3 and parts[1] in NODE_FOLDERS and path.suffix == ".md":
            return NODE
    return OTHER


def refusal(relative: str, kind: str, action: str) -> str:
    """One line: why `action` (create, edit, delete, rename) on `relative` is refused, and
    what to do instead."""
    shown = f"/memories/{relative}" if relative else "/memories"
    if kind == RAW:
        return (
            f"{shown} is a raw log: append-only and permanent, the source of truth, so it "
            f"cannot be {_past(action)}; {APPEND_INSTEAD}, saying what changed"
        )
    if kind == NODE:
        return (
            f"{shown} is a compaction node, rebuilt from the raw logs, so it cannot be "
            f"{_past(action)} by hand; {APPEND_INSTEAD} and the node follows"
        )
    if kind == ROOT:
        return (
            f"{shown} is the topic index, rebuilt from the raw logs, so it cannot be "
            f"{_past(action)} by hand; {APPEND_INSTEAD} and its topics follow"
        )
    if kind == WORKING:
        return (
            f"{shown} is a Layer 1 working file the protocol expects by that name, so it cannot "
            f"be {_past(action)}; rewrite its contents with create or str_replace instead"
        )
    if kind == FOLDER:
        return f"{shown} is a folder of the memory and cannot be {_past(action)}"
    return f"{shown} is not part of the memory; {NOTE_INSTEAD}"


def _past(action: str) -> str:
    return {
        "create": "overwritten",
        "edit": "edited",
        "delete": "deleted",
        "rename": "renamed or moved",
    }.get(action, action)


def check_writable(relative: str, action: str) -> str:
    """The kind of `relative` when `action` is allowed on it; NotWritable otherwise."""
    kind = kind_of(relative)
    if kind == NOTE or (kind == WORKING and action in ("create", "edit")):
        return kind
    raise NotWritable(refusal(relative, kind, action))

class NoteFiles:
    """The notes of one memory root, written under the root's lock."""

    def __init__(self, store: Store, indexer: IndexKeeper, lock: threading.RLock) -> None:
        self.store = store
        self._indexer = indexer
        self._lock = lock

    def write(self, relative_path: str, text: str, *, via: str | None = None) -> str:
        """Write a working file or a note as the front end `via` (None: the user); anything
        else is refused (NotWritable) with why and what to do instead. Returns the clean
        relative path. The lines another writer adds to a working file are recorded first
        (`tree/line_writers`), so Layer 1 never shows them as the user's; so is a note another
        writer writes (`disk/note_writers`), so recall never shows it as the user's."""
        relative = normalize(relative_path)
        check_writable(relative, "create")
        if len(text) > MAX_NODE_BYTES:  # before redacting 100 MB: it could never be read back
            raise WriteError(
                f"{relative} would be over the {MAX_NODE_BYTES:,}-byte limit every reader has; "
                "nothing was written"
            )
        path = self.file(relative)
        text = redact(text)
        with self._lock:
            if kind_of(relative) == WORKING:
                self._record_lines(relative, path, text, via)
            else:  # recorded first: a write cut short never leaves the agent's note unrecorded
                self._record(NoteWriters(self.store.root).wrote(relative, via))
            self.store.write_atomic(path, text)
            self._index(relative)
        return relative

    def _record_lines(self, relative: str, path: Path, text: str, via: str | None) -> None:
        """Record who added which lines of a working file, before the file is written: a write
        cut short leaves at most a recorded line that is not there, never an agent's line
        unrecorded."""
        try:
            before = self.store.read_file(path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            before = ""
        except (OSError, ParseError):
            before = ""  # unreadable: every line written now is new
        writers = LineWriters(self.store.root)
        if not steers(via):
            _refuse_removing_users_lines(relative, before, text, writers.of(relative, before))
        record = writers.record(relative, before, text, via)
        if record is not None:
            self.store.write_atomic(writers.path, record)

    def writer(self, relative_path: str) -> str:
        """Who wrote the note `relative_path` when not the user ("agent", "claude": `trust`),
        from the record its writer's write left (`disk/note_writers`); "" for the user's own
        and for any file that is not a note."""
        relative = normalize(relative_path)
        if kind_of(relative) != NOTE:
            return ""
        via = NoteWriters(self.store.root).via_of(relative)
        return "" if via is None else writer_of_provenance(via)

    def _record(self, record: str | None) -> None:
        """Write the record of who wrote which note (`disk/note_writers`) when it changed."""
        if record is not None:
            self.store.write_atomic(NoteWriters(self.store.root).path, record)

    def delete(self, relative_path: str) -> str:
        """Delete a note under knowledge/ or plans/ (and its index entry); nothing else. The
        entry is removed from the folder walked from the root (`anchored`), never through a
        link swapped in since the check."""
        relative = normalize(relative_path)
        check_writable(relative, "delete")
        self.file(relative)
        with self._lock:
            if not self._act(anchored.unlink, relative):
                raise HipoError(f"no such memory file: {relative}")
            self._record(NoteWriters(self.store.root).deleted(relative))
            self._index(relative)
        return relative

    def move(self, old_path: str, new_path: str) -> str:
        """Rename a note within knowledge/ and plans/; the destination must not exist."""
        old, new = normalize(old_path), normalize(new_path)
        check_writable(old, "rename")
        check_writable(new, "rename")
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
            self._record(NoteWriters(self.store.root).moved(old, new))
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


# Lines of a working file that hold no one's words: headings, comments, placeholders ("(none
# yet)") and every line of the templates (`tree/layer1.TEMPLATES`). An agent may replace them
# (the protocol has it rewrite these files); the user's other lines it may not remove.
_NO_ONES = re.compile(r"\s*(?:#|<!--|-->|\(.*\)\s*\Z)")
_TEMPLATE_LINES = frozenset(
    line.strip() for text in TEMPLATES.values() for line in text.split("\n") if line.strip()
)


def _refuse_removing_users_lines(
    relative: str, before: str, after: str, others: dict[str, str]
) -> None:
    """Refuse (NotWritable) a write by a writer other than the user that removes a line of the
    user's words from a working file (one not recorded as another writer's, `others`): Layer 1
    puts these files in every prompt, and a rule of the user's an agent deleted would silently
    be gone from the next one. The agent adds a line instead."""
    gone = [
        line for line in added_lines(after, before)  # before's lines that after lacks
        if line_key(line) not in others
        and not _NO_ONES.match(line)
        and line.strip() not in _TEMPLATE_LINES
    ]  # fmt: skip
    if gone:
        shown = " ".join(gone[0].split())[:60]
        raise NotWritable(
            f"{relative}: an agent may not remove the user's lines ({len(gone)}, the first: "
            f"{shown!r}); nothing was written: add a line saying what changed instead"
        )
