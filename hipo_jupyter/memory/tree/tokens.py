"""Token counting for budgets: tiktoken's o200k_base, built from the file shipped in the package.

Why o200k_base: Claude's tokenizer is not published, and o200k_base is a close, modern BPE; the
budgets it measures (Layer 1, the context note) are guides, not billing. Where an exact Claude count
matters the API's own count endpoint is used instead, elsewhere.

Why a packaged file: `tiktoken.get_encoding("o200k_base")` downloads the ranks on first use, which
fails on a closed network and would make counting depend on the network. So the ranks ship as
`data/o200k_base.tiktoken.gz`, are checked against the sha256 tiktoken itself expects for the
unpacked file, and the `tiktoken.Encoding` is built here, privately: nothing global in tiktoken is
changed, so other code calling `tiktoken.get_encoding` behaves as it always did.

Loading is lazy (the first count pays ~0.4 s to unpack and parse 200k ranks) and happens once per
process. If tiktoken cannot be imported, or the file is missing, unreadable or altered, counting
falls back to an estimate (see `estimate_tokens`) and warns once, so memory keeps working.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import json
import math
import re
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..disk.files import MAX_STATE_BYTES, read_regular, write_atomic_bytes
from ..disk.jsonread import parse_json
from ..errors import ParseError

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "o200k_base"
ENCODING_FILE = Path(__file__).resolve().parent.parent / "data" / "o200k_base.tiktoken.gz"
"""The gzipped ranks file; a module attribute so tests can point it elsewhere."""

ENCODING_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""sha256 of the UNPACKED file: the hash tiktoken's own o200k_base loader expects."""

# Copied from tiktoken_ext/openai_public.py (tiktoken 0.14), `o200k_base()`; tests check that it
# still equals what the installed tiktoken defines.
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

CHARS_PER_TOKEN = 4
PACKAGED_STATUS = "tiktoken o200k_base (packaged)"

_COUNT_CACHE_SIZE = 8192  # Layer 1's parts, and the lines a context packs (~300 a context)
_TRUNCATE_CACHE_SIZE = 256  # Layer 1 cut to a context's share, and the long pieces cut to a cap


class TokenEstimateWarning(RuntimeWarning):
    """Token counts are estimated because the packaged tokenizer could not be loaded."""


class EncodingUnavailable(Exception):
    """The packaged encoding cannot be built; the message says why (shown in the status)."""


def load_encoding(path: Path | None = None) -> tiktoken.Encoding:
    """Build o200k_base from the gzipped ranks file at `path`; never touches the network.

    Raises EncodingUnavailable when tiktoken is missing or the file is missing, unreadable or
    does not hash to ENCODING_SHA256. Not cached: `count_tokens` keeps the one loaded copy.
    """
    path = ENCODING_FILE if path is None else path
    try:
        import tiktoken
    except ImportError as error:
        raise EncodingUnavailable(f"tiktoken is not importable ({error})") from error
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise EncodingUnavailable(f"cannot read {path}: {error}") from error
    actual = hashlib.sha256(data).hexdigest()
    if actual != ENCODING_SHA256:
        raise EncodingUnavailable(f"{path} has sha256 {actual[:12]}..., not the expected one")
    try:
        ranks = _parse_ranks(data)
    except ValueError as error:
        raise EncodingUnavailable(f"cannot parse {path}: {error}") from error
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=O200K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=dict(O200K_SPECIAL_TOKENS),
    )


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Lines of "<base64 token> <rank>", the .tiktoken format (as `tiktoken.load` reads it).

    binascii's decoder in one comprehension: 2.5x faster than base64.b64decode in a loop, and
    this runs once per process on 200k lines."""
    decode = binascii.a2b_base64
    return {
        decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


class _Tokenizer:
    """The process-wide loaded state: an Encoding, or None and the reason we estimate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded = False
        self.encoding: tiktoken.Encoding | None = None
        self.reason = ""

    def get(self) -> tiktoken.Encoding | None:
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._load()
        return self.encoding

    def _load(self) -> None:
        try:
            self.encoding = load_encoding(ENCODING_FILE)
        except EncodingUnavailable as error:
            self.encoding = None
            self.reason = str(error)
            warnings.warn(
                f"hipo: token counts are estimated ({CHARS_PER_TOKEN} characters per token): "
                f"{self.reason}",
                TokenEstimateWarning,
                stacklevel=4,
            )
        self._loaded = True


_tokenizer = _Tokenizer()


def reset_tokenizer() -> None:
    """Forget the loaded encoding (and the one-time warning); the next count loads again.

    For tests that point ENCODING_FILE elsewhere; ordinary code never needs it.
    """
    global _tokenizer
    _tokenizer = _Tokenizer()
    _count_with_encoding.cache_clear()
    _truncate_with_encoding.cache_clear()


