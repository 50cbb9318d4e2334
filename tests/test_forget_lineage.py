"""A forget takes exactly what came from the note (issue 48): the note, and what lineage says
was made from it (the write-back of an `%%ask` whose call was sent it, that call's turns in
the conversation, a teammate's identical copy in team recall); never a word of it found
elsewhere. The ledger survives damage with one line and a failing `hipo check`, and the user
can say it again."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401  (fixtures)
    FakeMessagesAPI,
    RaisingShell,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run_hipo
from test_forget import files_holding, only_id

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, parse_log, render

NOTE_TITLE = "Call about Kubernetes [project]"
NOTE = "- outcome: the nightly job moves to Airflow on the Xylophon cluster"
REWORDED = "Your nightly job now runs in Airflow, on Xylophon: that is the plan."


def test_a_conversation_that_never_quoted_the_note_keeps_every_word(memory_root: Path) -> None:
    """Issue 48, "too much": the note's capitalised words ("Call", "Kubernetes") in a
    conversation that never quoted it are not replaced, and `hipo check` still passes when
    the user writes those words again."""
    written = run_hipo(memory_root, "remember", NOTE_TITLE, stdin=NOTE + "\n")
    assert written.returncode == 0, written.stderr
    note_id = only_id(written.stdout)
    folder = memory_root / "memory" / ".conversations"
    folder.mkdir(parents=True, exist_ok=True)
    words = "register a Callback in Kubernetes operators"
    conversation = folder / "other-0123456789ab.json"
    conversation.write_text(json.dumps({"turns": [{"role": "user", "content": words}]}))
    before = conversation.read_bytes()

    gone = run_hipo(memory_root, "forget", note_id)
    assert gone.returncode == 0, gone.stderr
    assert conversation.read_bytes() == before  # not "[forgotten]back in [forgotten] operators"
    assert files_holding(memory_root, "Xylophon") == []
    again = run_hipo(memory_root, "remember", "Kubernetes upgrade [project]",
                     stdin="- outcome: Call the Kubernetes team\n")  # fmt: skip
    assert again.returncode == 0, again.stderr
    check = run_hipo(memory_root, "check")
    assert "pass  forgotten checkpoints leave no trace" in check.stdout, check.stdout
    assert "pass  forgets are obeyed by every copy" in check.stdout, check.stdout


def ask_from_the_note(shell: RaisingShell, api: FakeMessagesAPI, capsys) -> str:
    """With the defaults (auto_checkpoint on): a note, and an `%%ask` answered from it in
    other words. Returns the note's id."""
    run(shell, f"%%remember {NOTE_TITLE}\n{NOTE}")
    note_id = only_id(capsys.readouterr().out)
    run(shell, "%%remember Pricing review [project]\n- decisions: keep the starter tier")
    api.replies.append(REWORDED)
    run(shell, "%%ask\nWhere does the nightly job run now?")
    assert "Xylophon" in json.dumps(api.requests[-1])  # the note was sent with the call
    return note_id


def write_backs(root: Path) -> list[Checkpoint]:
    found = []
    for log in sorted((root / "memory").glob("*.md")):
        found += [cp for cp in parse_log(log.read_text(), date=log.stem) if cp.via == "write-back"]
    return found


