"""`hipo team sync` on a real PostgreSQL: schema, idempotent pushes, provenance, privacy."""

from __future__ import annotations

from datetime import date

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.team.link import TeamLink

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

from hipo_jupyter.team import (  # noqa: E402
    MIGRATIONS,
    TeamDatabase,
    TeamUnavailable,
    migrate,
    websearch_query,
)
from hipo_jupyter.team.ranking import search_sql  # noqa: E402

DAY = date(2026, 3, 12)


def team_memory(root, url: str, *, author: str = "ana", **config) -> Memory:
    settings = MemoryConfig(team_url=url, team_author=author, **config)
    return Memory(root, config=settings, today=lambda: DAY, team=TeamLink)


def write_some(memory: Memory) -> None:
    memory.remember(
        "Churn analysis [project] #churn",
        "- decisions: churn is driven by the onboarding drop-off\n- outcome: shared",
        on="2026-03-10",
    )
    memory.remember("Likes short answers [user]", "- rule: keep replies short", on="2026-03-11")
    memory.remember(
        "Salary notes [project] #private", "- analysis: numbers nobody else sees", on="2026-03-11"
    )
    memory.remember(
        "Pricing [project] #pricing",
        "- analysis: used the key sk-ant-api03-" + "x" * 40 + "\n- decisions: cut 15%",
        on="2026-03-12",
    )


def rows(url: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT id, author, notebook, day::text, type, title, body, source_file, source_line,"
            " host FROM team_checkpoints ORDER BY day, id"
        ).fetchall()


def test_sync_pushes_raw_checkpoints_with_author_notebook_and_provenance(memory_root, team_url):
    memory = team_memory(memory_root, team_url, team_exclude=("user", "#private"))
    write_some(memory)
    from hipo_jupyter.team import wait_for_background

    wait_for_background(str(memory.root))
    report = memory.team_sync()
    found = rows(team_url)
    titles = [row[5] for row in found]
    assert titles == ["Churn analysis", "Pricing"]
    churn = found[0]
    assert churn[1] == "ana" and churn[2] == memory_root.name
    assert churn[3] == "2026-03-10" and churn[4] == "project"
    assert churn[7] == "memory/2026-03-10.md" and churn[8] >= 1 and churn[9]
    assert report.files == 3
    assert report.excluded == 0 or report.excluded == 2  # background may have sent it already


def test_user_type_stays_local_by_default_and_secrets_never_leave(memory_root, team_url):
    memory = team_memory(memory_root, team_url)
    write_some(memory)
    memory.team_sync()
    found = rows(team_url)
    assert "Likes short answers" not in [row[5] for row in found]
    assert "Salary notes" in [row[5] for row in found]  # #private is not excluded by default
    bodies = "\n".join(row[6] for row in found)
    assert "sk-ant-api03" not in bodies and "[REDACTED" in bodies


def test_redaction_runs_on_logs_written_by_other_tools(memory_root, team_url):
    """A raw log Hipocampus wrote (no redaction, no comment line) is redacted before it leaves."""
    (memory_root / "memory").mkdir()
    (memory_root / "memory" / "2026-03-09.md").write_text(
        "## Deploy notes\n- analysis: password=hunter2hunter2 for the box\n", encoding="utf-8"
    )
    memory = team_memory(memory_root, team_url)
    memory.team_sync()
    (row,) = rows(team_url)
    assert "hunter2" not in row[6]
    assert row[0].startswith("h-")  # an id derived from where it stands


def test_resync_is_idempotent_and_sends_only_changed_logs(memory_root, team_url):
    memory = team_memory(memory_root, team_url, team_exclude=())
    write_some(memory)
    first = memory.team_sync(full=True)
    again = memory.team_sync()
    assert again.sent_files == 0 and again.written == 0
    forced = memory.team_sync(full=True)
    assert forced.rows == first.rows and forced.written == 0
    assert len(rows(team_url)) == 4
    memory.remember("Churn follow-up [project] #churn", "- outcome: fixed", on="2026-03-12")
    from hipo_jupyter.team import wait_for_background

    assert wait_for_background(str(memory.root))  # the background sync sent the changed log
    assert len(rows(team_url)) == 5
    assert memory.team_sync().sent_files == 0


def test_two_folders_syncing_the_same_log_meet_on_the_checkpoint_id(tmp_path, team_url):
    """A copied notebook folder (same ids) adds nothing twice, from another author either."""
    import shutil

    first = tmp_path / "a"
    first.mkdir()
    memory = team_memory(first, team_url, team_exclude=())
    write_some(memory)
    memory.team_sync()
    shutil.copytree(first, tmp_path / "b")
    shutil.rmtree(tmp_path / "b" / "memory" / ".index")
    copy = team_memory(tmp_path / "b", team_url, author="bo", team_exclude=())
    report = copy.team_sync()
    assert report.rows == 4
    assert len(rows(team_url)) == 4


