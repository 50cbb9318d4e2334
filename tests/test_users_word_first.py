"""The user's current word comes first (issue 44, items 1 and 2), in a real IPython shell with
`%load_ext hipo` and `%%ask` calling the Messages API stand-in over HTTP (tests/claude_helpers).

- Of two notes on one subject that disagree, the later ranks first, and what `%recall` shows and
  what `%%ask` sends say the earlier one was changed later: the README's own flow, and the same
  for notes days apart; a note that only shares a word with them is left alone.
- A Claude call's write-back never ranks above a user's note that answers the question; the
  write-backs of a conversation are not sent back into it; one write-back per subject.
"""

from __future__ import annotations

from datetime import date

from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter import llm
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import VIA_CLI, VIA_MAGIC, VIA_MCP
from hipo_jupyter.memory.recall.supersession import CHANGED_LATER

WRITE_BACK = "a Claude call's write-back"


def recalled_block(body: dict) -> str:
    (block,) = [b["text"] for b in body["system"] if llm.RECALL_PREAMBLE in b["text"]]
    return block


def recall(shell, query: str) -> list:
    run(shell, f"hits = %recall {query}")
    return list(shell.user_ns["hits"])


def test_the_readme_flow_shows_the_later_note_first(claude_shell, api: FakeMessagesAPI) -> None:
    run(claude_shell, "%%remember Launch plan\n- decisions: the launch is in April\n")
    run(claude_shell, "%remember Standup: moved the launch to May")
    first, second = recall(claude_shell, "launch date?")[:2]
    assert "May" in first.snippet and first.title.startswith("Standup") and not first.changed_later
    assert "April" in second.snippet
    assert second.changed_later == f"{first.file}:{first.line}"
    assert f"{CHANGED_LATER} {first.file}:{first.line}" in second.provenance
    run(claude_shell, "%recall launch date?")  # what the user reads: May, then April, changed
    shown = str(claude_shell.user_ns["_"])
    assert shown.index("moved the launch to May") < shown.index("the launch is in April")
    assert CHANGED_LATER in shown
    run(claude_shell, "%%ask\nWhen is the launch?")
    block = recalled_block(api.message_requests()[-1])
    april = next(line for line in block.splitlines() if "April" in line)
    after = block.split(april, 1)[1].splitlines()[1]
    assert after.strip() == f"({CHANGED_LATER} {first.file}:{first.line})"
    assert CHANGED_LATER not in block.split(april, 1)[0]  # May's own line says nothing


def test_a_change_days_later_ranks_first_and_a_neighbour_is_left_alone(claude_shell) -> None:
    run(claude_shell, "%%remember Offsite venue --date 2026-02-02\n"
                      "- decisions: the team offsite is in Lisbon, 14-16 May\n")  # fmt: skip
    run(
        claude_shell,
        "%%remember Offsite catering --date 2026-02-20\n"
        "- decisions: offsite lunch from the vegetarian place near the office\n",
    )
    run(
        claude_shell,
        "%%remember Offsite --date 2026-03-02\n"
        "- decisions: the offsite venue moved to Porto, Lisbon was full\n",
    )
    hits = recall(claude_shell, "where is the team offsite venue?")
    assert "Porto" in hits[0].snippet
    lisbon = next(h for h in hits if "in Lisbon" in h.snippet)
    assert lisbon.changed_later == f"{hits[0].file}:{hits[0].line}"
    catering = next(h for h in hits if "vegetarian" in h.snippet)
    assert not catering.changed_later  # one shared word is not one subject


HOURS = (
    "%%remember My hours [user]\n"
    "- rule: no calls before 10am or after 4pm, and no calls at all on Fridays\n"
)
ASKS = (  # three %%ask cells of one conversation, as a user asks them over a day
    "Can you book a call with the vendor on Friday?",
    "Should I book the churn review call for next week?",
    "Draft a short note asking the team to book calls in the afternoon.",
)


def test_a_write_back_never_ranks_above_the_note_that_answers(
    claude_shell, api: FakeMessagesAPI
) -> None:
    run(claude_shell, HOURS)
    for question in ASKS:
        run(claude_shell, f"%%ask\n{question}")
    hits = recall(claude_shell, "when should nobody book a call with me?")
    assert hits[0].title == "My hours"
    assert any(WRITE_BACK in hit.provenance for hit in hits[1:])  # found, and below
    # The write-backs of a conversation are not sent back into it: its turns are in it
    first, second, third = api.message_requests()
    assert WRITE_BACK not in recalled_block(first)
    for body in (second, third):
        block = recalled_block(body)
        assert "no calls before 10am" in block
        assert not any(f"request: {question}" in block for question in ASKS)
    # ... while another conversation is sent them (one per subject: see below)
    run(claude_shell, "%%ask --new\nWhen can the vendor call me?")
    block = recalled_block(api.message_requests()[-1])
    assert any(f"request: {question}" in block for question in ASKS)


def test_one_write_back_per_subject_in_a_context(claude_shell, api: FakeMessagesAPI) -> None:
    run(claude_shell, HOURS)
    asked = (
        "Which vendor should we pick for the data warehouse migration?",
        "Compare the warehouse vendors for our data migration.",
        "Which warehouse vendor fits the data migration budget?",
    )
    for question in asked:  # three conversations on one subject, each written back
        run(claude_shell, f"%%ask --new\n{question}")
    run(claude_shell, "%%ask --new\nWhat did we say about the warehouse migration vendor?")
    block = recalled_block(api.message_requests()[-1])
    assert sum(f"request: {question}" in block for question in asked) == 1
    hits = recall(claude_shell, "warehouse migration vendor")
    assert sum(WRITE_BACK in hit.provenance for hit in hits) == 1


def test_an_agents_later_note_does_not_change_the_users(tmp_path) -> None:
    """Only the user's words replace the user's notes (DESIGN.md), in ranking too: a later note
    an agent wrote over MCP on the same subject ranks by relevance alone and changes nothing."""
    memory = Memory(tmp_path, today=lambda: date(2026, 3, 12))
    try:
        memory.remember("Launch plan", "- decisions: the launch is in April", via=VIA_MAGIC)
        memory.remember("Launch update", "- decisions: the launch moved to June", via=VIA_MCP)
        hits = memory.recall("launch date?").hits
        assert not any(hit.changed_later for hit in hits)
        memory.remember("Standup", "- decisions: moved the launch to May", via=VIA_CLI)
        hits = memory.recall("launch date?").hits
        assert "May" in hits[0].snippet
        april = next(hit for hit in hits if "April" in hit.snippet)
        june = next(hit for hit in hits if "June" in hit.snippet)  # the user may replace it
        assert april.changed_later == june.changed_later == f"{hits[0].file}:{hits[0].line}"
    finally:
        memory.close()
