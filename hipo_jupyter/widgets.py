"""ipywidgets that show the memory at a glance: the Topics Index and the context budget.

Both are thin views over one `Memory`: they read it, never write it, and redraw themselves when
it tells them something changed (`memory.subscribe`: "remember", "compact", "reindex"). Each also
renders as plain text, which `show_topics` / `show_budget` print where no widget front end runs
(terminal IPython) and which notebooks keep as the fallback for viewers without widget state
(nbconvert, GitHub).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from hipo_jupyter.memory import render
from hipo_jupyter.memory.recall import Hit, RecallResult
from hipo_jupyter.memory.store import node_path, raw_log_path
from hipo_jupyter.memory.topic_index import Topic

if TYPE_CHECKING:
    from hipo_jupyter.memory import Memory

HEALTHY, TIGHT, OVER = "healthy", "tight", "over"
BAR_STYLES = {HEALTHY: "success", TIGHT: "warning", OVER: "danger"}


def live_level(fraction: float) -> str:
    """The live conversation against the model's window: tight from 50%, over from 80%."""
    if fraction >= 0.8:
        return OVER
    return TIGHT if fraction >= 0.5 else HEALTHY


def part_level(fraction: float) -> str:
    """A Layer 1 part against its own budget: tight from 80%, over once it is cut (above 100%)."""
    if fraction > 1.0:
        return OVER
    return TIGHT if fraction >= 0.8 else HEALTHY


def _fraction(tokens: int, budget: int) -> float:
    if budget > 0:
        return tokens / budget
    return 0.0 if tokens == 0 else float("inf")


def _percent(fraction: float) -> str:
    return "∞%" if fraction == float("inf") else f"{fraction:.0%}"


def _text_bar(fraction: float, width: int = 20) -> str:
    filled = width if fraction == float("inf") else round(min(fraction, 1.0) * width)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


# --- text renderings ------------------------------------------------------------------------


def topics_text(memory: Memory) -> str:
    return render.topics_text(memory.topics())


def budget_text(memory: Memory, live_tokens: int | None = None, window: int | None = None) -> str:
    """Layer 1's table as every front end prints it, then the conversation's fill of the window."""
    lines = [render.budget_text(memory.layer1())]
    if live_tokens is not None and window:
        fraction = _fraction(live_tokens, window)
        lines.append(
            f"Conversation: {_text_bar(fraction)} {live_tokens:,} / {window:,} tokens"
            f"  ({_percent(fraction)})  {live_level(fraction)}"
        )
    return "\n".join(lines)


# --- widgets --------------------------------------------------------------------------------