def test_the_write_back_of_an_ask_answered_from_the_note_goes_with_it(
    claude_shell: RaisingShell,
    api: FakeMessagesAPI,
    memory_root: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    """Issue 48, "too little": the write-back records the checkpoints its call was sent
    (`sources=`), so the forget takes it (listed), and the reworded turn leaves the kernel's
    conversation; the other note, and the conversation, go on."""
    note_id = ask_from_the_note(claude_shell, api, capsys)
    (write_back,) = write_backs(memory_root)
    assert note_id in write_back.sources
    assert f"sources={note_id}" in (memory_root / "memory" / f"{write_back.date}.md").read_text()
    conversation = memory_root / "memory" / ".conversations" / "console.json"
    assert note_id in json.loads(conversation.read_text())["active"][1]["sources"]

    gone = run_hipo(memory_root, "forget", note_id)
    assert gone.returncode == 0, gone.stderr
    assert f"forgot too what was made from it: {write_back.id}" in gone.stdout
    assert write_backs(memory_root) == []
    for words in ("Xylophon", "nightly job", "Airflow"):
        assert files_holding(memory_root, words) == [], words
    for words in ("nightly job", "Airflow"):
        assert "Xylophon" not in run_hipo(memory_root, "recall", words).stdout
    assert "Xylophon" not in run_hipo(memory_root, "recall", "nightly", "--context").stdout
    check = run_hipo(memory_root, "check")
    assert check.returncode == 0, check.stdout

    capsys.readouterr()
    run(claude_shell, "%%ask\nAnd the starter tier?")
    sent = json.dumps(api.requests[-1], ensure_ascii=False)
    assert "Airflow" not in sent and "Xylophon" not in sent  # the reworded turn is gone
    assert "starter tier" in sent


def test_keep_derived_keeps_and_lists_what_was_made_from_the_note(
    claude_shell: RaisingShell,
    api: FakeMessagesAPI,
    memory_root: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    note_id = ask_from_the_note(claude_shell, api, capsys)
    (write_back,) = write_backs(memory_root)
    kept = run_hipo(memory_root, "forget", note_id, "--keep-derived")
    assert kept.returncode == 0, kept.stderr + kept.stdout
    assert f"kept what was made from it, as you asked: {write_back.id}" in kept.stdout
    assert [cp.id for cp in write_backs(memory_root)] == [write_back.id]
    check = run_hipo(memory_root, "check")  # its `sources=` names the id: a name, not text
    assert "pass  forgotten checkpoints leave no trace" in check.stdout, check.stdout


def test_sources_round_trip_and_old_checkpoints_stay_valid() -> None:
    sources = ("2026-03-12T10:00:00Z-0a1b", "x,y z")
    checkpoint = Checkpoint("Reply", fields=(("outcome", "ok"),), id="a", via="write-back",
                            sources=sources)  # fmt: skip
    text = render(checkpoint)
    assert "sources=2026-03-12T10:00:00Z-0a1b,x%2Cy%20z" in text
    assert parse_log(text) == [checkpoint]
    (old,) = parse_log("## Old [project]\n<!-- hipo id=b via=write-back -->\n- outcome: ok\n")
    assert old.sources == ()


@pytest.mark.parametrize(
    "ledger",
    [
        "[]",
        '{"events": null}',
        '{"version": 1, "events": [{"id": "x", "generation": 1e999}]}',
        '{"version": 1, "events": [{"id": 5}]}',
        '{"version": 1, "events": [{"id": "x", "pie',
    ],
)
def test_a_damaged_ledger_is_one_line_never_a_traceback(memory_root: Path, ledger: str) -> None:
    written = run_hipo(memory_root, "remember", "Gone [project]", stdin="- outcome: secret\n")
    assert run_hipo(memory_root, "forget", only_id(written.stdout)).returncode == 0
    (memory_root / "memory" / ".forgotten.json").write_text(ledger)
    for args in (("recall", "secret"), ("remember", "Gone [project]")):
        done = run_hipo(memory_root, *args, stdin="- outcome: secret\n")
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "restore" in done.stderr, done.stderr
    assert "secret" not in (memory_root / "memory" / "2026-03-12.md").read_text()
    check = run_hipo(memory_root, "check")
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert "FAIL  forgets are obeyed by every copy" in check.stdout and "restore" in check.stdout


def test_a_lost_ledger_or_key_fails_hipo_check_and_the_key_is_never_made_anew(
    memory_root: Path,
) -> None:
    written = run_hipo(memory_root, "remember", "Gone [project]", stdin="- outcome: secret\n")
    assert run_hipo(memory_root, "forget", only_id(written.stdout)).returncode == 0
    key = memory_root / "memory" / ".forget-key"
    ledger = memory_root / "memory" / ".forgotten.json"
    saved_key, saved_ledger = key.read_bytes(), ledger.read_bytes()

    key.unlink()
    again = run_hipo(memory_root, "remember", "Gone [project]", stdin="- outcome: secret\n")
    assert again.returncode != 0 and again.stderr.count("\n") == 1, again.stderr
    assert not key.exists()  # not silently replaced: the forgets would no longer be recognised
    check = run_hipo(memory_root, "check")
    assert check.returncode == 1 and ".forget-key is missing" in check.stdout
    key.write_text("not hex\n")
    assert "damaged" in run_hipo(memory_root, "check").stdout
    key.write_bytes(saved_key)

    ledger.write_text('{"version": 1, "events": []}')  # emptied: every forget cancelled
    check = run_hipo(memory_root, "check")
    assert check.returncode == 1 and "not in memory/.forgotten.json" in check.stdout
    ledger.unlink()
    assert "not in memory/.forgotten.json" in run_hipo(memory_root, "check").stdout
    ledger.write_bytes(saved_ledger)
    assert run_hipo(memory_root, "check").returncode == 0


def test_the_users_own_new_word_is_written_and_leaves_the_ledger(memory_root: Path) -> None:
    """Issue 48: weeks after forgetting "standup at 10", the user's `hipo remember` of the
    same text is written (exit 0), and no longer kept out; another writer's copy before that
    was refused."""
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    note = memory.remember("Standup [project]", "- decisions: standup at 10", via="cli")
    memory.forget(note.id or "", via="cli")
    assert memory.remember("Standup [project]", "- decisions: standup at 10", via="mcp").forgotten
    memory.close()
    said = run_hipo(memory_root, "remember", "Standup [project]",
                    stdin="- decisions: standup at 10\n")  # fmt: skip
    assert said.returncode == 0 and said.stdout.startswith("memory/2026-03-12.md"), said.stdout
    assert "standup at 10" in run_hipo(memory_root, "recall", "standup").stdout
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    assert not memory.remember("Standup [project]", "- decisions: standup at 10",
                               via="mcp", notebook="x.ipynb").forgotten  # fmt: skip
    memory.close()
    assert run_hipo(memory_root, "check").returncode == 0


def test_team_recall_leaves_out_a_teammates_copy_of_what_the_user_forgot(
    tmp_path: Path, team_url: str
) -> None:
    """Issue 48: a teammate's identical copy of a forgotten note was hit 1 of team recall and
    entered team contexts; the ledger's copy hash keeps it out (the teammate's row stays theirs)."""
    pytest.importorskip("psycopg")
    from hipo_jupyter.memory import MemoryConfig
    from hipo_jupyter.team import wait_for_background
    from hipo_jupyter.team.link import TeamLink

    def member(name: str) -> Memory:
        (tmp_path / name).mkdir()
        config = MemoryConfig(team_url=team_url, team_author=name, team_exclude=(), semantic=False)
        return Memory(tmp_path / name, config=config, team=TeamLink,
                      today=lambda: date(2026, 3, 12))  # fmt: skip

    ana, bo = member("ana"), member("bo")
    mine = ana.remember(NOTE_TITLE, NOTE, via="cli")
    bo.remember(NOTE_TITLE, NOTE, via="cli")  # the teammate's identical copy
    bo.remember("Airflow costs [project]", "- outcome: Airflow on the cheap cluster", via="cli")
    for memory in (ana, bo):
        wait_for_background(str(memory.root))
        memory.team_sync()
    assert "Xylophon" in json.dumps(ana.recall("nightly job Airflow", team=True).to_json())

    report = ana.forget(mine.id or "", via="cli")
    assert report.clean, report.text()
    hits = ana.recall("nightly job Airflow", team=True)
    assert "Xylophon" not in json.dumps(hits.to_json())
    assert [hit.title for hit in hits] == ["Airflow costs"]  # the rest of the team's memory
    assert "Xylophon" not in ana.context("nightly job Airflow", team=True).text
    assert "Xylophon" in json.dumps(bo.recall("nightly job", team=True).to_json())  # bo's own
    ana.close()
    bo.close()


def test_a_correction_reaches_the_tree_so_no_node_brings_the_old_text(memory_root: Path) -> None:
    """Issue 48: after `--replaces`, the old decision lived on in the nodes that quoted it and
    came into contexts unmarked; now every node over its day is built again, where it reads
    `replaced-by: ID`, and the raw log still keeps it (`recall --all`)."""
    old = "- decisions: host the dashboards on Tableau Server; Looker is too expensive"
    for day, title, body in [
        ("2026-03-02", "Dashboards [project]", old),
        ("2026-03-03", "Nightly job [project]", "- outcome: the nightly job runs on cron"),
        ("2026-03-04", "Churn [project]", "- outcome: churn is down in week one"),
    ]:
        done = run_hipo(memory_root, "remember", title, "--date", day, stdin=body + "\n")
        assert done.returncode == 0, done.stderr
    assert run_hipo(memory_root, "compact").returncode == 0
    nodes = [p for level in ("daily", "weekly", "monthly")
             for p in (memory_root / "memory" / level).glob("*.md")]  # fmt: skip
    assert any("Tableau Server" in p.read_text() for p in nodes)
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    (dashboards,) = [cp for cp in memory._all_checkpoints() if cp.title == "Dashboards"]
    memory.close()

    new = "- decisions: host the dashboards on Looker\n"
    fixed = run_hipo(memory_root, "remember", "Dashboards [project]", "--replaces",
                     dashboards.id or "", stdin=new)  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    for level in ("daily", "weekly", "monthly"):
        for node in (memory_root / "memory" / level).glob("*.md"):
            assert "Tableau Server" not in node.read_text(), node
    assert "Tableau Server" not in (memory_root / "memory" / "ROOT.md").read_text()
    week = (memory_root / "memory" / "weekly" / "2026-W10.md").read_text()
    assert f"replaced-by: {only_id(fixed.stdout)}" in week
    for question in ("where do the dashboards live?", "where does the nightly job run now?"):
        context = run_hipo(memory_root, "recall", *question.split(), "--context").stdout
        assert "Tableau Server" not in context, context
    assert "Tableau Server" in (memory_root / "memory" / "2026-03-02.md").read_text()
    assert run_hipo(memory_root, "check").returncode == 0


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["version", "events", "id", "generation", "kind", "state", "pieces",
                         "content", "copy", "day"]), inner, max_size=6),  # fmt: skip
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_any_ledger_reads_as_its_events_or_one_line(tmp_path_factory, data) -> None:
    """The ledger reader (hypothesis): whatever JSON `.forgotten.json` holds, it is read as its
    events or refused with LedgerDamaged, one line naming the file; never another exception."""
    from hipo_jupyter.memory.disk.store import Store
    from hipo_jupyter.memory.forget import ForgetLedger, LedgerDamaged

    root = tmp_path_factory.mktemp("ledger")
    store = Store(root)
    store.ensure_layout()
    (root / "memory" / ".forgotten.json").write_text(json.dumps(data))
    try:
        events = ForgetLedger(store).events()
    except LedgerDamaged as error:
        assert "\n" not in str(error) and "memory/.forgotten.json" in str(error)
    else:
        assert all(isinstance(event.id, str) for event in events)
