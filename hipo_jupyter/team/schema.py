"""The team database's schema, as numbered migrations applied in order and never edited.

One table holds the team's raw checkpoints, one row per checkpoint id:

- `team_checkpoints`: `id` (the checkpoint's own stable id, the primary key: a re-sync or two
  machines syncing the same log at once meet on it and add nothing), its owner (`owner_role`,
  the database role that wrote it, and `folder_id`, the key of the memory folder it came
  from, never its id (0008): only they may change or delete it, migration 0007, and the
  database itself refuses another role's writes, row-level security, 0009), `author`,
  `notebook`, `day`,
  `type`, `title`, `body`, `tags` (comma-joined), provenance (`host`, `root`, `source_file`,
  `source_line`, `cell`), `content_hash` (an edited checkpoint is updated, an unchanged one not
  written again) and `synced_at`; `search`, a generated `tsvector` (title weighted A, tags B,
  body D, English stemming) with a GIN index that also holds each row's week (`WEEK`, for
  searches of recent weeks first), and an index on `day` for the date filters.
- `team_migrations`: the names of the migrations applied.

A database whose `team_checkpoints` is gone (DROP TABLE) has every migration applied again,
whatever `team_migrations` says, so the table the migrations build is always there.

Migrations run under a transaction-scoped advisory lock, so eight processes opening a new team
database at once apply each migration exactly once.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

MAX_NAME = 100  # characters of an author or notebook name kept
# A row's week as a one-lexeme tsvector ('w1366' for the seven days from 2026-03-09): weeks of
# seven days counted from Monday WEEK_EPOCH, which its days after the epoch round down to.
WEEK_EPOCH = "2000-01-03"
WEEK = f"array_to_tsvector(ARRAY['w' || ((day - DATE '{WEEK_EPOCH}') / 7)::text])"

# A folder's key, as rows hold it (migration 0008): SHA-256 of a fixed prefix and the folder's
# id, 64 hex digits. The id is 128 random bits that never leave the folder, so the key gives
# nothing to copy; the same function in Python is `identity.folder_key`. A key is never taken
# for an id: ids are 32 hex digits, so a key written into an id file is refused as no id, and
# the re-keying of a 0007 client's rows (`database._REKEY`) matches no key.
FOLDER_KEY_PREFIX = "hipo-team-folder\x1f"
FOLDER_KEY_SQL = "encode(sha256(convert_to('hipo-team-folder' || chr(31) || {id}, 'UTF8')), 'hex')"
OWN = "owner_role = current_user::text"
ROW_SECURITY = f"""
ALTER TABLE team_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE team_checkpoints FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS team_read ON team_checkpoints;
CREATE POLICY team_read ON team_checkpoints FOR SELECT USING (true);
DROP POLICY IF EXISTS team_insert ON team_checkpoints;
CREATE POLICY team_insert ON team_checkpoints FOR INSERT WITH CHECK ({OWN});
DROP POLICY IF EXISTS team_update ON team_checkpoints;
CREATE POLICY team_update ON team_checkpoints FOR UPDATE
    USING ({OWN} OR owner_role = '') WITH CHECK ({OWN});
