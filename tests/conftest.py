"""Shared fixtures: every test gets its own memory root, so no test sees another's files."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED = REPO.parent / "shared"

pytest_plugins = ["pytest_jupyter.jupyter_server", "postgres_helpers"]
# tests/clients runs in its own environment (`make test-clients`, the [clients] extra).
collect_ignore = ["clients"]


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


@pytest.fixture
def jp_server_config():
    """pytest-jupyter's server, with hipo's REST API (the sidebar's) enabled."""
    return {"ServerApp": {"jpserver_extensions": {"hipo_jupyter.server": True}}}
