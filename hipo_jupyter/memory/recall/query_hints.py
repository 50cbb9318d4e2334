"""What a query says beyond its words: the periods it names and the names in it.

"What did Nate make on 9 November, 2022?" names a day and a person; recall lifts the checkpoints
dated in the period (or the week after: things are often told a few days later) and those titled
with the name (a speaker, a person's notes). Pure functions of the query text.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import date, timedelta
from functools import lru_cache

from ..words import STOPWORDS, content_words, fold

PERIOD_GRACE_DAYS = 7  # a hit this many days after a named period gets half the boost

_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = (
    r"(?P<{}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b",
        r"\b(?P<day>\d{1,2})"
        + _ORDINAL
        + r"\s+(?:of\s+)?"
        + _MONTH.format("name")
        + r"(?:,?\s+(?P<year>\d{4}))?\b",
        r"\b"
        + _MONTH.format("name")
        + r"\s+(?P<day>\d{1,2})"
        + _ORDINAL
        + r"(?:,?\s+(?P<year>\d{4}))?\b",
        r"\b" + _MONTH.format("name") + r",?\s+(?:of\s+)?(?P<year>\d{4})\b",
        r"\b(?P<year>\d{4})-(?P<month>\d{1,2})\b",
        r"\b(?P<year>(?:19|20)\d{2})\b",
    )
]


_RANGE_WORDS = re.compile(r"\b(?:between|from)\b.+\b(?:and|to|until|till)\b", re.IGNORECASE)


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(i for i, full in enumerate(_MONTH_NAMES, start=1) if full.startswith(name[:3]))


def query_periods(query: str) -> list[tuple[date, date]]:
    """The days, months and years a query names, as inclusive (start, end) ranges.

    "on 9 November, 2022", "May 8 2023", "2023-05-08", "in May 2023", "2023-05", "in 2022"; a
    day without a year takes the next year the query names ("between August 11 and August 15
    2023"). Each stretch of text counts once, the most precise reading first.
    """
    taken: list[tuple[int, int]] = []
    years = [(m.start(), int(m.group())) for m in re.finditer(r"\b(?:19|20)\d{2}\b", query)]
    periods: list[tuple[date, date]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(query):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            parts = match.groupdict()
            year = parts.get("year")
            if year is None:
                year = next((str(y) for at, y in years if at > match.start()), None)
                if year is None:
                    continue
            try:
                month = (
                    int(parts["month"])
                    if parts.get("month")
                    else (_month_number(parts["name"]) if parts.get("name") else None)
                )
                if month is None:
                    start, end = date(int(year), 1, 1), date(int(year), 12, 31)
                elif parts.get("day"):
                    start = end = date(int(year), month, int(parts["day"]))
                else:
                    start = date(int(year), month, 1)
                    end = date(int(year), month, calendar.monthrange(int(year), month)[1])
            except (ValueError, StopIteration):
                continue
            taken.append((match.start(), match.end()))
            periods.append((start, end))
    if len(periods) == 2 and _RANGE_WORDS.search(query):  # "between May 3 and May 9 2023"
        periods = [(min(p[0] for p in periods), max(p[1] for p in periods))]
    return periods


def period_match(day: date, periods: Sequence[tuple[date, date]]) -> float:
    """1 when `day` is in a named period, 0.5 in the PERIOD_GRACE_DAYS after it (things are
    often told a few days after they happened), else 0."""
    best = 0.0
    for start, end in periods:
        if start <= day <= end:
            return 1.0
        if end < day <= end + timedelta(days=PERIOD_GRACE_DAYS):
            best = 0.5
    return best


def query_names(query: str) -> set[str]:
    """Capitalised words of the query that are not stopwords ("Caroline", "Nate"), folded:
    a checkpoint titled with one of them (a speaker, a person's notes) is what the query is
    about. A name, not a word (`words.py`): its capital makes it one, so it is read unfolded."""
    names = (re.sub(r"['’]s\Z", "", word) for word in re.findall(r"\b[A-Z][\w'’-]*", query))
    return {name.casefold() for name in names if len(name) > 1 and name.casefold() not in STOPWORDS}


# --- how much of the query a keyword hit holds (hybrid recall, issue 35) ----------------------

# The words are the engine's one words (`words.py`); coverage compares their first STEM_LETTERS
# letters, a looser match than `words.stem` ("reviewers" ~ "review"), chosen for it (issue 35).
STEM_LETTERS = 5  # two words match when they start alike this far ("reviewers" ~ "review")


def content_stems(query: str) -> frozenset[str]:
    """The query's words that carry content (not STOPWORDS), cut to STEM_LETTERS letters."""
    return frozenset(word[:STEM_LETTERS] for word in content_words(query))


def coverage(stems: frozenset[str], text: str) -> float:
    """The share of `stems` the text holds (1.0 when the query has no content word): a hit
    that matched "go" alone of "where do we usually go to eat together?" holds a quarter.
    A stem is held when one of the text's words starts with it (a stem of STEM_LETTERS
    letters) or is it (a shorter one: the whole word): the same as comparing every word's
    first STEM_LETTERS letters, but the folded text is searched for the query's few stems
    instead of every word being cut (hybrid weighs 300 candidates' whole texts a query)."""
    if not stems:
        return 1.0
    held: set[str] = set()
    for match in _stems_pattern(stems).finditer(fold(text)):
        held.add(match.group(1) or match.group(2))
        if len(held) == len(stems):
            break
    return len(held) / len(stems)


_WORD_START = r"(?<![^\W_])"  # no letter or digit before: a word of `words.WORD` starts here


@lru_cache(maxsize=256)
def _stems_pattern(stems: frozenset[str]) -> re.Pattern[str]:
    """A word that starts with one of the full-length stems (group 1), or is one of the
    shorter ones (group 2)."""
    full = "|".join(re.escape(s) for s in sorted(stems) if len(s) >= STEM_LETTERS) or "(?!)"
    short = "|".join(re.escape(s) for s in sorted(stems) if len(s) < STEM_LETTERS) or "(?!)"
    return re.compile(f"{_WORD_START}(?:({full})|({short})(?![^\\W_]))")
