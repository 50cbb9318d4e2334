"""Every secret out, every form (issue 34): a team URL's password, as a URL or a key/value string,
quoted, escaped or broken, never reaches the CLI, a cell, the REST reply, the server log or any
file under the root; a URL that cannot be read for certain shows none of itself; and the masking
leaves the rest of a message as it was (no more every `a` turned into `***`)."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

from hipo_jupyter.team import sync  # noqa: E402
from hipo_jupyter.team.url import NOT_SHOWN, UNCLEAR, mask_url, read_url, scrub  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TAIL = "Tail9f3eS3CRET"  # the end of every password below: what no output may show
# Every way a password is allowed to appear once masked; any other `***` is a mangled message.
MASKED = re.compile(r"password\s*=\s*\*\*\*|:\*\*\*@")


def forms(port: int) -> dict[str, str]:
    """Team URLs whose password ends in TAIL, one per form (the cluster at `port` has
    password auth, so the one that parses and connects is refused: a wrong password)."""
    kv = f"host=127.0.0.1 port={port} user=postgres"
    at = f"127.0.0.1:{port}/postgres"
    return {
        "kv escaped, typo after": rf"{kv} password=a\ b\ {TAIL} dbname=postgres typo",
        "kv quoted, typo after": f"{kv} password='a b {TAIL}' dbname=postgres typo",
        "kv unterminated quote": f"{kv} password='a b {TAIL} dbname=postgres",
        "kv escaped, wrong password": rf"{kv} password=a\ b\ {TAIL} dbname=postgres",
        "kv misspelt key": f"{kv} passwrd={TAIL}",
        "url @ in password": f"postgresql://postgres:a@b{TAIL}@{at}",
        "url / in password": f"postgresql://postgres:a/{TAIL}@{at}",
        "url space in password": f"postgresql://postgres:a b {TAIL}@{at}",
        "url bad percent": f"postgresql://postgres:a%zz{TAIL}@{at}",
        "url query password, typo after": f"postgresql://postgres@{at}?password={TAIL}&typo",
        "url not a port": f"postgresql://postgres:{TAIL}@127.0.0.1:notaport/postgres",
    }


FORMS = list(forms(5432))


def assert_clean(text: str) -> None:
    """No piece of the password, and no `***` but where a password was."""
    assert TAIL not in text and "S3CRET" not in text, text
    assert "***" not in MASKED.sub("", text), text


def hipo(root: Path, *args: str, url: str, stdin: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("HIPO_ROOT", "HIPO_TEAM")}
    env.update(HIPO_TODAY="2026-03-12", HIPO_AUTHOR="ana", HIPO_TEAM=url)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=60,
    )


def assert_no_file_holds_it(root: Path) -> None:
    """Every file under the root (logs, index, queue, state, lock, folder id): no TAIL."""
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    assert any(p.name == "team-queue.json" for p in files), sorted(map(str, files))
    for path in files:
        assert TAIL.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("form", FORMS)
def test_the_cli_and_every_file_show_no_piece_of_the_password(secure_cluster, tmp_path, form):
    url = forms(secure_cluster.port)[form]
    root = tmp_path / "ana"
    (root / "memory").mkdir(parents=True)
    remembered = hipo(root, "remember", "Churn model [project]", url=url, stdin="- outcome: kept")
    assert remembered.returncode == 0, remembered.stderr
    assert_clean(remembered.stdout + remembered.stderr)
    for args in (("team", "sync"), ("recall", "churn", "--team")):
        done = hipo(root, *args, url=url)
        assert done.returncode != 0 and done.stdout == "", done.stdout
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "the team database" in done.stderr  # the message itself, unmangled
        assert_clean(done.stderr)
    status = hipo(root, "status", url=url)
    assert status.returncode == 0, status.stderr
    assert "team database: " in status.stdout
    assert_clean(status.stdout + status.stderr)
    assert_no_file_holds_it(root)


@pytest.mark.parametrize("form", FORMS)
def test_a_cell_shows_no_piece_of_the_password(
    secure_cluster, tmp_path, monkeypatch, capfd, caplog, form
):
    """A real IPython shell: the URL set by %config, a checkpoint queued for the team, a team
    recall that fails, and `%config Hipo` (which shows every setting's current value)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    import hipo_jupyter.ipython as hipo_ipython
    from hipo_jupyter.team import wait_for_background

    monkeypatch.setattr(sync, "RETRY_DELAYS", (0.05,))
    url = forms(secure_cluster.port)[form]
    root = tmp_path / "ana"
    (root / "memory").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell(config=config)
    try:
        with caplog.at_level(logging.DEBUG):
            shell.run_cell(f"%config Hipo.root = {str(root)!r}")
            shell.run_cell(f"%config Hipo.team_url = {url!r}")
            shell.run_cell("%load_ext hipo")
            shell.run_cell("%%remember Churn model [project]\n- outcome: kept")
            assert wait_for_background(str(root))
            failed = shell.run_cell("%recall churn --team")
            shell.run_cell("%config Hipo")
    finally:
        hipo_ipython.unload_ipython_extension(shell)
    assert failed.error_in_exec is not None or failed.error_before_exec is not None
    out, err = capfd.readouterr()
    assert "the team database" in out + err and "Hipo.team_url" in out
    assert "error" in (root / "memory" / ".index" / "team-queue.json").read_text("utf-8")
    assert_clean(out + err)
    assert_clean(caplog.text)
    assert_no_file_holds_it(root)


@pytest.mark.parametrize("form", FORMS)
async def test_the_rest_reply_and_the_server_log_show_no_piece_of_the_password(
    jp_fetch, jp_root_dir, secure_cluster, monkeypatch, caplog, capfd, form
):
    from tornado.httpclient import HTTPClientError

    url = forms(secure_cluster.port)[form]
    (jp_root_dir / "project" / "memory").mkdir(parents=True)
    monkeypatch.setenv("HIPO_TEAM", url)  # the server's memories read it when first built
    with caplog.at_level("DEBUG"), pytest.raises(HTTPClientError) as raised:
        await jp_fetch(
            "hipo", "api", "recall", params={"path": "project/", "q": "churn", "team": "1"}
        )
    body = raised.value.response.body.decode()
    assert raised.value.code == 503 and "the team database" in body
    assert_clean(body)
    out, err = capfd.readouterr()
    assert_clean(caplog.text + out + err)
    for path in (jp_root_dir / "project").rglob("*"):
        assert not path.is_file() or TAIL.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("form", FORMS)
def test_a_url_is_shown_with_its_password_masked_or_not_at_all(form):
    url = forms(5432)[form]
    reading = read_url(url)
    shown = mask_url(url)
    assert_clean(shown)
    if reading.readable:  # what is shown is the URL, the password as ***, nothing else
        assert "***" in shown and "127.0.0.1" in shown
    else:
        assert shown in (NOT_SHOWN, UNCLEAR) and reading.problem


def test_a_config_never_shows_its_team_url():
    """A MemoryConfig in a cell, a log line or a traceback's locals: its repr has no URL."""
    from hipo_jupyter.memory import MemoryConfig

    for url in forms(5432).values():
        assert TAIL not in repr(MemoryConfig(team_url=url))


def test_the_masking_never_mangles_the_rest_of_a_message():
    message = "the team database at a host: password authentication failed for user a"
    for url in (
        r"host=h password=a\ b\ SECRETS",
        "host=h password='a b SECRETS' typo",
        "postgresql://a:a@h/db",
        "postgresql://u:p%40ss@h/db",
    ):
        scrubbed = scrub(message, url)
        assert scrubbed.startswith("the team database at a host: password authentication"), url
    assert scrub("a b SECRETS in a line", r"host=h password=a\ b\ SECRETS") == "*** in a line"
    assert scrub("user 'pw1' is not pw12", "host=h password=pw1") == "user '***' is not pw12"


def test_without_the_team_extra_only_plain_urls_are_shown(tmp_path):
    """`hipo status` needs no psycopg (issue 26): a plain URL is shown masked, any other form
    not at all, since only libpq could say where its password ends."""
    script = (
        "import sys\n"
        "sys.modules['psycopg'] = None  # as if the team extra were not installed\n"
        "from hipo_jupyter.team.url import NOT_READ, mask_url\n"
        "assert mask_url('postgresql://ana:pw-SECRET@db.example:5432/team') == "
        "'postgresql://ana:***@db.example:5432/team'\n"
        "assert mask_url('host=db password=pw-SECRET dbname=team') == "
        "'host=db password=*** dbname=team'\n"
        f"for url in {list(forms(5432).values())!r}:\n"
        f"    assert {TAIL!r} not in mask_url(url), url\n"
        "    assert mask_url(url) == NOT_READ or ':***@127.0.0.1:' in mask_url(url)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
