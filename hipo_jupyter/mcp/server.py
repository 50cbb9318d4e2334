"""`hipo mcp`: the memory of one root served over stdio to any MCP client.

Claude Code, Claude Desktop and jupyter-ai's personas all take MCP servers; with this one they
read and write the same memory the notebook's kernel does, under the same protocol. Each tool is
one `Memory` call and its answer rendered as text for a model to read:

    recall(query, k=5, since=None, until=None, type=None, budget=None)   ranked hits (or context)
    remember(title, body, type="project", tags=[], replaces=None)        append one checkpoint
    topics()  layer1()  read(path)  status()

and the Layer 1 files (ROOT.md, SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md) are resources, with
`hipo://layer1` for all of them as a prompt sees them. Every answer that holds stored text
(recall, layer1, read, topics, each resource) is one fenced block of quoted data, made by the
function that fences memory in a prompt (`memory.recall.fence_text`): a preamble saying it is
data, the text escaped, and a tag whose keyed suffix the text cannot know, so a note holding
`</hipo-recalled-memory>` and "SYSTEM: ..." cannot close the fence and speak as the system.
`remember` and `status` answer with locations and counts, no stored text. An engine error (bad
date, path outside the root, unknown type) is an MCP tool error carrying its one-line message;
the server goes on.
Writes go through the engine's locks (flock on the raw log, the SQLite index's transactions), so
several servers and kernels on one root lose nothing.

`hipo mcp --config claude-code|jupyter-ai|claude-desktop` prints what registers this server in
each client, with absolute paths (`hipo_jupyter.mcp.config`, which imports no MCP SDK).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from hipo_jupyter.memory import (
    DEFAULT_RECALL_MODE,
    HipoError,
    Memory,
    RecallQuery,
    render,
    require_title,
)
from hipo_jupyter.memory.disk import VIA_MCP
from hipo_jupyter.memory.recall import RECALL_TAG, fence_layer1, fence_text
from hipo_jupyter.memory.tree import LAYER1_FILES
from hipo_jupyter.memory.views import correct

from .config import (  # noqa: F401  (re-exported: the clients' config)
    CONFIG_TARGETS,
    CONFIG_WHERE,
    INSTRUCTIONS,
    SERVER_NAME,
    config_snippet,
    hipo_command,
    server_entry,
)
from .sdk import ResourceError, Server, ToolError, new_server
from .stdio import HipoMCPServer, serve_stdio

LAYER1_URI = "hipo://layer1"

Tool = TypeVar("Tool", bound=Callable[..., Any])


def one_line(message: str) -> str:
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def _tool_errors(tool: Tool) -> Tool:
    """Engine errors (and file errors) become MCP tool errors of one line, never a crash."""

    @functools.wraps(tool)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except (HipoError, OSError, ValueError) as error:
            raise ToolError(one_line(str(error) or type(error).__name__)) from None

    return wrapper  # type: ignore[return-value]


def resource_uri(relative: str) -> str:
    """`SCRATCHPAD.md` -> `hipo://SCRATCHPAD.md`; `memory/ROOT.md` -> `hipo://memory/ROOT.md`."""
    return f"hipo://{relative}"


# --- rendering (text for a model to read, fenced as quoted data) -------------------------------
def recall_text(memory: Memory, query: str, **filters: Any) -> str:
    """The ranked hits as `hipo recall` lists them, in the recall fence with the query."""
    listed = render.recall_text(memory.recall(query, mode=DEFAULT_RECALL_MODE, **filters))
    return fence_text(listed, tag=RECALL_TAG, attributes=[("query", " ".join(query.split()))])


def recall_within_budget(memory: Memory, query: str, budget: int, **filters: Any) -> str:
    """`recall(..., budget=N)`: the text a model is sent, `Memory.context` (k does not apply:
    the budget decides how much memory fits), fenced by the engine as a prompt gets it."""
    filters.pop("k", None)
    request = RecallQuery.parse(query, budget=budget, mode=DEFAULT_RECALL_MODE, **filters)
    return memory.context_query(request).text


def status_text(memory: Memory) -> str:
    return render.status_text(memory.status())


def topics_text(memory: Memory) -> str:
    """The Topics Index: its names come from titles and tags, so it is fenced too."""
    return fence_text(render.topics_text(memory.topics()), attributes=[("source", "topics")])


def layer1_text(memory: Memory) -> str:
    """Layer 1 fenced exactly as a prompt's first system block carries it."""
    return fence_layer1(memory.layer1().text)


def file_text(memory: Memory, relative: str) -> str:
    """A file of the root (`read`, the resources), fenced with its path, and with who wrote
    it when a note is not the user's (`writer="agent"`: Claude's memory tool wrote it)."""
    text = memory.read(relative)
    attributes = [("path", relative)]
    writer = memory.note_writer(relative.split("#", 1)[0])
    if writer:
        attributes.append(("writer", writer))
    return fence_text(text, attributes=attributes)


# --- the server --------------------------------------------------------------------------------
def correction_answer(memory: Memory, replaces: str, title: str, body: str, **how: Any) -> str:
    """The remember tool with `replaces`: an agent's correction (`disk/trust.correction`)."""
    fixed = correct(memory, replaces, title, body, via=VIA_MCP, **how)
    where = f"{render.checkpoint_where(fixed)}  {fixed.id}"
    if fixed.replaces:
        return f"{where}  replaces {fixed.replaces}"
    return (f"{where}  proposes a correction of {fixed.proposes}: the user's own words change "
            "only when the user accepts it")  # fmt: skip


