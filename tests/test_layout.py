"""The code layout DESIGN.md describes, held by a test (issues 12, 27, 38): arrows point down.

- No import cycles among hipo_jupyter's modules, counting the imports under TYPE_CHECKING (a
  type named is an import too) and those inside functions (a lazy import is still an arrow:
  `mcp/early` importing `mcp/server` in a thread closed a circle through `stdio`, issue 54).
- The engine, hipo_jupyter/memory, imports no front end: not IPython, Jupyter, anthropic,
  ipywidgets or tornado, at any level, and of hipo_jupyter only itself (the team backend is
  handed in, never imported).
- The whole package is rooms in one direction: `PACKAGE_LAYERS`, written once, lowest first
  (the engine, the loose modules, the front ends' rooms, the package's face); a unit imports
  only units below it, or itself. Inside the engine the same, by `ENGINE_LAYERS`. Imports
  inside functions and under TYPE_CHECKING count.
- Front ends import the engine only from its faces (hipo_jupyter.memory or a room's
  `__init__`), and only names the face exports in `__all__`.
- At most 10 modules at the engine's top, at least 4 rooms of at most 15 modules each; at most
  6 modules loose in hipo_jupyter/ beside its sub-packages.
- Modules of one job, ending where the job ends: a module over ~800 lines is a prompt to look
  for a second job, never a reason to cut mid-job; 1,000 lines is the hard ceiling. No function
  over 80 lines.
- The package docstrings tell a new reader where each job lives: each room's docstring (the
  engine's and the front ends') names its modules and what it may import, the engine's names
  each room and top module, hipo_jupyter's each sub-package and loose module.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hipo_jupyter"
ENGINE = "hipo_jupyter.memory"
FRONT_END_LIBRARIES = (
    "IPython",
    "ipykernel",
    "jupyter",
    "anthropic",
    "openai",
    "litellm",
    "ipywidgets",
    "tornado",
)
ENGINE_MAY_USE = (ENGINE,)  # the team backend is handed in by the front ends, never imported
MAX_MODULE_LINES = 1000  # a ceiling, not a size to cut to: see the module docstring
MAX_FUNCTION_LINES = 80
MAX_TOP_MODULES = 10
MIN_ROOMS = 4
MAX_ROOM_MODULES = 15
MAX_LOOSE_MODULES = 6  # modules of hipo_jupyter/ beside its sub-packages, __init__ not counted

# The engine's units, lowest first: a unit may import units of lower lines, or itself. A unit is a
# room (a sub-package of hipo_jupyter/memory) or a module at the top; "" is the face, the
# package's own __init__. Units on one line do not import each other.
ENGINE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "config", "events", "words"),
    ("disk",),
    ("requests",),
    ("roots",),
    ("search",),
    ("tree",),
    ("forget",),
    ("recall",),
    ("views",),
    ("intake",),
    ("backends", "render"),
    ("memory",),
    ("",),
)

# The package's units, lowest first, by the same rule: a unit is a sub-package of hipo_jupyter
# (a room: the engine, or a front end's) or a loose module; "" is hipo_jupyter's own __init__.
# Units on one line do not import each other: the CLI may start the MCP server, never the
# reverse; the kernel, the CLI and the Jupyter server are three front ends side by side.
PACKAGE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("memory",),  # the engine
    ("terminal", "memory_tool"),  # loose: what a terminal is shown; Claude's memory tool
    ("team", "llm", "mcp"),  # the team backend; LLM calls; `hipo mcp`
    ("cli", "ipython", "server"),  # `hipo`; the kernel; the sidebar's REST API
    ("",),
)


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path, *, lazy: bool, source: str | None = None) -> set[str]:
    """The dotted names `module` imports: at module level only, or also inside functions
    (`lazy=True`); those under TYPE_CHECKING always (a type named from a module is an arrow
    to it). `from pkg import name` gives pkg.name and pkg."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
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

    visit(ast.parse(path.read_text(encoding="utf-8") if source is None else source).body)
    return found


