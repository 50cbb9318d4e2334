"""Team recall on a real PostgreSQL, through the engine, `hipo`, `%recall --team` and the server;
and a team database that is down: one line, and `%%remember` is never held up."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

from hipo_jupyter.cli import commands as cli  # noqa: E402
from hipo_jupyter.memory import HipoError, Memory, MemoryConfig  # noqa: E402
from hipo_jupyter.team import database, sync, wait_for_background  # noqa: E402
from hipo_jupyter.team.link import TeamLink  # noqa: E402

TODAY = date(2026, 3, 12)


def team_memory(root: Path, url: str, author: str) -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(team_url=url, team_author=author)
    return Memory(root, config=config, today=lambda: TODAY, team=TeamLink)


@pytest.fixture
def team(tmp_path: Path, team_url: str) -> dict[str, Memory]:
    """Three people, three notebooks, synced to one team database."""
    ana = team_memory(tmp_path / "churn-study", team_url, "ana")
    bo = team_memory(tmp_path / "pricing", team_url, "bo")
    cy = team_memory(tmp_path / "onboarding", team_url, "cy")
    ana.remember(
        "Churn drivers [project] #churn",
        "- decisions: churn is driven by onboarding drop-off in week one",
        on="2026-03-10",
    )
    bo.remember(
        "Old churn estimate [project] #churn",
        "- decisions: churn is driven by onboarding drop-off in week one",
        on="2025-06-02",
    )
    bo.remember("Starter tier [project]", "- decisions: cut the price 15%", on="2026-03-11")
    cy.remember("Onboarding email [feedback]", "- rule: send day-2 emails", on="2026-03-05")
    cy.remember("I prefer tables [user]", "- rule: churn numbers as tables", on="2026-03-05")
    for memory in (ana, bo, cy):
        wait_for_background(str(memory.root))
        memory.team_sync()
    return {"ana": ana, "bo": bo, "cy": cy}


def test_team_recall_names_author_and_notebook_of_each_hit(team):
    result = team["bo"].recall("what did anyone conclude about churn?", team=True)
    assert [(hit.author, hit.notebook) for hit in result][:2] == [
        ("ana", "churn-study"),
        ("bo", "pricing"),
    ]
    first = result[0]
    assert first.title == "Churn drivers" and first.kind == "raw" and first.type == "project"
    assert first.file == "memory/2026-03-10.md" and first.line >= 1
    assert "ana/churn-study" in first.path[0]


def test_team_recall_favours_the_recent_of_two_equal_matches(team):
    """The same words in 2025 and in 2026: local recall's recency factor orders them."""
    hits = team["cy"].recall("onboarding drop-off churn", team=True, k=2).hits
    assert [hit.date for hit in hits] == ["2026-03-10", "2025-06-02"]
    assert hits[0].score > hits[1].score


def test_team_recall_applies_dates_type_and_k(team):
    ana = team["ana"]
    assert [h.author for h in ana.recall("churn", team=True, since="2026-01-01")] == ["ana"]
    assert [h.date for h in ana.recall("churn", team=True, until="2025-12-31")] == ["2025-06-02"]
    assert [h.title for h in ana.recall("emails", team=True, type="feedback")] == [
        "Onboarding email"
    ]
    assert len(ana.recall("churn", team=True, k=1)) == 1


def test_team_recall_never_finds_what_stayed_local(team):
    titles = [hit.title for hit in team["ana"].recall("tables", team=True)]
    assert "I prefer tables" not in titles
    assert [h.title for h in team["cy"].recall("tables")] == ["I prefer tables"]  # still local


def test_named_period_boost_reaches_team_hits(team):
    hits = team["ana"].recall("churn drop-off in June 2025", team=True, k=2).hits
    assert hits[0].date == "2025-06-02"


