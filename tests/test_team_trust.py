"""Team memory against a real PostgreSQL with password auth (issue 26): no teammate can
overwrite another's rows, repeated ids stay apart, the database is trusted about itself, and
every failure is one line with its cause and never the password."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.team.link import TeamLink

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402
from postgres_helpers import SECURE_PASSWORD  # noqa: E402

from hipo_jupyter.team import TeamDatabase, TeamUnavailable, wait_for_background  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-12"


def team_memory(root: Path, url: str, author: str) -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(team_url=url, team_author=author, semantic=False)
    return Memory(root, config=config, team=TeamLink)


def hipo(root: Path, *args: str, url: str | None = None, author: str = "ana"):
    """`hipo` as a real process, its environment holding no team URL but the one given."""
    env = {k: v for k, v in os.environ.items() if k not in ("HIPO_ROOT", "HIPO_TEAM")}
    env.update(HIPO_TODAY=TODAY, HIPO_AUTHOR=author)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if url is not None:
        env["HIPO_TEAM"] = url
    return subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def rows(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT id, author, body FROM team_checkpoints ORDER BY id").fetchall()


def test_another_root_can_neither_overwrite_nor_delete_a_row(secure_url, tmp_path):
    ana = team_memory(tmp_path / "ana", secure_url, "ana")
    ana.remember("Launch price [project]", "- decisions: launch price is 49 EUR", on="2026-03-10")
    ana.team_sync()
    ((ana_id, _, body),) = rows(secure_url)
    # bob's log holds ana's checkpoint id with other text, synced under bob's name
    log = (tmp_path / "ana" / "memory" / "2026-03-10.md").read_text(encoding="utf-8")
    bob_log = tmp_path / "bob" / "memory" / "2026-03-10.md"
    bob_log.parent.mkdir(parents=True)
    bob_log.write_text(log.replace("49 EUR", "0 EUR"), encoding="utf-8")
    done = hipo(tmp_path / "bob", "team", "sync", url=secure_url, author="bob")
    assert done.returncode == 0, done.stderr
    result, note = done.stdout.splitlines()  # the result, then (once) that a role is shared
    assert "refused 1 checkpoint(s)" in result and "as role postgres too" in note
    assert rows(secure_url) == [(ana_id, "ana", body)] and "49 EUR" in body
    bob_log.write_text("", encoding="utf-8")  # bob empties the log: ana's row stays
    assert hipo(tmp_path / "bob", "team", "sync", url=secure_url, author="bob").returncode == 0
    assert rows(secure_url) == [(ana_id, "ana", body)]
    ana.remember("Launch date [project]", "- decisions: May", on="2026-03-10")
    ana.team_sync()  # ana's own sync still updates her log's rows
    assert len(rows(secure_url)) == 2
    ana.close()


def test_ids_repeated_in_one_log_stay_separate_rows(secure_url, tmp_path):
    root = tmp_path / "ana"
    log = root / "memory" / "2026-03-10.md"
    log.parent.mkdir(parents=True)
    block = "## {title} [project]\n<!-- hipo id=2026-03-10T09:00:00Z-deadbeef -->\n- note: {n}\n"
    log.write_text(
        block.format(title="First", n=1) + "\n" + block.format(title="Copy", n=2),
        encoding="utf-8",
    )
    memory = team_memory(root, secure_url, "ana")
    report = memory.team_sync()
    assert report.rows == 2 and report.written == 2
    found = rows(secure_url)
    assert [r[0] for r in found] == [
        "2026-03-10T09:00:00Z-deadbeef",
        "2026-03-10T09:00:00Z-deadbeef#2",
    ]
    memory.close()


@pytest.mark.parametrize("damage", ["TRUNCATE team_checkpoints", "DROP TABLE team_checkpoints"])
def test_a_damaged_table_is_refilled_by_the_next_plain_sync(secure_url, tmp_path, damage):
    root = tmp_path / "ana"
    memory = team_memory(root, secure_url, "ana")
    memory.remember("Churn [project]", "- outcome: onboarding", on="2026-03-10")
    memory.remember("Pricing [project]", "- outcome: 15% off", on="2026-03-11")
    memory.team_sync()
    assert wait_for_background(str(memory.root)) and len(rows(secure_url)) == 2
    with psycopg.connect(secure_url, autocommit=True) as conn:
        conn.execute(damage)
    report = memory.team_sync()  # the same process, its schema thought up to date
    assert report.resent and report.written == 2
    assert len(rows(secure_url)) == 2
    with psycopg.connect(secure_url, autocommit=True) as conn:
        conn.execute(damage)
    done = hipo(root, "team", "sync", url=secure_url)  # a new process, nothing new to send
    assert done.returncode == 0, done.stderr
    assert "2 new or updated" in done.stdout and "sent again" in done.stdout
    assert len(rows(secure_url)) == 2
    memory.close()


def silent_server() -> socket.socket:
    """A port that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server


