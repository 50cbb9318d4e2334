"""Jupyter server extension: REST endpoints under /hipo/api/ for the JupyterLab "Memory" sidebar.

- `extension.py` the extension's entry points (enabled by jupyter-config/); `handlers.py` the
  REST handlers: HTTP in, one engine call, JSON out; `views.py` what they answer, as JSON-ready
  dicts; `paths.py` every path a request names confined to the server root; `cache.py` one
  `Memory` per folder for the life of the server.

May import: the engine's faces, `team/` (the team link, for the memories it opens), tornado and
jupyter_server. Not `ipython/`, `cli/`, `mcp/` or `llm/`.
"""

from .extension import _jupyter_server_extension_points, _load_jupyter_server_extension
from .handlers import ROUTES, HipoHandler, setup_handlers

__all__ = [
    "ROUTES",
    "HipoHandler",
    "_jupyter_server_extension_points",
    "_load_jupyter_server_extension",
    "setup_handlers",
]
