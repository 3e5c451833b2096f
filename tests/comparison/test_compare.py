"""compare(): the front: what it checks, and numbers that agree with evaluate()."""

from __future__ import annotations

import math

import pytest

import rankmeter
from rankmeter import compare, evaluate
from rankmeter.errors import PolicyError
from rankmeter.report import comparison as report

from ._helpers import METRICS


def test_means_are_evaluate_means(data: tuple[dict, dict], result: rankmeter.Comparison) -> None:
    qrels, runs = data
    assert result.systems == ("base", "better", "noisy")
    assert result.metrics == tuple(METRICS)
    for name, run in runs.items():
        expected = evaluate(qrels, run, METRICS)
        for metric in METRICS:
            mean = result.mean(name, metric)
            assert mean.mean == pytest.approx(expected.metrics[metric], abs=1e-12)
            assert mean.low <= mean.mean <= mean.high
            assert mean.n == 60


def test_baseline_choice(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, ["P@5"], baseline="better", resamples=200)
    assert result.systems[0] == "better" and result.baseline == "better"
    assert {d.system for d in result.differences} == {"base", "noisy"}
    with pytest.raises(PolicyError, match="baseline 'nope' is not one of the runs: base, better"):
        compare(qrels, runs, ["P@5"], baseline="nope")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "z"}, "test='z' is not a paired test; use one of randomization, t, bootstrap"),
        ({"correction": "fdr"}, "correction='fdr' is not known; use one of holm, bonferroni, bh"),
        ({"alpha": 1.5}, "alpha=1.5 must be a number between 0 and 1"),
        ({"level": 95}, "level=95 must be a number between 0 and 1"),
        ({"resamples": 0}, "resamples=0 must be a whole number >= 1"),
        ({"seed": -1}, "seed=-1 must be a whole number >= 0"),
        ({"interval": "normal"}, "interval='normal' is not known; use one of bca, percentile"),
        ({"min_segment": 0}, "min_segment=0 must be a whole number >= 1"),
        ({"worst": -2}, "worst=-2 must be a whole number >= 0"),
        ({"cutoff": 0}, "cutoff=0 must be a whole number >= 1"),
    ],
)
def test_bad_settings_are_named(data: tuple[dict, dict], kwargs: dict, message: str) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compare(qrels, runs, ["P@5"], **kwargs)


def test_one_run_is_not_a_comparison(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError, match="compare needs two runs or more"):
        compare(qrels, [runs["base"]], ["P@5"])


def test_text_renderers(result: rankmeter.Comparison) -> None:
    markdown = report.render_markdown(result)
    assert "| better | nDCG@10 |" in markdown and "| nDCG@10 | " in markdown
    assert "Holm" in markdown and "W/T/L" in markdown
    latex = report.render_latex(result)
    assert "\\toprule" in latex and "\\bottomrule" in latex and "\\caption{" in latex
    assert "$^{*}$: significant at $\\alpha=0.05$" in latex
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(report.render_table(result))
    text = console.export_text()
    assert "baseline 'base'" in text and "better" in text and "lost most on nDCG@10" in text


def test_latex_escapes_names() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    runs = {"bm25_k1&b": {"a": {"x": 1.0}, "b": {"y": 1.0}}, "50%_new": {"a": {"x": 1.0}}}
    latex = report.render_latex(compare(qrels, runs, ["P@1"], resamples=50))
    assert "bm25\\_k1\\&b (baseline)" in latex and "50\\%\\_new" in latex


def test_not_recommended_tests_say_so(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, ["P@5"], test="wilcoxon")
    assert any("wilcoxon" in n for n in result.notes)
    assert "not recommended" in result.settings.describe()
    assert all(math.isfinite(d.p_value) for d in result.differences)
