"""Deterministic topic extraction: slugs, #hashtags, key phrases, identifiers and node topics.

Why: every compaction node carries a `topics:` line and a Topics section, the ROOT.md Topics
Index is built from them, and the tree must work with no API key. They must also be stable: the
same text always gives the same list (ties are broken alphabetically, no set is iterated
unsorted), so a rebuilt node whose inputs did not change is byte-identical and the search index
does not churn. Everything here is a pure function of its text and never raises on odd input.

The functions understand our Markdown just enough to skip what is not content: the
`<!-- hipo ... -->` comment lines (whose `tags=` they read), fenced code, field labels
(`- decisions:`), `[type]` tags and the section headings of summary nodes.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

__all__ = [
    "STOPWORDS",
    "Identifier",
    "comment_tags",
    "find_identifiers",
    "hashtags",
    "heading_title",
    "identifiers",
    "is_period_heading",
    "key_phrases",
    "node_topics",
    "prose_lines",
    "section_category",
    "slug",
    "strip_comments",
    "strip_frontmatter",
]

_STOPWORD_TEXT = """
    a about above across after again against all almost along already also although always am
    among an and another any anybody anyone anything anyway anywhere are aren arent around as at
    away back be became because become becomes been before being below beside besides between
    beyond both but by can cannot cant could couldn couldnt did didn didnt do does doesn doesnt
    doing don done dont down during each either else elsewhere enough etc even ever every
    everybody everyone everything everywhere few for from further get gets getting got gotten
    had hadn hadnt has hasn hasnt have haven havent having he her here hers herself him himself
    his how however i if im in into is isn isnt it its itself ive just last least less let lets
    like likely made make makes making many may maybe me might mine more most mostly much must
    my myself near need needs neither never next no nobody none nor not nothing now of off often
    on once one only onto or other others otherwise our ours ourselves out over own per perhaps
    put quite rather re really s same say says see seem seemed seems several shall she should
    shouldn shouldnt since so some somebody someone something sometimes somewhat soon still such
    t than that thats the their theirs them themselves then there therefore these they theyre
    thing things this those though through thus to together too toward towards under until up
    upon us use used uses using very via want wants was wasn wasnt way we well went were weren
    werent what whatever when whenever where wherever whether which while who whoever whole whom
    whose why will with within without won wont would wouldn wouldnt yet you youd youll your
    youre yours yourself yourselves youve ll ve d m e.g i.e eg ie vs

    ok okay yeah yep yes nope sure thanks thank please lol hmm um uh erm hey hi hello cool nice
    great good fine basically actually simply literally kind sort stuff lot lots bit bits today
    yesterday tomorrow tonight anyway guess think thought know knew look looks looked lets
    gonna wanna gotta going goes go went also again new

    http https www com org net html refs apply
    ms sec secs min mins hrs kb mb gb tb px
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_SECTIONS = {
    "topics": "topics",
    "key decisions": "decisions",
    "major decisions": "decisions",
    "decisions": "decisions",
    "tasks completed": "completed",
    "completed work": "completed",
    "completed": "completed",
    "lessons learned": "lessons",
    "lessons and patterns": "lessons",
    "lessons": "lessons",
    "open items": "open",
    "carried forward": "open",
    "open questions": "open",
    "next steps": "open",
    "entities referenced": "entities",
    "recurring entities": "entities",
    "entities": "entities",
    "key themes": "themes",
    "themes": "themes",
}
_PERIOD_WORDS = frozenset(
    ["daily", "weekly", "monthly", "summary", "log", "notes", "day", "week", "month"]
)
_DATE_TOKEN = re.compile(r"\d+|w\d+", re.IGNORECASE)