def estimate_tokens(text: str) -> int:
    """ceil(len(text) / 4): the published rule of thumb (OpenAI, Anthropic) for English prose.

    Used only when the real tokenizer cannot load. Rounded up so a short text never counts as 0
    and budgets err on the full side; it undercounts code and non-Latin scripts, which the
    status line says by naming the estimate.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def encoding_status() -> str:
    """What counts tokens in this process: the packaged tiktoken, or the estimate and why."""
    if _tokenizer.get() is not None:
        return PACKAGED_STATUS
    return f"estimate ({CHARS_PER_TOKEN} chars/token): {_tokenizer.reason}"


def count_tokens(text: str) -> int:
    """Tokens in `text` under o200k_base (special-token strings count as plain text)."""
    if not text:
        return 0
    encoding = _tokenizer.get()
    if encoding is None:
        return estimate_tokens(text)
    return _count_with_encoding(encoding, text)


def within(text: str, limit: int) -> bool:
    """Whether `text` counts at most `limit` tokens. A long text is known to count more from
    its words alone (`token_floor`), not encoded: a context asks this of every long piece it
    shows a passage of, and encoding each whole reply was a tenth of a context's time (under
    the profiler) on a memory of imported chats."""
    long = len(text) > CHARS_PER_TOKEN * limit  # a short text: counted (and kept) at once
    if long and _tokenizer.get() is not None and token_floor(text) > limit:
        return False
    return count_tokens(text) <= limit


# o200k_base cuts a text into pieces (O200K_PAT_STR) before BPE, and BPE gives each piece a
# token at least. A piece holds whitespace only at its start, or nothing but whitespace, with
# two exceptions: the punctuation piece may end in line breaks and slashes ("!\n/"), and four
# control characters Python splits at are not whitespace to it. So, with a line break before
# a slash and those four not taken as breaks, each run of non-whitespace meets a piece of its
# own: their number is a floor of the tokens (tests/test_tokens.py checks it on any text).
_BREAKS_BEFORE_SLASH = re.compile(r"[\r\n]+(?=/)")
_NOT_BREAKS = str.maketrans("\x1c\x1d\x1e\x1f", "xxxx")
_CONTROL_BREAKS = re.compile("[\x1c-\x1f]")


def token_floor(text: str) -> int:
    """At most the tokens o200k_base counts in `text` (see above); cheap: no encoding."""
    if "/" in text:
        text = _BREAKS_BEFORE_SLASH.sub("", text)
    if _CONTROL_BREAKS.search(text):
        text = text.translate(_NOT_BREAKS)
    return len(text.split())


@lru_cache(maxsize=_COUNT_CACHE_SIZE)
def _count_with_encoding(encoding: tiktoken.Encoding, text: str) -> int:
    # Cached because Layer 1 is measured on every %load_ext, status and prompt, mostly unchanged.
    return len(encoding.encode_ordinary(text))


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` within `budget` tokens, cut at a line boundary when possible.

    "When possible" means the last line break inside the prefix keeps at least half of it; a
    prefix with one huge line is cut mid-line instead, so one long line does not empty the part.
    The result always counts at most `budget` tokens and is always a prefix of `text`.
    """
    if budget <= 0:
        return ""
    encoding = _tokenizer.get()
    if encoding is None:
        return _truncate(text, budget)
    return _truncate_with_encoding(encoding, text, budget)


@lru_cache(maxsize=_TRUNCATE_CACHE_SIZE)
def _truncate_with_encoding(encoding: tiktoken.Encoding, text: str, budget: int) -> str:
    # Cached because every `Memory.context` cuts the same Layer 1 to the same share of its
    # budget: encoding all of Layer 1 again cost about half a millisecond a call.
    return _truncate(text, budget)


def _truncate(text: str, budget: int) -> str:
    if count_tokens(text) <= budget:
        return text
    cut = _prefix_length_within(text, budget)
    line_cut = text.rfind("\n", 0, cut) + 1
    if line_cut * 2 >= cut:
        cut = line_cut
    # BPE is not strictly monotone over prefixes, so check and shrink until it fits.
    while cut > 0 and count_tokens(text[:cut]) > budget:
        shorter = _prefix_length_within(text[:cut], budget)
        cut = shorter if shorter < cut else cut - 1
    return text[:cut]


def _prefix_length_within(text: str, budget: int) -> int:
    """Characters covered by the first `budget` tokens of `text` (a close first guess)."""
    encoding = _tokenizer.get()
    if encoding is None:
        return budget * CHARS_PER_TOKEN
    tokens = encoding.encode_ordinary(text)[:budget]
    # A token may end inside a multi-byte character: drop the incomplete tail.
    return len(encoding.decode_bytes(tokens).decode("utf-8", errors="ignore"))


class TokenCountCache:
    """Token counts remembered on disk by the text's hash.

    A session start measures Layer 1, whose files rarely change between sessions; with their
    counts remembered, a load with nothing changed never has to build the encoder (~0.4 s).
    A missing or damaged cache file is simply an empty cache. Only the latest counts are kept.
    """

    MAX_ENTRIES = 64

    def __init__(self, path: Path) -> None:
        self.path = path
        self._counts: dict[str, int] | None = None
        self._dirty = False

    def _load(self) -> dict[str, int]:
        if self._counts is None:
            try:
                loaded = parse_json(read_regular(self.path, MAX_STATE_BYTES), self.path.name)
                self._counts = {k: v for k, v in loaded.items() if isinstance(v, int)}
            except (OSError, ParseError, AttributeError):
                self._counts = {}
        return self._counts

    def count(self, text: str) -> int:
        key = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        counts = self._load()
        if key in counts:
            counts[key] = counts.pop(key)  # most recently used last
            return counts[key]
        counts[key] = count_tokens(text)
        self._dirty = True
        while len(counts) > self.MAX_ENTRIES:
            counts.pop(next(iter(counts)))
        return counts[key]

    def save(self) -> None:
        if not self._dirty or self._counts is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic_bytes(self.path, json.dumps(self._counts).encode("utf-8"))
            self._dirty = False
        except OSError:
            pass  # a cache that cannot be written only costs time
