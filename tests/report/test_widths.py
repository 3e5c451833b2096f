"""Terminal tables at any width: every name, header and number is shown whole.

Rich fits a table that is too wide by cutting cells with "…" and shrinking narrow columns to
nothing: at 80 columns `compare` with three runs lost its system and metric columns (rows could
no longer be told apart) and cut the intervals; with two runs it lost the metric column and
cut W/T/L; `evaluate` cut its headers. The tables now fold names, or stack their rows, instead.
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.report import comparison as compare_report
from rankmeter.report import evaluation as evaluate_report
from rankmeter.report import pipeline as pipeline_report
from rankmeter.vector.pipeline import two_stage

WIDTHS = (60, 80, 120)
METRICS = ["nDCG@10", "P@10", "R@100", "RR", "AP"]


def _collection(names: list[str]) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(12)} for q in range(30)}
    runs = {
        name: rankmeter.Run.from_dict(
            {q: {f"d{d}": float(rng.random()) for d in range(12)} for q in qrels}, name=name
        )
        for name in names
    }
    return qrels, runs


def _render(renderable: Any, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def _assert_whole(text: str, width: int) -> None:
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= width, text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("systems", [2, 3])
def test_compare_shows_every_row_whole(width: int, systems: int) -> None:
    names = ["bm25", "all-MiniLM-L6-v2", "hybrid-rrf"][:systems]
    qrels, runs = _collection(names)
    comparison = rankmeter.compare(qrels, runs, METRICS, resamples=200, seed=0)
    text = _render(compare_report.render_table(comparison), width)
    _assert_whole(text, width)
    lines = text.splitlines()
    for row in compare_report.means_rows(comparison):
        assert all(cell in text for cell in row), (row, text)
    for row in compare_report.difference_rows(comparison):
        system, metric, *numbers = row
        # Told apart: the system and the metric on one line (a row, or a stacked block's head).
        assert any(
            re.search(rf"(^|\s){re.escape(system)}\b.*\s{re.escape(metric)}(\s|$)", line)
            for line in lines
        ), (row, text)
        assert all(cell in text for cell in numbers), (row, text)
    for header in compare_report.difference_header(comparison)[2:]:  # (names head a block)
        assert header in text


@pytest.mark.parametrize("width", WIDTHS)
def test_evaluate_shows_every_header_and_value(width: int) -> None:
    metrics = ["nDCG(gain=exp)@10", "P(rel=2)@5", "R@1000", "AP", "RR@10", "bpref", "num_rel"]
    qrels, runs = _collection(["bm25", "all-MiniLM-L6-v2"])
    results = [rankmeter.evaluate(qrels, run, metrics) for run in runs.values()]
    for per_query in (False, True):
        text = _render(evaluate_report.render_table(results, per_query=per_query), width)
        _assert_whole(text, width)
        for name in metrics:
            assert name in text, text
        for result in results:
            assert result.run in text
            for measure in result.measures:
                assert evaluate_report._fmt(measure, result.metrics[measure.label]) in text


@pytest.mark.parametrize("width", WIDTHS)
def test_two_stage_shows_every_header_and_value(width: int) -> None:
    qrels, runs = _collection(["retriever-with-a-long-name", "cross-encoder-reranker"])
    first, second = runs.values()
    result = two_stage(qrels, first, second, pool=5, metrics=["nDCG(gain=exp)@10", "P@5", "AP"])
    text = _render(pipeline_report.render_table(result), width)
    _assert_whole(text, width)
    for stage, evaluated in result.stages.items():
        assert stage in text
        for measure in evaluated.measures:
            assert measure.label in text


def test_names_fold_before_rows_stack() -> None:
    """Between the plain table and the stacked rows: a long name folds, numbers stay whole."""
    from rankmeter.report._rich import FittedTable

    table = FittedTable()
    table.add_column("system", text=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_row("a-system-with-a-rather-long-name", "0.1234 [0.100, 0.200]")
    table.add_row("short", "0.5000 [0.400, 0.600]")
    wide, folded, stacked = (_render(table, w) for w in (80, 40, 24))
    assert "│ a-system-with-a-rather-long-name │ 0.1234 [0.100, 0.200] │" in wide
    _assert_whole(folded, 40)
    cells = [line.split("│")[1:3] for line in folded.splitlines() if line.startswith("│")]
    assert "".join(name.strip() for name, _ in cells[:-1]) == "a-system-with-a-rather-long-name"
    assert cells[0][1].strip() == "0.1234 [0.100, 0.200]"
    _assert_whole(stacked, 24)
    assert "a-system-with-a-rather-long-name" in stacked.replace("\n", "")
    # A pair wider than the line is split after its header: the number stays whole.
    assert "  value:\n  0.5000 [0.400, 0.600]\n" in stacked
