"""Implicit needs: a question about a plan recalls the user's standing preferences and constraints.

"Help me plan the data pipeline for the new client" shares no word with "I prefer polars over
pandas" or "never push to main on a Friday", yet a plan made without them is one the user has
to correct. Keyword recall cannot see the link, and the vectors see it weakly (MemAware's hard
cell: 0.14 on the user's turns). So a question that asks for a plan, a decision or advice (the
general shape of the words, `plan_like`) also gets, as candidates, the checkpoints that say how
the user wants things: the `user` and `feedback` checkpoints (Hipocampus' types for who the user
is and what they corrected) and statements of preference in any checkpoint ("I prefer", "we
always", "avoid", "my budget"). They join the first search's candidates at a share of its best
relevance (`ROUTE_WEIGHT`, less for a statement than for a typed checkpoint), so the question's
own hits stay first and the priors (recency, the day's match) order what the route brings.

One more index query, for plan-like questions only, and only when a context asks for the stage
(`RecallSettings.implicit_needs`, off by default: it moved no figure in the shipped mode,
benchmarks/README.md). The question's shape is read from English words (`_PLAN`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..search.contract import SearchHit

ROUTE_WEIGHT = 0.3  # a routed checkpoint's relevance: this share of the first search's best
STATEMENT_SHARE = 0.5  # ... times this for a preference statement not typed user/feedback
ROUTED = 4  # at most this many checkpoints routed into one question
ROUTE_LIMIT = 40  # hits asked of the route's search
TYPED = frozenset({"user", "feedback"})

# The question asks for a plan, a choice or advice: words that name one. Not the generic shapes
# of any request ("how do I", "help me", "I need to"): in a notebook those are mostly debugging
# questions ("how do I fix this KeyError?"), where a note saying "never" or "don't" is noise.
_PLAN = re.compile(
    r"\b(?:plan(?:s|ning|ned)?|schedul\w*|prepar\w*|organi[sz]\w*|decid\w*|choos\w*|weigh\w*|"
    r"recommend\w*|suggest\w*|advi[cs]e|strateg\w*|approach|set(?:ting)? up|design\w*|"
    r"should (?:i|we)|what(?:'s| is) the best)\b",
    re.IGNORECASE,
)
# A statement of how the user wants things (in any checkpoint's text).
_PREFERENCE = re.compile(
    r"\b(?:i|we)(?:'d| would)? (?:really |usually |always |never |strongly )?"
    r"(?:prefer|like|love|hate|dislike|avoid|always|never|usually|can't|cannot|don't|won't)\b|"
    r"\bprefer(?:s|red|ence|ences)?\b|\bfavou?rite\b|\ballerg\w*|\bmy (?:budget|goal|rule)s?\b|"
    r"\b(?:please |)(?:always|never) (?:use|do|push|send|run)\b",
    re.IGNORECASE,
)
# The route's search: words that preference statements use, so the index finds them.
PREFERENCE_WORDS = (
    "prefer preferred preference preferences favorite favourite always never avoid usually "
    "hate dislike allergic budget"
)

Search = Callable[..., Sequence[SearchHit]]


def plan_like(query: str) -> bool:
    """Does the question ask for a plan, a choice or advice?"""
    return bool(_PLAN.search(query))


def states_preference(text: str) -> bool:
    """Does the text state how its writer wants things?"""
    return bool(_PREFERENCE.search(text))


def route(
    found: Sequence[SearchHit],
    query: str,
    search: Search,
) -> list[SearchHit]:
    """`found` and, for a plan-like `query`, the user's preferences and constraints (see the
    module docstring) as more candidates. `search(text, limit=..., types=...)` searches the
    same index with the first search's filters."""
    if ROUTE_WEIGHT <= 0 or ROUTED <= 0 or not plan_like(query):
        return list(found)
    asked = f"{query} {PREFERENCE_WORDS}"
    typed = list(search(asked, limit=ROUTE_LIMIT, types=TYPED))
    stated = [
        hit
        for hit in search(asked, limit=ROUTE_LIMIT)
        if hit.doc.type not in TYPED and states_preference(hit.doc.text)
    ]
    best = max((hit.score for hit in found), default=1.0) or 1.0
    routed: list[SearchHit] = []
    seen: set[str] = set()
    for hits, share in ((typed, 1.0), (stated, STATEMENT_SHARE)):
        top = max((hit.score for hit in hits), default=0.0) or 1.0
        for hit in hits:
            if hit.doc.id in seen or len(routed) == ROUTED:
                continue
            seen.add(hit.doc.id)
            # its own match orders the routed ones, between half and the whole of the weight
            weight = ROUTE_WEIGHT * share * (0.5 + 0.5 * hit.score / top)
            routed.append(SearchHit(hit.doc, weight * best, hit.snippet))
    return [*found, *routed]
