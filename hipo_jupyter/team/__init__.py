"""Team memory on PostgreSQL (issue 16): many notebooks' raw checkpoints in one searchable
database. Loaded only when a team URL is set; needs the `team` extra (psycopg 3).

Importing this package loads nothing: each name below loads its module (and psycopg) on first
use, so a front end may import a light module of it without the team extra installed.

- `link.py` the backend the front ends hand to `Memory` (`team_backend`), built once per root,
  the rest of this package loaded only when a team URL is set; `url.py` the URL as it may be
  shown, the password masked (no psycopg needed).
- `database.py` the connection pool, upserts and full-text search (psycopg is imported here);
  `connect.py` reaching the database, failures in one line without the password; `schema.py`
  the numbered migrations; `ranking.py` search at a million checkpoints.
- `sync.py` `hipo team sync` and the background sync; `rows.py` a notebook's raw checkpoints
  as team rows, filtered and redacted; `identity.py` who a folder is to the database.
- `recall.py` team recall, ranked as local recall ranks.

May import: the engine's faces and psycopg (in `database.py` and `connect.py` only). Not
`ipython/`, `cli/`, `mcp/`, `server/` or `llm/`: the front ends import this, never the reverse.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .database import TeamDatabase, TeamRow, TeamUnavailable, describe
    from .recall import TeamIndex, team_recall, websearch_query
    from .rows import author_name, is_excluded, rows_of_log
    from .schema import MIGRATIONS, migrate
    from .sync import SyncReport, TeamSync, sync_in_background, wait_for_background

# Each public name -> the module of this package that defines it.
_HOMES = {
    "TeamDatabase": "database",
    "TeamRow": "database",
    "TeamUnavailable": "database",
    "describe": "database",
    "TeamIndex": "recall",
    "team_recall": "recall",
    "websearch_query": "recall",
    "author_name": "rows",
    "is_excluded": "rows",
    "rows_of_log": "rows",
    "MIGRATIONS": "schema",
    "migrate": "schema",
    "SyncReport": "sync",
    "TeamSync": "sync",
    "sync_in_background": "sync",
    "wait_for_background": "sync",
}

__all__ = [
    "MIGRATIONS",
    "SyncReport",
    "TeamDatabase",
    "TeamIndex",
    "TeamRow",
    "TeamSync",
    "TeamUnavailable",
    "author_name",
    "describe",
    "is_excluded",
    "migrate",
    "rows_of_log",
    "sync_in_background",
    "team_recall",
    "wait_for_background",
    "websearch_query",
]


def __getattr__(name: str) -> Any:
    """A public name, its module (and psycopg) imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
