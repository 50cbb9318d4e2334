"""Run the fuzz properties of tests/test_fuzz.py for a given number of cases and count them.

    .venv/bin/python benchmarks/fuzz.py --cases 100000

The properties are the test file's own (hypothesis, no example database, no deadline); this
script only raises their budget (HIPO_FUZZ_CASES) and prints how many cases each target ran,
which is what docs/RELIABILITY.md reports. Exit code 0 when every property held.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases in all (default 100k)")
    args = parser.parse_args(argv)
    os.environ["HIPO_FUZZ_CASES"] = str(args.cases)
    sys.path[:0] = [str(REPO), str(REPO / "tests")]

    import pytest

    started = time.perf_counter()
    code = pytest.main(["-q", "-p", "no:cacheprovider", str(REPO / "tests" / "test_fuzz.py")])
    seconds = time.perf_counter() - started
    run = sys.modules["test_fuzz"].RUN
    width = max(map(len, run), default=10)
    print(f"\n{'target':<{width}}  cases")
    for name, count in sorted(run.items()):
        print(f"{name:<{width}}  {count:>7,}")
    print(f"{'total':<{width}}  {sum(run.values()):>7,}  in {seconds:.0f} s, exit code {code}")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
