"""End to end in a real browser: JupyterLab, the server extension and the "Memory" sidebar.

Starts JupyterLab on 127.0.0.1 (token, --allow-root) over a temporary copy of notebooks/, with the
server extension enabled and the committed prebuilt labextension, and drives headless Chromium
(/usr/bin/chromium, from Debian) through Playwright: the quickstart notebook opens with an empty
sidebar, its cells run, a new %%remember topic shows up in the sidebar with the line saying where
it came from (notebook, front end), recall finds it with the same line, and a
screenshot goes to test-artifacts/sidebar.png (and to docs/sidebar.png with
HIPO_UPDATE_SCREENSHOT=1, for the README).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
PREBUILT = REPO / "hipo_jupyter" / "labextension"
ARTIFACTS = REPO / "test-artifacts"
TOPIC = "zebrafish"
REMEMBER_CELL = (
    f"%%remember Zebrafish tank census #{TOPIC}\n"
    "- request: count the fish in every tank before the move\n"
    "- outcome: 42 zebrafish in tank 7, 38 in tank 9"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STEP_TIMEOUT_MS = 60_000

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)"
    ),
    pytest.mark.skipif(
        not (PREBUILT / "package.json").exists(),
        reason="no prebuilt labextension in hipo_jupyter/labextension (labextension/README.md)",
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def quiet_lab_settings(settings_dir: Path) -> None:
    """No news or update checks: the network is closed and the toast would cover the page."""
    target = settings_dir / "@jupyterlab" / "apputils-extension"
    target.mkdir(parents=True, exist_ok=True)
    target /= "notification.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


def small_notebook(path: Path) -> None:
    """Used only when notebooks/quickstart.ipynb is missing: load the extension, remember once."""
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": source,
        }
        for source in ("%load_ext hipo", "%%remember Competitor pricing #pricing\n- outcome: done")
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A running JupyterLab; yields its URL with the token, and its root folder."""
    root = tmp_path / "notebooks"
    if (REPO / "notebooks" / "quickstart.ipynb").exists():
        shutil.copytree(
            REPO / "notebooks",
            root,
            ignore=shutil.ignore_patterns(
                "memory", "knowledge", "plans", "*.md", ".ipynb_checkpoints"
            ),
        )
    else:
        root.mkdir()
        small_notebook(root / "quickstart.ipynb")
    with running_lab(root, tmp_path) as (base, token):
        yield f"{base}/lab/tree/quickstart.ipynb?token={token}", root


@contextlib.contextmanager
def running_lab(
    root: Path, tmp_path: Path, *, env: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """JupyterLab on `root` with the server extension and the committed prebuilt sidebar, its
    settings, data and runtime folders under `tmp_path`, no news or update checks; `env` is
    the environment its kernels get (default: this one). Yields (http://127.0.0.1:PORT, token);
    stopped, kernels and all, after."""
    labextensions = tmp_path / "labextensions"
    labextensions.mkdir()
    (labextensions / "hipo-jupyter").symlink_to(PREBUILT, target_is_directory=True)
    quiet_lab_settings(tmp_path / "lab-settings")
    port, token = free_port(), secrets.token_hex(16)
    environment = {
        **(os.environ if env is None else env),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
    }
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.jpserver_extensions={'hipo_jupyter.server': True}",
        f"--LabApp.extra_labextensions_path={labextensions}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
    ]  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        command, cwd=root, env=environment, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{base}/api/status?token={token}", server)
        yield base, token
    finally:
        server.send_signal(signal.SIGTERM)  # jupyter shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # our own session: the server and its kernels
            server.wait()
        log.close()


def wait_for_server(url: str, server: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log = (ARTIFACTS / "jupyterlab.log").read_text()
            raise RuntimeError(f"JupyterLab exited with {server.returncode}:\n{log[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer at {url} within {seconds}s")


def test_sidebar_follows_the_notebook_and_finds_a_new_topic(lab):
    url, root = lab
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            try:
                drive(page, url, root)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "failure.png"))
                raise
        finally:
            browser.close()


FIND_NOTEBOOK = """() => {
    const shell = window.jupyterapp.shell;
    for (const widget of shell.widgets('main')) {
        if (widget.content && widget.sessionContext) { return widget; }
    }
    return null;
}"""

KERNEL_READY = f"""() => {{
    const panel = ({FIND_NOTEBOOK})();
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}}"""


