"""The Judged@k warning's wording (rankmeter.report.judged) and the renderers that show it."""

from __future__ import annotations

import dataclasses
import json

import pytest

import rankmeter
from rankmeter.report import comparison as report
from rankmeter.report.evaluation import queries_phrase, render_json, render_table
from rankmeter.report.html import render_html
from rankmeter.report.judged import warning_line, warnings_data
from rankmeter.results import JudgedWarning

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
HOLES = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"c": 2.0, "y": 1.0}}
FULL = {"q1": {"a": 3.0, "b": 1.0}, "q2": {"c": 2.0}}


def test_the_warning_names_run_k_share_and_what_to_do() -> None:
    line = warning_line(JudgedWarning("bm25", 10, 0.62, 0.9))
    assert line == (
        "warning: run 'bm25' has Judged@10 = 0.62 (below 0.90): 38% of its top 10 is unjudged "
        "and counts as not relevant; judge more (rankmeter pool RUN --depth 10 --qrels QRELS) "
        "or use --judged-only / Bpref"
    )


def test_numbers_that_round_alike_get_more_digits() -> None:
    line = warning_line(JudgedWarning("r", 20, 0.8996, 0.9))
    assert "Judged@20 = 0.8996 (below 0.9000): 10% of its top 20" in line
    tiny = warning_line(JudgedWarning("r", 5, 0.996, 0.999))
    assert "under 1% of its top 5" in tiny


def test_warnings_as_data() -> None:
    assert warnings_data([JudgedWarning("r", 5, 0.5, 0.9)]) == [
        {"run": "r", "k": 5, "judged": 0.5, "threshold": 0.9}
    ]


def test_evaluation_renderers_warn_only_below_the_threshold() -> None:
    results = list(rankmeter.evaluate(QRELS, {"holes": HOLES, "full": FULL}, ["P@2"]).values())
    payload = json.loads(render_json(results, per_query=False, single=False))
    assert [("warnings" in r) for r in payload] == [True, False]
    assert payload[0]["warnings"][0] == {
        "run": "holes",
        "k": 2,
        "judged": 0.5,
        "threshold": 0.9,
    }
    quiet = json.loads(render_json(results, per_query=False, single=False, judged_below=0))
    # (issue 16: every object also says which queries its means average over)
    queries = {"queries": queries_phrase(False)}
    assert quiet == [{"run": r.run, **r.to_dict(), **queries} for r in results]
    from rich.console import Console

    console = Console(width=400, record=True, file=None)
    with console.capture() as captured:
        console.print(render_table(results, per_query=False, judged_below=0.8))
    assert "run 'holes' has Judged@2 = 0.50 (below 0.80)" in captured.get()
    assert "run 'full'" not in captured.get()


def test_a_comparison_without_judged_values_never_warns() -> None:
    comparison = rankmeter.compare(QRELS, {"full": FULL, "holes": HOLES}, ["AP"], resamples=100)
    assert comparison.judged_k == 10 and comparison.judged["holes"] == pytest.approx(
        rankmeter.evaluate(QRELS, HOLES, "Judged@10").metrics["Judged@10"]
    )
    bare = dataclasses.replace(comparison, judged={})
    assert bare.judged_warnings() == ()
    for render in (report.render_markdown, report.render_latex, render_html):
        assert "Judged@10" in render(comparison) and "Judged@10" not in render(bare)
    assert "warnings" not in json.loads(report.render_json(bare))


def test_a_bad_threshold_is_refused_by_every_renderer() -> None:
    comparison = rankmeter.compare(QRELS, {"full": FULL, "holes": HOLES}, ["AP"], resamples=100)
    with pytest.raises(
        rankmeter.PolicyError, match=r"judged_below=1\.5 must be a number from 0 to 1"
    ):
        report.render_markdown(comparison, judged_below=1.5)
    with pytest.raises(rankmeter.PolicyError, match=r"judged_below=True must be a number"):
        comparison.judged_warnings(True)  # type: ignore[arg-type]
