"""`hipo import` takes the exports people download (issue 52, item 3; issue 48, items 1 and 6;
issue 53, item 4): ChatGPT's and Claude.ai's `conversations.json` in their real shapes, alone,
in a folder or in a zip; hostile variants are one line naming the record; a large export is
streamed; turns keep their source's ids (or one made from content and conversation); what was
left out is counted by kind; exchanges take their conversation's title. The real `hipo`
command, in process (`cli.main`) and as a process where a hang must be caught."""

from __future__ import annotations

import copy
import io
import json
import os
import stat
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run_hipo
from test_magics import bare_shell, shell  # noqa: F401  (fixtures: a real kernel with hipo)

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory.intake import plan_import
from hipo_jupyter.memory.intake import stream as json_stream

TODAY = "2026-03-12"


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch):
    """Export times are epoch seconds; pin the zone so the expected days hold anywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def hipo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], memory_root: Path):
    monkeypatch.setenv("HIPO_TODAY", TODAY)

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = cli.main(["--root", str(memory_root), *args])
        except SystemExit as exit_:  # argparse
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def node(node_id, parent, children, role=None, parts=None, *, when=None, **message):
    """A ChatGPT mapping node as the export writes it."""
    body = None
    if role is not None:
        content = message.pop("content", {"content_type": "text", "parts": parts or []})
        body = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": when,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": message.pop("metadata", {}),
            "recipient": message.pop("recipient", "all"),
            "channel": None,
        }
    return node_id, {"id": node_id, "message": body, "parent": parent, "children": children}


MARCH_2 = 1772445600.0  # 2026-03-02T10:00:00Z


def chatgpt_conversation() -> dict:
    """One conversation with what a real export holds: an empty root, hidden system context,
    a regenerated answer (two branches: the user last saw the second), a reasoning model's
    thoughts, a code call to the python tool, its output, and an uploaded image."""
    nodes = dict(
        [
            node("root", None, ["sys"]),
            node("sys", "root", ["u1"], "system", ["The user wants short answers."],
                 metadata={"is_visually_hidden_from_conversation": True}),
            node("u1", "sys", ["a1-old", "think"], "user",
                 ["What is the mean order value in the March cohort?"], when=MARCH_2),
            node("a1-old", "u1", [], "assistant", ["An abandoned first answer."], when=MARCH_2 + 5),
            node("think", "u1", ["a1"], "assistant", when=MARCH_2 + 6,
                 content={"content_type": "thoughts", "thoughts": [
                     {"summary": "Computing", "content": "I should run the mean."}]}),
            node("a1", "think", ["tool1"], "assistant", when=MARCH_2 + 6, recipient="python",
                 content={"content_type": "code", "language": "unknown",
                          "text": "df.order_value.mean()"}),
            node("tool1", "a1", ["a2"], "tool", when=MARCH_2 + 7,
                 content={"content_type": "execution_output", "text": "42.7"}),
            node("a2", "tool1", ["u2"], "assistant",
                 ["The March cohort's mean order value is 42.7 EUR."], when=MARCH_2 + 8),
            node("u2", "a2", ["a3"], "user", when=MARCH_2 + 60,
                 content={"content_type": "multimodal_text", "parts": [
                     {"content_type": "image_asset_pointer",
                      "asset_pointer": "file-service://file-abc", "size_bytes": 1234},
                     "Does this chart agree?",
                 ]}),
            node("a3", "u2", [], "assistant", ["Yes, the chart shows the same 42.7."],
                 when=MARCH_2 + 70),
        ]
    )  # fmt: skip
    return {
        "title": "Order value by cohort",
        "create_time": MARCH_2,
        "update_time": MARCH_2 + 70,
        "mapping": nodes,
        "moderation_results": [],
        "current_node": "a3",
        "plugin_ids": None,
        "conversation_id": "c0ffee00-0000-4000-8000-000000000001",
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": "c0ffee00-0000-4000-8000-000000000001",
    }


def claude_ai_conversation() -> dict:
    return {
        "uuid": "5a7e0000-0000-4000-8000-00000000000a",
        "name": "Churn model features",
        "created_at": "2026-03-04T09:00:00.000000Z",
        "updated_at": "2026-03-04T09:05:00.000000Z",
        "account": {"uuid": "acc-1"},
        "chat_messages": [
            {
                "uuid": "m-human-1",
                "text": "Which features matter most for churn?",
                "content": [{"start_timestamp": None, "stop_timestamp": None, "type": "text",
                             "text": "Which features matter most for churn?", "citations": []}],
                "sender": "human",
                "created_at": "2026-03-04T09:00:00.000000Z",
                "updated_at": "2026-03-04T09:00:00.000000Z",
                "attachments": [{"file_name": "features.csv", "file_size": 120,
                                 "file_type": "text/csv", "extracted_content": "a,b\n1,2"}],
                "files": [{"file_name": "plot.png"}],
            },
            {
                "uuid": "m-assistant-1",
                "text": "Tenure and support tickets dominate.",
                "content": [{"type": "text", "text": "Tenure and support tickets dominate."}],
                "sender": "assistant",
                "created_at": "2026-03-04T09:00:10.000000Z",
                "updated_at": "2026-03-04T09:00:10.000000Z",
                "attachments": [],
                "files": [],
            },
        ],
    }  # fmt: skip


def logged(root: Path, day: str) -> list:
    path = root / "memory" / f"{day}.md"
    return parse_log(path.read_text(), date=day) if path.is_file() else []


def raw_days(root: Path) -> list[str]:
    folder = root / "memory"
    return sorted(p.stem for p in folder.glob("2*.md")) if folder.is_dir() else []


# --- the two exports ---------------------------------------------------------------------------


def test_a_chatgpt_export_follows_the_branch_the_user_saw(hipo, memory_root: Path) -> None:
    export = memory_root.parent / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation()]))
    code, out, err = hipo("import", str(export))
    assert code == 0, err
    assert "Imported 2 turns of 1 conversation from conversations.json" in out
    assert "Left out: 1 image, 1 reasoning, 1 system message, 1 tool call." in out
    first, second = logged(memory_root, "2026-03-02")
    assert (first.id, second.id) == ("u1", "u2")  # the source's own node ids
    assert first.title == second.title == "Order value by cohort"  # the conversation's title
    assert first.field("request") == "What is the mean order value in the March cohort?"
    outcome = first.field("outcome")
    assert "abandoned" not in outcome  # the branch the user did not see is not imported
    assert "[tool result]\n42.7" in outcome and "mean order value is 42.7 EUR" in outcome
    assert second.field("request") == "Does this chart agree?"
    code, out, _ = hipo("import", str(export))  # again: nothing new
    assert code == 0 and "its 2 turns are already in memory" in out
    assert len(logged(memory_root, "2026-03-02")) == 2
    code, out, _ = hipo("recall", "mean order value cohort")
    assert "Order value by cohort" in out and "user" not in out.split()


def test_a_claude_ai_export_keeps_titles_and_uuids(hipo, memory_root: Path) -> None:
    export = memory_root.parent / "conversations.json"
    untitled = claude_ai_conversation()
    untitled.update(uuid="other", name="")
    untitled["chat_messages"] = [
        dict(untitled["chat_messages"][0], uuid="m-2", content=[], files=[], attachments=[],
             text="Plan the retention email for April.", created_at="2026-03-05T08:00:00Z")
    ]  # fmt: skip
    export.write_text(json.dumps([claude_ai_conversation(), untitled]))
    code, out, err = hipo("import", str(export))
    assert code == 0, err
    assert "Imported 2 turns of 2 conversations" in out
    assert "Left out: 1 attachment, 1 image." in out
    (exchange,) = logged(memory_root, "2026-03-04")
    assert (exchange.id, exchange.title) == ("m-human-1", "Churn model features")
    assert exchange.field("outcome") == "Tenure and support tickets dominate."
    (turn,) = logged(memory_root, "2026-03-05")  # no title: the request's first words
    assert turn.title == "Plan the retention email for April"


def test_an_unknown_list_says_it_is_unknown(hipo, memory_root: Path) -> None:
    other = memory_root.parent / "orders.json"
    other.write_text(json.dumps([{"order": 1, "total": 9.5}]))
    code, out, err = hipo("import", str(other))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "orders.json: unknown format" in line and "record 1" not in line
    assert "ChatGPT" in line and "--format" in line


def test_a_record_key_with_a_newline_or_an_escape_stays_one_line() -> None:
    """The keys the error names come from the file: shown quoted, so a newline or a terminal
    escape in one is neither a second line nor live (hypothesis found `[{"\\n": null}]`)."""
    from hipo_jupyter.memory.intake.importers import ImportFormatError, detect_format

    with pytest.raises(ImportFormatError) as raised:
        detect_format(json.dumps([{"\n": None, "\x1b[2J": 1}]), "odd.json")
    (line,) = str(raised.value).splitlines()
    assert "odd.json: unknown format" in line and "\x1b" not in line


# --- hostile variants: one line naming the record, nothing written, no hang ----------------------


def _cycle(c: dict) -> None:
    c["mapping"]["root"]["parent"] = "a3"


def _missing_parent(c: dict) -> None:
    c["mapping"]["u2"]["parent"] = "gone"


DEEP = "nested-5000-deep"  # replaced in the file's text: json.dumps cannot write it


def _deep(c: dict) -> None:
    c["mapping"]["a2"]["message"]["content"]["parts"] = DEEP


HOSTILE_CHATGPT = [
    (_cycle, ["conversation 1", "cycle"]),
    (_missing_parent, ["conversation 1", "'gone'", "not in the mapping"]),
    (lambda c: c.update(mapping=None), ["conversation 1", "'mapping' is null"]),
    (lambda c: c["mapping"].update(a2=7), ["conversation 1", "node 'a2'"]),
    (lambda c: c["mapping"]["a2"].update(message="hi"), ["node 'a2'", "'message'"]),
    (lambda c: c["mapping"]["a2"]["message"].update(author=None), ["node 'a2'", "author.role"]),
    (lambda c: c["mapping"]["a2"]["message"]["content"].update(parts="x"), ["'content.parts'"]),
    (lambda c: c.update(current_node=17), ["'current_node'"]),
    (lambda c: c["mapping"]["a2"]["message"].update(create_time="soon"), ["bad 'create_time'"]),
    (_deep, ["conversation 1", "nested deeper"]),
]


@pytest.mark.parametrize(("spoil", "words"), HOSTILE_CHATGPT)
def test_a_hostile_chatgpt_export_is_one_line(hipo, memory_root: Path, spoil, words) -> None:
    good = chatgpt_conversation()
    bad = copy.deepcopy(good)
    spoil(bad)
    export = memory_root.parent / "conversations.json"
    text = json.dumps([good, bad] if words[0] != "conversation 1" else [bad, good])
    export.write_text(text.replace(f'"{DEEP}"', "[" * 5_000 + "]" * 5_000))
    code, out, err = hipo("import", str(export))
    assert code == 2 and out == "", out
    (line,) = err.strip().splitlines()
    assert line.startswith("hipo: error: conversations.json conversation ")
    for word in words:
        assert word in line
    if spoil is not _deep:  # a conversation that cannot be decoded has no title to show
        assert "Order value by cohort" in line  # the record named by its title too
    assert raw_days(memory_root) == []  # checked whole before anything is written


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (lambda c: c.update(chat_messages=None), "'chat_messages' is null"),
        (lambda c: c["chat_messages"].__setitem__(1, "hi"), "message 2: expected an object"),
        (lambda c: c["chat_messages"][0].pop("sender"), "message 1: a message without a 'sender'"),
        (lambda c: c["chat_messages"][1].update(uuid=None), "message 2: a message without a"),
        (lambda c: c["chat_messages"][0].update(content=[5]), "a content block is int"),
    ],
)
def test_a_hostile_claude_ai_export_is_one_line(hipo, memory_root: Path, spoil, words) -> None:
    bad = claude_ai_conversation()
    spoil(bad)
    export = memory_root.parent / "conversations.json"
    export.write_text(json.dumps([claude_ai_conversation(), bad]))
    code, out, err = hipo("import", str(export))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "conversations.json conversation 2 ('Churn model features')" in line and words in line
    assert raw_days(memory_root) == []


def test_a_cycle_never_hangs_the_real_command(memory_root: Path) -> None:
    bad = chatgpt_conversation()
    bad["mapping"]["u1"]["parent"] = "a3"  # a3 -> ... -> u1 -> a3
    export = memory_root.parent / "conversations.json"
    export.write_text(json.dumps([bad]))
    done = run_hipo(memory_root, "import", str(export))  # a 120 s timeout would fail the test
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cycle" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# --- identity (issue 48) -----------------------------------------------------------------------


def test_two_different_id_less_chats_of_the_same_name_both_store(hipo, memory_root: Path) -> None:
    chats = []
    for folder, words in (("monday", "Move the standup to 10"), ("tuesday", "Ship the report")):
        (memory_root.parent / folder).mkdir()
        chat = memory_root.parent / folder / "chat.json"
        chat.write_text(json.dumps([
            {"role": "user", "content": words, "time": "2026-03-03T09:00:00"},
            {"role": "assistant", "content": "Done."},
        ]))  # fmt: skip
        chats.append(chat)
    for chat in chats:
        code, out, err = hipo("import", str(chat))
        assert code == 0 and "Imported 1 turns" in out, (out, err)
    requests = [c.field("request") for c in logged(memory_root, "2026-03-03")]
    assert requests == ["Move the standup to 10", "Ship the report"]
    code, out, _ = hipo("import", str(chats[1]))
    assert code == 0 and "already in memory" in out
    assert len(logged(memory_root, "2026-03-03")) == 2


# --- a folder, a zip ----------------------------------------------------------------------------


def test_a_zip_as_downloaded(hipo, memory_root: Path) -> None:
    archive = memory_root.parent / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("conversations.json", json.dumps([chatgpt_conversation()]))
        zipped.writestr("user.json", json.dumps({"id": "user-1", "email": "a@example.org"}))
        zipped.writestr("message_feedback.json", "[]")
        zipped.writestr("chat.html", "<html></html>")
        zipped.writestr("file-abc.png", b"\x89PNG")
        zipped.writestr("../escape.json", json.dumps([chatgpt_conversation()]))
        link = zipfile.ZipInfo("link.json")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zipped.writestr(link, "/etc/passwd")
    code, out, err = hipo("import", str(archive))
    assert code == 0, err
    assert "Imported 2 turns of 1 conversation from chatgpt-export.zip" in out
    assert "user.json" in out and "message_feedback.json" in out  # not chats, named
    assert "../escape.json (unsafe" in out and "link.json (unsafe" in out
    assert [c.id for c in logged(memory_root, "2026-03-02")] == ["u1", "u2"]
    assert not (memory_root.parent.parent / "escape.json").exists()


def test_a_zip_member_larger_than_it_says_is_read_bounded(
    hipo, memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hipo_jupyter.memory.intake import sources

    monkeypatch.setattr(sources, "MAX_IMPORT_BYTES", 10_000)
    archive = memory_root.parent / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("conversations.json", json.dumps([chatgpt_conversation()] * 20))
    code, out, err = hipo("import", str(archive))
    assert code == 2 and "over 10,000 bytes; not read" in err
    assert raw_days(memory_root) == []


def test_a_folder_of_both_exports(hipo, memory_root: Path) -> None:
    folder = memory_root.parent / "exports"
    (folder / "openai").mkdir(parents=True)
    (folder / "claude").mkdir()
    (folder / "openai" / "conversations.json").write_text(json.dumps([chatgpt_conversation()]))
    (folder / "claude" / "conversations.json").write_text(json.dumps([claude_ai_conversation()]))
    (folder / "claude" / "projects.json").write_text(json.dumps([{"uuid": "p", "name": "P"}]))
    code, out, err = hipo("import", str(folder))
    assert code == 0, err
    assert "Imported 3 turns of 2 conversations from exports" in out
    assert "exports/claude/projects.json" in out
    assert raw_days(memory_root) == ["2026-03-02", "2026-03-04"]


# --- streaming ------------------------------------------------------------------------------------


def write_large_export(path: Path, megabytes: int) -> int:
    """A ChatGPT export of about `megabytes` MB, written a conversation at a time; returns
    the number of conversations."""
    template = chatgpt_conversation()
    words = "cohort revenue churn figure " * 400  # ~11 kB a turn
    count = 0
    with path.open("w") as out:
        out.write("[")
        while out.tell() < megabytes << 20:
            conversation = copy.deepcopy(template)
            for key in ("u1", "a2", "a3"):
                parts = conversation["mapping"][key]["message"]["content"]["parts"]
                parts[0] = f"{count} {words}"
            conversation["title"] = f"Conversation {count}"
            shift = (count % 365) * 86400.0  # a year of days, as a real export spans
            mapping = {}
            for key, item in conversation["mapping"].items():  # ids unique, as ChatGPT's are
                item["id"] = f"{count}-{key}"
                item["parent"] = f"{count}-{item['parent']}" if item["parent"] else None
                item["children"] = [f"{count}-{child}" for child in item["children"]]
                if item["message"] is not None and item["message"]["create_time"]:
                    item["message"]["create_time"] += shift
                mapping[item["id"]] = item
            conversation["mapping"] = mapping
            conversation["current_node"] = f"{count}-a3"
            out.write(("," if count else "") + json.dumps(conversation))
            count += 1
        out.write("]")
    return count


def test_a_large_export_streams_in_bounded_memory(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    conversations = write_large_export(export, 50)
    size = export.stat().st_size
    seen: list[int] = []
    tracemalloc.start()
    try:
        plan = plan_import(export, progress=lambda done, total, label: seen.append(done))
        turns = sum(len(batch) for batch in plan.batches())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (plan.conversations, plan.turns, turns) == (conversations, 2 * conversations, turns)
    assert turns == 2 * conversations
    # never the whole file (50 MB, its text would be more as str): one chunk, one conversation,
    # one batch of at most sources.BATCH_CHARS
    assert peak < size / 4, f"peak {peak:,} bytes for a {size:,} byte export"
    assert seen[-1] == size and len(seen) > 10  # the progress moved through the file


def test_the_progress_bar_shows_when_asked(hipo, memory_root: Path) -> None:
    export = memory_root.parent / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation()]))
    code, _, err = hipo("import", str(export), "--progress")
    assert code == 0 and "conversations.json" in err and "%" in err
    code, _, err = hipo("import", str(export))  # not a TTY, not asked: quiet
    assert code == 0 and err == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(json_values, max_size=8), st.integers(1, 64), st.sampled_from([None, 1, "\t"]))
def test_the_stream_reader_reads_any_list_at_any_chunk_size(values, chunk, indent) -> None:
    text = json.dumps(values, indent=indent, ensure_ascii=False)
    original = json_stream.CHUNK_BYTES
    json_stream.CHUNK_BYTES = chunk
    try:
        read = list(json_stream.array_elements(io.BytesIO(text.encode()), "x.json"))
    finally:
        json_stream.CHUNK_BYTES = original
    assert read == values


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "is empty"),
        (b'{"a": 1}', "not a JSON list"),
        (b"[1, 2", "the file ends inside the list"),
        (b'[{"a": }]', "element 1 (line 1): not valid JSON"),
        (b'[1]\n\n"more"', "line 3: text after the end of the list"),
        (b'[1, "\xff"]', "not UTF-8 text (byte 5)"),
        (b"[1e999]", "out of range"),
        (b'["unterminated', "not valid JSON"),
    ],
)
def test_the_stream_reader_names_what_is_wrong(data: bytes, words: str) -> None:
    with pytest.raises(json_stream.StreamError, match="x.json") as raised:
        list(json_stream.array_elements(io.BytesIO(data), "x.json"))
    assert words in str(raised.value)


def test_a_fifo_is_refused_at_once(hipo, memory_root: Path) -> None:
    fifo = memory_root.parent / "conversations.json"
    os.mkfifo(fifo)
    code, _, err = hipo("import", str(fifo))
    assert code == 2 and "FIFO" in err


# --- the title everywhere (issue 53, item 4) ---------------------------------------------------


def test_an_imported_exchange_is_titled_in_recall_and_the_sidebar(
    shell,  # noqa: F811
    memory_root: Path,
) -> None:
    """`%recall` in a real kernel and the sidebar's recent list read the checkpoint's title,
    which the import set from the conversation: never "user"."""
    export = memory_root.parent / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation()]))
    assert run_hipo(memory_root, "import", str(export)).returncode == 0
    hits = shell.run_line_magic("recall", "mean order value cohort")
    assert hits and {hit.title for hit in hits} == {"Order value by cohort"}
    memory = Memory(memory_root)
    recent = memory.recent_checkpoints(5)  # what the sidebar lists
    memory.close()
    assert [c.title for c in recent] == ["Order value by cohort"] * 2


# --- any shape: records or one ImportFormatError, never another exception ------------------------

any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2_000_000_000) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
node_ids = st.sampled_from(["a", "b", "c", "d"])
messages = st.none() | any_json | st.fixed_dictionaries(
    {"author": st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool",
                                                                "system", ""]) | any_json}),
     "content": st.none() | any_json | st.fixed_dictionaries({
         "content_type": st.sampled_from(["text", "code", "multimodal_text",
                                          "execution_output", "thoughts"]),
         "parts": st.lists(st.text(max_size=20) | any_json, max_size=3) | any_json,
         "text": st.text(max_size=10) | any_json}),
     "create_time": st.none() | st.floats(0, 5e9) | any_json,
     "recipient": st.sampled_from(["all", "python", None])})  # fmt: skip
mappings = st.dictionaries(
    node_ids,
    st.fixed_dictionaries({"parent": st.none() | node_ids | st.just("zz") | any_json,
                           "children": st.lists(node_ids, max_size=2), "message": messages})
    | any_json,
    max_size=4,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(mappings, st.none() | node_ids | any_json, st.text(max_size=8) | any_json)
def test_any_chatgpt_shape_is_records_or_one_line(mapping, current, title) -> None:
    from collections import Counter

    from hipo_jupyter.memory.intake.exports import chatgpt_records
    from hipo_jupyter.memory.intake.importers import ImportFormatError

    conversation = {"title": title, "mapping": mapping, "current_node": current}
    try:
        records = chatgpt_records(conversation, "c.json conversation 1", Counter())
    except ImportFormatError as error:
        assert "\n" not in str(error) and str(error).startswith("c.json conversation 1")
    else:
        assert all(record.source in mapping for record in records)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({"uuid": st.text(max_size=5) | any_json,
                                       "sender": st.sampled_from(["human", "assistant"]) | any_json,
                                       "text": st.text(max_size=10) | any_json,
                                       "content": any_json, "created_at": any_json}) | any_json,
                max_size=3) | any_json)  # fmt: skip
def test_any_claude_ai_shape_is_records_or_one_line(messages) -> None:
    from collections import Counter

    from hipo_jupyter.memory.intake.exports import claude_ai_records
    from hipo_jupyter.memory.intake.importers import ImportFormatError

    try:
        claude_ai_records({"name": "n", "chat_messages": messages}, "c.json conversation 1",
                          Counter())  # fmt: skip
    except ImportFormatError as error:
        assert "\n" not in str(error) and str(error).startswith("c.json conversation 1")