def run_command(page, command: str) -> None:
    """Focus the notebook and start a JupyterLab command on it, without waiting for the command's
    promise (run-all's may settle long after the cells have run)."""
    page.evaluate(
        f"""(command) => {{
            const panel = ({FIND_NOTEBOOK})();
            window.jupyterapp.shell.activateById(panel.id);
            void window.jupyterapp.commands.execute(command);
        }}""",
        command,
    )


def widen_sidebar(page, pixels: int) -> None:
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle").first
    box = handle.bounding_box()
    if box is None:
        return
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + pixels, y, steps=5)
    page.mouse.up()


CUT_TEXT = """(panel) => {
    // Every label whose text is wider than its box (cut or hidden), and a placeholder wider
    // than its input: at the default width everything must read whole.
    const cut = [];
    for (const node of panel.querySelectorAll(
        '.jp-HipoMemory-folder, .jp-HipoMemory-provenance, .jp-HipoMemory-node, '
        + '.jp-HipoMemory-topicTitle, .jp-HipoMemory-checkpointMeta')) {
        if (node.offsetParent !== null && node.scrollWidth > node.clientWidth + 1) {
            cut.push(node.className + ': ' + node.textContent);
        }
    }
    const input = panel.querySelector('.jp-HipoMemory-searchInput');
    const context = document.createElement('canvas').getContext('2d');
    const style = getComputedStyle(input);
    context.font = style.font;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (context.measureText(input.placeholder).width > room) {
        cut.push('placeholder: ' + input.placeholder);
    }
    return cut;
}"""


def keeps_up(page, panel, root: Path) -> None:
    """At JupyterLab's default sidebar width: the header names the folder, ages read as words,
    nothing is cut, and a checkpoint written by `hipo remember` in a terminal shows up without
    a cell run (the panel polls /hipo/api/changes)."""
    expect = sync_api.expect
    expect(panel.locator(".jp-HipoMemory-folder")).to_have_text(root.name)
    titles = panel.locator(".jp-HipoMemory-topic > summary").all_text_contents()
    ages = re.compile(r" · (today|yesterday|\d+ (day|week|month|year)s? ago) · ")
    assert titles and all(ages.search(title) for title in titles), titles
    assert not any(re.search(r"\b\d+d\b", title) for title in titles), titles  # no "0d"
    assert panel.evaluate(CUT_TEXT) == []

    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    hipo = "import sys; from hipo_jupyter.cli.entry import main; sys.exit(main())"
    started = time.monotonic()
    written = subprocess.run(
        [sys.executable, "-c", hipo, "--root", str(root), "remember", "--title", "Okapi sighting"],
        input="- outcome: written in a terminal, not in the notebook\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert written.returncode == 0, written.stderr
    returned = time.monotonic()
    expect(panel.locator(".jp-HipoMemory-checkpoint").first).to_contain_text("Okapi sighting")
    shown, took = time.monotonic() - returned, returned - started
    (ARTIFACTS / "sidebar-caught-up.txt").write_text(
        f"shown {shown:.2f} s after `hipo remember` returned (which took {took:.2f} s)\n"
    )
    page.screenshot(path=str(ARTIFACTS / "sidebar-default-width.png"))


def drive(page, url: str, root: Path) -> None:
    expect = sync_api.expect
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page.goto(url)
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_function(KERNEL_READY)

    # The sidebar is there, follows the notebook, and says how to start.
    page.click(".jp-SideBar .lm-TabBar-tab[data-id='hipo-memory']")
    panel = page.locator("#hipo-memory")
    expect(panel.locator(".jp-HipoMemory-message")).to_have_text(
        "No memory yet — run %load_ext hipo"
    )
    assert not (root / "memory").exists(), "opening the sidebar must not create memory"

    # Run the notebook: %load_ext hipo, the %%remember cells, %hipo compact, ...
    run_command(page, "notebook:run-all-cells")
    topics = panel.locator(".jp-HipoMemory-topics .jp-HipoMemory-toggle")  # folded at first
    expect(topics).to_have_attribute("aria-expanded", "false")
    topics.click()
    expect(panel.locator(".jp-HipoMemory-topic").first).to_be_visible()
    page.wait_for_function(KERNEL_READY)

    # A new cell with a new topic, typed and run as a user would.
    page.evaluate(
        f"""() => {{
            const notebook = ({FIND_NOTEBOOK})().content;
            notebook.activeCellIndex = notebook.widgets.length - 1;
            notebook.mode = 'command';
        }}"""
    )
    run_command(page, "notebook:insert-cell-below")
    editor = page.locator(".jp-Notebook .jp-Cell.jp-mod-active .cm-content")
    editor.click()
    page.keyboard.insert_text(REMEMBER_CELL)
    page.keyboard.press("Shift+Enter")

    topic = panel.locator(f".jp-HipoMemory-topic[data-topic='{TOPIC}']")
    expect(topic).to_be_visible()
    topic.locator("summary").click()
    expect(topic.locator(".jp-HipoMemory-periods")).to_be_visible()
    newest = panel.locator(".jp-HipoMemory-checkpoint").first
    expect(newest).to_contain_text("Zebrafish tank census")
    # Where it came from, in the muted provenance line: one phrase after "from" (never
    # "from via ..."), this notebook and its cell.
    provenance = newest.locator(".jp-HipoMemory-provenance")
    expect(provenance).to_contain_text("from quickstart.ipynb cell")
    expect(provenance).not_to_contain_text("via")
    expect(panel.locator(".jp-HipoMemory-bar[data-part='ROOT']")).to_be_visible()

    # Search for it.
    panel.locator(".jp-HipoMemory-searchInput").fill("zebrafish tank")
    panel.locator(".jp-HipoMemory-searchInput").press("Enter")
    hit = panel.locator(".jp-HipoMemory-hit").first
    expect(hit).to_contain_text("Zebrafish tank census")
    expect(hit.locator(".jp-HipoMemory-hitPathText")).to_be_hidden()  # the answer first
    hit.locator(".jp-HipoMemory-hitPath > summary").click()
    expect(hit.locator(".jp-HipoMemory-hitPathText")).to_contain_text("memory/ROOT.md")
    expect(hit.locator(".jp-HipoMemory-provenance")).to_contain_text("from quickstart.ipynb cell")
    expect(hit.locator(".jp-HipoMemory-provenance")).not_to_contain_text("via")

    keeps_up(page, panel, root)

    widen_sidebar(page, 140)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "sidebar.png"))
    if os.environ.get("HIPO_UPDATE_SCREENSHOT") == "1":
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copyfile(ARTIFACTS / "sidebar.png", REPO / "docs" / "sidebar.png")


