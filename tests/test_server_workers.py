"""The Jupyter server under load from one notebook (issue 23): a few workers, one lock per
notebook folder, and the slow path of `/budget` (a folder of 100,000 knowledge files, every
entry checked for a link out of the server root) bounded, so an unrelated notebook's
`/recall` is not held behind it. Numbers the server reads are ASCII digits: a 400, never a 500.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from hipo_jupyter.memory import Memory

FILES = 100_000


def pricing(memory: Memory) -> None:
    memory.remember("Competitor pricing #pricing", "- decisions: cut the starter tier by 15%")


@pytest.fixture
def folders(notebook_folder) -> tuple[Path, Path]:
    big = notebook_folder("big", pricing)
    knowledge = big / "knowledge" / "pasted"
    knowledge.mkdir(parents=True)
    for n in range(FILES):
        fd = os.open(knowledge / f"n{n}.md", os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)
    return big, notebook_folder("small", pricing)


async def test_a_slow_notebook_does_not_hold_another(jp_fetch, folders) -> None:
    done: dict[str, float] = {}

    async def fetch(name: str, endpoint: str, **params: str) -> None:
        response = await jp_fetch("hipo", "api", endpoint, params=params)
        assert response.code == 200
        done[name] = time.monotonic()

    await fetch("warm", "budget", path="big/")  # the Memory objects opened once
    await fetch("warm", "recall", path="small/", q="pricing")
    started = time.monotonic()
    slow = [fetch(f"budget{n}", "budget", path="big/") for n in range(4)]
    await asyncio.sleep(0)
    await asyncio.gather(*slow, fetch("recall", "recall", path="small/", q="pricing"))
    last_budget = max(done[f"budget{n}"] for n in range(4))
    assert done["recall"] < last_budget, "the recall waited behind the other notebook"
    assert done["recall"] - started < 2.0
    assert last_budget - started < 20  # each /budget on 100,000 files is bounded


@pytest.mark.parametrize("value", ["²", "①", "٣", "nan", "1e3"])
async def test_unicode_digits_are_a_400(jp_fetch, notebook_folder, value: str) -> None:
    notebook_folder("small", pricing)
    for params in ({"q": "pricing", "budget": value}, {"q": "pricing", "k": value}):
        with pytest.raises(HTTPClientError) as error:
            await jp_fetch("hipo", "api", "recall", params={"path": "small/", **params})
        assert error.value.code == 400
        message = json.loads(error.value.response.body)["message"]
        assert len(message.splitlines()) == 1
    with pytest.raises(HTTPClientError) as error:
        await jp_fetch("hipo", "api", "recent", params={"path": "small/", "n": value})
    assert error.value.code == 400
