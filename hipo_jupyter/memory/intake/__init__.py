"""What comes in: checkpoints written, conversations imported, an agent's notes kept.

Modules:

- `writing.py` the write path: checkpoints, knowledge/ offloads and imports, indexed as they
  are written.
- `importers.py` past conversations (OpenAI and Anthropic message arrays, jupyter-ai `.chat`,
  LoCoMo, Claude Code sessions) read into records; `import_times.py` the times of their turns.
- `notes.py` which files an agent may write and how, and the writing of them (`NoteFiles`).
- `exports.py` ChatGPT's and Claude.ai's exports, a conversation at a time; `stream.py` a JSON
  list read one element at a time; `sources.py` a file, folder or zip checked whole, then read
  again in batches to write; `records.py` the turn record and error they share.
- `transcript_check.py` a Claude Code session checked against the protocol.
- `sessions.py` a live Claude Code session's exchanges, as its hooks hand them in.

May import: every other room (`disk`, `search`, `tree`, `forget`, `recall`, `views`), `errors`,
`config`, `events`, `requests`, `roots`, and itself. Must not import `memory`: the facade
calls in here, never the other way.
"""

from .importers import FORMATS, ImportReport, read_file, undated_line
from .notes import (
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
from .sessions import LAYER1_HEAD, session_records
from .sources import ImportPlan, plan_import
from .transcript_check import check_transcript

__all__ = [
    "FOLDER",
    "FORMATS",
    "ImportPlan",
    "ImportReport",
    "LAYER1_HEAD",
    "NODE",
    "NODE_FOLDERS",
    "NOTE",
    "NOTE_FOLDERS",
    "OTHER",
    "RAW",
    "RAW_FOLDER",
    "RAW_FOLDER_FILE",
    "ROOT",
    "ROOT_NODE",
    "WORKING",
    "WORKING_FILES",
    "check_transcript",
    "check_writable",
    "kind_of",
    "normalize",
    "plan_import",
    "read_file",
    "refusal",
    "session_records",
    "undated_line",
]
