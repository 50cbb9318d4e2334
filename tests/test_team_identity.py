"""A teammate is an identity (issue 34): team rows belong to (database role, folder id), never to
the author name and root path a client claims. Against a real PostgreSQL: two containers that are
both `jovyan` at `/home/jovyan/work`, a spoofed HIPO_AUTHOR, a second database role, a deleted
index, a damaged id file, and the rows of before migration 0007."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.team.link import TeamLink

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402

from hipo_jupyter.team import schema, wait_for_background  # noqa: E402
from hipo_jupyter.team.identity import FOLDER_ID_FILE  # noqa: E402
from hipo_jupyter.team.rows import rows_of_log  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DAY = "2026-03-10"


def team_memory(root: Path, url: str, author: str = "jovyan") -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(team_url=url, team_author=author, team_exclude=(), semantic=False)
    return Memory(root, config=config, team=TeamLink)


def hipo(root: Path, *args: str, url: str, author: str):
    """`hipo` as a real process, HIPO_AUTHOR set as a user would set it."""
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


def team_rows(url: str) -> dict[str, tuple]:
    """id -> (author, title, body) of every row."""
    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('team_checkpoints')").fetchone()[0] is None:
            return {}  # never migrated: nothing was ever sent
        found = conn.execute("SELECT id, author, title, body FROM team_checkpoints").fetchall()
    return {row[0]: row[1:] for row in found}


class Container:
    """One container's memory folder, mounted at the shared path `work` only while it runs:
    every container is `jovyan` at the same /home/jovyan/work, so two of them take turns."""

    def __init__(self, tmp: Path, name: str, work: Path) -> None:
        self.kept = tmp / f"{name}-volume"
        self.work = work
        self.kept.mkdir()

    def run(self, work: callable) -> object:
        self.kept.rename(self.work)
        try:
            return work(self.work)
        finally:
            self.work.rename(self.kept)


def remember_and_sync(url: str, *notes: str):
    def work(root: Path):
        memory = team_memory(root, url)
        for note in notes:
            memory.remember(f"{note} [project]", f"- outcome: {note} done", on=DAY)
        assert wait_for_background(str(memory.root))
        report = memory.team_sync(full=True)
        memory.close()
        return report

    return work


def test_two_containers_with_the_same_login_and_path_lose_nothing(team_url, tmp_path):
    work = tmp_path / "home-jovyan-work"
    first, second = Container(tmp_path, "a", work), Container(tmp_path, "b", work)
    first.run(remember_and_sync(team_url, "Churn model", "Pricing page"))
    assert len(team_rows(team_url)) == 2
    report = second.run(remember_and_sync(team_url, "Onboarding survey"))  # the same log name
    assert report.removed == 0 and report.refused == 0
    assert len(team_rows(team_url)) == 3
    report = first.run(remember_and_sync(team_url, "Churn follow-up"))
    assert report.removed == 0 and len(team_rows(team_url)) == 4
    titles = sorted(title for _, title, _ in team_rows(team_url).values())
    assert titles == ["Churn follow-up", "Churn model", "Onboarding survey", "Pricing page"]

    def edit_out_everything(root: Path):  # the second empties its log: only its row goes
        (root / "memory" / f"{DAY}.md").write_text("", encoding="utf-8")
        done = hipo(root, "team", "sync", "--full", url=team_url, author="jovyan")
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "1 no longer in the logs removed" in second.run(edit_out_everything)
    assert "Onboarding survey" not in {t for _, t, _ in team_rows(team_url).values()}
    assert len(team_rows(team_url)) == 3


def test_a_spoofed_author_changes_and_deletes_nothing_of_the_colleague(team_url, tmp_path):
    """Mallory sets HIPO_AUTHOR=ana and works at ana's path, with ana's log (ids included)
    edited, then emptied: ana's rows stay as ana wrote them."""
    work = tmp_path / "work"
    ana, mallory = Container(tmp_path, "ana", work), Container(tmp_path, "mallory", work)
    ana.run(remember_and_sync(team_url, "Launch price"))
    before = team_rows(team_url)
    log = (ana.kept / "memory" / f"{DAY}.md").read_text(encoding="utf-8")

    def spoof(root: Path):
        forged = root / "memory" / f"{DAY}.md"
        forged.parent.mkdir(parents=True)
        forged.write_text(log.replace("Launch price done", "Launch price is 0 EUR"), "utf-8")
        edited = hipo(root, "team", "sync", url=team_url, author="jovyan")
        forged.write_text("", encoding="utf-8")
        emptied = hipo(root, "team", "sync", url=team_url, author="jovyan")
        return edited, emptied

    edited, emptied = mallory.run(spoof)
    assert edited.returncode == 0 and emptied.returncode == 0, edited.stderr + emptied.stderr
    assert "refused 1 checkpoint(s)" in edited.stdout and "removed" not in emptied.stdout
    assert team_rows(team_url) == before


