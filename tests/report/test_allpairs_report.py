"""The all-pairs page and reports (issue 13, "All systems at once"): the matrix plot's cells
follow the pairs' significance and direction, the letters are the analysis's in every format,
and the chart writer escapes what it draws."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from rankmeter.comparison import AllPairsComparison, compare_all
from rankmeter.report import allpairs as report
from rankmeter.report._svg import Cell, matrix_chart


def _result(method: str = "tukey") -> AllPairsComparison:
    """Four systems on 30 queries: two alike, one better, one worse."""
    rng = np.random.default_rng(5)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {
        n: {} for n in ("alike-1", "alike-2", "up", "down")
    }
    for q in range(30):
        docs = [f"d{q}_{i}" for i in range(12)]
        grades = rng.choice([0, 0, 1, 2], size=12)
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs, grades, strict=True)}
        for name, noise in (("alike-1", 1.0), ("alike-2", 1.0), ("up", 0.3), ("down", 4.0)):
            scores = grades + rng.normal(0, noise, 12)
            runs[name][f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    return compare_all(qrels, runs, ["nDCG@10"], method=method, resamples=500)


def test_the_matrix_cells_follow_the_pairs() -> None:
    result = _result()
    analysis = result.analysis("nDCG@10")
    page = report.render_html(result)
    cells = re.findall(r'<g class="cell"><title>([^<]*)</title><rect [^>]*fill="([^"]+)"', page)
    assert len(cells) == 16
    order = [row[0] for row in report.system_rows(analysis)]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            tooltip, colour = cells[i * 4 + j]
            if a == b:
                assert colour == report.DIAGONAL and tooltip.startswith(a)
                continue
            pair = analysis.pair(a, b)
            expected = (
                report.SAME
                if not pair.significant
                else report.BETTER
                if pair.difference > 0
                else report.WORSE
            )
            assert colour == expected and tooltip.startswith(f"{a} vs {b}: Δ"), (a, b)
    assert {report.SAME, report.BETTER, report.WORSE} <= {c for _, c in cells}


@pytest.mark.parametrize("method", ["tukey", "randomised-tukey"])
def test_the_letters_are_the_analysis_in_every_format(method: str) -> None:
    result = _result(method)
    analysis = result.analysis("nDCG@10")
    rows = report.system_rows(analysis)
    assert rows[0][0] == "up" and len({r[2] for r in rows}) >= 2
    markdown = report.render_markdown(result)
    for name, mean, letters in rows:
        assert re.search(rf"\| {re.escape(name)} \| {mean} \| {letters} \|", markdown)
    payload = json.loads(report.render_json(result))
    assert payload["analyses"]["nDCG@10"]["letters"] == dict(
        zip(analysis.systems, analysis.letters, strict=True)
    )
    latex = report.render_latex(result)
    for _, mean, letters in rows:
        assert f"{mean}$^{{\\mathrm{{{letters}}}}}$" in latex


def test_a_matrix_chart_is_one_svg_with_a_title_per_cell() -> None:
    svg = matrix_chart(
        ident="m",
        title="t",
        desc="d",
        labels=["a<", "b"],
        cells=[[Cell("x", "#fff", "tip&1"), Cell("y", "#000", "2")], [Cell("z", "#fff", "3")] * 2],
    )
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('<g class="cell">') == 4 and "tip&amp;1" in svg and "a&lt;" in svg