def import_graph(*, lazy: bool = False, within: str = "") -> dict[str, set[str]]:
    """Module -> the package's modules it imports at module level (`lazy`: inside functions
    too; TYPE_CHECKING always), for the modules under `within` (default: all). A module
    importing its own parent package is not an edge: the parent is always initialised first."""
    modules = module_files()
    graph = {}
    for module, path in modules.items():
        if not module.startswith(within):
            continue
        names = imported_names(module, path, lazy=lazy)
        graph[module] = {
            name
            for name in names
            if name in modules
            and name.startswith(within)
            and name != module
            and not module.startswith(name + ".")
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
    assert "hipo_jupyter.team.sync" in graph["hipo_jupyter.team.link"]  # under TYPE_CHECKING
    assert "hipo_jupyter.mcp.server" in package_imports()["hipo_jupyter.cli.commands"]  # lazy
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


def unit_of(name: str) -> str | None:
    """The engine unit a dotted name belongs to: its room or top module, "" for the face
    itself, None outside the engine."""
    if name == ENGINE:
        return ""
    if not name.startswith(ENGINE + "."):
        return None
    return name[len(ENGINE) + 1 :].split(".")[0]


def package_unit_of(name: str) -> str | None:
    """The package unit a dotted name belongs to: its sub-package or loose module under
    hipo_jupyter, "" for hipo_jupyter itself, None outside the package."""
    if name == PACKAGE.name:
        return ""
    if not name.startswith(PACKAGE.name + "."):
        return None
    return name[len(PACKAGE.name) + 1 :].split(".")[0]


def direction_breaks(
    imports: dict[str, set[str]],
    layers: tuple[tuple[str, ...], ...] = ENGINE_LAYERS,
    unit: Callable[[str], str | None] = unit_of,
) -> list[str]:
    """Each import that points up or sideways: a unit (as `unit` names it: the engine's by
    default, `package_unit_of` for the whole package) may import only units of lower lines of
    `layers`, or itself. A unit not in `layers` is named as such."""
    line_of = {found: line for line, units in enumerate(layers) for found in units}
    breaks = []
    for module, names in sorted(imports.items()):
        here = unit(module)
        if here not in line_of:
            breaks.append(f"{module}: unit {here!r} is in no line of the layers")
            continue
        for name in sorted(names):
            there = unit(name)
            if there is None or there == here:
                continue
            if there not in line_of:
                breaks.append(f"{module} imports {name}: unit {there!r} is in no line")
            elif line_of[there] >= line_of[here]:
                breaks.append(f"{module} ({here or 'face'}) imports {name} ({there or 'face'})")
    return breaks


def engine_imports() -> dict[str, set[str]]:
    """Engine module -> the engine modules it imports, inside functions and under
    TYPE_CHECKING too."""
    modules = module_files()
    found = {}
    for module, path in modules.items():
        if unit_of(module) is None:
            continue
        names = imported_names(module, path, lazy=True)
        found[module] = {name for name in names if name in modules and unit_of(name) is not None}
    return found


def package_imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, inside functions and under TYPE_CHECKING
    too; its own ancestors left out (a package is always initialised before its modules)."""
    modules = module_files()
    return {
        module: {
            name
            for name in imported_names(module, path, lazy=True)
            if name in modules and name != module and not module.startswith(name + ".")
        }
        for module, path in modules.items()
    }


def loose_modules() -> list[str]:
    """The modules of hipo_jupyter/ beside its sub-packages (its __init__ left out)."""
    return sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")


def sub_packages() -> list[Path]:
    """Every package under hipo_jupyter/, at any depth (the engine, its rooms, front ends)."""
    return sorted(path.parent for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE)


def face_exports(face: str) -> set[str]:
    """The names a face (hipo_jupyter.memory or a room's __init__) lists in `__all__`."""
    path = module_files()[face]
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def faces() -> set[str]:
    """The engine's faces: the package itself and each room's __init__."""
    return {
        module
        for module, path in module_files().items()
        if path.name == "__init__.py" and unit_of(module) is not None
    }


def face_breaks(
    module: str, source: str, faces: set[str], exports: dict[str, set[str]]
) -> list[str]:
    """Each import of the engine by front end `module` that is not a name a face exports:
    `import hipo_jupyter.memory.x`, `from hipo_jupyter.memory.room.module import ...`, or a
    name the face does not list in `__all__`. Inside functions and TYPE_CHECKING too."""
    breaks = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if unit_of(alias.name) is not None and alias.name not in faces:
                    breaks.append(f"{module}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if unit_of(node.module) is None:
                continue
            if node.module not in faces:
                breaks.append(f"{module}: from {node.module} import ...")
                continue
            for alias in node.names:
                if alias.name not in exports[node.module]:
                    breaks.append(f"{module}: {alias.name} is not in {node.module}.__all__")
    return breaks


def rooms() -> dict[str, list[Path]]:
    """Room name -> its modules (its __init__ left out)."""
    engine = PACKAGE / "memory"
    return {
        folder.name: sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")
        for folder in sorted(engine.iterdir())
        if (folder / "__init__.py").exists()
    }


def test_the_checks_see_what_they_check():
    """Each check below would pass on nothing: make sure it finds a break when there is one."""
    layers = (("errors",), ("disk",), ("memory",), ("",))
    up = {f"{ENGINE}.disk.store": {f"{ENGINE}.memory", f"{ENGINE}.errors"}}
    assert direction_breaks(up, layers) == [
        f"{ENGINE}.disk.store (disk) imports {ENGINE}.memory (memory)"
    ]
    sideways = {f"{ENGINE}.errors": {f"{ENGINE}.config"}}
    assert direction_breaks(sideways, (("errors", "config"),))
    assert direction_breaks({f"{ENGINE}.nowhere.x": set()}, layers)
    graph = engine_imports()
    assert f"{ENGINE}.disk.store" in graph[f"{ENGINE}.memory"]
    inner = "from hipo_jupyter.memory.disk.store import Store\n"
    unlisted = "def f():\n    from hipo_jupyter.memory import Nothing\n"
    listed = "from hipo_jupyter.memory import Memory\nimport hipo_jupyter.memory\n"
    exports = {ENGINE: {"Memory"}}
    assert face_breaks("x", inner, {ENGINE}, exports) == [
        "x: from hipo_jupyter.memory.disk.store import ..."
    ]
    assert face_breaks("x", unlisted, {ENGINE}, exports) == [
        "x: Nothing is not in hipo_jupyter.memory.__all__"
    ]
    assert face_breaks("x", listed, {ENGINE}, exports) == []
    hint = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.b import C\n"
    assert "a.b" in imported_names("x", Path("x.py"), lazy=False, source=hint)
    package_layers = (("memory",), ("mcp",), ("cli",), ("",))
    back = {"hipo_jupyter.mcp.server": {"hipo_jupyter.cli.commands", "hipo_jupyter.memory"}}
    assert direction_breaks(back, package_layers, package_unit_of) == [
        "hipo_jupyter.mcp.server (mcp) imports hipo_jupyter.cli.commands (cli)"
    ]
    assert direction_breaks({"hipo_jupyter.loose": set()}, package_layers, package_unit_of)


def test_rooms_import_in_one_direction():
    assert direction_breaks(engine_imports()) == []


def test_the_package_imports_in_one_direction():
    """The front ends' rooms and the loose modules over the engine, by PACKAGE_LAYERS; every
    sub-package and loose module of hipo_jupyter is in a line of it."""
    units = {path.name for path in sub_packages() if path.parent == PACKAGE}
    units |= {name[:-3] for name in loose_modules()}
    assert units <= {unit for line in PACKAGE_LAYERS for unit in line}
    assert direction_breaks(package_imports(), PACKAGE_LAYERS, package_unit_of) == []


def test_few_modules_stay_loose_beside_the_sub_packages():
    assert len(loose_modules()) <= MAX_LOOSE_MODULES, loose_modules()


def test_every_sub_package_says_what_lives_there_and_what_it_may_import():
    """Each package's docstring (read from its source: nothing is imported) names each of its
    modules and says what it may import."""
    missing = []
    for folder in sub_packages():
        where = folder.relative_to(PACKAGE).as_posix()
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8"))) or ""
        if "May import" not in doc:
            missing.append(f"{where}/__init__: no 'May import'")
        missing += [
            f"{where}/__init__: {path.name}"
            for path in sorted(folder.glob("*.py"))
            if path.name != "__init__.py" and f"`{path.name}`" not in doc
        ]
    assert missing == []


def test_no_import_cycles_in_the_engine_even_inside_functions():
    assert cycles(import_graph(lazy=True, within=ENGINE)) == []


def test_no_import_circle_anywhere_even_inside_functions_or_for_types():
    """Every room, front ends' included: imports inside functions and under TYPE_CHECKING are
    arrows too, so a circle of them is a circle."""
    assert cycles(import_graph(lazy=True)) == []


def test_a_circle_through_a_lazy_or_type_only_import_is_seen():
    """The check above sees the circle `mcp/` had (early -> server, inside a function; server ->
    stdio -> early at the top) and one closed by a type-only import."""
    sources = {
        "p.early": "def warm():\n    import p.server\n",
        "p.server": "from p import stdio\n",
        "p.stdio": "from p import early\n",
        "p.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import B\n",
        "p.b": "from p import a\n",
    }
    graph = {
        module: {
            name
            for name in imported_names(module, Path(f"{module}.py"), lazy=True, source=source)
            if name in sources and name != module
        }
        for module, source in sources.items()
    }
    assert cycles(graph) == [["p.a", "p.b"], ["p.early", "p.server", "p.stdio"]]


def test_front_ends_import_the_engine_only_from_its_faces():
    engine_faces = faces()
    exports = {face: face_exports(face) for face in engine_faces}
    breaks = []
    for module, path in module_files().items():
        if unit_of(module) is None:  # a front end (or the team backend, or hipo_jupyter)
            breaks += face_breaks(module, path.read_text(encoding="utf-8"), engine_faces, exports)
    assert breaks == []


def test_the_engine_has_few_top_modules_and_rooms_of_one_job():
    engine = PACKAGE / "memory"
    top = sorted(p.name for p in engine.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    assert len(rooms()) >= MIN_ROOMS
    crowded = {room: len(found) for room, found in rooms().items() if len(found) > MAX_ROOM_MODULES}
    assert crowded == {}
    every_layer_unit = {unit for line in ENGINE_LAYERS for unit in line}
    assert set(rooms()) | {p[:-3] for p in top if p != "__init__.py"} <= every_layer_unit


def test_the_package_docstrings_name_every_module():
    """hipo_jupyter/memory/__init__ names each room and each top module; hipo_jupyter/__init__
    each sub-package, each loose module and the ipython/ modules. (Each room's own docstring
    names its modules: the test above.)"""
    engine = importlib.import_module(ENGINE).__doc__ or ""
    package = importlib.import_module("hipo_jupyter").__doc__ or ""
    missing = [
        f"memory/__init__: {path.name}"
        for path in sorted((PACKAGE / "memory").glob("*.py"))
        if path.name != "__init__.py" and f"`{path.name}`" not in engine
    ]
    missing += [f"memory/__init__: {room}/" for room in rooms() if f"`{room}/`" not in engine]
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


def test_what_users_name_stays_where_it_was():
    """Rooms may move modules, never the names users type: the `hipo` script's target, `python
    -m hipo_jupyter.cli` (the MCP configs' fallback), `%load_ext hipo`, the server extension
    jupyter-config enables, and `hipo_jupyter.memory_tool.HipoMemoryTool` (the README's)."""
    import json
    import tomllib

    repo = PACKAGE.parent
    script = tomllib.loads((repo / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    module, _, function = script["hipo"].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    assert (PACKAGE / "cli" / "__main__.py").is_file()
    assert callable(importlib.import_module("hipo").load_ipython_extension)
    config = repo / "jupyter-config" / "jupyter_server_config.d" / "hipo_jupyter.json"
    for name in json.loads(config.read_text("utf-8"))["ServerApp"]["jpserver_extensions"]:
        assert callable(importlib.import_module(name)._jupyter_server_extension_points)
    assert importlib.import_module("hipo_jupyter.memory_tool").HipoMemoryTool
