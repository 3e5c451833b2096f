"""The HTML report without a browser: escaping, determinism, structure, and the numbers shown."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rankmeter.comparison import Comparison
from rankmeter.report import _svg
from rankmeter.report._text import num, signed
from rankmeter.report.comparison import interval, percent, pvalue
from rankmeter.report.html import MAX_POINTS, render_html

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "images" / "compare-report.png"


def charts(page: Any, kind: str) -> list[Any]:
    return [n for n in page.find_all("svg") if n.attrs.get("data-plot") == kind]


# -- one file, nothing from elsewhere -----------------------------------------------------------


def test_page_is_one_complete_document(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    html = render_html(synthetic_comparison)
    assert html.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert html.endswith("</html>\n")
    page = kit.parse(html)
    head = page.find("head")
    assert head.find("meta", charset="utf-8")
    policy = head.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert "default-src 'none'" in policy
    assert "script-src" not in policy
    assert len(page.find_all("style")) == 1
    assert page.find("title").text.startswith("rankmeter: ")


def test_nothing_is_loaded_from_anywhere(kit: SimpleNamespace, real_comparison: Comparison) -> None:
    html = render_html(real_comparison)
    page = kit.parse(html)
    assert not page.find_all("script")
    assert not page.find_all("iframe") and not page.find_all("img")
    for node in page.iter():
        assert "src" not in node.attrs, node
        href = node.attrs.get("href")
        if href is not None:
            assert href.startswith(("#", "data:")), href
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (name, value)
    assert "@import" not in html and "url(" not in html
    # The only URL on the page is the SVG namespace, which is a name, not a request.
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}


# -- escaping ------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["synthetic", "real"])
def test_user_strings_are_escaped(
    kit: SimpleNamespace,
    synthetic_comparison: Comparison,
    real_comparison: Comparison,
    source: str,
) -> None:
    comparison = synthetic_comparison if source == "synthetic" else real_comparison
    html = render_html(comparison)
    for text in kit.HOSTILE:
        assert text not in html, f"{text!r} appears unescaped"
    assert "<script" not in html
    page = kit.parse(html)
    assert not page.find_all("script") and not page.find_all("b")
    shown = page.text
    listed = [w.query for f in comparison.failures for w in f.worst]
    listed += [comparison.queries[q] for q in listed]
    for text in (*kit.SYSTEMS, *listed, *comparison.notes):
        assert text in shown, text
    if source == "synthetic":
        assert "<b>bold</b> & co" in listed and "q<1>&'\"" in listed
    rows = page.find("table", cls="summary").find_all("tr", data_metric="nDCG@10")
    assert [r.attrs["data-system"] for r in rows] == list(kit.SYSTEMS)


def test_every_svg_is_well_formed_xml(kit: SimpleNamespace, real_comparison: Comparison) -> None:
    html = render_html(real_comparison)
    svgs = re.findall(r"<svg .*?</svg>", html, flags=re.S)
    assert len(svgs) == len(real_comparison.metrics) + 1 + 3
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"


# -- determinism ---------------------------------------------------------------------------------


def test_same_comparison_same_bytes(kit: SimpleNamespace) -> None:
    first = render_html(kit.synthetic())
    assert render_html(kit.synthetic()) == first
    assert render_html(kit.synthetic(seed=2)) != first
    explained = kit.synthetic()
    explained = kit.with_explanations(explained, kit.fake_explanations(explained))
    assert render_html(explained) == render_html(explained)


def test_real_compare_same_seed_same_bytes(kit: SimpleNamespace) -> None:
    assert render_html(kit.generated()) == render_html(kit.generated())


# -- structure -----------------------------------------------------------------------------------


def test_one_svg_per_plot_each_titled(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    comparison = synthetic_comparison
    page = kit.parse(render_html(comparison))
    svgs = page.find_all("svg")
    assert len(charts(page, "means")) == len(comparison.metrics)
    assert len(charts(page, "differences")) == 1
    assert len(charts(page, "curves")) == 3
    assert len(svgs) == len(comparison.metrics) + 1 + 3
    ids = [svg.attrs["id"] for svg in svgs]
    assert len(set(ids)) == len(ids)
    for svg in svgs:
        title, desc = svg.elements[:2]
        assert (title.tag, desc.tag) == ("title", "desc")
        assert svg.attrs["role"] == "img"
        assert svg.attrs["aria-labelledby"] == f"{title.attrs['id']} {desc.attrs['id']}"
        assert title.text and len(desc.text) > 40
        assert int(svg.attrs["width"]) > 0 and int(svg.attrs["height"]) > 0
        assert svg.find_all("text", cls="axis-label"), "axes are labelled"
        assert len(svg.find_all("text", cls="tick")) >= 3, "axes have ticks"


def test_bars_whiskers_lines_and_points(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    comparison = synthetic_comparison
    n_systems, n = len(comparison.systems), comparison.n_queries
    page = kit.parse(render_html(comparison))
    for chart, metric in zip(charts(page, "means"), comparison.metrics, strict=True):
        assert len(chart.find_all("rect", cls="bar")) == n_systems
        assert len(chart.find_all("path", cls="whisker")) == n_systems
        labels = [t.text for t in chart.find_all("text", cls="value")]
        assert labels == [num(comparison.mean(s, metric).mean) for s in comparison.systems]
    (differences,) = charts(page, "differences")
    lines = differences.find_all("polyline")
    assert len(lines) == n_systems - 1
    assert all(len(line.attrs["points"].split()) == n for line in lines)
    assert len(differences.find_all("circle", cls="point")) == (n_systems - 1) * n
    assert differences.find_all("line", cls="zero-line")
    legend = [t.text for t in differences.find("g", cls="legend").find_all("text")]
    d = comparison.difference(kit.NEW, comparison.metrics[0])
    assert legend[0] == f"{kit.NEW} (W/T/L {d.wins}/{d.ties}/{d.losses})"
    for chart in charts(page, "curves"):
        lines = chart.find_all("polyline")
        assert len(lines) == n_systems
        assert all(len(line.attrs["points"].split()) == 100 for line in lines)
        legend = [t.text for t in chart.find("g", cls="legend").find_all("text")]
        assert legend == list(comparison.systems)


def test_many_queries_draw_lines_without_points(kit: SimpleNamespace) -> None:
    comparison = kit.synthetic(n=MAX_POINTS + 1)
    page = kit.parse(render_html(comparison))
    (differences,) = charts(page, "differences")
    assert not differences.find_all("circle")
    assert all(
        len(line.attrs["points"].split()) == MAX_POINTS + 1
        for line in differences.find_all("polyline")
    )


def test_differences_are_sorted_and_on_scale(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    page = kit.parse(render_html(synthetic_comparison))
    (differences,) = charts(page, "differences")
    for line in differences.find_all("polyline"):
        points = [tuple(map(float, p.split(","))) for p in line.attrs["points"].split()]
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        assert xs == sorted(xs)
        assert ys == sorted(ys, reverse=True), "SVG y grows downwards: sorted ascending"


# -- the numbers ---------------------------------------------------------------------------------


def cells(row: Any) -> dict[str, str]:
    return {c: node.text for node in row.elements for c in node.classes}


def test_summary_numbers_are_the_comparisons(
    kit: SimpleNamespace, real_comparison: Comparison
) -> None:
    comparison = real_comparison
    page = kit.parse(render_html(comparison))
    table = page.find("table", cls="summary")
    headers = [th.text for th in table.find("thead").find_all("th")]
    assert headers[:4] == ["metric", "system", "n", "mean [95% CI]"]
    assert "p (Holm)" in headers and "W/T/L" in headers
    rows = table.find("tbody").find_all("tr") + [
        r for body in table.find_all("tbody")[1:] for r in body.find_all("tr")
    ]
    assert len(rows) == len(comparison.metrics) * len(comparison.systems)
    for row in rows:
        metric, system = row.attrs["data-metric"], row.attrs["data-system"]
        mean = comparison.mean(system, metric)
        shown = cells(row)
        assert shown["mean"] == f"{num(mean.mean)} {interval(mean.low, mean.high)}"
        assert shown["n"] == str(mean.n)
        if system == comparison.baseline:
            assert "baseline" in row.classes and "delta" not in shown
            continue
        d = comparison.difference(system, metric)
        assert shown["delta"] == f"{signed(d.difference)} {interval(d.low, d.high, sign=True)}"
        assert shown["rel"] == percent(d.relative)
        assert shown["dz"] == num(d.effect_size, 2)
        assert shown["p"] == pvalue(d.p_value)
        assert shown["pc"] == pvalue(d.p_corrected) + ("*" if d.significant else "")
        assert shown["wtl"] == f"{d.wins}/{d.ties}/{d.losses}"
        assert ("sig" in row.classes) == d.significant
        if d.significant:
            assert ("better" in row.classes) == (d.difference > 0)


def test_marks_are_explained_and_nan_is_a_dash(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    comparison = synthetic_comparison
    page = kit.parse(render_html(comparison))
    legend = page.find("section", id="summary").find("p", cls="legend-text").text
    assert legend.startswith("Legend: * = significant at alpha 0.05 after the Holm correction")
    assert "d_z" in legend and "W/T/L" in legend
    d = comparison.difference(kit.NEW, "P@10")
    assert math.isnan(d.relative)
    summary = page.find("table", cls="summary")
    (row,) = summary.find_all("tr", data_metric="P@10", data_system=kit.NEW)
    assert cells(row)["rel"] == "–"
    (worse,) = summary.find_all("tr", data_metric="nDCG@10", data_system=kit.OTHER)
    assert {"sig", "worse"} <= worse.classes and cells(worse)["pc"] == "0.0002*"
    (better,) = summary.find_all("tr", data_metric="nDCG@10", data_system=kit.NEW)
    assert {"sig", "better"} <= better.classes and cells(better)["p"] == "<0.0001"


def test_settings_every_one_shown(kit: SimpleNamespace, synthetic_comparison: Comparison) -> None:
    page = kit.parse(render_html(synthetic_comparison))
    settings = page.find("dl", cls="settings")
    shown = dict(
        zip(
            [t.text for t in settings.find_all("dt")],
            [d.text for d in settings.find_all("dd")],
            strict=True,
        )
    )
    s = synthetic_comparison.settings
    assert shown["Test"] == "paired randomization test (1,000 sign flips, seed 7)"
    assert shown["Correction"] == "Holm, over 4 comparisons"
    assert shown["Alpha"] == "0.05"
    assert shown["Seed"] == "7" and shown["Resamples"] == "1,000"
    assert shown["Intervals"] == "95% BCa bootstrap intervals (1,000 resamples)"
    assert (
        shown["Policies"]
        == f"relevant: grade >= {s.policies.to_dict()['rel']}; ties: {s.policies.ties}"
    )
    assert shown["Queries"].startswith("12 ")
    headline = page.find("p", cls="headline").text
    assert headline.startswith(f"2 systems against baseline {kit.BASE!r} on 12 queries")


def test_notes_are_listed(kit: SimpleNamespace, synthetic_comparison: Comparison) -> None:
    page = kit.parse(render_html(synthetic_comparison))
    notes = [li.text for li in page.find("ul", cls="notes").find_all("li")]
    assert notes == list(synthetic_comparison.notes)
    quiet = kit.parse(render_html(kit.synthetic(notes=())))
    assert not quiet.find_all("ul", cls="notes")


def test_segment_table_flags_and_small(
    kit: SimpleNamespace, synthetic_comparison: Comparison
) -> None:
    comparison = synthetic_comparison
    page = kit.parse(render_html(comparison))
    table = page.find("table", cls="segments")
    rows = table.find("tbody").find_all("tr")
    assert len(rows) == len(comparison.segments)
    for row, s in zip(rows, comparison.segments, strict=True):
        assert row.attrs["data-segment"] == s.segment
        assert ("flagged" in row.classes) == s.flagged
        assert ("small" in row.classes) == s.small
        assert row.find("td", cls="flag").text == (
            "WORSE" if s.flagged else "small" if s.small else ""
        )
        assert row.find("td", cls="n").text == str(s.n)
    assert f"{signed(-0.125)} {interval(-0.25, -0.0625, sign=True)}" in rows[0].text
    assert "1 of 3 rows flagged" in table.find("caption").text
    means = page.find("table", cls="segment-means").find("tbody").find_all("tr")
    assert len(means) == len(comparison.segment_means)


def test_without_segments_the_section_says_so(kit: SimpleNamespace) -> None:
    import dataclasses

    comparison = dataclasses.replace(kit.synthetic(), segments=(), segment_means=())
    page = kit.parse(render_html(comparison))
    section = page.find("section", id="segments")
    assert "No segments were given" in section.text
    assert not page.find_all("table", cls="segments")


def test_failure_lists(kit: SimpleNamespace, synthetic_comparison: Comparison) -> None:
    comparison = synthetic_comparison
    page = kit.parse(render_html(comparison))
    quantiles = page.find("table", cls="quantiles")
    rows = quantiles.find("tbody").find_all("tr")
    assert [r.attrs["data-system"] for r in rows] == [kit.NEW, kit.OTHER]
    for row in rows:
        f = next(f for f in comparison.failures if f.system == row.attrs["data-system"])
        values = [td.text for td in row.find_all("td")]
        assert values == [str(comparison.n_queries), *(signed(v) for v in f.quantiles.values())]
    sections = page.find_all("section", cls="failure")
    assert [s.attrs["data-system"] for s in sections] == list(comparison.systems)
    for section, f in zip(sections, comparison.failures, strict=True):
        if f.worst:
            worst = section.find("table", cls="worst").find("tbody").find_all("tr")
            assert [r.attrs["data-query"] for r in worst] == [w.query for w in f.worst]
            for row, w in zip(worst, f.worst, strict=True):
                texts = [td.text for td in row.find_all("td")]
                assert texts[1:] == [w.text, num(w.baseline), num(w.system), signed(w.difference)]
        listed = {
            d.attrs["class"]: [c.text for c in d.find_all("code")]
            for d in section.find_all("details")
        }
        assert listed.get("no-results", []) == list(f.no_results)
        assert listed.get("nothing-relevant", []) == list(f.nothing_relevant)
    other = sections[2]
    assert "<b>bold</b> & co" in other.find("details", cls="no-results").text


# -- the worst queries and the diff pages (issue 24) ----------------------------------------------


def _diffs(kit: SimpleNamespace, comparison: Comparison) -> tuple[Any, ...]:
    from rankmeter.comparison._diff import diffs_against

    data = kit.collection()
    return diffs_against(
        data["qrels"],
        data["runs"],
        comparison.baseline,
        [s for s in comparison.systems if s != comparison.baseline],
        metric=comparison.metrics[0],
        corpus={d: f"text of {d}" for q in data["qrels"].values() for d in q},
        queries=data["queries"],
    )


def test_without_diff_pages_a_compact_table_and_the_command(
    kit: SimpleNamespace, real_comparison: Comparison
) -> None:
    """The explanations compare attaches are no longer stacked on the page (it was 30,519 px
    tall for three runs on Cranfield); the worst queries stay a table, and a line names the
    command that shows their rankings side by side."""
    assert getattr(real_comparison, "explanations", None)
    page = kit.parse(render_html(real_comparison))
    assert not page.find_all("section", id="explanations")
    assert not page.find_all("section", cls="rankmeter-explain")
    assert not page.find_all("a", cls="diff")
    assert not page.find("nav").find_all("a", href="#explanations")
    hints = page.find_all("p", cls="diff-hint")
    assert len(hints) == sum(1 for f in real_comparison.failures if f.worst)
    assert all(
        "rankmeter diff QRELS BASELINE.run SYSTEM.run --corpus CORPUS" in h.text for h in hints
    )


def test_worst_queries_link_to_their_diff_pages(
    kit: SimpleNamespace, real_comparison: Comparison
) -> None:
    from rankmeter.report.diff import query_anchor

    others = [s for s in real_comparison.systems if s != real_comparison.baseline]
    pages = {s: f"report.diff-{i}.html" for i, s in enumerate(others, start=1)}
    page = kit.parse(render_html(real_comparison, diff_pages=pages))
    ids = [n.attrs["id"] for n in page.iter() if "id" in n.attrs]
    assert len(ids) == len(set(ids)), "every id on the page is unique"
    for section in page.find_all("section", cls="failure"):
        f = next(f for f in real_comparison.failures if f.system == section.attrs["data-system"])
        if f.system == real_comparison.baseline or not f.worst:
            continue
        links = [a.attrs["href"] for a in section.find_all("a", cls="diff")]
        assert links == [f"{pages[f.system]}#{query_anchor(w.query)}" for w in f.worst]
        assert section.find("a", cls="diff-page").attrs["href"] == pages[f.system]


def test_the_comparison_renderer_writes_the_diff_pages_beside_the_report(
    kit: SimpleNamespace, real_comparison: Comparison, tmp_path: Path
) -> None:
    from rankmeter.report import render
    from rankmeter.report.diff import query_anchor

    diffs = _diffs(kit, real_comparison)
    report = tmp_path / "report.html"
    render(real_comparison, "html", str(report), diffs=diffs, written_to=str(report))
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["report.diff-1.html", "report.diff-2.html", "report.html"]
    page = kit.parse(report.read_text(encoding="utf-8"))
    for diff, name in zip(diffs, written[:2], strict=True):
        target = kit.parse((tmp_path / name).read_text(encoding="utf-8"))
        ids = {n.attrs["id"] for n in target.iter() if "id" in n.attrs}
        section = next(
            s
            for s in page.find_all("section", cls="failure")
            if s.attrs["data-system"] == diff.run_b
        )
        links = [a.attrs["href"] for a in section.find_all("a", cls="diff")]
        assert links and all(link.split("#")[0] == name for link in links)
        assert all(link.split("#")[1] in ids for link in links)
        assert query_anchor(diff.queries[0].query) in ids


# -- the command line and the import ------------------------------------------------------------


def test_cli_writes_the_page(kit: SimpleNamespace, tmp_path: Path) -> None:
    from rankmeter.cli import main

    data = kit.collection(n_queries=15)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in data["qrels"].items() for d, g in docs.items())
    )
    paths = []
    for i, (name, run) in enumerate(data["runs"].items()):
        path = tmp_path / f"run{i}.txt"
        tag = name.replace(" ", "_")
        path.write_text(
            "".join(
                f"{q} Q0 {d} {r} {s} {tag}\n"
                for q, docs in run.items()
                for r, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)
            )
        )
        paths.append(str(path))
    out = tmp_path / "report.html"
    args = ["compare", str(qrels), *paths, "--format", "html", "-o", str(out)]
    try:
        main([*args, "--resamples", "200", "--quiet"])
    except SystemExit as done:
        assert done.code in (0, None)
    page = kit.parse(out.read_text(encoding="utf-8"))
    assert len(page.find_all("svg")) == 5 + 1 + 3
    assert page.find("table", cls="summary")


def test_import_stays_light() -> None:
    code = (
        "import sys, rankmeter.report.html\n"
        "heavy = {'matplotlib', 'jinja2', 'playwright', 'pandas'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the chart helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.0, 0.93, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (-0.6038, 0.4775, [-0.75, -0.5, -0.25, 0.0, 0.25, 0.5]),
        (0.0, 0.0, [-1.0, -0.5, 0.0, 0.5, 1.0]),
        (0.0, 100.0, [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]),
        (math.nan, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ],
)
def test_nice_ticks(low: float, high: float, expected: list[float]) -> None:
    lo, hi, ticks = _svg.nice_ticks(low, high)
    assert ticks == pytest.approx(expected)
    assert (lo, hi) == (ticks[0], ticks[-1])


def test_tick_labels_and_shortening() -> None:
    assert [_svg.tick_label(t, [0.0, 0.25]) for t in (0.0, 0.25, -0.5)] == ["0", "0.25", "-0.50"]
    assert _svg.tick_label(20.0, [0.0, 20.0]) == "20"
    assert _svg.shorten("a" * 50, 66) == "a" * 9 + "…"
    assert _svg.shorten("short", 200) == "short"


# -- the picture in the guide --------------------------------------------------------------------


def test_guide_shows_the_report_screenshot() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "images/compare-report.png" in guide
    data = SCREENSHOT.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) < 400_000
    width = int.from_bytes(data[16:20], "big")
    assert width == 1200
