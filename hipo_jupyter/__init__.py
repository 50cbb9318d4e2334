"""hipo-jupyter: persistent agent memory for notebooks, after the Hipocampus protocol.

Where each job lives (arrows point down only: every front end uses the engine, the engine uses
none of them; one `Memory` object is the way in). Each sub-package's docstring names its modules
and what it may import; `tests/test_layout.py` holds the direction between them, as data.

- `memory/`, the engine (no IPython, Jupyter, anthropic, mcp or psycopg; its own docstring
  is the map): `Memory` and the request/result types at its top, the work in rooms by job:
  `disk/` the files and their formats, `search/` the text index and vectors, `tree/` the
  compaction tree and Layer 1, `forget/` the user's forget and the ledger every holder obeys,
  `recall/` recall and the context a model is sent, `views/` rules, frame and graph, `intake/`
  what comes in (writes, imports, notes). Front ends import only its face,
  `hipo_jupyter.memory`, or a room's `__init__`.
- two modules beside it, used by more than one front end: `terminal.py` (what a terminal is
  shown: control characters of stored text made visible, the one stream the `hipo` command
  prints through) and `memory_tool.py` (Claude's memory tool over a memory root,
  `HipoMemoryTool`, public at this path).
- `team/` the team's memory on PostgreSQL, loaded only when a team URL is set: `link.py` the
  backend the front ends hand to `Memory` (`team_backend`), psycopg loaded on first use;
  `url.py` its URL with the password masked, for `hipo status` without psycopg.
- `llm/` LLM calls with memory: prompt blocks, Layer 1 injected into the SDKs' calls, the
  client, the Claude summarizer; `caching.py` where prompt-cache breakpoints go,
  `conversation.py` a long `%%ask` conversation's zones, `tool_run.py` a `%%ask` with Claude's
  memory tool.
- `mcp/` `hipo mcp`: `server.py` its tools and resources, `stdio.py` its stdio transport,
  `sdk.py` the SDK's parts it uses (mcp 1.x or 2.x), `early.py` its `initialize` answered
  before the SDK has loaded, `config.py` what registers it in each client, `install.py`
  `--install` into a client's config file.
- `cli/` the `hipo` command: `entry.py` the script's entry point, `commands.py` the commands,
  `parser.py` their arguments, `views.py` what they print, `forget.py` forget and
  corrections, `demo.py` `hipo demo`.
- `ipython/` the kernel's front end: `extension.py` `%load_ext hipo`, `magics.py` and `ask.py`
  the magics and `%%ask`, `session.py` the kernel's session, `startup.py` what it found at
  start, `writeback.py` LLM calls written back, `display.py` rich display, `widgets.py` the
  budget and topic widgets, `config.py` the traitlets, `completer.py` TAB completion,
  `questions.py` `%recall ...?` as a question, `progress.py` progress bars.
- `server/` the Jupyter server extension: the REST API of the JupyterLab sidebar.
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
