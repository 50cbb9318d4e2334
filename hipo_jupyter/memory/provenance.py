"""Where a checkpoint came from: the notebook and cell, the front end, the model.

The comment line carries it (`notebook=`, `cell=`, `via=`, `model=`; see `checkpoint`). Each
front end names itself in `via` when it writes; the write-back of Claude calls adds the model
id taken from the request it saw, never one guessed from text. A checkpoint written before
provenance existed (or by hand, or by Hipocampus) has none of it and reads as "unknown".
"""

from __future__ import annotations

from .checkpoint import Checkpoint

VIA_MAGIC = "magic"
VIA_CLI = "cli"
VIA_IMPORT = "import"
VIA_WRITE_BACK = "write-back"
VIA_MCP = "mcp"
FRONT_ENDS = (VIA_MAGIC, VIA_CLI, VIA_IMPORT, VIA_WRITE_BACK, VIA_MCP)


def provenance_of(checkpoint: Checkpoint) -> dict[str, str | None]:
    """The provenance fields of a checkpoint, None where it does not say."""
    return {
        "notebook": checkpoint.notebook,
        "cell": checkpoint.cell,
        "via": checkpoint.via,
        "model": checkpoint.model,
    }


def provenance_text(checkpoint: Checkpoint) -> str:
    """One short phrase, `analysis.ipynb cell 7 via write-back, model claude-sonnet-4-5`,
    or "" when the checkpoint records nothing of where it came from."""
    where = checkpoint.notebook or ""
    if checkpoint.cell:
        where = f"{where} cell {checkpoint.cell}".strip()
    parts = [where] if where else []
    if checkpoint.via:
        parts.append(f"via {checkpoint.via}")
    text = " ".join(parts)
    if checkpoint.model:
        text = f"{text}, model {checkpoint.model}" if text else f"model {checkpoint.model}"
    return text
