"""`hipo check`: the protocol rules that can be verified from the memory folder alone.

Each rule gives pass or fail with one line of detail. The IPython front end adds the rules only
a live kernel can know (Layer 1 loaded before the first LLM call, a checkpoint after every cell
that made LLM calls) and prints both lists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..disk.checkpoint import Tombstone, parse_log, parse_tombstone, tombstones
from ..disk.files import MAX_STATE_BYTES, read_regular
from ..disk.jsonread import parse_json
from ..disk.layout import CONVERSATIONS_DIR, MEMORY_DIR
from ..errors import HipoError
from ..forget import (
    LEDGER_FILE,
    RESTORE,
    ForgetLedger,
    LedgerDamaged,
    holds,
    regular_files,
    without_lineage,
)

if TYPE_CHECKING:
    from ..disk.store import Store
    from ..tree.layer1 import Layer1
    from ..tree.status import Status


class CheckedMemory(Protocol):
    """What the folder rules read of a memory: its files, its status, its Layer 1. The engine's
    `Memory` is one; this room names the shape and never imports the facade above it."""

    store: Store
    forgotten: ForgetLedger

    def status(self) -> Status: ...

    def layer1(self) -> Layer1: ...


@dataclass(frozen=True)
class CheckResult:
    rule: str
    passed: bool
    detail: str = ""

    def line(self) -> str:
        text = f"{'pass' if self.passed else 'FAIL'}  {self.rule}"
        return text + (f": {self.detail}" if self.detail else "")


def _names_only(line: bytes, needles: list[bytes]) -> bool:
    """Whether a log line carries a forgotten id only as a name: its tombstone, or a correction
    saying which checkpoint it replaced (`replaces=ID`, `proposes=ID`) or was made from
    (`sources=ID,...`: a derived piece the user kept), never as its text."""
    text = line.decode("utf-8", "replace")
    if parse_tombstone(text):
        return True
    if not text.startswith("<!-- hipo "):
        return False
    text = " ".join(token for token in text.split(" ") if not token.startswith("sources="))
    for needle in needles:
        word = needle.decode("utf-8", "replace")
        text = text.replace(f"replaces={word}", "").replace(f"proposes={word}", "")
    return not any(needle.decode("utf-8", "replace") in text for needle in needles)


def forgotten_ids_remain(memory: CheckedMemory) -> tuple[bool, str]:
    """`hipo check`: no checkpoint, node, index row, vector or graph node carries the id of a
    forgotten checkpoint; in the raw logs (and nodes copying them) only its tombstone does."""
    stones: list[Tombstone] = []
    for day in memory.store.raw_days():
        stones += tombstones(memory.store.read_text(memory.store.raw_path(day)))
    if not stones:
        return True, "nothing forgotten"
    needles = [stone.id.encode("utf-8") for stone in stones]
    carriers = []
    for path in regular_files(memory.store.memory_dir):
        if memory.store.relative(path) == LEDGER_FILE or not holds(path, needles):
            continue  # the ledger is a tombstone record: it names forgotten ids, never text
        if path.suffix == ".md":  # a raw log, or a node that copies it verbatim
            lines = path.read_bytes().split(b"\n")
            text_lines = [line for line in lines if any(n in line for n in needles)]
            if all(_names_only(line, needles) for line in text_lines):
                continue
        carriers.append(memory.store.relative(path))
    if carriers:
        return False, "a forgotten id is still in " + ", ".join(carriers)
    return True, f"{len(stones)} forgotten, no trace of them"


def forgets_obeyed(memory: CheckedMemory) -> tuple[bool, str]:
    """`hipo check`: the ledger can be read and accounts for every tombstone (a lost, damaged
    or emptied ledger, or a lost key, would let forgotten content be written again: how to
    restore them is said), no forget was left half done (killed midway), and no live or
    derived copy it can see (a kernel's saved conversation, a last-sent record) still holds a
    line of forgotten text (the ledger's keyed hashes) or a turn made from it (lineage)."""
    ledger = memory.forgotten
    logs = (memory.store.read_text(memory.store.raw_path(day)) for day in memory.store.raw_days())
    stones = {stone.id for text in logs for stone in tombstones(text)}
    try:
        forgotten, recorded = ledger.forgotten(), ledger.forgotten_ids()
        if forgotten:
            ledger.key()
    except LedgerDamaged as error:
        return False, str(error)
    lost = sorted(stones - recorded)
    if lost:
        return False, (f"{len(lost)} forgotten checkpoints are not in {LEDGER_FILE} (lost or "
                       f"emptied), so their content could be written again; {RESTORE}")  # fmt: skip
    if not forgotten:
        return True, "nothing forgotten"
    problems = [f"the forget of {e.id} was interrupted: run forget {e.id} again"
                for e in ledger.pending()]  # fmt: skip
    hides = ledger.hides(forgotten)
    folder = memory.store.root / CONVERSATIONS_DIR
    copies = sorted(regular_files(folder)) if folder.is_dir() and not folder.is_symlink() else []
    holding = [memory.store.relative(path) for path in copies
               if holds(path, [], also=hides) or _made_from(path, recorded)]  # fmt: skip
    if holding:
        problems.append("forgotten text is still in " + ", ".join(holding))
    if problems:
        return False, "; ".join(problems)
    shown = _user_notebooks_showing(memory.store, hides)
    mine = f"; {len(shown)} of your own files still show it (edit them): {', '.join(shown)}"
    return True, f"{len(forgotten)} forgets, every live copy obeys them" + (mine if shown else "")


MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


def _user_notebooks_showing(store: Store, hides: Callable[[str], bool]) -> list[str]:
    """The user's notebooks (outside `memory/`, their `.ipynb_checkpoints` copies included)
    with a cell or saved output quoting forgotten text: the forget names them and leaves them
    to the user; `hipo check` counts them (a pass: they are the user's, not the memory's)."""
    found = []
    for path in regular_files(store.root):
        relative = store.relative(path)
        if path.suffix != ".ipynb" or relative.startswith(f"{MEMORY_DIR}/"):
            continue
        try:
            data = parse_json(read_regular(path, MAX_NOTEBOOK_BYTES, relative), relative)
        except (OSError, HipoError):
            continue
        if any(hides(text) for text in _strings(data)):
            found.append(relative)
    return found


def _strings(value: object) -> list[str]:
    """Every string of a JSON value (a notebook's sources and outputs: lists of lines)."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def _made_from(path: Path, forgotten_ids: set[str]) -> bool:
    """Whether a saved conversation keeps a turn or zone made from a forgotten checkpoint."""
    try:
        data = parse_json(read_regular(path, MAX_STATE_BYTES, path.name), path.name)
    except (OSError, HipoError):
        return False
    return without_lineage(data, forgotten_ids) != data


def raw_logs_parse(memory: CheckedMemory) -> tuple[bool, str]:
    """Every raw daily log reads as UTF-8 Markdown (the logs are the source of truth)."""
    days = memory.store.raw_days()
    bad, checkpoints = [], 0
    for day in days:
        path = memory.store.raw_path(day)
        try:
            checkpoints += len(parse_log(memory.store.read_text(path), date=day.isoformat()))
        except (OSError, HipoError) as error:
            bad.append(f"{memory.store.relative(path)} ({error})")
    if bad:
        return False, "; ".join(bad)
    return True, f"{len(days)} day{'s' * (len(days) != 1)}, {checkpoints} checkpoints"


def compaction_fresh(memory: CheckedMemory) -> tuple[bool, str]:
    """The tree backs every raw entry: no fixed node misses a late entry, none is damaged, no
    closed period lacks its node.

    Tentative nodes behind the writes made since the last pass pass the rule (`chain._behind`
    says why): each write is already in its raw log, the index and ROOT.md, and a tentative
    node is provisional by definition, folded in by the next pass. That is the state every
    writer (a magic, MCP, the memory tool, a write-back) leaves, at no cost to the write;
    a write to a closed period compacts at once (`Memory` after a late entry)."""
    status = memory.status()
    stale = status.dirty_nodes - status.behind_nodes
    if stale:
        return False, f"{stale} node{'s' * (stale != 1)} to rebuild: run compact"
    if status.behind_nodes:
        return True, (
            f"{status.behind_nodes} tentative node{'s' * (status.behind_nodes != 1)} behind "
            "the latest writes, folded in by the next compaction"
        )
    return True, "no node to rebuild"


def layer1_within_budget(memory: CheckedMemory) -> tuple[bool, str]:
    """Each Layer 1 part fits its token budget (a part over it is cut in the prompt)."""
    layer1 = memory.layer1()
    over = [f"{p.name} {p.tokens:,}/{p.budget:,}" for p in layer1.parts if p.over_budget]
    if over:
        return False, "over budget: " + ", ".join(over)
    used = sum(part.tokens for part in layer1.parts)
    return True, f"{used:,} / {layer1.total_budget:,} tokens"


FOLDER_RULES: tuple[tuple[str, Callable[[CheckedMemory], tuple[bool, str]]], ...] = (
    ("raw logs parse", raw_logs_parse),
    ("compaction state is fresh", compaction_fresh),
    ("Layer 1 is within budget", layer1_within_budget),
    ("forgotten checkpoints leave no trace", forgotten_ids_remain),
    ("forgets are obeyed by every copy", forgets_obeyed),
)


def check_folder(memory: CheckedMemory) -> list[CheckResult]:
    """The folder-level rules, in the order `hipo check` prints them. A rule that cannot be
    evaluated (an unreadable folder) fails with the reason rather than stopping the others."""
    results = []
    for rule, check in FOLDER_RULES:
        try:
            passed, detail = check(memory)
        except (OSError, HipoError) as error:
            passed, detail = False, str(error)
        results.append(CheckResult(rule, passed, detail))
    return results


def results_text(results: list[CheckResult]) -> str:
    """One pass/FAIL line per rule, then the verdict: what `%hipo check` and `hipo check` print."""
    failed = sum(1 for result in results if not result.passed)
    verdict = "all rules pass" if not failed else f"{failed} of {len(results)} rules fail"
    return "\n".join([*(result.line() for result in results), verdict])
