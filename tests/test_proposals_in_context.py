"""Proposals stay proposals in every context (issue 42, item 3): what only the user may put in
force (a rule, a correction of the user's words) and an agent proposed over real `hipo mcp`
reaches `hipo recall --context`, MCP's `recall` with a budget, the server's `recall?budget=`
and `%%ask`'s recalled memory saying who proposed it and that the user has not accepted it,
next to the user's note it contradicts; once the user accepts it, it is the user's and says
nothing more. Plain recall (`hipo recall`, its JSON) says the same in the hit's provenance."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import anyio
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from test_context_frontends import recalled_blocks
from test_correct import the_id

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import VIA_CLI, VIA_MCP

USERS_RULE = "never deploy on a Friday"
AGENTS_RULE = "deploy any day, skip the tests"
USERS_PRICE = "renewal price is 120 euros"
AGENTS_PRICE = "renewal price is 999 euros"
RULE_LABEL = "from MCP; a proposed rule, not accepted by the user]"
CORRECTION_LABEL = "from MCP; a proposed correction, not accepted by the user]"
QUERY = "deploy friday tests renewal price euros"


def piece(context: str, words: str) -> str:
    """The context's line of the piece holding `words`, and the line before it (its head)."""
    lines = context.splitlines()
    index = next(n for n, line in enumerate(lines) if words in line)
    return lines[index - 1] + "\n" + lines[index] if "[" not in lines[index] else lines[index]


def assert_labelled(context: str) -> None:
    """The agent's proposals say so; the user's notes beside them do not."""
    assert RULE_LABEL in piece(context, AGENTS_RULE), context
    assert CORRECTION_LABEL in piece(context, AGENTS_PRICE), context
    assert "not accepted" not in piece(context, USERS_RULE)
    assert "not accepted" not in piece(context, USERS_PRICE)


def test_an_agents_proposals_are_labelled_in_every_context_until_accepted(
    memory_root: Path,
) -> None:
    from test_mcp import call, run_hipo, session

    assert run_hipo(memory_root, "init").returncode == 0
    rule = run_hipo(
        memory_root, "remember", "Deploy policy", "--trigger", "before a deploy",
        "--rule", USERS_RULE, stdin="- why: thin on-call",
    )  # fmt: skip
    note = run_hipo(memory_root, "remember", "Renewal price", stdin=f"- outcome: {USERS_PRICE}")
    assert rule.returncode == 0 and note.returncode == 0, rule.stderr + note.stderr

    async def scenario() -> None:
        async with session(memory_root) as client:
            body = f"- trigger: before a deploy\n- rule: {AGENTS_RULE}"
            text, error = await call(
                client, "remember", title="Deploy policy", type="feedback", body=body
            )
            assert not error, text
            text, error = await call(client, "remember", title="Renewal price",
                                     body=f"- outcome: {AGENTS_PRICE}",
                                     replaces=the_id(note.stdout))  # fmt: skip
            assert not error and "proposes a correction" in text, text
            text, error = await call(client, "recall", query=QUERY, budget=1000)
            assert not error
            assert_labelled(text)

    anyio.run(scenario)
    context = run_hipo(memory_root, "recall", QUERY, "--context", "--budget", "1000")
    assert context.returncode == 0, context.stderr
    assert_labelled(context.stdout)
    hits = json.loads(run_hipo(memory_root, "recall", QUERY, "--json", "-k", "10").stdout)["hits"]
    said = {hit["snippet"].split("\n")[-1]: hit["provenance"] for hit in hits}
    assert said[f"outcome: {AGENTS_PRICE}"].endswith(
        "a proposed correction, not accepted by the user"
    )
    assert said[f"outcome: {USERS_PRICE}"] == "the command line"

    rules = run_hipo(memory_root, "rules").stdout
    (rule_id,) = re.findall(r"^- \[([^\]]+)\]", rules.split("Proposed rules")[1], re.MULTILINE)
    assert run_hipo(memory_root, "rules", "accept", rule_id).returncode == 0
    listing = run_hipo(memory_root, "corrections").stdout
    proposal = listing.split("\n- ", 1)[1].split(": corrects", 1)[0]
    assert run_hipo(memory_root, "corrections", "accept", proposal).returncode == 0
    after = run_hipo(memory_root, "recall", QUERY, "--context", "--budget", "1000").stdout
    assert "not accepted" not in after and AGENTS_RULE in after and AGENTS_PRICE in after
    assert USERS_PRICE not in after  # the accepted correction replaced the user's note


def propose(memory: Memory) -> None:
    """The user's rule and note, and an agent's (MCP's front end) rule and correction of it."""
    users_rule = f"- trigger: before a deploy\n- rule: {USERS_RULE}"
    memory.remember("Deploy policy", users_rule, via=VIA_CLI, type="feedback")
    mine = memory.remember("Renewal price", f"- outcome: {USERS_PRICE}", via=VIA_CLI)
    memory.remember("Deploy policy", f"- trigger: before a deploy\n- rule: {AGENTS_RULE}",
                    via=VIA_MCP, type="feedback")  # fmt: skip
    from hipo_jupyter.memory.views.correcting import correct

    correct(memory, mine.id or "", "", f"- outcome: {AGENTS_PRICE}", via=VIA_MCP)


async def test_the_servers_budget_recall_labels_proposals(jp_fetch, notebook_folder) -> None:
    notebook_folder("project", propose)
    response = await jp_fetch(
        "hipo", "api", "recall", params={"path": "project/", "q": QUERY, "budget": "1000"}
    )
    assert_labelled(json.loads(response.body)["text"])


def test_ask_sends_proposals_labelled(claude_shell, api: FakeMessagesAPI, memory_root) -> None:
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    propose(memory)
    memory.close()
    run(claude_shell, "%hipo reindex")
    run(claude_shell, f"%%ask --recall {QUERY}\nCan we deploy on Friday, and at what price?")
    (body,) = api.message_requests()
    (recalled,) = recalled_blocks(body)
    assert_labelled(recalled)
