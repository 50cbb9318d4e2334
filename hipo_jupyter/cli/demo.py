"""`hipo demo`: running a notebook headless, as the demo and the tests do (a kernel of this
interpreter, in the notebook's own folder, with the clock optionally pinned), and what the demo
shows of the memory the notebook made."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from hipo_jupyter.memory import HipoError, Memory, parse_day, render
from hipo_jupyter.memory.disk import ROOT_FILE, parse_node

QUICKSTART = "quickstart.ipynb"
TODAY_ENV = "HIPO_TODAY"


def find_quickstart() -> Path:
    """notebooks/quickstart.ipynb of the source tree, else the copy shipped in the package."""
    repo = Path(__file__).resolve().parent.parent.parent
    candidate = repo / "notebooks" / QUICKSTART
    if candidate.is_file() and (repo / "pyproject.toml").is_file():
        return candidate
    shipped = resources.files("hipo_jupyter") / "notebooks" / QUICKSTART
    if shipped.is_file():
        return Path(str(shipped))
    raise HipoError(f"cannot find {QUICKSTART} in the source tree or the installed package")


def notebook_today(path: Path) -> str | None:
    """The day a notebook's dated entries were written for (`metadata.hipo.today`), if any.

    The quickstart replays three weeks of March 2026; run "the day after", its nodes show both
    fixed and tentative periods and its topics read as recent, whatever the real date is.
    """
    import nbformat

    metadata = nbformat.read(path, as_version=4).metadata
    today = metadata.get("hipo", {}).get("today")
    return str(today) if today else None


def kernel_environment(today: str | None = None) -> dict[str, str]:
    """The kernel's environment: this one, minus a pinned root (a notebook's memory is its own
    folder), with the clock pinned to `today` if given, and with this package importable even
    when it runs from a source tree that is not installed."""
    env = dict(os.environ)
    env.pop("HIPO_ROOT", None)
    if today:
        env[TODAY_ENV] = today
    package_parent = Path(__file__).resolve().parent.parent.parent
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    installed = package_parent.name in ("site-packages", "dist-packages")
    if not installed and str(package_parent) not in paths:
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent), *paths])
    return env


KERNEL_START_SECONDS = 180


def execute_notebook(path: Path, *, timeout: int = 300, today: str | None = None) -> Any:
    """Run a notebook top to bottom in its own folder with a kernel of *this* interpreter.

    The kernelspec search is limited to ipykernel's native spec, which launches `sys.executable`;
    a `python3` kernelspec installed elsewhere on the machine could point at another Python that
    does not have hipo-jupyter. `today` pins the kernel's clock (HIPO_TODAY). Returns the
    executed notebook; raises HipoError naming the failing cell's error.
    """
    import nbformat
    import zmq
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    specs = KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)
    kernel = KernelManager(kernel_name="python3", kernel_spec_manager=specs)
    if "transport_encryption" in kernel.trait_names() and zmq.has("curve"):
        kernel.transport_encryption = "auto"  # newer jupyter_client warns on plain TCP otherwise
    client = NotebookClient(
        notebook,
        km=kernel,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        # a kernel on a busy 2-core machine (a test run beside other kernels) may take over
        # nbclient's default minute to answer; a slow start is not a failed notebook
        startup_timeout=KERNEL_START_SECONDS,
    )
    try:
        # cleanup_kc: shut the kernel down afterwards, though we made its manager
        client.execute(cleanup_kc=True, env=kernel_environment(today), cwd=str(path.parent))
    except CellExecutionError as error:
        summary = str(error).strip().splitlines()
        raise HipoError(f"{path.name} failed: {summary[-1] if summary else error}") from None
    return notebook


def run_demo(*, timeout: int, keep: bool, folder: Path | None = None) -> None:
    """`hipo demo`: the quickstart run in `folder` (kept, ready to open in JupyterLab), or in a
    temporary folder (kept with `keep`), then what its memory shows and the next command."""
    import nbformat

    source = find_quickstart()
    named = folder is not None
    if folder is not None:
        folder = demo_folder(folder)
    else:
        folder = Path(tempfile.mkdtemp(prefix="hipo-demo-"))
    keep = keep or named
    try:
        notebook = folder / QUICKSTART
        shutil.copyfile(source, notebook)
        today = os.environ.get(TODAY_ENV) or notebook_today(notebook)
        print(f"Running {source.name} in {folder} ...", file=sys.stderr)
        executed = execute_notebook(notebook, timeout=timeout, today=today)
        nbformat.write(executed, notebook)
        print(demo_text(folder, today=today))
        if keep:
            print(f"\nThe executed notebook and its memory are in {folder}. Next:")
            print(next_command(notebook, today))
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def demo_folder(folder: Path) -> Path:
    """The named demo folder, made afresh: a folder an earlier demo made (its quickstart is
    there) is emptied first; any other folder that holds something is refused, never touched."""
    folder = folder.expanduser().absolute()
    if folder.exists():
        if not folder.is_dir():
            raise HipoError(f"{folder} is not a folder: name another with --dir")
        if any(folder.iterdir()):
            if not (folder / QUICKSTART).is_file():
                raise HipoError(f"{folder} holds other files: name an empty folder with --dir")
            shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def next_command(notebook: Path, today: str | None) -> str:
    """The command that opens the demo notebook in JupyterLab with this environment's
    Jupyter, pinned to the notebook's day as the run was, as a path from the working
    directory when it lies below it."""
    jupyter = Path(sys.executable).parent / "jupyter"
    shown = []
    for path in (jupyter, notebook):
        try:
            shown.append(str(path.relative_to(Path.cwd())))
        except ValueError:
            shown.append(str(path))
    pinned = f"{TODAY_ENV}={today} " if today else ""
    return f"  {pinned}{shown[0]} lab {shown[1]}"


# --- what the demo shows ------------------------------------------------------------------------
def memory_tree(memory: Memory) -> list[str]:
    """The raw logs, then the compaction nodes (daily, weekly, monthly) and ROOT.md last, each
    with its node status."""
    lines = [f"  {path:<30} raw log" for path in memory.raw_logs()]
    order = {"daily": 0, "weekly": 1, "monthly": 2}
    for node in sorted(memory.nodes(), key=lambda n: (order[n.level], n.period)):
        lines.append(f"  {node.file:<30} {node.status}")
    try:
        root_status = parse_node(memory.read(ROOT_FILE)).status
    except (FileNotFoundError, HipoError):
        return lines
    return [*lines, f"  {ROOT_FILE:<30} {root_status or 'tentative'}"]


def demo_text(folder: Path, *, today: str | None = None) -> str:
    """What the demo shows of the memory it made: the tree, the Topics Index, one recall."""
    pinned = parse_day(today, TODAY_ENV) if today else None
    memory = Memory(folder, today=(lambda: pinned) if pinned else None)
    try:
        parts = ["Memory tree:", *memory_tree(memory), "", f"Topics Index ({ROOT_FILE}):"]
        parts.append(render.topics_text(memory.topics()))
        result = memory.recall("pricing", k=3)
        parts += ["", "$ hipo recall pricing -k 3", render.recall_text(result)]
    finally:
        memory.close()
    return "\n".join(parts)
