"""Redaction: secrets never reach the disk.

Everything the engine writes (checkpoints, summaries, offloaded outputs) passes through `redact`
first. A secret is replaced by a marker naming its kind, `[REDACTED:anthropic-api-key]`, so a
reader still sees that a key was there and which one, and the memory stays safe to share,
commit or index.

Three families of rules, applied in this order:
- Token shapes that identify themselves, one table (`credentials.TOKEN_FORMATS`: kind, pattern,
  and where the issuer documents the format): model providers (Anthropic, OpenAI, OpenRouter,
  xAI, Groq, Replicate, Perplexity, LangSmith, Pinecone, Tavily, Hugging Face), code and package
  hosts (GitHub, GitLab, PyPI, npm), payments and messaging (Stripe, SendGrid, Mailgun, Twilio,
  Slack, Discord, Telegram, Shopify), clouds (AWS, Google API keys and OAuth tokens, Azure
  storage keys, SAS signatures and client secrets, Databricks, DigitalOcean, Alibaba), secrets
  and ops tools (HashiCorp Vault, Doppler, 1Password, age, Sentry tokens and DSN keys, Grafana,
  Supabase, Notion, Linear, Postman, Figma, Atlassian), JWTs.
  Beside the table, what a row cannot say: private key blocks (a service account's JSON
  `private_key` included), bearer and basic credentials in Authorization headers, passwords in
  URLs (`scheme://user:PASSWORD@host`, user and host kept), `aws_secret_access_key = ...`, and
  the shell and config-file idioms of `idioms.py` (`.netrc`, `.pgpass`, `curl -u user:PASS`,
  `mysql -pPASS`, `--password PASS`, `--token X`).
- Values named as secrets: `NAME=value` and `NAME: value` (`.env` lines, `%env`, YAML, JSON,
  dict literals, keyword arguments, `os.environ["NAME"] = ...`, `config["name"] = ...`,
  `cfg.name = ...`) where NAME contains SECRET, TOKEN, PASSWORD, PASSWD, API_KEY or
  PRIVATE_KEY. The name is kept, the value redacted.
- Random values after a key word: `--token X`, `apiKey: X`, `-H "X-Auth: X"`, `my key is X`,
  where the word holds key, token, secret, password, pwd, auth, credential or signature and X
  looks generated (`_looks_random`: 16 letters and digits or more, 3.5 bits of Shannon entropy
  per character or more, and switching often between letters, digits and case). Hex after
  `key` is a cache key or a hash (`cache_key = <sha1>`), unless the key is the credential's own
  name: a bare `key` (Kaggle's `{"username": ..., "key": <32 hex>}`, `wandb.login(key=...)`) or
  `api_key` and the like (`_hex_is_secret`).

Kinds: the table's, then private-key, bearer-token, basic-auth, url-password,
aws-secret-access-key; for named values password, private-key, api-key, secret or token (from
the name); after a key word key, token, secret, password or credential.

False positives are kept rare on purpose, because memory full of markers is useless: prose,
dates, checkpoint ids, git hashes and paths are left alone; `max_tokens=1024` is a count, not a
token; `token = tokenizer.encode(text)` and `api_key=os.environ["KEY"]` are code, not values;
`Password: use the vault` is a sentence. Redaction is idempotent: markers are never matched
again, and `redact` repeats its pass until nothing changes. `redact_counted` also says how many
secrets of each kind it replaced, for the writer's one-line report.

Every rule's cost is bounded by the text's length (issue 50: a MB of one repeated prefix took
434 s): no start rescans a run another start scanned. Shapes of unbounded length begin with a
lookbehind (one start per run of word characters), quantifiers are possessive or bounded, the
named-value rule tries each run of name characters once, the key-word rule's value is one
possessive run judged at most twice, and a judgement reads at most `MAX_JUDGED_CHARS`.
`benchmarks/redact_speed.py --adversarial` times 1 and 16 MB of such inputs.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from .credentials import TOKEN_FORMATS, TokenFormat, mixed_alnum
from .idioms import IDIOM_RULES, PGPASS_HINT_RE

MARKER = "[REDACTED:{kind}]"
REDACTED_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

_NOT_MARKER = r"(?!\[REDACTED:)"
# Letters as a case-insensitive pattern sees them, one character for one, so that offsets in
# the result are offsets in the text (`str.lower` can lengthen a string: "İ" becomes two
# characters): ASCII, and the four others `re.IGNORECASE` matches to an ASCII letter.
_UNICODE_ASCII_FOLDS = {"İ": "i", "ı": "i", "ſ": "s", "\u212a": "k"}
_ASCII_LOWER = str.maketrans(
    {
        **dict(zip(string.ascii_uppercase, string.ascii_lowercase, strict=True)),
        **_UNICODE_ASCII_FOLDS,
    }
)
_MAX_PASSES = 4


def _fold(text: str) -> str:
    """`text` with ASCII letters lower-cased (and the four others above made ASCII), each
    character for one. `str.lower` does that in C, 5 times faster than `str.translate` on
    text that is not all ASCII (0.04 s a MB, not 0.2), unless it lengthens a character (`İ`)
    or leaves one the patterns fold (`ı`, `ſ`)."""
    lowered = text.lower()
    if len(lowered) == len(text) and "ı" not in text and "ſ" not in text:
        return lowered
    return text.translate(_ASCII_LOWER)


def _marker(kind: str) -> str:
    return MARKER.format(kind=kind)


# -- shapes a table row cannot say ----------------------------------------------------------------

_KEY_BEGIN_RE = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")

_KEY_END_RE = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")

_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")

_AWS_SECRET_RE = re.compile(
    r"(?P<keep>(?<![\w-])[\"']?(?:aws_?)?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?)"
    + _NOT_MARKER
    + r"(?P<secret>[A-Za-z0-9/+=]{30,})",
    re.IGNORECASE,
)

# The scheme is at most 32 characters and matched possessively: a long run of scheme characters
# (`a-a-a-...`) then costs each start 32 steps, not the rest of the run (it was quadratic).
_URL_PASSWORD_RE = re.compile(
    r"(?P<keep>[A-Za-z][A-Za-z0-9+.-]{0,31}+://[^\s:/?#@\[\]]*+:)"
    + _NOT_MARKER
    + r"(?P<secret>[^\s/?#]+)(?=@[^\s/?#@])"
)

_AUTHORIZATION_RE = re.compile(
    r"(?P<keep>authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?[ \t]*+"
    r"(?P<scheme>bearer|token|basic)[ \t]++)" + _NOT_MARKER + r"(?P<secret>[A-Za-z0-9._~+/=-]+)",
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


def _after_group(
    kind: str, check: Callable[[str], bool] | None = None
) -> Callable[[re.Match], str]:
    """Replace only the match's `secret` group: `AccountKey=` and the rest are kept."""

    def replace(match: re.Match) -> str:
        if check is not None and not check(match.group("secret")):
            return match.group()
        whole, start = match.group(), match.start()
        return (
            whole[: match.start("secret") - start]
            + _marker(kind)
            + whole[match.end("secret") - start :]
        )

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
_NAME = r"(?=[A-Za-z0-9_.-]*?" + _SECRET_WORD + r")[A-Za-z0-9_.-]++"
_ENV_LINE_RE = re.compile(  # a whole line: `NAME=rest of line`, or `NAME: one-token`
    r"^(?P<keep>[ \t]*(?:[-*>][ \t]+)?(?:(?:export|%env|%set_env)[ \t]+)?(?P<name>(?=[A-Za-z_])"
    + _NAME
    + r")"
    r"[ \t]*+(?:=(?!=)[ \t]*+|:(?!=)[ \t]*+(?=\S++[ \t]*+$)))"
    r"(?P<secret>[^\s\"'\[][^\n]*+)$",
    re.IGNORECASE | re.MULTILINE,
)
_NAMED_RE = re.compile(
    r"(?P<keep>(?P<lead>(?<![\w.-])[\"']?)(?P<name>" + _NAME + r")(?:[\"']\]?)?"
    r"[ \t]*+(?P<sep>:(?!=)|=(?!=))[ \t]*+)"
    r"(?:(?P<quote>[\"'])" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=quote)"
    r"|" + _NOT_MARKER + r"(?P<bare>[^\s\"'`,;&()\[\]{}<>]+))",
    re.IGNORECASE,
)
_CODE_VALUE_RE = re.compile(r"[A-Za-z_][\w.]*[ \t]*[(\[]")
_PLACEHOLDERS = frozenset(
    ("none", "null", "nil", "true", "false", "str", "bytes", "int", "string", "secretstr")
)


