"""compare(): the front: what it checks, and numbers that agree with evaluate()."""

from __future__ import annotations

import math
from pathlib import Path

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
    with pytest.raises(
        PolicyError,
        match=r"^baseline='nope' must be one of 'base', 'better', 'noisy' \(the name of one of "
        r"the runs\)$",
    ):
        compare(qrels, runs, ["P@5"], baseline="nope")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"test": "z"},
            "test='z' must be one of 'randomization', 't', 'bootstrap', 'wilcoxon', 'sign' "
            "(the paired test)",
        ),
        (
            {"correction": "fdr"},
            "correction='fdr' must be one of 'holm', 'bonferroni', 'bh', 'none' "
            "(the multiple-comparison correction)",
        ),
        (
            {"alpha": 1.5},
            "alpha=1.5 must be a number strictly between 0 and 1 (the significance level)",
        ),
        (
            {"alpha": float("nan")},
            "alpha=nan must be a finite number strictly between 0 and 1 (the significance level)",
        ),
        ({"level": 95}, "level=95 must be a number strictly between 0 and 1 (e.g. 0.95 for 95%)"),
        (
            {"resamples": 0},
            "resamples=0 must be an integer from 20 to 10,000,000 (randomizations and bootstrap "
            "resamples; fewer cannot give a p-value below 0.05)",
        ),
        (
            {"resamples": True},
            "resamples=True must be an integer from 20 to 10,000,000 (randomizations and "
            "bootstrap resamples; fewer cannot give a p-value below 0.05)",
        ),
        (
            {"seed": -1},
            "seed=-1 must be an integer >= 0 (the seed of the random number generator)",
        ),
        (
            {"seed": 1.5},
            "seed=1.5 must be an integer >= 0 (the seed of the random number generator)",
        ),
        (
            {"interval": "normal"},
            "interval='normal' must be one of 'bca', 'percentile' (the bootstrap interval method)",
        ),
        (
            {"min_segment": 0},
            "min_segment=0 must be an integer >= 1 (smaller segments are shown, never flagged)",
        ),
        (
            {"worst": -2},
            "worst=-2 must be an integer >= 0 (how many of the most-losing queries to list per "
            "system)",
        ),
        (
            {"cutoff": 0},
            "cutoff=0 must be an integer >= 1 (no relevant result in the top cutoff is a failure)",
        ),
    ],
)
def test_bad_settings_are_named(data: tuple[dict, dict], kwargs: dict, message: str) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError) as caught:
        compare(qrels, runs, ["P@5"], **kwargs)
    assert str(caught.value) == message


def test_settings_are_checked_before_any_input_is_read(tmp_path: Path) -> None:
    missing = tmp_path / "missing.qrels"
    with pytest.raises(PolicyError, match=r"^seed=-1 must be an integer >= 0"):
        compare(missing, [missing, missing], seed=-1)


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
