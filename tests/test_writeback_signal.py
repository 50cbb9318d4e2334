"""Write-backs are the agent's task log, not the user's notes (issue 35, item 1): in a real
IPython shell whose Claude calls go to the Messages API stand-in on 127.0.0.1, a call's
checkpoint is titled by its task and keeps the protocol's fields, makes no topic, never pushes
the user's notes out of ROOT's Active Context or the sidebar's recent list, and ranks below
what the user wrote at equal relevance."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from claude_helpers import (  # noqa: F401
    SDK_CALL,
    TODAY,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter import llm
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import VIA_MAGIC, VIA_WRITE_BACK

CALL = SDK_CALL
NOTES = [
    ("Churn model retrain #churn", "- decisions: retrain on the March cohort before the launch"),
    ("Launch date #launch", "- decisions: we go live on 2026-04-02"),
    ("Team dinner [user] #diet", "I'm vegetarian: no meat, no fish"),
    ("Starter tier price #pricing", "- decisions: cut the starter tier by 15%"),
    ("Onboarding emails #onboarding", "- outcome: day-3 email lifts activation 4%"),
    ("Data warehouse costs #infra", "- decisions: move nightly jobs to spot instances"),
    ("Q2 hiring plan #hiring", "- decisions: two data engineers in April"),
]
PROMPTS = [
    "Summarize the churn drivers by segment.",
    "Which tier are we cutting?",
    "Draft the launch note for April.",
]


def write_week(shell) -> None:
    for title, body in NOTES:
        run(shell, f"%%remember {title}\n{body}")
    for prompt in PROMPTS:
        run(shell, CALL.format(prompt=prompt))


def section(root: str, name: str) -> list[str]:
    body = root.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.strip()]


def test_a_write_back_is_titled_by_its_task_and_keeps_the_fields(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    api.replies.append("We should cut the starter tier by 15%. Revenue dips 2% in March.")
    run(claude_shell, CALL.format(prompt="Which tier are we cutting?"))
    (checkpoint,) = Memory(memory_root).recent_checkpoints(5)
    assert checkpoint.title == "Which tier are we cutting?"
    assert checkpoint.tags == () and checkpoint.via == VIA_WRITE_BACK
    fields = dict(checkpoint.fields)
    assert fields["request"] == "Which tier are we cutting?"
    assert fields["decisions"] == "We should cut the starter tier by 15%."
    assert fields["outcome"].startswith("We should cut the starter tier by 15%. Revenue dips")


def test_claude_writes_the_fields_when_it_is_the_summarizer(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    run(claude_shell, "%config Hipo.summarizer = 'claude'")
    api.replies += [
        "Cut the starter tier by 15%; revenue dips 2% in March.",  # the user's own call
        "- request: pick the tier to cut\n- decisions: cut the starter tier by 15%\n"
        "- outcome: starter tier cut 15%, March revenue -2%",  # Claude writing the fields
        "Keep the pro tier.",
        "no lines of the kind asked for",  # unusable: the offline gist stays
    ]
    run(claude_shell, CALL.format(prompt="Which tier are we cutting?"))
    run(claude_shell, CALL.format(prompt="And the pro tier?"))
    first, second = Memory(memory_root).recent_checkpoints(5)[::-1]
    assert first.title == "Which tier are we cutting?"
    assert dict(first.fields) == {
        "request": "pick the tier to cut",
        "decisions": "cut the starter tier by 15%",
        "outcome": "starter tier cut 15%, March revenue -2%",
        "references": dict(first.fields)["references"],
    }
    writer = api.message_requests()[1]
    assert writer["system"] == llm.TASK_SYSTEM  # no Layer 1: an internal call, not recorded
    assert "Which tier are we cutting?" in writer["messages"][0]["content"]
    assert dict(second.fields)["request"] == "And the pro tier?"
    assert dict(second.fields)["outcome"] == "Keep the pro tier."


def test_after_7_notes_and_3_calls_the_users_notes_lead(claude_shell, memory_root: Path) -> None:
    write_week(claude_shell)
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    assert sum(c.via == VIA_WRITE_BACK for c in memory.recent_checkpoints(20)) == 3
    for state in ("as written", "compacted"):  # ROOT.md kept in place, then rebuilt whole
        topics = [topic.name for topic in memory.topics()]
        assert "llm" not in topics, state
        assert sorted(topics) == sorted(t.split("#")[1].split()[0] for t, _ in NOTES), state
        root = (memory_root / "memory" / "ROOT.md").read_text("utf-8")
        active = section(root, "Active Context")
        assert len(active) == 8, (state, active)
        assert all("Claude call" not in line for line in active[:7])
        assert active[7].startswith(f"- {TODAY} 3 Claude calls: ")
        assert "tier-cutting" in active[7] and "summarize-churn-drivers" in active[7]
        assert "llm" not in section(root, "Topics Index")[0]
        memory.compact()
    recent = memory.recent_checkpoints(8, grouped=True)
    assert [c.title for c in recent[:7]] == [
        t.split(" #")[0].removesuffix(" [user]") for t, _ in reversed(NOTES)
    ]
    assert recent[7].title.startswith("3 Claude calls: ") and recent[7].via == VIA_WRITE_BACK
    memory.close()


def test_at_equal_relevance_the_users_note_ranks_first(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    body = "- request: should we retrain the churn model before the launch?\n- outcome: yes"
    # the write-back is the newer of the two, so recency favours it
    memory.remember("Churn retrain", body, via=VIA_MAGIC, on="2026-03-02")
    memory.remember("Churn retrain", body, via=VIA_WRITE_BACK, model="claude-sonnet-5-5")
    for query in ("should we retrain the churn model before the launch?", "churn retrain"):
        hits = memory.recall(query, k=5).hits
        assert hits[0].provenance == "a notebook cell", [(h.provenance, h.score) for h in hits]
    memory.close()


def test_a_recurring_call_is_recalled_once_by_its_best_run(memory_root: Path) -> None:
    """The same task asked of Claude on many days (a weekly status draft) is one task of the
    agent's log: recall shows its best run once, and the room goes to the user's notes."""
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    title = "Draft a two-line update on the fraud scoring for Lena"
    for day, score in (("2026-02-02", "0.81"), ("2026-02-09", "0.83"), ("2026-02-16", "0.84")):
        body = f"- request: {title}\n- outcome: fraud scoring AUC {score}, no drift this week"
        memory.remember(title, body, via=VIA_WRITE_BACK, on=day, model="claude-sonnet-5-5")
    memory.remember(
        "Fraud threshold", "- decisions: fraud scoring flags above 0.7, reviewed by Lena",
        via=VIA_MAGIC, on="2026-02-03",
    )  # fmt: skip
    hits = memory.recall("fraud scoring update for Lena", k=10).hits
    titles = [hit.title for hit in hits]
    assert titles.count(title) == 1, titles
    assert "Fraud threshold" in titles
    memory.close()
