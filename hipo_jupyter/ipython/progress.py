"""The engine's `progress(done, total, label)` callback as a bar the person can see.

In a kernel the bar is one display output updated in place (`display_id`), HTML with a text
fallback, not an ipywidget: a widget bar leaves a dozen models in the saved notebook's widget
state (its layouts and styles outlive a closed bar), and a notebook saved or run headless keeps
whatever the bar showed last, "compacting: 0%" included. Here the last update is the final
one: the finished line, or nothing at all for a bar that should not stay (`leave=False`).
In a terminal IPython it is tqdm's text bar on stderr. The bar appears on the first call, so a
compaction with nothing to do draws nothing; updates are throttled to a few a second.
"""

from __future__ import annotations

import html
import sys
import time
from types import TracebackType
from typing import Any

MIN_INTERVAL = 0.2  # seconds between two redraws of a kernel bar (the last one always draws)


def in_kernel() -> bool:
    """True inside a Jupyter kernel, where a display output can be updated in place."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def bar_bundle(description: str, done: int, total: int, label: str, unit: str) -> dict[str, str]:
    """One state of the bar as a MIME bundle: an HTML <progress> and the same line as text, so
    every reader of the saved notebook (JupyterLab, nbviewer, a terminal) shows it."""
    share = f"{100 * done // total}%" if total else ""
    text = f"{description}: {share} {done}/{total} {unit}s {label}".rstrip()
    markup = (
        f"<div><progress value='{done}' max='{max(total, 1)}' style='width: 16em'></progress> "
        f"<code>{html.escape(text)}</code></div>"
    )
    return {"text/plain": text, "text/html": markup}


class _KernelBar:
    """A display output updated in place."""

    def __init__(self, description: str, unit: str, leave: bool) -> None:
        from IPython.display import display

        self.description, self.unit, self.leave = description, unit, leave
        self.handle = display({"text/plain": ""}, raw=True, display_id=True)
        self._drawn_at = 0.0
        self._last: tuple[int, int, str] = (0, 0, "")

    def update(self, done: int, total: int, label: str) -> None:
        self._last = (done, total, label)
        now = time.monotonic()
        if now - self._drawn_at >= MIN_INTERVAL or done >= total:
            self._drawn_at = now
            state = bar_bundle(self.description, done, total, label, self.unit)
            self.handle.update(state, raw=True)

    def close(self) -> None:
        done, total, _ = self._last
        if self.leave:
            final = bar_bundle(self.description, done, total, "done", self.unit)
        else:
            final = {"text/plain": ""}  # a bar that should not stay leaves no line behind
        self.handle.update(final, raw=True)


class _TerminalBar:
    """tqdm's text bar on stderr (a terminal IPython)."""

    def __init__(self, description: str, unit: str, leave: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(desc=description, unit=unit, leave=leave, file=sys.stderr)

    def update(self, done: int, total: int, label: str) -> None:
        self.bar.total = total
        self.bar.n = done
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


class ProgressBar:
    """`with ProgressBar("compacting") as bar: memory.compact(progress=bar)`."""

    def __init__(self, description: str, *, unit: str = "node", leave: bool = True) -> None:
        self.description = description
        self.unit = unit
        self.leave = leave
        self._bar: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self._bar is None:
            kind = _KernelBar if in_kernel() else _TerminalBar
            self._bar = kind(self.description, self.unit, self.leave)
        self._bar.update(done, total, label)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
