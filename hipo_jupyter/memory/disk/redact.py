"""Redaction: secrets never reach the disk.

Everything the engine writes (checkpoints, summaries, offloaded outputs) passes through `redact`
first. A secret is replaced by a marker naming its kind, `[REDACTED:anthropic-api-key]`, so a
reader still sees that a key was there and which one, and the memory stays safe to share,
commit or index.

Two families of rules, applied in this order:
- Token shapes that identify themselves: Anthropic, OpenAI, GitHub, Slack and Google keys, AWS
  access key ids, JWTs, private key blocks, bearer tokens in Authorization headers and passwords
  in URLs (`scheme://user:PASSWORD@host`, user and host kept).
- Values named as secrets: `NAME=value` and `NAME: value` (`.env` lines, YAML, JSON, keyword
  arguments) where NAME contains SECRET, TOKEN, PASSWORD, PASSWD, API_KEY or PRIVATE_KEY, and
  `aws_secret_access_key = ...`. The name is kept, the value redacted.

Kinds: anthropic-api-key, openai-api-key, aws-access-key-id, aws-secret-access-key, github-token,
slack-token, slack-webhook, google-api-key, private-key, url-password, bearer-token, basic-auth,
jwt; for named values password, private-key, api-key, secret or token (from the name).

False positives are kept rare on purpose, because memory full of markers is useless: prose,
dates, checkpoint ids, git hashes and paths are left alone; `max_tokens=1024` is a count, not a
token; `token = tokenizer.encode(text)` and `api_key=os.environ["KEY"]` are code, not values;
`Password: use the vault` is a sentence. Redaction is idempotent: markers are never matched
again, and `redact` repeats its pass until nothing changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

MARKER = "[REDACTED:{kind}]"
REDACTED_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

_NOT_MARKER = r"(?!\[REDACTED:)"
_MAX_PASSES = 4


def _marker(kind: str) -> str:
    return MARKER.format(kind=kind)


def _mixed(token: str) -> bool:
    """Random keys mix digits and letters; words and slugs (`sk-learn-tutorial`) do not."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


# -- token shapes -------------------------------------------------------------------------------

_KEY_BEGIN_RE = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END_RE = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
_ANTHROPIC_RE = re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}")
_OPENAI_RE = re.compile(r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")
_AWS_KEY_ID_RE = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_RE = re.compile(
    r"(?P<keep>(?<![\w-])[\"']?(?:aws_?)?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?)"
    + _NOT_MARKER
    + r"(?P<secret>[A-Za-z0-9/+=]{30,})",
    re.IGNORECASE,
)
_GITHUB_RE = re.compile(
    r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])"
)
_SLACK_RE = re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}")
_SLACK_WEBHOOK_RE = re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}")
_GOOGLE_RE = re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")
_JWT_RE = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+")
_URL_PASSWORD_RE = re.compile(
    r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]]*:)"
    + _NOT_MARKER
    + r"(?P<secret>[^\s/?#]+)(?=@[^\s/?#@])"
)
_AUTHORIZATION_RE = re.compile(
    r"(?P<keep>authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*(?P<scheme>bearer|token|basic)[ \t]+)"
    + _NOT_MARKER
    + r"(?P<secret>[A-Za-z0-9._~+/=-]+)",
    re.IGNORECASE,
)
_BEARER_RE = re.compile(
    r"(?P<keep>\bBearer[ \t]+)" + _NOT_MARKER + r"(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"
)


def _whole(kind: str, check: Callable[[str], bool] | None = None) -> Callable[[re.Match], str]:
    def replace(match: re.Match) -> str:
        if check is not None and not check(match.group()):
            return match.group()
        return _marker(kind)

    return replace


def _after_keep(kind: str, check: Callable[[str], bool] | None = None) -> Callable[[re.Match], str]:
    def replace(match: re.Match) -> str:
        if check is not None and not check(match.group("secret")):
            return match.group()
        return match.group("keep") + _marker(kind)

    return replace


def _authorization(match: re.Match) -> str:
    kind = "basic-auth" if match.group("scheme").lower() == "basic" else "bearer-token"
    return match.group("keep") + _marker(kind)


def _redact_private_keys(text: str) -> str:
    """Each `BEGIN ... PRIVATE KEY` block up to its END. A block with no END before the next
    BEGIN (a truncated paste) ends at the next blank line: the key is hidden, the prose after
    it is kept. One forward scan, so many BEGIN lines cost linear time."""
    begins = list(_KEY_BEGIN_RE.finditer(text))
    ends = [m.end() for m in _KEY_END_RE.finditer(text)]
    pieces: list[str] = []
    kept_until = 0
    end_index = 0
    for number, begin in enumerate(begins):
        if begin.start() < kept_until:
            continue  # inside a block already redacted
        next_begin = begins[number + 1].start() if number + 1 < len(begins) else len(text)
        while end_index < len(ends) and ends[end_index] <= begin.end():
            end_index += 1
        if end_index < len(ends) and ends[end_index] <= next_begin:
            stop = ends[end_index]
        else:
            blank = _BLANK_LINE_RE.search(text, begin.end(), next_begin)
            stop = blank.start() if blank else next_begin
        pieces.append(text[kept_until : begin.start()])
        pieces.append(_marker("private-key"))
        kept_until = stop
    if not pieces:
        return text
    pieces.append(text[kept_until:])
    return "".join(pieces)


# -- named values ---------------------------------------------------------------------------------

