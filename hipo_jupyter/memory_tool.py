"""Claude's memory tool (`memory_20250818`) backed by the notebook's memory tree.

Claude models are trained to keep notes through this tool: `view`, `create`, `str_replace`,
`insert`, `delete` and `rename` on paths under `/memories`. `HipoMemoryTool` maps `/memories` onto
the memory root, so those notes land in the same files the notebook, `hipo` and `hipo mcp` use,
under the protocol's rules (`hipo_jupyter.memory.intake.notes`):

- `view /memories` lists the memory's files (ROOT.md, the Layer 1 files, knowledge/, plans/, the
  raw logs and nodes) with their sizes and what each accepts; `view` of a file numbers its lines;
- SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md, knowledge/ and plans/ are created and edited
  atomically, knowledge indexed at once;
- a `create` or `insert` under /memories/memory/ appends checkpoints to a raw log (the day its
  name gives, else today), never rewriting it;
- every other write (a raw log edited, deleted or renamed; a compaction node or ROOT.md written;
  a file that is not memory) is a tool error that says why and what to do instead;
- paths stay under /memories: `..`, other absolute paths and symlinks are refused.

Pass `HipoMemoryTool()` (root: $HIPO_ROOT or the working directory) or `HipoMemoryTool(root)` in
`tools=` of `client.beta.messages.tool_runner(...)`; `AsyncHipoMemoryTool` for the async client.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import anyio.to_thread
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from hipo_jupyter.memory import HipoError, Memory, resolve_root
from hipo_jupyter.memory.disk import MEMORY_TOOL_NOTEBOOK, VIA_MEMORY_TOOL, raw_log_path
from hipo_jupyter.memory.intake import (
    FOLDER,
    NODE,
    NODE_FOLDERS,
    NOTE,
    NOTE_FOLDERS,
    OTHER,
    RAW,
    RAW_FOLDER,
    RAW_FOLDER_FILE,
    ROOT,
    ROOT_NODE,
    WORKING,
    WORKING_FILES,
    check_writable,
    kind_of,
    normalize,
    refusal,
)

PREFIX = "/memories"
LINE_WIDTH = 6
MAX_LISTED = 200  # a listing (or a list of lines) says "and N more" past this
NEWEST_PER_FOLDER = 40  # a year of memory is ~800 files: a listing shows the newest of each folder
KIND_NOTES = {
    WORKING: "Layer 1, edit freely",
    NOTE: "note, edit freely",
    RAW: "raw log, append-only",
    NODE: "compaction node, read-only",
    ROOT: "topic index, read-only",
}
RULES = (
    "Rules: edit SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md, knowledge/ and plans/ freely; "
    "create or insert under /memories/memory/ to append a checkpoint to a raw log (raw logs are "
    "never rewritten); compaction nodes and ROOT.md are rebuilt from the raw logs, never edited."
)
PROPOSED_NOTE = (
    " A rule with a trigger written here is proposed to the user, not in force: it reaches "
    "no prompt until they accept it (hipo rules accept ID)."
)
_HEADING = re.compile(r"^## ", re.MULTILINE)
# Each command's fields and their types (`view_range` optional): the SDK builds a command from
# the model's input without checking it, so `file_text: null` or `view_range: ["a", "b"]`
# would reach the handlers and fail there as a Python error, shown to the model as a repr.
FIELDS: dict[str, dict[str, type]] = {
    "view": {"path": str},
    "create": {"path": str, "file_text": str},
    "str_replace": {"path": str, "old_str": str, "new_str": str},
    "insert": {"path": str, "insert_line": int, "insert_text": str},
    "delete": {"path": str},
    "rename": {"old_path": str, "new_path": str},
}


def check_input(tool_input: object) -> None:
    """A ToolError of one line unless `tool_input` is a known command with each field of the
    right type (see FIELDS); what the error names of the input is cut short."""
    if not isinstance(tool_input, dict):
        raise ToolError(f"the memory tool takes an object with a command, not {_kind(tool_input)}")
    command = tool_input.get("command")
    if not isinstance(command, str) or command not in FIELDS:
        known = ", ".join(FIELDS)
        raise ToolError(f"unknown memory command {_shown(command)}: use one of {known}")
    for name, kind in FIELDS[command].items():
        value = tool_input.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            what = "a string" if kind is str else "a whole number"
            raise ToolError(f"{command}: {name} must be {what}, not {_kind(value)}")
    if command == "view":
        given = tool_input.get("view_range")
        if given is not None and not (
            isinstance(given, list)
            and len(given) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in given)
        ):
            raise ToolError(
                f"view: view_range is [first line, last line] in whole numbers (last -1: to "
                f"the end), not {_shown(given)}"
            )


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), "a list" if isinstance(value, list) else "an object")


def _shown(value: object, limit: int = 40) -> str:
    text = one_line(repr(value)) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(message: str) -> str:
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def relative_of(memory_path: str) -> str:
    """`/memories/knowledge/a.md` -> `knowledge/a.md`; anything not under /memories refused."""
    if not isinstance(memory_path, str) or not (
        memory_path == PREFIX or memory_path.startswith(PREFIX + "/")
    ):
        raise ToolError(f"memory paths start with {PREFIX}/, not {memory_path!r}")
    return normalize(memory_path[len(PREFIX) :].lstrip("/"))


def shown(relative: str) -> str:
    return f"{PREFIX}/{relative}" if relative else PREFIX


def file_size(size: int) -> str:
    for unit in ("B", "K", "M"):
        if size < 1024 or unit == "M":
            return f"{size}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size}"


def numbered(text: str, start: int = 1) -> str:
    return "\n".join(
        f"{number:>{LINE_WIDTH}}\t{line}" for number, line in enumerate(text.split("\n"), start)
    )


def checkpoint_blocks(text: str) -> list[tuple[str, str]]:
    """(title line, body) of each checkpoint in text written for a raw log: split at `## `
    headings; text before the first heading is one checkpoint whose title the engine derives."""
    starts = [match.start() for match in _HEADING.finditer(text)]
    pieces = []
    if not starts or text[: starts[0]].strip():
        pieces.append(("", text[: starts[0]] if starts else text))
    for number, begin in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        heading, _, body = text[begin + 3 : end].partition("\n")
        pieces.append((heading.strip(), body))
    return [(title, body) for title, body in pieces if title or body.strip()]


class HipoMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over a hipo memory root (a path, a `Memory`, or None for the default)."""

    def __init__(
        self,
        root: str | Path | Memory | None = None,
        *,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._owns_memory = not isinstance(root, Memory)
        self.memory = root if isinstance(root, Memory) else Memory(resolve_root(root))
        self.calls = 0  # commands run, for the %%ask usage line

    def close(self) -> None:
        """Close the memory if this tool opened it (a `Memory` passed in stays open)."""
        if self._owns_memory:
            self.memory.close()

    def call(self, input: object) -> str:  # noqa: A002 (the SDK's name)
        """A command from the model: its input checked (`check_input`) before it is run."""
        check_input(input)
        return super().call(input)  # type: ignore[return-value]

    def execute(self, command: Any) -> str:
        """Every command, with engine errors turned into tool errors of one line."""
        self.calls += 1
        name = getattr(command, "command", None)
        try:
            return super().execute(command)
        except HipoError as error:
            raise ToolError(one_line(str(error))) from None
        except OSError as error:
            raise ToolError(f"{name} failed: {error.strerror or error}") from None
        except (TypeError, ValueError, AttributeError, KeyError, NotImplementedError) as error:
            # input that got past check_input (a command built by hand): one line, no repr
            raise ToolError(
                f"{name} failed: the input does not fit the command ({error})"
            ) from None

    # --- reading ---------------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        relative = relative_of(command.path)
        target = self.memory.note_file(relative) if relative else self.memory.root
        if target.is_dir():
            if kind_of(relative, is_dir=True) != FOLDER:
                raise ToolError(refusal(relative, OTHER, "view"))
            return self._listing(relative)
        kind = kind_of(relative)
        if kind == OTHER:
            raise ToolError(refusal(relative, kind, "view"))
        text = self.memory.read(relative)
        lines = text.split("\n")
        start, end = 1, len(lines)
        if command.view_range:
            if len(command.view_range) != 2:
                raise ToolError("view_range is [first line, last line] (last -1: to the end)")
            start, last = command.view_range
            end = len(lines) if last == -1 else last
            if start < 1 or start > len(lines) or end < start:
                raise ToolError(
                    f"view_range {command.view_range} is outside the file's {len(lines)} lines"
                )
        body = numbered("\n".join(lines[start - 1 : end]), start)
        return f"Here's the content of {command.path} with line numbers:\n{body}"

    def _listing(self, folder: str) -> str:
        """The memory's files under `folder`; a subfolder with many files (a year of raw logs
        or dailies) shows its newest, and says how to see the rest."""
        entries = [e for e in self._memory_files() if not folder or e.startswith(folder + "/")]
        by_parent: dict[str, list[str]] = {}
        for relative in entries:
            by_parent.setdefault(str(Path(relative).parent), []).append(relative)
        lines = [f"Here are the memory's files in {shown(folder)} (size, path, what it takes):"]
        listed = 0
        for parent, files in by_parent.items():
            left_out = len(files) - NEWEST_PER_FOLDER if parent != (folder or ".") else 0
            if left_out > 0:
                lines.append(f"\t({left_out} older files in {shown(parent)}/: view it for all)")
                files = files[left_out:]
            room = MAX_LISTED - listed
            if len(files) > room:  # a folder of 100,000 notes: a bounded answer, not megabytes
                lines.append(
                    f"\t(and {len(files) - room:,} more in {shown(parent)}/: view a subfolder "
                    "or a file by name)"
                )
                files = files[:room]
            listed += len(files)
            for relative in files:
                size = file_size((self.memory.root / relative).lstat().st_size)
                note = KIND_NOTES.get(kind_of(relative), "")
                lines.append(f"{size}\t{shown(relative)}\t({note})")
        if not entries:
            lines.append("(no memory files here yet)")
        lines.append(RULES)
        return "\n".join(lines)

    def _memory_files(self) -> list[str]:
        """Every file of the memory, as relative paths: Layer 1 first, then memory/ (raw logs,
        then nodes by level), then knowledge/ and plans/; oldest first within a folder."""
        root = self.memory.root
        found = [p for p in WORKING_FILES if (root / p).is_file()]
        if (root / ROOT_NODE).is_file():
            found.append(ROOT_NODE)
        memory_dir = root / RAW_FOLDER
        if memory_dir.is_dir():
            found += sorted(
                f"{RAW_FOLDER}/{p.name}"
                for p in memory_dir.glob("*.md")
                if kind_of(f"{RAW_FOLDER}/{p.name}") == RAW
            )
            for level in NODE_FOLDERS:
                found += sorted(
                    f"{RAW_FOLDER}/{level}/{p.name}"
                    for p in (memory_dir / level).glob("*.md")
                    if not p.name.startswith(".")
                )
        for folder in NOTE_FOLDERS:
            base = root / folder
            if base.is_dir():
                found += sorted(
                    p.relative_to(root).as_posix()
                    for p in base.rglob("*.md")
                    if p.is_file()
                    and not p.is_symlink()
                    and kind_of(p.relative_to(root).as_posix()) == NOTE
                )
        return found

    # --- writing ---------------------------------------------------------------------------
    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        relative = relative_of(command.path)
        if kind_of(relative) in (RAW, RAW_FOLDER_FILE):
            return self._append(relative, command.file_text)
        existed = self.memory.note_file(relative).exists() if relative else False
        self.memory.write_note(relative, command.file_text, via=VIA_MEMORY_TOOL)
        if existed:
            return f"File {command.path} overwritten with the new content."
        return f"File created successfully at: {command.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        relative = relative_of(command.path)
        check_writable(relative, "edit")
        text = self.memory.read(self._editable(relative))
        count = text.count(command.old_str) if command.old_str else 0
        if count == 0:
            raise ToolError(
                f"No replacement was performed: old_str did not appear verbatim in {command.path}"
            )
        if count > 1:
            lines = sorted(
                {
                    text[: m.start()].count("\n") + 1
                    for m in re.finditer(re.escape(command.old_str), text)
                }
            )
            raise ToolError(
                f"No replacement was performed: old_str appears {count} times in "
                f"{command.path} (lines {', '.join(map(str, lines))}); make it unique"
            )
        changed_line = text[: text.index(command.old_str)].count("\n")
        new_text = text.replace(command.old_str, command.new_str, 1)
        self.memory.write_note(relative, new_text, via=VIA_MEMORY_TOOL)
        lines = new_text.split("\n")
        first = max(0, changed_line - 2)
        snippet = numbered("\n".join(lines[first : changed_line + 3]), first + 1)
        return f"The memory file has been edited. The change, with line numbers:\n{snippet}"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        relative = relative_of(command.path)
        if kind_of(relative) in (RAW, RAW_FOLDER_FILE):
            return self._append(relative, command.insert_text, asked_line=command.insert_line)
        check_writable(relative, "edit")
        lines = self.memory.read(self._editable(relative)).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(
                f"insert_line {command.insert_line} is outside [0, {len(lines)}] for {command.path}"
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        self.memory.write_note(relative, "\n".join(lines) + "\n", via=VIA_MEMORY_TOOL)
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        relative = relative_of(command.path)
        if not relative or (self.memory.root / relative).is_dir():
            raise ToolError(refusal(relative, FOLDER, "delete"))
        self.memory.delete_note(relative)
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, new = relative_of(command.old_path), relative_of(command.new_path)
        if not old or (self.memory.root / old).is_dir():
            raise ToolError(refusal(old, FOLDER, "rename"))
        self.memory.move_note(old, new)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def _editable(self, relative: str) -> str:
        """`relative`, once it is known to be a file reached without a symlink."""
        self.memory.note_file(relative)
        return relative

    def _append(self, relative: str, text: str, *, asked_line: int | None = None) -> str:
        """Text written to the raw-log folder, appended as checkpoints: to the day the file's
        name gives (not a future one), else today."""
        today = self.memory.today
        day = today
        if kind_of(relative) == RAW:
            try:
                day = date.fromisoformat(Path(relative).stem)
            except ValueError:
                raise ToolError(f"{shown(relative)} is not a real day (YYYY-MM-DD.md)") from None
            if day > today:
                raise ToolError(
                    f"{shown(relative)} is a future day; append to today's log, "
                    f"{shown(raw_log_path(today))}"
                )
        blocks = checkpoint_blocks(text)
        if not blocks:
            raise ToolError("nothing to append: the text is empty")
        answered = self.memory.remember_all(
            blocks, on=day, notebook=MEMORY_TOOL_NOTEBOOK, via=VIA_MEMORY_TOOL
        )
        written = [checkpoint for checkpoint in answered if not checkpoint.repeated]
        log = shown(raw_log_path(day))
        there = len(answered) - len(written)
        already = ""
        if there:  # the same checkpoint was in the day's log already: not written twice
            ids = [c.id or "?" for c in answered if c.repeated]
            more = f" and {len(ids) - 3:,} more" if len(ids) > 3 else ""
            shown_ids = ", ".join(ids[:3]) + more
            already = f"{there:,} already in {log} (id {shown_ids}), not written twice"
        if not written:
            return f"Nothing appended: {already}."
        lines = ", ".join(str(checkpoint.line) for checkpoint in written[:MAX_LISTED])
        if len(written) > MAX_LISTED:
            lines += f" and {len(written) - MAX_LISTED:,} more"
        where = "" if asked_line is None else f" (not at line {asked_line})"
        proposed = sum(1 for c in written if c.type == "feedback" and c.field("trigger"))
        return (
            f"Appended {len(written)} checkpoint{'s' if len(written) > 1 else ''} to {log} at "
            f"line {lines}{where}: raw logs are append-only, so nothing in them was rewritten."
            + (f" {already[0].upper()}{already[1:]}." if already else "")
        ) + (PROPOSED_NOTE if proposed else "")


class AsyncHipoMemoryTool(BetaAsyncAbstractMemoryTool):
    """`HipoMemoryTool` for the async client: the same commands, run in a worker thread."""

    def __init__(
        self,
        root: str | Path | Memory | None = None,
        *,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.tool = HipoMemoryTool(root, cache_control=cache_control)

    @property
    def memory(self) -> Memory:
        return self.tool.memory

    @property
    def calls(self) -> int:
        return self.tool.calls

    def close(self) -> None:
        self.tool.close()

    async def call(self, input: object) -> str:  # noqa: A002 (the SDK's name)
        check_input(input)
        return await super().call(input)  # type: ignore[return-value]

    async def execute(self, command: Any) -> str:
        return await anyio.to_thread.run_sync(self.tool.execute, command)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self.execute(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self.execute(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self.execute(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self.execute(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self.execute(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self.execute(command)
