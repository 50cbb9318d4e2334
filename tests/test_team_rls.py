"""Team memory the database itself protects (issue 51), against a real PostgreSQL with login
roles that are not superusers, each doing with plain psycopg what a teammate could do with psql:
row-level security refuses another role's UPDATE, DELETE and forged INSERT; a row rewritten
behind its owner's back is put back by the owner's `hipo team sync --full`; a folder key read
from the database and written into another folder's id file takes nothing; a migration run by
a role that does not own the table says so in one line with the SQL a DBA runs."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.team.link import TeamLink

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402

from hipo_jupyter.team import schema, wait_for_background  # noqa: E402
from hipo_jupyter.team.identity import FOLDER_ID_FILE, folder_key  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DAY = "2026-03-10"
GRANTS = "GRANT SELECT, INSERT, UPDATE, DELETE ON team_checkpoints, team_migrations TO {role}"


def login_role(url: str, name: str) -> tuple[str, str]:
    """A new login role (not a superuser), and the URL that logs in as it."""
    role = f"{name}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
    return role, url.replace("://postgres@", f"://{role}@")


def team_as_dba_sets_it_up(url: str, *names: str, upto: int | None = None) -> list[str]:
    """The tables made by the DBA's role (the migrations run by the database's owner, up to
    `upto` of them), then one login role per teammate, granted what its syncs need."""
    with psycopg.connect(url) as conn:
        if upto is None:
            schema.migrate(conn)
        else:
            conn.execute(
                "CREATE TABLE team_migrations (name text PRIMARY KEY, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for name, sql in schema.MIGRATIONS[:upto]:
                conn.execute(sql)
                conn.execute("INSERT INTO team_migrations (name) VALUES (%s)", (name,))
        conn.commit()
    urls = []
    for name in names:
        role, role_url = login_role(url, name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(GRANTS.format(role=role))
        urls.append(role_url)
    return urls


def team_memory(root: Path, url: str, author: str) -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(team_url=url, team_author=author, team_exclude=(), semantic=False)
    return Memory(root, config=config, team=TeamLink)


def run_hipo(root: Path, *args: str, url: str, author: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HIPO_ROOT", "HIPO_TEAM")}
    env.update(HIPO_TODAY="2026-03-12", HIPO_AUTHOR=author, HIPO_TEAM=url)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def hipo(root: Path, *args: str, url: str, author: str) -> str:
    """`hipo` as a real process that must succeed: its stdout."""
    done = run_hipo(root, *args, url=url, author=author)
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_log(root: Path, *notes: str) -> Path:
    """A raw log of `notes`, each a checkpoint with a fixed id."""
    log = root / "memory" / f"{DAY}.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    blocks = [
        f"## {note} [project]\n<!-- hipo id={DAY}T09:00:0{n}Z-{n:08x} -->\n- outcome: {note}\n"
        for n, note in enumerate(notes)
    ]
    log.write_text("\n".join(blocks), encoding="utf-8")
    return log


def rows(url: str) -> list[tuple]:
    """(id, owner_role, folder_id, title, body, content_hash) of every row, as the DBA sees them."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT id, owner_role, folder_id, title, body, content_hash FROM team_checkpoints "
            "ORDER BY id"
        ).fetchall()