def test_migrations_are_numbered_and_applied_once(team_url):
    import psycopg

    names = [name for name, _ in MIGRATIONS]
    assert names == sorted(names) and names[0].startswith("0001_")
    with psycopg.connect(team_url) as conn:
        assert migrate(conn) == names
        assert migrate(conn) == []
        applied = [r[0] for r in conn.execute("SELECT name FROM team_migrations ORDER BY name")]
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")}
    assert applied == names
    assert "team_checkpoints_search" in indexes


def test_search_sql_filters_are_parameters_never_text():
    sql = search_sql(types=True, since=True, until=False, authors=True)
    assert "websearch_to_tsquery('english', %(query)s)" in sql
    assert "type = ANY(%(types)s)" in sql and "day >= %(since)s" in sql
    assert "day <=" not in sql and "ts_rank_cd" in sql
    assert "ORDER BY day DESC, id LIMIT %(ranked)s" in sql  # a common word ranks a bounded set
    rum = search_sql(types=False, since=False, until=False, authors=False, rum=True)
    assert "ORDER BY rum_day <=> %(newest)s::timestamp LIMIT %(ranked)s" in rum


def test_websearch_query_ors_the_terms_and_drops_stopwords():
    assert websearch_query("what did anyone conclude about churn?") == (
        '"anyone" or "conclude" or "churn"'
    )
    assert websearch_query('-drop "or" OR x').count('"') % 2 == 0


def test_no_team_url_is_a_one_line_error(memory_root):
    memory = Memory(memory_root)
    with pytest.raises(Exception, match="no team database"):
        memory.team_sync()
    with pytest.raises(TeamUnavailable, match="no team URL"):
        TeamDatabase("")


def test_a_full_sync_pushes_logs_in_batches_and_still_removes_what_they_dropped(
    memory_root, team_url, monkeypatch
):
    """Logs are gathered into batches of BATCH_ROWS rows, one transaction each (a full sync of
    years is a few hundred COPYs, not one a day), and a batch removes the owner's rows that any
    of its logs no longer holds."""
    from hipo_jupyter.team import TeamDatabase, sync

    monkeypatch.setattr(sync, "BATCH_ROWS", 3)
    pushes: list[int] = []
    push = TeamDatabase.push

    def counted(self, rows, **options):
        pushes.append(len(rows))
        return push(self, rows, **options)

    monkeypatch.setattr(TeamDatabase, "push", counted)
    memory = team_memory(memory_root, team_url, team_exclude=())
    for day in ("2026-03-09", "2026-03-10", "2026-03-11"):
        for n in (1, 2):
            memory.remember(f"Note {n} of {day} [project]", f"- outcome: done {n}", on=day)
    from hipo_jupyter.team import wait_for_background

    assert wait_for_background(str(memory.root))  # each remember queued a background push
    pushes.clear()
    first = memory.team_sync(full=True)
    assert pushes == [4, 2] and first.sent_files == 3 and first.written == 0
    assert len(rows(team_url)) == 6
    for day in ("2026-03-09", "2026-03-10"):  # a hand edit drops each log's second note
        log = memory_root / "memory" / f"{day}.md"
        text = log.read_text(encoding="utf-8")
        log.write_text(text[: text.index("## Note 2")], encoding="utf-8")
    pushes.clear()
    again = memory.team_sync(full=True)
    assert pushes == [4] and again.removed == 2  # logs of 1, 1 and 2 rows: one batch
    assert sorted(r[5] for r in rows(team_url)) == [
        "Note 1 of 2026-03-09",
        "Note 1 of 2026-03-10",
        "Note 1 of 2026-03-11",
        "Note 2 of 2026-03-11",
    ]


