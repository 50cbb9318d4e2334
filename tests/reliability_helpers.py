"""Shared parts of the reliability tests (load, faults): processes, self-checking checkpoints,
and the checks that say a memory folder is whole.

A checkpoint written by these tests carries a unique token (searchable: one FTS5 word) and a
checksum of its own body, so a checkpoint cut short anywhere is caught by `verify_body`, and the
set of tokens in the raw logs says which checkpoints are there, and how many times.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, parse_log
from hipo_jupyter.memory.disk.nodes import node_head, parse_node
from hipo_jupyter.memory.disk.store import RAW_NAME

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
TODAY = date(2026, 3, 12)
WORDS = [
    *("pricing", "churn", "cohort", "tier", "cluster", "deploy", "migration", "latency"),
    *("invoice", "forecast", "region", "schema", "backfill", "rollout", "anomaly", "ledger"),
]


def soak(config: pytest.Config) -> bool:
    """The long soak counts run when slow tests are selected (`-m slow`) or HIPO_SOAK=1; the
    default run uses small counts of the same tests."""
    expression = config.getoption("markexpr", "") or ""
    selected = "slow" in expression and "not slow" not in expression
    return selected or os.environ.get("HIPO_SOAK") == "1"


def counts(default: int, soak_count: int) -> list:
    """Parameters of one test run twice: with the default count, and with the soak count marked
    `slow` (see `skip_soak_unless_asked`)."""
    return [default, pytest.param(soak_count, marks=pytest.mark.slow, id=f"soak-{soak_count}")]


def skip_soak_unless_asked(request: pytest.FixtureRequest) -> None:
    """`slow` does not deselect by itself (the default run collects everything), so a soak
    instance skips itself unless slow tests were selected or HIPO_SOAK=1."""
    if request.node.get_closest_marker("slow") and not soak(request.config):
        pytest.skip(f"soak run: pytest -m slow '{request.node.nodeid}' (or HIPO_SOAK=1)")


def engine_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a child process: the repo importable, the clock pinned, no key."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "HIPO_", "JPY_"))
    }
    env.update(
        PYTHONPATH=str(REPO),
        HIPO_TODAY=TODAY.isoformat(),
        IPYTHONDIR=str(tmp_path / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(extra)
    return env


def spawn(script: str, *args: object, env: dict[str, str], **options) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-c", script, *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **options,
    )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL, the signal nothing can catch or clean up after, then reap it."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


# --- self-checking checkpoints -------------------------------------------------------------------
def token(writer: str, number: int) -> str:
    """One searchable word per checkpoint, e.g. `zqk1n42`."""
    return f"zq{writer}n{number}"


def filler(seed: str, size: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS) + str(rng.randrange(1000))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def checked_body(tag: str, size: int = 200) -> str:
    """A checkpoint body whose last field is the checksum of the ones before it."""
    analysis = filler(tag, size)
    digest = hashlib.sha256(f"{tag}|{analysis}".encode()).hexdigest()[:20]
    return f"- request: reliability check {tag}\n- analysis: {analysis}\n- outcome: sum-{digest}"


def body_is_whole(checkpoint: Checkpoint) -> bool:
    request, analysis, outcome = (checkpoint.field(k) for k in ("request", "analysis", "outcome"))
    if not (request and analysis and outcome and request.startswith("reliability check ")):
        return False
    tag = request.removeprefix("reliability check ")
    digest = hashlib.sha256(f"{tag}|{analysis}".encode()).hexdigest()[:20]
    return outcome == f"sum-{digest}"


def raw_checkpoints(root: Path) -> list[Checkpoint]:
    """Every checkpoint of every raw log, read straight from the bytes on disk (no repair)."""
    found: list[Checkpoint] = []
    memory_dir = root / "memory"
    for path in sorted(memory_dir.iterdir()):
        if RAW_NAME.match(path.name):
            text = path.read_bytes().decode("utf-8")
            found.extend(parse_log(text, date=path.name[:-3]))
    return found


def last_word(checkpoint: Checkpoint) -> str:
    words = checkpoint.title.split()
    return words[-1] if words else ""


def tokens_in(checkpoints: Sequence[Checkpoint]) -> Counter:
    """How many times each test token occurs as a checkpoint title's last word."""
    return Counter(last_word(c) for c in checkpoints)


