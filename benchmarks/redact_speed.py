"""How long redaction takes on a long body: what every write pays before it reaches the disk.

    python benchmarks/redact_speed.py [--runs 15] [--kb 100]
    python benchmarks/redact_speed.py --adversarial [--mb 1 16] [--before REV] [--cap 20]

Builds a body of notebook text dense in key words (`key`, `token`, `password`, `auth`, ids,
hashes, dates, paths, code) but holding no secret, and the same body with a credential of
the table's formats on 2% of its lines; prints the median and the slowest of `--runs`
redactions of each, and of a short checkpoint field (what a team sync redacts a million times).

`--adversarial` (issue 50): inputs built to make a rule rescan a run from each start, each one
unit repeated to `--mb` megabytes (a repeated prefix such as `sk-`, `ghp_`, `AKIA`, `key=`,
`password:`, long runs of key-like characters, long base64), and prints seconds per MB for each.
With `--before REV`, the redaction of that git revision (read with `git show`, run in a
subprocess) is timed on the same inputs too, at the first size only and capped at `--cap`
seconds an input: a capped figure is printed as `>cap`, the run having been stopped there.
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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

# One unit each, repeated: the prefixes of the table and of the rules, names and separators
# without a value, runs of key-like characters; the `é` at the end of each input is a word
# character no class takes, so a pattern that reaches the end of a run fails there.
ADVERSARIAL = {
    "sk-": "sk-",
    "ghp_": "ghp_",
    "AKIA": "AKIA",
    "key=": "key=",
    "password:": "password:",
    "token_": "token_",
    'api_key="': 'api_key="',
    "eyJ": "eyJ",
    "glpat-": "glpat-",
    "hvs.": "hvs.",
    "://a:": "://a:",
    "machine .. password": "machine m login l password ",
    "curl -u a:": "curl -u a:",
    "--password": "--password ",
    "TOKEN=x + blanks": "TOKEN=x" + " " * 57,
    "key-like run": "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY",
    "key= + key-like run": "key=aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY",
}


def adversarial_text(unit: str, mb: int) -> str:
    if unit == "base64":
        return "data:image/png;base64," + base64.b64encode(random.randbytes(mb * 750_000)).decode()
    return unit * (mb * 1_000_000 // len(unit)) + "é"


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


def before_seconds(revision: str, label: str, mb: int, cap: float) -> str:
    """Seconds per MB of `revision`'s redaction on one adversarial input, in a subprocess
    stopped at `cap` seconds (`>cap`)."""
    folder = Path(tempfile.mkdtemp(prefix="redact-before-"))
    package = folder / "redact_before"
    package.mkdir()
    for name in ("__init__.py", "credentials.py", "rules.py"):
        path = f"{revision}:hipo_jupyter/memory/disk/redact/{name}"
        source = subprocess.run(["git", "show", path], capture_output=True, text=True, check=True)
        (package / name).write_text(source.stdout)
    unit = "base64" if label == "base64" else ADVERSARIAL[label]
    script = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(folder)!r})\n"
        "from redact_before import redact\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from redact_speed import adversarial_text\n"
        f"text = adversarial_text({unit!r}, {mb})\n"
        "start = time.perf_counter(); redact(text)\n"
        f"print((time.perf_counter() - start) / {mb})\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=cap
        )
    except subprocess.TimeoutExpired:
        return f">{cap:.0f}"
    return f"{float(done.stdout):.2f}" if done.returncode == 0 else "error"


def adversarial(sizes: list[int], revision: str | None, cap: float) -> None:
    labels = [*ADVERSARIAL, "base64"]
    before = f"'before' = {revision}, capped at {cap:.0f} s" if revision else "no 'before'"
    print(f"seconds per MB (one run each; {before})")
    print(f"{'input':24}" + "".join(f"{f'{mb} MB':>9}" for mb in sizes) + "   before")
    worst = 0.0
    for label in labels:
        unit = "base64" if label == "base64" else ADVERSARIAL[label]
        row = f"{label:24}"
        for mb in sizes:
            text = adversarial_text(unit, mb)
            start = time.perf_counter()
            redact(text)
            per_mb = (time.perf_counter() - start) / mb
            worst = max(worst, per_mb)
            row += f"{per_mb:9.2f}"
        if revision:
            row += f"   {before_seconds(revision, label, sizes[0], cap):>6}"
        print(row, flush=True)
    print(f"slowest: {worst:.2f} s per MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--adversarial", action="store_true")
    parser.add_argument("--mb", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--before", metavar="REV", help="also time this git revision (capped)")
    parser.add_argument("--cap", type=float, default=20.0, help="seconds per 'before' input")
    args = parser.parse_args()
    if args.adversarial:
        adversarial(args.mb, args.before, args.cap)
        return
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
