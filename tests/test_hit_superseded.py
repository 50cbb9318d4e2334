"""Whether a correction superseded a hit is a typed field, `Hit.superseded` (issue 49: decisions
read typed fields, never display text): set on the hits `--all` shows, read by the notebook-week
benchmark's "the user's note in force", whatever the notebook's name says."""

from __future__ import annotations

from pathlib import Path

from benchmark_helpers import load_benchmark

from hipo_jupyter.memory import Memory, RecallQuery
from hipo_jupyter.memory.views import correct

week = load_benchmark("notebook_week.py", "notebook_week_superseded")
WRONG = "the renewal price is 9999 EUR a seat"
RIGHT = "the renewal price is 99 EUR a seat"


def test_a_superseded_hit_says_so_in_a_field_not_only_in_its_text(memory_root: Path) -> None:
    memory = Memory(memory_root)
    try:
        # a notebook named with the display phrase: its hits must not read as superseded
        named = "superseded by a correction.ipynb"
        wrong = memory.remember("Renewal price", f"- outcome: {WRONG}", notebook=named,
                                via="magic")  # fmt: skip
        correct(memory, wrong.id, "", f"- outcome: {RIGHT}", via="cli", notebook=named)
        request = RecallQuery.parse("renewal price", superseded=True, mode="keyword")
        hits = {hit.snippet: hit for hit in memory.recall_query(request).hits}
    finally:
        memory.close()
    old = next(hit for snippet, hit in hits.items() if "9999" in snippet)
    new = next(hit for snippet, hit in hits.items() if "9999" not in snippet)
    assert old.superseded and not new.superseded
    assert "superseded by a correction" in new.provenance  # the notebook's name, nothing more
    assert not week.users_note_in_force(old)
    assert week.users_note_in_force(new)
