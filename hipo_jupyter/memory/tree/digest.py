"""How the extractive summary reads its sources: Markdown in, items per section out.

It works on the Markdown directly, line by line (`Digest.read`):
- `## Title [type] #tags` starts a checkpoint; `- key: value` lines are its fields (indented lines
  continue a field, indented bullets are more values of it); other lines are free text.
- A heading that names a summary section (`## Key Decisions`, `## Carried Forward`, ...) starts
  that section instead, so summaries of summaries merge section by section, daily names and
  monthly names alike. Period headers (`# Weekly 2026-W11`), HTML comments (our
  `<!-- hipo ... -->` lines included), frontmatter and fenced code are not content.
- decisions -> Key Decisions, outcomes and `[x]` -> Tasks Completed, feedback rules, lessons and
  what `[user]` entries say -> Lessons Learned, anything that says open/todo/next/pending/blocked
  (and `[ ]`) -> Open Items as well. Free text is sorted by its cue words. Each item is prefixed
  with its checkpoint's title slug. Identifiers from the request, analysis and references ride
  along on the task's line as `(refs: ...)`.
- Values are trimmed to ~200 characters on a word boundary; identifiers and numbers from the cut
  part are appended in brackets. When a section has more items than the line budget allows, the
  last line lists the rest as `- also: slug (identifiers), ...`, so nothing searchable is lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .topics import (
    find_identifiers,
    heading_title,
    identifiers,
    is_period_heading,
    section_category,
    slug,
    strip_comments,
    strip_frontmatter,
)

__all__ = ["LIST_CATEGORIES", "REFS_PER_ITEM", "VALUE_CHARS", "Digest", "Item"]

VALUE_CHARS = 200  # a value longer than this is trimmed (identifiers in the cut part are kept)
REFS_PER_ITEM = 8
LIST_CATEGORIES = ("decisions", "completed", "open", "lessons", "themes")  # budget priority
_ENTITY_LABELS = ("users", "services", "files", "errors", "patterns")
_ENTITY_KIND = {
    "user": "users",
    "email": "users",
    "url": "files",
    "path": "files",
    "file": "files",
    "error": "errors",
    "ticket": "services",
    "issue": "services",
    "hash": "services",
    "code": "services",
    "camel": "services",
    "snake": "services",
    "acronym": "services",
}
_ENTITY_LABEL_NAMES = {
    "user": "users",
    "users": "users",
    "people": "users",
    "service": "services",
    "services": "services",
    "identifiers": "services",
    "ids": "services",
    "file": "files",
    "files": "files",
    "paths": "files",
    "links": "files",
    "error": "errors",
    "errors": "errors",
    "pattern": "patterns",
    "patterns": "patterns",
}
_FIELDS = {
    "decision": "decisions",
    "decisions": "decisions",
    "decided": "decisions",
    "outcome": "outcome",
    "outcomes": "outcome",
    "result": "outcome",
    "results": "outcome",
    "done": "outcome",
    "completed": "outcome",
    "request": "request",
    "task": "request",
    "goal": "request",
    "ask": "request",
    "analysis": "analysis",
    "findings": "analysis",
    "context": "analysis",
    "notes": "analysis",
    "note": "analysis",
    "references": "references",
    "reference": "references",
    "refs": "references",
    "ref": "references",
    "links": "references",
    "sources": "references",
    "files": "references",
    "rule": "rule",
    "why": "why",
    "reason": "why",
    "how to apply": "how",
    "apply": "how",
    "lesson": "lessons",
    "lessons": "lessons",
    "learned": "lessons",
    "lesson learned": "lessons",
    "lessons learned": "lessons",
    "takeaway": "lessons",
    "takeaways": "lessons",
    "todo": "todo",
    "next": "todo",
    "next step": "todo",
    "next steps": "todo",
    "open": "todo",
    "open items": "todo",
    "open questions": "todo",
    "question": "todo",
    "questions": "todo",
    "pending": "todo",
    "blocked": "todo",
    "blocker": "todo",
    "blockers": "todo",
    "follow up": "todo",
}
_CONTEXT_FIELDS = ("request", "analysis", "references")

_WORD_EDGE_L = r"(?<![\w./@#-])"
_WORD_EDGE_R = r"(?![\w./-])"
_OPEN_CUE = re.compile(
    _WORD_EDGE_L + r"(?:open(?! source)|todo|to-do|next(?!\.js)|pending|blocked|blockers?|blocking"
    r"|follow[- ]?ups?|waiting|unresolved|tbd|outstanding)" + _WORD_EDGE_R,
    re.IGNORECASE,
)
_DECISION_CUE = re.compile(
    r"\b(?:decid(?:e|ed|es|ing)|decisions?|chose|chosen|choosing|agreed|opted|settled on"
    r"|go(?:ing)? with|went with|switch(?:ed|ing)? to|will use|recommend(?:s|ed|ing)?"
    r"|approved|rejected|picked)\b",
    re.IGNORECASE,
)
_LESSON_CUE = re.compile(
    r"\b(?:lessons?|learned|learnt|takeaways?|gotcha|pitfall|mistake|note to self|turns out"
    r"|root cause)\b",
    re.IGNORECASE,
)
_DONE_CUE = re.compile(
    r"\b(?:done|completed?|finished|shipped|merged|deployed|released|fixed|resolved|implemented"
    r"|published|delivered|launched|migrated|closed|wrote|built|added|created|shared|sent"
    r"|uploaded|passed)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    _WORD_EDGE_L + r"(?:basically|actually|really|just|simply|literally|kind of|sort of|you know"
    r"|i think|i guess|i mean|um+|uh+|hmm+|erm|please|thanks|thank you|lol)" + _WORD_EDGE_R + ",?",
    re.IGNORECASE,
)
_EMPTY_VALUES = frozenset(["", "none", "(none)", "n/a", "na", "nothing", "-", "\u2014", "nil"])

_HEADING = re.compile(r"#{1,6}(?:[ \t]+(.*?))?[ \t]*#*[ \t]*")
_COMMENT_LINE = re.compile(r"\s*<!--.*-->\s*")
_FENCE = re.compile(r"\s*(```|~~~)")
_BULLET = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]+(.*)")
_CHECKBOX = re.compile(r"\[([ xX])\][ \t]*(.*)")
_FIELD = re.compile(r"(?:\*\*)?([A-Za-z][A-Za-z0-9 _-]{0,29}?)(?:\*\*)?[ \t]*:(?!//)[ \t]*(.*)")
_ENTITY_LINE = re.compile(r"(?:[-*+][ \t]+)?([A-Za-z]+)[ \t]*:[ \t]*(.*)")
_SLUG_PREFIX = re.compile(r"([\w.-]{1,60}):[ \t]+(.*)")
_PUNCT_SPACE = re.compile(r"\s+([,.;:!?])(?=\s|$)")


# --- reading -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    slug: str
    text: str

    def line(self) -> str:
        return f"- {self.slug}: {self.text}" if self.slug else f"- {self.text}"

    def key(self) -> str:
        """Items say the same when their text does; short texts ("done") also need the slug."""
        text = " ".join(self.text.lower().split()).rstrip(".;,")
        return text if len(text) >= 40 else f"{self.slug.lower()}: {text}"


@dataclass
class _Entry:
    """One checkpoint (or the untitled text before the first heading) while it is read."""

    slug: str = ""
    kind: str = "project"
    fields: list[list[str]] = field(default_factory=list)  # [field, value] in order; "" = free

    def add(self, name: str, value: str) -> None:
        self.fields.append([name, value])

    def extend_last(self, text: str) -> None:
        self.fields[-1][1] = f"{self.fields[-1][1]} {text}".strip()


def _entry_from_heading(title: str) -> _Entry:
    kind = "project"
    match = re.search(r"\[(project|feedback|user|reference)\]", title, re.IGNORECASE)
    if match:
        kind = match.group(1).lower()
    name = heading_title(title).strip("[] \t")
    return _Entry(slug=slug(name), kind=kind)


class Digest:
    """Everything kept from the sources, deduplicated, in order of first appearance."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Item]] = {cat: {} for cat in LIST_CATEGORIES}
        self.orphans: dict[str, None] = {}  # identifiers with no item to ride on
        # label -> value -> [count, first-seen order, {source index: None}]
        self.entities: dict[str, dict[str, list]] = {label: {} for label in _ENTITY_LABELS}

    def read(self, source: int, text: str) -> None:
        section: str | None = None
        entry: _Entry | None = None
        last_field: str | None = None
        for kind, line in _content_lines(text):
            if kind == "code":
                self._entities_from(line, source, only_errors=True)
                continue
            stripped = line.strip()
            if not stripped:
                last_field = None
                continue
            heading = _HEADING.fullmatch(stripped)
            if heading:
                self._close(entry)
                entry, last_field = None, None
                title = heading.group(1) or ""
                section = section_category(title)
                if section is None and not is_period_heading(title):
                    entry = _entry_from_heading(title)
                continue
            if section is not None:
                self._section_line(section, stripped, source)
                continue
            self._entities_from(stripped, source)
            if entry is None:
                entry = _Entry()
            last_field = _read_entry_line(entry, line, stripped, last_field)
        self._close(entry)

    def add(self, category: str, item: Item) -> None:
        if item.text:
            self.items[category].setdefault(item.key(), item)

    def _section_line(self, section: str, stripped: str, source: int) -> None:
        if section == "topics":
            return  # node_topics reads Topics sections itself
        if section == "entities":
            match = _ENTITY_LINE.fullmatch(stripped)
            label = _ENTITY_LABEL_NAMES.get(match.group(1).lower()) if match else None
            if match and label:
                for value in match.group(2).split(","):
                    value = value.strip()
                    if value.lower() not in _EMPTY_VALUES:
                        self._add_entity(label, value, source)
            else:
                self._entities_from(stripped, source)
            return
        self._entities_from(stripped, source)
        bullet = _BULLET.fullmatch(stripped)
        body = bullet.group(1) if bullet else stripped
        checkbox = _CHECKBOX.fullmatch(body)
        if checkbox:
            body = checkbox.group(2)
        prefix = _SLUG_PREFIX.fullmatch(body)
        name, text = (prefix.group(1), prefix.group(2)) if prefix else ("", body)
        text = _squeeze(text)
        if _is_empty(text):
            return
        if len(text) > 2 * VALUE_CHARS:  # already-trimmed lines are left as they are
            text = _trim(text)
        self.add(section, Item(name, text))

    def _close(self, entry: _Entry | None) -> None:
        """Turn a finished checkpoint into section items."""
        if entry is None:
            return
        emitted: list[tuple[str, Item]] = []
        context: list[str] = []
        feedback: dict[str, list[str]] = {"rule": [], "why": [], "how": []}
        for name, raw_value in entry.fields:
            value = _squeeze(raw_value)
            if _is_empty(value):
                continue
            if name in feedback:
                feedback[name].append(value)
                categories = []
            elif name == "decisions":
                categories = ["decisions"]
            elif name in ("outcome", "done"):
                categories = ["completed"]
            elif name == "lessons":
                categories = ["lessons"]
            elif name == "todo":
                categories = ["open"]
            elif name in _CONTEXT_FIELDS:
                context.append(value)
                categories = []
            else:
                categories = _categories_of_free_text(value, entry.kind)
                if not categories:
                    context.append(value)
            if name != "references" and "open" not in categories and _OPEN_CUE.search(value):
                categories.append("open")
            item = Item(entry.slug or slug(value, 3), _trim(value))
            emitted.extend((category, item) for category in categories)
        lesson = _feedback_text(feedback)
        if lesson:
            emitted.insert(0, ("lessons", Item(entry.slug or slug(lesson, 3), _trim(lesson))))
        emitted = _attach_refs(emitted, context, self.orphans)
        for category, item in emitted:
            self.add(category, item)

    def _entities_from(self, text: str, source: int, only_errors: bool = False) -> None:
        for ident in find_identifiers(text):
            label = _ENTITY_KIND.get(ident.kind)
            if label and (label == "errors" or not only_errors):
                self._add_entity(label, ident.value, source)

    def _add_entity(self, label: str, value: str, source: int) -> None:
        values = self.entities[label]
        if value not in values:
            values[value] = [0, len(values), {}]
        values[value][0] += 1
        values[value][2][source] = None

    def entity_lines(self, limit: int) -> list[str]:
        """`label: a, b` lines; values seen in more sources, then more often, come first."""
        lines = []
        for label in _ENTITY_LABELS:
            values = self.entities[label]
            ranked = sorted(values, key=lambda v: (-len(values[v][2]), -values[v][0], values[v][1]))
            if ranked and limit > 0:
                lines.append(f"{label}: {', '.join(ranked[:limit])}")
        return lines


