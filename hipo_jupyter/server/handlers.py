"""REST handlers under /hipo/api/: HTTP in, one engine call, JSON out.

Every endpoint is a GET (they only read) but three POSTs the user makes from the sidebar:
`rules/accept` (accept a proposed rule), `forget` and `correct` (a checkpoint). Each names a
notebook by `path` relative to the server root, and answers for the memory beside that
notebook. Authentication and error mapping live once, in `HipoHandler.respond`; each endpoint
only implements `answer`, which runs in a worker thread: file work never blocks the server's
event loop (and so never stalls the rest of Jupyter). Error bodies name paths relative to the
server root only. Files and folders that Jupyter's contents API hides
(`ContentsManager.allow_hidden` off, the default) are not served here either.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from jupyter_core.paths import is_hidden
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from hipo_jupyter.memory import (
    DEFAULT_RECALL_MODE,
    MAX_QUERY_CHARS,
    HipoError,
    Memory,
    MemoryRootError,
    ParseError,
    PathOutsideRootError,
    QueryError,
    RecallQuery,
    parse_count,
)
from hipo_jupyter.memory.disk import MAX_LINE_BYTES, ROOT_FILE, VIA_SIDEBAR, parse_json
from hipo_jupyter.memory.forget import checkpoint_id_at
from hipo_jupyter.memory.views import correct

from .cache import MemoryCache
from .paths import BadPathError, confine, links_out, memory_folder
from .views import (
    checkpoint_view,
    has_memory,
    node_statuses,
    root_sections,
    rule_view,
    topic_tree,
)

NAMESPACE = "hipo/api"
SETTINGS_KEY = "hipo_memories"
MAX_RESULTS = 100
# Answers are computed on these threads, never on the event loop: file work can then never stall
# the rest of Jupyter. A few, so that a slow answer for one notebook (a /budget on a folder of
# 100,000 knowledge files) does not hold another's /recall; requests for one folder take turns
# at its lock (`folder_lock`), awaited on the event loop, so a queue of them holds no thread.
WORKERS = 4
WORKER = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="hipo-api")
LOCKS_KEY = "hipo_folder_locks"  # in the web app's settings: one server, one event loop


class FolderLocks:
    """One asyncio.Lock per notebook folder, kept only while a request holds or awaits it: a
    folder's entry goes with its last request, so distinct paths (a client sending thousands of
    bad ones) leave nothing behind. Used on the event loop only, so it needs no lock itself."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def held(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (None, 0))
        lock = lock or asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)


class BadParameterError(ValueError):
    """A query parameter that is missing or malformed: 400 with the reason."""


class NoMemoryError(LookupError):
    """The folder has no memory/ yet: 404, and the sidebar shows how to start."""


def status_for(error: Exception) -> int | None:
    """The HTTP status of an error a user can fix, or None for a real server fault (500)."""
    if isinstance(getattr(error, "http_status", None), int):
        return error.http_status  # the team database being down is 503 (hipo_jupyter/team)
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
    if isinstance(error, RuntimeError) and "loop" in str(error).lower():
        return 400  # pathlib's "Symlink loop from ..."
    return None


def public_message(error: Exception, server_root: Path) -> str:
    """The error's message with every path made relative to the server root: a client never
    learns where the server keeps its files."""
    if isinstance(error, OSError) and error.strerror:
        message = error.strerror
        if error.filename:
            message = f"{message}: {error.filename}"
    else:
        message = str(error)
    for root in {str(server_root.resolve()), str(server_root.absolute()), str(server_root)}:
        if root and root != "/":
            message = message.replace(root + "/", "").replace(root, ".")
    return " ".join(message.split())


