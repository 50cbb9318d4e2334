"""The context a model is sent for a question, within a token budget (`Memory.context`).

Every front end that hands memory to a model (`%%ask --recall`, `hipo recall --context`, the
server's `budget=`) sends this text, and the benchmarks score this text, so what is measured is
what users get. In order:

1. Layer 1's lines about the question (ROOT.md's Topics Index, patterns and history, and the
   working notes, that share at least two of its words, under their headings; ROOT's Active
   Context is left to recall, which shows those checkpoints whole), at most `layer1_share` (a
   sixteenth) of the budget; left out with `layer1=False` (`%%ask` already
   sends the whole of Layer 1 as its own cached system block). The head of ROOT.md is about
   whatever happened last, not about the question: measured on both dev sets, it cost more
   than it gave at every budget;
2. the recalled memory, fenced as quoted data exactly as `%%ask` fences it (`fence.py`: stored
   text can neither close the fence nor open a fake one). Recall runs with the neighbouring
   checkpoints lifted (in a conversation the answer is often the reply to the turn that matches)
   and asks for enough hits to fill the budget; they are packed best first while they fit (a
   piece that does not fit is skipped and the next tried), then shown in time order, one line
   per source file with its date, each piece with its line, title and type, so a model (or a
   person) can cite and open it; a proposal the user has not accepted (an agent's rule or
   correction of the user's words) says so and who proposed it, beside its title. A piece
   over `long_piece` tokens shows its passage that matches the question (`passages.py`), so a
   pasted page does not take the room of a dozen memories; shorter pieces are shown whole. An
   imported exchange's request is shown as its passage from `exchange_long_piece` tokens, a
   shorter one (`exchange_passage_tokens`).

Those limits are fields of the `RecallSettings` passed in (`requests.py`: their defaults and
the measurements that chose them, in one table).

The budget is counted with `count_tokens` (o200k) on the final text and is never exceeded: the
packing estimates each piece's cost, then the rendered text is counted and the last-packed
pieces are dropped until it fits (token counts of joined lines are not quite additive).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..disk.exchanges import split_shown
from ..disk.trust import AGENT, CLAUDE, IMPORT, TEAMMATE
from ..errors import QueryError
from ..requests import DEFAULT_SETTINGS, MIN_BUDGET, RecallSettings
from ..search.contract import Document, document_id
from ..tree.tokens import count_tokens
from .corrections import is_proposal
from .fence import LAYER1_TAG, RECALL_PREAMBLE, RECALL_TAG, escape_fence, quote_attribute, wrap
from .passages import matching_lines, passage, query_stems
from .ranking import Hit, RecallResult
from .supersession import CHANGED_LATER

# Layer 1 takes at most `RecallSettings.layer1_share` of the budget (a sixteenth, not the
# quarter the issue allows); recall gets the rest. Still room for the few lines of ROOT's Topics
# Index or patterns that name the question's words, which in a notebook's own memory are the
# user's rules and projects.
# ROOT's Active Context lists the last days' checkpoints, cut: recall shows them whole when they
# answer, so a context takes Layer 1's other lines (topics, patterns, working notes).
LAYER1_SKIP = ("Active Context",)
# A piece longer than `long_piece` shows its passage of `passage_tokens` that matches the query
# (`passages.py`): two or three sentences. Shorter pieces are whole: a conversation's turn is
# rarely longer, and LoCoMo's evidence counts only whole.
# An imported exchange shows its reply's passage that matches the query, after the user's words,
# `reply_passage_tokens` long (0: none): the answer is in the reply ("How did I fix the
# SettingWithCopyWarning?" is answered by the reply's `.copy()`, never by the old question).
# An imported exchange's request (the user's words to an assistant) longer than
# `exchange_long_piece` tokens shows its passage of `exchange_passage_tokens` that matches the
# query: a sentence or two that says which conversation it was, so the budget holds more
# conversations (the full exchange is one `%recall` or file open away). Only exchanges: a turn
# of a dialogue between people (LoCoMo) is often the evidence itself and stays whole up to
# `long_piece`. (All `RecallSettings` fields: requests.py says what chose each.)
# The context is full when this many pieces in a row did not fit: the rest rank lower still,
# and rendering each (its passage, its tokens) was most of the packing's time at a year.
FULL_AFTER_MISSES = 20
TOKENS_PER_HIT = 12  # hits asked of recall per budget token: more than the budget can hold
MIN_CANDIDATES, MAX_CANDIDATES = 10, 200
# Who wrote a group of pieces, when not the user: on the group's line (once per file and
# writer, not per piece: a conversation's turns are all imported). Read from the typed writer.
WRITER_LABELS = {
    CLAUDE: "an LLM call's write-back",
    AGENT: "written by an agent",
    IMPORT: "imported",
    TEAMMATE: "a teammate's",
}
QUERY_CHARS = 60  # the query as the fence's attribute: enough to recognise, not a second copy
NOTHING = "(nothing found)"


@dataclass(frozen=True)
class Context:
    """The text sent to a model for `query`, and what it holds."""

    query: str
    text: str
    tokens: int  # count_tokens(text), never over `budget`
    budget: int
    hits: list[Hit] = field(default_factory=list)  # the pieces in the text, best first
    layer1_tokens: int = 0  # tokens of the Layer 1 part (0 with layer1=False)
    mode: str = "keyword"  # how recall ranked: keyword | semantic | hybrid

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, object]:
        """The context as `hipo recall --context --json` and the server's `budget=` give it."""
        return {
            "query": self.query,
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "layer1_tokens": self.layer1_tokens,
            "mode": self.mode,
            "hits": [hit.to_json() for hit in self.hits],
        }


