"""The text index and the vectors: documents in, ranked search hits out.

The Markdown files are the truth; everything here is derived and rebuilds from them. Modules:

- `contract.py` what every backend keeps (`Document`, `SearchHit`, `SearchIndex`), the team
  database included; `indexing.py` the index kept in step with the files (`IndexKeeper`: per
  file, by hash) and the one place that picks a backend (`open_index`).
- `fts5.py` the default backend (SQLite FTS5); `whoosh_backend.py` the second one (extra
  `[whoosh]`); neither imports the other. `query.py` the query built from user text, in pure
  functions; `migrations.py` the index schema, named migrations appended at the end.
- vectors (extra `[semantic]`): `semantic.py` the vector side of one memory (`SemanticIndex`),
  `embed.py` the sentence model, `embed_settings.py` a model of the user's own, `vectors.py` the
  vectors beside the text index, `vector_matrix.py` them searched as a numpy matrix, `fusion.py`
  reciprocal rank fusion of ranked lists.

May import: `disk`, `errors`, `config`, `events`, `requests`, `roots`, and itself. Must not
import `tree`, `recall`, `views`, `intake` or `memory`: search knows documents, not what a hit
means to recall. This face loads neither Whoosh nor numpy; their modules load on first use.
"""

from .contract import Document, SearchHit
from .query import plain_snippet, query_terms

__all__ = ["Document", "SearchHit", "plain_snippet", "query_terms"]
