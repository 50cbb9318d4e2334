"""No team URL, nothing changes: the team package and psycopg are never imported."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest


def test_without_a_team_url_psycopg_is_never_imported(memory_root):
    script = (
        "import sys\n"
        "from hipo_jupyter.memory import Memory\n"
        f"memory = Memory({str(memory_root)!r})\n"
        "memory.remember('Churn [project]', '- outcome: kept')\n"
        "assert len(memory.recall('churn')) == 1\n"
        "memory.team_resume()\n"
        "loaded = [m for m in sys.modules if m.startswith(('psycopg', 'hipo_jupyter.team'))]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_engine_never_imports_the_team():
    """memory/ imports neither hipo_jupyter.team nor psycopg, not even inside a function: the
    front end that read the team URL hands the backend in (`team.link.team_backend`)."""
    from pathlib import Path

    engine = Path(__file__).resolve().parent.parent / "hipo_jupyter" / "memory"
    for module in engine.rglob("*.py"):
        for line in module.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith(("import ", "from ")):
                assert "psycopg" not in line and "team" not in line.split("import")[0], module


def test_front_ends_without_a_team_url_load_no_psycopg(memory_root):
    """The front ends import the team link (and its URL masking) at module level; without a URL
    that must stay light: `hipo status`, the server's memory cache and the team package's face
    load neither psycopg nor a team module that needs it."""
    script = (
        "import sys\n"
        "from hipo_jupyter.cli import commands as cli\n"
        "import hipo_jupyter.server.cache, hipo_jupyter.team\n"
        f"root = {str(memory_root)!r}\n"
        "from hipo_jupyter.memory import Memory\n"
        "Memory(root).remember('Churn [project]', '- outcome: kept')\n"
        "assert cli.main(['--root', root, 'status']) == 0\n"
        "heavy = ('psycopg', 'hipo_jupyter.team.database', 'hipo_jupyter.team.sync')\n"
        "loaded = [m for m in sys.modules if m.startswith(heavy)]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_team_package_loads_a_name_on_first_use():
    """`from hipo_jupyter.team import TeamDatabase` still works: the face loads its module."""
    script = (
        "import sys\n"
        "import hipo_jupyter.team as team\n"
        "assert 'hipo_jupyter.team.database' not in sys.modules\n"
        "from hipo_jupyter.team import TeamDatabase, sync_in_background\n"
        "assert TeamDatabase.__module__ == 'hipo_jupyter.team.database'\n"
        "assert sorted(team.__all__) == sorted(team._HOMES)\n"
        "try:\n"
        "    team.nothing\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('an unknown name must be an AttributeError')\n"
    )
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("the team extra is not installed")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