def _read_entry_line(entry: _Entry, line: str, stripped: str, last_field: str | None) -> str | None:
    """File one line of a checkpoint under a field or as free text; return the open field."""
    indented = line[:1] in (" ", "\t")
    bullet = _BULLET.fullmatch(stripped)
    if bullet:
        body = bullet.group(1)
        checkbox = _CHECKBOX.fullmatch(body)
        if checkbox:
            entry.add("done" if checkbox.group(1) in "xX" else "todo", checkbox.group(2))
            return None
        match = _FIELD.fullmatch(body)
        name = _FIELDS.get(_field_name(match.group(1))) if match else None
        if match and name:
            entry.add(name, match.group(2))
            return name
        if indented and last_field is not None:
            entry.add(last_field, body)  # a sub-bullet of a field is one more value of it
            return last_field
        entry.add("", body)
        return None
    if indented and last_field is not None:
        entry.extend_last(stripped)
        return last_field
    entry.add("", stripped)
    return None


def _field_name(label: str) -> str:
    """A field label as _FIELDS spells it: "How-to-apply" -> "how to apply"."""
    return " ".join(label.lower().replace("-", " ").replace("_", " ").split())


def _content_lines(text: str) -> list[tuple[str, str]]:
    """("text" | "code", line) for each line that may carry content."""
    lines = []
    in_code = False
    in_comment = False
    for line in strip_frontmatter(text).splitlines():
        if in_comment:
            in_comment = "-->" not in line
            continue
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            lines.append(("code", line))
            continue
        if _COMMENT_LINE.fullmatch(line):
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_comment = True
            continue
        lines.append(("text", strip_comments(line).rstrip()))
    return lines


