"""judgments.pool: depth-k pools known by hand, stratified sampling, Judged@k before and after."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from rankmeter import Qrels, Run, evaluate
from rankmeter.errors import PolicyError
from rankmeter.io import read_pool, write_trec_run
from rankmeter.judgments import pool
from rankmeter.report.pool import write_pool

# Ties as trec_eval breaks them: equal scores by doc id descending (byte order). In q1, run
# A's b and c tie at 2.0, so c is 2nd and b 3rd: at depth 2, c is pooled and b is not.
RUN_A = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}, "q2": {"x": 1.0}}, name="A")
RUN_B = Run.from_dict({"q1": {"c": 0.9, "e": 0.8, "a": 0.1}, "q2": {"y": 5.0, "z": 5.0}}, name="B")
# a is judged already; e's negative grade means judged-unjudged (trec_eval; Judged counts it as
# unjudged), so e still needs a judgment.
QRELS = {"q1": {"a": 1, "e": -1, "d": 0}}


def table(result: object) -> dict[tuple[str, str], dict[str, int]]:
    return {(i.query_id, i.doc_id): dict(i.runs) for i in result}  # type: ignore[attr-defined]


def test_the_pool_is_the_union_of_top_depth_minus_judged_pairs() -> None:
    result = pool([RUN_A, RUN_B], depth=2, qrels=QRELS)
    assert table(result) == {
        ("q1", "c"): {"A": 2, "B": 1},  # two runs share c: one item with both ranks
        ("q1", "e"): {"B": 2},
        ("q2", "x"): {"A": 1},
        ("q2", "z"): {"B": 1},  # z before y: the tie goes to the larger doc id
        ("q2", "y"): {"B": 2},
    }
    assert [(i.query_id, i.doc_id, i.best_rank) for i in result] == [
        ("q1", "c", 1),
        ("q1", "e", 2),
        ("q2", "x", 1),
        ("q2", "z", 1),
        ("q2", "y", 2),
    ]
    assert {i.inclusion_probability for i in result} == {1.0}
    assert len(result) == 5 and result.queries == ("q1", "q2") and result.runs == ("A", "B")
    assert not result.sampled


def test_without_qrels_everything_in_the_top_depth_is_pooled() -> None:
    result = pool([RUN_A, RUN_B], depth=3)
    assert sorted(k for k in table(result) if k[0] == "q1") == [
        ("q1", d) for d in ("a", "b", "c", "e")
    ]
    assert result.judged["A"].now == 0.0 and result.judged["A"].after == 1.0


def test_the_rank_order_is_the_library_s_under_either_tie_policy() -> None:
    tied = Run.from_dict({"q1": {"b": 1.0, "a": 1.0, "c": 1.0}}, name="T")
    assert [i.doc_id for i in pool(tied, depth=1)] == ["c"]
    assert [i.doc_id for i in pool(tied, depth=1, ties="input")] == ["b"]
    assert [i.doc_id for i in pool(tied, depth=1)] == tied.head(1).ranking("q1")


def test_judged_at_depth_now_and_after_equal_evaluate_on_the_qrels_extended_by_the_pool() -> None:
    result = pool([RUN_A, RUN_B], depth=2, qrels=QRELS)
    # By hand: A's top 2 is a (judged), c in q1 and x (q2 has no judgments) -> (1/2 + 0) / 2;
    # B's is c, e (e is judged-unjudged) and z, y -> 0.
    assert result.judged["A"].now == 0.25 and result.judged["B"].now == 0.0
    assert result.judged["A"].queries == 2
    extended = dict(QRELS["q1"]) | {i.doc_id: 0 for i in result if i.query_id == "q1"}
    extended_qrels = {"q1": extended, "q2": {i.doc_id: 0 for i in result if i.query_id == "q2"}}
    for run in (RUN_A, RUN_B):
        after = evaluate(extended_qrels, run, ["Judged@2"]).metrics["Judged@2"]
        assert result.judged[run.name].after == after == 1.0
    # Restricted to the judged queries, "now" is evaluate's own number.
    judged_only = pool([RUN_A, RUN_B], depth=2, qrels=QRELS, queries="qrels")
    assert judged_only.queries == ("q1",)
    assert judged_only.judged["A"].now == evaluate(QRELS, RUN_A, ["Judged@2"])["Judged@2"]
    assert judged_only.metric == "Judged@2"


def test_a_query_judged_to_the_depth_already_has_no_items_and_counts_as_judged() -> None:
    qrels = {"q1": {"a": 1, "c": 0}, "q2": {"x": 2}}
    result = pool(RUN_A, depth=2, qrels=qrels)
    assert len(result) == 0
    assert result.items_per_query == {"q1": 0, "q2": 0}
    assert result.judged["A"].now == result.judged["A"].after == 1.0


def test_runs_are_read_from_files_and_named_apart(tmp_path: Path) -> None:
    first, second = tmp_path / "a.run", tmp_path / "b.run"
    write_trec_run(RUN_A, first)
    write_trec_run(RUN_A.renamed("A"), second)
    result = pool([first, second], depth=1)
    assert result.runs == (str(first), str(second))
    assert dict(next(iter(result)).runs) == {str(first): 1, str(second): 1}
    named = pool({"lexical": first, "dense": RUN_B}, depth=1)
    assert named.runs == ("lexical", "dense")


def test_to_dict_holds_the_summary_and_the_items() -> None:
    result = pool([RUN_A, RUN_B], depth=2, qrels=QRELS)
    summary = result.to_dict(items=False)
    assert summary["depth"] == 2 and summary["metric"] == "Judged@2"
    assert summary["n_items"] == 5 and summary["n_queries"] == 2 and not summary["sampled"]
    assert summary["n_candidates"] == 5 and summary["n_judged"] == 1  # a; e's grade is -1
    assert summary["items_per_query"] == {"min": 2, "median": 2.5, "max": 3}
    assert summary["judged"]["A"] == {"queries": 2, "now": 0.25, "after": 1.0}
    assert "items" not in summary
    assert result.to_dict()["items"][0] == next(iter(result)).to_dict()


def test_the_pool_file_round_trips(tmp_path: Path) -> None:
    result = pool([RUN_A, RUN_B], depth=2, qrels=QRELS)
    write_pool(result, tmp_path / "pool.jsonl")
    assert read_pool(tmp_path / "pool.jsonl") == result.items


# -- sampling ---------------------------------------------------------------------------------
# One query, 40 documents ranked 1..40 by one run: strata 1-5, 6-10, 11-20, 21-40 hold
# 5, 5, 10 and 20 documents.
DEEP = Run.from_dict({"q": {f"d{r:02d}": 100.0 - r for r in range(1, 41)}}, name="deep")


def stratum(rank: int) -> int:
    return 0 if rank <= 5 else 1 if rank <= 10 else 2 if rank <= 20 else 3


def test_sampling_keeps_the_top_strata_and_one_item_of_each_stratum_below() -> None:
    result = pool(DEEP, depth=40, max_per_query=12, seed=3)
    assert len(result) == 12 and result.sampled and result.n_candidates == 40
    per_stratum = Counter(stratum(i.best_rank) for i in result)
    # Top-down: 1-5 and 6-10 whole; one of 11-20 and one of 21-40 (one kept for each stratum
    # below, so that every document has a chance).
    assert per_stratum == {0: 5, 1: 5, 2: 1, 3: 1}
    probabilities = {stratum(i.best_rank): i.inclusion_probability for i in result}
    assert probabilities == {0: 1.0, 1: 1.0, 2: 1 / 10, 3: 1 / 20}
    # Horvitz-Thompson: the weighted count of the sample is the size of the whole pool.
    assert math.isclose(sum(1 / i.inclusion_probability for i in result), 40)


def test_a_budget_below_the_number_of_strata_goes_to_the_top() -> None:
    result = pool(DEEP, depth=40, max_per_query=3, seed=0)
    assert len(result) == 3
    assert {i.best_rank for i in result} <= {1, 2, 3, 4, 5}
    assert {i.inclusion_probability for i in result} == {3 / 5}


def test_sampling_is_reproducible_with_a_seed_and_varies_between_seeds() -> None:
    def drawn(seed: int) -> list[str]:
        return [i.doc_id for i in pool([DEEP, RUN_B], depth=40, max_per_query=13, seed=seed)]

    assert drawn(7) == drawn(7)
    assert len({tuple(drawn(seed)) for seed in range(10)}) > 1
    # A query's sample does not depend on the other queries pooled with it.
    alone = [i.doc_id for i in pool(DEEP, depth=40, max_per_query=13, seed=7)]
    assert [d for d in drawn(7) if d.startswith("d")] == alone


def test_max_per_query_is_respected_in_every_query() -> None:
    runs = [
        Run.from_dict({f"q{q}": {f"d{d}": float(d * q % 17) for d in range(30)}}, name="r1")
        for q in range(5)
    ]
    merged = Run.from_dict({k: v for r in runs for k, v in r.to_dict().items()}, name="r")
    other = merged.with_ties("input").renamed("s")
    result = pool([merged, other], depth=25, max_per_query=7, seed=1)
    assert set(result.items_per_query.values()) == {7}
    assert max(Counter(i.query_id for i in result).values()) == 7


def test_inclusion_probabilities_match_how_often_items_are_drawn() -> None:
    seeds = 2000
    counts: Counter[str] = Counter()
    stated: dict[str, float] = {}
    for seed in range(seeds):
        for item in pool(DEEP, depth=40, max_per_query=16, seed=seed):
            counts[item.doc_id] += 1
            stated[item.doc_id] = item.inclusion_probability
    # Strata 5, 5, 10, 20 with 16 slots: 5 + 5 + min(10, 16 - 10 - 1) = 5 + 1: 1, 1, 0.5, 0.05
    assert {stratum(int(d[1:])): p for d, p in stated.items()} == {0: 1, 1: 1, 2: 0.5, 3: 0.05}
    for doc, p in stated.items():
        spread = 4 * math.sqrt(p * (1 - p) / seeds)
        assert abs(counts[doc] / seeds - p) <= spread + 1e-12, (doc, counts[doc], p)
    assert len(counts) == 40  # every document was drawn under some seed


def test_a_query_within_the_budget_is_not_sampled() -> None:
    result = pool([RUN_A, RUN_B], depth=2, qrels=QRELS, max_per_query=3)
    assert not result.sampled and len(result) == 5


def test_judged_after_a_sampled_pool_is_evaluate_s_on_the_extended_qrels() -> None:
    result = pool([DEEP], depth=20, max_per_query=8, seed=2)
    extended = {"q": {i.doc_id: 0 for i in result}}
    assert result.judged["deep"].after == evaluate(extended, DEEP, ["Judged@20"])["Judged@20"]
    assert result.judged["deep"].after == 8 / 20


# -- parameters -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"depth": 0}, r"depth=0 must be an integer >= 1"),
        ({"depth": True}, r"depth=True must be an integer >= 1"),
        ({"max_per_query": 0}, r"max_per_query=0 must be an integer >= 1"),
        ({"seed": -1}, r"seed=-1 must be an integer >= 0"),
        ({"seed": 1.5}, r"seed=1.5 must be an integer >= 0"),
        ({"queries": "all"}, r"queries='all' must be one of 'runs', 'qrels'"),
        ({"queries": "qrels"}, r"queries='qrels' needs qrels"),
        ({"ties": "random"}, r"ties='random' must be one of 'trec_eval', 'input'"),
    ],
)
def test_bad_parameters_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        pool(RUN_A, **kwargs)  # type: ignore[arg-type]


def test_no_runs_is_an_error() -> None:
    with pytest.raises(PolicyError, match="no runs given"):
        pool([])


def test_qrels_sharing_no_query_with_the_runs_leave_nothing_to_pool() -> None:
    with pytest.raises(PolicyError, match=r"no query to pool: none of the runs' 2 queries"):
        pool(RUN_A, qrels=Qrels.from_dict({"q9": {"a": 1}}), queries="qrels")
