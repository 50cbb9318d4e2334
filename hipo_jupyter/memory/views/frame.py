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

import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..disk.checkpoint import Checkpoint
from ..disk.provenance import provenance_text
from ..disk.store import raw_log_path
from ..disk.trust import writer_of
from ..errors import HipoError
from ..tree.topic_index import checkpoint_topics
from .rules import ACCEPTS_FIELD, Rule, mark_superseded, rule_of

if TYPE_CHECKING:
    import pandas

COLUMNS = (
    "id", "date", "type", "title", "tags", "topics", "fields", "trigger", "rule",
    "superseded_by", "notebook", "cell", "via", "model", "provider", "file", "line",
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
    return with_superseded([checkpoint_row(checkpoint) for checkpoint in checkpoints])


def checkpoint_row(checkpoint: Checkpoint) -> dict[str, Any]:
    """The row of one checkpoint with `superseded_by` None: that column depends on later logs,
    so the catalog keeps a log's rows without it and `with_superseded` fills it in."""
    rule: Rule | None = rule_of(checkpoint)
    fields: dict[str, str] = {}
    for key, value in checkpoint.fields:
        fields.setdefault(key, value)
    return {
        "id": checkpoint.id,
        "date": checkpoint.date,
        "type": checkpoint.type,
        "title": checkpoint.title,
        "tags": list(checkpoint.tags),
        "topics": checkpoint_topics(checkpoint),
        "fields": fields,
        "trigger": rule.trigger if rule else None,
        "rule": rule.rule if rule else None,
        "superseded_by": None,
        "notebook": checkpoint.notebook,
        "cell": checkpoint.cell,
        "via": checkpoint.via,
        "model": checkpoint.model,
        "provider": checkpoint.provider,
        "file": raw_log_path(checkpoint.date),
        "line": checkpoint.line,
    }


def row_rule(row: dict[str, Any]) -> Rule:
    """The rule a row with a trigger states, as `rules.rule_of` gives it for its checkpoint
    (who wrote it and where it came from read from the row's provenance columns)."""
    source = Checkpoint(
        row["title"], notebook=row["notebook"], cell=row["cell"], via=row["via"],
        model=row["model"], provider=row.get("provider"),
    )  # fmt: skip
    return Rule(
        trigger=row["trigger"],
        rule=row["rule"],
        file=row["file"],
        line=row["line"],
        date=row["date"] or "",
        id=row["id"],
        title=row["title"],
        writer=writer_of(source),
        provenance=provenance_text(source),
        accepts=row["fields"].get(ACCEPTS_FIELD),
    )


def all_row_rules(rows: Iterable[dict[str, Any]]) -> list[Rule]:
    """Every rule `rows` (oldest first) state, proposals included, in their order."""
    return [row_rule(row) for row in rows if row["trigger"]]


def row_rules(rows: Iterable[dict[str, Any]]) -> list[Rule]:
    """The rules in force of `rows` (oldest first), superseded ones marked, ordered like
    `collect_rules`."""
    return mark_superseded(all_row_rules(rows))


def with_superseded(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `rows` (oldest first) with `superseded_by` set from the rules among them; the
    rows given are left as they are (the catalog shares them between calls)."""
    superseded = {(rule.file, rule.line): rule.superseded_by for rule in row_rules(rows)}
    out = []
    for row in rows:
        later = superseded.get((row["file"], row["line"]))
        out.append(dict(row, superseded_by=later) if later else dict(row))
    return out


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
    rows = [{name: getattr(hit, name) for name in columns} for hit in hits]
    for row in rows:
        row["path"] = list(row["path"] or ())
    return to_frame(rows, columns)


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


def table_export(catalog: Any, format: str) -> tuple[bytes, int]:
    """csv, parquet or jsonl of every checkpoint, and the row count, from a
    `catalog.CheckpointCatalog` (not imported: it imports this module). jsonl and parquet are
    joined from the JSON lines the catalog keeps, csv from its CSV lines."""
    if format == "jsonl":
        lines = catalog.export_lines("rows")
        return lines.encode("utf-8"), lines.count("\n")
    if format == "csv":
        lines = catalog.export_lines("csv")  # one line a row: no cell holds a line break
        return (csv_lines([], header=True) + lines).encode("utf-8"), lines.count("\n")
    buffer = io.BytesIO()
    if format == "parquet":
        count = write_parquet(catalog.export_lines("flat"), buffer)
    else:
        count = export_table(with_superseded(catalog.rows()), format, buffer)
    return buffer.getvalue(), count


def export_table(rows: list[dict[str, Any]], format: str, path: Path | BinaryIO) -> int:
    """Write the rows to a path or binary stream as csv or parquet; returns the row count.

    Neither goes through pandas: importing it takes longer than a year of memory takes to
    write (about a second of the `hipo export` process). CSV is the standard library's writer,
    with what pandas' `to_csv` writes (header, minimal quoting, None as an empty cell); parquet
    is pyarrow's (`write_parquet`)."""
    if format == "csv":
        data = csv_lines(flat_rows(rows), header=True).encode("utf-8")
        if isinstance(path, Path):
            path.write_bytes(data)
        else:
            path.write(data)
    elif format == "parquet":
        flat = flat_rows(rows)
        write_parquet("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in flat), path)
    else:
        raise HipoError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, not {format!r}")
    return len(rows)


def csv_lines(rows: list[dict[str, Any]], header: bool = False) -> str:
    """Flat rows as CSV lines, as pandas' `to_csv` writes them (minimal quoting, None as an
    empty cell, "\\n" line ends), with the COLUMNS header line first when asked. A text cell
    that a spreadsheet would run as a formula is written as text (`inert_cell`)."""
    import csv

    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    if header:
        writer.writerow(COLUMNS)
    writer.writerows([inert_cell(row[name]) for name in COLUMNS] for row in rows)
    return text.getvalue()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert_cell(value: Any) -> Any:
    """A CSV cell no spreadsheet runs: text starting with `=`, `+`, `-`, `@`, a tab or a
    carriage return (a formula, `=HYPERLINK(...)` or `@SUM(...)` or a DDE call, in Excel,
    LibreOffice and Google Sheets) gets a leading `'`, the usual neutralisation (OWASP's "CSV
    injection"): the sheet shows it as text. Titles, tags and rules come from every writer
    (imports, agents, teammates), so every text cell is treated alike; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_parquet(flat_lines: str, path: Path | BinaryIO) -> int:
    """Parquet from flat rows given as JSON lines (`flat_rows`, one object a line), with the
    columns `Memory.frame()` has (`date` a timestamp, `line` int64, the rest strings); returns
    the row count. Read by pyarrow's JSON reader with an explicit schema: building arrays from
    Python lists would import pandas (pyarrow looks for pandas objects), a second of a year's
    export, and the catalog keeps the lines ready."""
    pa = require("pyarrow", "frame", "parquet export")
    parquet = require("pyarrow.parquet", "frame", "parquet export")
    arrow_json = require("pyarrow.json", "frame", "parquet export")
    types = {"date": pa.timestamp("ns"), "line": pa.int64()}
    schema = pa.schema([(name, types.get(name, pa.string())) for name in COLUMNS])
    options = arrow_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    if flat_lines:
        data = io.BytesIO(flat_lines.encode("utf-8"))
        table = arrow_json.read_json(data, parse_options=options)
    else:
        table = schema.empty_table()  # the reader refuses an empty file
    parquet.write_table(table, path if not isinstance(path, Path) else str(path))
    return table.num_rows
