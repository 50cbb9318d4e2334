"""A tqdm bar behind the engine's `progress(done, total, label)` callback.

tqdm.auto draws a widget bar in a notebook and a text bar in a terminal. The bar is created on
the first call, so a compaction with nothing to do draws nothing at all.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from tqdm.auto import tqdm


class ProgressBar:
    def __init__(self, description: str, *, unit: str = "node", leave: bool = True) -> None:
        self.description = description
        self.unit = unit
        self.leave = leave
        self._bar: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self._bar is None:
            self._bar = tqdm(total=total, desc=self.description, leave=self.leave, unit=self.unit)
        self._bar.total = total
        self._bar.n = done
        self._bar.set_postfix_str(label, refresh=False)
        self._bar.refresh()

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
