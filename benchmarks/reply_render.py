"""How long a hostile `%%ask` reply holds the kernel while it streams in and is rendered.

    python benchmarks/reply_render.py [--runs 3] [--sizes 60000 250000 1000000] [--cap 60]
        [--pace 0.001] [--shapes ...]

Each reply is a real `%%ask` in an IPython shell that renders HTML as a notebook kernel does
(the display goes nowhere), its Claude call going through the anthropic SDK to the Messages
API stand-in of tests/claude_helpers.py on 127.0.0.1, which streams the reply in text deltas
of 16 characters, one every `--pace` seconds (a model writes a few tokens at a time; 1 ms is
some ten times faster than one, which keeps the runs short). `after` is the reply view of this
tree; `before` is the view as it was (the whole growing reply rendered as Markdown again at
each update, no bound), run on the smallest size only and stopped at `--cap` seconds. Prints,
per shape and size: the stream's own length (deltas x pace), the cell's total time, the time
the kernel spent inside the view (rendering), the longest single stall there (how long the
kernel could do nothing else), medians of the runs, and rendering before / after as a ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from claude_helpers import SDK_CREDENTIAL_VARIABLES, FakeMessagesAPI, serve  # noqa: E402
from IPython.core.displaypub import DisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.display import display  # noqa: E402

from hipo_jupyter.ipython import display as reply_display  # noqa: E402

CHUNK = 16


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


SHAPES: dict[str, Callable[[int], str]] = {
    "prose (baseline)": _repeat("The plan holds: cut the starter tier by 15% in March. "),
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


class OutOfTime(Exception):
    pass


class BeforeReplyView:
    """The reply view as it was: the text appended to one string, and the whole of it
    rendered as Markdown again at each update at least 0.1 s after the last one began."""

    def __init__(self, shell: Any) -> None:
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
        if self._handle is not None:
            self._handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        shown = reply_display.visible(self.text)
        return {"text/html": reply_display.inert_html(shown), "text/plain": shown}


def timed(view_class: type, cap: float | None, stalls: list[float]) -> type:
    """`view_class` with each add and close timed into `stalls`, stopped past `cap` seconds."""
    started = time.perf_counter()

    class Timed(view_class):  # type: ignore[misc, valid-type]
        def add(self, chunk: str) -> None:
            begin = time.perf_counter()
            super().add(chunk)
            stalls.append(time.perf_counter() - begin)
            if cap is not None and time.perf_counter() - started > cap:
                raise OutOfTime

        def close(self) -> None:
            begin = time.perf_counter()
            super().close()
            stalls.append(time.perf_counter() - begin)

    return Timed


def ask(shell: Any, api: FakeMessagesAPI, text: str, view_class: type, cap: float | None):
    """(seconds, seconds rendering, longest stall, finished) of one `%%ask` answered with
    `text`."""
    stalls: list[float] = []
    api.replies.append(text)
    reply_display.ReplyView = timed(view_class, cap, stalls)  # type: ignore[misc]
    started = time.perf_counter()
    result = shell.run_cell("%%ask --no-recall\nAnswer, please.", store_history=True)
    elapsed = time.perf_counter() - started
    error = result.error_in_exec
    if error is not None and not isinstance(error, OutOfTime):
        raise error
    return elapsed, sum(stalls), max(stalls, default=0.0), error is None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[60_000, 250_000, 1_000_000])
    parser.add_argument("--cap", type=float, default=60.0, help="seconds before is stopped at")
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--pace", type=float, default=0.001, help="seconds between deltas")
    args = parser.parse_args(argv)

    for name in SDK_CREDENTIAL_VARIABLES:
        os.environ.pop(name, None)
    api = FakeMessagesAPI(chunk_chars=CHUNK, pace=args.pace)
    after_class = reply_display.ReplyView
    with serve(api) as url, tempfile.TemporaryDirectory() as root:
        os.environ.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="bench-key")
        shell = InteractiveShell.instance()
        shell.display_pub = NullPublisher(shell=shell)
        shell.kernel = object()  # the view renders HTML as in a notebook kernel
        for line in (
            f"%config Hipo.root = {root!r}",
            "%config Hipo.summarizer = 'extractive'",
            "%config Hipo.auto_checkpoint = False",
            "%load_ext hipo",
        ):
            shell.run_cell(line)
        print(
            f"# reply rendering: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
            f"{args.runs} runs, deltas of {CHUNK} characters every {args.pace * 1000:g} ms, "
            f"before stopped at {args.cap:g} s"
        )
        print(
            "| shape | size | stream s | before: cell s | rendering s | after: cell s "
            "| rendering s | longest stall s | rendering before / after |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name in args.shapes:
            for index, size in enumerate(sorted(args.sizes)):
                text = SHAPES[name](size)
                stream = -(-len(text) // CHUNK) * args.pace
                before = ["-", "-"]
                busy_before = None
                if index == 0:
                    shell.run_cell("%ask reset")
                    cell, busy_before, _, done = ask(shell, api, text, BeforeReplyView, args.cap)
                    mark = "" if done else ">"
                    before = [f"{mark}{cell:.1f}", f"{mark}{busy_before:.1f}"]
                runs = []
                for _ in range(args.runs):
                    shell.run_cell("%ask reset")
                    runs.append(ask(shell, api, text, after_class, None)[:3])
                cell, busy, stall = (
                    statistics.median(column) for column in zip(*runs, strict=True)
                )
                ratio = "-"
                if busy_before is not None:
                    ratio = f"{before[1][0] if before[1][0] == '>' else ''}"
                    ratio += f"{busy_before / max(busy, 1e-3):.0f}x"
                print(
                    f"| {name} | {size:,} | {stream:.1f} | {before[0]} | {before[1]} | "
                    f"{cell:.1f} | {busy:.2f} | {stall:.2f} | {ratio} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
