"""Work a call does, counted, for tests that hold a cost (never wall time: benchmarks/ time it)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def lines_run(call: Callable[[], T]) -> tuple[int, T]:
    """(the Python lines `call` ran, what it returned)."""
    count = [0]

    def each_line(frame, event, arg):  # noqa: ANN001, ANN202 - sys.settrace's
        if event == "line":
            count[0] += 1
        return each_line

    sys.settrace(lambda frame, event, arg: each_line)
    try:
        result = call()
    finally:
        sys.settrace(None)
    return count[0], result
