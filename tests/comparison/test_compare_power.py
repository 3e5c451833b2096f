"""compare_power: `rankmeter power` as a Python call (both runs on every judged query, each
metric's differences analysed by stats.power, the correction over the metrics asked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankmeter.comparison import compare_power
from rankmeter.data import Qrels, Run
from rankmeter.errors import PolicyError
from rankmeter.evaluation import evaluate
from rankmeter.stats import power


def _data() -> tuple[Qrels, dict[str, Run]]:
    rng = np.random.default_rng(7)
    qrels = Qrels.from_dict({f"q{i}": {"d1": 1, "d2": int(i % 2)} for i in range(30)})
    base = Run.from_dict(
        {f"q{i}": {f"d{j}": float(rng.random()) for j in range(1, 6)} for i in range(30)}
    )
    # The new system answers only 25 of the 30 judged queries.
    new = Run.from_dict(
        {f"q{i}": {f"d{j}": float(rng.random()) + (j < 3) for j in range(1, 6)} for i in range(25)}
    )
    return qrels, {"base": base, "new": new}


def test_each_metric_is_the_power_of_its_differences_on_every_judged_query() -> None:
    qrels, runs = _data()
    result = compare_power(qrels, runs, ["RR", "P@5"], alpha=0.1, seed=3)
    assert (result.baseline, result.system, list(result.analyses)) == ("base", "new", ["RR", "P@5"])
    scores = evaluate(qrels, runs, ["RR", "P@5"], include_missing=True)
    for label in ("RR", "P@5"):
        before = dict(
            zip(scores["base"].per_query.query_ids, scores["base"].per_query[label], strict=True)
        )
        after = dict(
            zip(scores["new"].per_query.query_ids, scores["new"].per_query[label], strict=True)
        )
        diffs = np.array([after[q] - before[q] for q in scores["new"].per_query.query_ids])
        expected = power(diffs, alpha=0.1, correction="holm", comparisons=2, seed=3)
        assert result.analyses[label] == expected
        assert result.analyses[label].n == 30
    assert result.notes == (
        "queries: every judged query (30); a run without results for one scores 0 on it "
        "(trec_eval -c); without results: base 0, new 5",
    )
    assert result.to_dict()["metrics"]["RR"] == result.analyses["RR"].to_dict()


def test_the_default_metrics_are_compares_and_two_runs_are_needed() -> None:
    qrels, runs = _data()
    assert list(compare_power(qrels, runs).analyses) == ["nDCG@10", "P@10", "R@100", "RR", "AP"]
    with pytest.raises(PolicyError, match="power compares two runs"):
        compare_power(qrels, {"base": runs["base"]})


def test_one_metric_may_be_a_text_and_runs_paths_or_a_list(tmp_path: Path) -> None:
    from rankmeter.io import write_trec_qrels, write_trec_run

    qrels, runs = _data()
    expected = compare_power(qrels, runs, ["AP"])
    assert list(compare_power(qrels, runs, "AP").analyses) == ["AP"]
    write_trec_qrels(qrels, tmp_path / "q.trec")
    for name, run in runs.items():
        write_trec_run(run.renamed(name), tmp_path / f"{name}.run")
    paths = [str(tmp_path / "base.run"), tmp_path / "new.run"]
    from_files = compare_power(str(tmp_path / "q.trec"), paths, "AP")
    assert (from_files.baseline, from_files.system) == ("base", "new")
    assert from_files.analyses["AP"].n == expected.analyses["AP"].n
    listed = compare_power(qrels, [runs["base"].renamed("base"), runs["new"].renamed("new")], "AP")
    assert listed.analyses == expected.analyses
    with pytest.raises(PolicyError, match="power compares two runs"):
        compare_power(qrels, str(tmp_path / "base.run"))
    with pytest.raises(PolicyError, match="metrics= must be a metric name"):
        compare_power(qrels, runs, 5)  # type: ignore[arg-type]


@pytest.mark.parametrize("format", ["json", "markdown", "table"])
def test_the_result_renders_as_its_power_report(tmp_path: Path, format: str) -> None:
    from rankmeter.report import render
    from rankmeter.report.power import PowerReport

    qrels, runs = _data()
    result = compare_power(qrels, runs, ["RR", "P@5"])
    render(result, format, str(tmp_path / "result.out"))
    report = PowerReport(result.analyses, result.baseline, result.system, list(result.notes))
    render(report, format, str(tmp_path / "report.out"))
    assert (tmp_path / "result.out").read_text() == (tmp_path / "report.out").read_text()