_PRIVATE_KEY_RE = re.compile(r"private[_-]?key")
_API_KEY_RE = re.compile(r"api[_-]?key")


def _kind_of(name: str) -> str:
    name = name.lower()
    if "password" in name or "passwd" in name:
        return "password"
    if _PRIVATE_KEY_RE.search(name):
        return "private-key"
    if _API_KEY_RE.search(name):
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
    """The line's value up to its trailing blanks (kept, as the blanks were): the pattern takes
    the rest of the line whole, since a lazy value before `[ \t]*$` rescanned every blank."""
    kind = _kind_of(match.group("name"))
    value = match.group("secret").rstrip(" \t")
    if _is_placeholder(value, kind):
        return match.group()
    return match.group("keep") + _marker(kind) + match.group("secret")[len(value) :]


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


_SECRET_WORD_RE = re.compile(_SECRET_WORD)  # on ASCII-lower-cased text
_NAME_CHARS = frozenset(
    string.ascii_letters + string.digits + "_.-" + "".join(_UNICODE_ASCII_FOLDS)
)


_AFTER_NAME_RE = re.compile(r"(?:[\"']\]?)?[ \t]*+[:=](?!=)")  # what follows a name in `_NAMED_RE`
_NAME_RUN_RE = re.compile("[" + re.escape("".join(sorted(_NAME_CHARS))) + "]*+")
_SECRET_WORD_STEMS = ("secret", "token", "passw", "api", "private")
# Text with a secret word and a separator every 16 characters or closer is redacted by one
# `_NAMED_RE.sub`: slower than the loop below on ordinary text (240 ms a MB, not 35; notebook
# prose holds a secret word every 100 characters or so), faster on a dense run of names
# (`api_key="api_key="...`: 0.14 s a MB, not 0.5), where each name that has a separator after
# it is a Python step; a name without one costs the loop one check.
_DENSE_NAME_CHARS = 16


