"""Jupyter server extension: REST endpoints under /hipo/api/ for the JupyterLab "Memory" sidebar."""

from .extension import _jupyter_server_extension_points, _load_jupyter_server_extension
from .handlers import ROUTES, HipoHandler, setup_handlers

__all__ = [
    "ROUTES",
    "HipoHandler",
    "_jupyter_server_extension_points",
    "_load_jupyter_server_extension",
    "setup_handlers",
]
