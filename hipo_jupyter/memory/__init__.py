"""The memory engine: files, compaction tree, search and recall.

It imports nothing from IPython, Jupyter or anthropic: every front end adapts it. `Memory`
(`memory.py`) is the one way in; its methods hand each job to the module that does it:

- requests and answers: `requests.py` what a request may be (`CheckpointDraft`, `RecallQuery`,
  the one date parser, the limits); `errors.py` the errors front ends show as one line;
  `roots.py` where a memory lives and what day it is; `config.py` the settings;
  `events.py` who is told after a write.
- the files: `store.py` the layout on disk and every write, `layout.py` its names;
  `anchored.py` every file operation walked from the root by directory fds, `export_target.py`
  where an export may write; `files.py` bounded reads of regular files; `appends.py`
  all-or-nothing raw appends and their repair; `checkpoint.py` the checkpoint format;
  `redact.py` secrets kept off the disk; `provenance.py` where a checkpoint came from.
- writing: `writing.py` checkpoints, knowledge/ offloads and imports (indexed as they are
  written); `importers.py` past conversations read into records; `exchanges.py` a user turn
  and the assistant's reply as one checkpoint; `notes.py` which files an
  agent may write, `note_files.py` writing them.
- the tree: `tree.py` the compaction chain and its plan; `periods.py` its calendar; `nodes.py`
  node frontmatter and damage; `summarize.py` the summarizer and the extractive summary,
  `digest.py` how it reads its sources; `root.py` ROOT.md, `root_update.py` it updated as
  each checkpoint is written.
- topics: `topics.py` topic and keyword extraction; `topic_index.py` the Topics Index as data;
  `topic_cache.py` it kept current without re-reading the logs.
- search and recall: `indexing.py` the text index and vectors kept in step with the files;
  `search.py` (SQLite FTS5) and `search_whoosh.py` the text backends, `search_query.py` the
  query built from user text, `migrations.py` the index schema; `recall.py` ranking and the
  `Hit` / `RecallResult` results, `query_hints.py` the periods and names a query names,
  `neighbours.py` the turns around a hit, `recall_run.py` one recall for a `Memory` (mode,
  vectors, fusion, provenance); `semantic.py`, `embed.py`, `embed_settings.py` (a model of
  the user's own), `vectors.py`, `vector_matrix.py`, `fusion.py` the `[semantic]` extra;
  `context_pack.py` the context a model is sent (`Memory.context`), `passages.py` the part of
  a long piece (and the Layer 1 lines) about its question; `fence.py` memory quoted as data
  in a prompt.
- Layer 1: `layer1.py` the always-loaded files and their budgets; `tokens.py` token counts.
- structured memory: `catalog.py` every checkpoint parsed once; `rules.py` rules with triggers;
  `frame.py` a table; `graph.py` RDF and SPARQL (`graph_run.py` runs a query in a child
  process that a time limit or Ctrl-C stops); `structured.py` them for one root, and export
  (`export_target.py` where an export may be written).
- what it holds: `status.py` status, nodes and the latest checkpoints; `check.py` the protocol
  rules; `transcript_check.py` a Claude Code session checked against them; `render.py` the one
  plain-text rendering of recall, status, topics, Layer 1 and compaction for every front end.
- the team: `team_link.py` the door to `hipo_jupyter/team`, loaded only with a team URL.
"""

from . import render
from .config import MemoryConfig, resolve_team_url
from .disk.checkpoint import CHECKPOINT_TYPES, Checkpoint
from .errors import HipoError, MemoryRootError, ParseError, PathOutsideRootError, QueryError
from .memory import Memory
from .recall.context import Context
from .recall.ranking import Hit, RecallResult
from .requests import (
    DEFAULT_BUDGET,
    MAX_BODY_CHARS,
    MAX_QUERY_CHARS,
    MIN_BUDGET,
    RECALL_MODES,
    CheckpointDraft,
    RecallQuery,
    RequestError,
    parse_count,
    parse_day,
    parse_number,
    pop_quoted_option,
    require_title,
)
from .roots import resolve_root
from .search.embed import Embedder, MiniLMEmbedder, SemanticUnavailable
from .tree.chain import CompactionReport
from .tree.layer1 import Layer1, Layer1Part
from .tree.status import NodeInfo, Status
from .tree.summarize import ExtractiveSummarizer, Summarizer
from .tree.topic_index import Topic, TopicsIndex

__all__ = [
    "CHECKPOINT_TYPES",
    "DEFAULT_BUDGET",
    "MAX_BODY_CHARS",
    "MAX_QUERY_CHARS",
    "MIN_BUDGET",
    "RECALL_MODES",
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
    "RecallResult",
    "RequestError",
    "SemanticUnavailable",
    "Status",
    "Summarizer",
    "Topic",
    "TopicsIndex",
    "parse_count",
    "parse_day",
    "parse_number",
    "pop_quoted_option",
    "render",
    "require_title",
    "resolve_root",
    "resolve_team_url",
]