def test_the_stale_row_delete_looks_incoming_ids_up_by_index(team_url):
    """A push removes the owner's rows its logs no longer hold by looking each one up among
    the incoming ids. Without an index on them PostgreSQL (no statistics for a new temp table
    or a new owner) read all of team_incoming for each row: 270-470 ms a batch of 2,000."""
    import psycopg

    from hipo_jupyter.team import database

    with psycopg.connect(team_url) as conn:
        migrate(conn)
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY team_checkpoints (id, author, root, folder_id, notebook, day, type, title, "
                "body, source_file, source_line, content_hash) FROM STDIN"
            ) as copy,
        ):
            for n in range(2000):
                row = (f"r{n}", "ana", "/r", "f1", "nb", DAY, "project", "t", "b", "memory/x.md")
                copy.write_row((*row, n, "h"))
        conn.commit()
        with conn.transaction(force_rollback=True), conn.cursor() as cursor:
            cursor.execute(database._INCOMING)
            with cursor.copy("COPY team_incoming (id) FROM STDIN") as copy:
                for n in range(2000):
                    copy.write_row((f"r{n}",))
            cursor.execute(database._INCOMING_INDEX)
            args = {"folder": "f1", "files": ["memory/x.md"]}
            plan = "\n".join(r[0] for r in cursor.execute("EXPLAIN " + database._STALE, args))
    assert not ("Nested Loop" in plan and "Seq Scan on team_incoming" in plan), plan


def test_batches_are_pushed_on_their_own_thread_and_a_failed_push_fails_the_sync(
    memory_root, team_url, monkeypatch
):
    """The database merges one batch while the next logs are read and parsed (a full sync
    takes the longer of the two, not their sum); a push that fails still fails the sync, and
    the next sync sends what is missing."""
    import threading

    from hipo_jupyter.team import TeamDatabase, sync

    monkeypatch.setattr(sync, "BATCH_ROWS", 2)
    memory = team_memory(memory_root, team_url, team_exclude=())
    days = ("2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11")
    for day in days:
        for n in (1, 2):
            memory.remember(f"Note {n} of {day} [project]", f"- outcome: done {n}", on=day)
    from hipo_jupyter.team import wait_for_background

    assert wait_for_background(str(memory.root))
    with psycopg_connect(team_url) as conn:
        conn.execute("TRUNCATE team_checkpoints")
    threads: list[str] = []
    push = TeamDatabase.push

    def failing_third(self, rows, **options):
        threads.append(threading.current_thread().name)
        if len(threads) == 3:
            raise TeamUnavailable("the team database: connection lost")
        return push(self, rows, **options)

    monkeypatch.setattr(TeamDatabase, "push", failing_third)
    with pytest.raises(TeamUnavailable, match="connection lost"):
        memory.team_sync(full=True)
    assert threads and all(name.startswith("hipo-team-push") for name in threads)
    assert len(rows(team_url)) == 4  # the first two batches
    memory.team_sync()  # the next sync sends what is missing
    assert len(rows(team_url)) == 8


def psycopg_connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_the_owner_count_reads_the_folder_index_alone(team_url):
    """A sync's count of its own rows is an index-only scan of (folder_id, owner_role,
    source_file); the (root, author) indexes it once had, which every written row also
    maintained and nothing reads since rows belong to (role, folder), are gone."""
    import psycopg

    from hipo_jupyter.team import database

    with psycopg.connect(team_url) as conn:
        migrate(conn)
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")}
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + database._OWNED, ("f1",)))
    assert not {"team_checkpoints_owner", "team_checkpoints_source"} & indexes
    assert "Index Only Scan using team_checkpoints_folder" in plan, plan
    # the role is a condition of the index, not a filter of every row of the folder
    # (`current_user` is a `name`: compared in its C collation it matched no index)
    assert "Filter" not in plan and "owner_role" in plan, plan


def test_the_state_file_is_written_after_the_first_push_then_at_most_every_few_seconds(
    memory_root, team_url, monkeypatch
):
    """Each state write is JSON of every log, an fsync and a rename (~12 ms with a few
    thousand logs) on the push's thread: a full sync writes it after its first push, then at
    most every STATE_EVERY_S, and at the end."""
    from hipo_jupyter.team import sync

    monkeypatch.setattr(sync, "BATCH_ROWS", 1)
    memory = team_memory(memory_root, team_url, team_exclude=())
    for day in ("2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11"):
        memory.remember(f"Note of {day} [project]", "- outcome: done", on=day)
    from hipo_jupyter.team import wait_for_background

    assert wait_for_background(str(memory.root))
    writes: list[dict] = []
    write_json = sync.TeamSync._write_json

    def noted(self, name, value):
        if name == sync.STATE_FILE:
            writes.append({key: dict(v) if isinstance(v, dict) else v for key, v in value.items()})
        return write_json(self, name, value)

    monkeypatch.setattr(sync.TeamSync, "_write_json", noted)
    report = memory.team_sync(full=True)
    assert report.sent_files == 4
    assert len(writes) == 2  # after the first of four pushes, and the final one with the count
    assert len(writes[0]["files"]) == 1 and len(writes[1]["files"]) == 4
    assert "owned" in writes[1]
