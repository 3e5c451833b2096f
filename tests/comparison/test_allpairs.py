"""compare_all (issue 13, "All systems at once"): compare's queries and scores, every pair by the
stats layer, errors in one line, and on Cranfield the two-way Tukey HSD against statsmodels'
one-way ``pairwise_tukeyhsd`` (which ignores the pairing by query, as ranx's does)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from rankmeter import compare
from rankmeter.comparison import AllPairsComparison, compare_all
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.stats import all_pairs

from ._helpers import collection

METRICS = ["nDCG@10", "P@5", "AP"]


@pytest.fixture(scope="module")
def data() -> tuple[dict, dict[str, dict]]:
    qrels, runs = collection(n_queries=40, seed=5)
    # One system answers only part of the queries: its missing queries score 0, as in compare.
    runs["partial"] = {q: r for i, (q, r) in enumerate(runs["better"].items()) if i % 4}
    return qrels, runs


def test_the_scores_and_means_are_compares(data: tuple[dict, dict[str, dict]]) -> None:
    qrels, runs = data
    result = compare_all(qrels, runs, METRICS)
    reference = compare(qrels, runs, METRICS, resamples=100)
    assert result.query_ids == reference.query_ids and result.n_queries == 40
    assert result.filled == {"base": 0, "better": 0, "noisy": 0, "partial": 10}
    for metric in METRICS:
        analysis = result.analysis(metric)
        for j, name in enumerate(result.systems):
            expected = reference.scores[metric][name]
            assert result.scores[metric][name].tobytes() == expected.tobytes()
            assert analysis.means[j] == pytest.approx(float(expected.mean()), rel=1e-12)
        matrix = np.column_stack([reference.scores[metric][n] for n in result.systems])
        assert analysis == all_pairs(matrix, result.systems)


def test_the_randomised_method_and_its_settings(data: tuple[dict, dict[str, dict]]) -> None:
    qrels, runs = data
    result = compare_all(qrels, runs, "nDCG@10", method="randomised-tukey", resamples=500, seed=4)
    analysis = result.analysis("nDCG@10")
    assert (analysis.method, analysis.resamples, analysis.seed) == ("randomised-tukey", 500, 4)
    assert result.settings.to_dict()["method"] == "randomised-tukey"
    better_noisy = analysis.pair("better", "noisy")
    assert better_noisy.significant and better_noisy.p_value == pytest.approx(1 / 501)
    data_dict = result.to_dict(per_query=True)
    assert data_dict["analyses"]["nDCG@10"]["letters"] == dict(
        zip(analysis.systems, analysis.letters, strict=True)
    )
    assert len(data_dict["per_query"]["nDCG@10"]["base"]) == 40


def test_adding_a_system_changes_no_mean_and_no_query(data: tuple[dict, dict[str, dict]]) -> None:
    qrels, runs = data
    three = compare_all(qrels, {k: runs[k] for k in ("base", "better", "noisy")}, "AP")
    four = compare_all(qrels, runs, "AP")
    assert three.query_ids == four.query_ids
    assert three.analysis("AP").means == four.analysis("AP").means[:3]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 2}, r"an all-pairs comparison needs 3 runs or more; got 2 \(compare two runs"),
        ({"method": "tukey-hsd"}, r"method='tukey-hsd' must be one of 'tukey', 'randomised-tukey'"),
        (
            {"resamples": 10},
            r"resamples=10 must be an integer from 20 to 10,000,000 \(random permutations",
        ),
        ({"alpha": 0}, r"alpha=0 must be"),
        ({"seed": -1}, r"seed=-1 must be an integer >= 0"),
        ({"metrics": "nDCG@x"}, r"'nDCG@x'"),
    ],
)
def test_bad_arguments_are_one_clear_error(
    data: tuple[dict, dict[str, dict]], kwargs: dict[str, object], message: str
) -> None:
    qrels, runs = data
    given: dict[str, object] = {"metrics": "AP", **kwargs}
    if "runs" in given:
        runs = dict(list(runs.items())[: int(given.pop("runs"))])  # type: ignore[call-overload]
    with pytest.raises(RankmeterError, match=message):
        compare_all(qrels, runs, **given)  # type: ignore[arg-type]


def test_an_unknown_metric_of_a_result(data: tuple[dict, dict[str, dict]]) -> None:
    qrels, runs = data
    result = compare_all(qrels, runs, "AP")
    with pytest.raises(PolicyError, match=r"no metric 'P@5' in this comparison; metrics: AP"):
        result.analysis("P@5")


# --- Cranfield: the pairing matters ---------------------------------------------------------


@pytest.fixture(scope="module")
def cranfield_result(cranfield: Path) -> AllPairsComparison:
    from _allpairs_docs import cranfield_runs

    runs = cranfield_runs(cranfield)
    return compare_all(cranfield / "qrels.trec", list(runs), "nDCG@10")


def test_on_cranfield_a_one_way_tukey_differs_from_the_two_way_one(
    cranfield_result: AllPairsComparison,
) -> None:
    """statsmodels' pairwise_tukeyhsd treats each system's 225 scores as independent samples
    (one-way): the queries' difficulty stays in its residual. The two-way model takes it out:
    the same pair's p-value is thousands of times smaller and the HSD half as large."""
    multicomp = pytest.importorskip("statsmodels.stats.multicomp")
    result = cranfield_result
    analysis = result.analysis("nDCG@10")
    assert result.n_queries == 225 and result.systems == ("overlap", "idf", "bm25")
    scores = np.column_stack([result.scores["nDCG@10"][n] for n in result.systems])
    groups = np.repeat(result.systems, scores.shape[0])
    one_way = multicomp.pairwise_tukeyhsd(scores.T.ravel(), groups, alpha=0.05)
    # statsmodels orders the groups by name: bm25-idf, bm25-overlap, idf-overlap.
    one_way_p = dict(zip(["bm25-idf", "bm25-overlap", "idf-overlap"], one_way.pvalues, strict=True))
    two_way = analysis.pair("idf", "overlap")
    assert one_way_p["idf-overlap"] == pytest.approx(0.0486, abs=5e-5)  # as docs/compare.md says
    assert two_way.p_value < 1e-4 < one_way_p["idf-overlap"] / 100
    one_way_hsd = float(np.abs(one_way.confint[2] - one_way.meandiffs[2]).max())
    assert one_way_hsd == pytest.approx(0.052, abs=5e-4)
    assert analysis.hsd == pytest.approx(0.0253, abs=5e-5)
    # The one-way residual mean square is the two-way one plus the queries' share of it.
    one_way_ms = (analysis.anova.ss_queries + analysis.anova.ss_residual) / (
        analysis.anova.df_queries + analysis.anova.df_residual
    )
    assert one_way_ms > 2 * analysis.anova.ms_residual
    assert math.isclose(
        one_way_hsd,
        float(
            scipy_stats.studentized_range.ppf(0.95, 3, 3 * 225 - 3) * math.sqrt(one_way_ms / 225)
        ),
        rel_tol=1e-3,
    )
