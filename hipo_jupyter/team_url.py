"""A team database URL as it may be shown: the password masked. Pure text work, no psycopg, so
`hipo status` shows the team URL without the team extra installed (issue 26)."""

from __future__ import annotations

import re

# Greedy to the last `@`: a password holding `@` (unescaped) is masked whole, never in part.
URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)(\S*)(@)")
KEY_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def mask_url(url: str) -> str:
    """`url` with its password as `***` (`user:***@host`, `password=***`), the rest kept."""
    masked = URL_PASSWORD.sub(r"\1***\3", url.strip())
    return KEY_PASSWORD.sub(r"\1***", masked)