_HIPO_PREFIX = re.compile(r"\s*hipo\b")
_TAGS_VALUE = re.compile(r"(?:^|\s)tags=(\"[^\"]*\"|'[^']*'|\S*)")
_HASHTAG = re.compile(r"(?<![\w#&/])#(\w[\w-]*)")
_HEADING = re.compile(r"#{1,6}(?:\s+(.*?))?\s*#*\s*$")
_TYPE_TAG = re.compile(r"\s*\[(?:project|feedback|user|reference)\]", re.IGNORECASE)
_TRAILING_TAGS = re.compile(r"(?:\s+#[^\s#]+){1,20}\s*$")
_FENCE = re.compile(r"\s*(```|~~~)")
_LABEL = re.compile(  # "- decisions: ", "users: ", "1. **Note**: "
    r"^\s*(?:[-*+]|\d+[.)])?\s*(?:\[[ xX]\]\s*)?(?:\*\*)?\w[\w -]{0,29}(?:\*\*)?:(?!//)(?:\s|$)"
)
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
# Topic names are a format of ROOT.md (a slug: words joined by "." or "-", apostrophes dropped)
# named with their own longer stop list, so they keep this split; its word is `words.WORD`'s run
# of letters and digits, and recall matches a slug by its words (`ranking.match_topics`).
_APOSTROPHE = re.compile(r"(?<=\w)['\u2019](?=\w)")
_SLUG_WORD = re.compile(r"[^\W_]+(?:[.-][^\W_]+)*")
_TOKEN = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")
_SEGMENT_BREAK = re.compile(  # phrases do not run across punctuation
    r"[,;:!?()\[\]{}\"<>|=*`/\\\u201c\u201d]|\.(?:\s|$)|\s[-\u2013\u2014]+\s|\u2014"
)
_TOPIC_JUNK = re.compile(r"[^\w .-]+")
_TOPIC_KEY = re.compile(r"[\s_-]+")


# --- identifiers ---------------------------------------------------------------------------
class Identifier(NamedTuple):
    """One identifier-like span of a text: what kind, its text, and where it is."""

    kind: str
    value: str
    start: int
    end: int


