"""The code layout DESIGN.md describes, held by a test (issue 12): arrows point down only.

- No import cycles among hipo_jupyter's modules (imports run at module import time; an import
  inside a function or under TYPE_CHECKING is lazy and does not count).
- The engine, hipo_jupyter/memory, imports no front end: not IPython, Jupyter, anthropic,
  ipywidgets or tornado, at any level, and of hipo_jupyter only itself and the team backend.
- Modules of one job: none over 500 lines, no function over 80.
- The package docstrings tell a new reader where each job lives: every module is named there.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hipo_jupyter"
ENGINE = "hipo_jupyter.memory"
FRONT_END_LIBRARIES = ("IPython", "ipykernel", "jupyter", "anthropic", "ipywidgets", "tornado")
ENGINE_MAY_USE = (ENGINE, "hipo_jupyter.team")  # the team backend, loaded only with a team URL
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path, *, lazy: bool) -> set[str]:
    """The dotted names `module` imports: at module level only, or also inside functions and
    under TYPE_CHECKING (`lazy=True`). `from pkg import name` gives pkg.name and pkg."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                if lazy:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = module.split(".") if is_package else module.split(".")[:-1]
                if node.level:
                    base = base[: len(base) - node.level + 1]
                    prefix = ".".join([*base, node.module] if node.module else base)
                else:
                    prefix = node.module or ""
                found.add(prefix)
                found.update(f"{prefix}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if lazy:
                    visit(node.body)
            else:
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports at module level. A module importing its own
    parent package is not an edge: the parent is always initialised first."""
    modules = module_files()
    graph = {}
    for module, path in modules.items():
        names = imported_names(module, path, lazy=False)
        graph[module] = {
            name
            for name in names
            if name in modules and name != module and not module.startswith(name + ".")
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                strong(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


def test_the_graph_sees_imports():
    """The checks below would pass on an empty graph: make sure it has the edges it should."""
    graph = import_graph()
    assert "hipo_jupyter.memory.disk.store" in graph["hipo_jupyter.memory.memory"]
    assert "hipo_jupyter.ipython.writeback" in graph["hipo_jupyter.ipython.session"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_engine_imports_no_front_end():
    offending = []
    for module, path in module_files().items():
        if not (module == ENGINE or module.startswith(ENGINE + ".")):
            continue
        for name in imported_names(module, path, lazy=True):
            top = name.split(".")[0]
            ours = any(name == use or name.startswith(use + ".") for use in ENGINE_MAY_USE)
            if top.startswith(FRONT_END_LIBRARIES) or (top == "hipo_jupyter" and not ours):
                offending.append(f"{module} imports {name}")
    assert offending == []


def test_using_the_engine_loads_no_front_end(tmp_path):
    """What the engine loads when used, not only what its source says."""
    script = (
        "import sys\n"
        "from datetime import date\n"
        "from hipo_jupyter.memory import Memory\n"
        f"memory = Memory({str(tmp_path)!r}, today=lambda: date(2026, 3, 12))\n"
        "memory.remember('Pricing [project] #q1', '- decisions: cut the starter tier by 15%')\n"
        "memory.compact()\n"
        "memory.recall('pricing')\n"
        "memory.status()\n"
        f"front = {FRONT_END_LIBRARIES!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0].startswith(front)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_modules_and_functions_stay_short():
    long_modules, long_functions = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > MAX_MODULE_LINES:
            long_modules.add(relative)
        for node in ast.walk(ast.parse(source)):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if function and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions.add(f"{relative}:{node.name}")
    assert long_modules == set()
    assert long_functions == set()


def test_the_package_docstrings_name_every_module():
    """hipo_jupyter/memory/__init__ names each engine module; hipo_jupyter/__init__ each front
    end module, the ipython/ modules and each subpackage."""
    engine = importlib.import_module(ENGINE).__doc__ or ""
    package = importlib.import_module("hipo_jupyter").__doc__ or ""
    missing = [
        f"memory/__init__: {path.name}"
        for path in sorted((PACKAGE / "memory").glob("*.py"))
        if path.name != "__init__.py" and f"`{path.name}`" not in engine
    ]
    for folder in (PACKAGE, PACKAGE / "ipython"):
        missing += [
            f"__init__: {path.name}"
            for path in sorted(folder.glob("*.py"))
            if path.name != "__init__.py" and f"`{path.name}`" not in package
        ]
    missing += [
        f"__init__: {path.name}/"
        for path in sorted(PACKAGE.iterdir())
        if (path / "__init__.py").exists() and f"`{path.name}/`" not in package
    ]
    assert missing == []