def test_hipo_recall_team_prints_and_jsons_authors(team, team_url, capsys, monkeypatch):
    root = str(team["ana"].root)
    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    assert cli.main(["--team-url", team_url, "recall", "churn", "--team", "--root", root]) == 0
    text = capsys.readouterr().out
    assert "Churn drivers" in text and "by ana in churn-study" in text
    monkeypatch.setenv("HIPO_TEAM", team_url)
    assert cli.main(["recall", "churn", "--team", "--json", "--root", root]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert {(h["author"], h["notebook"]) for h in hits} == {
        ("ana", "churn-study"),
        ("bo", "pricing"),
    }


def test_hipo_team_sync_reports_what_it_sent(tmp_path, team_url, capsys, monkeypatch):
    root = tmp_path / "notes"
    root.mkdir()
    monkeypatch.setenv("HIPO_AUTHOR", "dee")
    local = Memory(root, today=lambda: TODAY)  # written without a team: nothing sent yet
    local.remember("Forecast [project]", "- outcome: Q2 forecast done")
    local.remember("Me [user]", "- rule: short answers")
    local.close()
    assert cli.main(["team", "sync", "--team-url", team_url, "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "1 checkpoints" in out and "1 new or updated" in out and "1 kept local" in out
    assert cli.main(["team", "sync", "--team-url", team_url, "--root", str(root)]) == 0
    assert "0 new or updated" in capsys.readouterr().out


def test_magic_recall_team(team, team_url, tmp_path, monkeypatch, capsys):
    from claude_helpers import RaisingShell
    from traitlets.config import Config

    import hipo_jupyter.ipython as hipo_ipython

    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    try:
        shell.run_cell(f"%config Hipo.root = {str(team['cy'].root)!r}")
        shell.run_cell(f"%config Hipo.team_url = {team_url!r}")
        shell.run_cell("%load_ext hipo")
        shell.run_cell("hits = %recall --team churn drop-off")
        hits = shell.user_ns["hits"]
        assert hits[0].author == "ana" and "by ana in churn-study" in str(hits)
        assert "(by ana in churn-study)" in hits._repr_html_()
        local = shell.run_cell("local = %recall churn drop-off")
        assert local.success
        assert "Churn drivers" not in [hit.title for hit in shell.user_ns["local"]]
        assert {hit.author for hit in shell.user_ns["local"]} == {""}  # one's own memory
    finally:
        hipo_ipython.unload_ipython_extension(shell)


def test_no_team_url_is_one_line_everywhere(memory_root, capsys):
    Memory(memory_root).remember("A [project]", "- outcome: x")
    with pytest.raises(HipoError, match="no team database"):
        Memory(memory_root).recall("x", team=True)
    assert cli.main(["recall", "x", "--team", "--root", str(memory_root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--team-url" in err


@pytest.fixture
def quick_failures(monkeypatch):
    monkeypatch.setattr(database, "POOL_TIMEOUT_S", 0.5)
    monkeypatch.setattr(sync, "RETRY_DELAYS", (0.1,))


def test_a_team_database_that_is_down_is_one_line(
    memory_root, postgres_cluster, capsys, quick_failures
):
    url = postgres_cluster.url("no_such_database")
    Memory(memory_root).remember("A [project]", "- outcome: x")
    assert cli.main(["recall", "x", "--team", "--team-url", url, "--root", str(memory_root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hipo: error: the team database 127.0.0.1:")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_remember_with_the_team_down_queues_on_disk_and_a_later_sync_sends_it(
    memory_root, postgres_cluster, quick_failures, monkeypatch
):
    import psycopg

    url = postgres_cluster.url("team_later")
    memory = team_memory(memory_root, url, "ana")
    checkpoint = memory.remember("Churn call [project]", "- outcome: kept the customer")
    assert (memory_root / "memory" / f"{checkpoint.date}.md").read_text().count("Churn call") == 1
    assert wait_for_background(str(memory.root))
    queued = sync.TeamSync(memory.store, memory.config, database.TeamDatabase(url)).queued()
    assert queued["days"] == [checkpoint.date]
    assert "database team_later does not exist" in queued["error"]
    with psycopg.connect(postgres_cluster.url(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "team_later"')
    database.close_pools()  # the pool of the missing database gave up; a new one connects
    monkeypatch.setattr(database, "POOL_TIMEOUT_S", 30)  # and may take its time on a busy machine
    memory.team_sync()
    hits = memory.recall("churn call", team=True)
    assert [hit.title for hit in hits] == ["Churn call"]
    queue = sync.TeamSync(memory.store, memory.config, database.TeamDatabase(url)).queued()
    assert queue == {}


async def test_server_recall_with_team_1(jp_fetch, jp_root_dir, team_url, monkeypatch):
    folder = jp_root_dir / "project"
    memory = team_memory(folder, team_url, "ana")
    memory.remember("Churn drivers [project]", "- decisions: onboarding drop-off")
    wait_for_background(str(memory.root))
    memory.team_sync()
    monkeypatch.setenv("HIPO_TEAM", team_url)
    response = await jp_fetch(
        "hipo", "api", "recall", params={"path": "project/", "q": "churn", "team": "1"}
    )
    hits = json.loads(response.body)["hits"]
    assert [(h["author"], h["notebook"], h["title"]) for h in hits] == [
        ("ana", "project", "Churn drivers")
    ]


def test_context_with_team_is_the_team_s_memory_within_the_budget(team, capsys, monkeypatch):
    context = team["bo"].context("what did anyone conclude about churn?", budget=600, team=True)
    assert context.tokens <= 600
    assert "ana/churn-study: memory/2026-03-10.md" in context.text
    assert "onboarding drop-off" in context.text
    assert "I prefer tables" not in context.text  # a `user` checkpoint never left cy's machine
    assert context.hits and all(hit.author for hit in context.hits)
    monkeypatch.setenv("HIPO_TODAY", TODAY.isoformat())
    root, url = team["bo"].root, team["bo"].config.team_url
    args = ["--root", str(root), "--team-url", url, "recall", "churn", "--team", "--context"]
    assert cli.main([*args, "--budget", "600", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["tokens"] <= 600 and payload["hits"][0]["author"]


def test_team_recall_says_once_that_it_is_keyword_only(team, caplog, monkeypatch):
    monkeypatch.setattr(TeamLink, "said_keyword_only", False)
    with caplog.at_level("WARNING"):
        first = team["bo"].recall("churn", team=True, mode="hybrid")
        team["bo"].recall("churn", team=True, mode="hybrid")
    notes = [r.message for r in caplog.records if "keyword only" in r.message]
    assert len(notes) == 1 and "pgvector" in notes[0]
    assert first.hits  # and the keyword answer is given
