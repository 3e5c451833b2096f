"""compare(..., values=...): per-query values computed elsewhere (on Spark, by
rankmeter.engines.spark.evaluate) give the comparison the in-process kernels give."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import PolicyError

QRELS = {f"q{i}": {"a": 1, "b": 2, "c": 0} for i in range(12)}
RUNS = {
    "base": {f"q{i}": {"c": 3.0, "a": 2.0, "x": 1.0} for i in range(12)},
    "new": {f"q{i}": {"b": 3.0, "a": 2.0} for i in range(0, 12, 2)},  # odd queries missing
}
METRICS = ["AP", "nDCG@10", "P@2"]


@pytest.mark.parametrize("include_missing", [True, False])
def test_given_values_compare_as_computed_ones(include_missing: bool) -> None:
    values = rankmeter.evaluate(QRELS, RUNS, METRICS, include_missing=True, rel=2)
    options = {"resamples": 2000, "include_missing": include_missing, "rel": 2}
    got = rankmeter.compare(QRELS, RUNS, METRICS, values=values, **options)
    expected = rankmeter.compare(QRELS, RUNS, METRICS, **options)
    for field in dataclasses.fields(expected):
        if field.name != "scores":
            assert repr(getattr(got, field.name)) == repr(getattr(expected, field.name)), field.name
    for metric in METRICS:
        for run in RUNS:
            np.testing.assert_array_equal(got.scores[metric][run], expected.scores[metric][run])


def test_values_lacking_a_run_a_query_or_a_metric_are_refused() -> None:
    whole = rankmeter.evaluate(QRELS, RUNS, METRICS, include_missing=True)
    with pytest.raises(PolicyError, match=r"values has no run 'new' \(it has base\)"):
        rankmeter.compare(QRELS, RUNS, METRICS, values={"base": whole["base"]}, resamples=2000)
    answered = rankmeter.evaluate(QRELS, RUNS, METRICS)
    with pytest.raises(PolicyError, match=r"run 'new' lack 6 compared queries.*include_missing"):
        rankmeter.compare(QRELS, RUNS, METRICS, values=answered, resamples=2000)
    with pytest.raises(PolicyError, match=r"values of run 'base' lack the metric RR"):
        rankmeter.compare(QRELS, RUNS, [*METRICS, "RR"], values=whole, resamples=2000)


@pytest.mark.parametrize("include_missing", [True, False])
def test_given_runs_compare_as_runs_read_here(include_missing: bool) -> None:
    # compare --engine spark: the runs stay where they are; their values (with compare's own
    # metrics: Judged@k, Success@k, the curves' cutoffs) and facts are given, and only the
    # worst queries' rows are asked for.
    from rankmeter.comparison import GivenRun, given_metrics
    from rankmeter.io import as_run

    options = {"resamples": 2000, "include_missing": include_missing, "rel": 2, "cutoff": 1}
    options |= {"baseline": "new", "worst": 2}  # "base" loses on the even queries
    extra = given_metrics(METRICS, rel=2, cutoff=1)
    values = rankmeter.evaluate(QRELS, RUNS, METRICS + extra, include_missing=True, rel=2)
    asked: list[tuple[str, list[str]]] = []

    def given(name: str) -> GivenRun:
        run = as_run(RUNS[name], name=name)

        def rows(queries: list[str]) -> rankmeter.Run:
            asked.append((name, list(queries)))
            return run.subset(queries)

        depth = int(np.diff(run.offsets).max())
        return GivenRun(name, values[name], run.query_ids, rows, depth)

    got = rankmeter.compare(QRELS, [given("base"), given("new")], METRICS, **options)
    expected = rankmeter.compare(QRELS, RUNS, METRICS, **options)
    assert sorted(asked) == [("base", ["q0", "q10"]), ("new", ["q0", "q10"])], asked
    for field in dataclasses.fields(expected):
        if field.name not in ("scores", "curves", "facts"):
            assert repr(getattr(got, field.name)) == repr(getattr(expected, field.name)), field.name
    assert got.facts == expected.facts
    for family, by_system in expected.curves.items():
        for run, curve in by_system.items():
            np.testing.assert_array_equal(got.curves[family][run], curve)
    for metric in METRICS:
        for run in RUNS:
            np.testing.assert_array_equal(got.scores[metric][run], expected.scores[metric][run])


def test_given_runs_are_not_mixed_with_runs() -> None:
    from rankmeter.comparison import GivenRun

    values = rankmeter.evaluate(QRELS, RUNS, METRICS, include_missing=True)
    given = GivenRun("new", values["new"], (), lambda queries: rankmeter.Run.from_dict({}), 1)
    with pytest.raises(PolicyError, match=r"give every run as a GivenRun, or none"):
        rankmeter.compare(QRELS, [RUNS["base"], given], METRICS, resamples=2000)
