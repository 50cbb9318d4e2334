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
- `write_atomic`: derived files are written to a temporary file in the same folder and renamed
  over the old one, so a reader (or a crash) sees the old version or the new, never half.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .errors import MemoryRootError, ParseError, PathOutsideRootError

RAW_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
NODE_LEVELS = ("daily", "weekly", "monthly")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    def read_bytes(self, path: Path) -> bytes:
        return path.read_bytes()

    def read_text(self, path: Path) -> str:
        return decode_markdown(path.read_bytes(), self.relative(path))

    # --- writing ------------------------------------------------------------------------
    def append_raw(self, day: date, block: str) -> Appended:
        """Append a block to the day's raw log under an exclusive lock, then fsync.

        The block is separated from what is there by one blank line; a file that does not end in
        a newline (written by another tool) gets one first. Nothing already there is touched.
        """
        self.ensure_layout()
        path = self.raw_path(day)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as reader:
                before = reader.read()
            prefix = b""
            if before and not before.endswith(b"\n"):
                prefix = b"\n\n"
            elif before and not before.endswith(b"\n\n"):
                prefix = b"\n"
            payload = prefix + block.encode("utf-8")
            os.write(fd, payload)
            os.fsync(fd)
            after = before + payload
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        start_line = (before + prefix).count(b"\n") + 1
        return Appended(
            line=start_line,
            size_before=len(before),
            hash_before=sha256(before),
            hash_after=sha256(after),
            text_after=after.decode("utf-8", errors="replace"),
        )

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
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return True
