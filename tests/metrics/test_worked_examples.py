"""The lesson's worked examples, evaluated through ``rankmeter.evaluate`` on small dicts."""

from __future__ import annotations

from math import log2

import pytest

import rankmeter
import rankmeter.metrics

from ._helpers import per_query, ranking


def test_precision_of_the_returned_list_is_6_of_8() -> None:
    # 8 results, 6 of them relevant (the query has 10 relevant documents in all).
    qrels = {"q": {f"r{i}": 1 for i in range(10)} | {"n0": 0, "n1": 0}}
    run = {"q": ranking("r0", "n0", "r1", "r2", "n1", "r3", "r4", "r5")}
    values = per_query(qrels, run, ["P", "NumRet", "NumRelRet"])["q"]
    assert values == {"P": 0.75, "NumRet": 8, "NumRelRet": 6}


def test_recall_of_the_returned_list_is_6_of_10() -> None:
    qrels = {"q": {f"r{i}": 1 for i in range(10)} | {"n0": 0, "n1": 0}}
    run = {"q": ranking("r0", "n0", "r1", "r2", "n1", "r3", "r4", "r5")}
    assert per_query(qrels, run, "R")["q"]["R"] == pytest.approx(0.6, abs=1e-12)


def test_recall_at_10_is_7_of_10() -> None:
    # 7 of the 10 relevant documents in the top 10, two more further down.
    qrels = {"q": {f"r{i}": 1 for i in range(10)}}
    top10 = ["r0", "r1", "x0", "r2", "r3", "x1", "r4", "r5", "x2", "r6"]
    run = {"q": ranking(*top10, "r7", "r8")}
    values = per_query(qrels, run, ["R@10", "R"])["q"]
    assert values["R@10"] == pytest.approx(0.7, abs=1e-12)
    assert values["R"] == pytest.approx(0.9, abs=1e-12)


# Grades 3, 0, 2 at ranks 1, 2, 3; exp gain 2^g - 1, discount 1 / log2(rank + 1).
GRADES = {"q": {"a": 3, "b": 0, "c": 2}}


def test_dcg_exp_of_grades_3_0_2_is_8_5() -> None:
    # 7 / log2(2) + 0 / log2(3) + 3 / log2(4) = 7 + 0 + 1.5 = 8.5
    values = per_query(GRADES, {"q": ranking("a", "b", "c")}, "DCG(gain=exp)")["q"]
    assert values["DCG(gain=exp)"] == pytest.approx(8.5, abs=1e-12)


def test_ideal_dcg_exp_is_8_89() -> None:
    # The ideal order is 3, 2, 0: 7 + 3 / log2(3) = 8.8928...
    values = per_query(GRADES, {"q": ranking("a", "c", "b")}, "DCG(gain=exp)")["q"]
    assert round(values["DCG(gain=exp)"], 2) == 8.89
    assert values["DCG(gain=exp)"] == pytest.approx(7 + 3 / log2(3), abs=1e-12)


def test_ndcg_exp_is_0_96_and_swapping_ranks_2_and_3_gives_1() -> None:
    metric = "nDCG(gain=exp)"
    as_given = per_query(GRADES, {"q": ranking("a", "b", "c")}, metric)["q"][metric]
    assert round(as_given, 2) == 0.96
    assert as_given == pytest.approx(8.5 / (7 + 3 / log2(3)), abs=1e-12)
    swapped = per_query(GRADES, {"q": ranking("a", "c", "b")}, metric)["q"][metric]
    assert swapped == pytest.approx(1.0, abs=1e-12)


def _first_relevant_at(ranks: list[int]) -> tuple[dict, dict]:
    """One query per rank, its only relevant document at that rank."""
    qrels, run = {}, {}
    for i, rank in enumerate(ranks):
        q = f"q{i}"
        qrels[q] = {"hit": 1}
        run[q] = ranking(*[f"miss{j}" for j in range(1, rank)], "hit")
    return qrels, run


def test_mrr_of_ranks_1_3_10_is_0_48() -> None:
    # (1 + 1/3 + 1/10) / 3 = 0.4777...
    qrels, run = _first_relevant_at([1, 3, 10])
    mrr = rankmeter.evaluate(qrels, run, "MRR").metrics["RR"]
    assert round(mrr, 2) == 0.48
    assert mrr == pytest.approx((1 + 1 / 3 + 1 / 10) / 3, abs=1e-12)


def test_mrr_rank_1_twice_and_rank_20_four_times_is_below_always_rank_2() -> None:
    # (2 * 1 + 4 * 1/20) / 6 = 2.2 / 6 = 0.3666...; always rank 2: 1/2.
    qrels, run = _first_relevant_at([1, 1, 20, 20, 20, 20])
    mixed = rankmeter.evaluate(qrels, run, "MRR").metrics["RR"]
    assert round(mixed, 2) == 0.37
    assert mixed == pytest.approx(2.2 / 6, abs=1e-12)
    qrels, run = _first_relevant_at([2] * 6)
    steady = rankmeter.evaluate(qrels, run, "MRR").metrics["RR"]
    assert steady == pytest.approx(0.5, abs=1e-12)
    assert round(steady, 2) == 0.50
    assert mixed < steady


# -- the specs' own worked examples (docs/metrics.md) ---------------------------------------------


def _decimals(text: str) -> int:
    return len(text.partition(".")[2])


@pytest.mark.parametrize(
    "spec",
    [spec for spec in rankmeter.metrics.SPECS if spec.example is not None],
    ids=lambda spec: spec.name,
)
def test_every_spec_example_is_what_evaluate_computes(spec: rankmeter.metrics.MetricSpec) -> None:
    example = spec.example
    assert example is not None
    assert rankmeter.metrics.parse_metric(example.metric).spec is spec
    qrels = {"q": dict(example.judgments)}
    n = len(example.ranking)
    run = {"q": {doc: float(n - i) for i, doc in enumerate(example.ranking)}}
    value = rankmeter.evaluate(qrels, run, example.metric).per_query.to_dict()["q"][example.metric]
    assert round(value, _decimals(example.value)) == float(example.value)


def test_the_example_check_is_not_blind() -> None:
    from rankmeter.metrics._spec import WorkedExample

    wrong = WorkedExample({"a": 1}, ("b", "a"), "RR", "0.25", "first relevant at rank 2")
    value = rankmeter.evaluate({"q": dict(wrong.judgments)}, {"q": {"b": 2.0, "a": 1.0}}, "RR")
    assert round(value.per_query.to_dict()["q"]["RR"], _decimals(wrong.value)) != float(wrong.value)