_FILE_EXT = (
    "md|markdown|py|ipynb|json|jsonl|csv|tsv|txt|yaml|yml|toml|ini|cfg|conf|ts|tsx|js|jsx|mjs|"
    "html|css|sql|db|sqlite|parquet|feather|arrow|xlsx|xls|pdf|png|jpg|jpeg|gif|svg|sh|bash|rs|go|"
    "java|kt|c|h|cc|cpp|hpp|rb|php|r|log|zip|gz|tgz|tar|whl|lock|env|pkl|pickle|npz|npy|onnx|pt"
)
_UNITS = (
    r"ms|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|wks?|weeks?|months?|years?|"
    r"[kKMGTP]i?B|bytes?|[kKmMbB]|bn|tokens?|rows?|lines?|cols?|columns?|files?|users?|requests?|"
    r"req/s|reqs?|rps|qps|calls?|steps?|epochs?|px|pts?|points?|x|fps|Hz|[kMG]Hz|°C|°F|kg|g|km|m|cm|mm"
)
_ID_PATTERNS: tuple[tuple[str, str], ...] = (
    ("url", r"\b(?:https?|ftp)://[^\s<>()\[\]\"'`]+"),
    ("email", r"\b[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}\b"),
    ("user", r"(?<![\w.@])@[A-Za-z][\w-]*"),
    ("error", r"\bHTTP[ /]?[1-5]\d\d\b|\b(?:status|code) [1-5]\d\d\b"),
    ("path", r"(?<![\w@])(?:~|\.{1,2})?/?(?:[\w.-]{1,100}/){1,20}[\w.-]{0,100}"),
    ("file", rf"\b[\w-]{{1,100}}(?:\.[\w-]{{1,50}}){{0,5}}\.(?:{_FILE_EXT})\b"),
    ("date", r"\b\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?Z?)?\b|\b\d{4}-W\d{2}\b"),
    (
        "money",
        r"[$\u20ac\u00a3\u00a5\u20a9]\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
        r"(?:\s?(?:[kKmMbB]n?|million|billion)\b)?(?:/[A-Za-z]{1,6}\b)?"
        r"|\b\d{1,15}(?:[.,]\d{1,3}){0,5}\s?(?:USD|EUR|GBP|KRW|JPY|dollars|euros)\b",
    ),
    ("percent", r"(?<![\d.])[-+]?\d+(?:\.\d+)?\s?%"),
    ("version", r"\bv\d+(?:\.\d+)*(?:[-+][\w.]+)?\b|\b\d+\.\d+\.\d+(?:[-+][\w.]+)?\b"),
    ("quantity", rf"\b(?:\d{{1,3}}(?:,\d{{3}}){{1,6}}|\d+)(?:\.\d+)?\s?(?:{_UNITS})(?![\w%])"),
    ("ticket", r"\b[A-Z][A-Z0-9]{1,9}-\d+\b"),
    ("issue", r"(?<![\w&])#\d+\b"),
    ("hash", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    ("code", r"`[^`\n]{1,60}`"),
    ("error", r"\b[A-Za-z_][\w.]{0,80}(?:Error|Exception|Warning)\b"),
    ("camel", r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b"),
    ("snake", r"\b_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*"),
    ("acronym", r"\b[A-Z]{2,}[0-9]*\b|\b[A-Z][0-9]+\b"),
    ("number", r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b"),
)
_ID_RE = re.compile("|".join(f"(?P<g{i}>{rx})" for i, (_, rx) in enumerate(_ID_PATTERNS)))
_ID_KINDS = {f"g{i}": kind for i, (kind, _) in enumerate(_ID_PATTERNS)}
_ACRONYM_NOISE_TEXT = """OK TODO FYI ASAP EOD TBD WIP NB PS AM PM FIXME NOTE XXX ETA IMO IMHO LGTM
AFAIK BTW TL DR TLDR DONE NEXT NEW AND THE FOR NOT ALL YES NO"""
_ACRONYM_NOISE = frozenset(_ACRONYM_NOISE_TEXT.split())


def find_identifiers(text: str) -> list[Identifier]:
    """Identifier-like spans, left to right and not overlapping: URLs, e-mails, @users, file
    paths and names, dates, money, percentages, versions, numbers with units, ticket and issue
    ids, hashes, `code`, error names, CamelCase, snake_case, acronyms and bare numbers.

    These are what a summary must never lose: they are what people search for verbatim.
    """
    found = []
    for match in _ID_RE.finditer(text):
        kind = _ID_KINDS[match.lastgroup or ""]
        value, start, end = match.group(), match.start(), match.end()
        if kind in ("url", "path", "user"):
            stripped = value.rstrip(".,;:!?'\")-")
            end -= len(value) - len(stripped)
            value = stripped
        if kind == "path" and not _is_path(value):
            continue
        if kind == "code":
            value = value[1:-1].strip()
        if kind == "acronym" and (value in _ACRONYM_NOISE or value.lower() in STOPWORDS):
            continue
        if value:
            found.append(Identifier(kind, value, start, end))
    return found


def identifiers(text: str) -> list[str]:
    """The values of `find_identifiers`, unique, in order of first appearance."""
    return list(dict.fromkeys(ident.value for ident in find_identifiers(text)))


def _is_path(value: str) -> bool:
    """`a/b` alone is too often prose ("and/or", "w/o"): a path needs more evidence."""
    if value.startswith(("/", "~/", "./", "../")) or value.count("/") >= 2:
        return len(value) > 2
    last = value.rsplit("/", 1)[-1]
    return bool(re.search(rf"\.(?:{_FILE_EXT})$", last)) or value.endswith("/") and len(value) > 3


# --- small extractions ---------------------------------------------------------------------
def slug(text: str, max_words: int = 4) -> str:
    """A short kebab-case keyword: "Competitor pricing (Q1)!" -> "competitor-pricing-q1".

    Stopwords are dropped unless nothing else is left; `max_words` <= 0 means no limit.
    Dotted and hyphenated words count as one word ("v2.3" -> "v2-3", "follow-up"). Empty when
    the text has no letters or digits.
    """
    words = _SLUG_WORD.findall(_APOSTROPHE.sub("", text.lower()))
    chosen = [w for w in words if w not in STOPWORDS] or words
    if max_words > 0:
        chosen = chosen[:max_words]
    return "-".join(w.replace(".", "-") for w in chosen)


def hashtags(text: str) -> list[str]:
    """`#pricing #q1` -> ["pricing", "q1"]: lower-case, in order, unique.

    Markdown headings (`## x`), URL fragments, HTML entities and issue numbers (`#12`) are not tags.
    """
    tags = []
    for match in _HASHTAG.finditer(text):
        tag = match.group(1).lower().rstrip("-_")
        if any(c.isalpha() for c in tag):
            tags.append(tag)
    return list(dict.fromkeys(tags))


def comment_tags(text: str) -> list[str]:
    """Tags from our `<!-- hipo ... tags=a,b -->` comment lines, in order, unique.

    Values are percent-decoded, as checkpoint.py writes them.
    """
    tags = []
    for comment in _comments(text):
        prefix = _HIPO_PREFIX.match(comment)
        if not prefix:
            continue
        for value in _TAGS_VALUE.findall(comment[prefix.end() :]):
            for tag in value.strip("\"'").split(","):
                cleaned = _clean_topic(unquote(tag))
                if cleaned:
                    tags.append(cleaned)
    return list(dict.fromkeys(tags))


def _comments(text: str) -> list[str]:
    """The insides of the closed `<!-- ... -->` comments, in order."""
    found = []
    start = text.find("<!--")
    while start >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        found.append(text[start + 4 : end])
        start = text.find("<!--", end + 3)
    return found


def strip_comments(text: str) -> str:
    """Every closed `<!-- ... -->` replaced by a space (a scan, so hostile text stays linear)."""
    parts = []
    position = 0
    start = text.find("<!--")
    while start >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        parts += [text[position:start], " "]
        position = end + 3
        start = text.find("<!--", position)
    parts.append(text[position:])
    return "".join(parts)


def section_category(heading: str) -> str | None:
    """Which summary section a heading names ("Key Decisions" -> "decisions"), or None.

    Categories: topics, decisions, completed, lessons, open, entities, themes. Daily, weekly and
    monthly names map to the same category, so summaries of summaries can merge them.
    """
    name = heading.strip().strip("#").strip().rstrip(":").strip().lower().replace("&", "and")
    return _SECTIONS.get(" ".join(name.split()))


def is_period_heading(title: str) -> bool:
    """A heading that only names a period ("2026-03-12", "Weekly Summary: 2026-W11",
    "Weekly 2026-W11"): a file header, not a checkpoint title."""
    words = re.findall(r"[^\W_]+", title.lower())
    return bool(words) and all(w in _PERIOD_WORDS or _DATE_TOKEN.fullmatch(w) for w in words)


def heading_title(text: str) -> str:
    """A heading's text without `[type]` and trailing `#tags`."""
    return _TYPE_TAG.sub("", _TRAILING_TAGS.sub("", text)).strip()


# --- key phrases ---------------------------------------------------------------------------
def prose_lines(text: str) -> list[str]:
    """The lines of a log or node that carry words: no frontmatter, comments, code, section
    headings, field labels or URLs. Headings keep their title (without `[type]`)."""
    lines = []
    in_code = False
    text = strip_comments(strip_frontmatter(text))
    for raw in text.splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = raw.strip()
        heading = _HEADING.fullmatch(line)
        if heading:
            title = heading.group(1) or ""
            if section_category(title) or is_period_heading(title):
                continue
            line = _TYPE_TAG.sub(" ", title)
        line = _LABEL.sub(" ", line, count=1)
        line = _URL.sub(" ", line)
        if line.strip() and line.strip() != "(none)":
            lines.append(line)
    return lines


def strip_frontmatter(text: str) -> str:
    """Drop a leading YAML block that looks like node frontmatter (has `type:` or `period:`)."""
    if not text.startswith("---"):
        return text
    lines = text.splitlines(keepends=True)
    for index in range(1, min(len(lines), 40)):
        if lines[index].strip() == "---":
            block = "".join(lines[1:index])
            if re.search(r"^(?:type|period):", block, re.MULTILINE):
                return "".join(lines[index + 1 :])
            break
    return text


def _is_content(token: str) -> bool:
    return (
        2 <= len(token) <= 40
        and token not in STOPWORDS
        and any(c.isalpha() for c in token)
        and not _DATE_TOKEN.fullmatch(token)
    )


def key_phrases(text: str, limit: int = 10) -> list[str]:
    """The most frequent content words and repeated two-word phrases, most frequent first.

    A bigram counts double (a repeated phrase says more than a word) and must occur at least
    twice; a word is left out when a kept bigram containing it is at least as frequent. Ties
    are broken alphabetically. Phrases are lower-case, words joined by one space.
    """
    words: dict[str, int] = {}
    pairs: dict[str, int] = {}
    for line in prose_lines(text):
        for segment in _SEGMENT_BREAK.split(_APOSTROPHE.sub("", line)):
            previous = None
            for token in _TOKEN.findall(segment):
                token = token.lower()
                if not _is_content(token):
                    previous = None
                    continue
                words[token] = words.get(token, 0) + 1
                if previous is not None:
                    pair = f"{previous} {token}"
                    pairs[pair] = pairs.get(pair, 0) + 1
                previous = token
    repeated = {pair: n for pair, n in pairs.items() if n >= 2}
    covered: dict[str, int] = {}
    for pair, n in repeated.items():
        for word in pair.split(" "):
            covered[word] = max(covered.get(word, 0), n)
    scored = [(2 * n, pair) for pair, n in repeated.items()]
    scored += [(n, word) for word, n in words.items() if n > covered.get(word, 0)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [phrase for _, phrase in scored[: max(limit, 0)]]


# --- node topics ---------------------------------------------------------------------------
def _clean_topic(value: str) -> str:
    """A topic safe for a `topics: a, b` frontmatter line: lower-case, no commas or colons."""
    cleaned = " ".join(_TOPIC_JUNK.sub(" ", value.lower()).split()).strip(" .-")
    return cleaned[:60].strip(" .-")


def _by_frequency(values: list[str]) -> list[str]:
    """Unique values, most frequent first, then in order of first appearance."""
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    order = {value: index for index, value in enumerate(counts)}
    return sorted(counts, key=lambda value: (-counts[value], order[value]))


def node_topics(text: str, limit: int = 12) -> list[str]:
    """Topics for a node's `topics:` frontmatter and Topics section, in this order:

    1. tags: from our comment lines (`tags=a,b`) and #hashtags, most frequent first;
    2. the entries of earlier `## Topics` sections (when the text is itself a summary);
    3. checkpoint title slugs (headings that are neither section names nor period headers);
    4. key phrases, which keep at least a quarter of the places when there are enough of them.

    Deduplicated ignoring case and `-`/`_`/space differences; deterministic.
    """
    if limit <= 0:
        return []
    body = strip_frontmatter(text)
    tag_list = comment_tags(body)
    section_topics: list[str] = []
    titles: list[str] = []
    in_code = False
    section = None
    plain_lines = []
    for raw in strip_comments(body).splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = raw.strip()
        heading = _HEADING.fullmatch(line)
        if heading:
            title = heading.group(1) or ""
            section = section_category(title)
            if section is None and not is_period_heading(title):
                name = slug(heading_title(title))
                if name and not all(_DATE_TOKEN.fullmatch(w) for w in name.split("-")):
                    titles.append(name)
            plain_lines.append(title)
            continue
        if section == "topics":
            section_topics.extend(_clean_topic(part) for part in line.split(","))
        else:
            plain_lines.append(line)
    tag_list += hashtags(_URL.sub(" ", "\n".join(plain_lines)))
    head = _dedupe(
        _by_frequency(tag_list)
        + _by_frequency([t for t in section_topics if t and t != "none"])
        + titles
    )
    seen = {_topic_key(t) for t in head}
    phrases = [p for p in key_phrases(text, limit=limit) if _topic_key(p) not in seen]
    reserve = min(len(phrases), limit // 4)
    return _dedupe(head[: limit - reserve] + phrases)[:limit]


def _topic_key(topic: str) -> str:
    return _TOPIC_KEY.sub("-", topic.lower()).strip("-")


def _dedupe(topics: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for topic in topics:
        key = _topic_key(topic)
        if key and key not in seen:
            seen[key] = topic
    return list(seen.values())
