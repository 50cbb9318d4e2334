"""The compaction tree and Layer 1: raw logs summarized into days, weeks, months and ROOT.md.

Modules:

- `chain.py` the compaction chain and its plan (raw -> daily -> weekly -> monthly -> ROOT);
  `summarize.py` the `Summarizer` protocol and the extractive summary, `digest.py` how it reads
  its sources; `root.py` ROOT.md under its budget, `root_update.py` it updated in place as each
  checkpoint is written; `background.py` the thread that writes the summaries a model owes
  after a pass that deferred them.
- `topics.py` topic and keyword extraction; `topic_index.py` the Topics Index as data, and
  kept current without re-reading the logs (`TopicsCache`).
- `layer1.py` the always-loaded files and their budgets; `line_writers.py` who added which
  lines of its working files (an agent's are shown as its own); `tokens.py` token counts.
- `status.py` what a memory holds: status, nodes and the latest checkpoints.

May import: `disk`, `search`, `errors`, `config`, `events`, `requests`, `roots`, and itself.
Must not import `recall`, `views`, `intake` or `memory`.
"""

from .layer1 import LAYER1_FILES
from .summarize import Source
from .tokens import count_tokens, truncate_to_tokens
from .topic_index import Topic
from .topics import find_identifiers, identifiers, slug

__all__ = [
    "LAYER1_FILES",
    "Source",
    "Topic",
    "count_tokens",
    "find_identifiers",
    "identifiers",
    "slug",
    "truncate_to_tokens",
]
