"""Forgetting, the user's power (issue 35, item 4): `%hipo forget ID` and `hipo forget ID`
remove a checkpoint for good. Its raw log keeps one tombstone line (id, date, reason, no text);
nodes, the search index (SQLite secure_delete + VACUUM), the graph store and `%%ask`
conversations keep no byte of it; `hipo check` verifies it; an agent cannot forget."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from claude_helpers import RaisingShell, new_shell, run
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from test_cli import run_hipo

from hipo_jupyter.ipython import unload_ipython_extension
from hipo_jupyter.memory import HipoError, Memory
from hipo_jupyter.memory.disk.checkpoint import (
    Checkpoint,
    Tombstone,
    parse_log,
    render,
    tombstones,
)
from hipo_jupyter.memory.forget import without_checkpoint
from hipo_jupyter.memory.views.check import forgotten_ids_remain

CUSTOMER = "Zebulon Quartermain-Okafor"
WRONG = "the renewal price is 9,999 EUR a seat"


@pytest.fixture(name="shell")
def shell_fixture(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    monkeypatch.setenv("HIPO_TODAY", "2026-03-12")
    shell: RaisingShell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%config Hipo.summarizer = 'extractive'")
    shell.run_cell("%load_ext hipo")
    capsys.readouterr()
    yield shell
    unload_ipython_extension(shell)


def files_holding(root: Path, needle: str) -> list[str]:
    """Every regular file under `root` whose bytes contain `needle` (SQLite files included)."""
    found = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if path.is_file() and needle.encode() in path.read_bytes():
                found.append(str(path.relative_to(root)))
    return found


def only_id(text: str) -> str:
    """The checkpoint id a `%%remember` / `hipo remember` line prints."""
    words = (word.strip("()") for word in text.split())
    return next(word for word in words if word[:4].isdigit() and "T" in word)


def test_a_customers_name_forgotten_leaves_no_byte_under_the_root(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    body = f"- request: renewal call with {CUSTOMER}\n- outcome: {CUSTOMER} renews in May"
    run(shell, f"%%remember Call with {CUSTOMER} [project] #sales\n{body}")
    checkpoint_id = only_id(capsys.readouterr().out)
    run(shell, "%%remember Pricing review [project]\n- decisions: keep the starter tier price")
    run(shell, "%hipo compact")
    assert len(run(shell, "%recall Quartermain").result.hits) >= 1
    conversations = memory_root / "memory" / ".conversations"
    conversations.mkdir(parents=True, exist_ok=True)
    (conversations / "analysis.json").write_text(
        json.dumps({"turns": [{"role": "user", "content": f"the notes: {CUSTOMER} renews in May"}]})
    )  # a quote of its line; a turn naming the customer in its own words is kept (issue 48)
    assert files_holding(memory_root, "Quartermain")
    capsys.readouterr()

    run(shell, f'%hipo forget {checkpoint_id[-8:]} --reason "the customer asked"')
    out = capsys.readouterr().out
    assert f"forgot {checkpoint_id}" in out and "NOT clean" not in out

    assert files_holding(memory_root, "Quartermain") == []
    assert files_holding(memory_root, "renews in May") == []
    assert list(memory_root.joinpath("memory", ".index").glob("*.sqlite3"))  # kept, compacted
    assert run(shell, "%recall Quartermain").result.hits == []
    assert run(shell, "%recall starter tier").result.hits  # the other note is still found
    raw = (memory_root / "memory" / "2026-03-12.md").read_text()
    (stone,) = tombstones(raw)
    assert (stone.id, stone.forgotten, stone.reason) == (
        checkpoint_id, "2026-03-12", "the customer asked"
    )
    assert [cp.title for cp in parse_log(raw)] == ["Pricing review"]
    json.loads((conversations / "analysis.json").read_text())  # still a conversation
    capsys.readouterr()
    run(shell, "%hipo check")
    assert "pass  forgotten checkpoints leave no trace" in capsys.readouterr().out


def test_the_magic_refuses_bad_input_with_one_line_and_writes_nothing(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    run(shell, "%%remember Note [project]\n- outcome: kept")
    raw = memory_root / "memory" / "2026-03-12.md"
    before = raw.read_bytes()
    for line, message in [
        ("%hipo forget", "needs a checkpoint ID"),
        ("%hipo forget 2026-01-01T00:00:00Z-00000000", "no checkpoint has the ID"),
        ('%hipo status --reason "x"', "--reason goes with %hipo forget"),
    ]:
        with pytest.raises(UsageError, match=message):
            run(shell, line)
    assert raw.read_bytes() == before


def test_hipo_forget_in_a_real_process(memory_root: Path) -> None:
    done = run_hipo(memory_root, "remember", "Secret call [project]",
                    stdin=f"- request: {CUSTOMER} asked for a discount\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    checkpoint_id = only_id(done.stdout)
    kept = run_hipo(memory_root, "remember", "Kept [project]", stdin="- outcome: the plan\n")
    assert run_hipo(memory_root, "compact").returncode == 0
    assert CUSTOMER in run_hipo(memory_root, "recall", "discount").stdout

    bad = run_hipo(memory_root, "forget", "no-such-id")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "no checkpoint has the ID" in bad.stderr

    gone = run_hipo(memory_root, "forget", checkpoint_id, "--reason", "GDPR request")
    assert gone.returncode == 0, gone.stderr
    assert files_holding(memory_root, "Quartermain") == []
    assert run_hipo(memory_root, "recall", "discount").stdout.count(CUSTOMER) == 0
    assert "the plan" in run_hipo(memory_root, "recall", "plan").stdout
    check = run_hipo(memory_root, "check")
    assert check.returncode == 0 and "pass  forgotten checkpoints leave no trace" in check.stdout
    again = run_hipo(memory_root, "forget", checkpoint_id)
    assert again.returncode == 2 and "no checkpoint has the ID" in again.stderr
    assert only_id(kept.stdout) in (memory_root / "memory" / "2026-03-12.md").read_text()


def test_only_the_user_forgets(memory_root: Path) -> None:
    memory = Memory(memory_root)
    written = memory.remember("Agent note [project]", "- outcome: done", via="mcp")
    for agent in ("mcp", "memory-tool", "write-back", "import", "some-new-front-end"):
        with pytest.raises(HipoError, match="only the user forgets"):
            memory.forget(written.id, via=agent)
    assert memory.recall("done").hits
    memory.forget(written.id, via="sidebar")
    assert memory.recall("done").hits == []


def test_hipo_check_fails_when_a_forgotten_id_is_still_somewhere(memory_root: Path) -> None:
    memory = Memory(memory_root)
    written = memory.remember("Gone [project]", "- outcome: a fact to forget", via="cli")
    memory.forget(written.id, via="cli")
    assert forgotten_ids_remain(memory)[0]
    (memory_root / "memory" / "daily" / "2026-99.md").write_text(f"copied {written.id}\n")
    passed, detail = forgotten_ids_remain(memory)
    assert not passed and "memory/daily/2026-99.md" in detail


def test_the_graph_store_keeps_nothing_of_a_forgotten_checkpoint(memory_root: Path) -> None:
    pytest.importorskip("pyoxigraph")
    memory = Memory(memory_root)
    written = memory.remember("Graph note [project]", f"- outcome: met {CUSTOMER}", via="cli")
    memory.remember("Other [project]", "- outcome: unrelated", via="cli")
    assert memory.sparql("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows
    assert files_holding(memory_root / "memory" / ".index", "Quartermain")
    report = memory.forget(written.id, via="cli")
    assert report.clean and files_holding(memory_root, "Quartermain") == []
    rows = memory.sparql('SELECT ?t WHERE { ?c <https://schema.org/name> ?t }').rows
    assert ["Other"] in [list(row) for row in rows]


# --- the tombstone in the Hipocampus format ---------------------------------------------------
_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=40)
_checkpoints = st.builds(
    Checkpoint,
    title=_words,
    type=st.sampled_from(["project", "feedback", "user", "reference"]),
    fields=st.lists(st.tuples(st.sampled_from(["request", "outcome", "rule"]), _words), max_size=3)
    .map(tuple),
    text=_words,
    tags=st.lists(st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True), max_size=2).map(tuple),
    via=st.sampled_from([None, "magic", "cli", "mcp"]),
)


@settings(max_examples=150, deadline=None)
@given(entries=st.lists(_checkpoints, min_size=1, max_size=6), pick=st.integers(0, 5),
       reason=_words, preamble=st.sampled_from(["", "# 2026-03-12\n\n"]))  # fmt: skip
def test_forgetting_one_checkpoint_leaves_every_other_byte_identical_and_parseable(
    entries: list[Checkpoint], pick: int, reason: str, preamble: str
) -> None:
    entries = [replace(cp, id=f"2026-03-12T10:00:{i:02d}Z-{i:08x}") for i, cp in enumerate(entries)]
    blocks = [render(cp) for cp in entries]
    log = preamble + "\n".join(blocks)
    gone = entries[pick % len(entries)]
    stone = Tombstone(gone.id or "", "2026-03-13", reason)
    after = without_checkpoint(log, gone.id or "", stone)
    kept = [cp for cp in entries if cp.id != gone.id]
    for cp, block in zip(entries, blocks, strict=True):
        if cp.id != gone.id:
            assert block.rstrip("\n") in after
    assert parse_log(after) == kept  # the tombstone belongs to no checkpoint
    assert tombstones(after) == [stone]
    assert after.count("\n") <= log.count("\n")
    # forgetting the rest, one by one, leaves tombstones only
    for cp in kept:
        after = without_checkpoint(after, cp.id or "", Tombstone(cp.id or "", "2026-03-14"))
    assert parse_log(after) == []
    assert len(tombstones(after)) == len(entries)


def test_an_agent_over_mcp_cannot_forget(memory_root: Path) -> None:
    import anyio
    from test_mcp import call, session

    done = run_hipo(memory_root, "remember", "Mine [project]", stdin="- outcome: keep me\n")
    mine = only_id(done.stdout)

    async def scenario() -> None:
        async with session(memory_root) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert "forget" not in tools and "remember" in tools
            text, error = await call(client, "forget", id=mine)
            assert error, text

    anyio.run(scenario)
    assert mine in (memory_root / "memory" / "2026-03-12.md").read_text()


def test_forget_deletes_the_team_databases_row(tmp_path: Path, team_url: str) -> None:
    pytest.importorskip("psycopg")
    import psycopg

    from hipo_jupyter.memory import MemoryConfig
    from hipo_jupyter.team.link import TeamLink

    config = MemoryConfig(team_url=team_url, team_author="ana", team_exclude=(), semantic=False)
    memory = Memory(tmp_path / "notes", config=config, team=TeamLink)
    (tmp_path / "notes").mkdir(exist_ok=True)
    secret = memory.remember("Call [project]", f"- request: a call with {CUSTOMER}", via="cli")
    kept = memory.remember("Plan [project]", "- outcome: the plan stays", via="cli")
    memory.team_sync()

    def rows() -> dict[str, str]:
        with psycopg.connect(team_url) as conn:
            found = conn.execute("SELECT id, body FROM team_checkpoints").fetchall()
        return dict(found)

    assert set(rows()) == {secret.id, kept.id}
    report = memory.forget(secret.id, via="cli")
    assert report.clean and report.team_removed == 1, report.text()
    assert set(rows()) == {kept.id}
    assert not any(CUSTOMER in body for body in rows().values())


def test_a_writer_waiting_on_the_lock_appends_to_the_rewritten_log(memory_root: Path) -> None:
    """A forget renames a new log over the old while holding the writers' lock; a writer that
    opened the old file and waits on its lock must append to the new one, or its note is lost."""
    import fcntl
    import subprocess
    import sys
    import time

    from hipo_jupyter.memory.disk import anchored

    memory = Memory(memory_root, today=lambda: __import__("datetime").date(2026, 3, 12))
    gone = memory.remember("Gone [project]", "- outcome: forget me", via="cli")
    log = memory_root / "memory" / "2026-03-12.md"
    fd = os.open(log, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a forget holds it
    env = {**os.environ, "HIPO_TODAY": "2026-03-12"}
    writer = subprocess.Popen(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(memory_root), "remember",
         "Waiting note"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, text=True,
    )  # fmt: skip
    writer.stdin.write("- outcome: written while the log was being rewritten\n")
    writer.stdin.close()
    time.sleep(1.5)  # it has opened the old file and waits on its lock
    assert writer.poll() is None
    rewritten = without_checkpoint(log.read_text(), gone.id or "", Tombstone(gone.id or "", "x"))
    with anchored.parent(memory_root, "memory/2026-03-12.md") as (dir_fd, name):
        anchored.write_at(dir_fd, name, rewritten.encode())
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    assert writer.wait(timeout=60) == 0, writer.stderr.read()
    text = log.read_text()
    assert "written while the log was being rewritten" in text and "forget me" not in text
    assert [cp.title for cp in parse_log(text)] == ["Waiting note"]


def test_the_whoosh_backend_keeps_nothing_of_a_forgotten_checkpoint(memory_root: Path) -> None:
    pytest.importorskip("whoosh")
    from hipo_jupyter.memory import MemoryConfig

    memory = Memory(memory_root, config=MemoryConfig(search_backend="whoosh"))
    secret = memory.remember("Call [project]", f"- request: a call with {CUSTOMER}", via="cli")
    memory.remember("Plan [project]", "- outcome: the plan stays", via="cli")
    assert memory.recall("Quartermain").hits
    report = memory.forget(secret.id, via="cli")
    assert report.clean and "memory/.index/whoosh" in report.rebuilt, report.text()
    assert files_holding(memory_root, "Quartermain") == []
    assert files_holding(memory_root, "quartermain") == []  # no term of it either
    assert memory.recall("Quartermain").hits == [] and memory.recall("plan").hits
    assert (memory_root / "memory" / ".index" / "whoosh").is_dir()  # rebuilt


def test_a_checkpoint_quoting_the_forgotten_one_is_named_and_kept(memory_root: Path) -> None:
    memory = Memory(memory_root)
    secret = memory.remember("Call [project]", f"- request: a call with {CUSTOMER}", via="cli")
    body = f"- request: a call with {CUSTOMER}\n- outcome: noted"
    quote = memory.remember("Imported turn [project]", body, via="import")
    before = (memory_root / "memory").glob("20*.md")
    kept = {path: path.read_text() for path in before}
    report = memory.forget(secret.id, via="cli")
    assert report.quoted_by == [quote.id] and quote.id in report.text()
    (log,) = kept
    assert render_of(quote) in log.read_text()  # the other checkpoint, byte for byte


def render_of(checkpoint: Checkpoint) -> str:
    from dataclasses import replace as copy

    return render(copy(checkpoint, date=None, line=0)).rstrip("\n")


def test_a_log_with_another_hard_link_is_refused_and_left_alone(memory_root: Path) -> None:
    memory = Memory(memory_root)
    secret = memory.remember("Call [project]", f"- request: a call with {CUSTOMER}", via="cli")
    log = memory_root / "memory" / f"{secret.date}.md"
    os.link(log, memory_root / "elsewhere.md")
    before = log.read_bytes()
    with pytest.raises(HipoError, match="hard links"):
        memory.forget(secret.id, via="cli")
    assert log.read_bytes() == before


def test_a_recalled_note_shows_the_id_it_is_forgotten_by(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    """What a user has of a wrong note is a recall: its hit names the id `%hipo forget` and
    `--replaces` take (the text, the JSON and the CLI alike), so the error that asks for an ID
    points somewhere that shows one."""
    run(shell, f"%%remember Call with {CUSTOMER} [project]\n- outcome: {CUSTOMER} renews in May")
    written = only_id(capsys.readouterr().out)
    run(shell, "%recall renews in May")
    shown = capsys.readouterr().out
    assert f"id {written}" in shown, shown
    (hit,) = run(shell, "%recall renews in May").result.hits
    assert hit.to_json()["id"] == written
    cli = run_hipo(memory_root, "recall", "renews in May", "--json")
    assert json.loads(cli.stdout)["hits"][0]["id"] == written
    run(shell, f"%hipo forget {hit.checkpoint_id}")
    assert run(shell, "%recall renews in May").result.hits == []
