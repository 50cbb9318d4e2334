"""The memory as a table: one row per checkpoint, for pandas and for `hipo export`.

Rows are built from the raw logs (through the catalog), so the table is a derived view like the
search index: nothing is stored, and it always shows what the files say. Columns, in order:

    id, date, type, title, tags, topics, fields, trigger, rule, superseded_by,
    notebook, cell, via, model, file, line

`tags` and `topics` are lists of strings, `fields` a dict of the checkpoint's `- key: value`
lines (first value of a repeated key), `trigger`/`rule` the feedback rule it states (else
None) and `superseded_by` the pointer of the newer rule with the same trigger. Checkpoints
without a comment line have `id` and the provenance columns None.

pandas (and pyarrow for parquet) come with the `frame` extra and are imported only here, inside
the functions that need them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .checkpoint import Checkpoint
from .errors import HipoError
from .root import checkpoint_topics
from .rules import Rule, collect_rules, rule_of

if TYPE_CHECKING:
    import pandas

COLUMNS = (
    "id", "date", "type", "title", "tags", "topics", "fields", "trigger", "rule",
    "superseded_by", "notebook", "cell", "via", "model", "file", "line",
)  # fmt: skip
EXPORT_FORMATS = ("csv", "parquet", "jsonl", "turtle")
NEEDS_EXTRA = "needs the {extra} extra: pip install 'hipo-jupyter[{extra}]'"


def require(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency, or fail with one line naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise HipoError(f"{what} {NEEDS_EXTRA.format(extra=extra)}") from None


def checkpoint_rows(checkpoints: Sequence[Checkpoint]) -> list[dict[str, Any]]:
    """One plain dict per checkpoint, in COLUMNS order (oldest day first, file order)."""
    superseded = {
        (rule.file, rule.line): rule.superseded_by for rule in collect_rules(checkpoints)
    }
    rows = []
    for checkpoint in checkpoints:
        rule: Rule | None = rule_of(checkpoint)
        fields: dict[str, str] = {}
        for key, value in checkpoint.fields:
            fields.setdefault(key, value)
        file = f"memory/{checkpoint.date}.md"
        rows.append(
            {
                "id": checkpoint.id,
                "date": checkpoint.date,
                "type": checkpoint.type,
                "title": checkpoint.title,
                "tags": list(checkpoint.tags),
                "topics": checkpoint_topics(checkpoint),
                "fields": fields,
                "trigger": rule.trigger if rule else None,
                "rule": rule.rule if rule else None,
                "superseded_by": superseded.get((file, checkpoint.line)),
                "notebook": checkpoint.notebook,
                "cell": checkpoint.cell,
                "via": checkpoint.via,
                "model": checkpoint.model,
                "file": file,
                "line": checkpoint.line,
            }
        )
    return rows


def to_frame(rows: Iterable[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> pandas.DataFrame:
    """The rows as a DataFrame; `date` as datetime64 so `df[df.date >= "2026-03-01"]` works."""
    pd = require("pandas", "frame", "a DataFrame")
    frame = pd.DataFrame(list(rows), columns=list(columns))
    if "date" in frame:
        frame["date"] = pd.to_datetime(frame["date"], format="%Y-%m-%d", errors="coerce")
    return frame


def hits_frame(hits: Sequence[Any]) -> pandas.DataFrame:
    """Recall hits as a DataFrame (`%recall --df`): one row per hit, best first."""
    columns = ("date", "kind", "type", "title", "snippet", "score", "file", "line",
               "provenance", "path")  # fmt: skip
    rows = [{name: getattr(hit, name, None) for name in columns} for hit in hits]
    for row in rows:
        row["path"] = list(row["path"] or ())
    return to_frame(rows, columns)


def write_jsonl(rows: Iterable[dict[str, Any]], out: Any) -> int:
    """One JSON object per line (no pandas needed); returns the number of rows."""
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def flat_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for CSV and parquet, where every cell is a scalar: lists joined with "," and the
    fields dict as a JSON object in one cell (read back with `json.loads`)."""
    flat = []
    for row in rows:
        row = dict(row)
        row["tags"] = ",".join(row["tags"])
        row["topics"] = ",".join(row["topics"])
        row["fields"] = json.dumps(row["fields"], ensure_ascii=False)
        flat.append(row)
    return flat


def export_table(rows: list[dict[str, Any]], format: str, path: Path | BinaryIO) -> int:
    """Write the rows to a path or binary stream as csv or parquet; returns the row count."""
    frame = to_frame(flat_rows(rows))
    if format == "csv":
        frame["date"] = frame["date"].dt.strftime("%Y-%m-%d")
        frame.to_csv(path, index=False)
    elif format == "parquet":
        require("pyarrow", "frame", "parquet export")
        frame.to_parquet(path, index=False)
    else:
        raise HipoError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, not {format!r}")
    return len(rows)
