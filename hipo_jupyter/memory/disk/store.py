"""The files on disk, and the only code that writes them.

Layout under a memory root (Hipocampus-compatible; DESIGN.md):

    SCRATCHPAD.md  WORKING.md  TASK-QUEUE.md      Layer 1 working files (templates, by `init`)
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
  An append is all or nothing, and a half append left by a killed writer is cut off only when
  its intent proves the bytes are its own (`appends.py`). Checkpoints whose append returned are
  never touched. Readers of a raw log hold a shared `flock`, so they never see an append in
  progress.
- `write_atomic`: derived files are written to a temporary file in the same folder and renamed
  over the old one, so a reader (or a crash) sees the old version or the new, never half. A
  process killed between the two leaves a hidden `.NAME.*.tmp` behind;
  `remove_stale_temp_files` deletes the compaction pass's ones (under the compaction lock).

Every read is of a regular file inside the root, bounded, never through a final symlink and
never blocking (`files.py`): a raw log that is a FIFO, a device, a folder or a symlink, or that
is named for a day out of range, is skipped with a warning once per process.

A write that fails (a full disk, a read-only folder) raises `WriteError`, a HipoError naming the
file and what was kept, so front ends show one line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import Callable, Iterator
from datetime import date
from functools import lru_cache
from pathlib import Path

from ..errors import MemoryRootError, ParseError, PathOutsideRootError
from . import anchored
from .appends import (  # noqa: F401 - Appended and Compose are imported from here too
    Appended,
    AppendFailed,
    AppendIntent,
    Compose,
    append_all_or_nothing,
    drop_intent,
    intent_path,
    lock_current,
    pending_intent,
    repair_locked,
    sha256,
)
from .files import (  # noqa: F401 - decode_markdown is imported from here too
    MAX_LOG_BYTES,
    MAX_NODE_BYTES,
    UnsafeFileError,
    decode_markdown,
    expanded,
    kind_of,
    read_fd,
    read_regular,
    write_atomic_bytes,
)
from .layout import (  # noqa: F401 - the layout's names are imported from here too
    CONVERSATIONS_DIR,
    INTENT_NAME,
    MEMORY_DIR,
    NODE_LEVELS,
    RAW_NAME,
    ROOT_FILE,
    RawStamps,
    node_path,
    raw_log_day,
    raw_log_path,
)
from .periods import in_range

log = logging.getLogger(__name__)

class WriteError(MemoryRootError):
    """A memory file could not be written (disk full, read-only folder, permissions)."""


def _failure(error: OSError) -> str:
    return error.strerror or str(error)


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = expanded(root, "memory root")
        self.memory_dir = self.root / MEMORY_DIR
        self.index_dir = self.memory_dir / ".index"
        self.state_path = self.memory_dir / ".compaction-state.json"
        self.root_node = self.root / ROOT_FILE
        self._warned: set[str] = set()

    # --- layout -------------------------------------------------------------------------
    def check_root(self) -> None:
        """The root must be a folder (or not exist yet): a file is a one-line error."""
        if self.root.exists() and not self.root.is_dir():
            raise MemoryRootError(f"memory root {self.root} is a file, not a folder")

    def ensure_layout(self, *, full: bool = False) -> None:
        """Create memory/ (every write needs it); with `full` (`init`), knowledge/ and plans/
        too. Otherwise those are made on first use, so opening a notebook's memory leaves no
        empty folders beside the notebook."""
        self.check_root()
        folders = [self.memory_dir]
        if full:
            folders += [self.root / "knowledge", self.root / "plans"]
        try:
            for folder in folders:
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryRootError(
                f"cannot create memory folders in {self.root}: {exc.strerror}"
            ) from exc
        self.confined(self.memory_dir)
        if not os.access(self.memory_dir, os.W_OK):
            raise MemoryRootError(f"memory folder {self.memory_dir} is not writable")

    def has_memory(self) -> bool:
        """Whether this root holds a memory at all (its memory/ folder exists)."""
        return self.memory_dir.is_dir()

    def confined(self, folder: Path) -> Path:
        """`folder`, after checking that it really lies inside the root: a memory/ or node
        folder that is a symlink out of the root is neither read nor written."""
        try:
            real = folder.resolve()
            inside = real.is_relative_to(self.root.resolve())
        except (OSError, RuntimeError):  # a loop of links
            inside = False
        if not inside:
            raise PathOutsideRootError(
                f"{self._shown(folder)} leads outside the memory root {self.root}: not used"
            )
        return folder

    def level_dir(self, level: str) -> Path:
        return self.memory_dir / level

    def raw_path(self, day: date) -> Path:
        return self.root / raw_log_path(day)

    def _warn_once(self, name: str, why: str) -> None:
        if name not in self._warned:
            self._warned.add(name)
            log.warning("hipo: %s: %s; skipped", name, why)

    def raw_days(self) -> list[date]:
        """Dates of the raw logs present, oldest first: regular files named for a day in range.
        Anything else with a log's name (a FIFO, a folder, a symlink, a day in year 9999) is
        skipped with a warning, once per process."""
        days = []
        for name, info in self._raw_entries():
            day = date.fromisoformat(name[:-3])
            if not in_range(day):
                self._warn_once(f"{MEMORY_DIR}/{name}", "a day outside 1900-01-01 .. 2199-12-31")
            elif not stat.S_ISREG(info.st_mode):
                kind = kind_of(info.st_mode)
                self._warn_once(f"{MEMORY_DIR}/{name}", f"a {kind}, not a regular file")
            else:
                days.append(day)
        return sorted(days)

    def _raw_entries(self) -> list[tuple[str, os.stat_result]]:
        """(name, lstat) of the entries named like a raw log of a real day."""
        try:
            entries = list(os.scandir(self.memory_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for entry in entries:
            if _raw_day(entry.name) is None:
                continue  # "2026-02-30.md": not a day, not ours to judge
            try:
                found.append((entry.name, entry.stat(follow_symlinks=False)))
            except OSError:
                continue  # gone meanwhile
        return found

    def raw_stamps(self) -> RawStamps:
        """Raw log name -> (size, mtime_ns): a cheap way to tell whether any raw log changed."""
        try:
            entries = os.scandir(self.memory_dir)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        stamps = {}
        with entries:  # one pass: every recall lists them (at 10,000 notes, ~500 logs)
            for entry in entries:
                name = entry.name
                if not _in_range_day(name):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone meanwhile
                if stat.S_ISREG(info.st_mode):
                    stamps[name] = (info.st_size, info.st_mtime_ns)
        return stamps

    def node_paths(self) -> set[str]:
        """Relative paths of every compaction node (and ROOT.md), from directory listings only."""
        paths = set()
        for level in NODE_LEVELS:
            paths.update(node_path(level, period) for period in self.node_files(level))
        if self.root_node.exists():
            paths.add(ROOT_FILE)
        return paths

    def node_files(self, level: str) -> dict[str, Path]:
        """Existing node files of a level by period name ("2026-03-12", "2026-W11", "2026-03").
        Names that are not regular files are left out (reading one could block or never end)."""
        folder = self.level_dir(level)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        found = {}
        for entry in entries:
            name = entry.name
            if not name.endswith(".md") or name[0] == ".":
                continue
            try:
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                continue
            if regular:
                found[name[:-3]] = folder / name
            else:
                self._warn_once(f"{MEMORY_DIR}/{level}/{name}", "not a regular file")
        return found

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def inside(self, relative_path: str) -> Path:
        """The absolute path of a file under the root; refuses `..`, absolute paths and
        symlinks that lead out."""
        if not relative_path or relative_path.startswith(("/", "\\")) or "\x00" in relative_path:
            raise PathOutsideRootError(f"not a path inside the memory root: {relative_path!r}")
        try:
            candidate = (self.root / relative_path).resolve()
        except (OSError, RuntimeError):
            raise PathOutsideRootError(
                f"{relative_path!r} is a loop of links, not a file of the memory root"
            ) from None
        if not candidate.is_relative_to(self.root.resolve()):
            raise PathOutsideRootError(f"{relative_path!r} points outside the memory root")
        return candidate

    # --- reading ------------------------------------------------------------------------
    def is_raw(self, path: Path) -> bool:
        return path.parent == self.memory_dir and RAW_NAME.match(path.name) is not None

    def read_file(self, path: Path, limit: int = MAX_NODE_BYTES) -> bytes:
        """The bytes of a regular file of the memory (never a FIFO, device or final symlink,
        never more than `limit`); UnsafeFileError otherwise."""
        inside = anchored.below(self.root, path)
        if inside is None:
            self.confined(path.parent)
            return read_regular(path, limit, self._shown(path))
        try:
            return anchored.read_bytes(self.root, inside, limit)
        except PathOutsideRootError as exc:
            raise UnsafeFileError(str(exc)) from None

    def read_bytes(self, path: Path) -> bytes:
        """A file's bytes. A raw log is read under a shared lock, so never mid-append, and a
        half append left by a killed writer is repaired first (or left out, read-only)."""
        if not self.is_raw(path):
            return self.read_file(path)
        data, pending = self._read_shared(path)
        if pending is None:
            return data
        try:
            line = self.repair_append(path)
        except OSError:  # a read-only folder: show the log without the half append it proves
            return data[: pending.size] if pending.cut_is_proven(data) else data
        if line:
            log.warning("hipo: %s", line)
        return self._read_shared(path)[0]

    def read_text(self, path: Path) -> str:
        return decode_markdown(self.read_bytes(path), self.relative(path))

    def _open_raw(self, path: Path, flags: int) -> int:
        """An fd of the raw log, reached from the root through folders only (`anchored`); a
        log with more than one hard link is refused for appends (it may be a file elsewhere)."""
        shown = self.relative(path)
        try:
            with anchored.parent(self.root, shown) as (dir_fd, name):
                fd = anchored.open_file_at(dir_fd, name, flags, shown)
        except (UnsafeFileError, PathOutsideRootError):
            raise
        except OSError as exc:
            if flags & os.O_CREAT:
                raise WriteError(f"cannot open {shown} to append: {_failure(exc)}") from exc
            raise
        links = os.fstat(fd).st_nlink
        if flags & os.O_APPEND and links > 1:
            os.close(fd)
            raise UnsafeFileError(
                f"{shown} has {links} hard links, so it may be a file outside the memory: "
                "not appended to (copy it to a file of its own)"
            )
        return fd

    def _read_shared(self, path: Path) -> tuple[bytes, AppendIntent | None]:
        """The log's bytes under a shared lock, and the intent of a writer that died (an intent
        seen under the lock cannot be a live writer's: writers hold the lock exclusively)."""
        fd = self._open_raw(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                data = read_fd(fd, MAX_LOG_BYTES, self.relative(path))
                pending = pending_intent(path)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return data, pending

    # --- appends a killed writer left half done ---------------------------------------------
    def intent_path(self, raw: Path) -> Path:
        return intent_path(raw)

    def repair_append(self, path: Path) -> str | None:
        """Settle an append to the raw log `path` whose writer died, under the log's exclusive
        lock (the writers' lock). Returns a line for a report when it did anything."""
        fd = self._open_raw(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                return repair_locked(fd, path, self.relative(path))
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def repair_appends(self) -> list[str]:
        """`repair_append` for every raw log with an intent left behind; what was done."""
        try:
            names = sorted(os.listdir(self.memory_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        done = []
        for name in names:
            match = INTENT_NAME.match(name)
            if not match:
                continue
            try:
                line = self.repair_append(self.memory_dir / match.group(1))
            except FileNotFoundError:  # no log, so nothing to cut
                drop_intent(self.memory_dir / name)
                continue
            except (UnsafeFileError, PathOutsideRootError) as exc:
                done.append(f"{str(exc)}; its append intent {name} was left alone")
                continue
            if line:
                done.append(line)
        return done

    # --- writing ------------------------------------------------------------------------
    def append_raw(self, day: date, block: str) -> Appended:
        """Append a block to the day's raw log under an exclusive lock, then fsync.

        The block is separated from what is there by one blank line; a file that does not end in
        a newline (written by another tool) gets one first. Nothing already there is touched.
        All or nothing (see the module doc): on failure the log is as it was and WriteError
        says so. Only a regular file inside the root is appended to: a log that is a symlink
        (anywhere), a FIFO or a device is refused with UnsafeFileError.
        """
        written = self.append_raw_composed(day, lambda before, stamp: block)
        assert written is not None  # a block is always given
        return written

    def append_raw_composed(
        self, day: date, compose: Compose, then: Callable[[Appended], object] | None = None
    ) -> Appended | None:
        """`append_raw` of the block `compose(log bytes, (size, mtime_ns))` returns, or nothing
        (None) when it returns None. `compose` sees the log under the exclusive lock, so for
        every process writing the day, looking and appending are one step (`writing`).

        `then(appended)` runs after the append, still under the lock: the search index's step
        for the append. Run after the unlock, two processes' index steps could finish in the
        other order than their appends, and the one holding the older text set the index back
        to a log without the other's checkpoint (seen in tests/test_load.py; the test is
        tests/test_index_race.py)."""
        self.ensure_layout()
        path = self.raw_path(day)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
        fd = self._open_raw(path, flags)
        try:
            fd = lock_current(fd, path, lambda: self._open_raw(path, flags))
            try:
                repaired = repair_locked(fd, path, self.relative(path))
                if repaired:
                    log.warning("hipo: %s", repaired)
                before = read_fd(fd, MAX_LOG_BYTES, self.relative(path))
                info = os.fstat(fd)
                stamp_before = (info.st_size, info.st_mtime_ns)
                block = compose(before, stamp_before)
                if block is None:
                    return None
                prefix = b""
                if before and not before.endswith(b"\n"):
                    prefix = b"\n\n"
                elif before and not before.endswith(b"\n\n"):
                    prefix = b"\n"
                payload = prefix + block.encode("utf-8")
                if len(before) + len(payload) > MAX_LOG_BYTES:
                    raise WriteError(
                        f"{self.relative(path)} would grow past {MAX_LOG_BYTES:,} bytes; "
                        "nothing was written (save large output under knowledge/)"
                    )
                try:
                    append_all_or_nothing(fd, path, len(before), payload)
                except AppendFailed as failed:
                    raise WriteError(
                        f"could not append to {self.relative(path)}: {failed}; nothing was "
                        f"written ({failed.kept})"
                    ) from failed.error
                info = os.fstat(fd)
                after = before + payload
                appended = Appended(
                    line=(before + prefix).count(b"\n") + 1,
                    size_before=len(before),
                    hash_before=sha256(before),
                    hash_after=sha256(after),
                    text_after=after.decode("utf-8", errors="replace"),
                    stamp_before=stamp_before,
                    stamp_after=(info.st_size, info.st_mtime_ns),
                )
                if then is not None:
                    then(appended)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return appended

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
        """Write a derived file by temp file + rename; False when it was already identical.

        The rename replaces whatever had the name (a symlink or FIFO put there is replaced, never
        written through); the folder must lie inside the root."""
        data = text.encode("utf-8")
        try:
            if self.read_file(path, max(len(data), 1)) == data:
                return False
        except (OSError, ParseError):
            pass
        if len(data) > MAX_NODE_BYTES:
            raise WriteError(
                f"{self._shown(path)} would be {len(data):,} bytes, over the "
                f"{MAX_NODE_BYTES:,}-byte limit every reader has; nothing was written"
            )
        inside = anchored.below(self.root, path)
        try:
            if inside is None:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.confined(path.parent)
                write_atomic_bytes(path, data)
            else:
                anchored.write_bytes(self.root, inside, data)
        except OSError as exc:
            raise WriteError(
                f"cannot write {self._shown(path)}: {_failure(exc)}; the previous version is kept"
            ) from exc
        return True

    def _shown(self, path: Path) -> str:
        try:
            return self.relative(path)
        except ValueError:
            return str(path)

    def remove_stale_temp_files(self) -> list[str]:
        """Delete the temporary files a killed compaction pass left (`.NAME.*.tmp` beside the
        nodes, ROOT.md and the state file). Call it holding the compaction lock: then no pass
        is writing one. In memory/ only those of ROOT.md and the state file: the other files
        there (the forget ledger, the writers' records, a team folder's id) are written by
        other processes under other locks, and their live temporary file is not a stale one."""
        removed = []
        own = tuple(f".{path.name}." for path in (self.root_node, self.state_path))
        for folder in (self.memory_dir, *(self.level_dir(level) for level in NODE_LEVELS)):
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                continue
            for name in names:
                if folder == self.memory_dir and not name.startswith(own):
                    continue
                if name.startswith(".") and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        (folder / name).unlink()
                        removed.append(self.relative(folder / name))
        return sorted(removed)


@lru_cache(maxsize=1 << 14)
def _raw_day(name: str) -> date | None:
    """The day a raw log's file name names, None when it names none: every recall lists
    the raw logs, hundreds of names that are the same call after call."""
    match = RAW_NAME.match(name)
    if not match:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:
        return None


@lru_cache(maxsize=1 << 14)
def _in_range_day(name: str) -> bool:
    """Whether `name` is a raw log's of a day in range (`raw_stamps`)."""
    day = _raw_day(name)
    return day is not None and in_range(day)