def test_another_role_cannot_update_delete_or_forge_rows(team_url, tmp_path):
    ana_url, bob_url = team_as_dba_sets_it_up(team_url, "ana", "bob")
    ana = team_memory(tmp_path / "ana", ana_url, "ana")
    ana.remember("Launch price [project]", "- decisions: launch price is 49 EUR", on=DAY)
    assert wait_for_background(str(ana.root))  # pushed in the background, as a role of the team
    assert ana.team_sync().refused == 0 and len(rows(team_url)) == 1
    before = rows(team_url)
    ((row_id, ana_role, *_),) = before
    with psycopg.connect(bob_url, autocommit=True) as bob:
        assert bob.execute("SELECT count(*) FROM team_checkpoints").fetchone()[0] == 1  # reads
        for sql in (
            "UPDATE team_checkpoints SET body = 'launch price is 0 EUR'",
            "UPDATE team_checkpoints SET owner_role = current_user",
            "UPDATE team_checkpoints SET folder_id = 'mine', content_hash = 'x'",
            "DELETE FROM team_checkpoints",
        ):
            assert bob.execute(sql).rowcount == 0, sql
        for owner in (ana_role, ""):  # a row claiming to be ana's, or unowned
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
                bob.execute(
                    "INSERT INTO team_checkpoints (id, author, notebook, day, type, title, "
                    "body, source_file, source_line, content_hash, owner_role, folder_id) "
                    "VALUES ('forged', 'ana', 'nb', %s, 'project', 'Launch price', "
                    "'launch price is 0 EUR', 'memory/x.md', 1, 'h', %s, %s)",
                    (DAY, owner, before[0][2]),
                )
    assert rows(team_url) == before
    bob = team_memory(tmp_path / "bob", bob_url, "bob")  # bob's team recall still finds it
    hits = bob.recall("launch price", team=True).hits
    assert [hit.author for hit in hits] == ["ana"] and "49 EUR" in hits[0].snippet
    ana.remember("Launch date [project]", "- decisions: May", on=DAY)
    assert wait_for_background(str(ana.root))
    ana.team_sync()
    assert len(rows(team_url)) == 2 and row_id in {r[0] for r in rows(team_url)}
    ana.close()
    bob.close()


def test_a_legacy_row_is_claimed_once_and_then_is_its_claimers(team_url, tmp_path):
    """A row of before migration 0007 (no owner) may be claimed by one role; afterwards no
    other role may change, take or delete it."""
    ana_url, bob_url = team_as_dba_sets_it_up(team_url, "ana", "bob")
    with psycopg.connect(team_url, autocommit=True) as dba:
        dba.execute(
            "INSERT INTO team_checkpoints (id, author, notebook, day, type, title, body, "
            "source_file, source_line, content_hash, owner_role, folder_id) VALUES "
            "('old', 'ana', 'nb', %s, 'project', 'Old note', 'kept', 'memory/x.md', 1, 'h', "
            "'', '')",
            (DAY,),
        )
    with psycopg.connect(ana_url, autocommit=True) as ana:
        assert ana.execute("DELETE FROM team_checkpoints").rowcount == 0  # unowned: no delete
        claim = "UPDATE team_checkpoints SET owner_role = current_user WHERE id = 'old'"
        assert ana.execute(claim).rowcount == 1
    with psycopg.connect(bob_url, autocommit=True) as bob:
        assert bob.execute(claim).rowcount == 0
        assert bob.execute("UPDATE team_checkpoints SET body = 'gone'").rowcount == 0
        assert bob.execute("DELETE FROM team_checkpoints").rowcount == 0
    ((_, owner, _, _, body, _),) = rows(team_url)
    assert owner == ana_url.split("://")[1].split("@")[0] and body == "kept"


def test_a_tampered_row_is_repaired_by_the_owners_full_sync(team_url, tmp_path):
    """Whoever can write as the owner's role (a teammate sharing it, with psql) rewrites a
    body and leaves the hash, or rewrites both: an ordinary sync trusts the stored hash, the
    owner's `--full` compares what its logs say with every row and puts them back."""
    (ana_url,) = team_as_dba_sets_it_up(team_url, "ana")
    root = tmp_path / "ana"
    write_log(root, "Launch price is 49 EUR", "Launch date is May")
    assert "2 new or updated" in hipo(root, "team", "sync", url=ana_url, author="ana")
    truth = rows(team_url)
    first, second = truth[0][0], truth[1][0]
    with psycopg.connect(ana_url, autocommit=True) as same_role:
        same_role.execute(
            "UPDATE team_checkpoints SET body = 'outcome: Launch price is 0 EUR' WHERE id = %s",
            (first,),
        )
        same_role.execute(
            "UPDATE team_checkpoints SET title = 'Launch date is June', content_hash = 'f00' "
            "WHERE id = %s",
            (second,),
        )
    tampered = rows(team_url)
    assert "0 new or updated" in hipo(root, "team", "sync", url=ana_url, author="ana")
    assert rows(team_url) == tampered  # an ordinary sync trusts what the database says
    out = hipo(root, "team", "sync", "--full", url=ana_url, author="ana")
    assert "0 new or updated" in out and "; 2 repaired" in out, out
    assert rows(team_url) == truth
    out = hipo(root, "team", "sync", "--full", url=ana_url, author="ana")
    assert "repaired" not in out, out  # nothing left to repair
    ana = team_memory(root, ana_url, "ana")
    assert "49 EUR" in ana.recall("launch price", team=True).hits[0].snippet
    ana.close()


