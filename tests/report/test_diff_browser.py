"""The diff page (rankmeter diff -f html) in a real headless Chromium: it asks the network for
nothing, its filter box filters, its queries come by change, its moved markers are right, it
reads without JavaScript, and hostile text in it runs nothing.

Needs Chromium and Playwright (see tests/_browser.py); skips without them, saying which.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from _browser import NEEDS_CHROMIUM
from _diff_cases import CORPUS, hand_made, hostile

from rankmeter.comparison import RunDiff
from rankmeter.report.diff import query_anchor, render_diff_html

pytestmark = NEEDS_CHROMIUM

#: Set by the hostile text, were any of it to run.
FLAGS = "[window.__pwned, window.__dialogs]"


@dataclass
class Opened:
    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def open_diff(browser: Any) -> Iterator[Any]:
    contexts = []

    def load(diff: RunDiff, *, javascript: bool = True) -> Opened:
        context = browser.new_context(
            viewport={"width": 1300, "height": 900}, java_script_enabled=javascript
        )
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)

        def route(handle: Any) -> None:  # any request at all is a failure: none may leave
            opened.requests.append(handle.request.url)
            handle.abort()

        context.route("**/*", route)
        page.on("request", lambda r: opened.requests.append(r.url))
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on(
            "console",
            lambda m: opened.errors.append(m.text) if m.type in ("error", "warning") else None,
        )

        def dialog(d: Any) -> None:
            opened.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)
        page.set_content(render_diff_html(diff), wait_until="load")
        return opened

    yield load
    for context in contexts:
        context.close()


def _sections(page: Any) -> list[dict[str, Any]]:
    return list(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('section.query')).map(s => ({
                query: s.dataset.query, delta: parseFloat(s.dataset.delta),
                visible: s.offsetParent !== null}))"""
        )
    )


def _no_request(opened: Opened) -> None:
    leaving = [u for u in opened.requests if not u.startswith(("data:", "about:"))]
    assert leaving == [], leaving


def test_loads_with_no_request_and_no_error(open_diff: Any) -> None:
    opened = open_diff(hand_made())
    _no_request(opened)
    assert opened.errors == []
    assert opened.page.is_visible("#filters")  # the script ran: its hash is allowed
    assert opened.page.text_content("#filter-count") == "4 of 4 queries shown"


def test_queries_come_by_change_worst_loss_first(open_diff: Any) -> None:
    diff = hand_made()
    sections = _sections(open_diff(diff).page)
    assert [s["query"] for s in sections] == [q.query for q in diff.queries]
    deltas = [s["delta"] for s in sections]
    assert deltas == sorted(deltas) == [-1.0, -1.0, -1.0, 1.0]


def test_the_filter_box_filters(open_diff: Any) -> None:
    page = open_diff(hand_made()).page
    page.fill("#filter-text", "HEAT")  # by text, any case
    assert [s["query"] for s in _sections(page) if s["visible"]] == ["q2"]
    assert page.text_content("#filter-count") == "1 of 4 queries shown"
    assert page.is_hidden("tr.q[data-query='q1']") and page.is_visible("tr.q[data-query='q2']")
    page.fill("#filter-text", "q3")  # by id
    assert [s["query"] for s in _sections(page) if s["visible"]] == ["q3"]
    page.fill("#filter-text", "")
    page.check("input[name=show][value=gains]")
    assert [s["query"] for s in _sections(page) if s["visible"]] == ["q3"]
    page.check("input[name=show][value=losses]")
    assert [s["query"] for s in _sections(page) if s["visible"]] == ["q1", "q2", "q4"]
    page.fill("#filter-text", "boundary")
    assert [s["query"] for s in _sections(page) if s["visible"]] == ["q4"]
    page.check("input[name=show][value=all]")
    page.fill("#filter-text", "")
    assert all(s["visible"] for s in _sections(page))