_SECRET_NEEDLES = ("secret", "token", "passw", "apikey", "api_key", "api-key", "private")
_SECRET_WORD = r"(?:secret|token|password|passwd|api[_-]?key|private[_-]?key)(?![a-z])"
# A whole run of name characters that contains a secret word. The lookahead finds the word, the
# run is then matched once: linear time even on `token_token_token...` without a separator.
_NAME = r"(?=[A-Za-z0-9_.-]*?" + _SECRET_WORD + r")[A-Za-z0-9_.-]+"
_ENV_LINE_RE = re.compile(  # a whole line: `NAME=rest of line`, or `NAME: one-token`
    r"^(?P<keep>[ \t]*(?:[-*>][ \t]+)?(?:export[ \t]+)?(?P<name>(?=[A-Za-z_])" + _NAME + r")"
    r"[ \t]*(?:=(?!=)[ \t]*|:(?!=)[ \t]*(?=\S+[ \t]*$)))"
    r"(?P<secret>[^\s\"'\[][^\n]*?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_NAMED_RE = re.compile(
    r"(?P<keep>(?P<lead>(?<![\w.-])[\"']?)(?P<name>" + _NAME + r")[\"']?"
    r"[ \t]*(?P<sep>:(?!=)|=(?!=))[ \t]*)"
    r"(?:(?P<quote>[\"'])" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=quote)"
    r"|" + _NOT_MARKER + r"(?P<bare>[^\s\"'`,;&()\[\]{}<>]+))",
    re.IGNORECASE,
)
_CODE_VALUE_RE = re.compile(r"[A-Za-z_][\w.]*[ \t]*[(\[]")
_PLACEHOLDERS = frozenset(
    ("none", "null", "nil", "true", "false", "str", "bytes", "int", "string", "secretstr")
)


def _kind_of(name: str) -> str:
    name = name.lower()
    if "password" in name or "passwd" in name:
        return "password"
    if re.search(r"private[_-]?key", name):
        return "private-key"
    if re.search(r"api[_-]?key", name):
        return "api-key"
    if "secret" in name:
        return "secret"
    return "token"


def _is_placeholder(value: str, kind: str) -> bool:
    """Values that hide nothing: types, null-ish words, masks, `${VAR}` and `<your-key>`."""
    stripped = value.strip()
    return (
        not stripped
        or stripped.lower() in _PLACEHOLDERS
        or stripped[0] in "$<{%"
        or set(stripped) <= set("*xX.")
        or (kind != "password" and stripped.isdigit())  # token_budget=3000 is a count
        or _CODE_VALUE_RE.match(stripped) is not None  # tokenizer.encode(text), os.environ[...]
    )


def _env_line(match: re.Match) -> str:
    kind = _kind_of(match.group("name"))
    if _is_placeholder(match.group("secret"), kind):
        return match.group()
    return match.group("keep") + _marker(kind)


def _named(match: re.Match) -> str:
    kind = _kind_of(match.group("name"))
    value = match.group("quoted")
    if value is not None:
        if _is_placeholder(value, kind):
            return match.group()
        quote = match.group("quote")
        return match.group("keep") + quote + _marker(kind) + quote
    value = match.group("bare")
    text, end = match.string, match.end()
    if match.group("sep") == ":":
        return match.group()  # `the token: expired` is prose; whole `NAME: value` lines are above
    if _is_placeholder(value, kind) or (end < len(text) and text[end] in "(["):
        return match.group()  # code: a call or an index
    return match.group("keep") + _marker(kind)


# (needles, rule): a rule runs only when one of its lower-case needles occurs in the lower-cased
# text, so ordinary text costs a few substring scans instead of 15 regex passes.
_RULES: tuple[tuple[tuple[str, ...], Callable[[str], str]], ...] = (
    (("private key",), _redact_private_keys),
    (("eyj",), partial(_JWT_RE.sub, _whole("jwt"))),
    (("sk-ant-",), partial(_ANTHROPIC_RE.sub, _whole("anthropic-api-key"))),
    (("sk-",), partial(_OPENAI_RE.sub, _whole("openai-api-key", _mixed))),
    (("gh", "github_pat_"), partial(_GITHUB_RE.sub, _whole("github-token"))),
    (("hooks.slack.com",), partial(_SLACK_WEBHOOK_RE.sub, _whole("slack-webhook"))),
    (("xox",), partial(_SLACK_RE.sub, _whole("slack-token", _mixed))),
    (("aiza",), partial(_GOOGLE_RE.sub, _whole("google-api-key"))),
    (("akia", "asia"), partial(_AWS_KEY_ID_RE.sub, _whole("aws-access-key-id"))),
    (("access",), partial(_AWS_SECRET_RE.sub, _after_keep("aws-secret-access-key"))),
    (("authorization",), partial(_AUTHORIZATION_RE.sub, _authorization)),
    (("bearer",), partial(_BEARER_RE.sub, _after_keep("bearer-token", _mixed))),
    (("://",), partial(_URL_PASSWORD_RE.sub, _after_keep("url-password"))),
    (_SECRET_NEEDLES, partial(_ENV_LINE_RE.sub, _env_line)),
    (_SECRET_NEEDLES, partial(_NAMED_RE.sub, _named)),
)


# Every rule's needles in one pattern: most text holds none, and one scan in C says so (a team
# sync redacts four fields of each of a million checkpoints; the loop below, a generator per
# rule, was most of its client time).
_ANY_NEEDLE_RE = re.compile("|".join(re.escape(n) for needles, _ in _RULES for n in needles))


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`. Idempotent."""
    if not _ANY_NEEDLE_RE.search(text.lower()):
        return text  # no rule would run
    for _ in range(_MAX_PASSES):
        before = text
        lowered = text.lower()
        for needles, rule in _RULES:
            if any(needle in lowered for needle in needles):
                replaced = rule(text)
                if replaced != text:
                    text, lowered = replaced, replaced.lower()
        if text == before:
            break
    return text