class HipoHandler(APIHandler):
    """Base: authenticated GET, the memory for `?path=`, and engine errors as JSON 4xx."""

    auth_resource = "contents"  # these endpoints read files under the server root

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond()

    async def respond(self) -> None:
        """`answer` on a worker thread under the folder's lock; errors a user can fix as 4xx."""
        try:
            async with self.folder_lock():
                answer = await asyncio.get_running_loop().run_in_executor(WORKER, self.answer)
        except Exception as error:
            status = status_for(error)
            if status is None:
                raise
            raise web.HTTPError(status, public_message(error, self.server_root)) from error
        self.finish(answer)

    def answer(self) -> dict[str, Any]:
        raise NotImplementedError

    def folder_lock(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The lock of the request's notebook folder, held while the request runs and dropped
        with the folder's last request (`FolderLocks`): its `path` as the server root names it,
        so two spellings of one folder are one lock; a bad path has its own, and is answered 4xx
        by the worker."""
        named = self.get_argument("path", "")
        try:
            key = str(memory_folder(self.server_root, named))
        except Exception:  # the worker reports it
            key = f"?{named}"
        locks: FolderLocks = self.settings.setdefault(LOCKS_KEY, FolderLocks())
        return locks.held(key)

    # --- parameters ---------------------------------------------------------------------
    def param(self, name: str, default: str | None = None) -> str:
        value = self.get_argument(name, default)
        if value is None:
            raise BadParameterError(f"missing query parameter {name!r}")
        return value

    def notebook_name(self) -> str:
        """The notebook `path` names (what its conversation and last `%%ask` are kept by)."""
        return PurePosixPath(self.param("path")).name

    def optional(self, name: str) -> str | None:
        return self.get_argument(name, "") or None

    # --- the memory ---------------------------------------------------------------------
    def check_not_hidden(self, path: Path, named: str) -> None:
        """Refuse what Jupyter's contents API would hide (dot files and folders, unless the
        server allows hidden files)."""
        contents = self.settings.get("contents_manager")
        if contents is not None and getattr(contents, "allow_hidden", False):
            return
        root = str(self.server_root.resolve())
        if is_hidden(str(path), root) or any(
            part.startswith(".") for part in Path(named).parts if part not in (".", "")
        ):
            raise FileNotFoundError(f"no such file: {named} (hidden files are not served)")

    @property
    def server_root(self) -> Path:
        return Path(self.settings["server_root_dir"]).expanduser()

    def folder(self) -> Path:
        """The notebook's folder, confined to the server root, and not hidden."""
        named = self.param("path")
        folder = memory_folder(self.server_root, named)
        self.check_not_hidden(folder, named)
        return folder

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
            "folder": folder.resolve().name,  # what the sidebar's header names: never just "/"
            "has_memory": has_memory(folder),
            "sections": [],
            "topics": [],
            "nodes": [],
            "owed_summaries": 0,  # written in the background by the model (`tree/background`)
        }
        if not reply["has_memory"]:
            return reply
        memory = self.memory(folder)
        reply["owed_summaries"] = len(memory.owed_summaries())
        nodes = node_statuses(memory)
        if (memory.root / ROOT_FILE).is_file():
            reply["sections"] = root_sections(memory.read(ROOT_FILE))
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
        target = confine(memory.root, relative)
        self.check_not_hidden(target, relative)
        if not target.is_file():
            raise FileNotFoundError(f"no such file in the memory: {relative}")
        return {"file": relative, "content": memory.read(relative)}


class RecallHandler(HipoHandler):
    """Search: `q`, and optionally `k`, `since`, `until`, `type` and `mode` (keyword, semantic,
    hybrid; by default hybrid when the semantic extra is installed, else keyword), checked by
    the engine's one request parser. With `budget=N` the answer is instead the context a model
    is sent (`Memory.context`: text, tokens, budget, layer1_tokens, mode and the hits it
    holds), within N tokens. `team=1` searches the team database ($HIPO_TEAM of the server)
    instead; its hits carry `author` and `notebook`."""

    def answer(self) -> dict[str, Any]:
        query = self.param("q")
        if len(query) > MAX_QUERY_CHARS:  # before splitting a huge parameter into words
            raise BadParameterError(f"q is longer than {MAX_QUERY_CHARS} characters")
        request = RecallQuery.parse(
            query,
            k=self.optional("k"),
            since=self.optional("since"),
            until=self.optional("until"),
            type=self.optional("type"),
            mode=self.optional("mode") or DEFAULT_RECALL_MODE,
            budget=self.optional("budget"),
        )
        team = self.optional("team")
        if team not in (None, "0", "1", "true", "false"):
            raise BadParameterError(f"team must be 1 or 0, not {team!r}")
        memory = self.memory()
        team_wanted = team in ("1", "true")
        if request.budget is not None:  # the context a model is sent: Memory.context
            return memory.context_query(request, team=team_wanted).to_json()
        if team_wanted:
            return memory.team_recall(request).to_json()
        return memory.recall_query(request).to_json()


class BudgetHandler(HipoHandler):
    """Layer 1 parts against their budgets."""

    def answer(self) -> dict[str, Any]:
        return self.memory().layer1().to_json()


class RecentHandler(HipoHandler):
    """The last `n` checkpoints, newest first, each with its provenance; the Claude calls'
    write-backs among them are one entry, last (`Memory.recent_checkpoints(grouped=True)`)."""

    def answer(self) -> dict[str, Any]:
        n = parse_count(self.optional("n"), "n", default=10)
        recent = self.memory().recent_checkpoints(min(n, MAX_RESULTS), grouped=True)
        return {"checkpoints": [checkpoint_view(checkpoint) for checkpoint in recent]}


class ChangesHandler(HipoHandler):
    """A stamp that changes when anything the sidebar shows may have changed (`Memory.changes`),
    written by any process: the sidebar asks every second and reloads only when it moves.
    A folder without memory answers an empty stamp (it changes once a memory appears)."""

    def answer(self) -> dict[str, Any]:
        folder = self.folder()
        if not has_memory(folder):
            return {"stamp": ""}
        return {"stamp": self.memory(folder).changes(self.notebook_name())}