def _categories_of_free_text(value: str, kind: str) -> list[str]:
    if kind in ("feedback", "user"):
        return ["lessons"]
    if kind == "reference":
        return []
    for category, cue in (
        ("decisions", _DECISION_CUE),
        ("lessons", _LESSON_CUE),
        ("completed", _DONE_CUE),
    ):
        if cue.search(value):
            return [category]
    return []


def _feedback_text(feedback: dict[str, list[str]]) -> str:
    parts = ["; ".join(feedback["rule"])]
    if feedback["why"]:
        parts.append("why: " + "; ".join(feedback["why"]))
    if feedback["how"]:
        parts.append("apply: " + "; ".join(feedback["how"]))
    return " \u2014 ".join(part for part in parts if part)


def _attach_refs(
    emitted: list[tuple[str, Item]], context: list[str], orphans: dict[str, None]
) -> list[tuple[str, Item]]:
    """Identifiers from request/analysis/references/free text go on the task's outcome line
    (else its first decision); with neither they become topics."""
    shown = " ".join(item.text for _, item in emitted)
    refs = [ident for text in context for ident in identifiers(text) if not _mentions(shown, ident)]
    refs = list(dict.fromkeys(refs))[:REFS_PER_ITEM]
    if not refs:
        return emitted
    for wanted in ("completed", "decisions"):
        for category, item in emitted:
            if category == wanted:
                with_refs = Item(item.slug, f"{item.text} (refs: {', '.join(refs)})")
                return [(c, with_refs if i is item else i) for c, i in emitted]
    for ref in refs:
        orphans.setdefault(ref, None)
    return emitted


