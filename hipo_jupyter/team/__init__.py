"""Team memory on PostgreSQL (issue 16): many notebooks' raw checkpoints in one searchable
database. Loaded only when a team URL is set; needs the `team` extra (psycopg 3)."""

from .database import TeamDatabase, TeamRow, TeamUnavailable, describe
from .recall import TeamIndex, team_recall, websearch_query
from .rows import author_name, is_excluded, rows_of_log
from .schema import MIGRATIONS, migrate
from .sync import SyncReport, TeamSync, sync_in_background, wait_for_background

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
