"""The jupyter-ai chat with the memory: `HipoPersona` (hipo_jupyter/llm/persona.py), loaded by
jupyter-ai's own persona manager from the `jupyter_ai.personas` entry point, in a real Jupyter
server (pytest-jupyter), answering through the model the user configured in jupyter-ai's
settings, called by the real litellm (through Jupyternaut's agent) against a stand-in
OpenAI-compatible server on 127.0.0.1 that records what it was sent.

Run by `make test-clients` (the [clients] extra brings [jupyter-ai] and pytest-jupyter). The
message goes in by the persona manager's REST route (`POST /api/ai/message/<persona name>`),
which builds a real PersonaManager and chat and calls the persona's `on_message`, as a chat
does; the chat's own Yjs transport (the browser side) is not driven here.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported
pytest.importorskip("jupyter_ai_jupyternaut", reason="the [jupyter-ai] extra is not installed")
pytest.importorskip("pytest_jupyter", reason="pytest-jupyter is not installed")

from jupyter_ai_jupyternaut.jupyternaut.jupyternaut import JupyternautPersona  # noqa: E402
from jupyter_ai_persona_manager import BasePersona, PersonaManager  # noqa: E402
from jupyterlab_chat.models import Message  # noqa: E402
from jupyterlab_chat.ychat import YChat  # noqa: E402
from traitlets.config import Config  # noqa: E402

from hipo_jupyter.llm import LAYER1_OPEN, RECALL_TAG  # noqa: E402
from hipo_jupyter.llm.persona import PROVIDER, HipoPersona  # noqa: E402
from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.disk import VIA_WRITE_BACK, provenance_text, writer_of  # noqa: E402

pytest_plugins = ["pytest_jupyter.jupyter_server"]

MODEL = "openai/hipo-stand-in"
REPLY = "Keep the cloud spend at 4,200 EUR for February, as decided."
WORKING = "Current task: the quarterly report for Acme Logistics."
NOTE = "February budget: cut the cloud spend to 4,200 EUR (Grafana shows the idle GPUs)."
QUESTION = "What did we decide about the February cloud budget?"
DEFAULT_PERSONA = "jupyter-ai-personas::hipo_jupyter::HipoPersona"  # what the README says to set
README = Path(__file__).resolve().parents[2] / "README.md"


class StandInModel:
    """An OpenAI-compatible chat endpoint: each request body kept; each answered with REPLY,
    streamed as chat.completion.chunk events (what litellm reads) or whole."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200

    def chat_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests if "messages" in body]

    def answer(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        self.requests.append(body)
        if self.status != 200:
            error = {"error": {"message": "stand-in failure", "type": "server_error"}}
            return self.status, "application/json", json.dumps(error).encode()
        if not body.get("stream"):
            message = {"role": "assistant", "content": REPLY}
            whole = {
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }  # fmt: skip
            return 200, "application/json", json.dumps(whole).encode()

        def chunk(delta: dict[str, Any], finish: str | None) -> str:
            data = {
                "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }  # fmt: skip
            return f"data: {json.dumps(data)}\n\n"

        words = REPLY.split(" ")
        events = [chunk({"role": "assistant", "content": ""}, None)]
        events += [chunk({"content": word + " " * (i < len(words) - 1)}, None)
                   for i, word in enumerate(words)]  # fmt: skip
        events += [chunk({}, "stop"), "data: [DONE]\n\n"]
        return 200, "text/event-stream", "".join(events).encode()


@pytest.fixture
def model_server() -> Iterator[tuple[StandInModel, str]]:
    model = StandInModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            status, kind, payload = model.answer(json.loads(raw or b"{}"))
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def jp_server_config(model_server: tuple[StandInModel, str]) -> dict[str, Any]:
    """The persona manager and Jupyternaut's settings, its default model the stand-in: the
    settings a user makes in jupyter-ai (`initial_language_model`, `model_parameters`)."""
    _, api_base = model_server
    return {
        "ServerApp": {
            "jpserver_extensions": {
                "jupyter_ai_persona_manager": True,
                "jupyter_ai_jupyternaut": True,
            }
        },
        "JupyternautExtension": {
            "initial_language_model": MODEL,
            "model_parameters": {MODEL: {"api_base": api_base, "api_key": "sk-stand-in"}},
        },
    }


@pytest.fixture
def memory_root(jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's root holds a memory: a Layer 1 working file and one note to recall."""
    monkeypatch.delenv("HIPO_ROOT", raising=False)
    monkeypatch.setenv("HIPO_SEMANTIC", "0")  # keyword recall: the same hits every run
    memory = Memory(jp_root_dir)
    try:
        memory.init()
        memory.write_note("WORKING.md", WORKING)
        memory.remember("February cloud budget", NOTE, via="cli")
    finally:
        memory.close()
    return jp_root_dir


async def ask(jp_fetch: Any, text: str) -> str:
    response = await jp_fetch(
        "api", "ai", "message", "Hipo", method="POST", body=json.dumps({"message": text}),
        request_timeout=120,
    )  # fmt: skip
    return json.loads(response.body)["response"]


def system_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        if message["role"] != "system":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content)
        parts.append(content)
    return "\n".join(parts)


async def test_the_persona_answers_with_layer1_and_recall_and_writes_back(
    jp_fetch: Any, memory_root: Path, model_server: tuple[StandInModel, str]
) -> None:
    model, _ = model_server
    answer = await ask(jp_fetch, QUESTION)

    assert REPLY in answer
    sent = model.chat_requests()
    assert sent, "the persona made no call to the configured model"
    body = sent[0]
    assert body["model"] == MODEL.split("/", 1)[1]
    system = system_text(body)
    # Layer 1 first, fenced as memory; Jupyternaut's own prompt after; the recalled note last,
    # fenced as quoted data
    assert system.startswith(LAYER1_OPEN)
    assert WORKING in system
    jupyternaut = system.index("<instructions>")  # Jupyternaut's own prompt opens so
    assert "Acme Logistics" in system[:jupyternaut]
    recalled = system.rindex(f"<{RECALL_TAG}")
    assert jupyternaut < recalled
    assert "4,200 EUR" in system[recalled:]
    assert body["messages"][-1]["content"] == QUESTION or QUESTION in json.dumps(body)
    # Jupyternaut's tools stay
    tools = {tool["function"]["name"] for tool in body.get("tools", [])}
    assert tools, "the persona's request carried none of Jupyternaut's tools"

    memory = Memory(memory_root)
    try:
        written = [c for c in memory.recent_checkpoints(10) if c.via == VIA_WRITE_BACK]
    finally:
        memory.close()
    assert len(written) == 1
    checkpoint = written[0]
    assert checkpoint.provider == PROVIDER
    assert checkpoint.model == MODEL
    assert (checkpoint.notebook or "").endswith(".chat")
    assert "February cloud budget" in checkpoint.title
    assert "4,200 EUR" in (checkpoint.field("outcome") or "")
    assert "a Jupyter AI call's write-back" in provenance_text(checkpoint)
    assert writer_of(checkpoint) == "claude"  # a model's task log: no power to steer (trust)


async def test_a_failed_call_writes_nothing_back(
    jp_fetch: Any, memory_root: Path, model_server: tuple[StandInModel, str]
) -> None:
    model, _ = model_server
    model.status = 400  # a refusal litellm does not retry
    answer = await ask(jp_fetch, QUESTION)

    assert REPLY not in answer and "Error" in answer
    assert model.chat_requests()
    memory = Memory(memory_root)
    try:
        assert not [c for c in memory.recent_checkpoints(10) if c.via == VIA_WRITE_BACK]
    finally:
        memory.close()


async def test_as_the_default_persona_of_a_chat_beside_a_notebook_it_uses_that_folders_memory(
    jp_serverapp: Any, memory_root: Path, model_server: tuple[StandInModel, str]
) -> None:
    """The live chat's path: a persona manager built as jupyter-ai builds one for a chat file
    (with the README's default-persona setting), the message routed as the router routes it."""
    model, _ = model_server
    project = memory_root / "project"
    project.mkdir()
    memory = Memory(project)
    try:
        memory.init()
        memory.remember("Vendor choice", "We chose Timescale over InfluxDB for the sensors.")
    finally:
        memory.close()
    assert DEFAULT_PERSONA in README.read_text(encoding="utf-8")
    chat = YChat()
    chat.initial_path = "project/notes.chat"
    manager = PersonaManager(
        config=Config({"PersonaManager": {"default_persona_id": DEFAULT_PERSONA}}),
        chat=chat,
        root_dir=str(memory_root),
        event_loop=asyncio.get_running_loop(),
    )
    persona = manager.default_persona
    assert isinstance(persona, HipoPersona) and persona.name == "Hipo"
    message = to_hipo("m1", "Which database did we choose for the sensors?")
    await routed(manager, chat, persona, message, replies=1)
    assert any(REPLY in m.body for m in chat.get_messages() if m.sender == persona.id)
    system = system_text(model.chat_requests()[0])
    assert "Timescale" in system and "4,200 EUR" not in system  # the project's memory only
    memory = Memory(project)
    try:
        written = [c for c in memory.recent_checkpoints(10) if c.via == VIA_WRITE_BACK]
    finally:
        memory.close()
    assert [c.notebook for c in written] == ["project/notes.chat"]

    # the next message of this chat: its own write-back is not recalled (Jupyternaut keeps the
    # chat's turns), the user's note still is
    again = to_hipo("m2", "And which database for the sensors?")
    await routed(manager, chat, persona, again, replies=2)
    system = system_text(model.chat_requests()[-1])
    recalled = system[system.rindex(f"<{RECALL_TAG}") :]
    assert "Timescale" in recalled and REPLY.split(" at ")[0] not in recalled

    # a message longer than a recall query (a pasted log) is recalled by its start
    pasted = "Which database for the sensors? Here is the log:\n" + "ERROR timeout\n" * 400
    await routed(manager, chat, persona, to_hipo("m3", pasted), replies=3)
    system = system_text(model.chat_requests()[-1])
    assert "Timescale" in system[system.rindex(f"<{RECALL_TAG}") :]
    await manager.shutdown_personas()


def to_hipo(identity: str, body: str) -> Message:
    """A chat message addressed to Hipo, as the chat's persona picker stamps it."""
    metadata = {PersonaManager.TO_PERSONA_METADATA_KEY: DEFAULT_PERSONA}
    return Message(id=identity, body=body, time=0.0, sender="someone", metadata=metadata)


async def routed(manager: Any, chat: Any, persona: Any, message: Any, *, replies: int) -> None:
    """Route `message` as the router does, and wait for the persona's `replies`th reply."""
    manager.on_chat_message(chat.get_id(), message)
    for _ in range(600):
        await asyncio.sleep(0.1)
        mine = [m for m in chat.get_messages() if m.sender == persona.id]
        if len(mine) >= replies and not persona.processing:
            return
    raise AssertionError(f"no reply {replies} from the persona in 60 s")


def test_the_persona_api_it_relies_on() -> None:
    """What HipoPersona overrides and calls of jupyter-ai 3.2's Jupyternaut and BasePersona:
    a change there fails here first, with the name of what moved."""
    found = {ep.name: ep.value for ep in entry_points(group="jupyter_ai.personas")}
    assert found.get("hipo") == "hipo_jupyter.llm.persona:HipoPersona"
    assert issubclass(HipoPersona, JupyternautPersona) and issubclass(HipoPersona, BasePersona)
    shapes = {
        "process_message": ["self", "message"],
        "get_system_prompt": ["self", "model_id", "message"],
        "stream_message": ["self", "reply_stream"],
        "get_chat_path": ["self", "relative"],
    }
    for name, parameters in shapes.items():
        assert list(inspect.signature(getattr(JupyternautPersona, name)).parameters) == parameters
    assert inspect.iscoroutinefunction(JupyternautPersona.process_message)
    assert inspect.iscoroutinefunction(JupyternautPersona.stream_message)
    assert isinstance(JupyternautPersona.defaults, property)


def test_without_jupyternaut_the_persona_manager_is_told_what_to_install() -> None:
    """jupyter-ai without its [jupyternaut] extra: the entry point raises the persona manager's
    PersonaRequirementsUnmet (logged as one warning line), not an error in every chat."""
    script = (
        "import sys\n"
        "sys.modules['jupyter_ai_jupyternaut'] = None\n"
        "from jupyter_ai_persona_manager import PersonaRequirementsUnmet\n"
        "try:\n"
        "    import hipo_jupyter.llm.persona\n"
        "except PersonaRequirementsUnmet as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().endswith("pip install 'hipo-jupyter[jupyter-ai]'")
