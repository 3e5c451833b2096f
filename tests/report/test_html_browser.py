"""The HTML report in a real headless Chromium: it loads cleanly, draws every plot, asks the
network for nothing, and its explanation links land on their sections.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and
Playwright for Python (the ``dev`` extra). Without them these tests skip, saying which is absent.
``RANKMETER_UPDATE_SCREENSHOT=1`` rewrites docs/images/compare-report.png from the demo report.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _browser import NEEDS_CHROMIUM

from rankmeter.comparison import Comparison
from rankmeter.report.html import MAX_POINTS, render_html

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "images" / "compare-report.png"
WIDTH = 1200

pytestmark = NEEDS_CHROMIUM


@dataclass
class Loaded:
    """A report open in a tab, with everything it asked for and every error it raised."""

    page: Any
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def charts(self) -> list[dict[str, Any]]:
        return list(
            self.page.evaluate(
                """() => Array.from(document.querySelectorAll('svg.chart')).map(svg => {
                    const box = svg.getBoundingClientRect();
                    const lines = Array.from(svg.querySelectorAll('polyline'));
                    return {
                        plot: svg.dataset.plot, width: box.width, height: box.height,
                        right: box.right,
                        title: svg.querySelector(':scope > title').textContent,
                        bars: svg.querySelectorAll('rect.bar').length,
                        tallBars: Array.from(svg.querySelectorAll('rect.bar'))
                            .filter(r => r.getBoundingClientRect().height > 0).length,
                        whiskers: svg.querySelectorAll('path.whisker').length,
                        lines: lines.length,
                        drawnLines: lines.filter(l => l.getTotalLength() > 0).length,
                        points: svg.querySelectorAll('circle.point').length,
                        legend: Array.from(svg.querySelectorAll('g.legend text'))
                            .map(t => t.textContent),
                    };
                })"""
            )
        )


@pytest.fixture
def open_report(browser: Any, tmp_path: Path) -> Iterator[Any]:
    contexts = []

    def load(comparison: Comparison, name: str = "report.html") -> Loaded:
        path = tmp_path / name
        path.write_text(render_html(comparison), encoding="utf-8")
        context = browser.new_context(viewport={"width": WIDTH, "height": 900})
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page)

        def route(handle: Any) -> None:
            url = handle.request.url
            if url.startswith("file:"):
                handle.continue_()
            else:
                loaded.blocked.append(url)
                handle.abort()

        context.route("**/*", route)
        page.on("request", lambda request: loaded.requests.append(request.url))
        page.on("pageerror", lambda error: loaded.errors.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: (
                loaded.errors.append(f"console {message.type}: {message.text}")
                if message.type == "error"
                else None
            ),
        )
        page.goto(path.as_uri(), wait_until="load")
        return loaded

    yield load
    for context in contexts:
        context.close()


@pytest.mark.parametrize("source", ["synthetic", "real"])
def test_loads_without_errors_or_requests(
    open_report: Any, synthetic_comparison: Comparison, real_comparison: Comparison, source: str
) -> None:
    comparison = synthetic_comparison if source == "synthetic" else real_comparison
    loaded = open_report(comparison)
    assert loaded.errors == []
    assert loaded.blocked == []
    assert [u for u in loaded.requests if not u.startswith("file:")] == []
    assert len(loaded.requests) == 1, loaded.requests
    assert loaded.page.evaluate("document.querySelectorAll('script').length") == 0


def test_every_plot_is_drawn(open_report: Any, synthetic_comparison: Comparison) -> None:
    comparison = synthetic_comparison
    loaded = open_report(comparison)
    charts = loaded.charts()
    systems, n = len(comparison.systems), comparison.n_queries
    assert [c["plot"] for c in charts] == ["means"] * len(comparison.metrics) + ["differences"] + [
        "curves"
    ] * 3
    for chart in charts:
        assert chart["width"] > 100 and chart["height"] > 100, chart
        assert chart["right"] <= WIDTH, chart
    for chart, metric in zip(charts, comparison.metrics, strict=False):
        assert chart["bars"] == chart["whiskers"] == systems
        nonzero = [s for s in comparison.systems if comparison.mean(s, metric).mean > 0]
        assert chart["tallBars"] == len(nonzero)
    differences = charts[len(comparison.metrics)]
    assert differences["lines"] == differences["drawnLines"] == systems - 1
    assert differences["points"] == (systems - 1) * n <= (systems - 1) * MAX_POINTS
    assert len(differences["legend"]) == systems - 1
    for chart in charts[-3:]:
        assert chart["lines"] == chart["drawnLines"] == systems
        assert chart["legend"] == list(comparison.systems)
    titles = [c["title"] for c in charts[-3:]]
    assert titles == [f"Mean {f}@k for k = 1 to 100" for f in ("nDCG", "P", "R")]


def test_readable_at_1200_pixels(open_report: Any, real_comparison: Comparison) -> None:
    page = open_report(real_comparison).page
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    sizes = page.evaluate(
        "Array.from(document.querySelectorAll('svg.chart text'))"
        ".map(t => parseFloat(getComputedStyle(t).fontSize))"
    )
    assert sizes and min(sizes) >= 11


def test_accessible_names_and_tables(open_report: Any, real_comparison: Comparison) -> None:
    page = open_report(real_comparison).page
    images = page.get_by_role("img")
    assert images.count() == len(real_comparison.metrics) + 1 + 3
    for i in range(images.count()):
        name = images.nth(i).evaluate(
            "svg => svg.getAttribute('aria-labelledby').split(' ')"
            ".map(id => document.getElementById(id).textContent).join(' ')"
        )
        assert len(name) > 40
    assert page.get_by_role("img", name="Mean nDCG@10 per system").count() == 1
    summary = page.locator("table.summary")
    assert summary.get_by_role("columnheader").count() == 10
    assert summary.get_by_role("rowheader").count() >= len(real_comparison.systems)


def test_user_strings_render_as_text(
    kit: SimpleNamespace, open_report: Any, real_comparison: Comparison
) -> None:
    page = open_report(real_comparison).page
    assert page.title() == f"rankmeter: {kit.NEW}, {kit.OTHER} vs {kit.BASE}"
    assert page.locator("h1").text_content() == f"Comparison against {kit.BASE}"
    shown = page.locator("table.summary tbody th.system").all_text_contents()
    assert shown == list(real_comparison.systems) * len(real_comparison.metrics)


def test_worst_queries_link_into_the_diff_pages(
    browser: Any, kit: SimpleNamespace, real_comparison: Comparison, tmp_path: Path
) -> None:
    """Issue 24: the worst queries link to their section of the diff page written beside the
    report (the explanations are no longer stacked on it); following one lands on it."""
    from rankmeter.comparison._diff import diffs_against
    from rankmeter.report import render

    data = kit.collection()
    diffs = diffs_against(
        data["qrels"],
        data["runs"],
        real_comparison.baseline,
        [s for s in real_comparison.systems if s != real_comparison.baseline],
        metric=real_comparison.metrics[0],
        corpus={d: f"text of {d}" for q in data["qrels"].values() for d in q},
    )
    report = tmp_path / "report.html"
    render(real_comparison, "html", str(report), diffs=diffs, written_to=str(report))
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    try:
        page = context.new_page()
        leaving: list[str] = []
        page.on("request", lambda r: None if r.url.startswith("file:") else leaving.append(r.url))
        page.goto(report.as_uri(), wait_until="load")
        links = page.locator("a.diff")
        expected = sum(len(f.worst) for f in real_comparison.failures)
        assert expected > 0 and links.count() == expected
        assert page.locator(".rankmeter-explain").count() == 0
        last = links.nth(expected - 1)
        target = last.get_attribute("href")
        assert target is not None
        last.click()
        page.wait_for_load_state("load")
        assert page.url.endswith(target)
        anchor = target.split("#")[1]
        found = page.evaluate(
            "id => { const s = document.getElementById(id); return s && s.matches('section.query')"
            " ? s.getBoundingClientRect().top : null; }",
            anchor,
        )
        assert found is not None and 0 <= found < 900, "the query's section is in view"
        assert leaving == []
    finally:
        context.close()


def test_demo_screenshot(browser: Any, tmp_path: Path) -> None:
    """The demo collection's report as a picture; rewrites the guide's picture on request."""
    import rankmeter
    from rankmeter import datasets

    demo = datasets.recruiting()
    comparison = rankmeter.compare(
        demo.load_qrels(), demo.load_runs(), queries=demo.queries, seed=0
    )
    path = tmp_path / "demo.html"
    path.write_text(render_html(comparison), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        page.goto(path.as_uri(), wait_until="load")
        bottom = page.evaluate("document.querySelector('#segments').getBoundingClientRect().top")
        update = os.environ.get("RANKMETER_UPDATE_SCREENSHOT") == "1"
        out = SCREENSHOT if update else tmp_path / "compare-report.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(out),
            full_page=True,
            clip={"x": 0, "y": 0, "width": WIDTH, "height": int(bottom) - 8},
        )
    finally:
        page.close()
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == WIDTH
    assert len(data) < 400_000
