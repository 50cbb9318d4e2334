"""A team database URL as it may be shown: the password dropped by key, or nothing shown at all.

The URL is read by the driver's own parser (libpq, through psycopg's `conninfo_to_dict`), the
one that will use it, for both forms libpq takes: `postgresql://user:pw@host/db?password=pw`
and key/value strings (`host=h password='a b' dbname=d`, `password=a\\ b`). The shown form is
the URL with each password replaced by `***`, kept only when libpq reads it back as exactly the
URL's parameters with the password as `***`: the mask removed the password and nothing else.

Fail closed: a URL libpq cannot parse (an unterminated quote, a typo elsewhere), or one whose
password the text and the parser disagree on (`user:p@ss@host`, where libpq takes the tail of
the password for the host), is shown as no part of itself (NOT_SHOWN), and the team package
refuses to connect with it, so no message of libpq or the server can ever echo its pieces.

psycopg is imported only when a URL is read (a team URL is set), so this module costs nothing
to the no-team path; without the team extra (`hipo status`, issue 26) only a URL of the plain
forms, where no quote, escape or stray `@` can hide where the password ends, is shown.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import unquote

NOT_SHOWN = "(not shown: the team URL does not parse)"
NOT_READ = "(not shown: only the team extra can read this URL: pip install 'hipo-jupyter[team]')"
UNCLEAR = "(not shown: the team URL's password cannot be told apart)"
# Why such a URL is not used (libpq would take part of the password for another parameter).
UNCLEAR_WHY = "its password cannot be told apart from the rest (percent-encode @ and / in it)"
MASK = "***"

# libpq's own test for a URL (case-sensitive prefixes, `fe-connect.c: uri_prefix_length`).
_URI_PREFIX = re.compile(r"postgres(?:ql)?://")
# Greedy to the last `@`: a password holding `@` (unescaped) is masked whole, never in part.
URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)(\S*)(@)")
QUERY_PASSWORD = re.compile(r"([?&]password=)([^&#\s]*)")
# A key/value `password`: a quoted value (to its closing quote, or to the end when it has none)
# or a bare one (to the next unescaped space); libpq's grammar (`conninfo_parse`).
KEY_PASSWORD = re.compile(r"((?:^|(?<=\s))password\s*=\s*)('(?:[^'\\]|\\.)*'?|(?:[^\s\\]|\\.)+)")
# A URL's password as its author may have meant it, spaces included: to the first `@` and to
# the last (what no message may contain, even of a URL that does not parse).
_LOOSE_USERINFO = (re.compile(r"://[^:/@\s]*:([^@]*)@"), re.compile(r"://[^:/@\s]*:(.*)@"))
# The plain forms shown without psycopg: no space, quote or backslash anywhere, and only keys
# of libpq's commonest parameters (a misspelt `passwrd=` would be shown whole).
_PLAIN_URI = re.compile(r"postgres(?:ql)?://[^\s'\"\\?]*(?:\?[^\s'\"\\]*)?")
_PLAIN_KEYS = "host|hostaddr|port|dbname|user|password|sslmode|connect_timeout|application_name"
_PLAIN_PAIR = re.compile(rf"(?:{_PLAIN_KEYS})=[^\s'\"\\&=]*")


@dataclass(frozen=True)
class Reading:
    """What a URL says: its parameters as libpq reads them (None when it cannot be read), the
    form it may be shown in, and why not when it may not."""

    parts: dict[str, str] | None
    shown: str
    problem: str = ""  # libpq's own reason, or UNCLEAR: why the URL is not used

    @property
    def readable(self) -> bool:
        return self.parts is not None


def _masked_text(url: str) -> str:
    """`url` with each password the text shows (by form) replaced by MASK."""
    if _URI_PREFIX.match(url):
        return QUERY_PASSWORD.sub(rf"\1{MASK}", URL_PASSWORD.sub(rf"\1{MASK}\3", url))
    return KEY_PASSWORD.sub(rf"\1{MASK}", url)


def _libpq(url: str) -> dict[str, str] | str | None:
    """The URL's parameters by libpq; its error text when it does not parse; None when the
    team extra is not installed."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return None
    try:
        return {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except (psycopg.Error, ValueError, UnicodeError) as error:  # a NUL, a lone surrogate
        return " ".join(str(error).split()) or "it does not parse"


def _masked_parts(parts: dict[str, str]) -> dict[str, str]:
    return {**parts, "password": MASK} if parts.get("password") else parts


@functools.lru_cache(maxsize=64)  # each message and each use reads the same few URLs
def read_url(url: str) -> Reading:
    """The URL read by libpq and checked against its own text (module docstring)."""
    url = url.strip()
    shown = _masked_text(url)
    parts = _libpq(url)
    if parts is None:  # no psycopg: the plain forms only
        return Reading(None, shown if _plain(url) else NOT_READ, "the team extra is missing")
    if isinstance(parts, str):
        return Reading(None, NOT_SHOWN, parts)
    if _libpq(shown) != _masked_parts(parts):  # the text hid the password somewhere else
        return Reading(None, UNCLEAR, UNCLEAR_WHY)
    return Reading(parts, shown)


def _plain(url: str) -> bool:
    """Whether `url` is in a form whose password a regular expression finds for certain."""
    if _URI_PREFIX.match(url):
        if not _PLAIN_URI.fullmatch(url):
            return False
        authority = re.split(r"[/?#]", url.split("://", 1)[1], maxsplit=1)[0]
        query = url.partition("?")[2]
        pairs_known = not query or all(_PLAIN_PAIR.fullmatch(p) for p in query.split("&"))
        return url.count("@") == authority.count("@") <= 1 and "#" not in url and pairs_known
    return all(_PLAIN_PAIR.fullmatch(pair) for pair in url.split())


def mask_url(url: str) -> str:
    """`url` as it may be shown: its password as `***` (user, host, port and database kept),
    or NOT_SHOWN / UNCLEAR when it cannot be read for certain."""
    return read_url(url).shown


def secrets_of(url: str) -> list[str]:
    """Every form of password `url` carries, parsed or as written (raw, unquoted, unescaped,
    percent-decoded), longest first: what no message may contain."""
    url = url.strip()
    found: list[str] = []
    if _URI_PREFIX.match(url):
        found += [m.group(1) for p in _LOOSE_USERINFO if (m := p.search(url))]  # spaces too
        for match in (*URL_PASSWORD.finditer(url), *QUERY_PASSWORD.finditer(url)):
            found += [match.group(2), unquote(match.group(2))]
    else:
        for match in KEY_PASSWORD.finditer(url):
            raw = match.group(2)
            found += [raw, re.sub(r"\\(.)", r"\1", raw.strip("'"))]
    parts = _libpq(url)
    if isinstance(parts, dict) and parts.get("password"):
        found.append(parts["password"])
    return sorted({s for s in found if s and s != MASK}, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """`text` on one line, each password of `url` in it as `***`. A short password is masked
    where a message could hold it as such, not wherever its letters occur: one of 4 or 5
    characters where it stands alone (not inside a longer word), one of 1 to 3 where it stands
    quoted, as libpq and the server quote values; so the password `a` does not turn every `a`
    of the message into `***`."""
    line = " ".join(str(text).split())
    for secret in secrets_of(url):
        if len(secret) >= 6:
            line = line.replace(secret, MASK)
        elif len(secret) >= 4:
            line = re.sub(rf"(?<!\w){re.escape(secret)}(?!\w)", MASK, line)
        else:
            line = re.sub(rf"(['\"]){re.escape(secret)}\1", rf"\1{MASK}\1", line)
    return line
