"""One person of the team load test, run as its own process (see test_team_load.py).

write ROOT URL AUTHOR COUNT   write COUNT checkpoints (background sync after each), run
                              `team sync` and a team recall every 25, then a last sync;
                              prints {"ids": [...], "searches": n} as JSON
search ROOT URL STOPFILE      team recall in a loop until STOPFILE exists; prints
                              {"searches": n, "hits": n}
seed ROOT DAYS PER_DAY        raw logs of DAYS days with PER_DAY checkpoints each (fast,
                              no index), for the kill -9 test
"""

from __future__ import annotations

import json
import sys
from datetime import date, timedelta
from pathlib import Path

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, new_id, render
from hipo_jupyter.team import wait_for_background
from hipo_jupyter.team.link import TeamLink

START = date(2026, 1, 1)
TODAY = date(2026, 3, 12)
WORDS = ("churn", "pricing", "onboarding", "forecast", "retention", "cohort", "dashboard")


def write(root: str, url: str, author: str, count: int) -> None:
    config = MemoryConfig(team_url=url, team_author=author)
    memory = Memory(Path(root), config=config, today=lambda: TODAY, team=TeamLink)
    ids, searches = [], 0
    for n in range(count):
        word = WORDS[n % len(WORDS)]
        checkpoint = memory.remember(
            f"{author} {word} note {n} [project] #{word}",
            f"- analysis: {word} looked at by {author}, step {n}\n- outcome: done {n}",
            on=START + timedelta(days=n % 60),
        )
        ids.append(checkpoint.id)
        if n % 25 == 24:
            memory.team_sync()
            memory.recall(word, team=True, k=5)  # searching while the others write
            searches += 1
    memory.team_sync()
    wait_for_background(str(memory.root), timeout=60)
    memory.team_sync()
    print(json.dumps({"ids": ids, "searches": searches}))


def search(root: str, url: str, stop_file: str) -> None:
    config = MemoryConfig(team_url=url)
    memory = Memory(Path(root), config=config, today=lambda: TODAY, team=TeamLink)
    searches = hits = 0
    while not Path(stop_file).exists():
        result = memory.recall(WORDS[searches % len(WORDS)], team=True, k=10)
        hits += len(result)
        searches += 1
    print(json.dumps({"searches": searches, "hits": hits}))


def seed(root: str, days: int, per_day: int) -> None:
    folder = Path(root) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    for d in range(days):
        day = START + timedelta(days=d)
        blocks = [
            render(
                Checkpoint(
                    title=f"seeded {d}-{n}",
                    fields=(("outcome", f"{WORDS[n % len(WORDS)]} result {d}-{n}"),),
                    id=new_id(),
                )
            )
            for n in range(per_day)
        ]
        (folder / f"{day.isoformat()}.md").write_text("\n".join(blocks), encoding="utf-8")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "write":
        write(args[0], args[1], args[2], int(args[3]))
    elif command == "search":
        search(*args)
    elif command == "seed":
        seed(args[0], int(args[1]), int(args[2]))
    else:
        raise SystemExit(f"unknown command {command!r}")
