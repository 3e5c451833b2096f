"""The renderers of a RunDiff (rankmeter diff): HTML, text, Markdown, JSON; hostile text
escaped in each, the page's one script allowed by its hash alone."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from _diff_cases import HOSTILE, hand_made, hostile

from rankmeter.report import render
from rankmeter.report.diff import (
    TEXT_CHARS,
    query_anchor,
    render_diff_html,
    render_json,
    render_markdown,
    render_text,
)


def test_the_page_is_self_contained_and_its_script_allowed_by_hash(kit: SimpleNamespace) -> None:
    page = render_diff_html(hand_made())
    assert page == render_diff_html(hand_made())
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    assert policy.group(1) == (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    tree = kit.parse(page)
    assert tree.find("form", id="filters").attrs.get("hidden") is not None


def test_sections_in_order_with_values_grades_and_moves(kit: SimpleNamespace) -> None:
    diff = hand_made()
    tree = kit.parse(render_diff_html(diff))
    sections = tree.find_all("section", cls="query")
    assert [s.attrs["data-query"] for s in sections] == [q.query for q in diff.queries]
    assert [float(s.attrs["data-delta"]) for s in sections] == [-1.0, -1.0, -1.0, 1.0]
    q1 = tree.find("section", id=query_anchor("q1"))
    sides = q1.find_all("ol", cls="ranking")
    b_rows = sides[1].find_all("li")
    assert [
        (li.attrs["data-doc"], li.attrs["data-move"], li.attrs["data-by"]) for li in b_rows
    ] == [
        ("d", "up", "3"),
        ("a", "down", "1"),
        ("e", "new", "0"),
    ]
    assert [li.find("span", cls="move").text for li in b_rows] == ["▲ 3", "▼ 1", "new"]
    assert [li.find("span", cls="grade").text for li in b_rows] == ["–", "2", "–"]
    assert [li.find("span", cls="grade").attrs["class"] for li in b_rows] == [
        "grade g-none",
        "grade g-2",
        "grade g-none",
    ]
    a_rows = sides[0].find_all("li")
    assert a_rows[2].find("span", cls="move").text == "dropped"
    assert a_rows[2].find("span", cls="grade").text == "0"
    values = q1.find("p", cls="values").text
    assert "1.0000" in values and "0.0000" in values and "-1.0000" in values
    docs = tree.find("section", id="documents").find_all("details", cls="document")
    first_seen = list(dict.fromkeys(r.doc for q in diff.queries for r in (*q.a, *q.b)))
    assert [d.attrs["id"] for d in docs] == [f"d-{d}" for d in first_seen]
    link = b_rows[0].find("a")
    assert link.attrs["href"] == "#d-d" and link.attrs["title"].startswith(
        "Title d — The text of d."
    )
    assert (
        tree.find("details", id="d-d").find("p", cls="doc-text").text.startswith("The text of d.")
    )


def test_every_shown_document_is_listed_once() -> None:
    diff = hand_made()
    page = render_diff_html(diff)
    shown = {r.doc for q in diff.queries for r in (*q.a, *q.b)}
    for doc in shown:
        assert page.count(f'<details class="document" id="d-{doc}">') == 1


def test_hostile_text_is_escaped_in_the_page(kit: SimpleNamespace) -> None:
    diff = hostile()
    page = render_diff_html(diff)
    tree = kit.parse(page)
    assert len(tree.find_all("script")) == 1
    assert not tree.find_all("img") and not tree.find_all("svg")
    assert not [b for b in tree.find_all("b") if b.text == "bold"]
    assert not tree.find_all("textarea")
    assert "\x1b" not in page and "\x07" not in page
    assert "\\x1b[31mred" in page
    for node in tree.iter():
        assert not any(name.startswith("on") for name in node.attrs), node.attrs
    texts = tree.find_all("p", cls="doc-text")
    assert texts and all(len(t.text) < TEXT_CHARS + 100 for t in texts)
    assert all(t.text.endswith("more characters)") for t in texts)
    ids = [n.attrs["id"] for n in tree.iter() if "id" in n.attrs]
    assert len(ids) == len(set(ids))


def test_hostile_text_in_markdown_text_and_json() -> None:
    diff = hostile()
    markdown = render_markdown(diff)
    assert "\x1b" not in markdown and "\x07" not in markdown
    outside_code = re.sub(r"(`+) ?.*? ?\1(?!`)", "", markdown)
    assert re.search(r"(?<!\\)[<>]", outside_code) is None  # raw HTML only inside code spans
    assert "\\<img" in markdown
    text = render_text(diff)
    assert "\x1b" not in text and "\x07" not in text
    assert max(len(line) for line in text.splitlines()) < 1_000  # no document text, texts cut
    assert max(len(line) for line in markdown.splitlines()) < 3_000
    payload = json.loads(render_json(diff))
    assert [q["query"] for q in payload["queries"]] == [q.query for q in diff.queries]
    assert payload["run_a"] == HOSTILE[0]
    assert "very long very long" not in json.dumps([q["ranking_a"] for q in payload["queries"]])


def test_anchors_are_distinct_and_plain() -> None:
    rng = random.Random(4)
    alphabet = "aZ09_-/ é😀<>\"'\x00"
    made = {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(3000)}
    anchors = {query_anchor(q) for q in made}
    assert len(anchors) == len(made)
    assert all(re.fullmatch(r"q-[A-Za-z0-9_]*", a) for a in anchors)


@pytest.mark.parametrize("fmt", ["html", "text", "markdown", "json"])
def test_render_writes_each_format(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"diff.{fmt}"
    render(hand_made(), fmt, str(out))
    assert out.stat().st_size > 0


def test_a_pipe_in_an_id_is_no_column_in_markdown(kit: SimpleNamespace) -> None:
    """Ids are code spans in the Markdown tables; a ``|`` in one still ends a GFM table cell
    unless escaped, so the row would gain a column and shift every cell after it."""
    from markdown_it import MarkdownIt

    from rankmeter.comparison import diff_runs

    piped, ticked = "d|pipe", "q|`x`"
    diff = diff_runs(
        {ticked: {piped: 1, "d2": 0}},
        {ticked: {piped: 2.0, "d2": 1.0}},
        {ticked: {"d2": 2.0, piped: 1.0}},
        metric="P@1",
    )
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(render_markdown(diff))
    rows = [[c.text for c in row.elements] for row in kit.parse(html).find_all("tr")]
    assert [len(row) for row in rows] == [7] * 5, rows  # two tables, 7 columns each
    assert rows[1][1] == ticked  # the query id as it is, in its own cell
    assert rows[3][1] == piped and rows[3][4] == "d2"
    assert rows[4][1] == "d2" and rows[4][4] == piped


def test_a_document_without_a_title_shows_the_start_of_its_text(kit: SimpleNamespace) -> None:
    """MEDLINE's documents (and MS MARCO's passages) have no title: a row shows the start of
    the text instead of the bare id; a titled document shows its title, cut short."""
    from rankmeter.comparison import diff_runs
    from rankmeter.io.beir import Document

    corpus = {
        "m1": Document("", "essential fatty   acids\nand acids with " + "trans " * 100),
        "t1": Document("Wings " * 100, "flutter"),
    }
    diff = diff_runs(
        {"q": {"m1": 1, "t1": 1}},
        {"q": {"m1": 2.0, "t1": 1.0}},
        {"q": {"t1": 2.0, "m1": 1.0}},
        metric="P@1",
        corpus=corpus,
    )
    tree = kit.parse(render_diff_html(diff))
    rows = {
        li.attrs["data-doc"]: li.find("span", cls="doc-title").text
        for li in tree.find("section", cls="query").find_all("li")
    }
    assert rows["m1"].startswith("essential fatty acids and acids with trans")
    assert rows["m1"].endswith("…") and len(rows["m1"]) <= 100
    assert rows["t1"].startswith("Wings Wings") and len(rows["t1"]) <= 100
