"""Structured views: the checkpoints as rules, a table and a graph, and the protocol checked.

Derived from the raw logs like the index, and deletable like it. Modules:

- `catalog.py` every checkpoint parsed once; `rules.py` feedback rules with triggers;
  `frame.py` the memory as a table (pandas, `hipo export`); `graph.py` the memory as RDF and
  SPARQL over it, `graph_run.py` a query run in a child process a time limit or Ctrl-C stops;
  `structured.py` them for one root, and export.
- `check.py` the protocol rules verified from the memory folder alone (`hipo check`).

May import: `disk`, `search`, `tree`, `recall`, `errors`, `config`, `events`, `requests`,
`roots`, and itself. Must not import `intake` or `memory`.
"""

from .check import CheckResult, check_folder, results_text
from .frame import EXPORT_FORMATS, hits_frame, inert_cell, to_frame
from .graph import MAX_QUERY_CHARS, result_frame
from .rules import Rule, accepted_text, proposals_text, rules_index_text

__all__ = [
    "CheckResult",
    "EXPORT_FORMATS",
    "MAX_QUERY_CHARS",
    "Rule",
    "accepted_text",
    "check_folder",
    "hits_frame",
    "inert_cell",
    "proposals_text",
    "result_frame",
    "results_text",
    "rules_index_text",
    "to_frame",
]