def assert_raw_whole(
    root: Path, acknowledged: Sequence[str], *, unique_ids: bool = False
) -> list[Checkpoint]:
    """Every checkpoint in the raw logs is whole and written once (by its token); every
    acknowledged one is there; with `unique_ids`, no two share an id."""
    checkpoints = raw_checkpoints(root)  # the tests' folders hold only checked checkpoints
    broken = [c.title for c in checkpoints if not body_is_whole(c)]
    assert broken == [], f"checkpoints cut short in the raw logs: {broken[:5]}"
    if unique_ids:
        ids = Counter(c.id for c in checkpoints)
        assert [i for i, n in ids.items() if n > 1] == [], "checkpoint ids occur twice"
    counts = tokens_in(checkpoints)
    twice = [t for t, n in counts.items() if n > 1]
    assert twice == [], f"checkpoints written twice: {twice[:5]}"
    missing = [t for t in acknowledged if counts[t] != 1]
    assert missing == [], f"acknowledged checkpoints missing: {missing[:5]}"
    leftovers = [p.name for p in (root / "memory").glob(".*.append")]
    assert leftovers == [], f"append intents left behind: {leftovers}"
    return checkpoints


# --- derived files -------------------------------------------------------------------------------
def derived_files(root: Path) -> dict[str, bytes]:
    """Compaction nodes and ROOT.md by path relative to memory/."""
    memory_dir = root / "memory"
    files = {}
    for level in ("daily", "weekly", "monthly"):
        for path in sorted((memory_dir / level).glob("*.md")):
            files[f"{level}/{path.name}"] = path.read_bytes()
    if (memory_dir / "ROOT.md").exists():
        files["ROOT.md"] = (memory_dir / "ROOT.md").read_bytes()
    return files


def assert_derived_whole(root: Path) -> None:
    """Every node and ROOT.md is a whole file (old or new, never half); the state parses."""
    memory_dir = root / "memory"
    for relative, data in derived_files(root).items():
        node = parse_node(data.decode("utf-8"))
        assert node.meta.get("type"), f"{relative} has no frontmatter: {data[:80]!r}"
        assert data.endswith(b"\n"), f"{relative} is cut short"
        if relative != "ROOT.md":
            assert node_head(memory_dir / relative).damage is None, relative
    state = memory_dir / ".compaction-state.json"
    if state.exists():
        assert isinstance(json.loads(state.read_text("utf-8")), dict)


def scratch_tree(root: Path, tmp: Path, config: MemoryConfig | None = None) -> dict[str, bytes]:
    """The tree a compaction from scratch builds over a copy of the raw logs (same today)."""
    scratch = tmp / f"scratch-{random.randrange(1 << 30)}"
    (scratch / "memory").mkdir(parents=True)
    for path in (root / "memory").iterdir():
        if RAW_NAME.match(path.name):
            shutil.copy2(path, scratch / "memory" / path.name)
    memory = Memory(scratch, config=config, today=lambda: TODAY)
    try:
        memory.compact()
    finally:
        memory.close()
    files = derived_files(scratch)
    shutil.rmtree(scratch)
    return files


def assert_tree_equals_scratch(root: Path, tmp: Path, config: MemoryConfig | None = None) -> None:
    built, fresh = derived_files(root), scratch_tree(root, tmp, config)
    assert sorted(built) == sorted(fresh)
    different = [name for name in built if built[name] != fresh[name]]
    assert different == [], f"nodes differ from a compaction from scratch: {different}"


def temp_files(root: Path) -> list[str]:
    memory_dir = root / "memory"
    folders = [memory_dir, *(memory_dir / level for level in ("daily", "weekly", "monthly"))]
    return sorted(str(p.relative_to(root)) for f in folders if f.is_dir() for p in f.glob(".*.tmp"))