DROP POLICY IF EXISTS team_delete ON team_checkpoints;
CREATE POLICY team_delete ON team_checkpoints FOR DELETE USING ({OWN});
"""
ROW_SECURITY_MIGRATION = "0009_row_level_security"

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_team_checkpoints",
        """
        CREATE TABLE team_checkpoints (
            id text PRIMARY KEY,
            author text NOT NULL,
            notebook text NOT NULL,
            day date NOT NULL,
            type text NOT NULL,
            title text NOT NULL,
            body text NOT NULL,
            tags text NOT NULL DEFAULT '',
            host text NOT NULL DEFAULT '',
            root text NOT NULL DEFAULT '',
            source_file text NOT NULL,
            source_line integer NOT NULL,
            cell text,
            content_hash text NOT NULL,
            synced_at timestamptz NOT NULL DEFAULT now(),
            search tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', title), 'A')
                || setweight(to_tsvector('english', replace(tags, ',', ' ')), 'B')
                || setweight(to_tsvector('english', body), 'D')
            ) STORED
        );
        CREATE INDEX team_checkpoints_search ON team_checkpoints USING gin (search);
        CREATE INDEX team_checkpoints_day ON team_checkpoints (day);
        """,
    ),
    (
        "0002_author_index",
        "CREATE INDEX team_checkpoints_author ON team_checkpoints (author, notebook);",
    ),
    (
        # Each sync counts its own rows (root, author) to notice a truncated or pruned table.
        "0003_owner_index",
        "CREATE INDEX team_checkpoints_owner ON team_checkpoints (root, author);",
    ),
    (
        # A push removes the owner's rows its logs no longer hold: found by log, not by
        # reading every row of the owner (a full sync of a long memory pushes many logs).
        "0004_source_index",
        "CREATE INDEX team_checkpoints_source ON team_checkpoints (root, author, source_file);",
    ),
    (
        # The full-text index also knows each row's week (WEEK, one lexeme), so a search for
        # the newest matches of a word asks the index for its matches of the last weeks, and
        # the GIN scan skips the others, instead of ANDing a bitmap of every match with one of
        # months of the day index (team/ranking.py). A search of `search` alone uses it as
        # it used the one-column index it replaces.
        "0005_search_week_index",
        f"""
        DROP INDEX IF EXISTS team_checkpoints_search;
        CREATE INDEX team_checkpoints_search ON team_checkpoints USING gin (search, ({WEEK}));
        """,
    ),
    (
        # (root, author) is the prefix of 0004's (root, author, source_file): that index
        # answers a sync's count of its own rows as well, and every row written maintained
        # both (5% of a full sync's time in the database).
        "0006_drop_owner_index",
        "DROP INDEX IF EXISTS team_checkpoints_owner;",
    ),
    (
        # A teammate is an identity (issue 34): a row belongs to the database role that wrote
        # it (`owner_role`, the server's `current_user`, never a value the client claims) and
        # the memory folder it came from (`folder_id`, the folder's random id, team/identity.py).
        # Author and root stay as what they always were to readers, a name and a path shown
        # with each hit, and decide nothing: every jovyan at /home/jovyan/work is one author
        # and one root, and HIPO_AUTHOR names anyone.
        #
        # Rows written before this migration have neither. PostgreSQL keeps no record of the
        # role that inserted a row, and no folder had an id, so they get `owner_role` '' and
        # `folder_id` '' (legacy): the first sync that sends a legacy row's id under the row's
        # own (author, root) claims it for its role and folder (`database._CLAIM`), which is
        # the ownership those rows had until now, handed over once, row by row: a folder
        # claims only the rows its own logs hold, so two jovyan containers each claim their
        # own and neither deletes the other's. A legacy row that no log sends again stays,
        # found by search and deleted by no sync. A client of before this migration still
        # writes legacy rows (its role, the column's default, and folder ''): the same claim
        # hands them over. The (folder_id, owner_role, source_file) index answers a sync's
        # count of its own rows and its stale-row delete, as 0004's index did for (root,
        # author), which nothing reads any more and every write maintained: dropped.
        "0007_owner_identity",
        """
        ALTER TABLE team_checkpoints ADD COLUMN owner_role text NOT NULL DEFAULT '';
        ALTER TABLE team_checkpoints ADD COLUMN folder_id text NOT NULL DEFAULT '';
        ALTER TABLE team_checkpoints ALTER COLUMN owner_role SET DEFAULT current_user;
        CREATE INDEX team_checkpoints_folder
            ON team_checkpoints (folder_id, owner_role, source_file);
        DROP INDEX IF EXISTS team_checkpoints_source;
        """,
    ),
    (
        # Folder ids are not readable by other folders (issue 51): a row holds the folder's
        # key (`folder_key`: a hash of its id, which is 128 random bits kept in the folder),
        # never the id, so an id read with SELECT and written into another folder's
        # `memory/.team-folder-id` is the key of nothing. The rows of before hold the ids
        # themselves: each becomes its key here, in the database, so no id stays readable
        # until its folder syncs again (a row a 0007 client writes later is re-keyed by its
        # folder's next sync, `database._REKEY`). An id read before this upgrade is still
        # its folder's id: with one role per person the role keeps it apart anyway.
        "0008_folder_keys",
        f"UPDATE team_checkpoints SET folder_id = {FOLDER_KEY_SQL.format(id='folder_id')} "
        "WHERE length(folder_id) = 32",
    ),
    (
        # The database itself protects rows (issue 51), not only the queries hipo sends:
        # every teammate's role needs SELECT, INSERT, UPDATE and DELETE for its own syncs,
        # and with psql it could otherwise rewrite or delete anyone's rows. ROW_SECURITY:
        # reading is open to the team, a role writes only rows whose `owner_role` is itself,
        # and a legacy row (owner_role '', before 0007) may be claimed once. Only the table's
        # owner may enable it: a client of another role leaves this migration unapplied and
        # says so, with the SQL for a DBA (`rls_notice`); its syncs work as before.
        "0009_row_level_security",
        ROW_SECURITY,
    ),
]

# Any constant: the advisory lock that serialises migrations across processes.
MIGRATION_LOCK = 7_316_016


def migrate(conn: Any, notices: list[str] | None = None) -> list[str]:
    """Apply the migrations this database lacks, in order; return their names. Row-level
    security needs the table's owner: run by another role it is left unapplied (tried again by
    the next process) and one line saying so, with the SQL for a DBA, goes to `notices`."""
    applied: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        # Made only where it is missing: CREATE TABLE IF NOT EXISTS needs the right to create
        # in the schema even when the table is there, which a teammate's role need not have.
        if conn.execute("SELECT to_regclass('team_migrations') IS NULL").fetchone()[0]:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS team_migrations ("
                "name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
        done = {row[0] for row in conn.execute("SELECT name FROM team_migrations")}
        missing = conn.execute("SELECT to_regclass('team_checkpoints') IS NULL").fetchone()[0]
        if missing and done:  # dropped: the table is rebuilt whatever the log of migrations says
            conn.execute("DELETE FROM team_migrations")
            done = set()
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            if name == ROW_SECURITY_MIGRATION and (owner := _other_owner(conn)):
                if notices is not None:
                    notices.append(rls_notice(owner))
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO team_migrations (name) VALUES (%s)", (name,))
            applied.append(name)
    return applied


def _other_owner(conn: Any) -> str:
    """The owner of team_checkpoints when it is not this connection's role (nor one it is a
    member of, nor a superuser's): '' when this role may alter the table."""
    owner, may = conn.execute(
        "SELECT pg_get_userbyid(relowner), pg_has_role(relowner, 'USAGE') FROM pg_class "
        "WHERE oid = 'team_checkpoints'::regclass"
    ).fetchone()
    return "" if may else owner


