"""The part of a long text that answers a query: a context shows passages, not heads.

A context packed to a budget holds more memories when a long piece shows only the sentences that
match the question (as a search engine's snippet does) instead of its first tokens: a pasted page
does not take the room of a dozen memories. `passage` picks, among the windows of
consecutive sentences (or lines) that fit `cap` tokens, the one holding the most distinct query
words, the earliest on a tie (the head, which usually says what the piece is about, when
nothing matches); a cut is marked with "…" at either end. Pure functions of the text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from itertools import accumulate

from ..search.query import query_terms
from ..tree.tokens import count_tokens, truncate_to_tokens, within
from ..words import WORD, fold
from ..words import stem as stem  # the one stem (`words.py`), here since passages first had it
from ..words import words as words_of

ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
CHARS_PER_TOKEN = 4  # English under o200k: a window is sized by this, then counted
SCAN_ALL = 16  # a text of at most this many sentences: each sentence's stems are kept


def query_stems(query: str) -> frozenset[str]:
    """The stems of the query's searchable words (stopwords dropped, as search drops them)."""
    return frozenset(stem(word) for term in query_terms(query) for word in term)


def units(text: str) -> list[tuple[str, bool]]:
    """The text as sentences, each with whether it starts a line of its own."""
    found = []
    for line in text.splitlines():
        line = " ".join(line.split())
        for number, sentence in enumerate(_SENTENCE_END.split(line) if line else ()):
            found.append((sentence, number == 0))
    return found


def passage(text: str, stems: Iterable[str], cap: int, whole_within: int | None = None) -> str:
    """The best window of `text` within `cap` tokens for a query of these `stems` (see the
    module docstring); the whole text, its lines joined by "\n", when it is within
    `whole_within` tokens (`cap` when not given)."""
    pieces, whole = _split(text)
    if within(whole, cap if whole_within is None else whole_within):
        return whole
    start, end = _best_window(text, frozenset(stems), cap)
    shown = _render(pieces, start, end)
    cut_end = end < len(pieces)
    if count_tokens(shown) > cap:  # one sentence longer than the cap
        shown, cut_end = truncate_to_tokens(shown, cap - 1).rstrip(), True
    prefix = f"{ELLIPSIS} " if start > 0 else ""
    return f"{prefix}{shown} {ELLIPSIS}" if cut_end else f"{prefix}{shown}"


def _best_window(text: str, wanted: frozenset[str], cap: int) -> tuple[int, int]:
    """(start, end) of the window of sentences within `cap` tokens (estimated: `_sentences`)
    holding the most distinct `wanted` stems, the earliest on a tie. Only the windows that
    hold a sentence with one of them are weighed (`_matched` says which), and the first: the
    others hold none, so cannot beat the first. A pasted page's hundreds of sentences cost
    what its few matching ones do, not a window each."""
    sizes = _sentences(text)[0]
    if not sizes:
        return 0, 1
    matched = _matched(text, wanted)
    ends: dict[int, int] = {}

    def end_of(start: int) -> int:
        if start not in ends:
            end, size = start, 0
            while end < len(sizes) and (end == start or size + sizes[end] <= cap):
                size += sizes[end]
                end += 1
            ends[start] = end
        return ends[start]

    starts = {0}
    for at in matched:  # the starts whose window reaches it: `end_of` grows with the start
        start = at
        while start >= 0 and end_of(start) > at:
            starts.add(start)
            start -= 1
    best, best_score = (0, 1), -1
    for start in sorted(starts):
        end = end_of(start)
        found: set[str] = set()
        for at in range(start, end):
            found |= matched.get(at, set())
        if len(found) > best_score:
            best, best_score = (start, end), len(found)
    return best


def _matched(text: str, wanted: frozenset[str]) -> dict[int, set[str]]:
    """The sentences of `text` holding `wanted` stems, and which. In a long text a stem is
    looked for as the start of its word: each place its letters are found in the folded text
    (`str.find`) that starts a word is weighed by that one word's stem, not by cutting every
    sentence into words (the stems of every sentence of every new text were a third of a
    context's time, under the profiler, on imported chats)."""
    _, folded, starts = _sentences(text)
    if len(starts) <= SCAN_ALL:  # a few sentences: their stems, kept, looked through
        return {at: set(found) for at, stems_ in enumerate(_sentence_stems(text))
                if (found := stems_ & wanted)}  # fmt: skip
    matched: dict[int, set[str]] = {}
    for stem_ in wanted:
        at = folded.find(stem_) if stem_ else -1
        while at >= 0:
            if at == 0 or not folded[at - 1].isalnum():  # `words.WORD`: letters and digits
                word = WORD.match(folded, at)
                if word is not None and stem(word.group()) == stem_:
                    matched.setdefault(bisect_right(starts, at) - 1, set()).add(stem_)
            at = folded.find(stem_, at + 1)
    return matched