def _remembered(replace: Callable[[re.Match], str]) -> Callable[[re.Match], str]:
    """`replace`, asked once for each distinct match (and the character after it, which
    `_named` reads): a text of one repeated unit costs one judgement, not one a match."""
    answers: dict[tuple[str, str], str] = {}

    def remembered(match: re.Match) -> str:
        seen = (match.group(), match.string[match.end() : match.end() + 1])
        if seen not in answers:
            answers[seen] = replace(match)
        return answers[seen]

    return remembered


def _redact_named(text: str) -> str:
    """`_NAMED_RE.sub(_named, text)`, the pattern tried only at the start of a name that holds
    a secret word (found by a case-sensitive scan of the ASCII-lower-cased text): searched
    everywhere, its lookahead ran at every character, the slowest rule on a long body. A name
    is a whole run of name characters, tried once (and once at a quote before it): the later
    secret words of a run already tried are skipped, so each character is walked over once
    (walking back from each of them made `token_token_token...` quadratic). Text dense in
    secret words takes the one `sub` instead."""
    folded = _fold(text)
    words = sum(map(folded.count, _SECRET_WORD_STEMS)) - folded.count("[redacted:")
    separators = folded.count("=") + folded.count(":") - folded.count("[redacted:")
    if min(words, separators) * _DENSE_NAME_CHARS > len(text):
        return _NAMED_RE.sub(_remembered(_named), text)
    pieces: list[str] = []
    kept_until = 0
    scanned_until = 0  # the end of the last name run tried
    for hit in _SECRET_WORD_RE.finditer(folded):
        floor = max(kept_until, scanned_until)
        start = hit.start()
        if start < floor:
            continue
        scanned_until = _NAME_RUN_RE.match(text, start).end()
        if _AFTER_NAME_RE.match(text, scanned_until) is None:
            continue  # no `=` or `:` after the name: `_NAMED_RE` would not match
        while start > floor and text[start - 1] in _NAME_CHARS:
            start -= 1
        if folded.startswith("[redacted:", start - 10):
            continue  # a marker's kind, never a name
        starts = (start - 1, start) if start > floor and text[start - 1] in "\"'" else (start,)
        for candidate in starts:
            match = _NAMED_RE.match(text, candidate)
            if match is not None:
                pieces += [text[kept_until:candidate], _named(match)]
                kept_until = match.end()
                break
    if not pieces:
        return text
    pieces.append(text[kept_until:])
    return "".join(pieces)


