"""The memory engine: files, compaction tree, search and recall, in rooms by job.

It imports nothing from IPython, Jupyter or anthropic, and no backend: every front end adapts
it, and the team database is handed in (`backends.py`). Front ends import only this face (or a
room's own `__init__`), never a module inside. Beside the rooms, the top holds what every room
or every front end shares:

- `memory.py` `Memory`, the one way in: each method hands its job to the room that does it.
- `requests.py` what a request may be (`CheckpointDraft`, `RecallQuery`, the one date parser,
  the limits); `errors.py` the errors front ends show as one line; `config.py` the settings;
  `roots.py` where a memory lives and what day it is; `events.py` who is told after a write;
  `words.py` what a word is (the split, the fold, the stem, the stopwords) for every stage.
- `backends.py` what the engine asks of a backend handed in from outside (`TeamBackend`).
- `render.py` the one plain-text rendering of recall, status, topics, Layer 1 and compaction.
- `data/` the tokenizer files shipped with the package (o200k, MiniLM's vocabulary).

The rooms, lowest first (a room imports only the rooms below it; `tests/test_layout.py` holds
the direction, written once as data):

1. `disk/` the files on disk and their formats: the layout, every write, checkpoints,
   nodes, the calendar, redaction, provenance, and who may do what (`trust`).
2. `search/` the text index and the vectors: the search contract, FTS5 and Whoosh, the query,
   the index kept in step with the files, the `[semantic]` extra.
3. `tree/` the compaction tree and Layer 1: the chain, summaries, ROOT.md, topics and the
   Topics Index, Layer 1's files and budgets, token counts, status.
4. `forget/` the user's forget and every holder's duty to obey it: the ledger (keyed hashes,
   no text), the raw log rewritten to a tombstone, the derived copies scrubbed, and the
   refusal that keeps forgotten content from being written again.
5. `recall/` recall and context: ranking, hybrid fusion, neighbours, passages, one recall for
   a `Memory`, the context a model is sent, fences.
6. `views/` structured views: the catalog, rules, the frame, the graph, `hipo check`,
   corrections.
7. `intake/` what comes in: the write path, imports, an agent's notes, transcript checks.

(`errors`, `config`, `events` and `words` sit below `disk`; `requests` and `roots` between `disk`
and `search`; `backends`, `render` and `memory` above every room.)

May import: itself only (its rooms and top modules) and the standard library, tiktoken and,
with their extras, the search and vector libraries. No front end, LLM SDK or backend.

A `%%remember` cell: the magic calls `Memory.remember` (`memory`), which checks it as a
`CheckpointDraft` (`requests`); `intake/writing` redacts it (`disk/redact`), renders it
(`disk/checkpoint`) and appends it to the day's raw log (`disk/store`, `disk/appends`), then
`search/indexing` indexes it (and its vector, `search/semantic`) in the same call;
`tree/root_update` puts it in ROOT.md's Active Context and Topics Index (`tree/topic_index`),
and the listeners (`events`) and the team backend (`backends`) hear of it.

A `%recall` line: the magic parses it into a `RecallQuery` (`requests`) and calls
`Memory.recall_query`; `recall/recall_run` picks the mode and asks `search` (the FTS5 index,
the vectors) and `tree` (the Topics Index); `recall/ranking` ranks the hits with the tree,
the topics and recency (`recall/hybrid` when vectors join in) and names each hit's drill-down
path; the magic shows the `RecallResult` through `render`. `%%ask` and `hipo recall --context`
take the same hits through `recall/context` (passages, neighbours, fences) into a budget.
"""

from . import render
from .backends import NO_TEAM, TeamBackend, TeamFactory
from .config import MemoryConfig, resolve_team_url
from .disk.checkpoint import CHECKPOINT_TYPES, Checkpoint
from .disk.sent import Sent, SentPart
from .errors import HipoError, MemoryRootError, ParseError, PathOutsideRootError, QueryError
from .memory import Memory
from .recall.context import Context
from .recall.ranking import Hit, RecallResult
from .requests import (
    DEFAULT_BUDGET,
    DEFAULT_RECALL_MODE,
    DEFAULT_SETTINGS,
    FORMAT_CHARACTERS,
    MAX_BODY_CHARS,
    MAX_QUERY_CHARS,
    MIN_BUDGET,
    RECALL_MODES,
    CheckpointDraft,
    RecallQuery,
    RecallSettings,
    RequestError,
    one_line_note,
    parse_count,
    parse_day,
    parse_number,
    pop_quoted_option,
    require_title,
    shown,
    storable,
)
from .roots import resolve_root
from .search.embed import Embedder, MiniLMEmbedder, SemanticUnavailable
from .tree.chain import CompactionReport
from .tree.layer1 import Layer1, Layer1Part
from .tree.status import NodeInfo, Status
from .tree.summarize import ExtractiveSummarizer, Summarizer
from .tree.topic_index import Topic, TopicsIndex

__all__ = [
    "Sent",
    "SentPart",
    "NO_TEAM",
    "TeamBackend",
    "TeamFactory",
    "CHECKPOINT_TYPES",
    "DEFAULT_BUDGET",
    "FORMAT_CHARACTERS",
    "MAX_BODY_CHARS",
    "MAX_QUERY_CHARS",
    "MIN_BUDGET",
    "RECALL_MODES",
    "DEFAULT_RECALL_MODE",
    "DEFAULT_SETTINGS",
    "Checkpoint",
    "CheckpointDraft",
    "CompactionReport",
    "Context",
    "Embedder",
    "ExtractiveSummarizer",
    "HipoError",
    "Hit",
    "Layer1",
    "Layer1Part",
    "Memory",
    "MemoryConfig",
    "MemoryRootError",
    "MiniLMEmbedder",
    "NodeInfo",
    "ParseError",
    "PathOutsideRootError",
    "QueryError",
    "RecallQuery",
    "RecallSettings",
    "RecallResult",
    "RequestError",
    "SemanticUnavailable",
    "Status",
    "Summarizer",
    "Topic",
    "TopicsIndex",
    "parse_count",
    "parse_day",
    "one_line_note",
    "parse_number",
    "pop_quoted_option",
    "render",
    "require_title",
    "resolve_root",
    "resolve_team_url",
    "shown",
    "storable",
]
