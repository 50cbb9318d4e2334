"""Latency and size of hipo-jupyter's memory at scale: 30 days and one year, both search backends.

    python benchmarks/scale.py --days 30,365 --per-day 20 --backends fts5,whoosh \\
        --json out.json --keep /tmp/hipo-scale
    python benchmarks/scale.py --backends fts5,fts5+semantic    # with the [semantic] extra

A backend column `X+semantic` is backend X with semantic recall on: its index rebuild embeds
every checkpoint and node, `%%remember` embeds the new checkpoint in the same call, and `%recall`
is hybrid (keyword and vector rankings fused). The other columns run with semantic recall off.

For each size it writes a synthetic memory through the real engine (`Memory.remember`, one
checkpoint at a time, then one `compact()`), copies the folder once per extra backend and rebuilds
the copy's index with that backend, then measures each copy the way a user meets it:

- `%load_ext hipo` with nothing dirty, in fresh processes (a real IPython `InteractiveShell`, as a
  kernel loads it; import time reported apart), median of `--load-runs`;
- `%recall` latency over queries drawn from the topics, identifiers and phrases written;
- `%%remember` latency (checkpoints into today's raw log of the grown memory);
- `%recall` right after a `%%remember` (the next-cell case: the topic cache is stale);
- Layer 1 tokens and the index's bytes on disk.

The synthetic memory is deterministic for a seed (content, dates and order; checkpoint ids carry
the wall clock, as real ones do). Timings are wall-clock on a shared machine: read them as orders
of magnitude and compare the columns of one run, not runs of different days.
`--profile DIR` also writes cProfile statistics of the hot paths (load, recall, context,
remember) at the largest size.

This file is the command line; what it runs is split by what it does: `scale_memory.py` the
synthetic memory, `scale_timing.py` the measurements, `scale_report.py` the table and targets.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


from scale_memory import (  # noqa: E402
    ACTIVE_THEMES,
    DEFAULT_TOPICS,
    ROTATE_EVERY_DAYS,
    THEMES,
    active_themes,
    build_memory,
    memory_config,
    reindex_copy,
    synthetic_days,
)
from scale_report import check_targets, machine, markdown  # noqa: E402
from scale_timing import (  # noqa: E402
    folder_bytes,
    measure_load,
    measure_model_rss,
    measure_session,
    percentile,
    profile_hot_paths,
)

__all__ = [  # what the tests read here
    "ACTIVE_THEMES",
    "ROTATE_EVERY_DAYS",
    "THEMES",
    "active_themes",
    "memory_config",
    "percentile",
    "synthetic_days",
]

DEFAULT_END = date(2026, 3, 12)


# ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", default="30,365", help="comma-separated sizes in days")
    parser.add_argument("--per-day", type=int, default=20, help="checkpoints a day")
    parser.add_argument(
        "--backends",
        default="fts5,whoosh",
        help="columns: fts5, whoosh, fts5+semantic, whoosh+semantic (the last two need the "
        "[semantic] extra)",
    )
    parser.add_argument("--json", dest="json_out", help="also write the results as JSON here")
    parser.add_argument("--keep", help="build the memories in this folder and keep them")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--topics",
        type=int,
        default=DEFAULT_TOPICS,
        help=f"topic pool (10 cycle all year; up to {len(THEMES)} rotate, 10 active at a time)",
    )
    parser.add_argument("--end", default=DEFAULT_END.isoformat(), help="last day (= today)")
    parser.add_argument("--samples", type=int, default=200, help="remember and recall calls")
    parser.add_argument("--load-runs", type=int, default=5, help="fresh processes for load")
    parser.add_argument("--profile", help="write cProfile stats of the hot paths here")
    args = parser.parse_args(argv)
    args.day_sizes = sorted({int(d) for d in args.days.split(",") if d.strip()})
    args.backend_list = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(args.backend_list) - {"fts5", "whoosh", "fts5+semantic", "whoosh+semantic"}
    if unknown or not args.backend_list or not args.day_sizes or min(args.day_sizes) < 1:
        parser.error(
            "--days needs positive sizes; --backends takes fts5, whoosh, fts5+semantic, "
            "whoosh+semantic"
        )
    if any(b.endswith("+semantic") for b in args.backend_list):
        from hipo_jupyter.memory.search.embed import semantic_available

        on, message = semantic_available()
        if not on:
            parser.error(f"a +semantic column needs the extra: {message}")
    if not 1 <= args.topics <= len(THEMES):
        parser.error(f"--topics takes 1 to {len(THEMES)}")
    args.end_day = date.fromisoformat(args.end)
    return args


def run(args: argparse.Namespace, workdir: Path) -> dict:
    result: dict = {
        "machine": machine(),
        "params": {
            "days": args.day_sizes,
            "per_day": args.per_day,
            "backends": args.backend_list,
            "seed": args.seed,
            "topics": args.topics,
            "end": args.end,
            "samples": args.samples,
            "load_runs": args.load_runs,
        },
        "sizes": [],
    }
    largest = max(args.day_sizes)
    for days in args.day_sizes:
        print(f"[scale] {days} days: writing {days * args.per_day:,} checkpoints", file=sys.stderr)
        written, pool = synthetic_days(args.end_day, days, args.per_day, args.seed, args.topics)
        queries = pool.draw(args.samples, random.Random(args.seed))
        built_root = workdir / f"days-{days}" / "built"
        if built_root.exists():
            shutil.rmtree(built_root)
        build = build_memory(built_root, written, args.end_day)
        print(f"[scale] {days} days: built {build}", file=sys.stderr)
        size = {"days": days, "per_day": args.per_day, "build": build, "backends": {}}
        for backend in args.backend_list:
            root = workdir / f"days-{days}" / backend
            metrics: dict = {"reindex_s": reindex_copy(built_root, root, backend, args.end_day)}
            metrics["index_bytes"] = folder_bytes(root / "memory" / ".index")
            metrics.update(measure_load(root, backend, args.end_day, args.load_runs))
            if backend.endswith("+semantic"):  # the model's memory in a kernel (issue 35)
                metrics.update(measure_model_rss(root, args.end_day, queries[0][1]))
            metrics.update(
                measure_session(root, backend, args.end_day, queries, args.samples, args.seed)
            )
            size["backends"][backend] = metrics
            print(f"[scale] {days} days, {backend}: {metrics}", file=sys.stderr)
        if args.profile and days == largest:
            first = args.backend_list[0]
            size["profiles"] = profile_hot_paths(
                built_root if first == "fts5" else workdir / f"days-{days}" / first,
                first,
                args.end_day,
                queries,
                Path(args.profile),
                args.seed,
            )
        shutil.rmtree(built_root)
        result["sizes"].append(size)
    base, top = result["sizes"][0], result["sizes"][-1]
    backend = args.backend_list[0]
    if len(result["sizes"]) > 1 and base["backends"][backend]["layer1_tokens"]:
        result["layer1_ratio"] = {
            "base": base["days"],
            "days": top["days"],
            "ratio": top["backends"][backend]["layer1_tokens"]
            / base["backends"][backend]["layer1_tokens"],
        }
    result["targets"] = check_targets(result)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep:
        workdir = Path(args.keep).absolute()
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(args, workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="hipo-scale-") as tmp:
            result = run(args, Path(tmp))
    print(markdown(result))
    for size in result["sizes"]:
        for name, text in size.get("profiles", {}).items():
            print(f"\n### Profile: {name} ({size['days']} days)\n\n```\n{text.strip()}\n```")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
