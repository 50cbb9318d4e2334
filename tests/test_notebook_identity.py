"""A conversation and a "last sent" record belong to one notebook, keyed by its identity (its
path relative to the memory root, or its kernel), never by a slug of its name (issue 43):
"report.ipynb" and "The report.ipynb" keep two `%%ask` conversations, a notebook with a
non-ASCII name has its own "last sent" record (the sidebar's, through `/hipo/api/sent`), and a
file an older version named by the slug is still read when it can only be this notebook's."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter.llm.conversation import Conversation
from hipo_jupyter.memory import Memory, Sent
from hipo_jupyter.memory.disk import notebook_stem


def in_notebook(shell, path: Path | None) -> None:
    """The shell runs `path` as ipykernel tells a kernel (`__session__`), or a console."""
    shell.user_ns.pop("__session__", None)
    if path is not None:
        path.write_text("{}")
        shell.user_ns["__session__"] = str(path)


def asked(api: FakeMessagesAPI) -> str:
    return json.dumps(api.message_requests()[-1]["messages"])


def test_notebooks_named_alike_keep_their_own_conversations(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    report, the_report = memory_root / "report.ipynb", memory_root / "The report.ipynb"
    in_notebook(claude_shell, report)
    run(claude_shell, "%%ask\nWhat about pricing?")
    in_notebook(claude_shell, the_report)
    run(claude_shell, "%%ask\nWhat about hiring?")
    assert "pricing" not in asked(api)
    in_notebook(claude_shell, report)
    run(claude_shell, "%%ask\nAnd churn?")
    assert "pricing" in asked(api) and "hiring" not in asked(api)
    kept = {p.name for p in (memory_root / "memory" / ".conversations").glob("*.json")}
    for name in ("report.ipynb", "The report.ipynb"):
        assert f"{notebook_stem(name)}.json" in kept
    assert notebook_stem("report.ipynb").startswith("report-")
    assert notebook_stem("The report.ipynb").startswith("the-report-")


async def test_a_non_ascii_notebook_has_its_own_last_sent_record(
    claude_shell, notebook_folder, api_get
) -> None:
    folder = notebook_folder("project", notebook="数据.ipynb")
    run(claude_shell, f"%config Hipo.root = {str(folder)!r}")
    in_notebook(claude_shell, folder / "数据.ipynb")
    run(claude_shell, "%%ask\nWhat about the data?")
    in_notebook(claude_shell, None)  # a console in the same folder
    run(claude_shell, "%%ask --no-memory\nAnd the console?")

    status, body = await api_get("sent", path="project/数据.ipynb")
    assert status == 200 and body["sent"]["notebook"] == "数据.ipynb"
    console = Memory(folder).last_sent(None)
    assert console is not None and console.notebook == ""
    assert notebook_stem("数据.ipynb").startswith("数据-")


def test_an_old_conversation_is_continued_when_it_can_only_be_this_notebooks(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys
) -> None:
    folder = memory_root / "memory" / ".conversations"
    old = Conversation()
    old.add_exchange("What about pricing?", "Cut the starter tier.")
    old.save(folder / "report.json")  # the name a version before issue 43 gave it
    in_notebook(claude_shell, memory_root / "report.ipynb")
    run(claude_shell, "%%ask\nAnd churn?")
    assert "Cut the starter tier." in asked(api)
    assert not (folder / "report.json").exists()
    assert (folder / f"{notebook_stem('report.ipynb')}.json").is_file()
    assert "report.json renamed" in capsys.readouterr().out


def test_an_old_conversation_two_notebooks_could_own_is_left_alone(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    folder = memory_root / "memory" / ".conversations"
    old = Conversation()
    old.add_exchange("What about pricing?", "Cut the starter tier.")
    old.save(folder / "report.json")
    (memory_root / "The report.ipynb").write_text("{}")
    in_notebook(claude_shell, memory_root / "report.ipynb")
    run(claude_shell, "%%ask\nAnd churn?")
    assert "Cut the starter tier." not in asked(api)
    assert Conversation.load(folder / "report.json") == old  # kept, untouched


def test_an_old_sent_record_is_read_only_for_the_notebook_it_names(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    memory.init()
    folder = memory_root / "memory" / ".conversations"
    folder.mkdir(parents=True, exist_ok=True)
    record = Sent(
        notebook="analysis.ipynb", at="2026-03-12T10:00:00+00:00", model="m", tokens=5, parts=()
    )
    (folder / "analysis.sent.json").write_text(json.dumps(record.to_json()))
    console = Sent(notebook="", at="2026-03-12T10:00:00+00:00", model="m", tokens=7, parts=())
    (folder / "console.sent.json").write_text(json.dumps(console.to_json()))
    assert memory.last_sent("analysis.ipynb") == record
    assert memory.last_sent("数据.ipynb") is None  # not the consoles' record
    assert memory.last_sent(None) == console
