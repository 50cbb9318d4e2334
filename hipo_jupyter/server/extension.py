"""The jupyter_server extension, enabled on install by
jupyter-config/jupyter_server_config.d/hipo_jupyter.json (shipped as shared-data)."""

from __future__ import annotations

from typing import Any

from .handlers import setup_handlers


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "hipo_jupyter.server"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    setup_handlers(server_app.web_app)
    server_app.log.info("hipo: memory endpoints at %shipo/api/", server_app.base_url)
