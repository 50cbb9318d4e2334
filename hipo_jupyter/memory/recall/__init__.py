"""Recall and context: a question in, ranked hits and the text a model is sent out.

Modules:

- `ranking.py` ranking over the Topics Index, BM25, the tree and recency, and the `Hit` /
  `RecallResult` results; `query_hints.py` the periods and names a query names;
  `topic_match.py` the topics a question names, indexed once per Topics Index;
  `neighbours.py` the turns around a hit; `passages.py` the part of a long piece (and the
  Layer 1 lines) about its question; `supersession.py` the user's current word first (a note
  changed later under the change, write-backs under the notes that answer); `second_hop.py`
  what the first hits name that the question does not, searched in turn; `implicit_needs.py`
  the user's preferences and constraints routed into a question about a plan; `time_span.py`
  the daily and weekly nodes as the map of a question that spans time (these three only when
  `requests.RecallSettings` asks for them). Every decision about who wrote a hit reads its
  typed provenance fields (`search.contract.Document`), never its display phrase.

Every tunable of this room (the stages on or off, the score's weights, the weak vector hits,
context's shares and passage lengths, supersession's overlap, depth and yield) is a field of
the one `requests.RecallSettings` passed in, its default and what chose it said there; each
function that reads one takes `settings` and defaults to `requests.DEFAULT_SETTINGS`. No
module constant here is a tuning knob to patch.
- `hybrid.py` keyword and vector hits made into one ranking (score fusion's weights, RRF).
- `recall_run.py` one recall for a `Memory`: mode, vectors, fusion, provenance;
  `corrections.py` which checkpoints a correction superseded (hidden unless asked for). A
  pending forget's text and a teammate's copy of forgotten content are left out by the
  forget ledger (`forget/`, the room below).
- `context.py` the context a model is sent (`Memory.context`) within a token budget;
  `fence.py` memory quoted as data, for a prompt and for an agent (`hipo mcp`).

May import: `disk`, `search`, `tree`, `forget`, `errors`, `config`, `events`, `requests`,
`roots`, and itself. Must not import `views`, `intake` or `memory`.
"""

from .fence import (
    LAYER1_PREAMBLE,
    LAYER1_TAG,
    MEMORY_TAG,
    RECALL_PREAMBLE,
    RECALL_TAG,
    escape_fence,
    fence_layer1,
    fence_quoted,
    fence_text,
    quote_attribute,
    wrap,
)
from .ranking import Hit, RecallResult, recall

__all__ = [
    "Hit",
    "LAYER1_PREAMBLE",
    "LAYER1_TAG",
    "MEMORY_TAG",
    "RECALL_PREAMBLE",
    "RECALL_TAG",
    "RecallResult",
    "escape_fence",
    "fence_layer1",
    "fence_quoted",
    "fence_text",
    "quote_attribute",
    "recall",
    "wrap",
]
