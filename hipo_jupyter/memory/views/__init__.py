"""Structured views: the checkpoints as rules, a table and a graph, and the protocol checked.

Derived from the raw logs like the index, and deletable like it. Modules:

- `catalog.py` every checkpoint parsed once; `rules.py` feedback rules with triggers;
  `frame.py` the memory as a table (pandas, `hipo export`); `graph.py` the memory as RDF and
  SPARQL over it, `graph_run.py` a query run in a child process a time limit or Ctrl-C stops;
  `structured.py` them for one root, and export.
- `check.py` the protocol rules verified from the memory folder alone (`hipo check`).
- `correcting.py` corrections (`--replaces ID`) and agents' proposed ones; a correction in
  force rebuilds the nodes over the old text as a forget does (`forget.drop_nodes`).

The user's forget itself is the room `forget/`, below this one; `check.py` verifies it.

May import: `disk`, `search`, `tree`, `forget`, `recall`, `errors`, `config`, `events`,
`requests`, `roots`, and itself. Must not import `intake` or `memory`.
"""

from .check import CheckResult, check_folder, results_text
from .correcting import accept as accept_correction
from .correcting import correct
from .correcting import proposals as proposed_corrections
from .correcting import proposals_text as proposed_corrections_text
from .frame import EXPORT_FORMATS, hits_frame, inert_cell, to_frame
from .graph import MAX_QUERY_CHARS, result_frame
from .rules import Rule, accepted_text, proposals_text, rules_index_text

__all__ = [
    "CheckResult",
    "EXPORT_FORMATS",
    "MAX_QUERY_CHARS",
    "Rule",
    "accept_correction",
    "accepted_text",
    "check_folder",
    "correct",
    "hits_frame",
    "inert_cell",
    "proposals_text",
    "proposed_corrections",
    "proposed_corrections_text",
    "result_frame",
    "results_text",
    "rules_index_text",
    "to_frame",
]
