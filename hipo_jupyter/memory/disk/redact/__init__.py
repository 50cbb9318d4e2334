"""Redaction: secrets never reach the disk (`rules.py`: `redact` and its rules), and the
credential formats it knows by their shape, one table (`credentials.py`: `TOKEN_FORMATS`).

May import: the standard library only, and itself.
"""

from .credentials import TOKEN_FORMATS, TokenFormat
from .rules import MARKER, REDACTED_MARKER_RE, redact

__all__ = ["MARKER", "REDACTED_MARKER_RE", "TOKEN_FORMATS", "TokenFormat", "redact"]
