"""ipywidgets that show the memory at a glance: the Topics Index and the context budget.

Both are thin views over one `Memory`: they read it, never write it, and redraw themselves when
it tells them something changed (`memory.subscribe`: "remember", "compact", "reindex"). Each also
renders as plain text, which `show_topics` / `show_budget` print where no widget front end runs
(terminal IPython) and which notebooks keep as the fallback for viewers without widget state
(nbconvert, GitHub).

A saved notebook keeps every widget model its kernel still has open, and each ipywidget
brings a Layout and a Style model of its own. So the views share one Layout per shape and one
Style per kind (`_Shared`), reuse their rows across redraws, and close whole subtrees
(`close_tree`) when a redraw drops them: a run quickstart keeps a few dozen models, none of
them orphaned by a redraw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_int import ProgressStyle
from ipywidgets.widgets.widget_string import HTMLStyle, LabelStyle

from hipo_jupyter.memory import DEFAULT_RECALL_MODE, render
from hipo_jupyter.memory.disk import node_path, raw_log_path
from hipo_jupyter.memory.recall import Hit, RecallResult
from hipo_jupyter.memory.tree import Topic

from .display import shown_html

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


def close_tree(widget: widgets.Widget) -> None:
    """Close a widget and every box below it (ipywidgets' own `close` leaves the children)."""
    for child in getattr(widget, "children", ()):
        close_tree(child)
    widget.close()


class _Shared:
    """One Layout per shape and one Style per kind for all the widgets of a view."""

    def __init__(self) -> None:
        self._layouts: dict[tuple[tuple[str, str], ...], widgets.Layout] = {}
        self._styles: dict[type, widgets.Widget] = {}

    def layout(self, **shape: str) -> widgets.Layout:
        key = tuple(sorted(shape.items()))
        if key not in self._layouts:
            self._layouts[key] = widgets.Layout(**shape)
        return self._layouts[key]

    def style(self, kind: type) -> Any:
        if kind not in self._styles:
            self._styles[kind] = kind()
        return self._styles[kind]

    def html(self, value: str = "") -> widgets.HTML:
        return widgets.HTML(value, layout=self.layout(), style=self.style(HTMLStyle))

    def label(self, value: str = "", **shape: str) -> widgets.Label:
        return widgets.Label(value, layout=self.layout(**shape), style=self.style(LabelStyle))

    def button(self, **kwargs: Any) -> widgets.Button:
        shape = kwargs.pop("shape", {})
        return widgets.Button(
            layout=self.layout(**shape), style=self.style(widgets.ButtonStyle), **kwargs
        )

    def hbox(self, children: list[widgets.Widget]) -> widgets.HBox:
        return widgets.HBox(children, layout=self.layout(flex_flow="row"))

    def vbox(self, children: list[widgets.Widget]) -> widgets.VBox:
        return widgets.VBox(children, layout=self.layout(flex_flow="column"))

    def close(self) -> None:
        for widget in [*self._layouts.values(), *self._styles.values()]:
            widget.close()
        self._layouts.clear()
        self._styles.clear()


class _MemoryView(widgets.VBox):
    """A VBox that redraws after memory events and falls back to text outside widget front ends."""

    shared: _Shared

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
        if bundle is not None:  # what a reader without this widget's state shows instead
            text = self.text()
            bundle["text/plain"] = text
            bundle["text/html"] = f"<pre>{shown_html(text)}</pre>"
        return bundle

    def close(self) -> None:
        """Stop listening to the memory, then close the widget and its children."""
        if getattr(self, "_unsubscribe", None) is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for child in self.children:
            close_tree(child)
        super().close()
        if hasattr(self, "shared"):
            self.shared.close()


class TopicIndex(_MemoryView):
    """The Topics Index as topic -> periods -> nodes; a node opens inline; a box runs recall."""

    def __init__(self, memory: Memory, *, k: int = 5) -> None:
        self.k = k
        self.opened: str | None = None
        self.last_result: RecallResult | None = None
        self.shared = shared = _Shared()
        self._boxes: dict[str, widgets.VBox] = {}
        self._rows: dict[tuple[str, str], Any] = {}
        self._targets: dict[str, str] = {}  # node button's model id -> the file it opens
        self.header = shared.html()
        self.search_box = widgets.Text(
            placeholder="Search memory (recall)…", continuous_update=False
        )
        self.search_button = shared.button(description="Recall", icon="search")
        self.results = shared.vbox([])
        self.topics_view = widgets.Accordion()
        self.content = shared.html()
        self.search_box.observe(self._on_search_submit, names="value")
        self.search_button.on_click(lambda _: self.search())
        super().__init__(
            memory,
            children=[
                self.header,
                shared.hbox([self.search_box, self.search_button]),
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
        """Redraw in place: a topic's box, rows and buttons are made once and updated after,
        because a saved notebook keeps every model ever opened (nbclient keeps closed ones
        too), and a redraw runs after every checkpoint while the index is on screen."""
        topics = self.memory.topics()
        self._topic_names = [topic.name for topic in topics]
        self.header.value = (
            f"<b>Topics Index</b> · {len(topics)} topic{'s' if len(topics) != 1 else ''}"
            if topics
            else "<b>Topics Index</b> · empty: remember something with "
            "<code>%%remember &lt;title&gt; #topic</code>"
        )
        boxes = [self._topic_box(topic) for topic in topics]
        if tuple(boxes) != tuple(self.topics_view.children):
            self.topics_view.children = boxes
        self.topics_view.titles = tuple(self._topic_title(topic) for topic in topics)
        for gone in set(self._boxes) - set(self._topic_names):
            close_tree(self._boxes.pop(gone))
            self._rows = {key: row for key, row in self._rows.items() if key[0] != gone}

    @staticmethod
    def _topic_title(topic: Topic) -> str:
        return f"{topic.line(detail=0)[2:]} · {render.counted(topic.count, 'checkpoint')}"

    def _topic_box(self, topic: Topic) -> widgets.VBox:
        rows: list[widgets.Widget] = []
        if topic.keywords:
            words = f"<i>{shown_html(', '.join(topic.keywords))}</i>"
            rows.append(self._row(topic.name, "keywords", lambda: self.shared.html()))
            rows[-1].value = words
        months = [(month, node_path("monthly", month)) for month in topic.months]
        weeks = [(week, node_path("weekly", week)) for week in topic.weeks]
        rows.append(self._period_row(topic.name, "months", months))
        rows.append(self._period_row(topic.name, "weeks", weeks))
        if topic.last_date:
            latest = [
                (f"{topic.last_date} (daily)", node_path("daily", topic.last_date)),
                (f"{topic.last_date} (raw)", raw_log_path(topic.last_date)),
            ]
            rows.append(self._period_row(topic.name, "latest", latest))
        box = self._boxes.get(topic.name)
        if box is None:
            box = self._boxes[topic.name] = self.shared.vbox(rows)
        elif tuple(box.children) != tuple(rows):
            box.children = rows
        return box

    def _row(self, topic: str, label: str, make: Callable[[], Any]) -> Any:
        key = (topic, label)
        if key not in self._rows:
            self._rows[key] = make()
        return self._rows[key]

    def _period_row(self, topic: str, label: str, nodes: list[tuple[str, str]]) -> widgets.HBox:
        row = self._row(
            topic, label, lambda: self.shared.hbox([self.shared.label(f"{label}:", width="5em")])
        )
        buttons = list(row.children[1:])
        while len(buttons) < len(nodes):
            buttons.append(self._node_button())
        for button, (name, relative) in zip(buttons, nodes, strict=False):
            built = (self.memory.root / relative).is_file()
            self._targets[button.model_id] = relative
            button.description = name
            button.tooltip = relative if built else f"{relative} (not built yet: %hipo compact)"
            button.disabled = not built
        wanted = (row.children[0], *buttons[: len(nodes)])
        if tuple(row.children) != wanted:
            row.children = wanted
        return row

    def _node_button(self) -> widgets.Button:
        """A button that opens whichever node the row last gave it (`_targets`)."""
        button = self.shared.button(shape={"width": "auto"})
        button.on_click(lambda clicked: self.open_node(self._targets[clicked.model_id]))
        return button

    def open_node(self, relative: str) -> None:
        """Show one node (or raw log) below the index, as the file has it."""
        text = self.memory.read(relative)
        self.opened = relative
        self.content.value = (
            f"<b>{shown_html(relative)}</b>"
            f"<pre style='white-space: pre-wrap; max-height: 24em; overflow: auto'>"
            f"{shown_html(text)}</pre>"
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
        result = self.memory.recall(query, k=self.k, mode=DEFAULT_RECALL_MODE)
        self.last_result = result
        old = self.results.children
        if not result.hits:
            self.results.children = [self.shared.html(shown_html(render.no_hits_text(result)))]
        else:
            self.results.children = [self._hit_row(hit) for hit in result.hits]
        for row in old:
            close_tree(row)
        return result

    def _hit_row(self, hit: Hit) -> widgets.HBox:
        summary = self.shared.html(
            f"<b>{shown_html(hit.title)}</b> · {shown_html(hit.date)} · {shown_html(hit.kind)}"
            f"<br><small>{shown_html(render.drill_down(hit))}</small>"
            f"<br>{shown_html(hit.snippet)}"
        )
        button = self.shared.button(description="open", tooltip=hit.file, shape={"width": "5em"})
        button.on_click(lambda _, relative=hit.file: self.open_node(relative))
        return self.shared.hbox([button, summary])

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
        self.shared = shared = _Shared()
        self.header = shared.html()
        self.part_bars: dict[str, widgets.FloatProgress] = {}
        self.part_labels: dict[str, widgets.Label] = {}
        self.part_rows: dict[str, widgets.HBox] = {}
        self.parts_box = shared.vbox([])
        self.live_bar = self._bar("conversation")
        self.live_label = shared.label()
        self.live_row = widgets.HBox([self.live_bar, self.live_label])  # own layout: it hides
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
            if bar is None:  # rows are made once and reused by every redraw
                bar = self.part_bars[part.name] = self._bar(part.name)
                self.part_labels[part.name] = self.shared.label()
                self.part_rows[part.name] = self.shared.hbox([bar, self.part_labels[part.name]])
            fraction = _fraction(part.tokens, part.budget)
            bar.value = min(fraction, 1.0) * 100
            bar.bar_style = BAR_STYLES[part_level(fraction)]
            cut = " · cut to budget" if part.truncated else ""
            self.part_labels[
                part.name
            ].value = f"{part.tokens:,} / {part.budget:,} tokens ({_percent(fraction)}){cut}"
            rows.append(self.part_rows[part.name])
        self.parts_box.children = rows
        self._draw_live()

    def _bar(self, description: str) -> widgets.FloatProgress:
        return widgets.FloatProgress(
            min=0,
            max=100,
            description=description,
            layout=self.shared.layout(),
            style=self.shared.style(ProgressStyle),
        )

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
