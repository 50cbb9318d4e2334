"""The user's current word first: of notes on one subject the newer ranks first, and
write-backs weigh what they add.

Two raw checkpoints are on the same subject for a question (`same_subject`) when they answer it
through a word of it they both hold (a stem of the query's searchable words) and share at least
`subject_overlap` (a `RecallSettings` field, as are `subject_depth` and `write_back_yield`)
of their own words (the overlap coefficient of the stems of title and text,
field names and a write-back's references left out), in the same project (they share a tag when
both have tags). A later note on the same subject changes an earlier one only on an explicit
signal, never on a score or shared words alone (a log of runs, measurements or standups shares
both, entry after entry, and none of its entries is outdated):

- it says it changes what the earlier one said: a change word (CHANGE_CUE, English: "moved",
  "instead", "no longer") with, within CUE_REACH words after it, a word the earlier note holds
  ("moved the launch to May" after "the launch is in April"; "changed the learning rate" does
  not change a run that never named a learning rate);
- or it gives one of the earlier note's fields another value, every other field they share
  being equal (`- launch: April` then `- launch: May`); a field whose values are figures
  (`- auc: 0.81`, `- auc: 0.84`) is a measurement, and one whose values are sentences
  (`- did: ...`, `- decisions: ...`) an entry: two of either are a log, not a contradiction;

and its writer may replace the earlier one's (`disk/trust`, read from the typed `writer` field:
an agent's or a teammate's note never changes the user's; imports change nothing:
CHANGES_IN_IMPORTS). Corrections (`replaces=`) and accepted proposals are settled before this,
by `corrections.py`. The later one is what holds now: it ranks first, the earlier one just
under it, marked as changed later (`Changes.later`), which every view of a hit says
(`%recall`, the context a model is sent). "Later" is the tree's own order: the raw log's date,
then the line within the day's log.

A Claude call's write-back (the agent's task log) is a secondary record: it ranks below every
note of the user's that answers the question through a word the write-back holds too, or on
its subject, and below every note of the user's found at least `write_back_yield` as relevant as
it (by meaning, say): a note that answers the question is never under the log of a call that
asked it or drew on the note. Of write-backs on one subject the best is shown, the others
dropped (the same exchange written up again says nothing new).

Only the first `subject_depth` candidates are compared (pairs of a few dozen, not of hundreds):
what the reader sees first is what the order is for.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

from ..disk.trust import IMPORT, REPLACE_AGENT_NOTES, REPLACE_USER_NOTES, USER, may
from ..requests import DEFAULT_SETTINGS, RecallSettings
from ..search.contract import Document
from ..words import STOPWORDS, stem, words
from ..words import stems as stems_of

CHANGE_CUE = re.compile(
    r"\b(?:moved|changed|instead|no longer|switched|replaced|postponed|delayed|cancell?ed|"
    r"pushed (?:back|out)|rescheduled|not any more|anymore)\b",
    re.IGNORECASE,
)
CUE_REACH = 4  # words after a change word that name what it changes
# A field value that is a figure (with a sign, a unit or a percent): a measurement.
_MEASURE = re.compile(r"[~<>=+-]?\s*\d[\d.,]*\s*(?:%|[a-zA-Z]{0,3})")
# A longer value is a sentence ("decisions: cut the starter tier by 15%"), and a later sentence
# under the same key is another entry of a log, not the same value changed.
FIELD_VALUE_WORDS = 3
# Imported records (a chat, a dialogue) are what was said then, not the user's current word:
# left out. Chosen by leave-one-conversation-out on LoCoMo's dev set (crossval.py, keyword, 2,000
# tokens; benchmarks/README.md): with them every setting tried (`subject_overlap` 0.25 to 0.5,
# the earlier note under the later or the later lifted over it) cost 0.013 to 0.18 of
# all-evidence (an earlier turn is often the evidence asked for; 0.833 without), and MemAware
# keyword 0.007 (3 folds).
CHANGES_IN_IMPORTS = False
BELOW = 0.999  # a demoted hit's score: just below the one it yields to
CHANGED_LATER = "changed later:"  # what a changed note's hit says, before the later note's place
# The index's text of a checkpoint is its fields as "key: value" lines, then its free text
_FIELD_KEY = re.compile(r"^(?:-\s*)?[\w-]+:\s", re.MULTILINE)
_REFERENCES = re.compile(r"^(?:-\s*)?references:.*$", re.MULTILINE)
_FIELD_LINE = re.compile(r"^(?:-\s*)?([\w-]+):\s+(.*)$")
SUBJECT_CHARS = 4000  # a pasted page's subject is in its start; stems of the rest cost time
# What `settle` reads of a checkpoint (its stems, what its change words change, its fields) is
# a function of its title and text alone, worked out once per text: a topic's notes are
# candidates query after query (at 10,000 notes this was a third of `settle`'s time).
SUBJECT_CACHE = 1024  # 40 candidates a recall: the notes of a few dozen queries

Scored = tuple[float, Document, str, tuple[str, ...]]  # (score, document, snippet, topics)
H = TypeVar("H", bound=Any)  # a ranking.Hit, which imports this module


def imported(doc: Document) -> bool:
    """Whether a raw hit came from `hipo import` (a chat, a dialogue): its typed writer."""
    return doc.writer == IMPORT


def writer_of_hit(doc: Document) -> str:
    """Who wrote a raw hit (`disk/trust`): its typed `writer` field, which the index read from
    the checkpoint with `trust.writer_of` (a team row's is "teammate"). A document without one
    records no provenance, which the trust table reads as the user's."""
    return doc.writer or USER


def may_change(writer: str, owner: str) -> bool:
    """Whether a later note of `writer` may change an earlier one of `owner` (`trust.POWERS`):
    an agent's later note never changes the user's."""
    return may(writer, REPLACE_USER_NOTES if owner == USER else REPLACE_AGENT_NOTES)


def word_stems(text: str) -> frozenset[str]:
    """The stems (`words.stems`) of a text's words, stopwords left out: cheaper than the
    search's own terms, which a recall would work out for forty texts."""
    return stems_of(text[:SUBJECT_CHARS])


def field_values(doc: Document) -> dict[str, str]:
    """A checkpoint's field values by key (the index's text starts with its fields as
    "key: value" lines), casefolded, references left out."""
    values: dict[str, str] = {}
    for line in doc.text[:SUBJECT_CHARS].split("\n"):
        found = _FIELD_LINE.match(line)
        if found is None:
            break
        key, value = found.group(1).casefold(), " ".join(found.group(2).casefold().split())
        if value and key != "references":
            values[key] = value
    return values


def contradicts(later: dict[str, str], earlier: dict[str, str]) -> bool:
    """Whether a later note's fields give exactly one of the earlier note's fields another
    value, every other shared field equal; both values short (at most FIELD_VALUE_WORDS
    words: a value, not a sentence) and neither a figure (a measurement)."""
    shared = later.keys() & earlier.keys()
    differing = [key for key in shared if later[key] != earlier[key]]
    if len(differing) != 1:
        return False
    values = (later[differing[0]], earlier[differing[0]])
    return all(_short(value) for value in values)


def changed_words(text: str) -> frozenset[str]:
    """The stems of the CUE_REACH words after each change word of `text`: what it says it
    changes ("moved the launch to May": launch, may)."""
    found: set[str] = set()
    for cue in CHANGE_CUE.finditer(text):
        after = words(text[cue.end() : cue.end() + 80])
        found.update(stem(word) for word in after[:CUE_REACH] if word not in STOPWORDS)
    return frozenset(found)


def subject_stems(doc: Document) -> frozenset[str]:
    """A checkpoint's content words: its title and text, without field names or references."""
    text = _FIELD_KEY.sub("", _REFERENCES.sub("", doc.text))
    return word_stems(f"{doc.title}\n{text}")


@dataclass(frozen=True)
class _Parts:
    """What `settle` reads of one checkpoint, whatever the query (`_parts_of`)."""

    stems: frozenset[str]  # `subject_stems`
    changes: frozenset[str]  # `changed_words`: the stems its change words say it changes
    fields: dict[str, str]  # `field_values` (read, never changed)
    short: dict[str, str]  # those of its fields `contradicts` may find changed (`_short`)


def _parts_of(doc: Document) -> _Parts:
    return _parts(doc.title, doc.text)


@lru_cache(maxsize=SUBJECT_CACHE)
def _parts(title: str, text: str) -> _Parts:
    """`_Parts` of the checkpoint of this title and text, once per text (SUBJECT_CACHE)."""
    doc = Document(id="", path="", line=0, kind="raw", date="", type="", title=title, text=text)
    fields = field_values(doc)
    return _Parts(
        subject_stems(doc),
        changed_words(f"{title}\n{text[:SUBJECT_CHARS]}"),
        fields,
        {key: value for key, value in fields.items() if _short(value)},
    )


def _short(value: str) -> bool:
    """A field value `contradicts` compares: a value, not a sentence, and not a figure."""
    return len(value.split()) <= FIELD_VALUE_WORDS and not _MEASURE.fullmatch(value)


@dataclass
class Changes:
    """What `settle` found: which hits a later note changed (id -> the later note's id), and
    which write-backs another on their subject already shows (ids)."""

    later: dict[str, Document] = field(default_factory=dict)
    repeated_write_backs: set[str] = field(default_factory=set)

    def marked(self, hit: H, doc_id: str) -> H:
        """A hit (`ranking.Hit`) of the document `doc_id`, a note changed later, saying so:
        `changed_later` holds where the later note is, and its provenance says it after what
        it said. By id, not by file and line: a team hit's id is the database row's."""
        later = self.later[doc_id]
        where = f"{later.path}:{later.line}"
        said = f"{hit.provenance}; {CHANGED_LATER} {where}".lstrip("; ")
        return dataclasses.replace(hit, changed_later=where, provenance=said)


@dataclass(frozen=True)
class _Subject:
    doc: Document
    stems: frozenset[str]
    answers: frozenset[str]  # the query's content stems it holds
    writer: str  # who wrote it (`disk/trust`)
    changes: frozenset[str]  # the stems its change words say it changes (`changed_words`)
    fields: dict[str, str]  # its field values (`field_values`)
    overlap: float  # `RecallSettings.subject_overlap`: the share of stems one subject takes
    short: dict[str, str] = field(default_factory=dict)  # its fields `contradicts` may change

    def may_change_one(self, earlier: _Subject) -> bool:
        """What `changes_one` needs, cheaper: a stem it changes is one of `earlier`'s, or a
        short field of both has two values (`contradicts` holds only then)."""
        if not self.changes.isdisjoint(earlier.stems):
            return True
        short = earlier.short
        return any(key in short and short[key] != value for key, value in self.short.items())

    def same_subject(self, other: _Subject) -> bool:
        if self.answers.isdisjoint(other.answers):
            return False
        if self.doc.tags and other.doc.tags and set(self.doc.tags).isdisjoint(other.doc.tags):
            return False
        smaller = min(len(self.stems), len(other.stems))
        return bool(smaller) and len(self.stems & other.stems) >= self.overlap * smaller

    def disagrees(self, other: _Subject) -> bool:
        return not self.stems <= other.stems and not other.stems <= self.stems

    def changes_one(self, earlier: _Subject) -> bool:
        """An explicit signal that this (later) note changes `earlier`: it says it changes
        something `earlier` says, or gives one of its fields another value."""
        return bool(self.changes & earlier.stems) or contradicts(self.fields, earlier.fields)


def settle(
    scored: list[Scored],
    query: str,
    written_back: Callable[[Document], bool],
    *,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> tuple[list[Scored], Changes]:
    """`scored` with the earlier note of each change just under the later, each write-back
    under the user's notes it yields to (see the module docstring), and what was changed.
    Nothing is compared when nothing could change (imports alone: LoCoMo, MemAware)."""
    changes = Changes()
    wanted = word_stems(query) if settings.subject_overlap <= 1 else frozenset()
    if not wanted:
        return scored, changes
    order = sorted(range(len(scored)), key=lambda i: -scored[i][0])
    top = [i for i in order if scored[i][1].kind == "raw"][:settings.subject_depth]
    backs = [i for i in top if written_back(scored[i][1])]
    notes = [i for i in top if i not in backs]
    changing = [i for i in notes if CHANGES_IN_IMPORTS or not imported(scored[i][1])]
    if not backs and len(changing) < 2:
        return scored, changes
    subjects: dict[int, _Subject] = {}
    for i in [*backs, *notes] if backs else changing:
        doc = scored[i][1]
        parts = _parts_of(doc)
        subjects[i] = _Subject(
            doc, parts.stems, parts.stems & wanted, writer_of_hit(doc), parts.changes,
            parts.fields, settings.subject_overlap, parts.short,
        )
    scores = {i: scored[i][0] for i in top}
    _newer_first(changing, subjects, scores, scored, changes)
    _write_backs_below(backs, notes, subjects, scores, settings.write_back_yield)
    seen: list[_Subject] = []
    for i in sorted(backs, key=lambda i: -scores[i]):
        if any(subjects[i].same_subject(shown) for shown in seen):
            changes.repeated_write_backs.add(scored[i][1].id)
        else:
            seen.append(subjects[i])
    if all(scores[i] == scored[i][0] for i in scores):
        return scored, changes
    settled = [
        (scores[i], doc, snippet, topics) if i in scores else (score, doc, snippet, topics)
        for i, (score, doc, snippet, topics) in enumerate(scored)
    ]
    return settled, changes


def _when(doc: Document) -> tuple[str, str, int]:
    return (doc.date, doc.path, doc.line)


def _newer_first(
    notes: Sequence[int],
    subjects: dict[int, _Subject],
    scores: dict[int, float],
    scored: Sequence[Scored],
    changes: Changes,
) -> None:
    """Newest first: each note ranks just under every later note that changed it. Only the
    pairs with an explicit signal are weighed (`may_change_one`: most notes have none, and
    weighing every pair of forty was most of `settle`); the order they are weighed in changes
    nothing (the lowest score and the latest change are kept)."""
    when = {i: _when(scored[i][1]) for i in notes}
    by_time = sorted(notes, key=when.__getitem__, reverse=True)
    signalling = [
        (at, i) for at, i in enumerate(by_time) if subjects[i].changes or subjects[i].short
    ]
    for position, older in enumerate(by_time):
        a = subjects[older]
        for at, newer in signalling:
            if at >= position:
                break  # the rest are not later
            b = subjects[newer]
            if not b.may_change_one(a):
                continue
            if when[older] == when[newer] or not a.same_subject(b) or not a.disagrees(b):
                continue
            if not may_change(b.writer, a.writer) or not b.changes_one(a):
                continue
            scores[older] = min(scores[older], scores[newer] * BELOW)
            latest = changes.later.get(a.doc.id)
            if latest is None or when[newer] > _when(latest):
                changes.later[a.doc.id] = b.doc


def _write_backs_below(
    backs: Sequence[int],
    notes: Sequence[int],
    subjects: dict[int, _Subject],
    scores: dict[int, float],
    write_back_yield: float = DEFAULT_SETTINGS.write_back_yield,
) -> None:
    """Each write-back below the user's notes that answer as it does, on its subject, or
    about as relevant."""
    for back in backs:
        for note in notes:
            note_subject, back_subject = subjects[note], subjects[back]
            if (
                note_subject.answers & back_subject.answers
                or scores[note] >= write_back_yield * scores[back]
                or back_subject.same_subject(note_subject)
            ):
                scores[back] = min(scores[back], scores[note] * BELOW)
