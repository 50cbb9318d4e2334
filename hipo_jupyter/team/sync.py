"""`hipo team sync` and the background sync after `%%remember`: raw logs -> the team database.

Two small files under `memory/.index/` (derived, deletable: the next sync re-sends everything,
and the database adds nothing twice):

    team-sync.json    {"target": <team + author + exclusions>, "files": {raw log: sha256}}:
                      the version of each raw log whose rows the database holds. A log is sent
                      again only when it changed. Logs are pushed in batches (BATCH_ROWS,
                      one transaction each), the file rewritten after a push at most every
                      STATE_EVERY_S; a sync killed mid-way re-sends the logs not noted yet
                      (rolled back, or committed and then re-sent harmlessly: rows are
                      upserted by checkpoint id).
    team-queue.json   {"days": [...], "attempts": n, "error": "..."}: days written since their
                      last successful push, kept across restarts while the database is down.
                      Bounded: past MAX_QUEUED_DAYS it becomes {"all": true}, a full sync,
                      since the raw logs, not the queue, hold the checkpoints.

The background worker is one daemon thread per process: `%%remember` only appends a day to the
queue (a small file write) and returns; the thread pushes, and on failure waits (RETRY_DELAYS)
and tries again, then leaves the queue for the next checkpoint, session or `hipo team sync`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypedDict

from hipo_jupyter.memory import HipoError, MemoryConfig, ParseError
from hipo_jupyter.memory.disk import Store, read_state_file, sha256

from .database import TeamDatabase, TeamRow, TeamUnavailable
from .identity import folder_id, folder_key
from .rows import author_name, rows_of_log
from .schema import clean_name

log = logging.getLogger(__name__)

STATE_FILE = "team-sync.json"
QUEUE_FILE = "team-queue.json"
LOCK_FILE = "team-sync.lock"
MAX_QUEUED_DAYS = 366
RETRY_DELAYS = (2.0, 10.0, 60.0)  # seconds between background attempts, then it waits for news
# Rows pushed in one transaction: whole logs are gathered until they hold this many, so a full
# sync of a long memory is a few hundred COPYs, not one transaction (and one state write) a day.
BATCH_ROWS = 2000
# The state file is written after a push at most this often (and always at the end): with a
# few thousand logs each write is ~12 ms (JSON, fsync, rename), on the push's own thread, and
# a sync killed in between only sends again logs the database already holds.
STATE_EVERY_S = 2.0


class SyncState(TypedDict, total=False):
    """team-sync.json: what `shape_problem` checks before the sync trusts it."""

    target: str
    files: dict[str, str]
    owned: int
    told_shared_role: bool  # the one line about a role other folders share was said


class QueueState(TypedDict, total=False):
    """team-queue.json (`days` are checked as dates too: `_queue_problem`)."""

    days: list[str]
    all: bool
    attempts: int
    error: str


_SHAPES: dict[str, Any] = {STATE_FILE: SyncState, QUEUE_FILE: QueueState}


def _valid_days(queue: dict) -> bool:
    try:
        return all(len(d) == 10 and date.fromisoformat(d) for d in queue.get("days") or [])
    except ValueError:
        return False


@dataclass(frozen=True)
class SyncReport:
    files: int  # raw logs looked at
    sent_files: int  # raw logs whose rows were pushed (new or changed since the last sync)
    rows: int  # rows pushed
    written: int  # rows the database did not hold yet, or held with other content
    excluded: int  # checkpoints kept local by team_exclude
    refused: int = 0  # rows whose id another owner (role, folder) holds (never overwritten)
    removed: int = 0  # this folder's rows its logs no longer hold
    claimed: int = 0  # rows of before migration 0007 this folder's logs sent, now its own
    resent: bool = False  # the database lacked rows this root had sent: every log sent again
    repaired: int = 0  # rows a full sync found other than the logs say (tampered), put back
    notices: tuple[str, ...] = ()  # lines for the user: row-level security off, a shared role


@dataclass
class _Batch:
    """Logs read and not pushed yet: their rows, and each log's digest once it is sent."""

    rows: list[TeamRow] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)


