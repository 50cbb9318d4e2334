"""The team backend a front end hands to `Memory` (issue 16): `hipo_jupyter/team`, PostgreSQL
through psycopg, is imported here only when a team URL is set, and built once per root.

`team_backend(config)` is the one helper every front end that reads the team URL (`hipo`,
`%load_ext hipo`, the server, `hipo mcp`) calls: `Memory(root, config=config,
team=team_backend(config))`. `TeamLink` keeps the engine's contract (`memory.backends.TeamBackend`);
the engine never imports this module or the team package.

Writes never wait for the team: a checkpoint is queued and a thread pushes it; a failure is a
warning, and the queue is pushed again at the next write or session start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

from hipo_jupyter.memory import NO_TEAM, HipoError, MemoryConfig, RecallQuery, RecallResult
from hipo_jupyter.memory.disk import Store

if TYPE_CHECKING:
    from hipo_jupyter.team.sync import SyncReport, TeamSync

log = logging.getLogger("hipo_jupyter.memory.memory")  # the name these warnings always had


class TeamLink:
    """The team database of one memory root, connected on first use."""

    said_keyword_only = False  # once per process: team recall has no vectors

    def __init__(self, store: Store, config: MemoryConfig, today: Callable[[], date]) -> None:
        self.store = store
        self.config = config
        self._today = today
        self._sync: TeamSync | None = None

    def connection(self) -> TeamSync:
        """The team package's sync for this root, built on first use. psycopg is imported
        here, lazily: without a team URL nothing of it is ever loaded."""
        if not self.config.team_url:
            raise HipoError(NO_TEAM)
        if self._sync is None:
            try:
                from hipo_jupyter.team import TeamDatabase, TeamSync
            except ImportError as error:
                raise HipoError(
                    f"team memory needs the team extra (pip install 'hipo-jupyter[team]'): {error}"
                ) from None
            self._sync = TeamSync(self.store, self.config, TeamDatabase(self.config.team_url))
        return self._sync

    def sync(self, *, full: bool = False) -> SyncReport:
        """Push the raw checkpoints to the team database, then whatever waited in the queue."""
        sync = self.connection()
        report = sync.sync(full=full)
        sync.flush_queue()  # whatever waited is in now
        return report

    def recall(
        self,
        request: RecallQuery,
        *,
        semantic_on: bool,
        hidden: Callable[[str, str], bool] | None = None,
    ) -> RecallResult:
        """Recall over the team database, keyword only; says once per process that meaning
        was asked for and cannot be given. `hidden(title, body)`: rows this memory forgot
        (a teammate's copy of a forgotten note) are left out."""
        from hipo_jupyter.team import team_recall

        wants_meaning = request.mode in ("semantic", "hybrid") or (
            request.mode == "auto" and semantic_on
        )
        if wants_meaning and not TeamLink.said_keyword_only:
            TeamLink.said_keyword_only = True
            log.warning(
                "hipo: team recall is keyword only (PostgreSQL full-text search): the team's "
                "vectors would need pgvector, which this team database is not set up with"
            )
        return team_recall(
            self.connection().database,
            request,
            today=self._today(),
            half_life_days=self.config.recency_half_life_days,
            hidden=hidden,
        )

    def after_write(self, day: date | None) -> None:
        """Queue the day for the team and return at once; a thread pushes it (never raises).
        `day` None pushes only what a past session queued. Nothing without a team URL."""
        if not self.config.team_url:
            return
        try:
            from hipo_jupyter.team import sync_in_background

            sync_in_background(self.connection(), day)
        except HipoError as error:
            log.warning("hipo: checkpoint saved, not sent to the team: %s", error)


def team_backend(config: MemoryConfig) -> type[TeamLink] | None:
    """What a front end hands to `Memory(..., team=)` for `config`: the team backend when a
    team URL is set, else None (a memory of one's own; nothing of the team is loaded)."""
    return TeamLink if config.team_url else None
