"""`hipo mcp`: the memory of one root served to MCP clients (Claude Code, jupyter-ai, Claude
Desktop) over stdio.

- `server.py` the tools and resources, each one `Memory` call rendered as fenced text.
- `stdio.py` the stdio transport, answering every line (bad JSON included); `jsonrpc.py` the
  JSON-RPC rules it keeps itself (ids, batches per protocol version); `sdk.py` the MCP SDK's
  parts it uses, from mcp 1.x or 2.x.
- `early.py` the answer to `initialize`, given before the SDK has loaded.
- `config.py` what registers the server in each client and what it says at `initialize`
  (its name, version and instructions: no SDK needed, below `early.py` and `server.py`);
  `install.py` `--install`: that entry merged into a client's config file; `hooks_config.py`
  Claude Code's hooks (`hipo hook EVENT`) merged into its settings.json beside it.

May import: the engine's faces (`hipo_jupyter.memory` and its rooms' `__init__`) and the MCP
SDK (only `server.py`, `stdio.py` and `sdk.py`). Not the CLI, IPython or an LLM SDK; the CLI
imports this package, never the reverse. This `__init__` imports nothing: `early.py` and
`config.py` must load without the SDK.
"""
