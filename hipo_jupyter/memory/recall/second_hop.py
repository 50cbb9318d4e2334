"""The second hop: what the first hits name that the question does not, searched in turn.

A question that needs two facts ("Which city have both Jon and Gina visited?", "What did the
vendor we chose in March quote?") often shares its words with one of them only: the first
fact names a person, a place, a project or a date, and the second fact is found through that
name, not through the question. So after the first search, what the best raw hits name and the
question lacks (a capitalised word inside a sentence, an identifier, then their long words; never
a bare number: "84" or "120" names no one fact in a notebook of measurements) becomes a second
query; what it finds joins the first
hits' candidates at a share of their relevance (`HOP_WEIGHT`), once, before the priors, the
neighbours and the packing, so one ranking decides what fits the budget. A term common to many
candidates (the other speaker of a dialogue, the project every note is about) tells nothing
and is not followed.

A context asks for it by name (`RecallSettings.second_hop`; off by default: it moved no figure in
the shipped mode, benchmarks/README.md). Its cost is bounded by the candidates' count, not their
length: a seed's terms and a term's commonness are read from the first TERM_CHARS characters of
each text (a pasted page's names are in its start).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence

from ..requests import RecallSettings
from ..search.contract import SearchHit, SearchIndex
from ..words import STOPWORDS, WORD, fold, words
from .implicit_needs import route

SEEDS = 5  # the first raw hits whose names are followed
BRIDGE_TERMS = 4  # at most this many names and numbers make the second query
HOP_LIMIT = 40  # hits asked of the second search
# A second-hop hit's relevance: this share of the first search's best, times its own score
# over the second search's best. Chosen on both dev sets at 2,000 tokens (keyword): LoCoMo,
# leave one conversation out, preferred 0.7 (0.840; 0.837 at 0.3, 0.833 off), MemAware's
# imported conversations 0.3 (0.570, level with off; 0.567 at 0.5, 0.560 at 0.7): 0.3 is the
# largest that costs neither anything.
HOP_WEIGHT = 0.3
# Long lower-case words of the seeds are followed too ("pottery", "shelter", "footage"): in a
# dialogue or a chat the second fact is as often named by a thing as by a proper name (LoCoMo,
# leave one conversation out: names alone 0.833, with long words 0.840 at HOP_WEIGHT 0.7).
LONG_WORDS = True
LONG_WORD = 6  # letters
# A name held by more than this share of the first search's candidates is a word of the whole
# memory there (the other speaker, the project of every note), not a bridge to one fact.
COMMON_SHARE = 0.1
TERM_CHARS = 600  # of each text: a long checkpoint costs the hop what a short one does

# A capitalised word inside a sentence (not after ". " or at a line's start), a figure of two
# or more digits, or an identifier with a digit or an inner capital ("Q3", "gpt4o", "SciPy").
# Names, not words (`words.py`): their capitals and inner marks make them names, so they are read
# from the text as written; what they are compared with is the one tokenizer's folded words.
_NAME = re.compile(r"(?<![.!?:\n]\s)(?<!^)\b[A-Z][a-z][\w'’-]+")
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z]*\d)[A-Za-z][\w-]*\d[\w-]*\b|\b[a-z]+[A-Z]\w*\b")
_POSSESSIVE = re.compile(r"['’]s\Z")

Search = Callable[..., Sequence[SearchHit]]  # (text, limit=N): the same index and filters


def bridge_terms(
    seeds: Sequence[SearchHit], query: str, candidates: Sequence[SearchHit]
) -> list[str]:
    """The names and numbers of the `seeds` that the query does not hold, those in most seeds
    first (then in reading order), less any held by more than COMMON_SHARE of `candidates`."""
    asked = set(words(query))
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for seed in seeds:
        for term in dict.fromkeys(_terms(seed.doc.text)):  # each once per seed
            key = fold(term)
            if key in asked or key in STOPWORDS or any(
                word in asked for word in words(key)
            ):
                continue
            counts[key] += 1
            first_seen.setdefault(key, len(first_seen))
    if not counts:
        return []
    common = max(2, int(COMMON_SHARE * len(candidates)))
    texts = [fold(f"{hit.doc.title} {hit.doc.text[:TERM_CHARS]}") for hit in candidates]
    ranked = sorted(counts, key=lambda term: (-counts[term], first_seen[term]))
    chosen: list[str] = []
    for term in ranked:
        if not held_by_more(texts, term, common):
            chosen.append(term)
            if len(chosen) == BRIDGE_TERMS:
                break
    return chosen


def held_by_more(texts: Sequence[str], term: str, most: int) -> bool:
    """Do more than `most` of the (case-folded) texts hold `term`? Read as a substring, which
    may count a longer word too ("art" in "party"): a term then looks commoner, never rarer;
    and counting stops at `most + 1`, so a common term costs a few texts and a bridge the
    candidates' (a regex per term over every candidate was most of a year's context time)."""
    seen = 0
    for text in texts:
        if term in text:
            seen += 1
            if seen > most:
                return True
    return False


def _terms(text: str) -> list[str]:
    """A seed's names and identifiers, then its long lower-case words, from its start."""
    text = text[:TERM_CHARS]
    names = [_POSSESSIVE.sub("", match.group()) for match in _NAME.finditer(text)]
    terms = [*names, *_IDENTIFIER.findall(text)]
    if LONG_WORDS:
        # the one WORD, unfolded: a word with a capital is a name's, followed above or not at all
        terms += [w for w in WORD.findall(text) if len(w) >= LONG_WORD and w.islower()]
    return terms


def follow(
    found: Sequence[SearchHit],
    query: str,
    search: Search,
    *,
    kinds: Collection[str] = ("raw",),
) -> list[SearchHit]:
    """`found` (the first search, best first) and the second hop's hits (see the module
    docstring), as one list for recall's ranking to take the best of each document from.
    `search(text, limit=N)` runs the second query on the same index with the same filters."""
    if HOP_WEIGHT <= 0 or SEEDS <= 0 or not found:
        return list(found)
    seeds = [hit for hit in found if hit.doc.kind in kinds][:SEEDS]
    terms = bridge_terms(seeds, query, found)
    if not terms:
        return list(found)
    second = [hit for hit in search(" ".join(terms), limit=HOP_LIMIT) if hit.doc.kind in kinds]
    best_first = max(hit.score for hit in found) or 1.0
    best_second = max((hit.score for hit in second), default=0.0)
    if best_second <= 0:
        return list(found)
    scale = HOP_WEIGHT * best_first / best_second
    hopped = [SearchHit(hit.doc, hit.score * scale, hit.snippet) for hit in second]
    return [*found, *hopped]


def connect(
    found: Sequence[SearchHit],
    query: str,
    index: SearchIndex,
    settings: RecallSettings,
    *,
    type: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> list[SearchHit]:
    """The first search's hits with what connects to them, for the stages `settings` asks
    for (never inferred from how many hits are asked): the second hop (`follow`) and, for a
    question about a plan, the user's preferences and constraints (`implicit_needs.route`),
    searched in the same index with the same filters, as one list for the ranking."""

    def search(text: str, *, limit: int, types: Collection[str] | None = None) -> list[SearchHit]:
        if type:
            if types is not None and type not in types:
                return []
            types = {type}
        return index.search(
            text, limit=limit, kinds={"raw"}, types=types, since=since, until=until, snippets=False
        )

    connected = follow(found, query, search) if settings.second_hop else list(found)
    return route(connected, query, search) if settings.implicit_needs else connected
