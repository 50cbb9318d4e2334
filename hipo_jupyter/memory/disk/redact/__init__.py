"""Redaction: secrets never reach the disk (`rules.py`: `redact` and its rules, `redact_counted`
with the count per kind a writer reports), the credential formats it knows by their shape, one
table (`credentials.py`: `TOKEN_FORMATS`), and the shell and config-file idioms no name or
shape announces (`idioms.py`: `.netrc`, `.pgpass`, command-line flags).

May import: the standard library only, and itself.
"""

from .credentials import TOKEN_FORMATS, TokenFormat
from .rules import MARKER, REDACTED_MARKER_RE, Redaction, redact, redact_counted

__all__ = [
    "MARKER",
    "REDACTED_MARKER_RE",
    "TOKEN_FORMATS",
    "Redaction",
    "TokenFormat",
    "redact",
    "redact_counted",
]
