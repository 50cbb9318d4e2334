"""The files on disk, and the only code that writes them.

Layout under a memory root (Hipocampus-compatible; DESIGN.md):

    SCRATCHPAD.md  WORKING.md  TASK-QUEUE.md      Layer 1 working files (from templates, first use)
    knowledge/*.md  plans/*.md                    Layer 2, read on demand
    memory/
      ROOT.md                                     Layer 1 topic index (derived)
      YYYY-MM-DD.md                               raw daily log: append-only, permanent, the truth
      daily/YYYY-MM-DD.md  weekly/YYYY-Www.md  monthly/YYYY-MM.md   compaction nodes (derived)
      .compaction-state.json                      what was built from which inputs (derived)
      .index/                                     search index (derived)
      .compaction.lock                            held (flock) by the one process compacting

Two kinds of write, and nothing else:
- `append_raw`: the raw log is only ever appended to, under an exclusive `flock` on the file and
  followed by `fsync`, so several kernels can checkpoint into one day without interleaving.
  An append is all or nothing. The kernel may stop a `write` part-way (a `kill -9` landing
  between two pages of a checkpoint; a full disk takes what fits), so before writing, the log's
  size and the payload's length and hash go to an intent file `memory/.YYYY-MM-DD.md.append`,
  removed once the payload is written and synced. A writer whose write fails cuts the log back
  itself; one that was killed leaves the intent behind, and the next process to take the log's
  lock (an append, a read, a compaction pass) cuts the half checkpoint off, or keeps it when
  the hash shows it complete. Checkpoints whose append returned are never touched. Readers of a
  raw log hold a shared `flock`, so they never see an append in progress. (The intent is not
  fsynced: it covers a process killed or failing, not a power cut.)
- `write_atomic`: derived files are written to a temporary file in the same folder and renamed
  over the old one, so a reader (or a crash) sees the old version or the new, never half. A
  process killed between the two leaves a hidden `.NAME.*.tmp` behind;
  `remove_stale_temp_files` deletes the compaction pass's ones (under the compaction lock).

A write that fails (a full disk, a read-only folder) raises `WriteError`, a HipoError naming the
file and what was kept, so front ends show one line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .errors import MemoryRootError, ParseError, PathOutsideRootError

RAW_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
INTENT_NAME = re.compile(r"^\.(\d{4}-\d{2}-\d{2}\.md)\.append$")
NODE_LEVELS = ("daily", "weekly", "monthly")


class WriteError(MemoryRootError):
    """A memory file could not be written (disk full, read-only folder, permissions)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class AppendIntent:
    """What an append is about to do: the log's size before it, the payload's length and hash."""

    size: int
    length: int
    digest: str

    @property
    def end(self) -> int:
        return self.size + self.length