# -- values after a key word, by their randomness -------------------------------------------------

# `--token X`, `apiKey: X`, `"client_secret": "X"`, `-H "X-Api-Key: X"`, `my key is X`: the
# word is any spelling that contains one of these, the value is redacted when it looks random
# (`_looks_random`), whatever the separator; a word or an id after `key` stays.
_KEY_WORDS = ("key", "token", "secret", "passw", "pwd", "auth", "credential", "signature")
# The word, what follows it up to the value (a name of at most 48 more characters) and the value,
# a run of value characters; all possessive, so a run is scanned once, however many key words
# it holds (`key=key=key=...`; the run's last key word gets a second look, `_key_value`).
_KEY_VALUE_RE = re.compile(  # on ASCII-lower-cased text: a case-sensitive scan is faster
    r"(?P<keep>(?P<word>key|token|secret|passw(?:or)?d|pwd|auth(?:orization)?|credential|signature)"
    r"s?(?![a-z])[a-z0-9_-]{0,48}+[\"']?"
    r"(?:[ \t]*+(?:=>?|:)[ \t]*+|[ \t]++(?:is[ \t]++|=[ \t]*+)?)[\"']?)"
    r"(?!\[redacted:)(?P<secret>[a-z0-9+/_~=-][a-z0-9+/_~.=-]*+)"
)
# Hex after `key` is a cache key, a primary key, a hash, unless the key is the credential's
# own name: a bare `key` (Kaggle's `{"username": ..., "key": <32 hex>}`, `wandb.login(key=...)`)
# or one qualified as a credential (`api_key`, `license-key`); `cache_key`, `sort key`, stay.
_CREDENTIAL_QUALIFIERS = ("api", "access", "secret", "auth", "private", "licen", "client", "app")
_DATA_KEY_WORDS = frozenset(
    ("cache", "sort", "primary", "foreign", "partition", "hash", "idempotency", "lookup",
     "dedup", "row", "composite", "unique", "dict", "map", "object", "s3", "index", "group",
     "join", "merge", "redis", "shard", "routing", "cluster", "the", "a", "checkpoint")
)  # fmt: skip
_DIGEST_WORDS = ("sha", "md5", "hash", "digest", "checksum", "fingerprint")
_KEY_KINDS = (
    ("passw", "password"),
    ("pwd", "password"),
    ("secret", "secret"),
    ("token", "token"),
    ("key", "key"),
)
_HEX_OR_UUID_RE = re.compile(r"[0-9a-fA-F]+(?:-[0-9a-fA-F]+)*")
_DATE_RE = re.compile(r"(?:19|20)\d\d-?[01]\d-?[0-3]\d")
_FILE_SUFFIX_RE = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")
_CLASS_OF = {**dict.fromkeys(string.ascii_lowercase, 0), **dict.fromkeys(string.ascii_uppercase, 1)}

