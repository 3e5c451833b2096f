"""The all-pairs page in a real headless Chromium: its matrix is drawn (16 cells for four
systems) and the page needs no horizontal scroll at 1100 px."""

from __future__ import annotations

from typing import Any

from _browser import NEEDS_CHROMIUM
from test_allpairs_report import _result

from rankmeter.report import allpairs as report

pytestmark = NEEDS_CHROMIUM


def test_the_page_draws_its_matrix_in_a_browser(browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    try:
        page.set_content(report.render_html(_result()))
        drawn = page.evaluate(
            """() => ({
                page: document.documentElement.scrollWidth,
                cells: Array.from(document.querySelectorAll('svg[data-plot="matrix"] g.cell rect'))
                    .map(r => r.getBoundingClientRect().width),
            })"""
        )
    finally:
        page.close()
    assert len(drawn["cells"]) == 16 and min(drawn["cells"]) > 20
    assert drawn["page"] <= 1100
