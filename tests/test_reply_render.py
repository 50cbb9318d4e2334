"""Rendering a reply is bounded whatever its text (issue 43): past MARKDOWN_MAX_CHARS a reply
is shown as escaped plain text, never run through Markdown, and in a real kernel a hostile
60 KB reply ends as that fallback while the kernel goes on to the next cell; a cut stream and
a malformed answer show there as one line each. (How long rendering takes is measured by
benchmarks/reply_render.py, never asserted here.)"""

from __future__ import annotations

import json

import nbformat
import pytest
from claude_helpers import SDK_CREDENTIAL_VARIABLES, TODAY, BrokenStream, FakeMessagesAPI, serve

from hipo_jupyter.cli.demo import execute_notebook
from hipo_jupyter.ipython.display import MARKDOWN_MAX_CHARS, reply_bundle

CUT = "Cut the starter tier by 15% in March, then watch churn for a quarter. " * 4
HOSTILE = "*a _b " * 10_000 + "\n\n<script>alert(1)</script> **bold** [x](http://h/)"


def test_a_reply_past_the_bound_is_escaped_plain_text() -> None:
    assert len(HOSTILE) > MARKDOWN_MAX_CHARS
    bundle = reply_bundle(HOSTILE)
    page = bundle["text/html"]
    assert "hipo-reply-plain" in page and "<pre" in page
    assert f"{len(HOSTILE):,} characters" in page  # one line says why
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page
    assert "<strong>" not in page and "<em>" not in page and "<a " not in page  # not Markdown
    assert bundle["text/plain"] == HOSTILE


def test_a_reply_within_the_bound_is_still_markdown() -> None:
    page = reply_bundle("**bold** and *a* list:\n\n- one\n- two")["text/html"]
    assert "<strong>bold</strong>" in page and "<li>one</li>" in page
    assert "hipo-reply-plain" not in page


def cell(source: str, *, raises: bool = False) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell(source)
    if raises:
        made.metadata["tags"] = ["raises-exception"]
    return made


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory):
    """One kernel: a hostile 60 KB reply, a cell after it, a cut stream, an empty stream."""
    folder = tmp_path_factory.mktemp("reply-kernel")
    path = folder / "replies.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        cell("%load_ext hipo\n%config Hipo.summarizer = 'extractive'"),
        cell("%%ask\nWrite it all out."),
        cell("print('the kernel answers')"),
        cell("%%ask\nWhat should we change?"),
        cell("%%ask\nAnd then?", raises=True),
    ]
    nbformat.write(notebook, path)
    api = FakeMessagesAPI(chunk_chars=64)
    api.replies += [
        HOSTILE,
        BrokenStream("cut", CUT),
        BrokenStream("empty"),
    ]
    with pytest.MonkeyPatch.context() as env, serve(api) as url:
        for name in SDK_CREDENTIAL_VARIABLES:
            env.delenv(name, raising=False)
        env.setenv("ANTHROPIC_BASE_URL", url)
        env.setenv("ANTHROPIC_API_KEY", "test-key")
        env.setenv("JPY_SESSION_NAME", str(path))
        return folder, execute_notebook(path, timeout=180, today=TODAY)


def test_a_hostile_reply_ends_as_escaped_text_in_a_real_kernel(executed) -> None:
    _, notebook = executed
    hostile, after = notebook.cells[1], notebook.cells[2]
    (shown,) = [o for o in hostile.outputs if o.output_type == "display_data"]
    page = shown.data["text/html"]
    assert "hipo-reply-plain" in page and "&lt;script&gt;" in page and "<strong>" not in page
    assert any("tokens: input" in o.get("text", "") for o in hostile.outputs)
    assert after.outputs[0].text == "the kernel answers\n"


def test_a_cut_stream_and_an_empty_one_show_as_one_line_in_a_real_kernel(executed) -> None:
    folder, notebook = executed
    cut, empty = notebook.cells[3], notebook.cells[4]
    printed = "".join(o.get("text", "") for o in cut.outputs if o.output_type == "stream")
    lines = [line for line in printed.splitlines() if "incomplete" in line]
    assert len(lines) == 1 and "no message_stop" in lines[0]
    shown = "".join(o.get("text", "") for o in empty.outputs if o.output_type == "stream")
    shown += "".join(o.get("evalue", "") for o in empty.outputs if o.output_type == "error")
    assert shown.strip().startswith("UsageError: Claude API: the reply stream was empty")
    assert len(shown.strip().splitlines()) == 1 and "AssertionError" not in shown
    (saved,) = [
        json.loads(p.read_text())
        for p in (folder / "memory" / ".conversations").glob("replies-*.json")
        if not p.name.endswith(".sent.json")
    ]
    assert [turn.get("incomplete") for turn in saved["active"][1::2]] == [
        None,
        "the stream ended before the reply did (no message_stop event)",
    ]


def test_the_saved_reply_does_not_depend_on_how_slow_the_redraws_were(monkeypatch) -> None:
    """A stream's redraws may turn to plain text when they are slow (a busy machine), but the
    reply the notebook keeps is decided by its text alone: Markdown within the bound."""
    from types import SimpleNamespace

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from hipo_jupyter.ipython import display as display_module

    InteractiveShell.instance()
    clock = iter(float(second) for second in range(10_000))  # each read a second on: all slow
    monkeypatch.setattr(display_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    view = display_module.ReplyView(SimpleNamespace(kernel=object()))
    reply = "**bold** first\n\n" + "a line of the reply. " * 600
    assert len(reply) < MARKDOWN_MAX_CHARS
    with capture_output() as captured:
        for start in range(0, len(reply), 400):
            view.add(reply[start : start + 400])
        streamed = [output.data["text/html"] for output in captured.outputs]
        view.close()
    assert any("hipo-reply-plain" in page for page in streamed)  # the redraws did go plain
    saved = captured.outputs[-1].data["text/html"]
    assert "<strong>bold</strong>" in saved and "hipo-reply-plain" not in saved
