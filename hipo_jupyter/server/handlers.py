"""REST handlers under /hipo/api/: HTTP in, one engine call, JSON out.

Every endpoint is a GET (they only read), names a notebook by `path` relative to the server root,
and answers for the memory beside that notebook. Authentication and error mapping live once, in
`HipoHandler.get`; each endpoint only implements `answer`.
"""

from __future__ import annotations

import errno
from datetime import date
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.context_pack import DEFAULT_BUDGET, MIN_BUDGET
from hipo_jupyter.memory.errors import (
    HipoError,
    MemoryRootError,
    ParseError,
    PathOutsideRootError,
    QueryError,
)

from .cache import MemoryCache
from .paths import BadPathError, confine, links_out, memory_folder
from .views import budget_view, has_memory, jsonable, node_statuses, root_sections, topic_tree

NAMESPACE = "hipo/api"
SETTINGS_KEY = "hipo_memories"
CHECKPOINT_TYPES = ("project", "feedback", "user", "reference")
MAX_QUERY_CHARS = 1000
MAX_RESULTS = 100


class BadParameterError(ValueError):
    """A query parameter that is missing or malformed: 400 with the reason."""


class NoMemoryError(LookupError):
    """The folder has no memory/ yet: 404, and the sidebar shows how to start."""


def status_for(error: Exception) -> int | None:
    """The HTTP status of an error a user can fix, or None for a real server fault (500)."""
    if isinstance(error, PathOutsideRootError):
        return 403
    if isinstance(error, BadParameterError | BadPathError | QueryError):
        return 400
    if isinstance(error, NoMemoryError | FileNotFoundError):
        return 404
    if isinstance(error, MemoryRootError):
        return 409
    if isinstance(error, ParseError):
        return 422
    if isinstance(error, HipoError):
        return 400
    if isinstance(error, NotADirectoryError):
        return 404
    if isinstance(error, PermissionError):
        return 403
    if isinstance(error, OSError) and error.errno in (errno.ENAMETOOLONG, errno.ELOOP):
        return 400  # a path no file system can hold, or a loop of links
    return None


class HipoHandler(APIHandler):
    """Base: authenticated GET, the memory for `?path=`, and engine errors as JSON 4xx."""

    auth_resource = "contents"  # these endpoints read files under the server root

    @web.authenticated
    @authorized
    def get(self) -> None:
        try:
            answer = self.answer()
        except Exception as error:
            status = status_for(error)
            if status is None:
                raise
            raise web.HTTPError(status, str(error)) from error
        self.finish(answer)

    def answer(self) -> dict[str, Any]:
        raise NotImplementedError

    # --- parameters ---------------------------------------------------------------------
    def param(self, name: str, default: str | None = None) -> str:
        value = self.get_argument(name, default)
        if value is None:
            raise BadParameterError(f"missing query parameter {name!r}")
        return value

    def int_param(self, name: str, default: int, low: int = 1, high: int = MAX_RESULTS) -> int:
        raw = self.param(name, str(default))
        try:
            value = int(raw)
        except ValueError:
            raise BadParameterError(f"{name} must be a whole number, not {raw!r}") from None
        if not low <= value <= high:
            raise BadParameterError(f"{name} must be between {low} and {high}, not {value}")
        return value

    def date_param(self, name: str) -> date | None:
        raw = self.get_argument(name, "") or ""
        if not raw:
            return None
        try:
            return date.fromisoformat(raw)
        except ValueError:
            raise BadParameterError(f"{name} must be a date like 2026-03-12, not {raw!r}") from None

    # --- the memory ---------------------------------------------------------------------
    @property
    def server_root(self) -> Path:
        return Path(self.settings["server_root_dir"]).expanduser()

    def folder(self) -> Path:
        """The notebook's folder, confined to the server root."""
        return memory_folder(self.server_root, self.param("path"))

    def folder_name(self, folder: Path) -> str:
        return folder.relative_to(self.server_root.resolve()).as_posix().removeprefix(".")

    def memory(self, folder: Path | None = None) -> Memory:
        folder = folder or self.folder()
        if not has_memory(folder):
            shown = self.folder_name(folder) or "the server root"
            raise NoMemoryError(f"No memory yet in {shown}: run %load_ext hipo in a notebook there")
        escaping = links_out(folder, self.server_root)
        if escaping:
            raise PathOutsideRootError(
                f"{escaping[0]} in {self.folder_name(folder) or 'the server root'} is a link "
                "outside the server root: this memory is not served"
            )
        return self.settings[SETTINGS_KEY].get(folder)