class TeamSync:
    """The sync of one memory root to one team database."""

    def __init__(self, store: Store, config: MemoryConfig, database: TeamDatabase) -> None:
        self.store = store
        self.config = config
        self.database = database
        self.author = author_name(config.team_author)
        self.notebook = store.root.name or str(store.root)
        exclude = sorted(e.strip().casefold() for e in config.team_exclude if e.strip())
        self.exclude = tuple(exclude)
        target = json.dumps([database.where, self.author, self.exclude])
        self.target = hashlib.sha256(target.encode()).hexdigest()[:16]
        self._state_written = -math.inf  # time.monotonic() of the last state write
        self._folder_id = ""  # the folder's key (team/identity.py), read by each sync
        self._rekeyed = False  # rows of a client of before 0008 re-keyed, once per process
        self._verify = False  # this sync compares rows, not hashes (a full sync)
        self._previous: dict[str, str] = {}  # each log's digest when it was last sent
        self._told = False  # this folder was told that its role is shared (team-sync.json)

    # --- files -------------------------------------------------------------------------------
    @property
    def _folder(self):
        return self.store.index_dir

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One sync per root at a time across processes (two kernels on one folder)."""
        self._folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read_json(self, name: str) -> dict:
        """A state file of ours, or {} when there is none. One that is damaged (a FIFO, a
        device, too large, not JSON, too deep, not our shape) is set aside with one line of
        warning, and the sync starts afresh: the raw logs, not these files, are the truth."""
        path = self._folder / name
        damage: list[str] = []
        data = read_state_file(
            path,
            _SHAPES[name],
            shown=self.store.relative(path),
            read=self.store.read_file,
            report=damage.append,
        )
        if data is not None and name == QUEUE_FILE and not _valid_days(data):
            damage.append(f"{self.store.relative(path)} holds a day that is not a date; ignored")
        for line in damage:
            log.warning("hipo: %s", line)
        if damage and name == QUEUE_FILE:
            return {"all": True}  # which days were queued is unknown: a full sync loses none
        return data or {}

    def _write_json(self, name: str, value: dict) -> None:
        self.store.write_atomic(self._folder / name, json.dumps(value, sort_keys=True))

    def _sent(self) -> dict[str, str]:
        state = self._read_json(STATE_FILE)
        if state.get("target") != self.target or not isinstance(state.get("files"), dict):
            return {}
        return dict(state["files"])

    # --- the queue ---------------------------------------------------------------------------
    def enqueue(self, day: date) -> None:
        """Note that `day`'s log has news for the team (a small file write, nothing more)."""
        with self._locked():
            queue = self._read_json(QUEUE_FILE)
            days = set(queue.get("days") or [])
            days.add(day.isoformat())
            if queue.get("all") or len(days) > MAX_QUEUED_DAYS:
                queue = {"all": True, "attempts": queue.get("attempts", 0)}
            else:
                queue["days"] = sorted(days)
            self._write_json(QUEUE_FILE, queue)

    def queued(self) -> dict:
        return self._read_json(QUEUE_FILE)

    def flush_queue(self) -> SyncReport | None:
        """Push what the queue holds; on success the queue is emptied, else it keeps its days
        with the error and the attempt counted. None when the queue was empty."""
        queue = self.queued()
        if not queue.get("all") and not queue.get("days"):
            return None
        days = None if queue.get("all") else [date.fromisoformat(d) for d in queue["days"]]
        try:
            report = self.sync(days)
        except HipoError as error:
            with self._locked():
                current = self._read_json(QUEUE_FILE)
                current["attempts"] = int(current.get("attempts", 0)) + 1
                current["error"] = str(error)
                self._write_json(QUEUE_FILE, current)
            raise
        with self._locked():  # what was queued while this push ran stays queued
            current = self._read_json(QUEUE_FILE)
            pushed = set(queue.get("days") or [])
            again = set(current.get("days") or [])
            # A day queued again while it was pushed is already in `pushed`: it stays queued
            # when its log changed after the push read it (a checkpoint appended meanwhile).
            left = sorted((again - pushed) | self._changed_since_sent(again & pushed))
            if current.get("all") and not queue.get("all"):
                self._write_json(QUEUE_FILE, {"all": True})
            else:
                self._write_json(QUEUE_FILE, {"days": left} if left else {})
        return report

    def _changed_since_sent(self, days: set[str]) -> set[str]:
        """Those of `days` whose raw log is no longer the version the database was sent."""
        sent = self._sent()
        changed = set()
        for day in days:
            path = self.store.raw_path(date.fromisoformat(day))
            try:
                digest = sha256(self.store.read_bytes(path))
            except (OSError, ParseError):
                continue  # gone, or not a regular file: nothing to send
            if sent.get(self.store.relative(path)) != digest:
                changed.add(day)
        return changed

    # --- the sync ----------------------------------------------------------------------------
    def _owned_expected(self) -> int | None:
        state = self._read_json(STATE_FILE)
        owned = state.get("owned") if state.get("target") == self.target else None
        return owned if isinstance(owned, int) else None

    def sync(self, days: Sequence[date] | None = None, *, full: bool = False) -> SyncReport:
        """Push the raw logs of `days` (all when None) that changed since they were last sent.
        `full` re-sends every log (the database still writes only what it lacks).

        The database is the truth about itself: each sync first counts this folder's rows there
        (which also proves the connection, so a sync that cannot connect fails) and, when the
        count is not what the last sync left (a truncated, dropped or pruned table), sends
        every log again."""
        with self._locked():
            self._previous = self._sent()
            self._told = self._told_shared_role()
            sent = {} if full else dict(self._previous)
            self._verify = full
            self._folder_id = self._own_key()
            expected = self._owned_expected()
            resent = False
            if sent and self.database.owned(self._folder_id) != expected:
                sent, days, resent = {}, None, True
            elif not sent:
                self.database.owned(self._folder_id)  # connects: an error is never "0 sent"
            wanted = self.store.raw_days() if days is None else sorted(set(days))
            counts = dict.fromkeys(("files", "sent_files", "rows", "written", "excluded"), 0)
            counts.update(refused=0, removed=0, claimed=0, repaired=0)
            batch = _Batch()
            self._state_written = -math.inf  # the first push writes it
            with _Pipeline(lambda b: self._push(b, sent, counts)) as pipeline:
                for day in wanted:
                    self._read_log(day, sent, counts, batch)
                    if len(batch.rows) >= BATCH_ROWS:
                        pipeline.submit(batch)
                        batch = _Batch()
                pipeline.submit(batch)
            owned = self.database.owned(self._folder_id)
            notices = self._notices()
            self._write_json(STATE_FILE, self._state(sent, owned=owned))
            counts["excluded"] = max(counts["excluded"], 0)
            return SyncReport(**counts, resent=resent, notices=tuple(notices))

    def _own_key(self) -> str:
        """The folder's key (its id made on its first sync); rows a client of before
        migration 0008 wrote with the plain id are given it, once per process."""
        plain = folder_id(self.store)
        key = folder_key(plain)
        if not self._rekeyed:
            self.database.rekey(plain, key)
            self._rekeyed = True
        return key

    def _told_shared_role(self) -> bool:
        state = self._read_json(STATE_FILE)
        return state.get("target") == self.target and state.get("told_shared_role") is True

    def _state(self, sent: dict[str, str], **more: int) -> dict:
        """team-sync.json's content: what was sent, and whether the shared role was told."""
        told = {"told_shared_role": True} if self._told else {}
        return {"target": self.target, "files": sent, **more, **told}

    def _notices(self) -> list[str]:
        """The lines this sync has for the user: the migrations' (row-level security left off),
        then, once per folder, that other folders write as this role."""
        notices, self.database.notices[:] = list(self.database.notices), []
        if self._told:
            return notices
        role, others = self.database.other_folders(self._folder_id)
        if others:
            notices.append(shared_role_notice(role, others))
            self._told = True
        return notices

    def _read_log(
        self, day: date, sent: dict[str, str], counts: dict[str, int], batch: _Batch
    ) -> None:
        """Add one day's log to `batch` when it changed since it was sent."""
        path = self.store.raw_path(day)
        relative = self.store.relative(path)
        try:
            data = self.store.read_bytes(path)
        except (OSError, ParseError):
            return  # gone, or not a regular file: the store warned
        counts["files"] += 1
        digest = sha256(data)
        if sent.get(relative) == digest:
            return
        rows = rows_of_log(
            data,
            relative=relative,
            day=day.isoformat(),
            author=self.author,
            notebook=self.notebook,
            root=str(self.store.root),
            exclude=self.exclude,
        )
        counts["excluded"] += _checkpoint_count(data) - len(rows)
        batch.rows.extend(rows)
        batch.logs[relative] = digest

    def _push(self, batch: _Batch, sent: dict[str, str], counts: dict[str, int]) -> None:
        """Push the logs of `batch` in one transaction (one COPY), then note them as sent."""
        if not batch.logs:
            return
        files = tuple(batch.logs)
        unchanged = [f for f, digest in batch.logs.items() if self._previous.get(f) == digest]
        result = self.database.push(
            batch.rows,
            folder=self._folder_id,
            files=files,
            verify=self._verify,
            unchanged=unchanged,
        )
        counts["written"] += result.written
        counts["repaired"] += result.repaired
        counts["refused"] += result.refused
        counts["removed"] += result.removed
        counts["claimed"] += result.claimed
        counts["rows"] += len(batch.rows)
        counts["sent_files"] += len(files)
        sent.update(batch.logs)
        if time.monotonic() - self._state_written >= STATE_EVERY_S:
            self._write_json(STATE_FILE, self._state(sent))
            self._state_written = time.monotonic()


