"""How long a hostile `%%ask` reply holds the kernel while it streams in and is rendered.

    python benchmarks/reply_render.py [--runs 3] [--sizes 60000 250000 1000000] [--cap 20]

Each reply is streamed, 16 characters a chunk (a text delta is a few tokens), into the
kernel's reply view with the display going nowhere, as fast as the chunks come (a buffered
socket): `after` is `hipo_jupyter.ipython.display.ReplyView`; `before` is the view as it was
(the whole growing reply rendered as Markdown again at every update, no bound), run on the
smallest size only and stopped at `--cap` seconds. Prints, per shape and size, the median total
time, the longest single stall of the kernel (one `add` or `close`), and the ratio to before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from IPython.core.displaypub import DisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.display import display  # noqa: E402

from hipo_jupyter.ipython import display as reply_display  # noqa: E402

CHUNK = 16


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


SHAPES: dict[str, Callable[[int], str]] = {
    "unmatched *": _repeat("*a "),
    "unmatched * and _": _repeat("*_"),
    "unmatched _": _repeat("_a "),
    "nesting >>>>": lambda size: ">" * (size - 2) + " x",
    "long list": _repeat("- item\n"),
    "backticks": _repeat("`a ``b "),
    "brackets [](": _repeat("[a]("),
    "huge table": lambda size: "|a|b|\n|-|-|\n" + _repeat("|x|y|\n")(size - 12),
}


class NullPublisher(DisplayPublisher):
    """The display goes nowhere: what is measured is the kernel's own work."""

    def publish(self, *args: Any, **kwargs: Any) -> None:
        return None


class BeforeReplyView:
    """The reply view as it was: the text appended to one string, and the whole of it
    rendered as Markdown again at each update at least 0.1 s after the last one began."""

    def __init__(self) -> None:
        self.text = ""
        self._handle: Any = None
        self._last = 0.0

    def add(self, chunk: str) -> None:
        self.text += chunk
        now = time.monotonic()
        if self._handle is None:
            self._handle = display(self._bundle(), raw=True, display_id=True)
        elif now - self._last >= 0.1:
            self._handle.update(self._bundle(), raw=True)
        else:
            return
        self._last = now

    def close(self) -> None:
        self._handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        shown = reply_display.visible(self.text)
        return {"text/html": reply_display.inert_html(shown), "text/plain": shown}


def stream(view: Any, text: str, cap: float | None = None) -> tuple[float, float, bool]:
    """(total seconds, longest stall, finished) for `text` streamed into `view`."""
    longest = 0.0
    started = time.perf_counter()
    for start in range(0, len(text), CHUNK):
        before = time.perf_counter()
        view.add(text[start : start + CHUNK])
        longest = max(longest, time.perf_counter() - before)
        if cap is not None and time.perf_counter() - started > cap:
            return time.perf_counter() - started, longest, False
    before = time.perf_counter()
    view.close()
    longest = max(longest, time.perf_counter() - before)
    return time.perf_counter() - started, longest, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[60_000, 250_000, 1_000_000])
    parser.add_argument("--cap", type=float, default=20.0, help="seconds before is stopped at")
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    args = parser.parse_args(argv)

    shell = InteractiveShell.instance()
    shell.display_pub = NullPublisher(shell=shell)
    shell.kernel = object()  # the view renders HTML as in a notebook kernel
    load = os.getloadavg()[0]
    print(
        f"# reply rendering: {os.cpu_count()} cores, load {load:.1f}, {args.runs} runs, "
        f"chunks of {CHUNK} characters, before capped at {args.cap:g} s"
    )
    print("| shape | size | before s | after s (median) | longest stall s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.shapes:
        for index, size in enumerate(sorted(args.sizes)):
            text = SHAPES[name](size)
            before_text, before_value = "-", None
            if index == 0:
                total, _, done = stream(BeforeReplyView(), text, cap=args.cap)
                before_value = total
                before_text = f"{total:.2f}" if done else f">{args.cap:g}"
            totals, stalls = [], []
            for _ in range(args.runs):
                total, stall, _ = stream(reply_display.ReplyView(shell), text)
                totals.append(total)
                stalls.append(stall)
            after = statistics.median(totals)
            ratio = "-"
            if before_value is not None:
                ratio = f"{before_value / after:.0f}x" + ("" if before_text[0] != ">" else "+")
            print(
                f"| {name} | {size:,} | {before_text} | {after:.2f} | "
                f"{statistics.median(stalls):.2f} | {ratio} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
