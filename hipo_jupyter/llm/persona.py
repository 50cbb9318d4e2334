"""The jupyter-ai chat with this folder's memory: Jupyternaut, with what `%%ask` sends unasked.

`HipoPersona` is installed by the `jupyter_ai.personas` entry point (the `[jupyter-ai]` extra
brings jupyter-ai 3.2 with Jupyternaut). It is Jupyternaut (its notebook, JupyterLab and code
tools and MCP servers stay; its model is the one the user configured in jupyter-ai's settings,
called through litellm), and for each message it adds what a `%%ask` cell adds:

- Layer 1 first in the system prompt, fenced as memory by the function that fences it for
  `%%ask` and `hipo mcp` (`layer1_block`: a boundary stored text cannot know);
- the memory recalled for the message (`Memory.context`, the call `%%ask` makes), fenced as
  quoted data, after Jupyternaut's own prompt; nothing when nothing matches;
- after a whole reply, a write-back through the engine's write path (`write_checkpoint`,
  `via=write-back`, provider `jupyter-ai`, the chat file as the notebook, the model id the
  call was made with): Claude's task log, not the user's notes (`disk/trust`).

The memory is the chat file's folder's (or HIPO_ROOT's): `resolve_root`, as for a notebook, so
a chat beside a notebook shares its memory. Engine work runs off the server's event loop. An
engine error never stops a reply: the reply goes without memory and the server log says why
in one line. The jupyter-ai packages are imported only here (the persona API is still
changing: tests/clients/test_persona.py tests what this module relies on).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import secrets
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import PersonaDefaults, PersonaRequirementsUnmet
from traitlets import Int

from hipo_jupyter.memory import (
    DEFAULT_BUDGET,
    MAX_QUERY_CHARS,
    MIN_BUDGET,
    CheckpointDraft,
    HipoError,
    Memory,
    resolve_root,
)
from hipo_jupyter.memory.disk import VIA_WRITE_BACK

from .conversation import gist
from .prompt import layer1_block

try:  # jupyter-ai 3.2 ships Jupyternaut only in its [jupyternaut] extra
    from jupyter_ai_jupyternaut.jupyternaut.jupyternaut import JupyternautPersona
except ImportError as error:  # the persona manager logs this one line and goes on
    raise PersonaRequirementsUnmet(
        f"hipo's persona needs Jupyternaut ({error.name} is missing): "
        "pip install 'hipo-jupyter[jupyter-ai]'"
    ) from None

PROVIDER = "jupyter-ai"  # the write-back's `provider=`: the front end whose calls they were
TITLE_CHARS = 60


@dataclass
class Turn:
    """One message's memory and reply, carried from `process_message` through Jupyternaut's
    `get_system_prompt` and `stream_message` (a context variable: one per asyncio task)."""

    question: str
    layer1: str | None = None  # fenced, ready for the prompt
    recalled: str | None = None  # fenced by `Memory.context`
    model: str | None = None
    reply: list[str] = field(default_factory=list)
    whole: bool = False  # the reply stream ended without an error


_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("hipo_turn", default=None)


class _Memories:
    """One `Memory` per root for the life of the server process (opening one builds its index
    reader); safe to share between the threads engine work runs in."""

    def __init__(self) -> None:
        self._memories: dict[Path, Memory] = {}
        self._lock = threading.Lock()

    def get(self, root: Path) -> Memory:
        root = root.resolve()
        with self._lock:
            memory = self._memories.get(root)
            if memory is None:
                memory = self._memories[root] = Memory(root)
            return memory


MEMORIES = _Memories()


class HipoPersona(JupyternautPersona):
    """Jupyternaut with this folder's memory in every reply, and each exchange written back."""

    recall_budget = Int(
        DEFAULT_BUDGET,
        min=MIN_BUDGET,
        config=True,
        help="Tokens of recalled memory sent with each chat message (as Hipo.recall_budget).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Jupyternaut keeps this chat's turns for the server's life (its checkpointer): recall
        # leaves out the write-backs of this conversation only (`Memory.context`).
        self.conversation = secrets.token_hex(6)

    @property
    def defaults(self) -> PersonaDefaults:
        base = super().defaults
        return PersonaDefaults(
            name="Hipo",
            avatar_path=base.avatar_path,
            description="Jupyternaut with this folder's memory: Layer 1 and what it recalls "
            "for each message in its prompt, each exchange written back.",
            system_prompt=base.system_prompt,
        )

    # --- where the memory is -----------------------------------------------------------------
    def hipo_memory(self) -> Memory:
        """The memory of the chat file's folder (or HIPO_ROOT): `resolve_root`, as a notebook's."""
        return MEMORIES.get(resolve_root(None, notebook_path=self.get_chat_path()))

    def _load(self, turn: Turn) -> None:
        """Layer 1 and the memory recalled for the question, into `turn` (in a worker thread).
        A message longer than a recall query may be (pasted code, a log) is recalled by its
        start; a message of blanks or attachments only recalls nothing."""
        memory = self.hipo_memory()
        turn.layer1 = layer1_block(memory.layer1().text, cache=False)["text"]
        query = " ".join(turn.question.split())[:MAX_QUERY_CHARS].strip()
        if not query:
            return
        context = memory.context(
            query, budget=self.recall_budget, layer1=False, conversation=self.conversation
        )
        turn.recalled = context.text if context.hits else None

    def _write_back(self, turn: Turn) -> str:
        """The exchange as a checkpoint through the engine's write path; returns its id."""
        reply = "".join(turn.reply)
        chat = self.get_chat_path(relative=True)
        digest = json.dumps([PROVIDER, turn.model, turn.question, reply])
        exchange = hashlib.sha256(digest.encode("utf-8")).hexdigest()[:16]
        references = [chat, *([turn.model] if turn.model else []), f"exchange {exchange}"]
        body = "\n".join([
            f"- request: {gist(turn.question)}",
            f"- outcome: {gist(reply)}",
            f"- references: {', '.join(references)}",
        ])  # fmt: skip
        checkpoint = self.hipo_memory().write_checkpoint(
            CheckpointDraft.parse(gist(turn.question, TITLE_CHARS), body, type="project"),
            notebook=chat,
            via=VIA_WRITE_BACK,
            model=turn.model,
            provider=PROVIDER,
            conversation=self.conversation,
        )
        return checkpoint.id

    # --- Jupyternaut's steps, with the memory ------------------------------------------------
    async def process_message(self, message: Any) -> None:
        turn = Turn(question=message.body or "")
        token = _TURN.set(turn)
        try:
            try:
                await asyncio.to_thread(self._load, turn)
            except (HipoError, OSError) as error:
                self.log.warning("hipo: this reply goes without memory: %s", error)
            await super().process_message(message)
        finally:
            _TURN.reset(token)
        if not (turn.whole and turn.reply):
            return
        try:
            written = await asyncio.to_thread(self._write_back, turn)
        except (HipoError, OSError) as error:
            self.log.warning("hipo: the chat exchange was not written back: %s", error)
            return
        self.log.info("hipo: chat exchange written back as %s", written)

    def get_system_prompt(self, model_id: str, message: Any) -> Any:
        """Jupyternaut's prompt between Layer 1 (first: it changes least) and the recalled
        memory (last: it changes with every message)."""
        prompt = super().get_system_prompt(model_id=model_id, message=message)
        turn = _TURN.get()
        if turn is None or not isinstance(prompt, str):
            return prompt
        turn.model = model_id
        parts = [turn.layer1, prompt, turn.recalled]
        return "\n\n".join(part for part in parts if part)

    async def stream_message(self, reply_stream: AsyncIterator[Any]) -> None:
        """Jupyternaut's reply streamed to the chat as it is, and kept for the write-back."""
        turn = _TURN.get()
        if turn is None:
            await super().stream_message(reply_stream)
            return

        async def kept() -> AsyncIterator[Any]:
            async for chunk in reply_stream:
                if isinstance(chunk, str):
                    turn.reply.append(chunk)
                yield chunk
            turn.whole = True

        await super().stream_message(kept())