# A context renders the same long pieces for query after query (a topic's checkpoints): their
# sentences, token counts and folded text are worked out once per text, not once per query.
@lru_cache(maxsize=4096)
def _split(text: str) -> tuple[tuple[tuple[str, bool], ...], str]:
    """The text's sentences, and the whole of it rendered."""
    pieces = tuple(units(text))
    return pieces, _render(pieces, 0, len(pieces))


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[tuple[int, ...], str, tuple[int, ...]]:
    """Each sentence's tokens, estimated from its length (with the space that joins it: the
    window is counted exactly once chosen, and cut if over); the sentences folded
    (`words.fold`), one a line; and where each starts in that folded text."""
    pieces = _split(text)[0]
    sizes = tuple(len(sentence) // CHARS_PER_TOKEN + 2 for sentence, _ in pieces)
    folded = [fold(sentence) for sentence, _ in pieces]
    starts = tuple(accumulate((len(line) + 1 for line in folded[:-1]), initial=0))
    return sizes, "\n".join(folded), starts if folded else ()


@lru_cache(maxsize=4096)
def _sentence_stems(text: str) -> tuple[frozenset[str], ...]:
    """Each sentence's word stems, for a text of a few sentences (`SCAN_ALL`): a short note
    comes back query after query, and its stems are kept rather than looked for each time."""
    return tuple(frozenset(stem(w) for w in words_of(sentence)) for sentence, _ in _split(text)[0])


@lru_cache(maxsize=16)
def _outline(
    text: str, skip: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[tuple[int, tuple[int, ...], frozenset[str]], ...]]:
    """The lines of a Markdown text and, for each line of text not under a skipped heading,
    (its number, the headings above it, its word stems): Layer 1 is the same text for every
    context until a file of it changes."""
    lines = text.splitlines()
    headings: list[tuple[int, int]] = []  # (level, line) of the headings in force
    just_headed = False  # a heading right under another (a file's path, then its title) adds
    outline = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            level = len(stripped) - len(stripped.lstrip("#"))
            if not just_headed:
                headings = [(at, n) for at, n in headings if at < level]
            headings.append((level, number))
            just_headed = True
            continue
        just_headed = just_headed and not stripped
        if headings and lines[headings[-1][1]].strip().lstrip("#").strip() in skip:
            continue
        words = frozenset(stem(word) for word in words_of(line))
        if words:
            outline.append((number, tuple(n for _, n in headings), words))
    return tuple(lines), tuple(outline)


def _render(pieces: Sequence[tuple[str, bool]], start: int, end: int) -> str:
    out: list[str] = []
    for sentence, new_line in pieces[start:end]:
        if out and not new_line:
            out[-1] += f" {sentence}"
        else:
            out.append(sentence)
    return "\n".join(out)


def matching_lines(
    text: str, stems: Iterable[str], cap: int, skip: Collection[str] = ()
) -> str:
    """The lines of a Markdown `text` that share the most query `stems` (two at least, or the
    one a one-word query has), within `cap` tokens, in their order and under their headings;
    "" when none does. Layer 1 in a context for one question: the Topics Index entry, the
    recent line or the working note about it, not the head of ROOT.md, which is about
    whatever happened last, nor every line that shares one common word (a name) with it.
    Lines under a heading named in `skip` are never taken."""
    wanted = frozenset(stems)
    least = min(2, len(wanted))
    lines, outline = _outline(text, tuple(skip))
    ranked = []
    for number, above, words in outline:
        shared = len(words & wanted)
        if shared and shared >= least:
            ranked.append((-shared, number, above))
    chosen: set[int] = set()
    room = cap
    for _, number, above in sorted(ranked):
        new = [n for n in (*above, number) if n not in chosen]
        cost = sum(count_tokens(lines[n]) + 1 for n in new)
        if cost <= room:
            room -= cost
            chosen.update(new)
    return "\n".join(lines[n] for n in sorted(chosen))


SNIPPET_TOKENS = 48
"""A hit's snippet: about two lines under its title (`query.SNIPPET_CHARS` of text)."""


def hit_snippet(text: str, query: str, cap: int = SNIPPET_TOKENS) -> str:
    """The passage of a hit's text that answers `query`, on one line: what every front end
    shows under the hit's title (the CLI, `%recall`, the sidebar's JSON, MCP). `text` is the
    body (a checkpoint's fields and free text, never its title), so a one-line note shows its
    line, not its title twice; the head when no query word is in it."""
    return " ".join(passage(text, query_stems(query), cap).split())