# --- text helpers --------------------------------------------------------------------------
def _mentions(text: str, value: str) -> bool:
    """`value` occurs in `text` as a whole token ("5" is not in "15%")."""
    return re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w]|\.\w)", text) is not None


def _squeeze(text: str) -> str:
    """One line, filler words out, whitespace collapsed, bold markers dropped."""
    text = _FILLER.sub(" ", strip_comments(text).replace("**", ""))
    text = _PUNCT_SPACE.sub(r"\1", " ".join(text.split()))
    return text.strip(" ,;")


def _is_empty(text: str) -> bool:
    return text.strip(" .:;,!").lower() in _EMPTY_VALUES


def _trim(text: str, limit: int = VALUE_CHARS) -> str:
    """Cut at a word boundary near `limit`, never inside an identifier, and append the
    identifiers and numbers of the cut part: "first part ... [JIRA-12, 15%]"."""
    if len(text) <= limit:
        return text
    spans = find_identifiers(text)
    cut = text.rfind(" ", 0, limit + 1)
    if cut <= 0:
        cut = limit
    for ident in reversed(spans):
        if ident.start < cut < ident.end:
            cut = ident.start
    head = text[:cut].rstrip(" ,;:-\u2014")
    cut_part = dict.fromkeys(ident.value for ident in spans if ident.start >= cut)
    kept = [value for value in cut_part if not _mentions(head, value)]
    out = f"{head} \u2026" if head else "\u2026"
    if kept:
        out += f" [{', '.join(kept)}]"
    return out
