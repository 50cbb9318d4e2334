"""What leaves the machine: a notebook's raw checkpoints as team rows, filtered and redacted.

Only raw checkpoints are sent (never compaction nodes, knowledge/, Layer 1 or the index). A
checkpoint whose type or tag is in `team_exclude` stays local. Title, body, tags and notebook
name go through `redact` again here, because a log may have been written by another tool
(Hipocampus itself, an import) that did not redact it.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import socket
from collections.abc import Collection

from hipo_jupyter.memory.disk import (
    CHECKPOINT_TYPES,
    Checkpoint,
    decode_markdown,
    parse_log,
    redact,
)

from .database import TeamRow
from .schema import clean_name


def author_name(configured: str = "") -> str:
    """Who wrote it: the setting, else $HIPO_AUTHOR, else JupyterHub's user, else the login;
    sanitised (`clean_name`), since it is shown to every teammate."""
    for value in (configured, os.environ.get("HIPO_AUTHOR"), os.environ.get("JUPYTERHUB_USER")):
        if value and clean_name(value) != "unknown":
            return clean_name(value)
    try:
        return clean_name(getpass.getuser())
    except (KeyError, OSError):
        return "unknown"


def is_excluded(checkpoint: Checkpoint, exclude: Collection[str]) -> bool:
    """`exclude` holds types (`user`) and tags (`private`, or `#private` for a tag only)."""
    tags = {tag.casefold() for tag in checkpoint.tags}
    for entry in exclude:
        name = entry.strip().casefold()
        if name.startswith("#"):
            if name[1:] in tags:
                return True
        elif (name in CHECKPOINT_TYPES and checkpoint.type == name) or name in tags:
            return True
    return False


def _body(checkpoint: Checkpoint) -> str:
    parts = [f"{key}: {value}" for key, value in checkpoint.fields]
    if checkpoint.text:
        parts.append(checkpoint.text)
    return "\n".join(parts)


def rows_of_log(
    data: bytes,
    *,
    relative: str,
    day: str,
    author: str,
    notebook: str,
    root: str,
    exclude: Collection[str],
) -> list[TeamRow]:
    """The team rows of one raw log (`relative`, e.g. memory/2026-03-12.md)."""
    host = socket.gethostname()
    rows = []
    seen: dict[str, int] = {}  # ids met in this log: a repeated one is kept as `id#2`, `id#3`
    for checkpoint in parse_log(decode_markdown(data, relative), date=day):
        if is_excluded(checkpoint, exclude):
            continue
        title = redact(checkpoint.title)
        body = redact(_body(checkpoint))
        tags = tuple(redact(tag) for tag in checkpoint.tags)
        where = clean_name(redact(checkpoint.notebook) if checkpoint.notebook else notebook)
        content = "\x1f".join((checkpoint.type, title, body, ",".join(tags), where))
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        # A checkpoint written without our comment line has no id: one is derived from where it
        # stands, which an append-only log never changes.
        row_id = (
            checkpoint.id
            or "h-"
            + hashlib.sha256(
                f"{author}\x1f{root}\x1f{relative}\x1f{checkpoint.line}\x1f{title}".encode(
                    "utf-8", "surrogatepass"
                )
            ).hexdigest()[:24]
        )
        seen[row_id] = seen.get(row_id, 0) + 1
        if seen[row_id] > 1:  # two checkpoints, one id (a copy-paste): two rows, not one
            row_id = f"{row_id}#{seen[row_id]}"
        rows.append(
            TeamRow(
                id=row_id,
                author=author,
                notebook=where,
                day=checkpoint.date or day,
                type=checkpoint.type,
                title=title,
                body=body,
                tags=tags,
                source_file=relative,
                source_line=checkpoint.line,
                content_hash=digest,
                host=host,
                root=root,
                cell=checkpoint.cell,
            )
        )
    return rows
