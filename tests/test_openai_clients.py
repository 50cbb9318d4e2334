"""Every LLM client in the kernel gets memory (issue 36, item 4): the real `openai` SDK
(chat.completions and responses; sync, async, streamed, and the .stream() helpers) and the real
litellm (completion, acompletion) carry Layer 1, fenced as `%%ask` fences it, exactly once per
call, as the system message (or `instructions`), and the cell that called them is written back.

Each call goes over HTTP to a stand-in of OpenAI's API on 127.0.0.1 (`openai_helpers`), from a
real IPython shell with `%load_ext hipo`; nothing leaves the machine (litellm included).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401  (fixtures: api, served, claude_shell)
    FakeMessagesAPI,
    RaisingShell,
    api_fixture,
    claude_shell_fixture,
    new_shell,
    run,
    serve,
    served_fixture,
)
from openai_helpers import FakeOpenAIAPI, network_watch

from hipo_jupyter import llm
from hipo_jupyter.ipython import unload_ipython_extension
from hipo_jupyter.ipython.config import INJECT_CLIENTS
from hipo_jupyter.ipython.session import current
from hipo_jupyter.memory import Memory

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported

TODAY = "2026-03-12"
MODEL = "gpt-test"
QUESTION = "What did we decide on pricing?"
OPEN = llm.LAYER1_OPEN  # "<hipo-layer1-": the fence's opening tag, keyed per process


def layer1_count(body: dict) -> int:
    """How many times Layer 1's fence opens anywhere in a request body."""
    return json.dumps(body, ensure_ascii=False).count(OPEN)


