"""notebooks/claude.ipynb runs end to end in a real kernel, its Claude calls going to the fake
Messages API on 127.0.0.1 (ANTHROPIC_BASE_URL and a dummy key passed in the kernel's
environment): %%ask with recall, a follow-up, the user's own create and stream calls with Layer 1
injected, the write-back, and %hipo check passing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from claude_helpers import SDK_CREDENTIAL_VARIABLES, TODAY, FakeMessagesAPI, serve
from test_quickstart import cells_with, output_text

from hipo_jupyter import llm
from hipo_jupyter.cli.demo import execute_notebook
from hipo_jupyter.memory.disk import notebook_stem

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "notebooks" / "claude.ipynb"


def test_committed_notebook_has_no_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("claude-notebook")
    notebook = folder / NOTEBOOK.name
    shutil.copyfile(NOTEBOOK, notebook)
    api = FakeMessagesAPI()
    with pytest.MonkeyPatch.context() as env, serve(api) as url:
        for name in SDK_CREDENTIAL_VARIABLES:
            env.delenv(name, raising=False)
        env.setenv("ANTHROPIC_BASE_URL", url)
        env.setenv("ANTHROPIC_API_KEY", "test-key")
        env.setenv("JPY_SESSION_NAME", str(notebook))  # as jupyter_server tells the kernel
        result = execute_notebook(notebook, timeout=180, today=TODAY)
    return folder, result, api


def test_runs_without_errors(executed) -> None:
    _, notebook, _ = executed
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []


def test_ask_streams_the_reply_with_a_usage_line(executed) -> None:
    _, notebook, api = executed
    first, second = [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code" and cell.source.startswith("%%ask")
    ]
    # The reply is kept as inert HTML and as text, never as Markdown a front end would render
    # with its HTML live (tests/test_reply_html.py, tests/test_browser.py)
    shown = [o for o in first.outputs if "text/html" in o.get("data", {})]
    reply = FakeMessagesAPI.default_reply(1, api.message_requests()[0])
    assert shown and shown[-1].data["text/plain"] == reply
    assert reply.split(":")[0] in shown[-1].data["text/html"]
    assert not any("text/markdown" in o.get("data", {}) for o in first.outputs)
    usage = re.search(
        r"tokens: input \d+ · output \d+ · cache read (\d+) · cache write (\d+)", output_text(first)
    )
    # The notebook's memory is small: Layer 1 is under the model's minimum cacheable prefix, so
    # it goes without a breakpoint (which would cache nothing), and the first %%ask says so once.
    assert usage and usage.group(1) == "0" and usage.group(2) == "0"
    assert output_text(first).count("hipo: prompt caching: the stable prefix (~") == 1
    assert "under claude-sonnet-5-5's minimum of 512" in output_text(first)
    again = re.search(r"cache read (\d+) · cache write (\d+)", output_text(second))
    assert again and "prompt caching" not in output_text(second)


def test_every_call_carried_layer1_once(executed) -> None:
    _, _, api = executed
    asked, followed, created, streamed = api.message_requests()
    for body in (asked, followed, created, streamed):
        heads = [b for b in body["system"] if b["text"].startswith("<hipo-layer1-")]
        assert len(heads) == 1 and body["system"][0] is heads[0]
        assert "cache_control" not in heads[0]  # under the minimum (tests/test_caching.py)
        assert "## Topics Index\n- pricing [project" in heads[0]["text"]  # this folder's index
    assert asked["system"][1]["text"].startswith("[context status] live: ")
    assert re.match(r'<hipo-recalled-memory-\d{12} query="pricing">', asked["system"][2]["text"])
    assert "PRICE-42" in asked["system"][2]["text"]
    assert [m["role"] for m in followed["messages"]] == ["user", "assistant", "user"]
    # The earlier cells' write-backs are in ROOT.md at once; later calls send those lines in
    # a block after the caller's own, so Layer 1's block stays the bytes first sent (cached)
    caller, fresh = created["system"][1:]
    assert caller == {"type": "text", "text": "Answer in one sentence."}
    assert fresh["text"].startswith(llm.FRESH_OPEN) and " Claude calls: " in fresh["text"]
    assert streamed["system"][0] == created["system"][0] == followed["system"][0]
    assert len(streamed["system"]) == 2 and streamed["stream"] is True
    assert streamed["system"][1]["text"].startswith(llm.FRESH_OPEN)


def test_the_work_was_written_back_and_checks_pass(executed) -> None:
    folder, notebook, _ = executed
    raw = (folder / "memory" / f"{TODAY}.md").read_text()
    for title in (
        "## What should we change for February? [project]",
        "## And what would that do to revenue in March? [project]",
        "## Which tier are we cutting? [project]",
        "## Draft a one-line note on PRICE-42. [project]",
    ):
        assert title in raw
    assert raw.count("notebook=claude.ipynb") == 5  # the %%remember and the four call cells
    assert "- references: claude.ipynb cell 4, claude-sonnet-5-5" in raw
    conversation = folder / "memory" / ".conversations" / f"{notebook_stem('claude.ipynb')}.json"
    assert conversation.is_file() and '"role": "assistant"' in conversation.read_text()
    check = cells_with(notebook, "%hipo check")[-1]
    assert check.strip().endswith("all rules pass") and "FAIL" not in check
    (recall,) = cells_with(notebook, "%recall which tier")
    assert "Which tier are we cutting?" in recall
