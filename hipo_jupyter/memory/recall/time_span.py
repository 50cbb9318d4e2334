"""Questions that span time read the tree as the map: which days and weeks are about it.

"How did the pricing model change since the launch?", "what happened before the migration?"
ask about a stretch of days, not one checkpoint: the answer is the checkpoints of the days that
were about the subject, in order. The tree already says which days those are: each daily node
sums its day and each weekly node its week, and recall reads the daily nodes' match as a prior
for their raw checkpoints (`ranking._day_prior`). For a question that spans time (`spans_time`,
from the shape of its words) the map weighs more (`SPAN_DAY_FACTOR`), and a matching week
counts for each of its days at `WEEK_SHARE` of its match (a day whose own node matched less,
or was not written yet, still lies inside the stretch the week's summary is about), so the raw
checkpoints of those days come before equally worded ones elsewhere.

`SPAN_DAY_FACTOR = 1` and `WEEK_SHARE = 0` leave recall as it is; both are chosen on the dev
sets (benchmarks/README.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from ..search.contract import SearchHit

SPAN_DAY_FACTOR = 2.0  # the day prior of a span question, times this
WEEK_SHARE = 0.5  # a matching week's match given to each of its days, times this

_SPAN = re.compile(
    r"\b(?:since|until|till|so far|over (?:time|the (?:years?|months?|weeks?))|"
    r"(?:before|after|during) (?:the|our|my|we|it|he|she|they)\b|"
    r"chang(?:e|ed|es|ing)|evolv\w*|progress\w*|timeline|history of|how long|"
    r"(?:first|last) time)\b",
    re.IGNORECASE,
)


def spans_time(query: str) -> bool:
    """Does the question ask about a stretch of time ("since", "before the launch", "how did
    X change") rather than one moment?"""
    return bool(_SPAN.search(query))


def day_map(
    query: str, found: Sequence[SearchHit], day_prior: Mapping[str, float]
) -> dict[str, float]:
    """The day prior (date -> 0..1, the daily nodes' match) as a span question reads it: the
    weeks' match spread over their days, the whole weighed SPAN_DAY_FACTOR; unchanged for any
    other question."""
    if not spans_time(query):
        return dict(day_prior)
    prior = dict(day_prior)
    weeks = [hit for hit in found if hit.doc.kind == "weekly"]
    best = max((hit.score for hit in weeks), default=0.0)
    if best > 0 and WEEK_SHARE > 0:
        for hit in weeks:
            try:
                start = date.fromisoformat(hit.doc.date)
            except ValueError:
                continue
            share = WEEK_SHARE * hit.score / best
            for offset in range(7):
                day = (start + timedelta(days=offset)).isoformat()
                prior[day] = max(prior.get(day, 0.0), share)
    return {day: SPAN_DAY_FACTOR * value for day, value in prior.items()}
