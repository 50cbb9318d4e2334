"""A `%%ask` call with tools: the conversation run through the SDK's tool runner.

`%%ask --tools memory` (or `Hipo.ask_tools = ["memory"]`) hands Claude its memory tool over this
notebook's memory (`HipoMemoryTool`), so it can keep its own notes in the tree while it answers.
The runner sends the request, runs each `tool_use` the reply asks for, sends the results back,
and stops at a reply without one. Each reply's text is shown as it arrives; the usage is summed
over every request of the run, and the tool calls are counted for the usage line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hipo_jupyter import llm
from hipo_jupyter.memory import HipoError, Memory

TOOL_NAMES = ("memory",)
MAX_ROUNDS = 12  # replies one %%ask may ask for: a model stuck calling tools stops here


@dataclass
class Usage:
    """Tokens summed over the requests of one run, named as the API's usage names them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def add(self, usage: Any) -> None:
        for name in vars(self):
            value = getattr(usage, name, None)
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)


@dataclass
class ToolRun:
    reply: str  # the text of every reply, in order
    message: Any  # the last reply
    usage: Usage
    tool_calls: int
    requests: int


def make_tools(names: Sequence[str], memory: Memory) -> list[Any]:
    """The runnable tools named (only "memory" so far), over `memory`."""
    unknown = [name for name in names if name not in TOOL_NAMES]
    if unknown:
        raise HipoError(
            f"unknown tool {', '.join(unknown)!s}: %%ask --tools takes {', '.join(TOOL_NAMES)}"
        )
    from hipo_jupyter.memory_tool import HipoMemoryTool

    return [HipoMemoryTool(memory)] if "memory" in names else []


def run_with_tools(
    client: Any,
    request: dict[str, Any],
    tools: Sequence[Any],
    on_text: Callable[[str], None],
) -> ToolRun:
    """Run `request` with `tools` until Claude answers without calling one."""
    runner = client.beta.messages.tool_runner(
        **request, tools=list(tools), max_iterations=MAX_ROUNDS
    )
    texts: list[str] = []
    usage = Usage()
    calls = requests = 0
    message = None
    for message in runner:
        requests += 1
        usage.add(getattr(message, "usage", None))
        calls += sum(1 for block in message.content if getattr(block, "type", "") == "tool_use")
        text = llm.reply_text(message) or ""
        if text.strip():
            on_text(("\n\n" if texts else "") + text)
            texts.append(text)
    return ToolRun("\n\n".join(texts), message, usage, calls, requests)


def tool_calls_text(calls: int) -> str:
    """The usage line's count: ` · tools: 2 calls`."""
    return f" · tools: {calls} call{'' if calls == 1 else 's'}"
