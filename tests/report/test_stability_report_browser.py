"""The stability page in a real headless Chromium: its tables, with five systems of long names
(ten pairs per metric), fit a page 1100 px wide without a horizontal scroll bar, and the page
shows its section title."""

from __future__ import annotations

from typing import Any

from _browser import NEEDS_CHROMIUM

from rankmeter.comparison import stability
from rankmeter.report.stability import TITLE, render_html

pytestmark = NEEDS_CHROMIUM

VIEWPORT = 1100


def test_the_stability_tables_fit_an_1100_px_page(browser: Any) -> None:
    qrels = {f"q{i}": {"a": 1, "b": 1, "c": 1} for i in range(30)}
    runs = {
        f"ranker-{name}-with-a-long-descriptive-name": {
            f"q{i}": {doc: float((i * k + j) % 5) for j, doc in enumerate("abcxyz")}
            for i in range(30)
        }
        for k, name in enumerate(["bm25", "dense", "hybrid", "rerank", "splade"], start=1)
    }
    result = stability(qrels, runs, ["nDCG@10", "RR"], resamples=100, splits=100)
    page = browser.new_page(viewport={"width": VIEWPORT, "height": 900})
    try:
        page.set_content(render_html(result))
        found = page.evaluate(
            """() => ({
                page: document.documentElement.scrollWidth,
                tables: Array.from(document.querySelectorAll('table'))
                    .map(t => Math.ceil(t.getBoundingClientRect().right)),
                heading: document.querySelector('h1').textContent,
                rows: document.querySelectorAll('table.stability-pairs tbody tr').length,
            })"""
        )
    finally:
        page.close()
    assert found["heading"] == TITLE
    assert found["rows"] == 20  # ten pairs for each of two metrics
    assert len(found["tables"]) == 2
    assert max(found["tables"]) <= VIEWPORT, found
    assert found["page"] <= VIEWPORT, found
