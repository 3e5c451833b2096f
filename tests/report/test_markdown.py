"""compare's Markdown: names, ids and texts render as themselves, never as HTML or Markdown.

The report is rendered by a real CommonMark renderer (markdown-it-py, which rich brings) with raw
HTML allowed, as GitHub and most viewers allow it, and GFM tables on.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest
from markdown_it import MarkdownIt

import rankmeter
from rankmeter.comparison import Comparison
from rankmeter.explanation import explain_grades
from rankmeter.report.comparison import render_markdown
from rankmeter.report.explanation import render_markdown as render_explanation_markdown

BASE = "base | pipe `tick` ```fence"
NEW = "<script>alert(1)</script> & &amp; *em* _u_ [link](http://x) # h ~~s~~"
OTHER = "line\nbreak <img src=x onerror=alert(1)>\x1b]0;title\x07"
SYSTEMS = (BASE, NEW, OTHER)
LOSER = "q```\n<img src=x onerror=alert(2)>"  # a query id that ends the failures fence
TEXTS = {
    LOSER: "<b>bold</b> & co\n# not a heading",
    "q2": "| a | b |",
    "q3": "```\n<script>alert(3)</script>",
}
SEGMENT = "kind=<i>x</i>|`y`"
ALLOWED_TAGS = {"h1", "h2", "p", "table", "thead", "tbody", "tr", "th", "td", "pre", "code"}
ALLOWED_TAGS |= {"blockquote", "#document"}
# The pull-request layout (issue 16): a bold verdict, details in <details> blocks.
ALLOWED_TAGS |= {"strong", "details", "summary"}


def _hostile_comparison() -> Comparison:
    ids = [LOSER, "q2", "q3", "q4"]
    qrels = {q: {"d1": 1, "d2": 1} for q in ids}
    runs: dict[str, dict[str, dict[str, float]]] = {
        BASE: {q: {"d1": 2.0, "d2": 1.0} for q in ids},
        NEW: {q: {"d9": 2.0, "d1": 1.0} for q in ids},
        OTHER: {q: {"d9": 2.0} for q in ids[:3]},
    }
    segments = {"kind": {q: SEGMENT if i % 2 else "plain" for i, q in enumerate(ids)}}
    return rankmeter.compare(
        qrels,
        runs,
        ["RR", "P@2"],
        resamples=99,
        queries=TEXTS,
        segments=segments,
        min_segment=1,
    )


@pytest.fixture(scope="module")
def hostile() -> Comparison:
    return _hostile_comparison()


def render(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def tags(html: str, kit: SimpleNamespace) -> set[str]:
    return {node.tag for node in kit.parse(html).iter()}


def cells(page: Any) -> list[list[str]]:
    return [[c.text for c in row.elements] for row in page.find_all("tr")]


def test_no_raw_html_is_rendered(hostile: Comparison, kit: SimpleNamespace) -> None:
    html = render(render_markdown(hostile))
    found = tags(html, kit)
    assert found <= ALLOWED_TAGS, found - ALLOWED_TAGS
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "\x1b" not in html and "\x07" not in html


def test_names_render_as_themselves(hostile: Comparison, kit: SimpleNamespace) -> None:
    page = kit.parse(render(render_markdown(hostile)))
    text = page.text
    for name in (BASE, NEW, "line\\nbreak <img src=x onerror=alert(1)>\\x1b]0;title\\x07"):
        assert name in text, name
    assert SEGMENT in text
    rows = cells(page)
    # The means table comes after the differences' (a header and a row per system and metric).
    means = rows[1 + (len(SYSTEMS) - 1) * len(hostile.metrics) :][: 1 + len(hostile.metrics)]
    widths = {len(row) for row in means}
    assert widths == {1 + len(SYSTEMS)}, rows  # the means table: a | in a name is no column
    header = means[0]
    assert header[1] == f"{BASE} (baseline)" and header[2] == NEW


def test_failures_cannot_leave_their_block(hostile: Comparison, kit: SimpleNamespace) -> None:
    markdown = render_markdown(hostile)
    page = kit.parse(render(markdown))
    blocks = page.find_all("pre")
    assert len(blocks) == 1
    listing = blocks[0].text
    assert "lost most on RR" in listing and "returned nothing" in listing
    assert "q```\\n<img src=x onerror=alert(2)>" in listing  # shown, escaped, inside the block
    # After the block, its details block closes and only the segments' follows.
    assert re.search(r"</pre>\s*</details>\s*<details>\s*<summary>Segments", render(markdown))


def test_the_synthetic_comparison_escapes_too(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    html = render(render_markdown(synthetic_comparison))
    assert tags(html, kit) <= ALLOWED_TAGS
    text = kit.parse(html).text
    for name in kit.HOSTILE:
        assert name in text, name
    assert "2 judged queries <without> results are left out" in text


def test_explain_markdown_renders_ids_as_themselves(kit: SimpleNamespace) -> None:
    doc = "&lt;b&gt;\n<i>x</i>|`y`"
    qrels = {"q\x1b[2J": {doc: 1, "d2": 0}}
    run = {"q\x1b[2J": {doc: 2.0, "d2": 1.0}}
    markdown = render_explanation_markdown(rankmeter.explain(qrels, run, "q\x1b[2J", "P@2"))
    html = render(markdown)
    assert tags(html, kit) <= ALLOWED_TAGS | {"h3", "em", "ol", "li"}
    page = kit.parse(html)
    assert "&lt;b&gt;\\n<i>x</i>|`y`" in page.text  # the entity is shown, not decoded
    assert "q\\x1b[2J" in page.find("h3").text
    assert len({len(row) for row in cells(page)}) == 1
    grades = render_explanation_markdown(explain_grades([3, 0, 2], "nDCG@3"))
    assert tags(render(grades), kit) <= ALLOWED_TAGS | {"h3", "em", "ol", "li"}
