"""Where a checkpoint came from: the notebook and cell, the front end, the model.

The comment line carries it (`notebook=`, `cell=`, `via=`, `model=`; see `checkpoint`). Each
front end names itself in `via` when it writes; the write-back of Claude calls adds the model
id taken from the request it saw, never one guessed from text. A checkpoint written before
provenance existed (or by hand, or by Hipocampus) has none of it and reads as "unknown".
"""

from __future__ import annotations

from collections.abc import Iterable

from .checkpoint import Checkpoint

VIA_MAGIC = "magic"
VIA_CLI = "cli"
VIA_IMPORT = "import"
VIA_WRITE_BACK = "write-back"
VIA_MCP = "mcp"
VIA_MEMORY_TOOL = "memory-tool"
VIA_SIDEBAR = "sidebar"
VIA_CLAUDE_CODE = "claude-code"  # a Claude Code session's turns, written by its hooks
FRONT_ENDS = (
    VIA_MAGIC, VIA_CLI, VIA_SIDEBAR, VIA_IMPORT, VIA_WRITE_BACK, VIA_MCP, VIA_MEMORY_TOOL,
    VIA_CLAUDE_CODE,
)  # fmt: skip


def provenance_of(checkpoint: Checkpoint) -> dict[str, str | None]:
    """The provenance fields of a checkpoint, None where it does not say."""
    return {
        "notebook": checkpoint.notebook,
        "cell": checkpoint.cell,
        "via": checkpoint.via,
        "model": checkpoint.model,
        "provider": checkpoint.provider,
    }


PROVIDER_NAMES = {
    "anthropic": "Claude", "openai": "OpenAI", "litellm": "LiteLLM", "jupyter-ai": "Jupyter AI",
}  # fmt: skip
"""The SDK a write-back's calls went through (`LLMCall.client`, recorded at write time as
`provider=`; `jupyter-ai` for the chat persona's, `llm/persona`) -> the name its calls are
called by. The one place that names a call."""
UNKNOWN_CALLER = "LLM"  # a write-back that does not say (written before `provider=`), or a mix


def caller_name(providers: Iterable[str | None]) -> str:
    """What the calls of these providers are called: "Claude", "OpenAI"; "LLM" for a mix or
    when one does not say (never guessed from a model's name)."""
    names = {PROVIDER_NAMES.get(provider or "", UNKNOWN_CALLER) for provider in providers}
    return names.pop() if len(names) == 1 else UNKNOWN_CALLER


def calls_phrase(count: int, providers: Iterable[str | None]) -> str:
    """`3 Claude calls`, `1 OpenAI call`: how a group of write-backs is named (ROOT.md's
    Active Context, the sidebar's grouped entry, the write-back's dump title)."""
    return f"{count} {caller_name(providers)} call{'s' * (count != 1)}"


def write_back_phrase(provider: str | None) -> str:
    """`a Claude call's write-back`, `an OpenAI call's write-back`."""
    name = caller_name([provider])
    return f"{'an' if name[0] in 'AEIOLU' else 'a'} {name} call's write-back"


VIA_PHRASES = {
    VIA_MAGIC: "a notebook cell",
    VIA_CLI: "the command line",
    VIA_IMPORT: "an import",
    VIA_WRITE_BACK: "an LLM call's write-back",  # `write_back_phrase` names its provider
    VIA_MCP: "MCP",
    VIA_MEMORY_TOOL: "Claude's memory tool",
    VIA_SIDEBAR: "the sidebar",
    VIA_CLAUDE_CODE: "Claude Code",
}
"""How each front end reads after "from" when no notebook cell says more."""
MEMORY_TOOL_NOTEBOOK = "memory tool"  # what Claude's memory tool records as the notebook


def provenance_text(checkpoint: Checkpoint) -> str:
    """Where a checkpoint came from as a phrase that reads after "from" (`provenance_line`):
    `analysis.ipynb cell 7`, `the command line`, `MCP`, `a.ipynb cell 3 (a Claude call's
    write-back, model claude-sonnet-4-5)`; "" when the checkpoint records nothing of it.
    Every front end shows this one phrase (the index keeps it for each raw hit)."""
    via = checkpoint.via or ""
    how = VIA_PHRASES.get(via, via)
    if via == VIA_WRITE_BACK:
        how = write_back_phrase(checkpoint.provider)
    where = checkpoint.notebook or ""
    if where == MEMORY_TOOL_NOTEBOOK:
        where = "" if via == VIA_MEMORY_TOOL else "Claude's memory tool"
    if checkpoint.cell:
        where = f"{where} cell {checkpoint.cell}".strip()
    details = [how] if where and via and via != VIA_MAGIC else []
    text = where or how
    if checkpoint.model:
        details.append(f"model {checkpoint.model}")
    if checkpoint.conversation:
        details.append(conversation_phrase(checkpoint.conversation))
    if details:
        text = f"{text} ({', '.join(details)})" if text else ", ".join(details)
    return text


def conversation_phrase(conversation: str) -> str:
    """How a write-back's provenance names the `%%ask` conversation it is of: what a context
    for that conversation leaves out (its turns are in the conversation already)."""
    return f"conversation {conversation}"


def provenance_line(provenance: str) -> str:
    """The line under a hit or checkpoint: "from <phrase>", or "" when nothing is known. (The
    sidebar adds the same "from" to the same phrase.)"""
    return f"from {provenance}" if provenance.strip() else ""