def test_a_copied_folder_id_takes_nothing(team_url, tmp_path):
    """One role for the whole team: mallory reads ana's rows, writes the folder value she
    finds there into her own `memory/.team-folder-id`, syncs ana's log edited, then emptied.
    The database holds keys, not ids: she is a folder of her own and takes nothing. Her first
    sync says once that her role is shared."""
    (team_role_url,) = team_as_dba_sets_it_up(team_url, "team")
    ana_root, mallory_root = tmp_path / "ana", tmp_path / "mallory"
    write_log(ana_root, "Launch price is 49 EUR")
    first = hipo(ana_root, "team", "sync", url=team_role_url, author="ana")
    assert "Note:" not in first  # no other folder writes as this role yet
    before = rows(team_url)
    ana_id = (ana_root / "memory" / FOLDER_ID_FILE).read_text(encoding="utf-8").strip()
    with psycopg.connect(team_role_url) as mallory:
        (stored,) = mallory.execute("SELECT DISTINCT folder_id FROM team_checkpoints").fetchone()
    assert stored == folder_key(ana_id) and ana_id not in str(before)
    log = write_log(mallory_root, "Launch price is 0 EUR")
    id_file = mallory_root / "memory" / FOLDER_ID_FILE
    id_file.write_text(stored + "\n", encoding="utf-8")  # a key is no id: refused, one line
    done = run_hipo(mallory_root, "team", "sync", url=team_role_url, author="ana")
    assert done.returncode != 0 and "holds no folder id" in done.stderr and not done.stdout
    assert rows(team_url) == before
    id_file.write_text(stored[:32] + "\n", encoding="utf-8")  # shaped as an id: a stranger
    out = hipo(mallory_root, "team", "sync", url=team_role_url, author="ana")
    result, note = out.splitlines()
    assert "refused 1 checkpoint(s)" in result
    assert note.startswith("Note: other memory folders write") and "as role team_" in note
    log.write_text("", encoding="utf-8")
    out = hipo(mallory_root, "team", "sync", "--full", url=team_role_url, author="ana")
    assert "removed" not in out and len(out.splitlines()) == 1, out  # said once
    assert rows(team_url) == before


def test_a_migration_run_by_a_role_not_owning_the_table_says_so_with_the_dbas_sql(
    team_url, tmp_path
):
    """The tables are the DBA's, made before row-level security: a teammate's client cannot
    enable it, says so in one line with the SQL, and syncs all the same; the DBA runs that SQL,
    and from then on the database refuses other roles' writes and the client is quiet."""
    rls = schema.MIGRATIONS.index(("0009_row_level_security", schema.ROW_SECURITY))
    ana_url, bob_url = team_as_dba_sets_it_up(team_url, "ana", "bob", upto=rls)
    root = tmp_path / "ana"
    write_log(root, "Launch price is 49 EUR")
    out = hipo(root, "team", "sync", url=ana_url, author="ana")
    result, note = out.splitlines()
    assert "1 new or updated" in result
    assert note.startswith("Note: row-level security is not on") and "postgres" in note
    sql = note.split("a superuser: ", 1)[1]
    assert sql.startswith("ALTER TABLE team_checkpoints ENABLE ROW LEVEL SECURITY;")
    with psycopg.connect(team_url, autocommit=True) as dba:
        applied = {r[0] for r in dba.execute("SELECT name FROM team_migrations")}
        assert "0009_row_level_security" not in applied and "0008_folder_keys" in applied
        dba.execute(sql)
        flags = "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s"
        assert dba.execute(flags, ("team_checkpoints",)).fetchone() == (True, True)
    with psycopg.connect(bob_url, autocommit=True) as bob:
        assert bob.execute("UPDATE team_checkpoints SET body = 'x'").rowcount == 0
    write_log(root, "Launch price is 49 EUR", "Launch date is May")
    out = hipo(root, "team", "sync", url=ana_url, author="ana")
    assert "1 new or updated" in out and "Note:" not in out, out


