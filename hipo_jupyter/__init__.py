"""hipo-jupyter: persistent agent memory for notebooks, after the Hipocampus protocol.

Where each job lives (arrows point down only: every front end uses the engine, the engine uses
none of them; one `Memory` object is the way in):

- `memory/`, the engine (no IPython, Jupyter, anthropic, mcp or psycopg; its own docstring
  names every module): `memory.py` the `Memory` facade and recall, handing the other jobs to
  `writing.py` (checkpoints, knowledge, imports), `note_files.py` (an agent's notes),
  `structured.py` (rules, frame, graph, export), `status.py` (status, nodes, latest
  checkpoints), `topic_cache.py` (the Topics Index at hand) and `team_link.py` (the team);
  `requests.py` what a request may be (`CheckpointDraft`, `RecallQuery`, dates, limits);
  `store.py` the files on disk; `tree.py` the compaction chain, `summarize.py` and `digest.py`
  the extractive summaries; `indexing.py`, `search.py`, `recall.py` and the `[semantic]`
  modules search and recall; `context_pack.py` the context a model is sent; `layer1.py`
  Layer 1 and its budget; `render.py` the one plain-text rendering of results.
- front ends: `ipython/` (`extension.py` `%load_ext hipo`, `magics.py` and `ask.py` the
  magics and `%%ask`, `session.py` the kernel's session, `startup.py` what it found at start,
  `writeback.py` LLM calls written back, `display.py` rich display, `config.py` the traitlets,
  `completer.py` TAB completion, `questions.py` `%recall ...?` as a question, `progress.py`
  progress bars); `cli.py`, `cli_parser.py` and `cli_views.py` (the `hipo` command, its
  arguments, its views); `server/` (the REST API of the sidebar); `widgets.py`; `mcp.py`
  (`hipo mcp`; `mcp_stdio.py` its stdio transport, answering every line), `mcp_early.py` (its
  `initialize`, answered before the SDK has loaded) and `mcp_config.py` (what registers it in
  each client); `memory_tool.py` and `tool_run.py` (Claude's memory tool); `llm/` (Claude
  calls: prompt blocks, injection into the SDK, the client, the Claude summarizer);
  `caching.py` (where prompt-cache breakpoints go); `context.py` (a long `%%ask`
  conversation's zones); `demo.py`; `entry.py` (the `hipo` script's entry point).
- backends loaded only when asked for: `team/` (the team's memory on PostgreSQL);
  `team_url.py` its URL with the password masked, for `hipo status` without psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import Memory, MemoryConfig

__version__ = "0.1.0"

__all__ = ["Memory", "MemoryConfig", "__version__"]


def __getattr__(name: str) -> Any:
    """`Memory` and `MemoryConfig` load the engine on first use, not on `import hipo_jupyter`:
    `hipo mcp` answers its client before the engine (and the MCP SDK) have loaded."""
    if name in ("Memory", "MemoryConfig"):
        from . import memory

        return getattr(memory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
