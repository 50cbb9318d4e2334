"""Forgetting: the user's power to remove a checkpoint for good (issue 35, item 4).

The raw logs are append-only except for this. `forget` finds the checkpoint by its id (or the
end of it, as rules are accepted), asks `disk/trust` whether the front end may forget (only the
user's: magic, cli, sidebar), and then removes every byte of its text under the root:

1. its raw log is rewritten under the writers' exclusive lock (a temporary file in the same
   folder through the folder's descriptor, fsync, rename: `anchored.write_at`); the checkpoint's
   lines become one tombstone line (`Tombstone`: id, date, reason, no text), every other byte of
   the log stays as it was;
2. each compaction node that quoted it (or covers its day) and ROOT.md are deleted and the chain
   builds them again from the logs (a missing node is rebuilt, fixed or not);
3. the search index is synced and each SQLite file under `memory/.index` is compacted with
   `secure_delete` on (FTS5 segments merged, VACUUM, the write-ahead log truncated), so no free
   page keeps the text; a derived store that still holds it (the graph, Whoosh, caches) is
   deleted, as it is rebuilt from the logs when next used;
4. `%%ask` conversations and last-sent records: a turn whose call was sent it (its `sources`)
   is dropped with its question, and a line or value quoting it is replaced; a word of it found
   in them is left alone (a word is every text's, not the note's);
5. every regular file under the root is scanned for the text (its lines and values) before
   success is reported: a file of the memory that still holds it fails the forget; one of the
   user's own (a notebook that typed the note) is named so the user can edit it.

What was made from it goes with it: lineage (`Checkpoint.sources`, written by the write-back
of a call that was sent it) names the checkpoints derived from it, and each is forgotten the
same way and listed (`derived`), unless the user keeps them (`keep_derived`). Nothing else is
taken: another checkpoint that quotes it is named (`quoted_by`), never changed.

Before step 1 the forget is written to the ledger (`forget/ledger`) as pending, with keyed
hashes of its content and pieces (no text), and marked done after step 5: every live holder
(a kernel's conversation and pinned Layer 1, the server, the sidebar) obeys it at its next
use, no write brings the content back, recall leaves its text out while it is pending, and a
forget killed after step 1 is finished by running it again (`finish_interrupted`: the log no
longer holds the text, so the later steps find it by its hashes).

`views/check.forgotten_ids_remain` is what `hipo check` runs: no file of the memory but a
tombstone line carries a forgotten id; `views/check.forgets_obeyed` that no forget is left
pending and no live copy (a conversation, a last-sent record) holds a piece of one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..disk import anchored
from ..disk.appends import lock_current, repair_locked
from ..disk.checkpoint import Checkpoint, Tombstone, parse_log, parse_tombstone, pick_by_id
from ..disk.files import MAX_LOG_BYTES, read_fd
from ..disk.layout import MEMORY_DIR, NODE_LEVELS
from ..disk.periods import week_id, week_month
from ..disk.store import ROOT_FILE
from ..disk.trust import FORGET, may, writer_of_provenance
from ..errors import HipoError
from .ledger import QUOTE_CHARS, ForgetEvent, ForgetLedger, quote_scrubber, runs
from .scrubbing import (
    Holds,
    compact_sqlite_files,
    drop_derived_holding,
    holds,
    regular_files,
    scrub_conversations,
)

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from ..disk.store import Store
    from ..search.indexing import IndexKeeper
    from ..search.semantic import SemanticIndex


class ForgettingMemory(Protocol):
    """What forgetting reaches into: the files, every index, the tree and the team link. The
    engine's `Memory` is one; this room names the shape and never imports the facade above it
    (which imports this room)."""

    root: Path
    store: Store
    config: MemoryConfig
    semantic: SemanticIndex
    forgotten: ForgetLedger
    _indexer: IndexKeeper

    @property
    def today(self) -> date: ...

    def compact(self) -> Any: ...

    def team_sync(self) -> Any: ...

    def _all_checkpoints(self, days: Sequence[date] | None = None) -> list[Checkpoint]: ...

    def _ensure_index(self) -> Any: ...

    def _notify(self, event: str) -> None: ...

MIN_PIECE_CHARS = 4  # shorter field values ("yes", "Q1") are words of many notes, not its text
SCAN_LIMIT = 512 * 1024 * 1024  # files larger than this are read in chunks


@dataclass
class ForgetReport:
    """What a forget did; `clean` when no file of the memory holds a word of the text."""

    id: str
    log: str  # the raw log rewritten, relative to the root
    tombstone: str  # its tombstone line
    rebuilt: list[str] = field(default_factory=list)  # derived files deleted and rebuilt
    scrubbed: list[str] = field(default_factory=list)  # files whose quotes were replaced
    remaining: list[str] = field(default_factory=list)  # memory files still holding the text
    user_files: list[str] = field(default_factory=list)  # the user's own files holding it
    team_removed: int = 0  # rows the team database deleted
    finished: bool = False  # this run finished a forget killed midway
    quoted_by: list[str] = field(default_factory=list)  # other checkpoints quoting its words
    derived: list[str] = field(default_factory=list)  # made from it (lineage), forgotten too
    kept_derived: list[str] = field(default_factory=list)  # made from it, kept as the user asked

    @property
    def clean(self) -> bool:
        return not self.remaining

    def text(self) -> str:
        lines = [f"forgot {self.id}: {self.log} now holds only its tombstone"]
        if self.finished:
            lines[0] += " (an interrupted forget, finished now)"
        if self.rebuilt:
            lines.append(f"rebuilt or dropped {len(self.rebuilt)} derived files")
        if self.team_removed:
            lines.append(f"the team database deleted its row ({self.team_removed})")
        if self.derived:
            lines.append("forgot too what was made from it: " + ", ".join(self.derived))
        if self.kept_derived:
            lines.append("kept what was made from it, as you asked: "
                         + ", ".join(self.kept_derived))  # fmt: skip
        if self.scrubbed:
            lines.append("quotes removed from " + ", ".join(self.scrubbed))
        if self.user_files:
            lines.append("your own files still hold its text (edit them): "
                         + ", ".join(self.user_files))  # fmt: skip
        if self.quoted_by:
            lines.append("other checkpoints quote its words (forget them too if they must go): "
                         + ", ".join(self.quoted_by))  # fmt: skip
        if self.remaining:
            lines.append("NOT clean: the text is still in " + ", ".join(self.remaining))
        return "\n".join(lines)


def find_checkpoint(checkpoints: list[Checkpoint], wanted: str) -> Checkpoint:
    """The checkpoint whose id is `wanted` or ends with it (at least MIN_ID_CHARS characters,
    when only one does); HipoError, one line, otherwise."""
    return pick_by_id(
        checkpoints,
        wanted,
        plural="checkpoints",
        none="give the ID of a checkpoint (hipo recall shows them)",
        unknown="no checkpoint has the ID {wanted!r}",
    )


def checkpoint_id_at(memory: ForgettingMemory, file: str, line: int) -> str:
    """The id of the checkpoint whose heading is at `file`:`line` (a recall hit's location,
    which is what the sidebar has of a hit); HipoError, one line, when none with an id is."""
    for checkpoint in memory._all_checkpoints():
        where = f"{MEMORY_DIR}/{checkpoint.date}.md"
        if checkpoint.id and checkpoint.line == line and where == file:
            return checkpoint.id
    raise HipoError(f"no checkpoint with an ID starts at {file}:{line}")


def text_pieces(checkpoint: Checkpoint, others: list[Checkpoint]) -> list[str]:
    """The words of `checkpoint` a scan looks for: its title, each field value and each line of
    its text, less those another checkpoint also holds (they stay, as that one's words)."""
    kept = "\n".join(other.search_text() for other in others)
    candidates = [checkpoint.title, *checkpoint.text.split("\n")]
    for _, value in checkpoint.fields:
        candidates += [value, *value.split("\n")]
    pieces = {piece.strip() for piece in candidates}
    return sorted(p for p in pieces if len(p) >= MIN_PIECE_CHARS and p not in kept)



def note_runs(checkpoint: Checkpoint, others: list[Checkpoint]) -> list[str]:
    """Its runs of words (`forget/ledger.runs`) that no other checkpoint holds: a line of
    another text holding one quotes this note (a gist in ROOT.md, a reply that repeated it)."""
    held = set().union(*(runs(other.search_text()) for other in others))
    return sorted(runs(checkpoint.search_text()) - held)


def quoting(checkpoint: Checkpoint, others: list[Checkpoint]) -> list[str]:
    """The ids of the other checkpoints that hold one of its lines or values (an import, an
    exchange, a note that copied it): they are theirs, kept byte for byte, and named so the
    user can forget them too. A correction of it is not a quote."""
    lines = {line.strip() for line in checkpoint.text.split("\n")}
    for _, value in checkpoint.fields:
        lines |= {value.strip(), *(line.strip() for line in value.split("\n"))}
    lines = {line for line in lines if len(line) >= QUOTE_CHARS}
    return [
        other.id for other in others
        if other.id and other.replaces != checkpoint.id
        and any(line in other.search_text() for line in lines)
    ]  # fmt: skip


def derived_from(checkpoint_id: str, checkpoints: Sequence[Checkpoint]) -> list[Checkpoint]:
    """The checkpoints lineage says were made from `checkpoint_id` (their `sources` name it,
    or name one made from it), in file order: what a forget takes with the note."""
    taken, found = {checkpoint_id}, True
    while found:
        found = False
        for checkpoint in checkpoints:
            if checkpoint.id and checkpoint.id not in taken and taken & set(checkpoint.sources):
                taken.add(checkpoint.id)
                found = True
    return [cp for cp in checkpoints if cp.id in taken and cp.id != checkpoint_id]


def forget(
    memory: ForgettingMemory,
    wanted: str,
    *,
    reason: str = "",
    via: str,
    keep_derived: bool = False,
) -> ForgetReport:
    """Forget the checkpoint `wanted` names, for the front end `via`, and what lineage says was
    made from it (a write-back whose call was sent it), unless `keep_derived` (see the module
    doc). Nothing else is touched: other checkpoints quoting it are named, not changed."""
    if not may(writer_of_provenance(via), FORGET):
        raise HipoError(f"only the user forgets a checkpoint, not {via!r}")
    reason = " ".join(reason.split())[:200]
    everything = memory._all_checkpoints()
    try:
        checkpoint = find_checkpoint(everything, wanted)
    except HipoError:
        interrupted = memory.forgotten.find_pending(wanted.strip())
        if interrupted is None:
            raise
        return finish_interrupted(memory, interrupted)
    derived = derived_from(checkpoint.id or "", everything)
    report = _forget_one(memory, checkpoint, everything, reason)
    if keep_derived:
        report.kept_derived = [cp.id for cp in derived if cp.id]
        return report
    for piece in derived:
        assert piece.id is not None
        made = _forget_one(memory, piece, memory._all_checkpoints(),
                           reason or f"made from {checkpoint.id}")  # fmt: skip
        report.derived.append(piece.id)
        report.rebuilt += [f for f in made.rebuilt if f not in report.rebuilt]
        report.scrubbed += [f for f in made.scrubbed if f not in report.scrubbed]
        report.remaining += [f for f in made.remaining if f not in report.remaining]
        report.user_files += [f for f in made.user_files if f not in report.user_files]
    report.quoted_by = [cid for cid in report.quoted_by if cid not in report.derived]
    return report


def _forget_one(
    memory: ForgettingMemory, checkpoint: Checkpoint, everything: list[Checkpoint], reason: str
) -> ForgetReport:
    """Steps 1 to 5 for one checkpoint: its pieces are its own lines and values (less those
    another checkpoint also holds); a conversation or file is changed where it quotes them,
    or where lineage names the checkpoint, never where one of its words happens to stand."""
    assert checkpoint.id is not None and checkpoint.date is not None
    others = [cp for cp in everything if cp.id != checkpoint.id]
    pieces = text_pieces(checkpoint, others)
    its_runs = note_runs(checkpoint, others)
    stone = Tombstone(checkpoint.id, memory.today.isoformat(), reason)
    day = date.fromisoformat(checkpoint.date)
    memory.forgotten.begin_forget(checkpoint, [*pieces, *its_runs])  # pending: not recalled
    memory._notify("forget")
    relative = _rewrite_log(memory, day, checkpoint.id, stone)
    report = ForgetReport(checkpoint.id, relative, stone.line())
    report.quoted_by = quoting(checkpoint, others)
    needles = [piece.encode("utf-8") for piece in pieces] + [checkpoint.id.encode("utf-8")]
    report.rebuilt += _drop_nodes(memory, day, needles)
    rewrite, quoted = quote_scrubber([*pieces, *its_runs])
    _rebuild_derived(memory, report, pieces, needles, rewrite=rewrite)
    _scan(memory, [piece.encode("utf-8") for piece in pieces], report, quoted)
    memory.forgotten.finish_forget(checkpoint.id)
    memory._notify("forget")
    return report


def finish_interrupted(memory: ForgettingMemory, event: ForgetEvent) -> ForgetReport:
    """Steps 2 to 5 of a forget killed after its raw log was rewritten: the text is in no
    log any more, so nodes over its day and ROOT.md are rebuilt, the index synced and
    compacted, and conversations and derived files are found by the ledger's keyed hashes."""
    day = date.fromisoformat(event.day)
    relative = memory.store.relative(memory.store.raw_path(day))
    text = memory.store.raw_path(day).read_text(encoding="utf-8", errors="replace")
    stones = [stone for line in text.split("\n") if (stone := parse_tombstone(line))]
    line = next((stone.line() for stone in stones if stone.id == event.id), "")
    report = ForgetReport(event.id, relative, line, finished=True)
    hides = memory.forgotten.hides([event])
    report.rebuilt += _drop_nodes(memory, day, [], also=hides)
    _rebuild_derived(memory, report, [], [], rewrite=memory.forgotten.scrubber([event]), also=hides)
    memory.forgotten.finish_forget(event.id)
    memory._notify("forget")
    return report


def _rebuild_derived(
    memory: ForgettingMemory,
    report: ForgetReport,
    pieces: list[str],
    needles: list[bytes],
    *,
    rewrite: Callable[[str], str] | None = None,
    also: Holds | None = None,
) -> None:
    """Steps 3 to 5 of a forget, once its log holds no text: the team's row, the tree
    compacted, the index synced and compacted, conversations scrubbed (by `pieces`, or what
    `rewrite` finds by the ledger's hashes) and derived stores holding it dropped."""
    if memory.config.team_url:
        _forget_in_team(memory, report)
    memory.compact()
    memory._indexer.close()
    memory._indexer.stale()
    memory._ensure_index()
    lineage = memory.forgotten.forgotten_ids()
    report.scrubbed += scrub_conversations(memory, pieces, rewrite, forgotten_ids=lineage)
    report.rebuilt += compact_sqlite_files(memory)
    report.rebuilt += drop_derived_holding(memory, needles, also)
    memory._ensure_index()


def _forget_in_team(memory: ForgettingMemory, report: ForgetReport) -> None:
    """The team database's row of the checkpoint: a sync now sends the rewritten log, and the
    database deletes this folder's rows its logs no longer hold (`team/sync`). A database that
    cannot be reached keeps the row: that is said, and the forget is not clean."""
    try:
        pushed = memory.team_sync()
    except HipoError as error:
        report.remaining.append(f"the team database ({error}; run hipo team sync)")
        return
    report.team_removed = int(getattr(pushed, "removed", 0))


def _rewrite_log(memory: ForgettingMemory, day: date, checkpoint_id: str, stone: Tombstone) -> str:
    """Replace the checkpoint's lines in its raw log by the tombstone, under the lock."""
    store = memory.store
    path = store.raw_path(day)
    relative = store.relative(path)
    fd = store._open_raw(path, os.O_RDWR)
    try:
        fd = lock_current(fd, path, lambda: store._open_raw(path, os.O_RDWR))
        links = os.fstat(fd).st_nlink
        if links > 1:  # the rename would leave the text in the other name
            raise HipoError(f"{relative} has {links} hard links: its text would stay in "
                            "the other; nothing was changed (copy it to a file of its own)")
        try:
            repair_locked(fd, path, relative)  # a killed writer's intent names the old bytes
            text = read_fd(fd, MAX_LOG_BYTES, relative).decode("utf-8")
            rewritten = without_checkpoint(text, checkpoint_id, stone)
            with anchored.parent(memory.root, relative) as (dir_fd, name):
                anchored.write_at(dir_fd, name, rewritten.encode("utf-8"))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return relative


def without_checkpoint(text: str, checkpoint_id: str, stone: Tombstone) -> str:
    """`text` (a raw log) with the lines of the checkpoint `checkpoint_id` replaced by the
    tombstone's line; blank lines after it, tombstones of earlier forgets that followed it, and
    every other line are kept byte for byte."""
    found = [cp for cp in parse_log(text) if cp.id == checkpoint_id]
    if not found:
        raise HipoError(f"{checkpoint_id} is no longer in its raw log (forgotten already?)")
    lines = text.split("\n")
    start = found[0].line - 1
    end = start + 1
    while end < len(lines) and not (
        lines[end].startswith("##") and (len(lines[end]) == 2 or lines[end][2] in " \t")
    ):
        end += 1
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1  # the blank lines that separate it from the next one stay
    earlier = [line for line in lines[start:end] if parse_tombstone(line)]  # kept, in order
    return "\n".join([*lines[:start], stone.line(), *earlier, *lines[end:]])


def _drop_nodes(
    memory: ForgettingMemory, day: date, needles: list[bytes], also: Holds | None = None
) -> list[str]:
    """Delete the nodes over `day`, ROOT.md and any node quoting the text (its `needles`, or
    a piece `also` finds), under the compaction lock: the next pass builds each missing node
    again from the logs."""
    store = memory.store
    week = week_id(day)
    covering = {f"daily/{day.isoformat()}.md", f"weekly/{week}.md",
                f"monthly/{week_month(week)}.md"}  # fmt: skip
    dropped = []
    with store.compaction_lock():
        for level in NODE_LEVELS:
            for name, path in store.node_files(level).items():
                if f"{level}/{name}.md" in covering or holds(path, needles, also):
                    dropped += _unlink(memory, store.relative(path))
        dropped += _unlink(memory, ROOT_FILE)
    return dropped


drop_nodes = _drop_nodes  # what a correction in force rebuilds too (`views/correcting`)


def _unlink(memory: ForgettingMemory, relative: str) -> list[str]:
    with contextlib.suppress(FileNotFoundError):
        if anchored.unlink(memory.root, relative):
            return [relative]
    return []


def _scan(
    memory: ForgettingMemory, needles: list[bytes], report: ForgetReport, quoted: Holds
) -> None:
    """Every regular file under the root, for the text (a file holding one of its pieces'
    bytes, `needles`, where `quoted` finds a quoted line or value of it): the memory's own
    files go to `remaining` (a failure), the user's own files to `user_files`."""
    for path in regular_files(memory.root):
        if not holds(path, needles) or not holds(path, [], also=quoted):
            continue
        relative = memory.store.relative(path)
        ours = relative.startswith(f"{MEMORY_DIR}/")
        (report.remaining if ours else report.user_files).append(relative)
