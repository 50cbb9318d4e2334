"""hipo-jupyter: persistent agent memory for notebooks, after the Hipocampus protocol.

Where each job lives (arrows point down only: every front end uses the engine, the engine uses
none of them; one `Memory` object is the way in):

- `memory/`, the engine (no IPython, Jupyter, anthropic, mcp or psycopg; its own docstring
  is the map): `Memory` and the request/result types at its top, the work in rooms by job:
  `disk/` the files and their formats, `search/` the text index and vectors, `tree/` the
  compaction tree and Layer 1, `recall/` recall and the context a model is sent, `views/`
  rules, frame and graph, `intake/` what comes in (writes, imports, notes). Front ends import
  only its face, `hipo_jupyter.memory`, or a room's `__init__`.
- front ends: `ipython/` (`extension.py` `%load_ext hipo`, `magics.py` and `ask.py` the
  magics and `%%ask`, `session.py` the kernel's session, `startup.py` what it found at start,
  `writeback.py` LLM calls written back, `display.py` rich display, `config.py` the traitlets,
  `completer.py` TAB completion, `questions.py` `%recall ...?` as a question, `progress.py`
  progress bars); `cli.py`, `cli_parser.py`, `cli_views.py` and `cli_forget.py` (the `hipo`
  command, its arguments, its views, forget and corrections); `server/` (the REST API of the
  sidebar); `widgets.py`; `mcp.py` (`hipo mcp`; `mcp_stdio.py` its stdio transport,
  answering every line; `mcp_sdk.py` the SDK's parts it uses, from mcp 1.x or 2.x),
  `mcp_early.py` (its
  `initialize`, answered before the SDK has loaded), `mcp_config.py` (what registers it in
  each client) and `mcp_install.py` (`--install`: merged into a client's config file);
  `memory_tool.py` and `tool_run.py` (Claude's memory tool); `llm/` (Claude
  calls: prompt blocks, injection into the SDK, the client, the Claude summarizer);
  `caching.py` (where prompt-cache breakpoints go); `context.py` (a long `%%ask`
  conversation's zones); `demo.py`; `entry.py` (the `hipo` script's entry point);
  `terminal.py` (what a terminal is shown: control characters of stored text made visible,
  the one stream the `hipo` command prints through).
- backends loaded only when asked for: `team/` (the team's memory on PostgreSQL);
  `team_link.py` the team backend the front ends hand to `Memory` (`team_backend`), psycopg
  loaded on first use; `team_url.py` its URL with the password masked, for `hipo status`
  without psycopg.
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