class _MemoryView(widgets.VBox):
    """A VBox that redraws after memory events and falls back to text outside widget front ends."""

    def __init__(self, memory: Memory, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memory = memory
        self._unsubscribe: Callable[[], None] | None = memory.subscribe(self._on_memory_event)

    def _on_memory_event(self, event: str) -> None:
        self.refresh()

    def refresh(self) -> None:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = self.text()
        return bundle

    def close(self) -> None:
        """Stop listening to the memory, then close the widget and its children."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for child in self.children:
            child.close()
        super().close()


class TopicIndex(_MemoryView):
    """The Topics Index as topic -> periods -> nodes; a node opens inline; a box runs recall."""

    def __init__(self, memory: Memory, *, k: int = 5) -> None:
        self.k = k
        self.opened: str | None = None
        self.last_result: RecallResult | None = None
        self.header = widgets.HTML()
        self.search_box = widgets.Text(
            placeholder="Search memory (recall)…", continuous_update=False
        )
        self.search_button = widgets.Button(description="Recall", icon="search")
        self.results = widgets.VBox()
        self.topics_view = widgets.Accordion()
        self.content = widgets.HTML()
        self.search_box.observe(self._on_search_submit, names="value")
        self.search_button.on_click(lambda _: self.search())
        super().__init__(
            memory,
            children=[
                self.header,
                widgets.HBox([self.search_box, self.search_button]),
                self.results,
                self.topics_view,
                self.content,
            ],
        )
        self.refresh()

    @property
    def topic_names(self) -> list[str]:
        return list(self._topic_names)

    def refresh(self) -> None:
        topics = self.memory.topics()
        self._topic_names = [topic.name for topic in topics]
        self.header.value = (
            f"<b>Topics Index</b> · {len(topics)} topic{'s' if len(topics) != 1 else ''}"
            if topics
            else "<b>Topics Index</b> · empty: remember something with "
            "<code>%%remember &lt;title&gt; #topic</code>"
        )
        for old in self.topics_view.children:
            old.close()
        self.topics_view.children = [self._topic_box(topic) for topic in topics]
        self.topics_view.titles = tuple(self._topic_title(topic) for topic in topics)

    @staticmethod
    def _topic_title(topic: Topic) -> str:
        return f"{topic.line(detail=0)[2:]} · {render.counted(topic.count, 'checkpoint')}"

    def _topic_box(self, topic: Topic) -> widgets.VBox:
        rows: list[widgets.Widget] = []
        if topic.keywords:
            rows.append(widgets.HTML(f"<i>{html.escape(', '.join(topic.keywords))}</i>"))
        months = [(month, node_path("monthly", month)) for month in topic.months]
        weeks = [(week, node_path("weekly", week)) for week in topic.weeks]
        rows.append(self._period_row("months", months))
        rows.append(self._period_row("weeks", weeks))
        if topic.last_date:
            latest = [
                (f"{topic.last_date} (daily)", node_path("daily", topic.last_date)),
                (f"{topic.last_date} (raw)", raw_log_path(topic.last_date)),
            ]
            rows.append(self._period_row("latest", latest))
        return widgets.VBox(rows)

    def _period_row(self, label: str, nodes: list[tuple[str, str]]) -> widgets.HBox:
        buttons = [self._node_button(name, relative) for name, relative in nodes]
        return widgets.HBox([widgets.Label(f"{label}:", layout={"width": "5em"}), *buttons])

    def _node_button(self, name: str, relative: str) -> widgets.Button:
        built = (self.memory.root / relative).is_file()
        button = widgets.Button(
            description=name,
            tooltip=relative if built else f"{relative} (not built yet: %hipo compact)",
            disabled=not built,
            layout={"width": "auto"},
        )
        button.on_click(lambda _, relative=relative: self.open_node(relative))
        return button

    def open_node(self, relative: str) -> None:
        """Show one node (or raw log) below the index, as the file has it."""
        text = self.memory.read(relative)
        self.opened = relative
        self.content.value = (
            f"<b>{html.escape(relative)}</b>"
            f"<pre style='white-space: pre-wrap; max-height: 24em; overflow: auto'>"
            f"{html.escape(text)}</pre>"
        )

    def _on_search_submit(self, change: dict[str, Any]) -> None:
        if change["new"].strip():
            self.search(change["new"])

    def search(self, query: str | None = None) -> RecallResult | None:
        """Run recall for the box's text and list the hits with their drill-down paths."""
        query = (self.search_box.value if query is None else query).strip()
        if not query:
            self.results.children = []
            return None
        result = self.memory.recall(query, k=self.k, mode="auto")
        self.last_result = result
        for old in self.results.children:
            old.close()
        if not result.hits:
            self.results.children = [widgets.HTML(html.escape(render.no_hits_text(result)))]
            return result
        self.results.children = [self._hit_row(hit) for hit in result.hits]
        return result

    def _hit_row(self, hit: Hit) -> widgets.HBox:
        summary = widgets.HTML(
            f"<b>{html.escape(hit.title)}</b> · {html.escape(hit.date)} · {html.escape(hit.kind)}"
            f"<br><small>{html.escape(render.drill_down(hit))}</small>"
            f"<br>{html.escape(hit.snippet)}"
        )
        button = widgets.Button(description="open", tooltip=hit.file, layout={"width": "5em"})
        button.on_click(lambda _, relative=hit.file: self.open_node(relative))
        return widgets.HBox([button, summary])

    def text(self) -> str:
        return topics_text(self.memory)


class ContextBudget(_MemoryView):
    """One bar per Layer 1 part against its budget, and the live conversation against the window.

    The live bar shows only when `live_tokens` and `window` are given (by the constructor or by
    `set_live`, which `%%ask` calls after each turn).
    """

    def __init__(
        self, memory: Memory, *, live_tokens: int | None = None, window: int | None = None
    ) -> None:
        self.live_tokens = live_tokens
        self.window = window
        self.header = widgets.HTML()
        self.part_bars: dict[str, widgets.FloatProgress] = {}
        self.part_labels: dict[str, widgets.Label] = {}
        self.parts_box = widgets.VBox()
        self.live_bar = widgets.FloatProgress(min=0, max=100, description="conversation")
        self.live_label = widgets.Label()
        self.live_row = widgets.HBox([self.live_bar, self.live_label])
        super().__init__(memory, children=[self.header, self.parts_box, self.live_row])
        self.refresh()

    def refresh(self) -> None:
        layer1 = self.memory.layer1()
        self.header.value = (
            f"<b>Layer 1</b> · {layer1.total_tokens:,} / {layer1.total_budget:,} tokens "
            "in every prompt"
        )
        rows = []
        for part in layer1.parts:
            bar = self.part_bars.get(part.name)
            if bar is None:
                bar = self.part_bars[part.name] = widgets.FloatProgress(
                    min=0, max=100, description=part.name
                )
                self.part_labels[part.name] = widgets.Label()
            fraction = _fraction(part.tokens, part.budget)
            bar.value = min(fraction, 1.0) * 100
            bar.bar_style = BAR_STYLES[part_level(fraction)]
            cut = " · cut to budget" if part.truncated else ""
            self.part_labels[
                part.name
            ].value = f"{part.tokens:,} / {part.budget:,} tokens ({_percent(fraction)}){cut}"
            rows.append(widgets.HBox([bar, self.part_labels[part.name]]))
        self.parts_box.children = rows
        self._draw_live()

    def set_live(self, live_tokens: int | None, window: int | None) -> None:
        """Show (or, with None, hide) the live conversation fill against the model's window."""
        self.live_tokens, self.window = live_tokens, window
        self._draw_live()

    @property
    def live_level(self) -> str | None:
        if self.live_tokens is None or not self.window:
            return None
        return live_level(_fraction(self.live_tokens, self.window))

    def _draw_live(self) -> None:
        level = self.live_level
        if level is None:
            self.live_row.layout.display = "none"
            return
        fraction = _fraction(self.live_tokens or 0, self.window or 0)
        self.live_row.layout.display = None
        self.live_bar.value = min(fraction, 1.0) * 100
        self.live_bar.bar_style = BAR_STYLES[level]
        self.live_label.value = (
            f"{self.live_tokens:,} / {self.window:,} tokens (~{_percent(fraction)}) · {level}"
        )

    def text(self) -> str:
        return budget_text(self.memory, self.live_tokens, self.window)


# --- display --------------------------------------------------------------------------------


def widget_frontend() -> bool:
    """True inside a Jupyter kernel (ipykernel with comms), where widgets can render."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show_topics(memory: Memory) -> None:
    """`%hipo topics`: the TopicIndex widget in a kernel, its text rendering elsewhere."""
    _show(lambda: TopicIndex(memory), lambda: topics_text(memory))


def show_budget(
    memory: Memory, *, live_tokens: int | None = None, window: int | None = None
) -> None:
    """`%hipo budget`: the ContextBudget widget in a kernel, its text rendering elsewhere."""
    _show(
        lambda: ContextBudget(memory, live_tokens=live_tokens, window=window),
        lambda: budget_text(memory, live_tokens, window),
    )


def _show(make_widget: Callable[[], widgets.Widget], make_text: Callable[[], str]) -> None:
    if widget_frontend():
        from IPython.display import display

        display(make_widget())
    else:
        print(make_text())
