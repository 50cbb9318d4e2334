"""What the engine asks of a backend handed in from outside: the team database (issue 16).

The engine knows this contract, never a backend: `Memory(..., team=factory)` calls
`factory(store, config, today)` once and talks to what it returns. The front end that read the
team URL (`hipo`, `%load_ext hipo`, the server, `hipo mcp`) hands the factory in
(`hipo_jupyter.team.link.team_backend`); PostgreSQL and psycopg live behind it, in
`hipo_jupyter/team`, and a `Memory` without one never loads them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Protocol

from .config import MemoryConfig
from .disk.store import Store
from .errors import HipoError
from .recall.ranking import RecallResult
from .requests import RecallQuery

NO_TEAM = "no team database: set Hipo.team_url, $HIPO_TEAM or --team-url URL"


class TeamBackend(Protocol):
    """The team's memory as the engine uses it: searched, pushed to, told of each write."""

    def sync(self, *, full: bool = False) -> object:
        """Push the raw checkpoints to the team (`hipo team sync`); returns the backend's
        report, which the front end that asked prints."""

    def recall(
        self,
        request: RecallQuery,
        *,
        semantic_on: bool,
        hidden: Callable[[str, str], bool] | None = None,
    ) -> RecallResult:
        """Recall over the team's rows, as `RecallResult` (each hit naming its author);
        `semantic_on`: the local memory has vectors, so "auto" asked for meaning too.
        `hidden` (a function of a row's title and body: `ForgetLedger.hides_copy`), given only
        when this memory forgot something: rows it holds true are left out (a teammate's copy
        of a forgotten note). A backend that takes no `hidden` still serves a memory that
        forgot nothing: it is not passed then."""

    def after_write(self, day: date | None) -> None:
        """Queue `day` for the team and return at once (never raises); None: only what a
        past session left queued."""


TeamFactory = Callable[[Store, MemoryConfig, Callable[[], date]], TeamBackend]
"""factory(store, config, today) -> the team backend of one memory root."""


class NoTeam:
    """The backend of a memory without a team: every question about the team is one line."""

    def __init__(self, store: Store, config: MemoryConfig, today: Callable[[], date]) -> None:
        self.config = config

    def _refuse(self) -> HipoError:
        if self.config.team_url:  # a URL in the config, but no front end handed a backend in
            return HipoError(
                "no team backend: a team URL is set but this Memory was opened without one "
                "(Memory(..., team=hipo_jupyter.team.link.team_backend(config)))"
            )
        return HipoError(NO_TEAM)

    def sync(self, *, full: bool = False) -> object:
        raise self._refuse()

    def recall(
        self,
        request: RecallQuery,
        *,
        semantic_on: bool,
        hidden: Callable[[str, str], bool] | None = None,
    ) -> RecallResult:
        raise self._refuse()

    def after_write(self, day: date | None) -> None:
        return None