def failing_urls(cluster) -> dict[str, tuple[str, str]]:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    good = cluster.url()
    return {
        "password": (
            good.replace(SECURE_PASSWORD, "wrong-" + SECURE_PASSWORD),
            "password authentication failed for user postgres",
        ),
        "database": (cluster.url("no_such_team"), "database no_such_team does not exist"),
        "closed": (
            f"postgresql://postgres:{SECURE_PASSWORD}@127.0.0.1:{port}/team",
            f"no server at 127.0.0.1:{port} (connection refused)",
        ),
    }


@pytest.mark.parametrize("case", ["password", "database", "closed", "silent"])
def test_a_failing_sync_says_its_cause_in_one_line_without_the_password(
    secure_cluster, tmp_path, case
):
    server = silent_server() if case == "silent" else None
    try:
        if server is not None:
            port = server.getsockname()[1]
            url = f"postgresql://postgres:{SECURE_PASSWORD}@127.0.0.1:{port}/team"
            reason = "no answer within 5 s"
        else:
            url, reason = failing_urls(secure_cluster)[case]
        root = tmp_path / "ana"
        (root / "memory").mkdir(parents=True)
        began = time.monotonic()
        with pytest.raises(TeamUnavailable) as raised:
            TeamDatabase(url).count()
        assert time.monotonic() - began < 6
        assert reason in str(raised.value) and SECURE_PASSWORD not in str(raised.value)
        done = hipo(root, "team", "sync", url=url)  # nothing to send: still not a success
    finally:
        if server is not None:
            server.close()
    assert done.returncode != 0 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert reason in done.stderr and SECURE_PASSWORD not in done.stderr


def test_a_malformed_url_shows_no_password_in_output_cell_or_status(tmp_path, monkeypatch):
    from claude_helpers import RaisingShell
    from traitlets.config import Config

    import hipo_jupyter.ipython as hipo_ipython

    url = f"postgresql://postgres:{SECURE_PASSWORD}@127.0.0.1:notaport/team"
    root = tmp_path / "ana"
    (root / "memory").mkdir(parents=True)
    done = hipo(root, "recall", "churn", "--team", url=url)
    assert done.returncode != 0 and SECURE_PASSWORD not in done.stdout + done.stderr
    assert "does not parse" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    status = hipo(root, "status", url=url)
    assert "postgresql://postgres:***@127.0.0.1:notaport/team" in status.stdout
    assert SECURE_PASSWORD not in status.stdout + status.stderr
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    try:
        shell.run_cell(f"%config Hipo.root = {str(root)!r}")
        shell.run_cell(f"%config Hipo.team_url = {url!r}")
        shell.run_cell("%load_ext hipo")
        with pytest.raises(Exception) as raised:
            shell.run_cell("%recall churn --team")
    finally:
        hipo_ipython.unload_ipython_extension(shell)
    assert "does not parse" in str(raised.value) and SECURE_PASSWORD not in str(raised.value)


def test_an_author_with_control_characters_is_stored_as_one_clean_line(secure_url, tmp_path):
    root = tmp_path / "ana"
    memory = team_memory(root, secure_url, "ana\nbob: forged row\x1b[31m\u202e")
    memory.remember("Churn [project]", "- outcome: onboarding", on="2026-03-10")
    memory.team_sync()
    ((_, author, _),) = rows(secure_url)
    assert author == "ana bob: forged row [31m"
    assert not re.search(r"[\x00-\x1f\x7f\u202e]", author)
    memory.close()


@pytest.mark.parametrize("case", ["wrong password", "malformed"])
async def test_the_server_log_and_answer_never_show_the_password(
    jp_fetch, jp_root_dir, secure_cluster, monkeypatch, caplog, capfd, case
):
    from tornado.httpclient import HTTPClientError

    (jp_root_dir / "project" / "memory").mkdir(parents=True)
    if case == "malformed":
        url = f"postgresql://postgres:{SECURE_PASSWORD}@127.0.0.1:notaport/team"
        reason = "does not parse"
    else:
        url = secure_cluster.url().replace(SECURE_PASSWORD, SECURE_PASSWORD + "-typo")
        reason = "password authentication failed for user postgres"
    monkeypatch.setenv("HIPO_TEAM", url)  # the server's memories read it when first built
    with caplog.at_level("DEBUG"), pytest.raises(HTTPClientError) as raised:
        await jp_fetch(
            "hipo", "api", "recall", params={"path": "project/", "q": "churn", "team": "1"}
        )
    body = raised.value.response.body.decode()
    assert raised.value.code == 503 and reason in body and SECURE_PASSWORD not in body
    out, err = capfd.readouterr()
    assert SECURE_PASSWORD not in caplog.text + out + err
    assert "error connecting" not in caplog.text + err  # psycopg_pool's own warnings