def test_the_sidebar_accepts_a_proposed_rule(lab):
    """A rule an agent proposed over MCP shows apart, with who proposed it; its Accept button
    (a POST with JupyterLab's XSRF) makes it the user's rule, written with via=sidebar."""
    from hipo_jupyter.memory import Memory
    from hipo_jupyter.memory.disk import parse_log

    url, root = lab
    memory = Memory(root)
    memory.remember("Deploys", "- why: thin on-call", trigger="before a deploy",
                    rule="never on Friday", via="cli")  # fmt: skip
    proposal = memory.remember(
        "Setup", "- trigger: any request\n- rule: first run <img src=x onerror=alert(1)>",
        type="feedback", via="mcp",
    )  # fmt: skip
    memory.close()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(STEP_TIMEOUT_MS)
            dialogs: list[str] = []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            expect = sync_api.expect
            expect.set_options(timeout=STEP_TIMEOUT_MS)
            try:
                page.goto(url)
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                page.click(".jp-SideBar .lm-TabBar-tab[data-id='hipo-memory']")
                panel = page.locator("#hipo-memory")
                item = panel.locator(f".jp-HipoMemory-proposal[data-id='{proposal.id}']")
                expect(item).to_contain_text("any request → first run <img src=x")
                expect(item.locator(".jp-HipoMemory-provenance")).to_have_text("proposed by MCP")
                expect(panel.locator(".jp-HipoMemory-rule")).to_have_count(1)
                item.locator(".jp-HipoMemory-accept").click()
                expect(panel.locator(".jp-HipoMemory-proposal")).to_have_count(0)
                expect(panel.locator(".jp-HipoMemory-rule")).to_have_count(2)
                expect(panel.locator(".jp-HipoMemory-rules")).to_contain_text("any request →")
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "failure-accept.png"))
                raise
        finally:
            browser.close()
    assert dialogs == []  # the stored <img onerror> never ran
    logs = sorted((root / "memory").glob("????-??-??.md"))
    last = parse_log(logs[-1].read_text("utf-8"))[-1]
    assert (last.via, last.field("accepts")) == ("sidebar", proposal.id)
