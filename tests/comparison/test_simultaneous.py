"""Intervals that agree with the corrected significance (issue 13, defect 4): simultaneous
(Bonferroni) intervals of the differences on request, and a legend that says which is shown."""

from __future__ import annotations

import pytest

import rankmeter
from rankmeter import compare, stats
from rankmeter.errors import PolicyError
from rankmeter.report import comparison as report

from ._helpers import METRICS


def test_simultaneous_intervals_are_bonferroni_intervals(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    both = compare(qrels, runs, METRICS, resamples=2000, seed=7, simultaneous=True)
    k = len(both.differences)
    assert k == 6 and both.difference_level == pytest.approx(1 - 0.05 / 6)
    for d in both.differences:
        marginal = result.difference(d.system, d.metric)
        diffs = both.scores[d.metric][d.system] - both.scores[d.metric]["base"]
        low, high = stats.bootstrap_intervals(diffs, level=1 - 0.05 / 6, resamples=2000, seed=7)
        assert (d.low, d.high) == (float(low[0]), float(high[0]))
        assert d.low <= marginal.low and marginal.high <= d.high
        assert d.p_value == marginal.p_value and d.p_corrected == marginal.p_corrected
    assert both.means == result.means  # the means' intervals stay at the level
    assert both.to_dict()["settings"]["simultaneous"] is True
    assert result.to_dict()["difference_level"] == 0.95


def test_the_legend_says_which_interval_is_shown(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    both = compare(qrels, runs, METRICS, resamples=2000, seed=7, simultaneous=True)
    marginal = report.legend(result)
    assert "CI = 95% BCa bootstrap interval of each difference on its own, not corrected " in (
        marginal
    )
    simultaneous = report.legend(both)
    assert "CI = simultaneous 95% BCa bootstrap intervals of the differences (Bonferroni: " in (
        simultaneous
    )
    assert "each at 99.17%" in simultaneous
    markdown, latex = report.render_markdown(both), report.render_latex(both)
    assert "Bonferroni: each at 99.17%" in markdown and "95% CI (simult.)" in markdown
    assert "Bonferroni: each at 99.17\\%" in latex


def test_simultaneous_must_be_a_boolean(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    with pytest.raises(PolicyError, match=r"^simultaneous='yes' must be True or False$"):
        compare(qrels, runs, METRICS, simultaneous="yes")