def read_intent(path: Path) -> AppendIntent | None:
    """The intent in `path`, or None when there is none or it was itself cut short (then the
    append it announced never started: the intent is written whole before the payload)."""
    try:
        data = json.loads(path.read_bytes())
        return AppendIntent(int(data["size"]), int(data["length"]), str(data["sha256"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_all(fd: int, offset: int = 0, length: int | None = None) -> bytes:
    """Bytes of an open file from `offset` (to the end, or `length` of them), by pread."""
    end = os.fstat(fd).st_size if length is None else offset + length
    chunks = []
    while offset < end:
        chunk = os.pread(fd, min(end - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    """os.write until all of `data` is written: a write may take only part of it."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _failure(error: OSError) -> str:
    return error.strerror or str(error)


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


@dataclass(frozen=True)
class Appended:
    """Where an append landed, and the file's hash before and after it (for the index)."""

    line: int
    size_before: int
    hash_before: str
    hash_after: str
    text_after: str


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().absolute()
        self.memory_dir = self.root / "memory"
        self.index_dir = self.memory_dir / ".index"
        self.state_path = self.memory_dir / ".compaction-state.json"
        self.root_node = self.memory_dir / "ROOT.md"

    # --- layout -------------------------------------------------------------------------
    def ensure_layout(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise MemoryRootError(f"memory root {self.root} is a file, not a folder")
        try:
            for folder in (self.memory_dir, self.root / "knowledge", self.root / "plans"):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryRootError(
                f"cannot create memory folders in {self.root}: {exc.strerror}"
            ) from exc
        if not os.access(self.memory_dir, os.W_OK):
            raise MemoryRootError(f"memory folder {self.memory_dir} is not writable")

    def level_dir(self, level: str) -> Path:
        return self.memory_dir / level

    def raw_path(self, day: date) -> Path:
        return self.memory_dir / f"{day.isoformat()}.md"

    def raw_days(self) -> list[date]:
        """Dates of the raw logs present, oldest first."""
        days = []
        try:
            names = os.listdir(self.memory_dir)
        except FileNotFoundError:
            return []
        for name in names:
            match = RAW_NAME.match(name)
            if match:
                try:
                    days.append(date.fromisoformat(match.group(1)))
                except ValueError:
                    continue  # "2026-02-30.md": not a day, not ours to judge
        return sorted(days)

    def raw_stamps(self) -> dict[str, tuple[int, int]]:
        """Raw log name -> (size, mtime_ns): a cheap way to tell whether any raw log changed."""
        stamps = {}
        try:
            entries = os.scandir(self.memory_dir)
        except FileNotFoundError:
            return {}
        with entries:
            for entry in entries:
                if RAW_NAME.match(entry.name):
                    info = entry.stat()
                    stamps[entry.name] = (info.st_size, info.st_mtime_ns)
        return stamps

    def node_paths(self) -> set[str]:
        """Relative paths of every compaction node (and ROOT.md), from directory listings only."""
        paths = set()
        for level in NODE_LEVELS:
            try:
                names = os.listdir(self.memory_dir / level)
            except FileNotFoundError:
                continue
            paths.update(f"memory/{level}/{n}" for n in names if n.endswith(".md") and n[0] != ".")
        if self.root_node.exists():
            paths.add("memory/ROOT.md")
        return paths

    def node_files(self, level: str) -> dict[str, Path]:
        """Existing node files of a level by period name ("2026-03-12", "2026-W11", "2026-03")."""
        folder = self.level_dir(level)
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return {}
        return {n[:-3]: folder / n for n in sorted(names) if n.endswith(".md") and n[0] != "."}

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def inside(self, relative_path: str) -> Path:
        """The absolute path of a file under the root; refuses `..`, absolute paths and
        symlinks that lead out."""
        if not relative_path or relative_path.startswith(("/", "\\")) or "\x00" in relative_path:
            raise PathOutsideRootError(f"not a path inside the memory root: {relative_path!r}")
        candidate = (self.root / relative_path).resolve()
        if not candidate.is_relative_to(self.root.resolve()):
            raise PathOutsideRootError(f"{relative_path!r} points outside the memory root")
        return candidate

    # --- reading ------------------------------------------------------------------------
    def is_raw(self, path: Path) -> bool:
        return path.parent == self.memory_dir and RAW_NAME.match(path.name) is not None

    def read_bytes(self, path: Path) -> bytes:
        """A file's bytes. A raw log is read under a shared lock, so never mid-append, and a
        half append left by a killed writer is repaired first (or left out, read-only)."""
        if not self.is_raw(path):
            return path.read_bytes()
        data, pending = self._read_shared(path)
        if pending is None:
            return data
        try:
            self.repair_append(path)
        except OSError:  # a read-only folder: show the log as it was before the cut append
            return data[: pending.size] if pending.size <= len(data) < pending.end else data
        return self._read_shared(path)[0]

    def read_text(self, path: Path) -> str:
        return decode_markdown(self.read_bytes(path), self.relative(path))

    def _read_shared(self, path: Path) -> tuple[bytes, AppendIntent | None]:
        """The log's bytes under a shared lock, and the intent of a writer that died (an intent
        seen under the lock cannot be a live writer's: writers hold the lock exclusively)."""
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                data = _read_all(fd)
                pending = read_intent(self.intent_path(path))
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return data, pending

    # --- appends a killed writer left half done ---------------------------------------------
    def intent_path(self, raw: Path) -> Path:
        return raw.with_name(f".{raw.name}.append")

    def repair_append(self, path: Path) -> str | None:
        """Settle an append to the raw log `path` whose writer died, under the log's lock.
        Returns a line for a report when a half checkpoint was cut off, else None."""
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                return self._repair_locked(fd, path)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def repair_appends(self) -> list[str]:
        """`repair_append` for every raw log with an intent left behind; what was cut."""
        try:
            names = sorted(os.listdir(self.memory_dir))
        except FileNotFoundError:
            return []
        done = []
        for name in names:
            match = INTENT_NAME.match(name)
            if not match:
                continue
            try:
                line = self.repair_append(self.memory_dir / match.group(1))
            except FileNotFoundError:  # no log, so nothing to cut
                (self.memory_dir / name).unlink(missing_ok=True)
                continue
            if line:
                done.append(line)
        return done

    def _repair_locked(self, fd: int, path: Path) -> str | None:
        intent_file = self.intent_path(path)
        if not intent_file.exists():
            return None
        pending = read_intent(intent_file)
        size = os.fstat(fd).st_size
        # Cut only a tail that the announced payload could have left: longer means it was all
        # written (the writer died before removing the intent) or another tool wrote since;
        # shorter than the old size, the log was changed by someone else. A cut-short intent
        # means the payload was never started. In all those cases the log stays as it is.
        partial = pending is not None and pending.size < size < pending.end
        if partial:
            os.ftruncate(fd, pending.size)
            os.fsync(fd)
        intent_file.unlink(missing_ok=True)
        if not partial:
            return None
        return (
            f"{self.relative(path)}: cut off {size - pending.size} bytes of a checkpoint whose "
            "writer stopped mid-append (its write had not returned)"
        )

    # --- writing ------------------------------------------------------------------------
    def append_raw(self, day: date, block: str) -> Appended:
        """Append a block to the day's raw log under an exclusive lock, then fsync.

        The block is separated from what is there by one blank line; a file that does not end in
        a newline (written by another tool) gets one first. Nothing already there is touched.
        All or nothing (see the module doc): on failure the log is as it was and WriteError
        says so.
        """
        self.ensure_layout()
        path = self.raw_path(day)
        where = self.relative(path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise WriteError(f"cannot open {where} to append: {_failure(exc)}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._repair_locked(fd, path)
                before = _read_all(fd)
                prefix = b""
                if before and not before.endswith(b"\n"):
                    prefix = b"\n\n"
                elif before and not before.endswith(b"\n\n"):
                    prefix = b"\n"
                payload = prefix + block.encode("utf-8")
                self._append_all_or_nothing(fd, path, len(before), payload)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        after = before + payload
        start_line = (before + prefix).count(b"\n") + 1
        return Appended(
            line=start_line,
            size_before=len(before),
            hash_before=sha256(before),
            hash_after=sha256(after),
            text_after=after.decode("utf-8", errors="replace"),
        )

    def _append_all_or_nothing(self, fd: int, path: Path, size: int, payload: bytes) -> None:
        """Announce, write, sync, retract; on failure cut the log back to `size` (lock held)."""
        intent_file = self.intent_path(path)
        intent = {"size": size, "length": len(payload), "sha256": sha256(payload)}
        try:
            intent_file.write_text(json.dumps(intent), encoding="utf-8")
            _write_all(fd, payload)
            os.fsync(fd)
        except BaseException as exc:  # a full disk, or Ctrl-C in the middle: undo it all
            kept = "the log is as it was"
            try:
                os.ftruncate(fd, size)
                intent_file.unlink(missing_ok=True)
            except OSError:  # the intent stays: the next reader or writer cuts the tail off
                kept = "the partial checkpoint is cut off at the next access"
            if not isinstance(exc, OSError):
                raise
            raise WriteError(
                f"could not append to {self.relative(path)}: {_failure(exc)}; nothing was "
                f"written ({kept})"
            ) from exc
        intent_file.unlink(missing_ok=True)

    @contextlib.contextmanager
    def compaction_lock(self) -> Iterator[None]:
        """One compaction pass at a time across processes.

        An `flock`, so the kernel releases it when its holder dies (even by kill -9): a crashed
        writer never blocks the others. A second kernel waits, then finds nothing dirty.
        """
        self.ensure_layout()
        fd = os.open(self.memory_dir / ".compaction.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def write_atomic(self, path: Path, text: str) -> bool:
        """Write a derived file by temp file + rename; False when it was already identical."""
        data = text.encode("utf-8")
        try:
            if path.read_bytes() == data:
                return False
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            pass
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise WriteError(f"cannot write {self._shown(path)}: {_failure(exc)}") from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise WriteError(
                    f"cannot write {self._shown(path)}: {_failure(exc)}; the previous version "
                    "is kept"
                ) from exc
            raise
        return True

    def _shown(self, path: Path) -> str:
        try:
            return self.relative(path)
        except ValueError:
            return str(path)

    def remove_stale_temp_files(self) -> list[str]:
        """Delete the temporary files a killed compaction pass left (`.NAME.*.tmp` beside the
        nodes, ROOT.md and the state file). Call it holding the compaction lock: then no pass
        is writing one."""
        removed = []
        for folder in (self.memory_dir, *(self.level_dir(level) for level in NODE_LEVELS)):
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                continue
            for name in names:
                if name.startswith(".") and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        (folder / name).unlink()
                        removed.append(self.relative(folder / name))
        return sorted(removed)
