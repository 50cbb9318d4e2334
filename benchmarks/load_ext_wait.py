"""How long `%load_ext hipo` holds its cell the day after a busy week, with a key (Claude
writes the closed days' summaries, a stand-in model taking 5 s a call) against no key
(extractive summaries), in one run; and, for scale, the same session-start pass made to wait
for the model as it did before the summaries moved to a background thread.

The week: `--notes` checkpoints (default 300) over Monday to Friday, written with `Memory`;
the session starts the next Monday (HIPO_TODAY), so each busy day is closed and its daily node
is over the 200-line threshold. The stand-in is tests/claude_helpers.py's Messages API served on
127.0.0.1, the real anthropic SDK talking to it. Each case runs on its own copy of the week.

    python benchmarks/load_ext_wait.py [--notes 300] [--seconds 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from claude_helpers import (  # noqa: E402
    SDK_CREDENTIAL_VARIABLES,
    FakeMessagesAPI,
    Reply,
    new_shell,
    serve,
)

from hipo_jupyter import llm  # noqa: E402
from hipo_jupyter.ipython import current, unload_ipython_extension  # noqa: E402
from hipo_jupyter.memory import Memory  # noqa: E402

MONDAY = date(2026, 3, 2)
NEXT_MONDAY = MONDAY + timedelta(days=7)
SUMMARY = "## Topics\nweek\n## Key Decisions\n- a summary the stand-in model wrote\n"


class SlowModel(FakeMessagesAPI):
    """The Messages API as a model taking `seconds` for each summary."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        if path == "/v1/messages":
            time.sleep(self.seconds)
        return super().handle(path, headers, raw)

    @staticmethod
    def default_reply(number: int, body: dict[str, Any]) -> str:
        return SUMMARY


def busy_week(folder: Path, notes: int) -> None:
    memory = Memory(folder, today=lambda: NEXT_MONDAY)
    for n in range(notes):
        day = MONDAY + timedelta(days=n % 5)
        memory.remember(
            f"Churn model step {n} #churn",
            f"- request: feature run {n} on cohort C-{n % 17}\n"
            f"- decisions: keep model v{n % 9}, AUC 0.{700 + n % 250}\n"
            f"- outcome: report R-{n} shared",
            on=day,
        )
    memory.close()


def load_ext(folder: Path) -> tuple[float, Any]:
    """Seconds `%load_ext hipo` held its cell, and the session."""
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(folder)!r}")
    started = time.perf_counter()
    shell.run_cell("%load_ext hipo")
    return time.perf_counter() - started, shell


def environment(url: str | None) -> None:
    for name in SDK_CREDENTIAL_VARIABLES:
        os.environ.pop(name, None)
    os.environ.pop("ANTHROPIC_BASE_URL", None)
    if url:
        os.environ["ANTHROPIC_BASE_URL"] = url
        os.environ["ANTHROPIC_API_KEY"] = "stand-in-key"


def run(notes: int, seconds: float, workdir: Path) -> dict[str, Any]:
    week = workdir / "week"
    week.mkdir()
    busy_week(week, notes)
    copies = {name: workdir / name for name in ("no-key", "key", "waiting")}
    for copy in copies.values():
        shutil.copytree(week, copy)
    os.environ["HIPO_TODAY"] = NEXT_MONDAY.isoformat()

    environment(None)
    no_key, shell = load_ext(copies["no-key"])
    unload_ipython_extension(shell)

    api = SlowModel(seconds)
    with serve(api) as url:
        environment(url)
        with_key, shell = load_ext(copies["key"])
        session = current(shell)
        owed = session.startup.owed if session.startup else 0
        started = time.perf_counter()
        session.memory.summaries.wait()
        landed = with_key + time.perf_counter() - started
        calls = len(api.message_requests())
        unload_ipython_extension(shell)

        memory = Memory(copies["waiting"], summarizer=llm.ClaudeSummarizer(),
                        today=lambda: NEXT_MONDAY)  # fmt: skip
        started = time.perf_counter()
        memory.compact(background=False)  # the pass as it was: each summary in the cell
        waiting = time.perf_counter() - started
        memory.close()
    environment(None)
    return {
        "notes": notes,
        "model_seconds_per_call": seconds,
        "summaries_owed": owed,
        "model_calls": calls,
        "load_ext_no_key_s": round(no_key, 2),
        "load_ext_key_s": round(with_key, 2),
        "ratio_key_to_no_key": round(with_key / no_key, 2),
        "all_summaries_landed_s": round(landed, 2),
        "pass_waiting_on_the_model_s": round(waiting, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    os.environ.setdefault("HIPO_SEMANTIC", "0")  # the cell's own cost, not the embedder's
    with tempfile.TemporaryDirectory(prefix="hipo-load-ext-") as workdir:
        report = run(args.notes, args.seconds, Path(workdir))
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
