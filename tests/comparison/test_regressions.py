"""Comparison.regressions: the decision behind ``compare --fail-on regression`` (issue 16)."""

from __future__ import annotations

import math

import pytest

from rankmeter import compare
from rankmeter.comparison import Comparison, Regression, check_min_effect
from rankmeter.errors import PolicyError

N = 60


def _runs(
    broken: range,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    """Qrels with one relevant document per query; the new run ranks it second on the
    ``broken`` queries and first elsewhere, as the baseline does everywhere."""
    qrels = {f"q{i}": {"r": 1} for i in range(N)}
    base = {f"q{i}": {"r": 2.0, "n": 1.0} for i in range(N)}
    new = {
        f"q{i}": ({"n": 2.0, "r": 1.0} if i in broken else {"r": 2.0, "n": 1.0}) for i in range(N)
    }
    return qrels, {"base": base, "new": new}


def _compare(broken: range, **kwargs: object) -> Comparison:
    qrels, runs = _runs(broken)
    return compare(qrels, runs, ["RR", "P@1"], resamples=2000, **kwargs)  # type: ignore[arg-type]


def test_a_planted_regression_is_found_on_every_metric() -> None:
    result = _compare(range(0, N, 2))  # half the queries lose their answer's first place
    found = result.regressions()
    assert [(r.system, r.metric, r.segment) for r in found] == [
        ("new", "RR", None),
        ("new", "P@1", None),
    ]
    rr = found[0]
    assert rr.baseline == "base" and rr.n == N
    assert rr.difference == pytest.approx(-0.25) and rr.high < 0
    assert rr.p_corrected < 0.05 and rr.correction == "holm" and rr.min_effect == 0
    assert rr.to_dict()["segment"] is None


def test_a_clean_change_has_no_regression() -> None:
    assert _compare(range(0)).regressions() == ()


def test_a_small_insignificant_drop_is_no_regression() -> None:
    result = _compare(range(2))  # two queries of sixty: a drop, not a significant one
    assert result.difference("new", "RR").difference < 0
    assert result.regressions() == ()


def test_min_effect_above_the_drop_passes() -> None:
    result = _compare(range(0, N, 2))
    drop = -result.difference("new", "P@1").difference  # 0.5 on P@1, 0.25 on RR
    assert [r.metric for r in result.regressions(min_effect=0.3)] == ["P@1"]
    assert result.regressions(min_effect=drop + 0.01) == ()
    # "by more than": a drop of exactly min_effect passes
    assert result.regressions(min_effect=drop) == ()


def test_a_segment_that_got_worse_is_a_regression() -> None:
    # The tail (q40..q59) breaks: -1 on P@1 and -0.5 on RR there; overall the drops are
    # below the stated effect.
    result = _compare(
        range(40, N),
        segments={"freq": {f"q{i}": "head" if i < 40 else "tail" for i in range(N)}},
        min_segment=10,
    )
    found = result.regressions(min_effect=0.4)  # overall: -0.33 on P@1, -0.17 on RR
    assert [(r.metric, r.segment) for r in found] == [("RR", "freq=tail"), ("P@1", "freq=tail")]
    assert found[0].n == 20 and found[0].difference == pytest.approx(-0.5)
    assert all(r.metric != "RR" or r.segment is not None for r in found)


def test_a_small_segment_never_trips_the_gate() -> None:
    result = _compare(
        range(55, N),
        segments={"user": {f"q{i}": "new" if i >= 55 else "old" for i in range(N)}},
        min_segment=10,
    )
    assert all(r.segment is None for r in result.regressions())


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, "0.1", True])
def test_a_bad_min_effect_is_one_clear_error(bad: object) -> None:
    with pytest.raises(
        PolicyError, match=r"^min_effect=.* must be a (finite )?number >= 0 \(the smallest drop"
    ):
        check_min_effect(bad)
    with pytest.raises(PolicyError, match=r"^min_effect="):
        _compare(range(0)).regressions(min_effect=bad)  # type: ignore[arg-type]


def test_regression_is_a_frozen_record() -> None:
    (first, *_) = _compare(range(0, N, 2)).regressions()
    assert isinstance(first, Regression)
    with pytest.raises(AttributeError):
        first.metric = "AP"  # type: ignore[misc]
