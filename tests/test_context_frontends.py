"""Every front end that hands memory to a model sends `Memory.context`'s text (issue 13):
`%%ask --recall` (through the real SDK and the fake Messages API), `hipo recall --context`, and
the server's `recall?budget=`."""

from __future__ import annotations

import io
import json
import sys
from datetime import date
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from tornado.httpclient import HTTPClientError

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.ipython import current
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.recall.fence import RECALL_TAG

TODAY = "2026-03-12"
PRICING = "- decisions: cut the starter tier by 15%\n- outcome: report shared"


def fill(memory: Memory) -> None:
    memory.remember("Competitor pricing #pricing", PRICING, on=date(2026, 3, 10))
    for n in range(40):
        memory.remember(
            f"Pricing note {n}",
            f"- analysis: pricing test {n} on the starter tier, cohort {n} " + "detail " * 30,
            on=date(2026, 2, 1 + n % 28),
        )
    memory.compact()


# --- %%ask --recall -------------------------------------------------------------------------------
def test_ask_recall_sends_memory_context_without_layer1(claude_shell, api: FakeMessagesAPI) -> None:
    session = current(claude_shell)
    fill(session.memory)
    run(claude_shell, "%%ask --recall starter tier pricing\nWhat should we change?")
    run(claude_shell, "%config Hipo.recall_budget = 300")
    run(claude_shell, "%%ask --recall starter tier pricing\nAnd now?")
    first, second = api.message_requests()
    for body, budget in ((first, 2000), (second, 300)):
        expected = session.memory.context(
            "starter tier pricing", budget=budget, layer1=False, mode="auto"
        )
        (recalled,) = recalled_blocks(body)
        assert recalled == expected.text
        assert body["system"][0]["text"].startswith("<hipo-layer1-")  # Layer 1 once, first
    assert len(recalled_blocks(second)[0]) < len(recalled_blocks(first)[0])


def recalled_blocks(body: dict) -> list[str]:
    """The system blocks of a request that hold recalled memory."""
    return [b["text"] for b in body["system"] if b["text"].startswith(f"<{RECALL_TAG}")]


def test_recall_budget_setting_refuses_a_budget_nothing_fits_in(claude_shell) -> None:
    run(claude_shell, "%config Hipo.recall_budget = 10")  # %config logs the refusal
    assert current(claude_shell).settings.recall_budget == 2000


# --- hipo recall --context ------------------------------------------------------------------------
@pytest.fixture
def hipo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], memory_root: Path):
    monkeypatch.setenv("HIPO_TODAY", TODAY)

    def call(*args: str):
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        code = cli.main(["--root", str(memory_root), *args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return call


def test_cli_recall_context_prints_memory_context(hipo, memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    fill(memory)
    expected = memory.context("starter tier pricing", budget=500, mode="auto")
    memory.close()
    code, out, _ = hipo("recall", "starter", "tier", "pricing", "--context", "--budget", "500")
    assert code == 0
    assert out == expected.text + "\n"
    code, out, _ = hipo("recall", "starter tier pricing", "--context", "--budget", "500", "--json")
    data = json.loads(out)
    assert data["text"] == expected.text and data["tokens"] == expected.tokens <= 500
    assert data["budget"] == 500 and len(data["hits"]) == len(expected.hits)
    assert {"file", "line", "date", "title"} <= set(data["hits"][0])


def test_cli_context_default_budget_and_bad_budgets(hipo, memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    fill(memory)
    memory.close()
    code, out, _ = hipo("recall", "pricing", "--context", "--json")
    assert code == 0 and json.loads(out)["budget"] == 2000
    for args in (
        ("--context", "--budget", "50"),
        ("--budget", "500"),
        ("--context", "--budget", "x"),
    ):
        code, _, err = hipo("recall", "pricing", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "budget" in err


# --- the server -----------------------------------------------------------------------------------
@pytest.fixture
def project(notebook_folder) -> Path:
    return notebook_folder("project", fill)


async def test_server_budget_answers_with_memory_context(jp_fetch, project: Path) -> None:
    response = await jp_fetch(
        "hipo", "api", "recall", params={"path": "project/", "q": "starter tier", "budget": "600"}
    )
    data = json.loads(response.body)
    memory = Memory(project)  # the server's clock: the local date (recency depends on it)
    expected = memory.context("starter tier", budget=600, mode="auto")
    memory.close()
    assert data["text"] == expected.text
    assert data["tokens"] == expected.tokens <= 600 and data["budget"] == 600
    assert [hit["line"] for hit in data["hits"]] == [hit.line for hit in expected.hits]


@pytest.mark.parametrize("budget", ["10", "lots", "999999"])
async def test_server_bad_budget_is_a_400(jp_fetch, project: Path, budget: str) -> None:
    with pytest.raises(HTTPClientError) as error:
        await jp_fetch(
            "hipo", "api", "recall", params={"path": "project/", "q": "pricing", "budget": budget}
        )
    assert error.value.code == 400
    assert "budget" in json.loads(error.value.response.body)["message"]
