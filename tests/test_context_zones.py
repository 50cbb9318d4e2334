"""A long %%ask conversation in three zones: ANCHOR never rewritten, SUMMARY rewritten on a
trigger (over half the window, a sub-task done, a turn over ~8k tokens), ACTIVE verbatim; each
compaction logged; saved beside the memory so a restarted kernel continues it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    new_shell,
    run,
    served_fixture,
)

from hipo_jupyter import llm
from hipo_jupyter.ipython import load_ipython_extension, unload_ipython_extension
from hipo_jupyter.llm.conversation import (
    LARGE_TURN_TOKENS,
    SUMMARY_TOKENS,
    TRIGGER_DONE,
    TRIGGER_LARGE,
    TRIGGER_WINDOW,
    Conversation,
    Turn,
    conversation_path,
    extractive_fold,
    make_anchor,
)
from hipo_jupyter.memory.tree.tokens import count_tokens
from hipo_jupyter.memory.tree.topics import identifiers

ANCHOR = (
    "Goal: migrate the orders_v2 table to PostgreSQL by 2026-04-01 under ticket PRJ-1423. "
    "Constraints: keep CustomerID stable, stay under 15k USD, owner @maria."
)
ANCHOR_IDS = ["orders_v2", "PostgreSQL", "2026-04-01", "PRJ-1423", "CustomerID", "@maria"]


def step(n: int) -> str:
    """One scripted question: ~150 tokens naming its own identifiers."""
    filler = " ".join(f"detail{n}x{i}" for i in range(60))
    return f"Step {n}: backfill partition part_{n} of shard SHARD-{n}, check {filler}."


def test_a_long_conversation_compacts_and_the_anchor_never_changes() -> None:
    conversation = Conversation()
    window = 6_000
    hashes = set()
    for n in range(40):
        question = ANCHOR if n == 0 else step(n)
        extra = count_tokens(question)
        if conversation.over_half(extra, window):
            event = conversation.compact(TRIGGER_WINDOW, extra_tokens=extra, window=window)
            assert event is not None and event.tokens_after < event.tokens_before
            assert conversation.active[0].role == "user" and len(conversation.active) <= 4
            hashes.add(event.anchor_hash)
        conversation.add_exchange(question, f"Done with step {n}; next is part_{n + 1}.")
        assert conversation.live_tokens() < window

    assert 3 <= len(conversation.compactions) <= 10  # folds enough each time not to thrash
    assert hashes == {conversation.anchor_hash} and conversation.anchor == ANCHOR
    block = llm.conversation_block(
        conversation.anchor, conversation.anchor_hash, conversation.summary
    )
    for identifier in ANCHOR_IDS:
        assert identifier in block
    summary_ids = set(identifiers(conversation.summary))
    for n in range(1, 40 - len(conversation.active) // 2):  # every folded step, by its ids
        assert f"SHARD-{n}" in summary_ids, n


def test_extractive_fold_stays_in_budget_and_keeps_every_identifier() -> None:
    turns = [Turn("user", step(n) + " " + "lorem ipsum " * 200) for n in range(60)]
    summary = ""
    for start in range(0, 60, 10):
        summary = extractive_fold(summary, turns[start : start + 10])
    assert count_tokens(summary) <= SUMMARY_TOKENS + 200
    assert "- earlier ids: " in summary
    for n in range(60):
        assert f"SHARD-{n}" in summary


def test_a_long_first_question_keeps_its_identifiers_in_the_anchor() -> None:
    question = ANCHOR + " " + "background " * 2000 + " final id ZZ-9999 in appendix/notes.md"
    anchor = make_anchor(question)
    assert count_tokens(anchor) < 1_500
    assert "ZZ-9999" in anchor and "appendix/notes.md" in anchor and anchor.startswith("Goal:")


def test_large_turns_go_to_knowledge_and_trigger_a_fold() -> None:
    conversation = Conversation()
    conversation.add_exchange(ANCHOR, "Noted.")
    conversation.add_exchange("Which tables first?", "orders_v2 then payments.")
    big = "\n".join(f"row {n}: invoice INV-{n} total ${n}.00" for n in range(2500))
    assert count_tokens(big) > LARGE_TURN_TOKENS
    conversation.add_exchange("Here is the export", big)
    saved: dict[str, str] = {}

    def save(title: str, text: str) -> str:
        saved[title] = text
        return "knowledge/2026-03-12-export.md"

    assert conversation.offload_large(save) == ["knowledge/2026-03-12-export.md"]
    assert saved == {"reply: Here is the export": big}
    pointer = conversation.active[-1].text
    assert pointer.startswith("[") and "moved to knowledge/2026-03-12-export.md" in pointer
    assert "INV-0" in pointer and count_tokens(pointer) < 300
    event = conversation.compact(conversation.pending)
    assert event is not None and event.trigger == TRIGGER_LARGE and event.folded == 2
    assert conversation.offload_large(save) == []  # once only


def test_a_failing_claude_fold_falls_back_and_says_why(api: FakeMessagesAPI) -> None:
    conversation = Conversation()
    for n in range(4):
        conversation.add_exchange(ANCHOR if n == 0 else step(n), f"ok {n}")
    api.failures.append(500)
    folder = llm.ClaudeFolder(client=api.client())
    event = conversation.compact(TRIGGER_DONE, folder, fold_name="claude")
    assert event.summarizer == "extractive"
    assert event.note.startswith("claude fold failed (Claude API: error 500")
    assert "SHARD-1" in conversation.summary  # the extractive fold did the work

    api.replies.append("- migration of orders_v2 planned; part_3 checked")
    conversation.add_exchange(step(9), "ok 9")
    conversation.add_exchange(step(10), "ok 10")
    event = conversation.compact(TRIGGER_DONE, folder, fold_name="claude")
    assert event.summarizer == "claude" and not event.note
    assert conversation.summary.startswith("- migration of orders_v2 planned; part_3 checked")
    assert "SHARD-9" in conversation.summary  # ids the reply dropped are added back
    request = api.message_requests()[-1]
    assert "system" in request and "<hipo-layer1-" not in json.dumps(request)


def test_the_conversation_file_round_trips(tmp_path: Path) -> None:
    conversation = Conversation()
    conversation.add_exchange(ANCHOR, "Noted.")
    conversation.add_exchange(step(1), "ok")
    conversation.compact(TRIGGER_DONE)
    path = conversation_path(tmp_path, "analysis.ipynb")
    assert path.parent == tmp_path / "memory" / ".conversations"
    assert path.name.startswith("analysis-") and path.suffix == ".json"
    conversation.save(path)
    assert Conversation.load(path) == conversation
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a conversation file"):
        Conversation.load(path)


# --- through %%ask --------------------------------------------------------------------------------
def status_text(body: dict) -> str:
    """The context-status note of a request (after the stable blocks)."""
    return next(b["text"] for b in body["system"] if b["text"].startswith("[context status]"))


def ask(shell, question: str, options: str = "") -> None:
    run(shell, f"%%ask {options}\n{question}")


def test_ask_compacts_a_long_conversation_and_logs_it(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys
) -> None:
    claude_shell.run_cell("%config Hipo.context_window = 4000")
    # Layer 1 held still: each write-back is in ROOT.md at once, and in a window this small a
    # Layer 1 grown by sixteen of them could pass half the window alone (no fold can help)
    claude_shell.run_cell("%config Hipo.auto_checkpoint = False")
    for n in range(16):
        ask(claude_shell, ANCHOR if n == 0 else step(n))

    out = capsys.readouterr().out
    logged = re.findall(
        r"hipo: conversation compacted \(live tokens over half the window\): "
        r"[\d,]+ -> [\d,]+ tokens, \d+ turns folded, anchor ([0-9a-f]{16})",
        out,
    )
    assert len(logged) >= 3 and len(set(logged)) == 1
    saved = json.loads((memory_root / "memory" / ".conversations" / "console.json").read_text())
    assert saved["anchor"] == ANCHOR
    assert {event["anchor_hash"] for event in saved["compactions"]} == set(logged)

    bodies = api.message_requests()
    folded = [b for b in bodies if any("<hipo-conversation-" in s["text"] for s in b["system"])]
    assert len(folded) >= 3
    for body in folded:
        zones = body["system"][1]["text"]  # stable, so right after Layer 1 (caching)
        assert f"sha256 {logged[0]}" in zones
        for identifier in ANCHOR_IDS:
            assert identifier in zones
        roles = [message["role"] for message in body["messages"]]
        assert roles[0] == "user" and roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
        assert "(~" in body["system"][2]["text"]  # the status note changes: after the zones
    shares = [int(re.search(r"\(~(\d+)%\)", status_text(b)).group(1)) for b in bodies]
    assert max(shares) <= 50  # every call went out under half the window


def test_ask_done_folds_the_finished_sub_task(claude_shell, api: FakeMessagesAPI, capsys) -> None:
    for n in range(3):
        ask(claude_shell, ANCHOR if n == 0 else step(n))
    claude_shell.run_cell("%ask done backfill of SHARD-1 and SHARD-2 verified")
    out = capsys.readouterr().out
    assert f"conversation compacted ({TRIGGER_DONE}): " in out and "4 turns folded" in out
    ask(claude_shell, "What is left?")
    body = api.message_requests()[-1]
    zones = body["system"][1]["text"]
    assert "- done: backfill of SHARD-1 and SHARD-2 verified" in zones and ANCHOR in zones
    assert [m["content"] for m in body["messages"]][-1] == "What is left?"
    assert len(body["messages"]) == 3

    claude_shell.run_cell("%ask status")
    status = capsys.readouterr().out
    assert "conversation console.json: 8 turns" in status and "4 turns folded" in status


def test_a_large_reply_in_ask_keeps_only_a_pointer(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    big = "\n".join(f"row {n}: invoice INV-{n} total ${n}.00" for n in range(2500))
    api.replies.extend(["Noted.", big])
    ask(claude_shell, ANCHOR)
    ask(claude_shell, "Export every invoice")
    ask(claude_shell, "Which invoice is largest?")
    (saved,) = (memory_root / "knowledge").glob("*.md")
    assert "INV-2499" in saved.read_text()
    last = api.message_requests()[-1]
    pointer = last["messages"][3]["content"]
    assert f"moved to knowledge/{saved.name}" in pointer and "INV-2499" not in pointer


def test_a_restarted_kernel_continues_the_conversation(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys
) -> None:
    ask(claude_shell, ANCHOR)
    ask(claude_shell, step(1))
    unload_ipython_extension(claude_shell)

    restarted = new_shell()
    restarted.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    restarted.run_cell("%config Hipo.summarizer = 'extractive'")
    load_ipython_extension(restarted)
    try:
        capsys.readouterr()
        ask(restarted, "Where were we?")
        assert "continuing the conversation in console.json (4 turns)" in capsys.readouterr().out
        body = api.message_requests()[-1]
        assert [m["content"] for m in body["messages"]][::2] == [ANCHOR, step(1), "Where were we?"]
    finally:
        unload_ipython_extension(restarted)


def test_new_and_reset_start_afresh_and_keep_the_old_file(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    ask(claude_shell, ANCHOR)
    ask(claude_shell, "Another topic entirely", options="--new")
    assert len(api.message_requests()[-1]["messages"]) == 1
    claude_shell.run_cell("%ask reset")
    ask(claude_shell, "Third start")
    assert len(api.message_requests()[-1]["messages"]) == 1
    folder = memory_root / "memory" / ".conversations"
    archived = sorted(p.name for p in folder.glob("console-*.json"))
    assert len(archived) == 2 and (folder / "console.json").is_file()