class SentHandler(HipoHandler):
    """What the notebook's last `%%ask` sent: each Layer 1 part and recalled piece with its
    tokens and source (`Memory.last_sent`); `sent` is null before the first call."""

    def answer(self) -> dict[str, Any]:
        sent = self.memory().last_sent(self.notebook_name())
        return {"sent": sent.to_json() if sent is not None else None}


class RulesHandler(HipoHandler):
    """The rules in force (active first) and, apart, the rules others proposed, newest first."""

    def answer(self) -> dict[str, Any]:
        memory = self.memory()
        return {
            "rules": [rule_view(rule) for rule in memory.rules()],
            "proposals": [rule_view(rule) for rule in memory.proposals()],
        }


class PostHandler(HipoHandler):
    """A write the user makes from the sidebar: a POST of a JSON object naming a checkpoint by
    `"id"`, in the user's own name (`VIA_SIDEBAR`); 400 with the reason for bad input. Jupyter
    checks the token or the XSRF cookie of a POST; a GET is 405."""

    what_id = "the ID of the checkpoint"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        raise web.HTTPError(405, "this endpoint takes a POST")

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.respond()

    def body(self) -> tuple[str, dict[str, Any]]:
        """The checked `"id"` and the whole JSON object of the request."""
        raw = self.request.body or b"{}"
        if len(raw) > MAX_LINE_BYTES:
            raise BadParameterError(f"the body is over {MAX_LINE_BYTES:,} bytes")
        try:  # the engine's one parser: bounded depth and numbers, as for every JSON read
            body = parse_json(raw, "the body")
        except ParseError as error:
            example = '{"id": "<checkpoint id>"}'
            raise BadParameterError(f"the body must be JSON: {example} ({error})") from None
        wanted = body.get("id") if isinstance(body, dict) else None
        if wanted is None and isinstance(body, dict) and self.by_location and "file" in body:
            wanted = self.id_at(body)  # a recall hit: its file and line
        if not isinstance(wanted, str) or not wanted.strip():
            raise BadParameterError(f'missing "id": {self.what_id}')
        return wanted, body

    by_location = True  # a checkpoint may be named by `"file"` and `"line"` instead

    def id_at(self, body: dict[str, Any]) -> str:
        file, line = body.get("file"), body.get("line")
        if not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool):
            raise BadParameterError('"file" must be text and "line" a number')
        return checkpoint_id_at(self.memory(), file, line)

    def text(self, body: dict[str, Any], name: str) -> str:
        value = body.get(name, "")
        if not isinstance(value, str):
            raise BadParameterError(f'"{name}" must be text')
        return value


class AcceptRuleHandler(PostHandler):
    """POST `{"id": ...}`: the user accepts a proposed rule (`Memory.accept_rule`)."""

    what_id = "the ID of the proposed rule to accept"
    by_location = False

    def answer(self) -> dict[str, Any]:
        wanted, _ = self.body()
        accepted = self.memory().accept_rule(wanted, via=VIA_SIDEBAR)
        return {"accepted": accepted.field("accepts"), "checkpoint": checkpoint_view(accepted)}


class ForgetHandler(PostHandler):
    """POST `{"id": ..., "reason": ...}`: the user forgets a checkpoint for good
    (`Memory.forget`); `clean` is false, with the files named, if its text is still found."""

    def answer(self) -> dict[str, Any]:
        wanted, body = self.body()
        report = self.memory().forget(wanted, reason=self.text(body, "reason"), via=VIA_SIDEBAR)
        return {"forgot": report.id, "tombstone": report.tombstone, "clean": report.clean,
                "remaining": report.remaining, "user_files": report.user_files}  # fmt: skip


class CorrectHandler(PostHandler):
    """POST `{"id": ..., "body": ..., "title": ...}`: the user's correction of a checkpoint,
    which supersedes it (`views/correcting`); the title defaults to the replaced one's."""

    def answer(self) -> dict[str, Any]:
        wanted, body = self.body()
        fixed = correct(self.memory(), wanted, self.text(body, "title"), self.text(body, "body"),
                        via=VIA_SIDEBAR)  # fmt: skip
        return {"replaces": fixed.replaces, "checkpoint": checkpoint_view(fixed)}


ROUTES: list[tuple[str, type[HipoHandler]]] = [
    ("tree", TreeHandler),
    ("node", NodeHandler),
    ("recall", RecallHandler),
    ("budget", BudgetHandler),
    ("recent", RecentHandler),
    ("changes", ChangesHandler),
    ("sent", SentHandler),
    ("rules", RulesHandler),
    ("rules/accept", AcceptRuleHandler),
    ("forget", ForgetHandler),
    ("correct", CorrectHandler),
]


def setup_handlers(web_app: web.Application) -> None:
    """Put the Memory cache in the settings and register every route once, under /hipo/api/."""
    web_app.settings.setdefault(SETTINGS_KEY, MemoryCache())
    base_url = web_app.settings["base_url"]
    handlers = [(url_path_join(base_url, NAMESPACE, name), cls) for name, cls in ROUTES]
    web_app.add_handlers(".*$", handlers)