# Calibrated on random keys (16 to 64 characters of base62, base36 or base64: 3.6 bits and up)
# against identifiers (`model_name_v2_final`, `claude-sonnet-4-20250514`, `checkpoint2026v3`:
# under 3.5, or few switches between letters, digits and case).
MIN_RANDOM_CHARS = 16
MIN_ENTROPY_BITS = 3.5
MIN_SWITCH_RATE = 0.25
MAX_JUDGED_CHARS = 1024  # a longer value is judged by its first 1024 characters


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`'s own character frequencies."""
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _looks_random(value: str, word: str, *, hex_is_secret: bool = False) -> bool:
    """A generated credential, not a word, a path, a date, a version or (after `key`, which
    names cache keys, primary keys and key ids too) a hash or a UUID; `hex_is_secret`: the
    key is a credential's own name, so 32 hex digits or more are a key (Kaggle's, W&B's)."""
    sample = value[:MAX_JUDGED_CHARS]  # the character counts below are Python steps
    letters_digits = "".join(c for c in sample if c.isalnum() and c.isascii())
    if len(letters_digits) < MIN_RANDOM_CHARS or value[0] in "/~.":
        return False
    if _DATE_RE.search(value) or _FILE_SUFFIX_RE.search(value):
        return False
    exempt_hex = not (hex_is_secret and len(value) >= 32 and "-" not in value)
    if word.lower() in ("key", "signature") and exempt_hex and _HEX_OR_UUID_RE.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in sample) and any(c.isalpha() for c in sample)):
        return False
    classes = [_CLASS_OF.get(c, 2) for c in letters_digits]
    switches = sum(a != b for a, b in zip(classes, classes[1:], strict=False))
    return (
        switches >= MIN_SWITCH_RATE * len(letters_digits)
        and shannon_entropy(letters_digits) >= MIN_ENTROPY_BITS
    )


_KEY_WORD_RE = re.compile("|".join(_KEY_WORDS))


def _hex_is_secret(before: str) -> bool:
    """Whether hex after a `key` preceded by `before` (ASCII-lower-cased, at most 32 characters)
    names a credential: the identifier's part glued before `key` (`api_key`, `cacheKey`) must
    qualify it as a credential; a bare `key` is one unless the word before names data
    (`cache key`, `sort key`)."""
    glued_end = len(before) - 1 if before.endswith(("_", ".", "-")) else len(before)
    glued_start = glued_end
    while glued_start > 0 and before[glued_start - 1].isalnum():
        glued_start -= 1
    if glued_start < glued_end:
        glued = before[glued_start:glued_end]
        return any(qualifier in glued for qualifier in _CREDENTIAL_QUALIFIERS)
    words = before.replace('"', " ").replace("'", " ").split()
    previous = words[-1] if words else ""
    return previous not in _DATA_KEY_WORDS and not any(d in previous for d in _DIGEST_WORDS)


def _redact_key_values(text: str) -> str:
    """Each value after a key word judged by its looks (`_key_value`): `_KEY_VALUE_RE` scans the
    ASCII-lower-cased text (same length as `text`, unlike `str.lower`), the judging reads the
    text. A value seen before in this text is not judged again (`key=a1key=a1...`)."""
    folded = _fold(text)
    pieces: list[str] = []
    kept_until = 0
    judged: dict[tuple[str, str], str | None] = {}
    for match in _KEY_VALUE_RE.finditer(folded):
        start, end = match.span()
        before = folded[max(0, start - 32) : start] if match.group("word") == "key" else ""
        seen = (text[start:end], before)
        if seen not in judged:
            judged[seen] = _key_value(text, folded, match, before)
        replaced = judged[seen]
        if replaced is not None:
            pieces += [text[kept_until:start], replaced]
            kept_until = end
    if not pieces:
        return text
    pieces.append(text[kept_until:])
    return "".join(pieces)


def _key_value(text: str, folded: str, match: re.Match, before: str) -> str | None:
    """The match (on `folded`) with its value redacted when the value looks random; when it
    does not, its last key word's value is looked at (`date=2026-03-12_token=<random>` is one
    run of value characters). None: nothing to redact."""
    start, value_start = match.start(), match.start("secret")
    value_end = match.end("secret")
    while value_end > value_start and folded[value_end - 1] == ".":
        value_end -= 1  # a sentence's full stop, not the value's
    if value_end - value_start < MIN_RANDOM_CHARS:
        return None  # too short to look random, and so is any part of it
    dots = text[value_end : match.end()]
    kind = _key_value_kind(text, match, value_end, before)
    if kind is not None:
        return text[start:value_start] + _marker(kind) + dots
    last = max(folded.rfind(word, value_start, value_end) for word in _KEY_WORDS)
    inner = _KEY_VALUE_RE.match(folded, last, value_end) if last >= 0 else None
    if inner is not None:
        inner_before = folded[max(0, last - 32) : last] if inner.group("word") == "key" else ""
        kind = _key_value_kind(text, inner, value_end, inner_before)
        if kind is not None:
            return text[start : inner.start("secret")] + _marker(kind) + dots
    return None


def _key_value_kind(text: str, match: re.Match, value_end: int, before: str) -> str | None:
    name = match.group("keep")  # `x-auth-token: ` is a token, `pwd=` a password
    if any(word in name for word in _DIGEST_WORDS):
        return None  # `token_sha256 = <hex>` names a checksum
    word = match.group("word")
    value = text[match.start("secret") : value_end]
    hex_secret = word == "key" and _hex_is_secret(before.rsplit("\n", 1)[-1])
    if not _looks_random(value, word, hex_is_secret=hex_secret):
        return None
    return next((kind for needle, kind in _KEY_KINDS if needle in name), "credential")


# -- the rules, in order --------------------------------------------------------------------------


def _format_rule(token_format: TokenFormat) -> Callable[[str], str]:
    replace = (
        _after_group(token_format.kind, token_format.check)
        if "secret" in token_format.pattern.groupindex
        else _whole(token_format.kind, token_format.check)
    )

    def at_word_start(match: re.Match) -> str:
        start = match.start()
        before = match.string[start - 1] if start else " "
        if token_format.starts_word and (before.isalnum() or before in "_-"):
            return match.group()  # the tail of a longer word: `xghp_...`, `mask-ant-...`
        return replace(match)

    return partial(token_format.pattern.sub, at_word_start)


# (needles, rule): a rule runs only when one of its lower-case needles occurs in the lower-cased
# text, so ordinary text costs a few substring scans instead of 50 regex passes; a rule without
# needles always runs (its pattern is cheap to scan and also filters the whole text first).
_RULES: tuple[tuple[tuple[str, ...], Callable[[str], str]], ...] = (
    (("private key",), _redact_private_keys),
    *((f.needles, _format_rule(f)) for f in TOKEN_FORMATS),
    (("access",), partial(_AWS_SECRET_RE.sub, _after_keep("aws-secret-access-key"))),
    (("authorization",), partial(_AUTHORIZATION_RE.sub, _authorization)),
    (("bearer",), partial(_BEARER_RE.sub, _after_keep("bearer-token", mixed_alnum))),
    (("://",), partial(_URL_PASSWORD_RE.sub, _after_keep("url-password"))),
    *IDIOM_RULES,
    (_SECRET_NEEDLES, partial(_ENV_LINE_RE.sub, _env_line)),
    (_SECRET_NEEDLES, _redact_named),
    (_KEY_WORDS, _redact_key_values),
)


def _needle_pattern(needles: set[str]) -> re.Pattern[str]:
    """One pattern for all `needles`, as a trie (`s(?:ecret|k-)|t(?:oken|vly-)`): the regex
    engine then tests one branch per character, three times faster than a flat alternation."""
    shortest = {n for n in needles if not any(m != n and m in n for m in needles)}
    tree: dict[str, dict] = {}
    for needle in shortest:
        node = tree
        for char in needle:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, dict]) -> str:
        if "" in node:
            return ""  # a needle ends here: anything longer holds it
        alternatives = [re.escape(char) + branch(child) for char, child in sorted(node.items())]
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    return re.compile(branch(tree))


# Every rule's needles in one pattern, and the needle-less shapes in another: most text holds
# none, and one scan in C each says so (a team sync redacts four fields of each of a million
# checkpoints; the loop below, a generator per rule, was most of its client time).
_ALL_NEEDLES = {n for needles, _ in _RULES for n in needles}
_ANY_NEEDLE_RE = _needle_pattern(_ALL_NEEDLES)
# Each needle, the shortest needles inside it (what `_ANY_NEEDLE_RE` reports instead).
_MARKER_KINDS = (
    *(f.kind for f in TOKEN_FORMATS),
    *("private-key", "bearer-token", "basic-auth", "url-password", "aws-secret-access-key"),
    *("password", "api-key", "secret", "token", "key", "credential"),
)
_MARKER_NEEDLES = {
    needle for needle in _ALL_NEEDLES for kind in _MARKER_KINDS if needle in _marker(kind).lower()
}
_SHORTER_NEEDLES = {
    needle: tuple(m for m in _ALL_NEEDLES if m in needle and m != needle) for needle in _ALL_NEEDLES
}
_SHAPES_RE = re.compile("|".join(f.pattern.pattern for f in TOKEN_FORMATS if not f.needles))


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`. Idempotent."""
    if (
        not _ANY_NEEDLE_RE.search(text.lower())
        and not _SHAPES_RE.search(text)
        and not PGPASS_HINT_RE.search(text)
    ):
        return text  # no rule would run
    for _ in range(_MAX_PASSES):
        before = text
        lowered = text.lower()
        present = _Needles(lowered)
        for needles, rule in _RULES:
            if not needles or present.any(needles):
                replaced = rule(text)
                if replaced != text:
                    text, lowered = replaced, replaced.lower()
                    present.after_change(lowered)
        if text == before:
            break
    return text


class _Needles:
    """Which needles a lower-cased text holds, found by one scan of `_ANY_NEEDLE_RE` (its
    shortest needles) instead of a substring search per rule and needle (about 100 scans of
    the whole text a pass: a quarter of the time on a long text)."""

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self.found = set(_ANY_NEEDLE_RE.findall(lowered))
        self.known: dict[str, bool] = {}

    def after_change(self, lowered: str) -> None:
        """A rule replaced secrets by markers: the text now holds the needles it held (or
        fewer: a rule run for nothing finds nothing) and those of the markers' kinds, since a
        marker stands between what it joins and no needle holds `[` or `]`."""
        self.lowered = lowered
        self.found |= _MARKER_NEEDLES
        self.known.clear()

    def any(self, needles: tuple[str, ...]) -> bool:
        return any(self.holds(needle) for needle in needles)

    def holds(self, needle: str) -> bool:
        if needle in self.found:
            return True
        if needle not in self.known:  # a longer needle: only where a shorter one inside it is
            inside = _SHORTER_NEEDLES.get(needle, ())
            self.known[needle] = any(m in self.found for m in inside) and needle in self.lowered
        return self.known[needle]


_MARKER_KIND_RE = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


@dataclass(frozen=True)
class Redaction:
    """What `redact_counted` made of a text: the redacted `text`, and `counts`, how many
    secrets of each kind it replaced (in the order they first appear), for a writer to say."""

    text: str
    counts: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """`2 password, 1 github-token`; empty when nothing was redacted."""
        return ", ".join(f"{count} {kind}" for kind, count in self.counts.items())

    def __add__(self, other: Redaction) -> Redaction:
        """The counts of two redactions (two fields of one write); the text is `other`'s."""
        counts = dict(self.counts)
        for kind, count in other.counts.items():
            counts[kind] = counts.get(kind, 0) + count
        return Redaction(other.text, counts)


def redact_counted(text: str) -> Redaction:
    """`redact(text)` and how many secrets of each kind it replaced: the markers the result
    holds beyond those the text already held (a marker is never matched again)."""
    redacted = redact(text)
    if redacted is text or redacted == text:
        return Redaction(redacted)
    already = Counter(_MARKER_KIND_RE.findall(text))
    counts: dict[str, int] = {}
    for kind in _MARKER_KIND_RE.findall(redacted):
        if already[kind] > 0:
            already[kind] -= 1
        else:
            counts[kind] = counts.get(kind, 0) + 1
    return Redaction(redacted, counts)
