"""Reaching the team database: URLs shown without their password, failures in one line with
their real cause, and psycopg_pool's own warnings kept off stderr, cells and server logs.

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
from psycopg.conninfo import conninfo_to_dict

from hipo_jupyter.team_url import KEY_PASSWORD, URL_PASSWORD
from hipo_jupyter.team_url import mask_url as _mask_text

CONNECT_TIMEOUT_S = 5  # a server that does not answer is reported after this, not waited for

# psycopg_pool logs "error connecting in 'pool-1': ..." with the conninfo, password included.
for _name in ("psycopg.pool", "psycopg_pool"):
    _logger = logging.getLogger(_name)
    _logger.addHandler(logging.NullHandler())
    _logger.propagate = False
    _logger.setLevel(logging.CRITICAL + 1)


def secrets_of(url: str) -> list[str]:
    """The password(s) a URL carries, parsed or not: what no message may ever contain."""
    found = [m.group(2) for m in URL_PASSWORD.finditer(url)]
    found += [m.group(2).strip("'") for m in KEY_PASSWORD.finditer(url)]
    try:
        password = conninfo_to_dict(url).get("password")
    except psycopg.Error:
        password = None
    if password:
        found.append(str(password))
    return sorted({s for s in found if s}, key=len, reverse=True)


def mask_url(url: str) -> str:
    """`url` with its password shown as `***` (user, host, port and database kept)."""
    masked = _mask_text(url)
    for secret in secrets_of(url):
        masked = masked.replace(secret, "***")
    return masked


def scrub(text: str, url: str) -> str:
    """`text` (an error message) on one line, without any password `url` carries."""
    line = " ".join(str(text).split())
    for secret in secrets_of(url):
        line = line.replace(secret, "***")
    return line[:300]


def describe(url: str) -> str:
    """`host:port/dbname` of a URL, for messages: never the user's password."""
    if any("@" in m.group(2) for m in URL_PASSWORD.finditer(url)):
        return mask_url(url)  # `user:pa@ss@host`: libpq would take part of the password as host
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return mask_url(url)
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{host}{port}/{parts.get('dbname') or ''}"


def _address(url: str) -> str:
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
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
        return f"no such host in {mask_url(url)}"
    if "timeout" in lowered or "timed out" in lowered:
        return f"no answer within {CONNECT_TIMEOUT_S} s from {_address(url)}"
    if (
        isinstance(error, psycopg.ProgrammingError)
        or "connection info" in lowered
        or ("connection option" in lowered)
    ):
        reason = scrub(text.removeprefix("connection is bad: "), url)
        return f"its URL does not parse ({reason})"
    return scrub(text, url)


def probe(url: str) -> None:
    """Connect once, directly, and close: raises psycopg.Error with the server's own reason."""
    conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S)
    conn.close()