def rls_notice(owner: str) -> str:
    """The one line a client that cannot enable row-level security says: what is missing and
    the SQL a DBA runs (as the table's owner or a superuser), which also records the migration."""
    sql = " ".join(ROW_SECURITY.split()) + (
        f" INSERT INTO team_migrations (name) VALUES ('{ROW_SECURITY_MIGRATION}') "
        "ON CONFLICT DO NOTHING;"
    )
    return (
        "row-level security is not on in the team database: only the owner of "
        f"team_checkpoints ({clean_name(owner)}) can turn it on, and until then rows are "
        f"protected only by the queries hipo sends; a DBA runs, as that role or a superuser: {sql}"
    )


_SPACES = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)  # a sync cleans the same few names for each of its rows
def clean_name(name: str) -> str:
    """An author or notebook name as data: one line, no control or format characters (no
    newline, escape sequence or bidi override to forge another row in a listing), at most
    MAX_NAME characters."""
    kept = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in str(name)
    )
    return _SPACES.sub(" ", kept).strip()[:MAX_NAME] or "unknown"


# rum orders by distance on timestamps, not dates (a date is cast, and the index not used):
# the day is mirrored as a generated timestamp column stored beside each lexeme's postings.
RUM_DAY = (
    "ALTER TABLE team_checkpoints ADD COLUMN IF NOT EXISTS rum_day timestamp "
    "GENERATED ALWAYS AS (day::timestamp) STORED"
)
RUM_INDEX = (
    "CREATE INDEX IF NOT EXISTS team_checkpoints_rum ON team_checkpoints "
    "USING rum (search rum_tsvector_addon_ops, rum_day) WITH (attach = 'rum_day', to = 'search')"
)


def enable_rum(conn: Any) -> bool:
    """Build the `rum` index (matches handed over newest first, team/ranking.py) where the
    extension is installed (Debian: postgresql-15-rum); False, nothing changed, where not.
    Not a migration: a team without the extension keeps working, CREATE EXTENSION rum needs
    a superuser (rum is not a trusted extension), and building it on a large table takes
    minutes: the operator's choice (`TeamDatabase.enable_rum()`, or RUM_INDEX in psql)."""
    available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'rum'").fetchone()
    if not available:
        return False
    with conn.transaction():
        conn.execute("CREATE EXTENSION IF NOT EXISTS rum")
        conn.execute(RUM_DAY)
        conn.execute(RUM_INDEX)
        conn.execute("ANALYZE team_checkpoints")  # the new column's statistics, for the planner
    return True