class _Pipeline:
    """Batches pushed on one thread while the caller reads and parses the next logs: the
    database merges one batch (a wait on the socket, the GIL released) while Python builds the
    next, so a full sync takes about the longer of the two instead of their sum. One push at a
    time, in order; a failed push raises at the next `submit` or at the end."""

    def __init__(self, push: Callable[[_Batch], None]) -> None:
        self._push = push
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hipo-team-push")
        self._pending: Future[None] | None = None

    def submit(self, batch: _Batch) -> None:
        self.wait()
        self._pending = self._executor.submit(self._push, batch)

    def wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()  # the push's own error, raised here

    def __enter__(self) -> _Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.wait()
        finally:
            self._executor.shutdown(wait=True)


def refusal(count: int) -> str:
    """The one line saying that rows were refused, for the CLI and the background worker."""
    return (
        f"refused {count} checkpoint(s): their ids belong to another teammate's folder "
        "(database role and folder id) in the team database, whose rows are never overwritten"
    )


def shared_role_notice(role: str, others: int) -> str:
    """The one line saying that this role is shared, said once per folder (issue 51)."""
    return (
        f"other memory folders write to the team database as role {clean_name(role)} too "
        f"({others} besides this one): among them a row's owner is its folder id alone "
        "(memory/.team-folder-id, which the database holds only as a keyed hash), since "
        "row-level security tells roles apart, not folders; give each person a database role "
        "of their own"
    )


