"""Chromium clicks the sidebar's Forget on a recent checkpoint: the confirm comes first (dismissed:
nothing happens), then, accepted, the checkpoint is gone from the sidebar and from every file."""

from __future__ import annotations

import os
from pathlib import Path

from test_browser import (  # noqa: F401  (the running JupyterLab and its Chromium)
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    STEP_TIMEOUT_MS,
    lab,
    pytestmark,
    sync_api,
)

NAME = "Octavia Brindlecombe"


def test_the_sidebar_forgets_a_checkpoint_after_a_confirm(lab) -> None:  # noqa: F811
    from hipo_jupyter.memory import Memory

    url, root = lab
    memory = Memory(root)
    memory.remember("Client call [project]", f"- request: a call with {NAME}", via="cli")
    memory.remember("Kept note [project]", "- outcome: the plan stays", via="cli")
    memory.close()
    answers = iter([False, True])  # dismiss the first confirm, accept the second
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            dialogs: list[str] = []

            def answer(dialog) -> None:
                dialogs.append(dialog.message)
                dialog.accept() if next(answers) else dialog.dismiss()

            page.on("dialog", answer)
            expect = sync_api.expect
            expect.set_options(timeout=STEP_TIMEOUT_MS)
            try:
                page.goto(url)
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                page.click(".jp-SideBar .lm-TabBar-tab[data-id='hipo-memory']")
                panel = page.locator("#hipo-memory")
                item = panel.locator(".jp-HipoMemory-checkpoint", has_text="Client call")
                expect(item).to_have_count(1)
                item.locator(".jp-HipoMemory-forget").click()
                page.wait_for_timeout(500)
                expect(item).to_have_count(1)  # dismissed: nothing removed
                item.locator(".jp-HipoMemory-forget").click()
                expect(panel.locator(".jp-HipoMemory-checkpoint", has_text="Client call")
                       ).to_have_count(0)  # fmt: skip
                expect(panel.locator(".jp-HipoMemory-checkpoint", has_text="Kept note")
                       ).to_have_count(1)  # fmt: skip
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "failure-forget.png"))
                raise
        finally:
            browser.close()
    assert len(dialogs) == 2 and all("Forget" in message for message in dialogs)
    leftovers = [
        os.path.join(folder, name)
        for folder, _, names in os.walk(root / "memory")
        for name in names
        if NAME.encode() in Path(folder, name).read_bytes()
    ]
    assert leftovers == []
