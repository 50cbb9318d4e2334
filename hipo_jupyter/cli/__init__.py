"""The `hipo` command: the memory of a notebook folder, from the shell.

- `entry.py` the `hipo` script's entry point, kept light: `hipo --root DIR mcp` answers its
  client before the engine and the MCP SDK have loaded (`hipo_jupyter.mcp.early`).
- `commands.py` each command's handler and `main`: open the one `Memory`, call the engine,
  print, and map every error to one line on stderr (exit code 2).
- `body.py` what `hipo remember` writes: a title with the body on stdin, or a one-line note.
- `parser.py` the arguments of every command; `views.py` what a command prints (text, JSON,
  CSV), through `hipo_jupyter.terminal`.
- `forget.py` `hipo forget` and `hipo corrections`: a checkpoint forgotten for good, a
  proposed correction listed or accepted.
- `hooks.py` `hipo hook EVENT`: Claude Code's hooks, the memory handed to a session unasked
  (Layer 1 at its start, recall for each prompt) and its exchanges written back;
  `hook_handoff.py` the three that write, handed to a detached writer before the engine loads.
- `demo.py` `hipo demo`: the quickstart notebook run headless in a fresh kernel.
- `__main__.py` `python -m hipo_jupyter.cli`, the command the MCP configs fall back to.

May import: the engine's faces (`hipo_jupyter.memory` and its rooms' `__init__`), `terminal`,
`team/` (the team link, loaded only with a URL) and `mcp/` (loaded by `hipo mcp` only). No
IPython, no LLM SDK: `hipo` starts fast and works without a kernel. This `__init__` imports
nothing, so `hipo mcp` loads no more than it needs.
"""
