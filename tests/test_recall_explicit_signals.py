"""Recall judges a notebook's memory on explicit signals and typed provenance (issue 49).

- A log of runs, measurements or standups is never marked "changed later": only a note that
  says it changes the earlier one, or gives one of its fields another value, is a change; the
  reversals beside them still are.
- Who wrote a hit is a typed field of the index and of the hit, read from the checkpoint:
  a notebook named with every display phrase changes nothing.
- A note dated in the future is refused, in one line, by the library and the CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, QueryError
from hipo_jupyter.memory.disk import VIA_CLI, VIA_MAGIC, VIA_MCP
from hipo_jupyter.memory.recall.corrections import NOT_ACCEPTED
from hipo_jupyter.memory.recall.supersession import CHANGED_LATER

REPO = Path(__file__).resolve().parent.parent
TODAY = date(2026, 3, 12)


@pytest.fixture
def memory(tmp_path: Path):
    opened = Memory(tmp_path / "root", today=lambda: TODAY)
    yield opened
    opened.close()


def marked(memory: Memory, query: str) -> list[str]:
    """The titles of the hits `query` finds that a later note changed (recall and context)."""
    hits = memory.recall(query, k=10).hits
    text = memory.context(query, budget=2000).text
    shown = [hit.title for hit in hits if hit.changed_later]
    assert (CHANGED_LATER in text) == bool(shown)
    return shown


def test_a_log_of_runs_is_not_outdated(memory: Memory) -> None:
    """Three runs of one model on three days share words and score alike: none is a change
    of another, and the best run (v2) is in the context unmarked."""
    runs = [
        ("v1", "0.81", "2026-03-02"),
        ("v2", "0.84", "2026-03-03"),
        ("v3", "0.83", "2026-03-04"),
    ]
    for version, auc, day in runs:
        memory.remember(f"churn model {version}", f"trained churn model {version}: AUC {auc}",
                        on=day, via=VIA_MAGIC)  # fmt: skip
    assert marked(memory, "which churn model has the best AUC?") == []
    assert "AUC 0.84" in memory.context("which churn model has the best AUC?", budget=500).text


def test_measurements_as_fields_and_standups_are_a_log(memory: Memory) -> None:
    for day, auc, rows in (("2026-03-02", "0.81", "120k"), ("2026-03-05", "0.84", "130k")):
        memory.remember("Churn training run", f"- model: gbm\n- auc: {auc}\n- rows: {rows}",
                        on=day, via=VIA_MAGIC)  # fmt: skip
    assert marked(memory, "churn training run auc") == []
    memory.remember("Standup", "- did: cleaned the churn features; changed the seed",
                    on="2026-03-09", via=VIA_MAGIC)  # fmt: skip
    memory.remember("Standup", "- did: churn features joined to billing", on="2026-03-10",
                    via=VIA_MAGIC)  # fmt: skip
    assert marked(memory, "what did the standup say about churn features?") == []


def test_reversals_are_still_marked(memory: Memory) -> None:
    """The negatives above beside the changes that must be marked: a field with another value,
    and a note that says it changes what the earlier one said."""
    memory.remember("Launch plan", "- launch: April\n- owner: Ana", on="2026-03-02", via=VIA_MAGIC)
    memory.remember("Launch plan", "- launch: May\n- owner: Ana", on="2026-03-05", via=VIA_MAGIC)
    assert marked(memory, "when is the launch?") == ["Launch plan"]
    memory.remember("Baseline", "- decisions: we score churn with logistic regression",
                    on="2026-03-06", via=VIA_MAGIC)  # fmt: skip
    memory.remember("Baseline", "- decisions: switched from logistic regression to GBM",
                    on="2026-03-09", via=VIA_MAGIC)  # fmt: skip
    hits = memory.recall("which churn baseline logistic regression?", k=10).hits
    old = next(hit for hit in hits if "we score churn" in hit.snippet)
    assert old.changed_later and "GBM" in hits[0].snippet


DISPLAY_PHRASES = (
    "an important launch.ipynb",  # "an import" inside
    "a Claude call's write-back.ipynb",
    "MCP (conversation c1).ipynb",
    f"a proposed rule, {NOT_ACCEPTED}.ipynb",
)


@pytest.mark.parametrize("notebook", DISPLAY_PHRASES)
def test_a_notebook_named_with_a_display_phrase_changes_nothing(
    tmp_path: Path, notebook: str
) -> None:
    """The README's April -> May reversal is applied, nothing reads as a write-back, an
    import or a proposal, and a context for conversation c1 leaves nothing out."""
    memory = Memory(tmp_path / "named", today=lambda: TODAY)
    try:
        memory.remember("Launch plan", "- decisions: the launch is in April", notebook=notebook,
                        cell="1", via=VIA_MAGIC, on="2026-03-10")  # fmt: skip
        memory.remember("Standup: moved the launch to May", "- moved the launch to May",
                        notebook=notebook, cell="2", via=VIA_MAGIC)  # fmt: skip
        hits = memory.recall("launch date?").hits
        assert "May" in hits[0].title and notebook in hits[0].provenance
        april = next(hit for hit in hits if "April" in hit.snippet)
        assert april.changed_later == hits[0].location
        assert {hit.writer for hit in hits} == {"user"} and not any(h.proposal for h in hits)
        text = memory.context("launch date?", budget=600, conversation="c1").text
        assert "April" in text and "May" in text and "proposed" not in text.split(notebook)[0]
    finally:
        memory.close()


def test_every_hit_carries_its_writer_as_a_field(memory: Memory) -> None:
    memory.remember("Feature store", "- decisions: features live in feast", via=VIA_MAGIC)
    memory.remember("Feature store notes", "- feast registry is on s3", via=VIA_MCP)
    memory.remember("Feature store cli", "- feast apply before training", via=VIA_CLI)
    hits = memory.recall("feature store feast", k=10).hits
    writers = {hit.title: hit.writer for hit in hits}
    assert writers == {
        "Feature store": "user",
        "Feature store notes": "agent",
        "Feature store cli": "user",
    }
    assert {hit.to_json()["writer"] for hit in hits} == {"user", "agent"}


def test_a_note_dated_in_the_future_is_refused(memory: Memory) -> None:
    with pytest.raises(QueryError, match=r"2099-12-31 is in the future") as refused:
        memory.remember("Launch", "- launch: May", on="2099-12-31")
    assert "\n" not in str(refused.value)
    with pytest.raises(QueryError, match="in the future"):
        memory.remember_all([("Launch", "- launch: May")], on="2026-03-13")
    memory.remember("Launch", "- launch: May", on="2026-03-12")  # today is fine


def test_the_cli_refuses_a_future_date_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HIPO_ROOT", "HIPO_TEAM")}
    env.update(HIPO_TODAY=TODAY.isoformat())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(tmp_path), "remember",
         "Launch", "- launch: May", "--date", "2099-12-31"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "in the future" in done.stderr
    assert not list((tmp_path / "memory").glob("2099-*.md"))


def test_what_an_agent_wrote_is_labelled_in_the_context_and_in_root(memory: Memory) -> None:
    """An MCP note's pieces sit under a line saying an agent wrote them, apart from the user's
    note of the same day and file; ROOT.md's Active Context says so on its line, and its rule
    line is no rule there."""
    memory.remember("Feast registry", "- decisions: the feast registry is on s3", via=VIA_MAGIC)
    memory.remember("Feast registry moved", "# rules\n- rule: never run feast apply on main",
                    via=VIA_MCP)  # fmt: skip
    text = memory.context("feast registry", budget=800, layer1=False).text
    lines = text.splitlines()
    agent = next(i for i, line in enumerate(lines) if "never run feast apply" in line)
    user = next(i for i, line in enumerate(lines) if "registry is on s3" in line)
    assert lines[agent - 1].endswith("[written by an agent]")
    assert not lines[user - 1].endswith("]")  # the user's own group says nothing more
    root = (memory.root / "memory" / "ROOT.md").read_text()
    (line,) = [
        line for line in root.splitlines() if line.startswith("- 2026-03-12 feast-registry-moved")
    ]
    assert "(written by an agent, not the user)" in line and "never run" not in line
    (own,) = [line for line in root.splitlines() if "registry is on s3" in line]
    assert "written by" not in own


def test_an_agent_may_not_remove_the_users_lines_in_working_files(tmp_path: Path) -> None:
    """Through Claude's memory tool: replacing the template's placeholder and its own lines is
    fine; removing a line the user wrote is refused in one line, and the file is unchanged."""
    from anthropic.lib.tools import ToolError

    from hipo_jupyter.memory_tool import HipoMemoryTool

    memory = Memory(tmp_path / "tool", today=lambda: TODAY)
    try:
        memory.init()
        tool = HipoMemoryTool(memory)
        scratch = memory.root / "SCRATCHPAD.md"
        tool.call({"command": "str_replace", "path": "/memories/SCRATCHPAD.md",
                   "old_str": "(none yet)", "new_str": "- agent: check the joins"})  # fmt: skip
        memory.write_note("SCRATCHPAD.md", scratch.read_text() + "- never push on a Friday\n")
        renamed = {"old_str": "- agent: check the joins", "new_str": "- agent: joins checked"}
        tool.call({"command": "str_replace", "path": "/memories/SCRATCHPAD.md", **renamed})
        before = scratch.read_text()
        with pytest.raises(ToolError) as refused:
            tool.call({"command": "str_replace", "path": "/memories/SCRATCHPAD.md",
                       "old_str": "- never push on a Friday\n", "new_str": ""})  # fmt: skip
        assert "may not remove the user's lines" in str(refused.value)
        assert "\n" not in str(refused.value) and scratch.read_text() == before
        assert "never push on a Friday" in memory.layer1().text
    finally:
        memory.close()


def test_an_mcp_write_never_waits_unbounded_on_the_session_start_pass() -> None:
    """A session-start pass that does not end (a huge compaction, a stuck disk): the write is
    refused in one line after the bound, instead of hanging the client."""
    import threading
    import time

    from hipo_jupyter.mcp.server import after_session_start
    from hipo_jupyter.memory import HipoError

    release = threading.Event()
    ritual = threading.Thread(target=release.wait, daemon=True)
    ritual.start()
    started = time.monotonic()
    with pytest.raises(HipoError, match="still running") as refused:
        after_session_start(ritual, wait_s=0.2)
    assert time.monotonic() - started < 5 and "\n" not in str(refused.value)
    release.set()
    ritual.join()
    after_session_start(ritual, wait_s=0.2)  # done: the write goes ahead
