"""The A/B page in a real headless Chromium: its widest tables (CUPED, segments) fit a page
1100 px wide, without a horizontal scroll bar."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from _browser import NEEDS_CHROMIUM

pytest.importorskip("ibis")
pytest.importorskip("tea_tasting")

import pyarrow as pa
import pyarrow.compute as pc
from _ab_logs import random_log

from rankmeter.online import ab
from rankmeter.report.ab import render_html

pytestmark = NEEDS_CHROMIUM

VIEWPORT = 1100


def _widest_result() -> Any:
    """CUPED, every metric, two segment columns, long variant names: the widest page."""
    log = random_log(300, seed=3, variants=("control-ranker-bm25", "treatment-ranker-hybrid"))
    pre = log.filter(pc.match_substring(log["request_id"], "-r0"))
    earlier = pc.subtract(pre["event_ts"], pa.scalar(dt.timedelta(days=7)))
    pre = pre.set_column(pre.schema.get_field_index("event_ts"), "event_ts", earlier)
    return ab(log, pre=pre, segments=["device", "is_new_user"], control="control-ranker-bm25")


@pytest.mark.parametrize("cuped", [True, False])
def test_the_ab_tables_fit_an_1100_px_page(browser: Any, cuped: bool) -> None:
    result = _widest_result()
    if not cuped:
        log = random_log(300, seed=3, variants=("control-ranker-bm25", "treatment-ranker-hybrid"))
        result = ab(log, segments=["device", "is_new_user"], control="control-ranker-bm25")
    page = browser.new_page(viewport={"width": VIEWPORT, "height": 900})
    try:
        page.set_content(render_html(result))
        widths = page.evaluate(
            """() => ({
                page: document.documentElement.scrollWidth,
                tables: Array.from(document.querySelectorAll('table.ab'))
                    .map(t => Math.ceil(t.getBoundingClientRect().right)),
            })"""
        )
    finally:
        page.close()
    assert len(widths["tables"]) == 2
    assert max(widths["tables"]) <= VIEWPORT, widths
    assert widths["page"] <= VIEWPORT, widths
