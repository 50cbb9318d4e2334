"""What the sidebar needs beyond the memory itself: what a notebook's last `%%ask` sent (each
Layer 1 part and each recalled piece, with its tokens and where it came from), and a stamp that
moves whenever anything it shows may have changed.

One small JSON file a notebook, beside its conversation
(`memory/.conversations/<name>-<hash>.sent.json`, by the notebook's identity:
`layout.notebook_stem`), overwritten by each call. It is derived and transient: deleting it
loses nothing, and a damaged one reads as "nothing sent yet". It holds titles, sources and
counts, never the memory's text.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ..errors import HipoError, ParseError, PathOutsideRootError
from .jsonread import parse_json
from .layout import (
    CONVERSATIONS_DIR,
    MEMORY_DIR,
    WORKING_FILES,
    RawStamps,
    notebook_stem,
    stamp_key,
)

if TYPE_CHECKING:
    from .store import Store

SENT_SUFFIX = ".sent.json"
MAX_SENT_BYTES = 256 * 1024  # far over what MAX_SENT_PARTS parts of MAX_SENT_TEXT can fill
MAX_SENT_PARTS = 200  # Layer 1's four parts and what a recall budget holds, with room to spare
MAX_SENT_TEXT = 500  # characters of a name, source or provenance phrase
PART_KINDS = ("layer1", "recalled")


@dataclass(frozen=True)
class SentPart:
    kind: str  # "layer1" | "recalled"
    name: str  # a Layer 1 part ("ROOT") or a recalled piece's title
    source: str  # "memory/ROOT.md", "memory/2026-03-12.md#L14"
    tokens: int
    provenance: str = ""  # where a recalled checkpoint came from (`provenance_text`)


@dataclass(frozen=True)
class Sent:
    notebook: str
    at: str  # ISO time of the call
    model: str
    tokens: int  # the whole system prompt the call carried
    parts: tuple[SentPart, ...]

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "parts": [asdict(part) for part in self.parts]}

    @classmethod
    def from_json(cls, data: object) -> Sent:
        """The record back from its JSON, its shape checked: a ParseError says what is wrong."""
        if not isinstance(data, dict):
            raise ParseError("a sent record is a JSON object")
        parts = data.get("parts")
        if not isinstance(parts, list) or len(parts) > MAX_SENT_PARTS:
            raise ParseError(f"parts must be a list of at most {MAX_SENT_PARTS}")
        return cls(
            notebook=_text(data, "notebook"),
            at=_text(data, "at"),
            model=_text(data, "model"),
            tokens=_count(data, "tokens"),
            parts=tuple(_part(part) for part in parts),
        )


def _text(data: dict, key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str) or len(value) > MAX_SENT_TEXT:
        raise ParseError(f"{key} must be text of at most {MAX_SENT_TEXT} characters")
    return value


def _count(data: dict, key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**9:
        raise ParseError(f"{key} must be a count of tokens")
    return value


def _part(data: object) -> SentPart:
    if not isinstance(data, dict):
        raise ParseError("each part is a JSON object")
    kind = _text(data, "kind")
    if kind not in PART_KINDS:
        raise ParseError(f"a part's kind is one of {', '.join(PART_KINDS)}, not {kind!r}")
    return SentPart(
        kind=kind,
        name=_text(data, "name"),
        source=_text(data, "source"),
        tokens=_count(data, "tokens"),
        provenance=_text(data, "provenance"),
    )


def sent_path(notebook: str | None) -> str:
    """`memory/.conversations/analysis-<12 hex digits>.sent.json` for `analysis.ipynb` (its
    path relative to the root); consoles share `console.sent.json`, as they share a
    conversation."""
    return f"{CONVERSATIONS_DIR}/{notebook_stem(notebook)}{SENT_SUFFIX}"


def legacy_sent_path(notebook: str | None) -> str | None:
    """Where a version before issue 43 kept the record: the name's ASCII letters only, so
    notebooks named alike, and every non-ASCII name with the consoles, shared one."""
    if not notebook:
        return None
    stem = notebook.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".ipynb")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-")[:100]
    return f"{CONVERSATIONS_DIR}/{name or 'console'}{SENT_SUFFIX}"


def write_sent(store: Store, sent: Sent) -> None:
    text = json.dumps(sent.to_json(), ensure_ascii=False, indent=1) + "\n"
    store.write_atomic(store.root / sent_path(sent.notebook), text)


def read_sent(store: Store, notebook: str | None) -> Sent | None:
    """`notebook`'s last record, or None when there is none or it cannot be read (it is
    transient: the next call writes it again). A record under the name an older version gave
    it is read when it names this very notebook (a record holds its notebook's name)."""
    record = _read_sent_file(store, sent_path(notebook))
    legacy = legacy_sent_path(notebook)
    if record is None and legacy is not None:
        old = _read_sent_file(store, legacy)
        if old is not None and old.notebook == notebook:
            return old
    return record


def _read_sent_file(store: Store, relative: str) -> Sent | None:
    try:
        data = store.read_file(store.root / relative, MAX_SENT_BYTES)
        return Sent.from_json(parse_json(data, relative))
    except (OSError, HipoError):
        return None


def sidebar_stamp(store: Store, notebook: str | None) -> str:
    """A short stamp that moves whenever what the sidebar shows may have changed, written by
    any process: a raw log, ROOT.md or a compaction, a Layer 1 file, `notebook`'s last
    `%%ask` record. Listings and lstat only, never a read, so a sidebar may ask every second."""
    return stamp_key(change_stamps(store, [sent_path(notebook)]))


def change_stamps(store: Store, extra: Sequence[str] = ()) -> RawStamps:
    """(size, mtime_ns) of every regular file directly in `memory/` (raw logs, ROOT.md, the
    compaction state, which every compaction rewrites), of the Layer 1 working files and of
    the `extra` relative paths that exist; a file that vanishes meanwhile is left out."""
    stamps: RawStamps = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(store.memory_dir):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                stamps[f"{MEMORY_DIR}/{entry.name}"] = (info.st_size, info.st_mtime_ns)
    for relative in (*WORKING_FILES, *extra):
        with contextlib.suppress(OSError, PathOutsideRootError):
            info = os.lstat(store.inside(relative))
            if stat.S_ISREG(info.st_mode):
                stamps[relative] = (info.st_size, info.st_mtime_ns)
    return stamps
