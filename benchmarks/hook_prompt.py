"""How long Claude Code waits for hipo's hooks, at a year's memory.

    python benchmarks/hook_prompt.py [--days 365] [--per-day 20] [--runs 40] [--keep DIR]

Builds the synthetic memory of benchmarks/scale.py (`scale_memory`: `--days` days of
`--per-day` checkpoints through `Memory.remember`, then one compaction), then runs the real
`hipo hook` command as Claude Code runs it, a fresh process each time with the event's JSON on
stdin, and reports wall-clock milliseconds (median, p95, max; for the prompt hook also the
CPU time of the process, user and system, which other load on the machine changes less):

- `prompt` (UserPromptSubmit) for `--runs` queries drawn from what was written (topics,
  phrases, titles, identifiers), and how many got recalled memory back;
- `session-start` (SessionStart): Layer 1, and the characters it printed (limit 10,000);
- `session-end` (SessionEnd): the hook's own time, the writing being handed to a detached
  process (Claude Code's budget is 1.5 s).

Keyword recall only, as the hooks run (no embedding model is loaded per prompt). Wall clock on
a shared machine: read the figures with the load it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from scale_memory import build_memory, synthetic_days  # noqa: E402
from scale_timing import percentile  # noqa: E402

HIPO = str(Path(sys.executable).with_name("hipo"))
END = date(2026, 3, 12)


CPU: list[float] = []  # the CPU milliseconds (user + system) of each hook process


def run_hook(event: str, payload: dict, root: Path, env: dict[str, str]) -> tuple[float, str]:
    """(milliseconds, stdout) of one `hipo hook EVENT` process; its CPU time goes to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [HIPO, "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=True,
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.append(cpu * 1000)
    return wall, done.stdout


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values), 1),
        "p95_ms": round(percentile(values, 95), 1),
        "max_ms": round(max(values), 1),
        "runs": len(values),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=20)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the memory here (reused if it exists)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    root = args.keep or Path(tempfile.mkdtemp(prefix="hipo-hooks-")) / "notebooks"
    days, pool = synthetic_days(END, args.days, args.per_day, args.seed)
    built: dict = {"reused": True}
    if not (root / "memory").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        built = build_memory(root, days, END)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPO_", "CLAUDE_"))}
    env.update(HIPO_TODAY=END.isoformat(), CLAUDE_PROJECT_DIR=str(root))
    common = {"session_id": "bench", "transcript_path": str(root / "none.jsonl"),
              "cwd": str(root), "permission_mode": "default"}  # fmt: skip

    queries = [text for _, text, _ in pool.draw(args.runs, random.Random(args.seed))]
    prompt_ms, answered = [], 0
    run_hook("prompt", {**common, "prompt": queries[0]}, root, env)  # the OS's file cache warm
    CPU.clear()
    for query in queries:
        payload = {**common, "hook_event_name": "UserPromptSubmit", "prompt": query}
        ms, out = run_hook("prompt", payload, root, env)
        prompt_ms.append(ms)
        answered += bool(out.strip())
    prompt_cpu = list(CPU)
    start_ms, start_chars = [], 0
    for _ in range(max(3, args.runs // 8)):
        payload = {**common, "hook_event_name": "SessionStart", "source": "startup"}
        ms, out = run_hook("session-start", payload, root, env)
        start_ms.append(ms)
        start_chars = len(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    end_ms = []
    for _ in range(max(3, args.runs // 8)):
        payload = {**common, "hook_event_name": "SessionEnd", "reason": "other"}
        end_ms.append(run_hook("session-end", payload, root, env)[0])

    result = {
        "memory": {"days": args.days, "per_day": args.per_day, "root": str(root), **built},
        "prompt": {
            **summary(prompt_ms),
            "answered": answered,
            "cpu_median_ms": round(statistics.median(prompt_cpu), 1),
            "cpu_p95_ms": round(percentile(prompt_cpu, 95), 1),
        },  # fmt: skip
        "session_start": {**summary(start_ms), "context_chars": start_chars},
        "session_end": summary(end_ms),
        "machine": {"cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()]},
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    return result


if __name__ == "__main__":
    main()
