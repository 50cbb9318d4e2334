"""A note in one line (issue 44, item 4): `%remember TEXT` and `hipo remember "TEXT"` take a
plain line and title it from its words; `TITLE: text` keeps naming its title, and a one-word
label (`Standup: ...`) no longer gives every standup the same title."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import run_hipo
from test_magics import TODAY, RaisingShell, bare_shell, run, shell  # noqa: F401

from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory.requests import one_line_note, title_from_text


def titles(root: Path) -> list[str]:
    return [c.title for c in parse_log((root / "memory" / f"{TODAY}.md").read_text(), date=TODAY)]


def test_a_plain_line_in_a_notebook_is_a_note_titled_by_its_words(
    shell: RaisingShell,  # noqa: F811
    memory_root: Path,
) -> None:
    run(shell, "%remember moved the launch to May, after the vendor delay #launch")
    run(shell, "%remember Standup: moved the launch to May")
    run(shell, "%remember Standup: the demo is on Friday at 10:30")
    run(shell, "%remember Cache bug #cache: the key ignored the region")
    run(shell, "%remember call Anna at 10:30 about https://example.com/q2 --type user")
    assert titles(memory_root) == [
        "moved the launch to May",
        "Standup: moved the launch to May",
        "Standup: the demo is on Friday at 10:30",
        "Cache bug",  # `TITLE: text` names its title, as before
        "call Anna at 10:30 about https://example.com/q2",  # `10:30` and `://` are text
    ]
    log = parse_log((memory_root / "memory" / f"{TODAY}.md").read_text(), date=TODAY)
    assert log[0].tags == ("launch",) and "after the vendor delay" in log[0].text
    assert log[4].type == "user"
    hits = shell.run_line_magic("recall", "vendor delay")
    assert hits[0].title == "moved the launch to May"


def test_hipo_remember_takes_one_line(memory_root: Path) -> None:
    done = run_hipo(memory_root, "remember", "nobody books a call with me before 10am")
    assert done.returncode == 0, done.stderr
    done = run_hipo(memory_root, "remember", "Standup: moved the launch to May")
    assert done.returncode == 0, done.stderr
    piped = run_hipo(memory_root, "remember", "Launch plan", stdin="- decisions: ship it\n")
    assert piped.returncode == 0, piped.stderr  # a title with the body on stdin, as before
    assert titles(memory_root) == [
        "nobody books a call with me before 10am",
        "Standup: moved the launch to May",
        "Launch plan",
    ]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Standup, moved the launch to May. QA next", "Standup, moved the launch to May"),
        ("My hours. No calls before 10am.", "My hours. No calls before 10am"),
        (
            "we decided to move the launch to May because the vendor is late and QA needs time",
            "we decided to move the launch to May because the vendor",
        ),
        ("x" * 80, "x" * 60),
    ],
)
def test_a_title_from_text_is_its_first_clause_cut_at_a_word(text: str, title: str) -> None:
    assert title_from_text(text) == title
    assert len(title_from_text(text)) <= 60


def test_one_line_keeps_type_and_tags_in_the_title_line() -> None:
    assert one_line_note("the region bug is fixed #cache [reference]") == (
        "the region bug is fixed [reference] #cache",
        "the region bug is fixed",
    )
