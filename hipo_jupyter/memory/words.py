"""What a word is, once, for every stage of recall (issue 54): one split, one fold, one stem.

A word is a run of letters and digits (`WORD`, `[^\\W_]+`): an underscore, an apostrophe, a dot,
a hyphen and every other mark end it ("it's" is "it" and "s", "v2.1" is "v2" and "1"). That is
how SQLite FTS5's `unicode61` tokenizer, which builds the keyword index, splits Latin text, so
the stages after the search (ranking, supersession, the second hop, passages, coverage) compare
the words the search matched, not a neighbour of them. A word is folded (`fold`) by NFKC then
case folding, so a full-width or ligatured letter and a capital meet their plain lower case.
`words` splits a text into its folded words; `stem` takes one common suffix off a folded word,
enough for "cleaning" to meet "clean"; `STOPWORDS` are the English words too common to tell
two texts apart, which a query drops.

Two other splits, each kept for a named reason, live here too, so that every way recall cuts
text into words is in one place:

- a term (`TERM`): words held together by one connector ("2026-03-12", "foo_bar", "v2.1",
  "q1/q2", "it's"). Search sends a term as a phrase of its words (`search.query.query_terms`),
  so "2026-03-12" does not match every note of 2026.
- the ledger's words (`LEDGER_WORD`): hashes of runs of four of them in a row are stored in
  `memory/.forgotten.json` when a note is forgotten, and every later text is split the same way
  to find a quote of it; a changed split would miss the quotes of every forget already made.
  So it stays as it was when the ledger was written: `\\w` runs that may hold inner apostrophes,
  dots, @ and hyphens (a quoted e-mail address or `pkg.module` is one word there).

Not words, and so not here: a name (`recall/second_hop`'s capitalised words and identifiers,
`recall/query_hints.query_names`) is read before folding, since its capital is what makes it a
name; coverage (`recall/query_hints`) compares the first letters of words, a looser match chosen
for it, from these same words. The tree's topic slugs (`tree/topics`) are a format of ROOT.md
with their own stop list: a topic is a phrase, not a word.

Every pattern here is linear in the text: no quantified group can match the same characters two
ways (a word holds no connector, a term alternates word and one connector; the ledger's word
backs off only over the marks after its last letter, which no later word can start on), so a
long run of letters or of punctuation costs its length, never its square (`tests/test_words.py`
splits 200,000 characters of any repeated unit).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# A word as unicode61 sees one: a run of letters and digits (underscore and punctuation split).
WORD = re.compile(r"[^\W_]+")
# Words held together by a single connector are one term, searched as a phrase; any other
# punctuation or space separates terms.
TERM = re.compile(r"[^\W_]+(?:[-_./'’][^\W_]+)*")
# The forget ledger's word: part of its stored format (see the module docstring), never changed.
LEDGER_WORD = re.compile(r"\w[\w'’.@-]*\w")

# English stopwords: too common to tell documents apart, so a query drops them.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    d ll m re s t ve
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_SUFFIXES = ("ing", "ed", "es", "s")  # enough for "cleaning" to meet "clean", "fines" "fine"


def fold(text: str) -> str:
    """`text` as words are compared: NFKC ("ﬁ" -> "fi", full width -> plain), case folded,
    then NFKC again (a folded letter may decompose: "ǰ"), so folding twice changes nothing."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def words(text: str) -> list[str]:
    """The folded words of `text`, in order, repeats kept: "Melanie's v2.1" -> melanie, s, v2, 1."""
    return WORD.findall(fold(text))


def content_words(text: str) -> list[str]:
    """`words(text)` without STOPWORDS: the words that tell one text from another."""
    return [word for word in words(text) if word not in STOPWORDS]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A word folded so that its common inflections meet: folded, one suffix off."""
    word = fold(word)
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def stems(text: str) -> frozenset[str]:
    """The stems of the content words of `text` (stopwords dropped before stemming)."""
    return frozenset(stem(word) for word in content_words(text))


def ledger_words(text: str) -> list[str]:
    """The forget ledger's words of `text`, as written (not folded): see `LEDGER_WORD`."""
    return LEDGER_WORD.findall(text)