def check_budget(budget: object) -> int:
    """The budget as an int, or a one-line QueryError saying what is accepted."""
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise QueryError(f"budget must be a whole number of tokens, not {budget!r}")
    if budget < MIN_BUDGET:
        raise QueryError(f"budget must be at least {MIN_BUDGET} tokens, not {budget}")
    return budget


def candidates(budget: int) -> int:
    """How many hits to ask recall for: about one per TOKENS_PER_HIT tokens of budget, so the
    packing has more than fits even when pieces are short (a conversation's turns)."""
    return max(MIN_CANDIDATES, min(MAX_CANDIDATES, budget // TOKENS_PER_HIT))


def build(
    query: str,
    *,
    budget: int,
    layer1: Callable[[], str] | None,
    recall: Callable[[int], RecallResult],
    documents: Callable[[Sequence[str]], Mapping[str, Document]],
    conversation: str | None = None,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> Context:
    """The context for `query` (see the module docstring). `recall(k)` runs the recall (its
    arguments checked there), `documents(ids)` reads the full text of hits from the index,
    `layer1()` gives Layer 1's text (None: left out); each is called after the arguments
    were checked, so bad input costs nothing. With `conversation` (a `%%ask` conversation's
    identity), that conversation's own write-backs are left out: its turns are in it already."""
    budget = check_budget(budget)
    result = recall(candidates(budget))
    if conversation:
        kept = [hit for hit in result.hits if hit.conversation != conversation]
        result = RecallResult(query=result.query, hits=kept, mode=result.mode)
    stems = query_stems(result.query or query)
    text = layer1().strip() if layer1 is not None else ""
    cap = int(budget * settings.layer1_share)
    prefix = matching_lines(escape_fence(text), stems, cap, LAYER1_SKIP) if text else ""
    layer1_tokens = count_tokens(prefix)
    found = documents([document_id(hit.file, hit.line) for hit in result.hits])
    head = _fence_open(result.query or query)
    used = count_tokens(_join(prefix, head, []))
    room = budget - used
    chosen: list[tuple[Hit, str]] = []
    groups: set[tuple[str, str, str]] = set()
    misses = 0
    for hit in result.hits:
        if room < 8 or misses == FULL_AFTER_MISSES:  # nothing of use fits in what is left
            break
        doc = found.get(document_id(hit.file, hit.line))
        line = piece_line(hit, doc, stems, settings=settings)
        cost = count_tokens(line) + 1
        group = (hit.date, hit.file, hit.writer)
        if group not in groups:
            cost += count_tokens(group_line(hit)) + 1
        if cost > room:
            misses += 1
            continue
        misses = 0
        room -= cost
        groups.add(group)
        chosen.append((hit, line))
    text = _join(prefix, head, chosen)
    tokens = count_tokens(text)
    while tokens > budget and chosen:
        chosen.pop()
        text = _join(prefix, head, chosen)
        tokens = count_tokens(text)
    return Context(
        query=result.query or query.strip(),
        text=text,
        tokens=tokens,
        budget=budget,
        hits=[hit for hit, _ in chosen],
        layer1_tokens=layer1_tokens,
        mode=result.mode,
    )


def piece_line(
    hit: Hit,
    doc: Document | None,
    stems: frozenset[str],
    *,
    reply_tokens: int | None = None,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> str:
    """One piece as the context shows it: `L<line> <title> [<type>]: <text>`, the text the
    checkpoint's fields and words (the search snippet when the index no longer has it), or,
    when longer than `long_piece` tokens, its passage of `passage_tokens` that best matches the
    query's `stems` (`passages.py`); its later lines indented. A note a later one changed
    (`supersession.py`) says so on its last line, with where the later one is. A title the
    shown text begins with (made from the text: an imported turn's, a note written without
    one) is not said twice: `L<line> [<type>]: <text>`."""
    text = doc.text if doc is not None else hit.snippet
    exchange = hit.writer == IMPORT
    body = piece_body(text, stems, exchange=exchange, reply_tokens=reply_tokens, settings=settings)
    if hit.changed_later:
        body = f"{body}\n({CHANGED_LATER} {hit.changed_later})"
    body = body.replace("\n", "\n  ")
    label = hit.type if hit.kind == "raw" else hit.kind
    if is_proposal(hit):  # who proposed it and that it is not in force (`mark_proposals`)
        label = (
            f"{label}; from {hit.provenance}" if label != "project" else f"from {hit.provenance}"
        )
    tag = f" [{label}]" if label and label != "project" else ""
    title = " ".join(hit.title.split())
    if title and " ".join(body.split()).startswith(title):
        return escape_fence(f"L{hit.line}{tag}: {body}")
    return escape_fence(f"L{hit.line} {title}{tag}: {body}")


def piece_body(
    text: str,
    stems: frozenset[str],
    *,
    exchange: bool = False,
    reply_tokens: int | None = None,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> str:
    """A piece's text as shown. An imported exchange (`exchanges.py`) shows the user's words
    first, then, after an arrow, the reply's passage that best matches the query
    (`reply_tokens`, else `settings.reply_passage_tokens`; 0: the request alone): what was
    answered, which a question about a past fix asks for."""
    parts = split_shown(text) if exchange else None
    if parts is None:
        return passage(text, stems, settings.passage_tokens, whole_within=settings.long_piece)
    request, reply = parts
    shown = passage(
        request,
        stems,
        settings.exchange_passage_tokens,
        whole_within=settings.exchange_long_piece,
    )
    reply_tokens = settings.reply_passage_tokens if reply_tokens is None else reply_tokens
    if reply_tokens <= 0 or not reply.strip():
        return shown
    return f"{shown}\n-> {passage(reply, stems, reply_tokens)}"


def group_line(hit: Hit) -> str:
    """The line over a source file's pieces by one writer: where it is and its date, once (a
    raw log's or a node's path holds its date, `memory/2026-03-12.md`; other files get it after
    the path: about 6 tokens less per source than date and path both, which at small budgets is
    a turn), and, when anyone but the user wrote them, who did (`WRITER_LABELS`, from the
    hit's typed writer): what an agent, an import or a teammate wrote never reads as the
    user's word."""
    where = hit.file
    if hit.author:  # a team hit: whose memory, which notebook
        owner = f"{hit.author}/{hit.notebook}" if hit.notebook else hit.author
        where = f"{owner}: {hit.file}"
    if hit.date and hit.date not in hit.file:
        where = f"{where} ({hit.date})"
    label = WRITER_LABELS.get(hit.writer)
    return escape_fence(f"{where} [{label}]" if label else where)


def _fence_open(query: str) -> str:
    """The recall fence's attributes: the query, cut to QUERY_CHARS."""
    shown = " ".join(query.split())
    if len(shown) > QUERY_CHARS:
        shown = shown[: QUERY_CHARS - 3].rstrip() + "..."
    return f' query="{quote_attribute(shown)}"'


def _in_time_order(item: tuple[Hit, str]) -> tuple[str, str, str, int]:
    """A file's pieces by date and file, each writer's together (one group line each)."""
    hit = item[0]
    return (hit.date, hit.file, hit.writer, hit.line)


def _join(prefix: str, head: str, chosen: Sequence[tuple[Hit, str]]) -> str:
    """Layer 1 in its fence, then the recall fence with the chosen pieces in time order,
    grouped by source file: everything from memory is quoted data (`fence.py`)."""
    lines = [RECALL_PREAMBLE, ""]
    if not chosen:
        lines.append(NOTHING)
    group = None
    for hit, line in sorted(chosen, key=_in_time_order):
        if (hit.date, hit.file, hit.writer) != group:
            group = (hit.date, hit.file, hit.writer)
            lines.append(group_line(hit))
        lines.append(line)
    fenced = wrap(RECALL_TAG, "\n".join(lines), head)
    return f"{wrap(LAYER1_TAG, prefix)}\n\n{fenced}" if prefix else fenced
