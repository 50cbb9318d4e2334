"""Caching that caches: breakpoints end the stable stretches of a prompt (tools, Layer 1, the
caller's own system text, a conversation's ANCHOR/SUMMARY) whose prefix reaches the model's
minimum, within the API's four; a prefix under the minimum gets none, and the user is told once.
Checked on the request bodies the fake Messages API receives, for a short and a long prefix."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter import llm
from hipo_jupyter.llm import caching

EPHEMERAL = {"type": "ephemeral"}
MODEL = "claude-sonnet-5-5"  # minimum 512 tokens
SHORT = "# memory/ROOT.md\n\n- pricing [project, 1d]: starter-tier-cut"
LONG = SHORT + "\n" + "- pricing decision: the starter tier is cut by 15 percent\n" * 150
QUESTION = [{"role": "user", "content": "What did we decide?"}]


def words(text: str) -> int:
    return len(text.split())


def marks(body: dict) -> list[int]:
    return [i for i, block in enumerate(body["system"]) if "cache_control" in block]


# --- the table ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-opus-4-6", 4096),
        ("claude-opus-4-5-20251101", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-sonnet-4-6", 1024),
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-opus-4-20250514", 1024),
        ("claude-opus-4-1", 1024),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-sonnet-5-5", 512),
        ("anthropic/claude-haiku-4-5", 4096),
        ("some-new-model", caching.DEFAULT_MIN_CACHEABLE),
        ("", caching.DEFAULT_MIN_CACHEABLE),
    ],
)
def test_minimums_come_from_one_table(model: str, minimum: int) -> None:
    assert caching.min_cacheable_tokens(model) == minimum


# --- placement ----------------------------------------------------------------------------------


def request(*system_texts: str, model: str = MODEL, **more) -> dict:
    system = [{"type": "text", "text": text} for text in system_texts]
    return {"model": model, "max_tokens": 10, "system": system, "messages": QUESTION, **more}


def test_a_short_prefix_gets_no_breakpoint_and_a_note() -> None:
    arguments = request("a " * 100, "status")
    placed, plan = caching.place_breakpoints(arguments, [0], counter=words)
    assert placed is arguments and marks(placed) == []
    assert plan.prefix_tokens == 100 and plan.minimum == 512 and plan.reason == "short"
    assert "~100 tokens) is under claude-sonnet-5-5's minimum of 512" in plan.note


def test_a_long_prefix_is_marked_at_the_end_of_each_stable_stretch() -> None:
    arguments = request("a " * 600, "b " * 50, "status changes")
    placed, plan = caching.place_breakpoints(arguments, [0, 1], counter=words)
    assert marks(placed) == [0, 1] and plan.note is None
    assert placed["system"][0]["cache_control"] == EPHEMERAL
    assert "cache_control" not in arguments["system"][0]  # the caller's dicts are not touched
    # Layer 1 alone under the minimum, with the next stable block over it: only that one
    placed, _ = caching.place_breakpoints(request("a " * 400, "b " * 200), [0, 1], counter=words)
    assert marks(placed) == [1]


def test_tool_definitions_count_towards_the_prefix() -> None:
    tools = [{"name": "search", "description": "x " * 200, "input_schema": {"type": "object"}}]
    without, _ = caching.place_breakpoints(request("a " * 400), [0], counter=words)
    with_tools, plan = caching.place_breakpoints(
        request("a " * 400, tools=tools), [0], counter=words
    )
    assert marks(without) == [] and marks(with_tools) == [0] and plan.prefix_tokens > 600


def test_breakpoints_stay_within_the_four_with_the_callers_own() -> None:
    caller = [{"type": "text", "text": "c", "cache_control": EPHEMERAL}]
    three = {
        **request("a " * 600, "b " * 50),
        "cache_control": EPHEMERAL,  # automatic caching takes one
        "messages": [{"role": "user", "content": [{"type": "text", "text": "q", **caller[0]}]}],
        "tools": [{"name": "t", "input_schema": {}, "cache_control": EPHEMERAL}],
    }
    placed, plan = caching.place_breakpoints(three, [0, 1], counter=words)
    assert marks(placed) == [1] and caching.breakpoints_used(placed) == 4  # the longest kept
    full = {**three, "system": [*three["system"], *caller]}
    placed, plan = caching.place_breakpoints(full, [0, 1], counter=words)
    assert marks(placed) == [2] and plan.reason == "full" and "all 4 cache breakpoints" in plan.note


def test_a_callers_system_mark_already_covers_layer1() -> None:
    arguments = request("a " * 600)
    arguments["system"].append({"type": "text", "text": "mine", "cache_control": EPHEMERAL})
    placed, _ = caching.place_breakpoints(arguments, [0, 1], counter=words)
    assert marks(placed) == [1]  # only the caller's: it caches Layer 1 with it


def test_the_note_is_said_once_per_model_and_reason() -> None:
    said: list[str] = []
    note = caching.NoteOnce(said.append)
    short = caching.place_breakpoints(request("a"), [0], counter=words)[1]
    for _ in range(3):
        note(short)
    note(caching.place_breakpoints(request("a", model="claude-opus-4-6"), [0], counter=words)[1])
    note(caching.place_breakpoints(request("a " * 600), [0], counter=words)[1])  # cached: silent
    note(None)
    assert len(said) == 2 and "claude-opus-4-6's minimum of 4,096" in said[1]


# --- the request bodies the API receives --------------------------------------------------------


def ask_body(api: FakeMessagesAPI, layer1: str, conversation: str | None = None) -> dict:
    request = llm.ask_request(
        model=MODEL,
        max_tokens=64,
        messages=QUESTION,
        layer1=layer1,
        status=llm.status_note(41_000, 200_000),
        recalled=llm.fence_quoted("pricing", [("a hit", "recalled text")]),
        conversation=conversation,
    )
    api.client().messages.create(**request)
    return api.message_requests()[-1]


def test_ask_request_short_and_long_prefix(api: FakeMessagesAPI) -> None:
    short = ask_body(api, SHORT)
    assert marks(short) == []
    long = ask_body(api, LONG)
    assert marks(long) == [0] and long["system"][0]["text"].startswith(llm.LAYER1_OPEN)
    zones = llm.conversation_block("Goal: cut churn. " * 20, "abc", "- step done " * 100)
    folded = ask_body(api, LONG, zones)
    assert marks(folded) == [0, 1]  # Layer 1, then the anchor and summary
    assert folded["system"][1]["text"].startswith("<hipo-conversation-")
    assert folded["system"][2]["text"].startswith("[context status]")  # after the breakpoints
    assert folded["system"][3]["text"].startswith("<hipo-recalled-memory")
    again = ask_body(api, LONG, zones)
    assert again["system"][:2] == folded["system"][:2]  # the same bytes: the prefix is read


def test_injected_calls_mark_layer1_and_the_callers_text(api: FakeMessagesAPI) -> None:
    plans: list[caching.CachePlan | None] = []
    state = {"layer1": LONG}
    injector = llm.Injector(layer1=lambda: state["layer1"], on_cache_plan=plans.append)
    injector.install()
    try:
        client = api.client()
        mine = "You are a careful analyst. " * 200
        client.messages.create(model=MODEL, max_tokens=10, system=mine, messages=QUESTION)
        client.messages.create(model=MODEL, max_tokens=10, system="Be brief.", messages=QUESTION)
        state["layer1"] = SHORT
        client.messages.create(model=MODEL, max_tokens=10, system=mine, messages=QUESTION)
        client.messages.create(model=MODEL, max_tokens=10, system="Be brief.", messages=QUESTION)
    finally:
        injector.uninstall()
    both, brief, short_mine, short_brief = api.message_requests()
    assert marks(both) == [0, 1]
    assert marks(brief) == [0, 1]  # "Be brief." is stable too: the longer prefix
    assert marks(short_mine) == [1]  # Layer 1 alone is short; with the caller's text it caches
    assert marks(short_brief) == [] and plans[-1].reason == "short"
    usage = [api._usage(body, "")["cache_read_input_tokens"] for body in (both, both)]
    assert usage[-1] > 0  # the fake reads the prefix a repeated request marks


def test_ask_says_once_when_the_prefix_is_short_and_caches_a_long_one(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys
) -> None:
    run(claude_shell, "%%ask\nFirst?")
    run(claude_shell, "%%ask\nSecond?")
    out = capsys.readouterr().out
    assert out.count("hipo: prompt caching: the stable prefix (~") == 1
    assert "under claude-sonnet-5-5's minimum of 512" in out
    assert all(marks(body) == [] for body in api.message_requests())
    run(claude_shell, "%hipo budget --text")
    budget = capsys.readouterr().out
    assert "minimum 512 tokens" in budget and "under the minimum" in budget
    assert "last Claude call: cache read 0 · cache write 0" in budget

    (memory_root / "SCRATCHPAD.md").write_text("# SCRATCHPAD\n" + "- a standing note\n" * 300)
    run(claude_shell, "%%ask\nThird?")
    run(claude_shell, "%%ask\nFourth?")
    out = capsys.readouterr().out
    third, fourth = api.message_requests()[-2:]
    assert marks(third) == [0] and marks(fourth) == [0]
    usages = [line for line in out.splitlines() if line.startswith("tokens:")]
    assert "cache read 0 ·" in usages[0] and "cache write 0 " not in usages[0]
    assert "cache read 0 ·" not in usages[1] and "cache write 0 " in usages[1]
    assert "prompt caching" not in out
    run(claude_shell, "%hipo budget --text")
    budget = capsys.readouterr().out
    assert "cached (a breakpoint ends it)" in budget
    read = int(usages[1].split("cache read ")[1].split(" ")[0].replace(",", ""))
    assert f"last Claude call: cache read {read:,} · cache write 0" in budget
