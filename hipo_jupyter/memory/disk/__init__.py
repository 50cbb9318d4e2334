"""The files on disk and their formats: what `memory/` holds, how it is read and written.

Everything a memory keeps is Markdown in the root (see `store.py` for the layout); this room is
the only code that touches it. Modules:

- `store.py` the layout on disk and every write; `layout.py` its names, spelled once.
- `anchored.py` every file operation walked from the root by directory fds; `files.py` bounded
  reads and atomic writes of regular files; `jsonread.py` every JSON hipo reads, bounded and
  typed; `appends.py` all-or-nothing raw appends and their repair; `export_target.py` where
  an export may write.
- `checkpoint.py` the checkpoint format and its parser, its ids (made, and named by their
  end: `pick_by_id`); `exchanges.py` a user turn and the assistant's reply as one
  checkpoint each; `provenance.py` where a checkpoint came from;
  `trust.py` who wrote it and what that writer may do; `note_writers.py` who wrote a note
  under knowledge/ or plans/ when not the user; `redact/` secrets kept off the disk
  (its rules, and the table of credential formats it knows by their shape).
- `sent.py` what the sidebar reads beside the memory: what a `%%ask` sent, a stamp of changes.
- `nodes.py` compaction node frontmatter and damage; `periods.py` the calendar (days, ISO weeks,
  months) and the days a memory keeps.

May import: the engine's `errors`, `config` and `events`, and itself. Must not import any other
room, `requests`, `memory` or a front end: every room above reads the disk through this one.
"""

from .checkpoint import CHECKPOINT_TYPES, Checkpoint, parse_log
from .files import MAX_STATE_BYTES, read_regular_text, read_user_file, write_atomic_bytes
from .jsonread import (
    MAX_LINE_BYTES,
    MAX_SETTINGS_BYTES,
    JsonInputError,
    parse_json,
    parse_typed,
    read_json_file,
    read_settings_file,
    read_state_file,
    set_aside,
    shape_problem,
)
from .layout import notebook_stem
from .nodes import parse_node
from .periods import week_month
from .provenance import (
    MEMORY_TOOL_NOTEBOOK,
    VIA_CLAUDE_CODE,
    VIA_CLI,
    VIA_MAGIC,
    VIA_MCP,
    VIA_MEMORY_TOOL,
    VIA_SIDEBAR,
    VIA_WRITE_BACK,
    calls_phrase,
    provenance_text,
)
from .redact import redact
from .store import (
    CONVERSATIONS_DIR,
    MEMORY_DIR,
    ROOT_FILE,
    Store,
    decode_markdown,
    node_path,
    raw_log_path,
    sha256,
)
from .trust import (
    POWERS_LISTED,
    RULE_IN_FORCE,
    TEAMMATE,
    WRITERS,
    may,
    trust_table,
    writer_of,
    writer_of_provenance,
)

__all__ = [
    "CHECKPOINT_TYPES",
    "CONVERSATIONS_DIR",
    "Checkpoint",
    "MAX_LINE_BYTES",
    "MAX_SETTINGS_BYTES",
    "MAX_STATE_BYTES",
    "notebook_stem",
    "JsonInputError",
    "MEMORY_DIR",
    "MEMORY_TOOL_NOTEBOOK",
    "POWERS_LISTED",
    "ROOT_FILE",
    "RULE_IN_FORCE",
    "Store",
    "VIA_CLAUDE_CODE",
    "VIA_CLI",
    "VIA_MAGIC",
    "VIA_MCP",
    "VIA_MEMORY_TOOL",
    "VIA_SIDEBAR",
    "VIA_WRITE_BACK",
    "WRITERS",
    "calls_phrase",
    "decode_markdown",
    "may",
    "node_path",
    "parse_json",
    "parse_log",
    "parse_node",
    "parse_typed",
    "provenance_text",
    "raw_log_path",
    "read_json_file",
    "read_regular_text",
    "read_settings_file",
    "read_state_file",
    "read_user_file",
    "redact",
    "set_aside",
    "shape_problem",
    "sha256",
    "TEAMMATE",
    "trust_table",
    "week_month",
    "write_atomic_bytes",
    "writer_of",
    "writer_of_provenance",
]