class TreeHandler(HipoHandler):
    """ROOT's sections, the Topics Index as topic -> periods -> nodes, and every node's status."""

    def answer(self) -> dict[str, Any]:
        folder = self.folder()
        reply: dict[str, Any] = {
            "root": self.folder_name(folder),
            "has_memory": has_memory(folder),
            "sections": [],
            "topics": [],
            "nodes": [],
        }
        if not reply["has_memory"]:
            return reply
        memory = self.memory(folder)
        nodes = node_statuses(memory)
        root_file = memory.root / "memory" / "ROOT.md"
        if root_file.is_file():
            reply["sections"] = root_sections(memory.read("memory/ROOT.md"))
        reply["topics"] = [topic_tree(topic, nodes) for topic in memory.topics()]
        reply["nodes"] = nodes
        return reply


class NodeHandler(HipoHandler):
    """One Markdown file under the memory root (a node, a raw log, knowledge, a Layer 1 file)."""

    def answer(self) -> dict[str, Any]:
        memory = self.memory()
        relative = self.param("file")
        if not relative.endswith(".md"):
            raise BadParameterError(f"file must be a Markdown (.md) file, not {relative!r}")
        if not confine(memory.root, relative).is_file():
            raise FileNotFoundError(f"no such file in the memory: {relative}")
        return {"file": relative, "content": memory.read(relative)}


RECALL_MODES = ("auto", "keyword", "semantic", "hybrid")
MAX_BUDGET = 32_000  # tokens of one context: far more than any prompt wants from memory


class RecallHandler(HipoHandler):
    """Search: `q`, and optionally `k`, `since`, `until`, `type` and `mode` (keyword, semantic,
    hybrid; by default hybrid when the semantic extra is installed, else keyword). With
    `budget=N` the answer is instead the context a model is sent (`Memory.context`: text,
    tokens, budget, layer1_tokens, mode and the hits it holds), within N tokens."""

    def answer(self) -> dict[str, Any]:
        query = self.param("q").strip()
        if not query:
            raise BadParameterError("q must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise BadParameterError(f"q is longer than {MAX_QUERY_CHARS} characters")
        kind = self.get_argument("type", "") or None
        if kind is not None and kind not in CHECKPOINT_TYPES:
            raise BadParameterError(f"type must be one of {', '.join(CHECKPOINT_TYPES)}")
        k = self.int_param("k", 5)
        since, until = self.date_param("since"), self.date_param("until")
        if since and until and since > until:
            raise BadParameterError("since must not be after until")
        mode = self.get_argument("mode", "auto")
        if mode not in RECALL_MODES:
            raise BadParameterError(f"mode must be one of {', '.join(RECALL_MODES)}")
        if self.get_argument("budget", ""):  # the context a model is sent: Memory.context
            budget = self.int_param("budget", DEFAULT_BUDGET, MIN_BUDGET, MAX_BUDGET)
            context = self.memory().context(
                query, budget=budget, since=since, until=until, type=kind, mode=mode
            )
            return jsonable(context)
        result = self.memory().recall(query, k=k, since=since, until=until, type=kind, mode=mode)
        return jsonable(result)


class BudgetHandler(HipoHandler):
    """Layer 1 parts against their budgets."""

    def answer(self) -> dict[str, Any]:
        return budget_view(self.memory().layer1())


class RecentHandler(HipoHandler):
    """The last `n` checkpoints, newest first."""

    def answer(self) -> dict[str, Any]:
        n = self.int_param("n", 10)
        return {"checkpoints": jsonable(self.memory().recent_checkpoints(n))}


ROUTES: list[tuple[str, type[HipoHandler]]] = [
    ("tree", TreeHandler),
    ("node", NodeHandler),
    ("recall", RecallHandler),
    ("budget", BudgetHandler),
    ("recent", RecentHandler),
]


def setup_handlers(web_app: web.Application) -> None:
    """Put the Memory cache in the settings and register every route once, under /hipo/api/."""
    web_app.settings.setdefault(SETTINGS_KEY, MemoryCache())
    base_url = web_app.settings["base_url"]
    handlers = [(url_path_join(base_url, NAMESPACE, name), cls) for name, cls in ROUTES]
    web_app.add_handlers(".*$", handlers)