def test_another_database_role_cannot_touch_rows_even_from_a_copied_folder(team_url, tmp_path):
    """The folder id is half the identity: a copy of ana's folder (id and all) synced by
    another database role changes and deletes nothing of ana's."""
    ana_root = tmp_path / "ana"
    memory = team_memory(ana_root, team_url, "ana")
    memory.remember("Churn model [project]", "- outcome: kept", on=DAY)
    memory.team_sync()
    memory.close()
    before = team_rows(team_url)
    with psycopg.connect(team_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE bob LOGIN")
        conn.execute("GRANT CREATE ON SCHEMA public TO bob")
        conn.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO bob")
    bob_url = team_url.replace("://postgres@", "://bob@")
    bob_root = tmp_path / "bob"
    shutil.copytree(ana_root, bob_root)
    log = bob_root / "memory" / f"{DAY}.md"
    log.write_text(log.read_text(encoding="utf-8").replace("kept", "dropped"), "utf-8")
    done = hipo(bob_root, "team", "sync", "--full", url=bob_url, author="ana")
    assert done.returncode == 0, done.stderr
    assert "refused 1 checkpoint(s)" in done.stdout
    log.write_text("", encoding="utf-8")
    done = hipo(bob_root, "team", "sync", "--full", url=bob_url, author="ana")
    assert done.returncode == 0 and "removed" not in done.stdout, done.stdout + done.stderr
    assert team_rows(team_url) == before
    with psycopg.connect(team_url) as conn:
        assert conn.execute("SELECT owner_role FROM team_checkpoints").fetchall() == [("postgres",)]


def test_the_identity_lives_beside_the_logs_not_in_the_deletable_index(team_url, memory_root):
    memory = team_memory(memory_root, team_url)
    memory.remember("Churn model [project]", "- outcome: kept", on=DAY)
    assert wait_for_background(str(memory.root))  # its push writes team state under .index
    memory.team_sync()
    id_file = memory_root / "memory" / FOLDER_ID_FILE
    folder_id = id_file.read_text(encoding="utf-8")
    shutil.rmtree(memory_root / "memory" / ".index")
    report = memory.team_sync(full=True)
    assert report.refused == 0 and report.written == 0
    memory.remember("Churn follow-up [project]", "- outcome: edited", on=DAY)
    assert wait_for_background(str(memory.root))
    assert memory.team_sync(full=True).refused == 0 and len(team_rows(team_url)) == 2
    assert id_file.read_text(encoding="utf-8") == folder_id
    memory.close()


@pytest.mark.parametrize("damage", ["garbage", "empty", "fifo", "symlink", "folder"])
def test_a_damaged_folder_id_is_one_line_and_never_replaced(team_url, memory_root, damage):
    memory = Memory(memory_root)  # no team URL: nothing sent yet, no id made
    memory.remember("Churn model [project]", "- outcome: kept", on=DAY)
    memory.close()
    id_file = memory_root / "memory" / FOLDER_ID_FILE
    outside = memory_root.parent / "elsewhere"
    outside.write_text("0" * 32 + "\n", encoding="utf-8")
    if damage == "garbage":
        id_file.write_text("not an id\n", encoding="utf-8")
    elif damage == "empty":
        id_file.write_bytes(b"")
    elif damage == "fifo":
        os.mkfifo(id_file)
    elif damage == "symlink":
        id_file.symlink_to(outside)
    else:
        id_file.mkdir()
    done = hipo(memory_root, "team", "sync", url=team_url, author="jovyan")
    assert done.returncode != 0 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert FOLDER_ID_FILE in done.stderr and "Traceback" not in done.stderr
    assert team_rows(team_url) == {}
    assert id_file.is_symlink() == (damage == "symlink")  # left as it was
    assert outside.read_text(encoding="utf-8") == "0" * 32 + "\n"


def legacy_table(url: str, logs: dict[str, tuple[str, str, Path]]) -> None:
    """The team table as a client of before migration 0007 left it: the first six migrations,
    then each (author, root, folder)'s rows as that client's sync wrote them."""
    with psycopg.connect(url) as conn:
        with conn.transaction():
            conn.execute(
                "CREATE TABLE team_migrations (name text PRIMARY KEY, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for name, sql in schema.MIGRATIONS[:6]:
                assert name < "0007"
                conn.execute(sql)
                conn.execute("INSERT INTO team_migrations (name) VALUES (%s)", (name,))
        for author, root, folder in logs.values():
            data = (folder / "memory" / f"{DAY}.md").read_bytes()
            rows = rows_of_log(
                data,
                relative=f"memory/{DAY}.md",
                day=DAY,
                author=author,
                notebook="work",
                root=root,
                exclude=(),
            )
            for row in rows:
                conn.execute(
                    "INSERT INTO team_checkpoints (id, author, notebook, day, type, title, body, "
                    "root, source_file, source_line, content_hash) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        row.id,
                        row.author,
                        row.notebook,
                        row.day,
                        row.type,
                        row.title,
                        row.body,
                        row.root,
                        row.source_file,
                        row.source_line,
                        row.content_hash,
                    ),
                )
        conn.commit()


def test_migration_0007_hands_old_rows_to_the_folders_whose_logs_hold_them(team_url, tmp_path):
    """Rows of before the migration name no role and no folder: the first sync of a folder
    whose logs hold them, under their own author and root, claims them; another folder at the
    same path, as the same author, neither claims nor deletes them."""
    assert schema.MIGRATIONS[6][0] == "0007_owner_identity"  # legacy_table stops before it
    work = tmp_path / "work"
    first, second = Container(tmp_path, "a", work), Container(tmp_path, "b", work)

    def write(*titles: str):
        def work_on(root: Path):
            log = root / "memory" / f"{DAY}.md"
            log.parent.mkdir(parents=True, exist_ok=True)
            blocks = [
                f"## {t} [project]\n<!-- hipo id={DAY}T09:00:0{n}Z-{abs(hash(t)) % 10**8:08d} -->\n"
                f"- outcome: {t}\n"
                for n, t in enumerate(titles)
            ]
            log.write_text("\n".join(blocks), encoding="utf-8")

        return work_on

    first.run(write("Churn model", "Pricing page"))
    second.run(write("Onboarding survey"))
    legacy_table(
        team_url,
        {
            "a": ("jovyan", str(work.absolute()), first.kept),
            "b": ("jovyan", str(work.absolute()), second.kept),
        },
    )
    before = team_rows(team_url)
    assert len(before) == 3

    def sync(root: Path):
        memory = team_memory(root, team_url)
        report = memory.team_sync()
        memory.close()
        return report

    report = first.run(sync)
    assert report.claimed == 2 and report.refused == 0 and report.removed == 0
    assert team_rows(team_url) == before
    with psycopg.connect(team_url) as conn:
        waiting = conn.execute("SELECT title FROM team_checkpoints WHERE folder_id = ''").fetchall()
    assert waiting == [("Onboarding survey",)]
    report = second.run(sync)
    assert report.claimed == 1 and report.refused == 0 and report.removed == 0
    assert team_rows(team_url) == before

    def empty_and_sync(root: Path):
        (root / "memory" / f"{DAY}.md").write_text("", encoding="utf-8")
        return sync(root)

    assert first.run(empty_and_sync).removed == 2  # its own, once claimed, are its to delete
    assert [t for _, t, _ in team_rows(team_url).values()] == ["Onboarding survey"]


def test_a_folder_id_is_made_before_the_folders_first_write(tmp_path: Path) -> None:
    """A background push may run before `hipo remember` has made a new folder and its memory/: the
    id is made with its folder, not refused with "No such file or directory"."""
    from hipo_jupyter.memory.disk import Store
    from hipo_jupyter.team.identity import folder_id, read_folder_id

    store = Store(tmp_path / "new-folder")  # not made yet: the write makes it
    made = folder_id(store)
    assert read_folder_id(store) == made
    assert (tmp_path / "new-folder" / "memory" / FOLDER_ID_FILE).is_file()