def test_rows_of_before_hold_keys_not_ids_after_the_upgrade(team_url, tmp_path):
    """Rows written by a client of migration 0007 hold the folder's plain id: migration 0008
    turns each into its key, the folder's next sync finds them its own, and a row a 0007
    client writes later with the plain id is re-keyed by the folder's next sync."""
    root = tmp_path / "ana"
    write_log(root, "Launch price is 49 EUR", "Launch date is May")
    plain = uuid.uuid4().hex
    (root / "memory" / FOLDER_ID_FILE).write_text(plain + "\n", encoding="utf-8")
    keys = schema.MIGRATIONS.index(("0008_folder_keys", schema.MIGRATIONS[7][1]))
    (ana_url,) = team_as_dba_sets_it_up(team_url, "ana", upto=keys)
    memory = team_memory(root, ana_url, "ana")
    rows_of_0007 = memory.team_sync()  # with 0007's rows: written under the plain id
    with psycopg.connect(team_url, autocommit=True) as dba:
        dba.execute("UPDATE team_checkpoints SET folder_id = %s", (plain,))
        dba.execute("DELETE FROM team_migrations WHERE name >= '0008'")  # as 0007 left it
    memory.close()
    assert rows_of_0007.written == 2
    with psycopg.connect(ana_url) as conn:  # the upgraded client's migrations, no sync yet
        assert "0008_folder_keys" in schema.migrate(conn)
    assert {r[2] for r in rows(team_url)} == {folder_key(plain)}
    memory = team_memory(root, ana_url, "ana")
    report = memory.team_sync(full=True)
    assert (report.written, report.refused, report.repaired) == (0, 0, 0)
    assert {r[2] for r in rows(team_url)} == {folder_key(plain)}
    with psycopg.connect(team_url, autocommit=True) as dba:  # a 0007 client's later row
        dba.execute(
            "UPDATE team_checkpoints SET folder_id = %s WHERE title LIKE 'Launch d%%'", (plain,)
        )
    memory.close()
    memory = team_memory(root, ana_url, "ana")
    write_log(root, "Launch price is 49 EUR")  # the date's row is this folder's to remove
    assert memory.team_sync().removed == 1
    assert [(r[2], r[3]) for r in rows(team_url)] == [(folder_key(plain), "Launch price is 49 EUR")]
    memory.close()


def test_the_background_sync_says_once_that_a_role_is_shared(team_url, tmp_path, caplog):
    """After `%%remember` the background sync says it as a warning, once per folder."""
    (team_role_url,) = team_as_dba_sets_it_up(team_url, "team")
    write_log(tmp_path / "ana", "Launch price is 49 EUR")
    hipo(tmp_path / "ana", "team", "sync", url=team_role_url, author="ana")
    bo = team_memory(tmp_path / "bo", team_role_url, "bo")
    with caplog.at_level(logging.WARNING, logger="hipo_jupyter.team.sync"):
        for title in ("Churn model", "Churn follow-up"):
            bo.remember(f"{title} [project]", "- outcome: kept", on=DAY)
            assert wait_for_background(str(bo.root))
    said = [r.getMessage() for r in caplog.records if "other memory folders" in r.getMessage()]
    assert len(said) == 1 and "as role team_" in said[0] and "(1 besides this one)" in said[0]
    assert len(rows(team_url)) == 3
    bo.close()
