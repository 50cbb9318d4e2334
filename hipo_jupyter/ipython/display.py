"""How engine results look in IPython: plain text for terminals and logs, HTML for notebooks.

The engine returns plain dataclasses and knows nothing of HTML; this module is the only place
that turns them into something to read. `RecallView` wraps a RecallResult with rich reprs, so
`%recall pricing` renders in a notebook and `hits = %recall pricing` is still the result.
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from IPython.display import display

from hipo_jupyter.memory import CompactionReport, Layer1, RecallResult, render
from hipo_jupyter.memory.tree import count_tokens
from hipo_jupyter.memory.views import Rule, proposals_text, rules_index_text
from hipo_jupyter.terminal import visible


# --- recall -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecallView(RecallResult):
    """A RecallResult that knows how to show itself; iterates, indexes and counts its hits."""

    @classmethod
    def of(cls, result: RecallResult) -> RecallView:
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)})

    def __str__(self) -> str:
        return visible(render.recall_text(self))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(visible(render.recall_text(self)))  # a terminal IPython obeys escapes

    def _repr_html_(self) -> str:
        return recall_html(self)


def shown_html(text: str) -> str:
    """Stored text as notebook HTML: escaped, so it is never live HTML, with its control and
    invisible format characters (bidi overrides, zero-width, tags) as visible escapes
    (`visible`), so a browser obeys none of them. Every HTML output of stored text uses it."""
    return html.escape(visible(text))


LEFT = "text-align:left;vertical-align:top"
"""Every cell of the recall table: JupyterLab's notebook CSS right-aligns table cells, which
leaves titles and text ragged on the left."""


def recall_html(result: RecallResult) -> str:
    """The notebook's table of a recall, from the fields of its JSON (the same the CLI's
    `--json` and the server give), with the text renderer's caption and drill-down."""
    esc = shown_html
    if not result.hits:
        return f"<div class='hipo-recall'><em>{esc(render.no_hits_text(result))}</em></div>"
    rows = []
    for hit, data in zip(result.hits, result.to_json()["hits"], strict=True):
        by = f" (by {data['author']} in {data['notebook']})" if data.get("author") else ""
        source = render.hit_source(hit)  # where it came from, and its id
        rows.append(
            "<tr>"
            f"<td style='{LEFT};white-space:nowrap'>{esc(data['date'])}</td>"
            f"<td style='{LEFT}'>{esc(data['type'] or data['kind'])}</td>"
            f"<td style='{LEFT}'><b>{esc(data['title'])}</b>{esc(by)}<br>{esc(data['snippet'])}<br>"
            f"<small><code>{esc(render.drill_down(hit))}</code></small>"
            + (f"<br><small>{esc(source)}</small>" if source else "")
            + "</td>"
            "</tr>"
        )
    return (
        "<div class='hipo-recall'><table>"
        f"<caption style='text-align:left'>{esc(render.recall_caption(result))}</caption>"
        "<thead><tr>"
        + "".join(f"<th style='{LEFT}'>{name}</th>" for name in ("date", "type", "memory"))
        + "</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


# --- rules ----------------------------------------------------------------------------------
def rules_text(rules: Sequence[Rule], waiting: Sequence[Rule] = ()) -> str:
    """`%hipo rules`: the rules index, active rules first, then the superseded ones, then the
    rules others proposed, each with who proposed it and its ID."""
    text = rules_index_text(list(rules)) or (
        'no rules yet: %%remember TITLE --type feedback --trigger "before a deploy" '
        '--rule "..." writes one\n'
    )
    proposed = proposals_text(list(waiting), "%hipo rules accept")
    return (text + ("\n" + proposed if proposed else "")).rstrip()


# --- the engine's text, as the magics print it ----------------------------------------------
def report_text(report: CompactionReport) -> str:
    """A compaction pass as `%hipo compact` and `%load_ext` show it: without the list of nodes."""
    return render.compaction_text(report, list_built=False)


def startup_text(
    root: Path,
    report: CompactionReport | None,
    layer1: Layer1 | None,
    topics: int,
    error: str | None = None,
    proposals: int = 0,
) -> str:
    """The one screen `%load_ext hipo` shows: where, what was compacted, Layer 1, topics, and
    the rules others proposed that wait for the user."""
    lines = [f"hipo: memory at {root}"]
    if error:
        lines.append(f"  could not start: {error}")
        lines.append("  fix it (e.g. %config Hipo.root = '...'), then %hipo compact")
        return "\n".join(lines)
    if report is not None:
        lines.extend("  " + line.strip() for line in report_text(report).splitlines())
    if layer1 is not None:
        lines.append("  " + render.layer1_line(layer1))
    lines.append(f"  topics: {topics}")
    if proposals:
        lines.append(
            f"  {proposals} proposed rule{'s' if proposals > 1 else ''} (not in force) "
            "wait for you: %hipo rules"
        )
    return "\n".join(lines)


def summaries_line(done: int, total: int, node: str) -> str:
    """The line that shows the summaries a model writes in the background (`tree/background`)."""
    if node == "done" or (total and done >= total):
        return f"hipo: {done} summaries written in the background; Layer 1 carries them now"
    step = f": {done}/{total} done" + (f", writing {node}" if node else "")
    return (
        f"hipo: the model writes {total} summaries in the background{step}; until each lands "
        "Layer 1 and recall use the extractive one"
    )


# --- Claude calls ----------------------------------------------------------------------------
def claude_line(inject: bool, model: str, summarizer: str, clients: Sequence[str] = ()) -> str:
    """The line `%load_ext hipo` adds about LLM calls: which SDKs' calls get Layer 1."""
    sdks = ", ".join(clients) or "no SDK"
    state = f"injected into {sdks} calls" if inject else "not injected (%hipo inject on)"
    return f"  Claude: Layer 1 {state}; %%ask model {model}; summaries {summarizer}"


def usage_line(usage: Any, model: str) -> str:
    """One line under a %%ask reply: input, output, cache-read and cache-write tokens."""

    def number(name: str) -> str:
        value = getattr(usage, name, None)
        return f"{value:,}" if isinstance(value, int) else "-"

    return (
        f"tokens: input {number('input_tokens')} · output {number('output_tokens')} · "
        f"cache read {number('cache_read_input_tokens')} · "
        f"cache write {number('cache_creation_input_tokens')}  ({model})"
    )


def incomplete_line(reason: str) -> str:
    """The one line under a reply that is not whole (`llm.read_stream`)."""
    return (
        f"this reply is incomplete: {reason}; it is kept marked incomplete in the "
        "conversation and the write-back"
    )


def cache_text(
    usage: Any, model: str, layer1_tokens: int, minimum: int, fence_tokens: int = 0
) -> str:
    """`%hipo budget`'s prompt-cache lines: whether Layer 1 (`layer1_tokens`, the figure the
    budget shows, plus `fence_tokens` of hipo's fence and preamble around it) reaches the
    model's minimum cacheable prefix, and the cache read and write tokens the API reported for
    the last call."""
    verdict = (
        "cached (a breakpoint ends it)"
        if layer1_tokens + fence_tokens >= minimum
        else "under the minimum, so not cached until the memory grows"
    )
    fence = f" (+{fence_tokens:,} for its fence)" if fence_tokens else ""
    lines = [
        f"prompt cache ({model}: minimum {minimum:,} tokens): Layer 1 {layer1_tokens:,} "
        f"tokens{fence}, {verdict}"
    ]
    if usage is None:
        lines.append("last Claude call: none yet in this kernel")
    else:

        def number(name: str) -> str:
            value = getattr(usage, name, None)
            return f"{value:,}" if isinstance(value, int) else "-"

        lines.append(
            f"last Claude call: cache read {number('cache_read_input_tokens')} · cache write "
            f"{number('cache_creation_input_tokens')} · input {number('input_tokens')} tokens"
        )
    return "\n".join(lines)


def conversation_text(conversation: Any, path: str, window: int) -> str:
    """`%ask status`: the three zones and the compaction log of the conversation."""
    active = sum(turn.tokens for turn in conversation.active)
    lines = [
        f"conversation {path}: {conversation.turns} turns, "
        f"live {conversation.live_tokens():,} / {window:,} tokens",
        f"  anchor: {count_tokens(conversation.anchor):,} tokens (sha256 "
        f"{conversation.anchor_hash or '-'})",
        f"  summary: {count_tokens(conversation.summary):,} tokens, "
        f"{conversation.folded} turns folded",
        f"  active: {len(conversation.active)} turns, {active:,} tokens",
    ]
    for event in conversation.compactions[-5:]:
        lines.append(f"  {event.at} {event.line()}")
    return "\n".join(lines)


# --- a model's words, as inert HTML --------------------------------------------------------
# What the reply's HTML may hold after cleaning: nh3's text formatting, lists, tables, code
# and links, without <img>, <area> and <map>: nothing is fetched unless the person clicks.
NOT_INERT_TAGS = frozenset({"img", "area", "map"})
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"


@lru_cache(maxsize=1)
def inert_tags() -> frozenset[str]:
    import nh3

    return frozenset(nh3.ALLOWED_TAGS) - NOT_INERT_TAGS


@lru_cache(maxsize=1)
def _markdown() -> Any:
    """mistune's Markdown to HTML where raw HTML is text (`escape=True`) and an image is a
    link; made on the first reply (mistune is imported then, not at `%load_ext`)."""
    import mistune

    class InertRenderer(mistune.HTMLRenderer):
        def image(self, text: str, url: str, title: str | None = None) -> str:
            label = html.escape(mistune.util.striptags(text) or url)
            return f'<a href="{self.safe_url(url)}">[image: {label}]</a>'

    return mistune.create_markdown(
        renderer=InertRenderer(escape=True), plugins=["strikethrough", "table"]
    )


def inert_html(markdown: str) -> str:
    """Markdown text from a model, an agent, a teammate or a file as HTML that cannot act.

    Why not hand the text to the notebook as `text/markdown`: JupyterLab renders Markdown with
    the HTML inside it, and the outputs of a notebook the user saved are trusted, so a
    `<script>`, an `onerror=` or an `<iframe srcdoc>` in a reply runs on every reopening, and
    `![x](http://host/?d=...)` fetches the moment the output is drawn. Here the Markdown is
    rendered in the kernel with raw HTML escaped into visible text and each image turned into a
    plain link (`[image: alt]`), then cleaned by nh3 (ammonia, a maintained allow-list
    sanitizer) to text formatting, lists, tables, code and links: no script, style, event
    attribute, frame, form or image survives, and links (http, https, mailto only, with
    rel="noopener noreferrer nofollow") load nothing until clicked. The HTML is inert in the
    saved file itself, so it stays inert whoever opens it, trusted or not."""
    import nh3

    rendered = str(_markdown()(markdown))
    return nh3.clean(
        rendered,
        tags=set(inert_tags()),
        url_schemes=set(LINK_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


# Rendering a reply is bounded whatever its text. mistune 3 is linear on every hostile shape
# measured (unmatched `*` and `_` runs, deep `>` nesting, brackets, backticks, wide tables:
# benchmarks/reply_render.py), at worst ~5 microseconds a character on a quiet 2-core machine
# and four times that on a busy one: a reply up to MARKDOWN_MAX_CHARS renders as Markdown in
# well under a second, a longer one is shown as escaped plain text. What made a 60 KB reply block
# the kernel for half a minute was the stream: the whole growing reply was rendered again for
# nearly every chunk (quadratic). Redrawing now takes at most RENDER_SHARE of the stream's time,
# and once the last redraw's cost a character says the next would take over
# SLOW_RENDER_SECONDS, the rest of the stream is drawn as plain text. The final drawing, the one
# the notebook keeps, is decided by the text alone (`reply_bundle`: Markdown up to
# MARKDOWN_MAX_CHARS), so a reply is saved the same on a busy machine as on a quiet one.
MARKDOWN_MAX_CHARS = 50_000
RENDER_SHARE = 0.2
SLOW_RENDER_SECONDS = 0.25
RATE_FROM_CHARS = 5_000  # below, a render's fixed cost would inflate the cost a character
SLOW_NOTE = "shown as plain text: rendering it as Markdown would be slow"


def plain_reply_html(shown: str, why: str) -> str:
    """The fallback: the reply as escaped text (nothing in it is markup), with one line
    saying why it is not rendered as Markdown."""
    return (
        f"<div class='hipo-reply hipo-reply-plain'><small>{html.escape(why)}</small>"
        f"<pre style='white-space:pre-wrap'>{html.escape(shown)}</pre></div>"
    )


def too_long_note(characters: int) -> str:
    return (
        f"shown as plain text: {characters:,} characters is over the "
        f"{MARKDOWN_MAX_CHARS:,} rendered as Markdown"
    )


def reply_bundle(text: str, *, markdown: bool = True) -> dict[str, str]:
    """A reply as a notebook keeps it: the inert HTML above, and the text (`jupyter console`,
    nbconvert to text or a reader without HTML shows that, often in a terminal); in both, its
    control characters are visible escapes, as everywhere hipo shows stored text. Past
    MARKDOWN_MAX_CHARS, or with `markdown` False, the HTML is the escaped text."""
    shown = visible(text)
    if len(shown) > MARKDOWN_MAX_CHARS:
        page = plain_reply_html(shown, too_long_note(len(shown)))
    elif not markdown:
        page = plain_reply_html(shown, SLOW_NOTE)
    else:
        page = f"<div class='hipo-reply'>{inert_html(shown)}</div>"
    return {"text/html": page, "text/plain": shown}


class ReplyView:
    """A reply as it streams in: inert HTML (`reply_bundle`) updated in place in a notebook (a
    few times a second, not per token, and less often when a redraw is costly: see
    RENDER_SHARE), plain text in a terminal."""

    UPDATE_SECONDS = 0.1

    def __init__(self, shell: Any) -> None:
        self._chunks: list[str] = []
        self._joined = 0  # chunks already joined into `_text`
        self._text = ""
        self._in_kernel = getattr(shell, "kernel", None) is not None
        self._handle: Any = None
        self._next = 0.0  # monotonic time of the next redraw
        self._markdown = True  # False once a redraw was slow: plain text for the rest
        self._seconds_per_char = 0.0  # the last Markdown redraw's cost, to foresee the next

    @property
    def text(self) -> str:
        """The reply so far (chunks are joined when read, so a long stream is not copied
        once a chunk)."""
        if self._joined < len(self._chunks):
            self._text += "".join(self._chunks[self._joined :])
            self._joined = len(self._chunks)
        return self._text

    def add(self, chunk: str) -> None:
        self._chunks.append(chunk)
        if not self._in_kernel:  # a terminal: its escapes shown, not obeyed
            sys.stdout.write(visible(chunk))
            sys.stdout.flush()
            return
        if self._handle is None:
            self._handle = self._show()
        elif time.monotonic() >= self._next:
            self._handle.update(self._bundle(), raw=True)

    def close(self) -> None:
        """The last drawing, the one the notebook keeps: from the text alone, whatever the
        stream's redraws cost (a busy machine must not save a reply as plain text for good)."""
        if not self._in_kernel:
            if self.text and not self.text.endswith("\n"):
                print()
        elif self._handle is None:
            if self.text:
                display(reply_bundle(self.text), raw=True)
        else:
            self._handle.update(reply_bundle(self.text), raw=True)

    def _bundle(self) -> dict[str, str]:
        """The reply so far, rendered; the next redraw waits so that redrawing takes at most
        RENDER_SHARE of the time, and a Markdown redraw foreseen (from the last one's cost a
        character) to take over SLOW_RENDER_SECONDS is plain text, as the rest of the reply."""
        text = self.text
        if self._seconds_per_char * len(text) > SLOW_RENDER_SECONDS:
            self._markdown = False
        started = time.monotonic()
        bundle = reply_bundle(text, markdown=self._markdown)
        cost = time.monotonic() - started
        if self._markdown and RATE_FROM_CHARS <= len(text) <= MARKDOWN_MAX_CHARS:
            self._seconds_per_char = cost / len(text)
        self._next = started + cost + max(self.UPDATE_SECONDS, cost / RENDER_SHARE)
        return bundle

    def _show(self) -> Any:
        return display(self._bundle(), raw=True, display_id=True)
