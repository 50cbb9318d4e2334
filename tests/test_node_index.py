"""Nodes are indexed as memory, not as markup: the hipo comment lines a verbatim node copies
from its raw log (ids, notebook names, `via=import`) are no words of it."""

from __future__ import annotations

import sqlite3
from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import without_comments

DAY = date(2026, 3, 12)


def test_comment_lines_are_dropped_and_every_other_line_kept() -> None:
    text = (
        "## Tank census [project]\n"
        "<!-- hipo id=2026-03-12T10:00:00Z-7f3a notebook=aquarium.ipynb cell=3 via=magic -->\n"
        "- outcome: 41 zebrafish\n"
        "  <!-- hipo id=x via=import -->  \n"
        "a line that quotes <!-- hipo id=y --> inside it"
    )
    assert without_comments(text) == (
        "## Tank census [project]\n"
        "- outcome: 41 zebrafish\n"
        "a line that quotes <!-- hipo id=y --> inside it"
    )


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=40)))
def test_text_without_comment_lines_is_unchanged(lines: list[str]) -> None:
    kept = [line for line in lines if "<!--" not in line]
    assert without_comments("\n".join(kept)) == "\n".join(kept)


def test_a_notebook_name_in_a_comment_finds_nothing(memory_root) -> None:
    """Before, the daily, weekly and monthly nodes (verbatim under the threshold) were hits for
    the notebook's name and for "import": words no checkpoint holds."""
    memory = Memory(memory_root, today=lambda: DAY)
    memory.remember("Tank census", "- outcome: 41 zebrafish", notebook="aquarium.ipynb", cell="3")
    memory.compact()
    daily = (memory_root / "memory" / "daily" / "2026-03-12.md").read_text()
    assert "aquarium.ipynb" in daily  # the node keeps the line for the reader
    assert memory.recall("aquarium").hits == []
    assert [hit.kind for hit in memory.recall("zebrafish").hits] == ["raw"]
    memory.close()


def test_an_index_made_before_m004_indexes_its_nodes_again(memory_root) -> None:
    memory = Memory(memory_root, today=lambda: DAY)
    memory.remember("Tank census", "- outcome: 41 zebrafish", notebook="aquarium.ipynb")
    memory.compact()
    memory.close()
    index = memory_root / "memory" / ".index" / "fts5.sqlite3"
    with sqlite3.connect(index) as db:  # as the release before m004 left it: hashes recorded
        db.execute("delete from _migrations where name = 'm004_node_text_without_comments'")
        db.execute("update files set hash = 'as-indexed-before' where path like 'memory/daily/%'")
        db.executemany(  # vectors as the semantic extra would have recorded them
            "insert into vector_files (path, hash, model) values (?, 'h', 'minilm')",
            [("memory/2026-03-12.md",), ("memory/daily/2026-03-12.md",)],
        )
    memory = Memory(memory_root, today=lambda: DAY)
    assert memory.recall("zebrafish").hits  # opening migrates and syncs
    with sqlite3.connect(index) as db:
        hashes = [row[0] for row in db.execute("select hash from files")]
        embedded = [row[0] for row in db.execute("select path from vector_files")]
    assert hashes and "as-indexed-before" not in hashes
    assert embedded == ["memory/2026-03-12.md"]  # the node forgotten (to embed anew), the log kept
    memory.close()
