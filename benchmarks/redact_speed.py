"""How long redaction takes on a long body: what every write pays before it reaches the disk.

    python benchmarks/redact_speed.py [--runs 15] [--kb 100]

Builds a body of notebook text dense in key words (`key`, `token`, `password`, `auth`, ids,
hashes, dates, paths, code) but holding no secret, and the same body with a credential of
the table's formats on 2% of its lines; prints the median and the slowest of `--runs`
redactions of each, and of a short checkpoint field (what a team sync redacts a million times).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from hipo_jupyter.memory.disk.redact import redact

LINES = [
    "- analysis: joined orders with customers on customer_id; 1.2M rows, 3 duplicates dropped",
    "df = pd.read_parquet('data/2026/q1_orders.parquet'); df.groupby('region').revenue.sum()",
    "- decisions: keep the key metrics dashboard; token usage fell 12% after caching",
    "Checkpoint 2026-03-12T14:32:05Z-7f3a came from analysis.ipynb cell 7.",
    "cache_key = 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "primary key id 123e4567-e89b-12d3-a456-426614174000 in table orders",
    "The password policy requires 12 characters and a token rotation every 90 days.",
    "response = client.messages.create(model=model, max_tokens=1024, messages=msgs)",
    "auth: claude-sonnet-4-20250514; --key-file /home/dana/.ssh/id_ed25519",
    "| region | revenue | growth |\n|---|---|---|\n| EMEA | 1,204,332 | 4.1% |",
]
SECRETS = [  # assembled from pieces, so no whole token shape sits in the source
    "login(token='hf" + "_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH')",
    "stripe.api_key = sk" + "_live_aB3dE5fG7hJ9kL2mN4pQ6rS8",
    "git clone https://oauth2:glpat" + "-aB3dE5fG7hJ9kL2mN4pQ@gitlab.com/a/b",
    "doctl auth init -t dop" + "_v1_" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0" * 2,
    "curl -H 'X-Auth-Token: aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY' https://x.io",
]


def body(kb: int, secrets: bool, rng: random.Random) -> str:
    lines: list[str] = []
    while sum(map(len, lines)) < kb * 1000:
        lines.append(rng.choice(LINES))
        if secrets and rng.random() < 0.02:
            lines.append(rng.choice(SECRETS))
    return "\n".join(lines)


def timed(text: str, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        redact(text)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--kb", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(20260312)
    for label, secrets in (("no secret", False), ("2% of lines a secret", True)):
        median, slowest = timed(body(args.kb, secrets, rng), args.runs)
        print(f"{args.kb} KB, {label}: median {median:.1f} ms, slowest {slowest:.1f} ms")
    field = "- outcome: report shared with the team on 2026-03-12"
    start = time.perf_counter()
    for _ in range(20_000):
        redact(field)
    print(f"a short field: {(time.perf_counter() - start) * 50:.2f} us")


if __name__ == "__main__":
    main()
