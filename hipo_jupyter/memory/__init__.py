"""The memory engine: files, compaction tree, search and recall.

It imports nothing from IPython, Jupyter or anthropic: every front end adapts it.
"""

from .checkpoint import CHECKPOINT_TYPES, Checkpoint
from .config import MemoryConfig
from .context_pack import Context
from .embed import Embedder, MiniLMEmbedder, SemanticUnavailable
from .errors import HipoError, MemoryRootError, ParseError, PathOutsideRootError, QueryError
from .layer1 import Layer1, Layer1Part
from .memory import Memory
from .recall import Hit, RecallResult
from .roots import resolve_root
from .status import NodeInfo, Status
from .summarize import ExtractiveSummarizer, Summarizer
from .topic_index import Topic
from .tree import CompactionReport

__all__ = [
    "CHECKPOINT_TYPES",
    "Checkpoint",
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
    "RecallResult",
    "SemanticUnavailable",
    "Status",
    "Summarizer",
    "Topic",
    "resolve_root",
]
