"""What happened to a memory, told to whoever listens: widgets and the sidebar refresh after
"remember", "compact" or "reindex" without the engine knowing anything of them."""

from __future__ import annotations

from collections.abc import Callable

Listener = Callable[[str], None]


class Listeners:
    """The callbacks of one `Memory`, called in the order they subscribed."""

    def __init__(self) -> None:
        self._callbacks: list[Listener] = []

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Add `callback`; returns the function that removes it again."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def notify(self, event: str) -> None:
        """Call every callback with `event`; one that raises is passed over."""
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:  # a broken widget must never break a checkpoint
                continue
