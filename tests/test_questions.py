"""The input transformer that lets a `%recall` query end in a question mark."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipo_jupyter.ipython.questions import recall_questions


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%recall when is the launch?\n", "%recall when is the launch\n"),
        ("  %recall when is the launch ??  ", "  %recall when is the launch"),
        ("hits = %recall why -k 3?\n", "hits = %recall why -k 3\n"),
        ("%recall?\n", "%recall?\n"),  # help on the magic itself
        ("%recall ?\n", "%recall ?\n"),
        ("%recall when\n", "%recall when\n"),
        ("%recallx what?\n", "%recallx what?\n"),
        ("%hipo status?\n", "%hipo status?\n"),
        ("len?\n", "len?\n"),
        ('print("%recall x?")\n', 'print("%recall x?")\n'),
    ],
)
def test_only_recall_lines_lose_their_question_marks(line: str, expected: str) -> None:
    assert recall_questions([line]) == [expected]


@given(st.lists(st.text().filter(lambda s: "%recall" not in s)))
def test_other_lines_pass_unchanged(lines: list[str]) -> None:
    assert recall_questions(lines) == lines
