"""Team recall: the team database's full-text search, ranked as local recall ranks.

`TeamIndex` answers the one method of the search-backend contract recall uses (`search`) from
PostgreSQL, so the engine's `recall` (`recall/ranking.py`) applies the same recency factor,
named-period and name boosts and de-duplication to the team's checkpoints as to one's own.
There are no compaction nodes and no Topics Index in the team database (each notebook keeps
its own), so those signals are silent.
Each hit names its author and notebook; its `file:line` is in that author's memory folder.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import date

from hipo_jupyter.memory import RecallQuery
from hipo_jupyter.memory.disk import TEAMMATE
from hipo_jupyter.memory.recall import RecallResult
from hipo_jupyter.memory.recall import recall as ranked_recall
from hipo_jupyter.memory.search import Document, SearchHit, plain_snippet, query_terms

from .database import TeamDatabase, TeamRow


def websearch_query(text: str) -> str:
    """User text -> `websearch_to_tsquery` input: the same terms local recall searches
    (stopwords dropped, a hyphenated or dotted word kept as a phrase), OR-ed, each quoted."""
    return " or ".join('"' + " ".join(words) + '"' for words in query_terms(text))


class TeamIndex:
    """The team database seen through the search contract's `search` (raw checkpoints only)."""

    name = "postgresql"

    def __init__(
        self,
        database: TeamDatabase,
        authors: Collection[str] | None = None,
        hidden: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.database = database
        self.authors = authors
        self.hidden = hidden  # (title, body) -> a copy of what this memory forgot
        self.rows: dict[str, TeamRow] = {}  # document path -> the row, for the hits' provenance

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        snippets: bool = True,
    ) -> list[SearchHit]:
        if kinds is not None and "raw" not in kinds:
            return []
        matches = self.database.search(
            websearch_query(query),
            limit=limit,
            types=types,
            since=since,
            until=until,
            authors=self.authors,
        )
        hits = []
        for match in matches:
            row = match.row
            if self.hidden is not None and self.hidden(row.title, row.body):
                continue  # the user forgot this content: a teammate's copy is not recalled
            key = f"team:{row.id}"  # unique across authors, unlike file:line
            self.rows[key] = row
            doc = Document(
                id=key,
                path=key,
                line=row.source_line,
                kind="raw",
                date=row.day,
                type=row.type,
                title=row.title,
                text=row.body,
                tags=row.tags,
                writer=TEAMMATE,  # a row of the team database: never the user's own word here
            )
            hits.append(SearchHit(doc, match.rank, plain_snippet(row.body)))
        return hits


def team_recall(
    database: TeamDatabase,
    request: RecallQuery,
    *,
    today: date,
    half_life_days: float,
    authors: Collection[str] | None = None,
    hidden: Callable[[str, str], bool] | None = None,
) -> RecallResult:
    """The team's hits for `request`, best first, each naming its author and notebook;
    rows `hidden(title, body)` holds true (copies of what this memory forgot) left out."""
    index = TeamIndex(database, authors, hidden)
    result = ranked_recall(
        index,  # type: ignore[arg-type]  # search is all recall asks of it
        (),
        request.query,
        k=request.k,
        since=request.since.isoformat() if request.since else None,
        until=request.until.isoformat() if request.until else None,
        type=request.type,
        today=today,
        half_life_days=half_life_days,
    )
    hits = []
    for hit in result.hits:
        row = index.rows[hit.file]
        hits.append(
            replace(
                hit,
                file=row.source_file,
                path=(f"{row.author}/{row.notebook}: {row.source_file}#L{row.source_line}",),
                author=row.author,
                notebook=row.notebook,
            )
        )
    return replace(result, hits=hits, mode="keyword")
