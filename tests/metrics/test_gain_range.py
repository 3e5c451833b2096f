"""Gains beyond float64: an error that names the grade and the query, never NaN or inf.

``gain=exp`` is 2^g - 1: grade 1024 and up overflow float64 (about 1.8e308), and several grades
near 1023 add up past it. DCG cannot be finite there, and nDCG as a ratio of two infinities is
NaN; both refuse, saying which grade of which query and what to do instead.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterator

import pytest

import rankmeter
from rankmeter.errors import RankmeterError


@pytest.fixture(autouse=True)
def no_runtime_warnings() -> Iterator[None]:
    # An overflow is reported by the error, not by NumPy's RuntimeWarnings on stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


RUN = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}}


@pytest.mark.parametrize("metric", ["nDCG(gain=exp)@10", "DCG(gain=exp)", "nDCG(gain=exp)"])
def test_a_grade_whose_exp_gain_overflows_is_named(metric: str) -> None:
    qrels = {"1": {"a": 1, "b": 1100}, "2": {"c": 2}}
    with pytest.raises(
        RankmeterError,
        match="^" + re.escape(metric) + r": grade 1100 of query '1' has the gain 2\^1100 - 1, "
        r"beyond the largest float \(about 1\.8e308; gain=exp takes grades up to 1023\); use "
        r"gain=linear \(trec_eval's gain\) or smaller grades$",
    ):
        rankmeter.evaluate(qrels, RUN, [metric])


def test_grade_1024_is_the_first_that_overflows() -> None:
    ok = rankmeter.evaluate({"1": {"a": 1023}}, {"1": {"a": 1.0}}, ["nDCG(gain=exp)", "DCG"])
    assert ok.metrics["nDCG(gain=exp)"] == 1.0
    with pytest.raises(RankmeterError, match=r"grade 1024 of query '1' has the gain 2\^1024"):
        rankmeter.evaluate({"1": {"a": 1024}}, {"1": {"a": 1.0}}, ["nDCG(gain=exp)"])


def test_an_unretrieved_grade_overflows_the_ideal_ordering() -> None:
    # DCG@1 of the run is finite, but nDCG needs the ideal ordering, which holds grade 2000.
    qrels = {"1": {"a": 1, "z": 2000}}
    assert rankmeter.evaluate(qrels, {"1": {"a": 1.0}}, ["DCG(gain=exp)@1"]).metrics[
        "DCG(gain=exp)@1"
    ] == pytest.approx(1.0)
    with pytest.raises(RankmeterError, match=r"grade 2000 of query '1' has the gain 2\^2000"):
        rankmeter.evaluate(qrels, {"1": {"a": 1.0}}, ["nDCG(gain=exp)@1"])


def test_gains_that_add_up_past_the_largest_float_are_named() -> None:
    qrels = {"q": {"a": 1023, "b": 1023, "c": 1023}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    with pytest.raises(
        RankmeterError,
        match=r"^DCG\(gain=exp\): the gains of query 'q' \(grades up to 1023\) add up beyond "
        r"the largest float \(about 1\.8e308\); use gain=linear \(trec_eval's gain\) or smaller "
        r"grades$",
    ):
        rankmeter.evaluate(qrels, run, ["DCG(gain=exp)"])
    # Linear gains overflow only at absurd grades, and are named the same way.
    huge = {"q": {"a": 1.5e308, "b": 1.5e308}}
    with pytest.raises(RankmeterError, match=r"^nDCG: the gains of query 'q' \(grades up to"):
        rankmeter.evaluate(huge, run, ["nDCG"])


def test_large_finite_gains_stay_exact() -> None:
    # 2^1000 - 1 is finite: nDCG of the ideal order is 1, of the reverse order the exact ratio.
    qrels = {"q": {"a": 1000, "b": 999}}
    value = rankmeter.evaluate(qrels, {"q": {"b": 2.0, "a": 1.0}}, ["nDCG(gain=exp)"])
    expected = (2.0**999 + 2.0**1000 / math.log2(3)) / (2.0**1000 + 2.0**999 / math.log2(3))
    assert value.metrics["nDCG(gain=exp)"] == pytest.approx(expected, rel=1e-12)


def test_explain_and_compare_refuse_the_same_way() -> None:
    qrels = {"1": {"a": 1, "b": 1100}, "2": {"c": 2}}
    with pytest.raises(RankmeterError, match=r"grade 1100 of query '1' has the gain 2\^1100"):
        rankmeter.explain(qrels, RUN, "1", "nDCG(gain=exp)@10")
    with pytest.raises(RankmeterError, match=r"grade 1100 of query 'grades' has the gain 2\^"):
        rankmeter.explain_grades([1100, 0], "nDCG(gain=exp)@10")  # a ranking given by hand
    with pytest.raises(RankmeterError, match=r"grade 1100 of query '1' has the gain 2\^1100"):
        rankmeter.compare(qrels, {"A": RUN, "B": RUN}, ["nDCG(gain=exp)@10"], resamples=10)
