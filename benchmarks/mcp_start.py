"""How long an MCP client waits for `hipo mcp`: `--config`, and `initialize` from spawn.

    python benchmarks/mcp_start.py [--runs 7] [--root DIR]

Each run is a fresh process of the `hipo` script beside this Python (what the printed configs
start): `hipo --root DIR mcp --config jupyter-ai` to its exit, and `hipo --root DIR mcp` from
spawn to its answer to a raw JSON-RPC `initialize`, with the early answer on and off
(`HIPO_MCP_EARLY=0`: the MCP SDK answers once it has loaded). Prints medians and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HIPO = str(Path(sys.executable).with_name("hipo"))
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def time_config(root: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [HIPO, "--root", root, "mcp", "--config", "jupyter-ai"], capture_output=True, check=True
    )
    return time.perf_counter() - started


def time_initialize(root: str, early: bool) -> float:
    env = {**os.environ, "HIPO_SEMANTIC": "0", "HIPO_MCP_EARLY": "1" if early else "0"}
    started = time.perf_counter()
    server = subprocess.Popen(
        [HIPO, "--root", root, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin and server.stdout
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    elapsed = time.perf_counter() - started
    assert answer.get("id") == 1 and "result" in answer, answer
    server.stdin.close()
    server.wait(timeout=60)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--root", default=None, help="memory root (default: an empty temp dir)")
    args = parser.parse_args()
    root = args.root or tempfile.mkdtemp(prefix="hipo-mcp-start-")
    print(f"load average at start: {os.getloadavg()}, {os.cpu_count()} cores")
    rows = {
        "hipo mcp --config jupyter-ai": [time_config(root) for _ in range(args.runs)],
        "initialize, early answer": [time_initialize(root, True) for _ in range(args.runs)],
        "initialize, SDK's answer": [time_initialize(root, False) for _ in range(args.runs)],
    }
    print(f"| from spawn, {args.runs} runs | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    for name, times in rows.items():
        print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} |")


if __name__ == "__main__":
    main()
