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

False positives are kept rare on purpose, because memory full of markers is useless: prose,
dates, checkpoint ids, git hashes and paths are left alone; `max_tokens=1024` is a count, not a
token; `token = tokenizer.encode(text)` and `api_key=os.environ["KEY"]` are code, not values;
`Password: use the vault` is a sentence. Redaction is idempotent: markers are never matched
again, and `redact` repeats its pass until nothing changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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

_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*?(?=\n[ \t]*\n)|.*\Z)",
    re.DOTALL,
)
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


# -- named values ---------------------------------------------------------------------------------

_SECRET_NEEDLES = ("secret", "token", "passw", "apikey", "api_key", "api-key", "private")
_SECRET_WORD = r"(?:secret|token|password|passwd|api[_-]?key|private[_-]?key)(?![a-z])"
_NAME = r"[A-Za-z0-9_.-]*?" + _SECRET_WORD + r"[A-Za-z0-9_.-]*"
_ENV_LINE_RE = re.compile(
    r"^(?P<keep>[ \t]*(?:export[ \t]+)?(?P<name>(?=[A-Za-z_])" + _NAME + r")[ \t]*=(?!=)[ \t]*)"
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
_LINE_LEAD_RE = re.compile(r"[ \t]*(?:[-*>][ \t]+)?(?:export[ \t]+)?\Z")


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
    if _is_placeholder(value, kind) or (end < len(text) and text[end] in "([.:"):
        return match.group()  # code: a call, an index or an attribute chain
    if match.group("sep") == ":":
        # `NAME: value` is a .env/YAML line only when it is the whole line; else it is prose
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", end)
        rest = text[end : len(text) if line_end < 0 else line_end]
        lead = text[line_start : match.start()]
        if rest.strip() or not _LINE_LEAD_RE.match(lead):
            return match.group()
    return match.group("keep") + _marker(kind)


# (needles, pattern, replacement): a rule runs only when one of its lower-case needles occurs in
# the lower-cased text, so ordinary text costs a few substring scans instead of 15 regex passes.
_RULES: tuple[tuple[tuple[str, ...], re.Pattern, Callable[[re.Match], str]], ...] = (
    (("private key",), _PRIVATE_KEY_RE, _whole("private-key")),
    (("eyj",), _JWT_RE, _whole("jwt")),
    (("sk-ant-",), _ANTHROPIC_RE, _whole("anthropic-api-key")),
    (("sk-",), _OPENAI_RE, _whole("openai-api-key", _mixed)),
    (("gh", "github_pat_"), _GITHUB_RE, _whole("github-token")),
    (("hooks.slack.com",), _SLACK_WEBHOOK_RE, _whole("slack-webhook")),
    (("xox",), _SLACK_RE, _whole("slack-token", _mixed)),
    (("aiza",), _GOOGLE_RE, _whole("google-api-key")),
    (("akia", "asia"), _AWS_KEY_ID_RE, _whole("aws-access-key-id")),
    (("access",), _AWS_SECRET_RE, _after_keep("aws-secret-access-key")),
    (("authorization",), _AUTHORIZATION_RE, _authorization),
    (("bearer",), _BEARER_RE, _after_keep("bearer-token", _mixed)),
    (("://",), _URL_PASSWORD_RE, _after_keep("url-password")),
    (_SECRET_NEEDLES, _ENV_LINE_RE, _env_line),
    (_SECRET_NEEDLES, _NAMED_RE, _named),
)


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`. Idempotent."""
    for _ in range(_MAX_PASSES):
        before = text
        lowered = text.lower()
        for needles, pattern, replace in _RULES:
            if any(needle in lowered for needle in needles):
                replaced = pattern.sub(replace, text)
                if replaced != text:
                    text, lowered = replaced, replaced.lower()
        if text == before:
            break
    return text
