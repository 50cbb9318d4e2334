"""Shared fixtures: every test gets its own memory root, so no test sees another's files."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED = REPO.parent / "shared"

pytest_plugins = ["pytest_jupyter.jupyter_server", "postgres_helpers"]
# tests/clients and tests/wheel run in environments of their own (`make test-clients`, the
# [clients] extra; `make test-wheel`, the built wheel).
collect_ignore = ["clients", "wheel"]


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    root = tmp_path / "notebooks"
    root.mkdir()
    return root


@pytest.fixture
def fixed_today() -> date:
    """A Thursday mid-month, so week and month boundaries are easy to reason about."""
    return date(2026, 3, 12)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's memory root, API key or IPython profile."""
    monkeypatch.delenv("HIPO_ROOT", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("HIPO_TEAM", raising=False)  # no test reaches a real team database
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    # Keyword recall unless a test asks for vectors: the same results whether or not the
    # semantic extra is installed (the semantic tests turn it back on).
    monkeypatch.setenv("HIPO_SEMANTIC", "0")


# --- the Jupyter server (pytest-jupyter's `jp_fetch`), one set for every server test ----------

EMPTY_NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
SERVER_TIMEOUT_S = 30  # a request that hangs fails its test, not the suite


@pytest.fixture
def jp_server_config():
    """pytest-jupyter's server, with hipo's REST API (the sidebar's) enabled."""
    return {"ServerApp": {"jpserver_extensions": {"hipo_jupyter.server": True}}}


@pytest.fixture
def notebook_folder(jp_root_dir: Path) -> Callable[..., Path]:
    """make(name, fill) -> a folder in the server's root holding an empty notebook and the
    memory `fill(memory)` wrote (a Memory dated `today`, closed before the server reads it)."""

    def make(
        name: str = "project",
        fill: Callable[[Any], object] | None = None,
        *,
        notebook: str = "analysis.ipynb",
        today: date = date(2026, 3, 12),
    ) -> Path:
        from hipo_jupyter.memory import Memory

        folder = jp_root_dir / name
        folder.mkdir()
        (folder / notebook).write_text(EMPTY_NOTEBOOK)
        if fill is not None:
            memory = Memory(folder, today=lambda: today)
            try:
                fill(memory)
            finally:
                memory.close()
        return folder

    return make


@pytest.fixture
def api_get(jp_fetch) -> Callable[..., Awaitable[tuple[int, dict]]]:
    """get(endpoint, **params) -> (status, JSON body) of GET /hipo/api/<endpoint>, an error's
    status and body as well as a 200's."""
    from tornado.httpclient import HTTPClientError

    async def get(endpoint: str, **params: str) -> tuple[int, dict]:
        try:
            response = await asyncio.wait_for(
                jp_fetch("hipo", "api", endpoint, params=params, method="GET"),
                timeout=SERVER_TIMEOUT_S,
            )
            return response.code, json.loads(response.body)
        except HTTPClientError as error:
            body = error.response.body if error.response is not None else b"{}"
            return error.code, json.loads(body or b"{}")

    return get