def system_text(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    content = first["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content)


@pytest.fixture
def openai_api() -> FakeOpenAIAPI:
    return FakeOpenAIAPI()


@pytest.fixture
def openai_url(openai_api: FakeOpenAIAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    with serve(openai_api) as url:
        yield url + "/v1"


@pytest.fixture
def shell(
    openai_url: str, memory_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> Iterator[RaisingShell]:
    """hipo loaded on a memory that knows about pricing; `URL` is the stand-in's base URL."""
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    Memory(memory_root).remember(
        "Competitor pricing", "- decisions: cut the starter tier by 15% #pricing"
    )
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%config Hipo.summarizer = 'extractive'")
    shell.run_cell("%load_ext hipo")
    shell.user_ns["URL"] = openai_url
    capsys.readouterr()
    yield shell
    unload_ipython_extension(shell)


def written_back(memory_root: Path) -> list[str]:
    """The write-back checkpoints of today's raw log (title line and body)."""
    log = (memory_root / "memory" / f"{TODAY}.md").read_text("utf-8")
    return [part for part in re.split(r"(?m)^## ", log)[1:] if "via=write-back" in part]


CHAT_CELL = """
import asyncio, openai
client = openai.OpenAI(base_url=URL, api_key="test-key", max_retries=0)
ask = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
kept = [dict(message) for message in ask]
reply = client.chat.completions.create(model="gpt-test", messages=ask)
streamed = "".join(
    chunk.choices[0].delta.content or ""
    for chunk in client.chat.completions.create(model="gpt-test", messages=ask, stream=True)
    if chunk.choices
)
with client.chat.completions.stream(model="gpt-test", messages=ask[1:]) as stream:
    helper = stream.get_final_completion().choices[0].message.content

async def main():
    aclient = openai.AsyncOpenAI(base_url=URL, api_key="test-key", max_retries=0)
    first = await aclient.chat.completions.create(model="gpt-test", messages=ask)
    texts = []
    async for chunk in await aclient.chat.completions.create(
        model="gpt-test", messages=ask, stream=True
    ):
        texts.append(chunk.choices[0].delta.content or "" if chunk.choices else "")
    async with aclient.chat.completions.stream(model="gpt-test", messages=ask) as stream:
        async for _ in stream:
            pass
    return first.choices[0].message.content, "".join(texts)

async_reply, async_streamed = asyncio.run(main())
assert ask == kept  # the caller's messages are not touched
"""


def test_chat_completions_carry_layer1_once_and_are_written_back(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, memory_root: Path
) -> None:
    shell.user_ns["QUESTION"] = QUESTION
    run(shell, CHAT_CELL)

    bodies = openai_api.bodies("chat")
    assert len(bodies) == 6  # create, create(stream), .stream(); the same three async
    for body in bodies:
        assert layer1_count(body) == 1, body
        text = system_text(body)
        assert text.startswith(OPEN) and "starter tier" in text  # Layer 1, fenced, first
        assert sum(m["role"] in ("system", "developer") for m in body["messages"]) == 1
        assert body["messages"][-1] == {"role": "user", "content": QUESTION}
    with_own = [body for n, body in enumerate(bodies) if n != 2]
    assert all(system_text(body).endswith("\n\nBe brief.") for body in with_own)
    assert [body.get("stream", False) for body in bodies] == [False, True, True] * 2

    calls = [call for cell in current(shell).writeback.cells for call in cell.calls]
    assert [call.method for call in calls] == ["chat.completions.create"] * 6
    assert all(call.client == "openai" and call.had_layer1 for call in calls)
    namespace = shell.user_ns
    assert [calls[0].reply(), calls[3].reply(), calls[4].reply()] == [
        namespace["reply"].choices[0].message.content,
        namespace["async_reply"],
        namespace["async_streamed"],
    ]
    assert calls[1].reply() == namespace["streamed"] and calls[2].reply() == namespace["helper"]

    (checkpoint,) = written_back(memory_root)
    assert checkpoint.startswith("What did we decide on pricing? [project]")  # titled by its task
    assert "model=gpt-test" in checkpoint.split("\n")[1]  # the model the request named
    assert f"- outcome: Reply 6: you asked about {QUESTION}." in checkpoint  # streamed, too
    assert "(+5 more calls)" in checkpoint and "gpt-test" in checkpoint.split("references:")[1]


RESPONSES_CELL = """
import asyncio, openai
client = openai.OpenAI(base_url=URL, api_key="test-key", max_retries=0)
reply = client.responses.create(model="gpt-test", instructions="Be brief.", input=QUESTION)
events = list(client.responses.create(model="gpt-test", input=QUESTION, stream=True))
with client.responses.stream(
    model="gpt-test", input=[{"role": "user", "content": QUESTION}]
) as stream:
    helper = stream.get_final_response().output_text

async def main():
    aclient = openai.AsyncOpenAI(base_url=URL, api_key="test-key", max_retries=0)
    first = await aclient.responses.create(model="gpt-test", input=QUESTION)
    texts = []
    streamed = await aclient.responses.create(model="gpt-test", input=QUESTION, stream=True)
    async for event in streamed:
        if event.type == "response.output_text.delta":
            texts.append(event.delta)
    async with aclient.responses.stream(model="gpt-test", input=QUESTION) as stream:
        async for _ in stream:
            pass
    return first.output_text, "".join(texts)

async_reply, async_streamed = asyncio.run(main())
"""


def test_responses_carry_layer1_once_in_instructions(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, memory_root: Path
) -> None:
    shell.user_ns["QUESTION"] = QUESTION
    run(shell, RESPONSES_CELL)

    bodies = openai_api.bodies("responses")
    assert len(bodies) == 6
    for body in bodies:
        assert layer1_count(body) == 1, body
        assert body["instructions"].startswith(OPEN) and "starter tier" in body["instructions"]
    assert bodies[0]["instructions"].endswith("\n\nBe brief.")
    assert bodies[2]["input"] == [{"role": "user", "content": QUESTION}]

    calls = [call for cell in current(shell).writeback.cells for call in cell.calls]
    assert [call.method for call in calls] == ["responses.create"] * 6
    assert all(call.prompt == QUESTION and call.had_layer1 for call in calls)
    namespace = shell.user_ns
    assert calls[0].reply() == namespace["reply"].output_text
    assert calls[2].reply() == namespace["helper"]
    assert calls[4].reply() == namespace["async_streamed"] != ""
    (checkpoint,) = written_back(memory_root)
    assert "model=gpt-test" in checkpoint.split("\n")[1]


LITELLM_CELL = """
import asyncio, litellm
ask = [{"role": "user", "content": QUESTION}]
options = dict(model="openai/gpt-test", api_base=URL, api_key="test-key")
reply = litellm.completion(messages=ask, **options)
streamed = "".join(
    chunk.choices[0].delta.content or ""
    for chunk in litellm.completion(messages=ask, stream=True, **options)
)
positional = litellm.completion("openai/gpt-test", ask, api_base=URL, api_key="test-key")

async def main():
    first = await litellm.acompletion(messages=ask, **options)
    texts = []
    async for chunk in await litellm.acompletion(messages=ask, stream=True, **options):
        texts.append(chunk.choices[0].delta.content or "")
    return first.choices[0].message.content, "".join(texts)

async_reply, async_streamed = asyncio.run(main())
"""


def test_litellm_completion_carries_layer1_once_and_stays_on_the_machine(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, memory_root: Path
) -> None:
    """litellm goes through openai's client underneath: still one Layer 1, one call each."""
    shell.user_ns["QUESTION"] = QUESTION
    with network_watch() as outside:
        run(shell, LITELLM_CELL)
    assert outside == []

    bodies = openai_api.bodies("chat")
    assert len(bodies) == 5
    for body in bodies:
        assert layer1_count(body) == 1, body
        assert system_text(body).startswith(OPEN)
        assert body["messages"][1:] == [{"role": "user", "content": QUESTION}]

    calls = [call for cell in current(shell).writeback.cells for call in cell.calls]
    assert [call.method for call in calls] == ["litellm.completion"] * 3 + [
        "litellm.acompletion"
    ] * 2
    assert all(call.client == "litellm" and call.model == "openai/gpt-test" for call in calls)
    namespace = shell.user_ns
    assert calls[0].reply() == namespace["reply"].choices[0].message.content
    assert calls[1].reply() == namespace["streamed"] != ""
    assert calls[4].reply() == namespace["async_streamed"] != ""
    (checkpoint,) = written_back(memory_root)
    assert "model=openai/gpt-test" in checkpoint.split("\n")[1]


# --- exactly once -----------------------------------------------------------------------------
def test_a_retried_call_and_a_call_that_carries_layer1_get_it_once(
    shell: RaisingShell, openai_api: FakeOpenAIAPI
) -> None:
    openai_api.failures.append(500)  # the SDK retries the same request
    shell.user_ns["QUESTION"] = QUESTION
    run(
        shell,
        "import openai\n"
        "client = openai.OpenAI(base_url=URL, api_key='k', max_retries=1)\n"
        "ask = [{'role': 'user', 'content': QUESTION}]\n"
        "client.chat.completions.create(model='gpt-test', messages=ask)\n",
    )
    failed, retried = openai_api.bodies("chat")
    assert failed == retried and layer1_count(retried) == 1
    assert len(current(shell).writeback.cells[-1].calls) == 1

    shell.user_ns["CARRIED"] = retried["messages"]  # a conversation replayed as sent
    shell.user_ns["CARRIED_INSTRUCTIONS"] = system_text(retried)
    run(
        shell,
        "client.chat.completions.create(model='gpt-test', messages=CARRIED)\n"
        "client.responses.create(model='gpt-test', instructions=CARRIED_INSTRUCTIONS, input='x')\n"
        "import litellm\n"
        "litellm.completion(model='openai/gpt-test', api_base=URL, api_key='k', num_retries=0,\n"
        "                   messages=CARRIED)\n",
    )
    replayed, responses, through_litellm = openai_api.requests[2:]
    assert replayed["messages"] == retried["messages"] == through_litellm["messages"]
    assert responses["instructions"] == system_text(retried)
    assert all(call.had_layer1 for call in current(shell).writeback.cells[-1].calls)


def test_litellm_retries_send_layer1_once(shell: RaisingShell, openai_api: FakeOpenAIAPI) -> None:
    openai_api.failures.append(500)
    shell.user_ns["QUESTION"] = QUESTION
    run(
        shell,
        "import litellm\n"
        "reply = litellm.completion(model='openai/gpt-test', api_base=URL, api_key='k',\n"
        "    num_retries=1, messages=[{'role': 'user', 'content': QUESTION}])\n",
    )
    bodies = openai_api.bodies("chat")
    assert len(bodies) >= 2 and all(layer1_count(body) == 1 for body in bodies)
    assert [call.method for call in current(shell).writeback.cells[-1].calls] == [
        "litellm.completion"
    ]


# --- choosing, and turning off -------------------------------------------------------------------
USER_CALLS = """
import openai, litellm
client = openai.OpenAI(base_url=URL, api_key="k", max_retries=0)
ask = [{"role": "user", "content": "hi"}]
client.chat.completions.create(model="gpt-test", messages=ask)
client.responses.create(model="gpt-test", input="hi")
litellm.completion(model="openai/gpt-test", api_base=URL, api_key="k", messages=ask)
"""


@pytest.mark.parametrize(
    ("clients", "expected"),
    [
        (["anthropic"], [0, 0, 0]),
        (["litellm"], [0, 0, 1]),
        (["openai"], [1, 1, 0]),  # litellm left out: its calls underneath are left alone too
    ],
)
def test_inject_clients_chooses_which(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, clients: list[str], expected: list[int]
) -> None:
    shell.run_cell(f"%config Hipo.inject_clients = {clients!r}")
    run(shell, USER_CALLS)
    assert [layer1_count(body) for body in openai_api.requests] == expected
    recorded = [call.client for cell in current(shell).writeback.cells for call in cell.calls]
    assert recorded == [
        c for c, n in zip(["openai", "openai", "litellm"], expected, strict=True) if n
    ]


def test_inject_clients_refuses_an_unknown_client(shell: RaisingShell, caplog) -> None:
    assert INJECT_CLIENTS == llm.CLIENTS
    shell.run_cell("%config Hipo.inject_clients = ['anthropic', 'mistral']")
    assert "not the str 'mistral'" in caplog.text  # %config's one line
    assert current(shell).settings.inject_clients == list(INJECT_CLIENTS)


def test_inject_off_and_unload(shell: RaisingShell, openai_api: FakeOpenAIAPI) -> None:
    import litellm
    from openai.resources.chat.completions.completions import Completions
    from openai.resources.responses.responses import AsyncResponses

    shell.run_cell("%hipo inject off")
    run(shell, USER_CALLS)
    assert [layer1_count(body) for body in openai_api.requests] == [0, 0, 0]
    shell.run_cell("%hipo inject on")
    assert hasattr(Completions.__dict__["create"], "__hipo_original__")
    assert hasattr(vars(litellm)["completion"], "__hipo_original__")

    shell.run_cell("%unload_ext hipo")
    for owner, name in [
        (Completions, "create"),
        (Completions, "stream"),
        (AsyncResponses, "create"),
        (litellm, "completion"),
        (litellm, "acompletion"),
    ]:
        assert not hasattr(vars(owner)[name], "__hipo_original__"), f"{owner}.{name}"
    run(shell, USER_CALLS)
    assert [layer1_count(body) for body in openai_api.requests[3:]] == [0, 0, 0]


# --- loading imports neither; importing later patches; unloading removes it all ------------------
LATE_IMPORT = """
import json, os, sys, time
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

config = Config()
config.HistoryAccessor.enabled = False
shell = InteractiveShell(config=config)
shell.run_cell("%load_ext hipo")
loaded = sorted(name for name in ("openai", "litellm") if name in sys.modules)

import openai, litellm
from openai.resources.chat.completions.completions import AsyncCompletions, Completions
from openai.resources.responses.responses import AsyncResponses, Responses

owners = [Completions, AsyncCompletions, Responses, AsyncResponses, litellm]
def patched():
    return sum(
        hasattr(value, "__hipo_original__") for owner in owners for value in vars(owner).values()
    )

client = openai.OpenAI(base_url=os.environ["STAND_IN"], api_key="k", max_retries=0)
client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
before = patched()
shell.run_cell("%unload_ext hipo")
hooks = [type(f).__name__ for f in sys.meta_path if type(f).__module__.startswith("hipo")]
print(json.dumps({"loaded": loaded, "patched": before, "after": patched(), "hooks": hooks,
                  "offline": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")}))
"""


def test_loading_imports_no_sdk_and_a_later_import_is_patched(
    openai_api: FakeOpenAIAPI, openai_url: str, memory_root: Path, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "STAND_IN": openai_url,
        "HIPO_ROOT": str(memory_root),
        "HIPO_TODAY": TODAY,
    }
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)  # hipo sets it while loaded
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(LATE_IMPORT)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []  # %load_ext imported neither SDK
    assert report["patched"] == 2 * 3 * 2 + 2  # create/parse/stream x 4 classes, 2 functions
    assert report["after"] == 0 and report["hooks"] == []
    assert report["offline"] == "True"  # litellm was imported offline
    (body,) = openai_api.bodies("chat")
    assert layer1_count(body) == 1


def test_the_network_watch_sees_what_leaves(openai_url: str) -> None:
    """The watch the litellm test relies on: loopback passes, anything else is seen (the
    audit events are fed by hand: no packet is sent)."""
    import socket

    from openai_helpers import _audit

    with network_watch() as outside:
        socket.getaddrinfo("127.0.0.1", 80)
        _audit("socket.connect", (None, ("203.0.113.5", 443)))
        _audit("socket.getaddrinfo", ("api.openai.com", 443, 0, 0, 0))
    assert outside == ["connect ('203.0.113.5', 443)", "lookup 'api.openai.com'"]


# --- the rest of what %%ask's calls carry: lines written since, recalled memory ---------------
def test_fresh_lines_and_recalled_memory_follow_the_callers_own_text(
    shell: RaisingShell, openai_api: FakeOpenAIAPI
) -> None:
    shell.user_ns["QUESTION"] = QUESTION
    shell.run_cell("%config Hipo.auto_recall_sdk = True")
    cell = (
        "import openai\n"
        "client = openai.OpenAI(base_url=URL, api_key='k', max_retries=0)\n"
        "client.chat.completions.create(model='gpt-test', messages=[\n"
        "    {'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': QUESTION}])\n"
        "client.responses.create(model='gpt-test', instructions='Be brief.', input=QUESTION)\n"
    )
    run(shell, cell)  # its write-back adds a line to ROOT.md: the next calls carry it fresh
    run(shell, cell)
    first_chat, first_responses, chat, responses = openai_api.requests
    for text in (system_text(chat), responses["instructions"]):
        assert text.count(OPEN) == 1 and text.startswith(OPEN)
        own = text.index("\n\nBe brief.")
        assert own < text.index(llm.FRESH_OPEN) < text.index(f"<{llm.RECALL_TAG}")
        assert "starter tier" in text[text.index(f"<{llm.RECALL_TAG}") :]  # recalled, fenced
    assert llm.FRESH_OPEN not in system_text(first_chat) + first_responses["instructions"]


def test_a_developer_message_with_parts_and_tool_results(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, memory_root: Path
) -> None:
    """Layer 1 opens the caller's developer message as a part of its own; a call that hands
    tool results back is written back with them; parse() counts like create()."""
    run(
        shell,
        "import openai\n"
        "client = openai.OpenAI(base_url=URL, api_key='k', max_retries=0)\n"
        "use = {'id': 'call_1', 'type': 'function',\n"
        "       'function': {'name': 'price', 'arguments': '{}'}}\n"
        "ask = [{'role': 'developer', 'content': [{'type': 'text', 'text': 'Be brief.'}]},\n"
        "       {'role': 'user', 'content': [{'type': 'text', 'text': 'Price of the starter?'}]},\n"
        "       {'role': 'assistant', 'content': None, 'tool_calls': [use]},\n"
        "       {'role': 'tool', 'tool_call_id': 'call_1', 'content': 'starter costs 9 EUR'}]\n"
        "client.chat.completions.parse(model='gpt-test', messages=ask)\n",
    )
    (body,) = openai_api.requests
    first, *rest = body["messages"]
    assert first["role"] == "developer" and layer1_count(body) == 1
    assert first["content"][0]["text"].startswith(OPEN)
    assert first["content"][1:] == [{"type": "text", "text": "Be brief."}]
    assert [m["role"] for m in rest] == ["user", "assistant", "tool"]
    (call,) = current(shell).writeback.cells[-1].calls
    assert call.method == "chat.completions.parse" and call.prompt == "Price of the starter?"
    assert call.tool_results == ["starter costs 9 EUR"]
    (checkpoint,) = written_back(memory_root)
    assert "- analysis: starter costs 9 EUR" in checkpoint


def test_ask_is_written_back_whichever_clients_are_chosen(
    claude_shell: RaisingShell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    """%%ask is hipo's own call: leaving anthropic out of the list stops injection into the
    user's anthropic calls, not %%ask's Layer 1 or its write-back."""
    claude_shell.run_cell("%config Hipo.inject_clients = ['openai']")
    run(claude_shell, "%%ask\nWhat did we decide on pricing?")
    run(
        claude_shell,
        "import anthropic\nanthropic.Anthropic().messages.create(model='claude-sonnet-5-5',\n"
        "    max_tokens=10, messages=[{'role': 'user', 'content': 'hi'}])\n",
    )
    asked, own = api.message_requests()
    assert layer1_count(asked) == 1 and layer1_count(own) == 0
    (checkpoint,) = written_back(memory_root)
    assert checkpoint.startswith("What did we decide on pricing? [project]")  # titled by its task


def test_two_hooks_for_one_module_both_run_without_asking_each_other_forever(
    tmp_path: Path, monkeypatch
) -> None:
    """Two shells in one process (or an extension loaded twice) each wait for the same SDK:
    the import runs both patches once, instead of the hooks asking each other until Python's
    recursion limit (what a test order that left one hook behind showed)."""
    import importlib

    from hipo_jupyter.llm.sdk_hooks import AfterImport

    (tmp_path / "hipo_hooked_sdk.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ran: list[str] = []
    first = AfterImport({"hipo_hooked_sdk"}, lambda name: ran.append(f"first:{name}"))
    second = AfterImport({"hipo_hooked_sdk"}, lambda name: ran.append(f"second:{name}"))
    monkeypatch.setattr(sys, "meta_path", [first, second, *sys.meta_path])
    monkeypatch.delitem(sys.modules, "hipo_hooked_sdk", raising=False)
    module = importlib.import_module("hipo_hooked_sdk")
    assert module.VALUE == 1
    assert sorted(ran) == ["first:hipo_hooked_sdk", "second:hipo_hooked_sdk"]


def test_a_reply_cut_at_the_token_limit_is_written_back_marked_incomplete(
    shell: RaisingShell, openai_api: FakeOpenAIAPI, memory_root: Path
) -> None:
    """Issue 43: a chat completion that stopped at `finish_reason` length (streamed or not)
    and a response whose status is incomplete are written back as what they are."""
    openai_api.cut_short = 2
    shell.user_ns["QUESTION"] = QUESTION
    run(
        shell,
        "import openai\n"
        "client = openai.OpenAI(base_url=URL, api_key='test-key', max_retries=0)\n"
        "chat = client.chat.completions.create(model='gpt-test', max_tokens=5,\n"
        "    messages=[{'role': 'user', 'content': QUESTION}])",
    )
    run(shell, "answer = client.responses.create(model='gpt-test', input=QUESTION)")
    run(shell, "whole = client.responses.create(model='gpt-test', input=QUESTION)")
    openai_api.cut_short = 1
    run(
        shell,
        "streamed = ''.join(c.choices[0].delta.content or '' for c in\n"
        "    client.chat.completions.create(model='gpt-test', stream=True,\n"
        "        messages=[{'role': 'user', 'content': QUESTION}]) if c.choices)",
    )
    chat, answer, whole, streamed = written_back(memory_root)
    assert (
        "- outcome: incomplete reply (stopped at the token limit (finish_reason length)):" in chat
    )
    assert "- outcome: incomplete reply (the response is incomplete (max_output_tokens)):" in answer
    assert "incomplete" not in whole
    assert (
        "- outcome: incomplete reply (stopped at the token limit (finish_reason length))"
        in streamed
    )
