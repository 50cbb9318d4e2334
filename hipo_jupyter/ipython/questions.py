"""`%recall when is the launch?`: a question mark ends the query, not a request for help.

IPython reads a line ending in `?` as "show help for the name before it" and never runs the
magic ("Object `launch` not found."). Recall queries are questions, so while the extension is
loaded a cleanup input transformer (these run before IPython's help syntax is looked for) drops
the trailing question marks of a `%recall` line, plain or assigned (`hits = %recall ...?`). The
search ignores punctuation anyway. `%recall?` alone still shows the magic's help.
"""

from __future__ import annotations

import re

RECALL_QUESTION = re.compile(r"^(\s*(?:[\w.]+\s*=\s*)?%recall\s+\S.*?)\s*\?+\s*$")


def recall_questions(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: a cell's lines, with `%recall ...?` lines unquestioned."""
    return [_unquestioned(line) for line in lines]


def _unquestioned(line: str) -> str:
    match = RECALL_QUESTION.match(line)
    if match is None:
        return line
    return match.group(1) + ("\n" if line.endswith("\n") else "")
