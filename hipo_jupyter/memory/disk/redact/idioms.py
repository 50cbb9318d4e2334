"""Credentials as shells and config files write them, where no name says "secret" and no shape
says "token": `.netrc` lines, `.pgpass` lines, and command-line flags (`curl -u user:PASS`,
`mysql -pPASS`, `--password PASS`, `--token X`). Each rule keeps what names the credential
and replaces only the value; each pattern is anchored and possessive, so its cost is bounded
by the text's length (no start rescans a run another start scanned).
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARKER = "[REDACTED:{kind}]"
_NOT_MARKER = r"(?!\[REDACTED:)"

# `.netrc` (GNU inetutils, "The .netrc file"): `machine HOST login USER password PASS`, or
# `default ...`, on one line or several; `account` may sit between.
NETRC_RE = re.compile(
    r"(?P<keep>(?<![\w-])(?:machine[ \t\r\n]++\S++|default)"
    r"(?:[ \t\r\n]++(?:login|account)[ \t\r\n]++\S++){0,2}+[ \t\r\n]++password[ \t\r\n]++)"
    + _NOT_MARKER
    + r"(?P<secret>\S++)"
)

# `.pgpass` (postgresql.org/docs/current/libpq-pgpass.html): `hostname:port:database:username:
# password` as one whitespace-free word (its own line in the file; within a line once a title
# flattened it); the port digits or `*`, the database and user holding a letter or `*` (so an
# IPv6 address or a time is not one); no field reaches into a marker (`[REDACTED:kind]` holds a
# colon), nor does curl's user below.
PGPASS_HINT_RE = re.compile(r":(?:\d++|\*):")  # a port field: what any entry holds, found fast
PGPASS_RE = re.compile(
    r"(?<!\S)(?P<keep>[A-Za-z0-9_.*-]++:(?:\d++|\*):"
    r"(?=[^:\s\[]*[A-Za-z_*])[^:\s\[]++:(?=[^:\s\[]*[A-Za-z_*])[^:\s\[]++:)"
    + _NOT_MARKER
    + r"(?P<secret>\S++)"
)

# `curl -u user:PASS`, `curl --user user:PASS` (curl.se/docs/manpage.html#-u): at most 16
# arguments after `curl`, each taken whole.
CURL_USER_RE = re.compile(
    r"(?P<keep>curl(?<![\w-]curl)(?:[ \t]++(?!-u|--user)\S++){0,16}+[ \t]++"
    r"(?:-u[ \t]*+|--user(?:[ \t]++|=))[\"']?[^\s:\"'\[]++:)"
    + _NOT_MARKER
    + r"(?P<secret>[^\s\"']++)"
)

# `mysql -pPASS` (dev.mysql.com/doc/refman/8.4/en/connection-options.html#option_general_password):
# the password glued to `-p`, after a MySQL or MariaDB client and at most 16 arguments.
MYSQL_PASSWORD_RE = re.compile(
    r"(?P<keep>(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)"
    r"(?:[ \t]++(?!-p)\S++){0,16}+[ \t]++-p)" + _NOT_MARKER + r"(?P<secret>[^\s\"'-][^\s\"']*+)"
)

# `--password PASS`, `--password=PASS`, `--token X`, `--api-key X`, `--client-secret X`: a
# long flag whose last word names a credential; `--token-file` and `--key-file` name files.
FLAG_RE = re.compile(
    r"(?P<keep>--(?<![\w-]--)(?P<flag>(?:[a-z0-9]++-)*?"
    r"(?P<word>password|passwd|pass|token|secret|api-?key|apikey|access-key|secret-key|pat))"
    r"(?P<sep>[ \t]++|=)[\"']?)" + _NOT_MARKER + r"(?P<secret>[^\s\"'-][^\s\"']*+)",
    re.IGNORECASE,
)
_FLAG_KINDS = {"pass": "password", "passwd": "password", "password": "password", "secret": "secret"}


def _marker(kind: str) -> str:
    return MARKER.format(kind=kind)


def _placeholder(value: str) -> bool:
    """`$TOKEN`, `${PASSWORD}`, `<your-token>`, `%(pw)s`, `****`: values that hide nothing."""
    return value[0] in "$<{%*" or set(value) <= set("*xX.")


def _replacer(kind: str) -> Callable[[re.Match], str]:
    def replace(match: re.Match) -> str:
        if _placeholder(match.group("secret")):
            return match.group()
        return match.group("keep") + _marker(kind)

    return replace


def _flag(match: re.Match) -> str:
    """A flag's value; after a blank (not `=`) only one that is not a plain word (`--password
    prompt` in prose), since a password or token holds a digit, a sign or both cases."""
    value = match.group("secret")
    if _placeholder(value):
        return match.group()
    if match.group("sep") != "=" and (value.isalpha() and (value.islower() or value.isupper())):
        return match.group()
    word = match.group("word").lower()
    kind = _FLAG_KINDS.get(word, "token" if word in ("token", "pat") else "api-key")
    return match.group("keep") + _marker(kind)


def _once_each(replace: Callable[[re.Match], str]) -> Callable[[re.Match], str]:
    """`replace` asked once for each distinct match in a text: a text of one repeated line
    costs one answer, not one a match (these replacements read nothing but the match)."""
    answers: dict[str, str] = {}

    def answer(match: re.Match) -> str:
        found = match.group()
        if found not in answers:
            answers[found] = replace(match)
        return answers[found]

    return answer


def redact_netrc(text: str) -> str:
    return NETRC_RE.sub(_once_each(_replacer("password")), text)


def redact_pgpass(text: str) -> str:
    if PGPASS_HINT_RE.search(text) is None:
        return text  # the rule's pattern starts with a lookbehind: no literal to search for
    return PGPASS_RE.sub(_once_each(_replacer("password")), text)


def redact_curl_user(text: str) -> str:
    return CURL_USER_RE.sub(_once_each(_replacer("password")), text)


def redact_mysql_password(text: str) -> str:
    return MYSQL_PASSWORD_RE.sub(_once_each(_replacer("password")), text)


def redact_flags(text: str) -> str:
    return FLAG_RE.sub(_once_each(_flag), text)


# (needles, rule), as `rules._RULES` reads them; `.pgpass` has no needle, and is a cheap scan.
IDIOM_RULES: tuple[tuple[tuple[str, ...], Callable[[str], str]], ...] = (
    (("machine", "default"), redact_netrc),
    ((), redact_pgpass),
    (("curl",), redact_curl_user),
    (("mysql", "mariadb"), redact_mysql_password),
    (("--",), redact_flags),
)