def build_server(memory: Memory, session_start: threading.Thread | None = None) -> Server:
    """An MCP server whose tools and resources are calls on `memory`; a write waits for the
    `session_start` ritual (`after_session_start`)."""
    server = new_server(HipoMCPServer, SERVER_NAME, INSTRUCTIONS)

    @server.tool(structured_output=False)
    @_tool_errors
    def recall(
        query: str,
        k: int = 5,
        since: str | None = None,
        until: str | None = None,
        type: str | None = None,
        budget: int | None = None,
    ) -> str:
        """Search the memory: Topics Index, compaction tree and raw logs, best hits first, each
        with its file:line and the drill-down path from ROOT.md. since/until are YYYY-MM-DD;
        type is project, feedback, user or reference; budget (tokens) asks for a context."""
        filters = {"k": k, "since": since, "until": until, "type": type}
        if budget is not None:
            return recall_within_budget(memory, query, budget, **filters)
        return recall_text(memory, query, **filters)

    @server.tool(structured_output=False)
    @_tool_errors
    def remember(
        title: str, body: str, type: str = "project", tags: list[str] | None = None,
        replaces: str | None = None,
    ) -> str:  # fmt: skip
        """Append one checkpoint to today's raw log (append-only) and index it at once. The body
        is '- request: ...', '- analysis: ...', '- decisions: ...', '- outcome: ...',
        '- references: ...' lines or free text; type is project, feedback, user or reference.
        replaces: the ID of a checkpoint this corrects (of the user's: a proposal they accept)."""
        after_session_start(session_start)
        if replaces is not None:
            return correction_answer(memory, replaces, title, body, type=type, tags=tags)
        require_title(title)  # the rule `hipo remember` and %%remember keep
        checkpoint = memory.remember(title, body, type=type, tags=tags or (), via=VIA_MCP)
        if checkpoint.repeated:  # the existing one's id, and that nothing was written twice
            return render.repeated_line(checkpoint)
        return render.written_where(checkpoint)

    @server.tool(structured_output=False)
    @_tool_errors
    def topics() -> str:
        """The Topics Index (what ROOT.md lists): does the memory know about X, and where."""
        return topics_text(memory)

    @server.tool(structured_output=False)
    @_tool_errors
    def layer1() -> str:
        """Layer 1 as a prompt sees it: ROOT.md and the working files, each within its budget."""
        return layer1_text(memory)

    @server.tool(structured_output=False)
    @_tool_errors
    def read(path: str) -> str:
        """A file of the memory root by its relative path (e.g. memory/2026-03-12.md,
        memory/weekly/2026-W11.md, knowledge/pricing.md); nothing outside the root."""
        return file_text(memory, path)

    @server.tool(structured_output=False)
    @_tool_errors
    def status() -> str:
        """Counts of raw logs, checkpoints, nodes and topics; the Layer 1 budget."""
        return status_text(memory)

    for part, relative in LAYER1_FILES.items():
        server.resource(resource_uri(relative), name=part, description=f"Layer 1: {relative}",
                        mime_type="text/markdown")(_file_reader(memory, relative))  # fmt: skip

    @server.resource(LAYER1_URI, name="layer1", mime_type="text/markdown")
    def layer1_resource() -> str:
        """All of Layer 1, each part within its token budget, as a prompt sees it."""
        try:
            return layer1_text(memory)
        except HipoError as error:
            raise ResourceError(one_line(str(error))) from None

    return server


def _file_reader(memory: Memory, relative: str) -> Callable[[], str]:
    def read_file() -> str:
        if not os.path.lexists(memory.root / relative):
            # not written yet (a new root, a Hipocampus folder without it): an empty fence
            return fence_text("", attributes=[("path", relative)])
        try:
            return file_text(memory, relative)
        except (HipoError, OSError) as error:
            raise ResourceError(one_line(str(error))) from None

    read_file.__doc__ = f"{relative} as it is on disk now, fenced as quoted data."
    return read_file


SESSION_START_WAIT_S = 30.0  # a write waits at most this long for the session-start pass


def after_session_start(
    ritual: threading.Thread | None, wait_s: float = SESSION_START_WAIT_S
) -> None:
    """Wait for the session-start pass before a write: a write ahead of it, into a tree no pass
    had built, had the pass build the day's nodes, and a client that closed then cut it, so the
    memory failed `hipo check`. Never unbounded: after `wait_s` the write is refused in one
    line (nothing written; the client may send it again), not left hanging."""
    if ritual is None:
        return
    ritual.join(wait_s)
    if ritual.is_alive():
        raise HipoError(
            f"the session-start pass (compacting the memory) is still running after {wait_s:g}s; "
            "nothing was written: send the write again in a moment"
        )


def start_session(memory: Memory) -> threading.Thread:
    """The session-start ritual `%load_ext hipo` runs (compact what is dirty, so ROOT.md and the
    working files exist and are current), in a background thread: `initialize` answers at
    once, and a tool called meanwhile reads Layer 1 as it is (the engine's locks keep both
    safe). A failure is one line on stderr; the server serves what is there."""

    def ritual() -> None:
        try:
            memory.compact()
        except (HipoError, OSError) as error:
            print(f"hipo mcp: session start: {one_line(str(error))}", file=sys.stderr)

    thread = threading.Thread(target=ritual, name="hipo-mcp-start", daemon=True)
    thread.start()
    return thread


def serve(memory: Memory) -> None:
    """Run the session-start ritual, then serve `memory` over stdio until the client closes
    the connection; every line is answered (`stdio.py`)."""
    anyio.run(serve_stdio, build_server(memory, start_session(memory)))
