"""The user's word holds everywhere at once (issue 42, items 1 and 2): a forget done by another
process is in effect for the very next `%%ask` of a running kernel (its conversation and its
pinned Layer 1), for the Jupyter server's open memory and for the sidebar's `/changes`; a
forgotten note is not written again by an import, a re-run cell or a teammate's copy; a forget
killed midway is not recalled meanwhile and is finished by running it again."""

from __future__ import annotations

import json
import signal
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
from reliability_helpers import REPO, engine_env, spawn
from test_cli import run_hipo
from test_forget import files_holding, only_id
from test_server_hostile import (  # noqa: F401  (fixtures)
    Server,
    outside,
    project,
    query,
    server,
)

from hipo_jupyter.ipython import current
from hipo_jupyter.memory import Memory, render

CUSTOMER = "Zebulon Quartermain-Okafor"
NOTE = f"- request: renewal call with {CUSTOMER}\n- outcome: {CUSTOMER} renews in May"


def test_a_forget_in_another_process_holds_for_the_next_ask_of_a_running_kernel(
    claude_shell: RaisingShell,
    api: FakeMessagesAPI,
    memory_root: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    claude_shell.run_cell("%config Hipo.auto_checkpoint = False")  # no write-back quoting it
    run(claude_shell, f"%%remember Call with {CUSTOMER} [project] #sales\n{NOTE}")
    checkpoint_id = only_id(capsys.readouterr().out)
    run(claude_shell, "%%remember Pricing review [project]\n- decisions: keep the starter tier")
    run(claude_shell, f"%%ask\nWhat did {CUSTOMER} decide about the renewal?")
    assert CUSTOMER in json.dumps(api.requests[-1])  # in the question, Layer 1 and recall
    conversation = memory_root / "memory" / ".conversations" / "console.json"
    assert "Quartermain" in conversation.read_text()
    session = current(claude_shell)
    assert "Quartermain" in session.prompt_layer1().text  # pinned ROOT.md holds its title

    gone = run_hipo(memory_root, "forget", checkpoint_id, "--reason", "asked")
    assert gone.returncode == 0, gone.stderr
    capsys.readouterr()
    run(claude_shell, "%%ask\nAnd what about the starter tier?")
    sent = json.dumps(api.requests[-1], ensure_ascii=False)
    assert "Quartermain" not in sent and "renews in May" not in sent
    assert "starter tier" in sent  # the conversation goes on
    assert "Quartermain" not in conversation.read_text()
    assert "Quartermain" not in session.prompt_layer1().text
    assert "out of this conversation" in capsys.readouterr().out  # said in one line
    assert files_holding(memory_root, "Quartermain") == []
    check = run_hipo(memory_root, "check")
    assert "pass  forgets are obeyed by every copy" in check.stdout, check.stdout

    run(claude_shell, f"%%remember Call with {CUSTOMER} [project] #sales\n{NOTE}")  # run again
    told = capsys.readouterr().out
    assert told.startswith("not remembered:") and told.count("\n") == 1, told
    assert files_holding(memory_root, "Quartermain") == []


def test_a_forget_racing_a_call_is_not_written_back(
    claude_shell: RaisingShell,
    api: FakeMessagesAPI,
    memory_root: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    """A forget done while a call runs (here: from the reply's own turn) is obeyed when the
    conversation is saved, and `hipo check` names a live copy that still holds the text."""
    claude_shell.run_cell("%config Hipo.auto_checkpoint = False")
    run(claude_shell, f"%%remember Call with {CUSTOMER} [project]\n{NOTE}")
    checkpoint_id = only_id(capsys.readouterr().out)
    run(claude_shell, f"%%ask\nWhat did {CUSTOMER} say?")
    conversation = memory_root / "memory" / ".conversations" / "console.json"
    held = conversation.read_bytes()
    assert run_hipo(memory_root, "forget", checkpoint_id).returncode == 0
    conversation.write_bytes(held)  # a copy the forget did not see (a kernel of an old version)
    check = run_hipo(memory_root, "check")
    assert check.returncode == 1
    assert "FAIL  forgets are obeyed by every copy: forgotten text is still in" in check.stdout
    assert "memory/.conversations/console.json" in check.stdout
    run(claude_shell, "%%ask\nNext step?")
    assert "Quartermain" not in conversation.read_text()
    assert "Quartermain" not in json.dumps(api.requests[-1], ensure_ascii=False)


TRANSCRIPT = [
    {"role": "user", "content": f"Draft the renewal offer for {CUSTOMER}", "id": "msg-1",
     "time": "2026-03-10T09:00:00Z"},
    {"role": "assistant", "content": f"Offer for {CUSTOMER}: 12% off", "id": "msg-2",
     "time": "2026-03-10T09:00:05Z"},
    {"role": "user", "content": "And the starter tier?", "id": "msg-3",
     "time": "2026-03-10T09:01:00Z"},
    {"role": "assistant", "content": "Keep the starter tier as it is.", "id": "msg-4",
     "time": "2026-03-10T09:01:05Z"},
]  # fmt: skip


def test_a_forgotten_exchange_is_not_imported_again(memory_root: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps(TRANSCRIPT))
    first = run_hipo(memory_root, "import", str(transcript))
    assert first.returncode == 0, first.stderr
    memory = Memory(memory_root)
    (exchange,) = [cp for cp in memory._all_checkpoints() if CUSTOMER in cp.search_text()]
    memory.close()
    assert exchange.id and run_hipo(memory_root, "forget", exchange.id).returncode == 0

    again = run_hipo(memory_root, "import", str(transcript))
    assert again.returncode == 0, again.stderr
    assert "1 turns you forgot were not imported again" in again.stdout
    assert again.stdout.count("\n") == 1, again.stdout  # told in one line
    assert files_holding(memory_root, "Quartermain") == []
    assert CUSTOMER not in run_hipo(memory_root, "recall", "renewal offer").stdout


def test_a_forgotten_note_is_not_written_again_by_a_rerun_or_a_copy(
    memory_root: Path, tmp_path: Path
) -> None:
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    written = memory.remember("Call [project]", NOTE, notebook="analysis.ipynb", via="magic")
    memory.forget(written.id or "", via="magic")
    raw = (memory_root / "memory" / "2026-03-12.md").read_bytes()

    rerun = memory.remember("Call [project]", NOTE, notebook="analysis.ipynb", via="magic")
    assert rerun.forgotten and rerun.repeated and rerun.id == written.id
    teammate = memory.remember("Call", f"{NOTE}\n", type="project", via="mcp",
                               notebook="theirs.ipynb", on="2026-03-11")  # fmt: skip
    assert teammate.forgotten
    both = memory.remember_all([("Call [project]", NOTE), ("Other [project]", "- outcome: ok")])
    assert [cp.forgotten for cp in both] == [True, False]
    assert b"Quartermain" not in raw and files_holding(memory_root, "Quartermain") == []
    memory.close()

    assert "hipo remember" in render.checkpoint_line(rerun)  # the magic says how to say it again
    # The user typing it again is their new word (issue 48): written, and no longer forgotten.
    cli = run_hipo(memory_root, "remember", "Call [project]", stdin=NOTE)
    assert cli.returncode == 0 and cli.stdout.count("\n") == 1, cli.stdout
    assert cli.stdout.startswith("memory/2026-03-12.md  "), cli.stdout
    assert "Quartermain" in (memory_root / "memory" / "2026-03-12.md").read_text()
    again = Memory(memory_root, today=lambda: date(2026, 3, 12))
    assert not again.forgotten.forgotten()  # the content left the ledger
    assert not again.remember("Call [project]", NOTE, via="magic").forgotten
    again.close()
    check = run_hipo(memory_root, "check")
    assert "pass  forgets are obeyed by every copy" in check.stdout, check.stdout


KILLED_FORGET = """
import os, signal, sys
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.forget import forgetting

root, checkpoint_id, step = sys.argv[1:4]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(forgetting, step, die)  # the forget is killed as this step begins
Memory(root).forget(checkpoint_id, via="cli")
"""


@pytest.mark.parametrize("step", ["_rewrite_log", "_drop_nodes", "scrub_conversations"])
def test_a_forget_killed_midway_is_not_recalled_and_finishes_when_run_again(
    memory_root: Path, tmp_path: Path, step: str
) -> None:
    """Killed as `step` begins: before the raw log is touched, after it (nodes and ROOT.md
    still hold the text), after the index sync (conversations still do)."""
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    secret = memory.remember(f"Call with {CUSTOMER} [project]", NOTE, via="cli")
    memory.remember("Pricing [project]", "- outcome: the renewal plan", via="cli")
    memory.compact()
    memory.close()
    conversations = memory_root / "memory" / ".conversations"
    conversations.mkdir(exist_ok=True)
    quote = f"the notes: {CUSTOMER} renews in May, so"  # a quote (issue 48: not a word alone)
    (conversations / "console.json").write_text(json.dumps({"q": quote}))

    env = engine_env(tmp_path, PYTHONPATH=str(REPO))
    killed = spawn(KILLED_FORGET, memory_root, secret.id, step, env=env)
    killed.communicate(timeout=120)
    assert killed.returncode == -signal.SIGKILL

    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))  # another process's view
    for words in ("renewal", "renews May", "call"):  # not recalled meanwhile
        assert "Quartermain" not in json.dumps(memory.recall(words).to_json())
    context = memory.context("renewal").text
    assert "Quartermain" not in context and "renewal plan" in context
    assert "Quartermain" not in memory.layer1().text  # ROOT.md may not be rebuilt yet
    memory.close()
    check = run_hipo(memory_root, "check")
    assert check.returncode == 1 and "was interrupted: run forget" in check.stdout

    finished = run_hipo(memory_root, "forget", (secret.id or "")[-8:])
    assert finished.returncode == 0, finished.stderr
    assert files_holding(memory_root, "Quartermain") == []
    again = run_hipo(memory_root, "forget", secret.id or "")
    assert again.returncode == 2 and "no checkpoint has the ID" in again.stderr
    assert run_hipo(memory_root, "check").returncode == 0


