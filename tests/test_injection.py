"""Layer 1 goes into the user's own anthropic calls: once per call, sync and async, create and
stream, beta too; never twice, never into a call that already has it; off when toggled; gone
after unload. The real SDK sends every request over a MockTransport to the fake API."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterator

import anthropic
import pytest
from anthropic.lib.streaming import MessageStreamManager
from anthropic.resources.beta.messages.messages import Messages as BetaMessages
from anthropic.resources.messages.messages import AsyncMessages, Messages
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter import llm

LAYER1 = "# memory/ROOT.md\n\n- pricing [project, 1d]: starter-tier-cut"
BLOCK = llm.layer1_block(LAYER1, cache=False)  # a short prefix gets no breakpoint (caching)
QUESTION = [{"role": "user", "content": "What did we decide on pricing?"}]
MODEL = "claude-sonnet-5-5"

ORIGINALS = {
    (cls, name): cls.__dict__[name]
    for cls in (Messages, AsyncMessages, BetaMessages)
    for name in ("create", "stream", "parse", "count_tokens")
}


@pytest.fixture
def calls() -> list[llm.LLMCall]:
    return []


@pytest.fixture
def injector(calls: list[llm.LLMCall]) -> Iterator[llm.Injector]:
    state = {"text": LAYER1}
    injector = llm.Injector(layer1=lambda: state["text"], on_call=calls.append)
    injector.state = state  # type: ignore[attr-defined]  # lets a test turn injection off
    injector.install()
    yield injector
    injector.uninstall()


def layer1_blocks(body: dict) -> int:
    """How many Layer 1 blocks a request carries (in any system block)."""
    system = body.get("system", [])
    if isinstance(system, str):
        return int(system.startswith("<hipo-layer1-"))
    return sum(1 for block in system if block["text"].startswith("<hipo-layer1-"))


# --- where it goes --------------------------------------------------------------------------------
def test_string_system_is_kept_after_layer1(injector, api: FakeMessagesAPI, calls) -> None:
    reply = api.client().messages.create(
        model=MODEL, max_tokens=100, system="You are terse.", messages=QUESTION
    )
    (body,) = api.message_requests()
    assert body["system"] == [BLOCK, {"type": "text", "text": "You are terse."}]
    assert body["messages"] == QUESTION
    (call,) = calls
    assert call.method == "messages.create" and call.had_layer1
    assert call.prompt == "What did we decide on pricing?" and call.reply() == reply.content[0].text


def test_list_system_and_no_system(injector, api: FakeMessagesAPI) -> None:
    mine = [{"type": "text", "text": "Answer in French.", "cache_control": {"type": "ephemeral"}}]
    snapshot = json.dumps(mine)
    client = api.client()
    client.messages.create(model=MODEL, max_tokens=10, system=mine, messages=QUESTION)
    client.messages.create(model=MODEL, max_tokens=10, system=mine, messages=QUESTION)
    client.messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
    first, second, bare = api.message_requests()
    assert first["system"] == [BLOCK, *mine] and second == first
    assert json.dumps(mine) == snapshot  # the caller's list is not touched
    assert bare["system"] == [BLOCK]


def test_a_call_that_already_carries_layer1_is_left_alone(injector, api: FakeMessagesAPI) -> None:
    carried = [BLOCK, {"type": "text", "text": "mine"}]
    api.client().messages.create(model=MODEL, max_tokens=10, system=carried, messages=QUESTION)
    (body,) = api.message_requests()
    assert body["system"] == carried


def test_cache_breakpoints_are_not_exceeded(injector, api: FakeMessagesAPI) -> None:
    marked = [
        {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
        for n in range(4)
    ]
    api.client().messages.create(model=MODEL, max_tokens=10, system=marked, messages=QUESTION)
    (body,) = api.message_requests()
    assert body["system"][0] == llm.layer1_block(LAYER1, cache=False)
    assert sum("cache_control" in block for block in body["system"]) == 4


# --- every way of calling -------------------------------------------------------------------------
def test_sync_stream_and_create_stream_true(injector, api: FakeMessagesAPI, calls) -> None:
    client = api.client()
    with client.messages.stream(model=MODEL, max_tokens=10, messages=QUESTION) as stream:
        streamed = "".join(stream.text_stream)
    events = list(
        client.messages.create(model=MODEL, max_tokens=10, messages=QUESTION, stream=True)
    )
    assert events[0].type == "message_start"
    assert [layer1_blocks(body) for body in api.message_requests()] == [1, 1]
    assert [call.method for call in calls] == ["messages.stream", "messages.create"]
    assert calls[0].reply() == streamed  # a consumed stream's text is captured for write-back


def test_async_create_and_stream(injector, api: FakeMessagesAPI, calls) -> None:
    async def main() -> str:
        client = api.async_client()
        message = await client.messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
        async with client.messages.stream(model=MODEL, max_tokens=10, messages=QUESTION) as s:
            async for _ in s.text_stream:
                pass
        return message.content[0].text

    text = asyncio.run(main())
    assert [layer1_blocks(body) for body in api.message_requests()] == [1, 1]
    assert [call.method for call in calls] == ["messages.create", "messages.stream"]
    assert calls[0].reply() == text


def test_beta_messages_and_count_tokens(injector, api: FakeMessagesAPI, calls) -> None:
    client = api.client()
    client.beta.messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
    client.messages.count_tokens(model=MODEL, messages=QUESTION)
    beta, count = api.requests
    assert layer1_blocks(beta) == 1 and layer1_blocks(count) == 1
    assert api.paths == ["/v1/messages", "/v1/messages/count_tokens"]
    assert [call.method for call in calls] == ["beta.messages.create"]  # counting is no call


# --- exactly once ---------------------------------------------------------------------------------
def test_a_library_that_calls_through_twice_gets_one_block_each_time(
    api: FakeMessagesAPI, calls
) -> None:
    """A retrying library wrapped Messages.create before hipo loaded; another wraps it after."""
    below = Messages.__dict__["create"]

    def retry_twice(function):
        @functools.wraps(function)
        def wrapper(self, **kwargs):
            function(self, **kwargs)
            return function(self, **kwargs)

        return wrapper

    Messages.create = retry_twice(below)
    injector = llm.Injector(layer1=lambda: LAYER1, on_call=calls.append)
    try:
        injector.install()
        api.client().messages.create(model=MODEL, max_tokens=10, system="x", messages=QUESTION)
        assert [layer1_blocks(body) for body in api.message_requests()] == [1, 1]
        assert len(calls) == 1  # one call of the user's, however many requests underneath

        Messages.create = retry_twice(Messages.__dict__["create"])  # a tracer, after us
        api.client().messages.create(model=MODEL, max_tokens=10, system="x", messages=QUESTION)
        assert [layer1_blocks(body) for body in api.message_requests()] == [1] * 6  # 2 + 2 x 2
        assert len(calls) == 3  # the tracer calls through us twice: two calls
        assert all(body["system"][1] == {"type": "text", "text": "x"} for body in api.requests)
    finally:
        injector.uninstall()
        Messages.create = below


def test_a_second_install_replaces_rather_than_stacks(api: FakeMessagesAPI) -> None:
    first = llm.Injector(layer1=lambda: "first")
    second = llm.Injector(layer1=lambda: "second")
    try:
        first.install()
        second.install()
        api.client().messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
        (body,) = api.message_requests()
        assert body["system"] == [llm.layer1_block("second", cache=False)]
    finally:
        second.uninstall()
        first.uninstall()
    assert Messages.__dict__["create"] is ORIGINALS[(Messages, "create")]


def test_a_failing_memory_never_breaks_the_call(api: FakeMessagesAPI, calls) -> None:
    def broken() -> str:
        raise OSError("disk gone")

    injector = llm.Injector(layer1=broken, on_call=calls.append)
    injector.install()
    try:
        api.client().messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
    finally:
        injector.uninstall()
    (body,) = api.message_requests()
    assert "system" not in body and len(calls) == 1 and not calls[0].had_layer1


# --- off and gone ---------------------------------------------------------------------------------
def test_uninstall_restores_the_sdk(api: FakeMessagesAPI, calls) -> None:
    injector = llm.Injector(layer1=lambda: LAYER1, on_call=calls.append)
    injector.install()
    assert Messages.__dict__["create"] is not ORIGINALS[(Messages, "create")]
    injector.uninstall()
    for (cls, name), original in ORIGINALS.items():
        assert cls.__dict__[name] is original, f"{cls.__name__}.{name}"
    api.client().messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
    assert "system" not in api.message_requests()[0] and calls == []


def test_in_a_shell_toggle_reload_and_unload(claude_shell, api: FakeMessagesAPI, capsys) -> None:
    user_call = (
        "import anthropic\n"
        "reply = anthropic.Anthropic().messages.create(model='claude-sonnet-5-5', max_tokens=10,\n"
        "    system='Be brief.', messages=[{'role': 'user', 'content': 'hi'}])\n"
    )
    run(claude_shell, user_call)
    claude_shell.run_cell("%hipo inject off")
    assert "injection off" in capsys.readouterr().out
    run(claude_shell, user_call)
    claude_shell.run_cell("%hipo inject on")
    claude_shell.run_cell("%reload_ext hipo")
    run(claude_shell, user_call)
    claude_shell.run_cell("%unload_ext hipo")
    run(claude_shell, user_call)

    bodies = api.message_requests()
    assert [layer1_blocks(body) for body in bodies] == [1, 0, 1, 0]
    assert bodies[1]["system"] == "Be brief." and bodies[3]["system"] == "Be brief."
    for (cls, name), original in ORIGINALS.items():
        assert cls.__dict__[name] is original


def test_config_turns_injection_off(claude_shell, api: FakeMessagesAPI) -> None:
    claude_shell.run_cell("%config Hipo.inject = False")
    run(
        claude_shell,
        "import anthropic\nreply = anthropic.Anthropic().messages.create(model='m', "
        "max_tokens=5, messages=[{'role': 'user', 'content': 'hi'}])",
    )
    assert layer1_blocks(api.message_requests()[0]) == 0


def test_a_call_the_api_refused_is_not_recorded(injector, api: FakeMessagesAPI, calls) -> None:
    api.failures.extend([401, 401])
    client = api.client()
    with pytest.raises(anthropic.AuthenticationError):
        client.messages.create(model=MODEL, max_tokens=10, messages=QUESTION)
    manager = client.messages.stream(model=MODEL, max_tokens=10, messages=QUESTION)
    assert isinstance(manager, MessageStreamManager)  # still the SDK's type for the user
    with pytest.raises(anthropic.AuthenticationError), manager:
        pass
    assert calls == []


LAZY_SCRIPT = r"""
import json, sys
import httpx2
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell("%load_ext hipo", store_history=False).raise_error()
loaded_without_sdk = "anthropic" not in sys.modules
sent = []
def reply(request):
    sent.append(json.loads(request.content))
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
import anthropic  # the user's import, after %load_ext
client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(
    transport=httpx2.MockTransport(reply)))
client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
system = sent[0].get("system", [])
print(json.dumps({"lazy": loaded_without_sdk,
                  "injected": any(b["text"].startswith("<hipo-layer1-") for b in system)}))
"""


def test_load_does_not_import_the_sdk_yet_a_later_import_is_injected(tmp_path):
    """`import anthropic` costs seconds: %load_ext defers the patch to the SDK's own import."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "HIPO_ROOT": str(tmp_path),
        "HIPO_TODAY": "2026-03-12",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-c", LAZY_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"lazy": True, "injected": True}
