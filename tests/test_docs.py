"""The pages a user reads stay a user's pages: the README short, no project bookkeeping (issue
numbers, work rounds) in any of them, every figure's home linked, and the licence pyproject
names actually shipped."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
USER_PAGES = [
    "README.md",
    "benchmarks/README.md",
    "benchmarks/LOCOMO.md",
    "docs/RELIABILITY.md",
    "labextension/README.md",
]
BOOKKEEPING = re.compile(
    r"\bissue[- ]?#?\d+|\bissues? \d+|#\d{1,3}\b(?![\w-])|\bround (one|two|three|four|five|\d+)\b"
    r"|\b(first|second|third|fourth|fifth|this|last|next) round\b|\bround (four|three)'s",
    re.IGNORECASE,
)


def test_the_readme_is_a_page_a_user_reads_through() -> None:
    lines = (REPO / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines: move detail to docs/"


@pytest.mark.parametrize("page", USER_PAGES)
def test_no_issue_numbers_or_rounds_where_a_user_reads(page: str) -> None:
    path = REPO / page
    if not path.exists():
        pytest.skip(f"{page} is not in this tree")
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        found = BOOKKEEPING.search(line)
        assert not found, f"{page}:{number}: {found.group(0)!r} in {line.strip()!r}"


def test_the_readme_covers_what_a_user_needs() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    for needed in (
        'pip install "hipo-jupyter[lab]"',
        "make demo",
        "make test",
        "## In a notebook",
        "## From the command line",
        "## Agents",
        "sidebar",
        "## Configuration",
        "## Where the data lives",
        "docs/RELIABILITY.md",
        "benchmarks/README.md",
    ):
        assert needed in readme, needed
    for linked in re.findall(r"\]\(((?!https?:)[^)#]+)\)", readme):
        assert (REPO / linked).exists(), f"README links to a missing {linked}"


def test_the_licence_pyproject_names_is_shipped() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT"
    text = (REPO / "LICENSE").read_text("utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_the_bookkeeping_check_catches_what_it_is_for() -> None:
    """The pattern above must match what it guards against, or the tests above prove nothing."""
    for bad in ("see issue 13", "issue-13 speed work", "after round four", "the third round"):
        assert BOOKKEEPING.search(bad), bad
    for fine in ("checkpoint round trips 14k", "a round value on a flat stretch", "issues show"):
        assert not BOOKKEEPING.search(fine), fine