async def test_the_server_and_the_sidebar_obey_a_forget_from_another_process(
    server: Server,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    memory = Memory(project, today=lambda: date(2026, 3, 12))
    secret = memory.remember("Call [project]", NOTE, via="magic")
    memory.remember("Pricing [project]", "- outcome: the renewal plan", via="magic")
    memory.close()
    params = query(path="project/analysis.ipynb")
    search = query(path="project/analysis.ipynb", q="renewal")
    assert CUSTOMER in (await server.api("recall", search)).body.decode()  # the memory is open
    before = json.loads((await server.api("changes", params)).body)

    gone = run_hipo(project, "forget", secret.id or "")
    assert gone.returncode == 0, gone.stderr
    assert json.loads((await server.api("changes", params)).body) != before
    for endpoint, extra in (("recall", {"q": "renewal"}), ("recent", {}), ("tree", {})):
        answer = await server.api(endpoint, query(path="project/analysis.ipynb", **extra))
        assert answer.code == 200 and "Quartermain" not in answer.body.decode(), endpoint


def test_a_correction_in_another_process_unpins_the_superseded_layer1_line(
    claude_shell: RaisingShell,
    api: FakeMessagesAPI,
    memory_root: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    claude_shell.run_cell("%config Hipo.auto_checkpoint = False")
    run(claude_shell, "%%remember Renewal price [project]\n- outcome: 9,999 EUR a seat")
    wrong = only_id(capsys.readouterr().out)
    run(claude_shell, "%%ask\nWhat should the offer say?")
    assert "9,999 EUR" in json.dumps(api.requests[-1], ensure_ascii=False)  # ROOT.md, pinned

    fixed = run_hipo(memory_root, "remember", "Renewal price [project]", "--replaces", wrong,
                     stdin="- outcome: 99 EUR a seat\n")  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    run(claude_shell, "%%ask\nAnd now?")
    sent = json.dumps(api.requests[-1], ensure_ascii=False)
    assert "99 EUR a seat" in sent and "9,999 EUR" not in sent