def _checkpoint_count(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if line.startswith(b"## "))


# --- the background worker (one per process) ------------------------------------------------------

_workers: dict[str, threading.Thread] = {}
_wake: dict[str, threading.Event] = {}
_workers_lock = threading.Lock()


def sync_in_background(sync: TeamSync, day: date | None) -> None:
    """Queue `day` (when given) and make sure a worker is pushing the queue; returns at once."""
    if day is not None:
        try:
            sync.enqueue(day)
        except (OSError, HipoError) as error:
            log.warning("hipo: team sync could not queue %s: %s", day, error)
            return
    key = str(sync.store.root)
    with _workers_lock:
        _wake.setdefault(key, threading.Event()).set()
        if key in _workers:  # a worker is on it; it sees the wake-up before it leaves
            return
        worker = threading.Thread(
            target=_work, args=(sync, key, _wake[key]), name="hipo-team-sync", daemon=True
        )
        _workers[key] = worker
        worker.start()


def _work(sync: TeamSync, key: str, wake: threading.Event) -> None:
    try:
        _push_until_idle(sync, key, wake)
    finally:  # however it ended, the next checkpoint starts a new worker
        with _workers_lock:
            if _workers.get(key) is threading.current_thread():
                del _workers[key]


def _push_until_idle(sync: TeamSync, key: str, wake: threading.Event) -> None:
    """Push the queue until nothing new came in while pushing; after a failure wait and retry
    (RETRY_DELAYS), then leave the queue on disk."""
    failures = 0
    warned = False
    while True:
        wake.clear()
        try:
            report = sync.flush_queue()
            if report is not None and report.refused:  # one line, as `hipo team sync` says it
                log.warning("hipo: team sync %s", refusal(report.refused))
            for notice in report.notices if report is not None else ():
                log.warning("hipo: team sync: %s", notice)
            failures = 0
            with _workers_lock:  # a checkpoint queued from here on starts a new worker
                if not wake.is_set():
                    _workers.pop(key, None)
                    return
        except TeamUnavailable as error:
            if not warned:  # said once per worker, never a traceback
                log.warning("hipo: team sync waits for the database (%s); retried", error)
                warned = True
            if failures >= len(RETRY_DELAYS):
                return  # the queue stays on disk for the next checkpoint or `hipo team sync`
            wake.wait(RETRY_DELAYS[failures])
            failures += 1
        except (HipoError, OSError) as error:
            log.warning("hipo: team sync failed: %s", error)
            return


def wait_for_background(root: str, timeout: float = 30.0) -> bool:
    """Block until the worker of `root` is done (tests, `hipo` before it exits)."""
    with _workers_lock:
        worker = _workers.get(root)
    if worker is None:
        return True
    worker.join(timeout)
    return not worker.is_alive()
