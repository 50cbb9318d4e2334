"""Reaching the team database: failures in one line with their real cause and never a piece of
the password, and psycopg_pool's own warnings kept off stderr, cells and server logs.

Messages name the database as `host:port/dbname` (`describe`), read from the URL by libpq, and
never hold the URL itself. A URL libpq cannot parse is not used at all (`url.read_url`);
its parse error keeps libpq's words and drops every piece of the URL they quote
(`libpq_reason`). Whatever else a driver or server says goes through `scrub`.

psycopg_pool retries a failed connection in the background and logs each attempt with the raw
conninfo (password included), then the caller sees only "no connection within 5s". So the
first connection of a process is made directly (its error is the real one: a wrong password, a
missing database, a closed port, a silent server) and only then is the pool opened; the pool's
logger is silenced for good.
"""

from __future__ import annotations

import logging
import re

import psycopg

from .url import read_url, scrub

__all__ = ["CONNECT_TIMEOUT_S", "cause", "describe", "libpq_reason", "probe", "scrub"]

CONNECT_TIMEOUT_S = 5  # a server that does not answer is reported after this, not waited for

# psycopg_pool logs "error connecting in 'pool-1': ..." with the conninfo, password included.
for _name in ("psycopg.pool", "psycopg_pool"):
    _logger = logging.getLogger(_name)
    _logger.addHandler(logging.NullHandler())
    _logger.propagate = False
    _logger.setLevel(logging.CRITICAL + 1)

# The names of libpq's connection parameters: the one kind of quoted word its parse errors may
# show (`invalid integer value "..." for connection option "port"`). Every other quoted word
# is a piece of the URL, perhaps of its password (`missing "=" after "SECRET"`).
_KEYWORDS = frozenset(
    option.keyword.decode() for option in psycopg.pq.Conninfo.get_defaults() if option.keyword
) - {"password"}
_QUOTED = re.compile(r'"([^"]*)"')


def libpq_reason(text: str) -> str:
    """libpq's words for a URL it cannot use, on one line, each quoted piece of the URL as
    `"..."` (a parameter's name kept): fail closed, whatever part of the URL it quotes."""
    line = " ".join(str(text).split()).removeprefix("connection is bad: ")
    return _QUOTED.sub(lambda m: m.group(0) if m.group(1) in _KEYWORDS else '"..."', line)[:300]


def describe(url: str) -> str:
    """`host:port/dbname` of a URL, for messages: never the user's password, and nothing of a
    URL that cannot be read for certain (`url.read_url`)."""
    parts = read_url(url).parts
    if parts is None:
        return "(URL not shown)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{host}{port}/{parts.get('dbname') or ''}"


def _address(url: str) -> str:
    parts = read_url(url).parts
    if parts is None:
        return "the team database"
    return f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}"


def cause(error: BaseException, url: str) -> str:
    """The real reason a connection failed, in the words a user acts on (never a secret)."""
    text = " ".join(str(error).split())
    lowered = text.casefold()
    if match := re.search(r'password authentication failed for user "?([^"\s]+)"?', text):
        return f"password authentication failed for user {match.group(1)}"
    if match := re.search(r'database "?([^"\s]+)"? does not exist', text):
        return f"database {match.group(1)} does not exist"
    if "connection refused" in lowered:
        return f"no server at {_address(url)} (connection refused)"
    if "resolve host" in lowered or "could not translate host" in lowered:
        return f"no such host at {_address(url)}"
    if "timeout" in lowered or "timed out" in lowered:
        return f"no answer within {CONNECT_TIMEOUT_S} s from {_address(url)}"
    if (
        # libpq's own (no SQLSTATE); a server's refusal (a row-level security policy, a
        # missing grant) is a ProgrammingError too, and is said as the server says it
        (isinstance(error, psycopg.ProgrammingError) and getattr(error, "sqlstate", None) is None)
        or "connection info" in lowered
        or ("connection option" in lowered)
    ):
        return f"its URL does not parse ({scrub(libpq_reason(text), url)})"
    return scrub(text, url)[:300]


def probe(url: str) -> None:
    """Connect once, directly, and close: raises psycopg.Error with the server's own reason."""
    conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S)
    conn.close()
