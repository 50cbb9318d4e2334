"""No team URL, nothing changes: the team package and psycopg are never imported."""

from __future__ import annotations

import subprocess
import sys


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
    front end that read the team URL hands the backend in (`team_link.team_backend`)."""
    from pathlib import Path

    engine = Path(__file__).resolve().parent.parent / "hipo_jupyter" / "memory"
    for module in engine.rglob("*.py"):
        for line in module.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith(("import ", "from ")):
                assert "psycopg" not in line and "team" not in line.split("import")[0], module