def test_moved_markers_of_a_hand_made_pair(open_diff: Any) -> None:
    page = open_diff(hand_made()).page
    rows = page.evaluate(
        """(id) => Array.from(document.getElementById(id).querySelectorAll('ol.ranking'))
            .map(ol => Array.from(ol.querySelectorAll('li')).map(li => [
                li.querySelector('.rank').textContent, li.dataset.doc,
                li.querySelector('.grade').textContent, li.querySelector('.move').textContent,
                li.querySelector('.move').title]))""",
        query_anchor("q1"),
    )
    a, b = rows
    assert [r[:4] for r in a] == [
        ["1", "a", "2", "▼ 1"],
        ["2", "b", "1", "▼ 2"],
        ["3", "c", "0", "dropped"],
    ]
    assert [r[:4] for r in b] == [
        ["1", "d", "–", "▲ 3"],
        ["2", "a", "2", "▼ 1"],
        ["3", "e", "–", "new"],
    ]
    assert b[0][4] == "up 3 ranks from A to B (rank 4 in run (A))"


def test_a_document_id_shows_its_text_in_its_row(open_diff: Any) -> None:
    page = open_diff(hand_made()).page
    row = f"#{query_anchor('q1')} li[data-doc='e']"
    title = page.get_attribute(f"{row} a", "title")
    assert title is not None and title.startswith("Title e — The text of e.")
    page.click(f"{row} a")
    assert page.text_content(f"{row} .inline-text") == CORPUS["e"].text
    assert page.get_attribute(f"{row} a", "aria-expanded") == "true"
    assert page.evaluate("location.hash") == ""  # shown in place, the page did not move away
    page.click(f"{row} a")
    assert page.locator(f"{row} .inline-text").count() == 0


def test_a_link_to_a_document_opens_it(open_diff: Any) -> None:
    page = open_diff(hand_made()).page
    assert not page.evaluate("document.getElementById('d-e').open")
    page.evaluate("location.hash = '#d-e'")
    page.wait_for_function("document.getElementById('d-e').open")
    assert page.is_visible("#d-e .doc-text")


def test_reads_without_javascript(open_diff: Any) -> None:
    opened = open_diff(hand_made(), javascript=False)
    page = opened.page
    _no_request(opened)
    assert page.is_hidden("#filters")  # no dead controls
    assert all(s["visible"] for s in _sections(page)) and len(_sections(page)) == 4
    assert "wing flutter" in page.inner_text(f"#{query_anchor('q1')}")


def test_hostile_text_runs_nothing(open_diff: Any) -> None:
    opened = open_diff(hostile())
    page = opened.page
    _no_request(opened)
    assert opened.dialogs == []
    assert page.evaluate(FLAGS) == [None, None]
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object').length") == 0
    page.fill("#filter-text", "<img")  # filtering reads the text, never parses it
    assert opened.dialogs == [] and page.evaluate(FLAGS) == [None, None]
    assert sum(s["visible"] for s in _sections(page)) == 1
    page.click("section.query:not([hidden]) li a")
    assert page.locator(".inline-text").count() == 1  # the text shown in its row, as text
    assert opened.dialogs == [] and page.evaluate(FLAGS) == [None, None]
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object').length") == 0
    assert opened.errors == []


def test_long_run_names_without_spaces_do_not_widen_the_page(open_diff: Any) -> None:
    """The overview's headers are the run names; one without a place to break (an
    underscore-joined setting) kept the page 1,281 px wide at any window (issue 24 trial)."""
    from _diff_cases import QRELS, RUN_A, RUN_B

    from rankmeter.comparison import diff_runs
    from rankmeter.io import as_run

    diff = diff_runs(
        QRELS,
        as_run(RUN_A, name="bm25_k1_1.2_b_0.75_stemmed_rm3_fb_docs_10_terms_20_baseline"),
        as_run(RUN_B, name="splade_v3_distil_maxsim_rerank_top_1000_with_query_expansion"),
        metric="P@1",
    )
    page = open_diff(diff).page
    for width in (1300, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, width
