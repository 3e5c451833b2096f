"""Two-stage pipelines: Recall@pool, the reranked pool, and the ceiling (checked by brute force
over every reordering of a small pool)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pytest

from rankmeter import PolicyError, RankmeterError, Run, evaluate
from rankmeter.vector.pipeline import TwoStage, cross_encoder, two_stage

QRELS = {"q1": {"a": 1, "c": 2, "e": 1}, "q2": {"x": 3, "y": 0}}
RETRIEVER = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5},
    "q2": {"y": 0.9, "x": 0.8, "z": 0.7},
    "q9": {"a": 1.0},  # not judged: left out of every stage
}
RERANKED = {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}, "q2": {"x": 2.0, "z": 1.0, "y": 0.5}}


def dcg(grades: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(grades))


def test_hand_computed_example() -> None:
    result = two_stage(QRELS, RETRIEVER, RERANKED, pool=3, metrics=["nDCG@3", "RR"])
    assert isinstance(result, TwoStage)
    assert result.pool == 3 and result.n_queries == 2
    assert [str(m) for m in result.retriever.measures] == ["R@3", "nDCG@3", "RR"]
    # The pools: q1 {a, b, c} holds 2 of its 3 relevant documents; q2 {y, x, z} holds x.
    for stage in result.stages.values():
        assert stage.metrics["R@3"] == pytest.approx((2 / 3 + 1) / 2)
    ideal_q1 = dcg([2, 1, 1])
    retriever_q1 = dcg([1, 0, 2]) / ideal_q1
    reranked_q1 = dcg([2, 0, 1]) / ideal_q1
    ceiling_q1 = dcg([2, 1, 0]) / ideal_q1
    # q2: the retriever puts y (grade 0) above x (3); the reranker and the ceiling put x first.
    retriever_q2 = dcg([0, 3]) / dcg([3])
    per_query = {k: v.per_query.to_dict() for k, v in result.stages.items()}
    assert per_query["retriever"]["q1"]["nDCG@3"] == pytest.approx(retriever_q1)
    assert per_query["reranked"]["q1"]["nDCG@3"] == pytest.approx(reranked_q1)
    assert per_query["ceiling"]["q1"]["nDCG@3"] == pytest.approx(ceiling_q1)
    assert per_query["retriever"]["q2"]["nDCG@3"] == pytest.approx(retriever_q2)
    assert per_query["reranked"]["q2"]["nDCG@3"] == pytest.approx(1.0)
    assert per_query["ceiling"]["q2"]["nDCG@3"] == pytest.approx(1.0)
    assert result.reranked.metrics["RR"] == pytest.approx(1.0)
    assert result.retriever.metrics["RR"] == pytest.approx((1 + 1 / 2) / 2)
    assert (result.outside_pool, result.unscored) == (0, 0)


def test_to_dict_and_to_pandas() -> None:
    result = two_stage(QRELS, RETRIEVER, RERANKED, pool=3)
    payload = result.to_dict()
    # ("notes" is new with issue 9: a cutoff deeper than the pool is said in every format;
    # "queries" and "unanswered" with issue 14: every judged query counts, 0 if unanswered.)
    assert list(payload) == [
        "pool", "n_queries", "queries", "unanswered", "stages", "outside_pool", "unscored",
        "notes",
    ]  # fmt: skip
    assert payload["unanswered"] == []
    assert list(payload["stages"]) == ["retriever", "reranked", "ceiling"]
    assert payload["stages"]["ceiling"] == {"metrics": dict(result.ceiling.metrics)}
    assert list(payload["stages"]["retriever"]["metrics"]) == ["R@3", "nDCG@10"]
    assert set(result.to_dict(per_query=True)["stages"]["reranked"]["per_query"]) == {"q1", "q2"}
    frame = result.to_pandas()
    assert list(frame.index) == ["retriever", "reranked", "ceiling"]
    assert list(frame.columns) == ["R@3", "nDCG@10"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.pool = 5  # type: ignore[misc]
    assert "TwoStage(pool=3, n_queries=2" in repr(result)


def test_recall_at_pool_counts_only_the_pool() -> None:
    for pool, expected in [(1, (1 / 3 + 0) / 2), (2, (1 / 3 + 1) / 2), (5, (1 + 1) / 2)]:
        result = two_stage(QRELS, RETRIEVER, RETRIEVER, pool=pool)
        assert result.retriever.metrics[f"R@{pool}"] == pytest.approx(expected)


def test_reranked_run_is_restricted_to_the_pool() -> None:
    # f is outside q1's pool (a, b, c); b is in it but the reranked run lacks it; q2 is absent.
    reranked = {"q1": {"f": 9.0, "c": 3.0, "a": 1.0}}
    result = two_stage(QRELS, RETRIEVER, reranked, pool=3)
    assert result.outside_pool == 1
    assert result.unscored == 1 + 3  # b of q1, and q2's whole pool
    assert result.reranked.n_queries == 2  # q2 scores 0 there
    assert result.reranked.per_query.to_dict()["q2"]["nDCG@10"] == 0.0
    assert result.reranked.per_query.to_dict()["q1"]["R@3"] == pytest.approx(2 / 3)


def test_a_reranked_run_outside_the_pool_is_an_error() -> None:
    with pytest.raises(RankmeterError, match="holds none of the retriever's top results"):
        two_stage(QRELS, RETRIEVER, {"q1": {"zz": 1.0}}, pool=3)


def test_no_common_queries_is_an_error() -> None:
    with pytest.raises(RankmeterError, match="has no query in common with the qrels"):
        two_stage({"other": {"a": 1}}, RETRIEVER, RERANKED, pool=3)


# -- the ceiling ------------------------------------------------------------------------------
def test_ceiling_is_the_best_of_every_reordering_brute_force() -> None:
    # A pool of six with every kind of document: graded, judged non-relevant, unjudged, and
    # negative (pooled, not judged); one relevant document (g) is outside the pool.
    grades = {"d1": 0, "d2": 3, "d4": 1, "d5": -1, "d6": 2, "g": 2}
    pool = ["d1", "d2", "d3", "d4", "d5", "d6"]
    retriever = {"q": {d: 10.0 - i for i, d in enumerate([*pool, "g"])}}
    metrics = ["nDCG@3", "nDCG@10", "nDCG(gain=exp)@5", "P@2", "RR", "AP", "R@3"]
    result = two_stage({"q": grades}, retriever, retriever, pool=6, metrics=metrics)
    permutations = list(itertools.permutations(pool))
    everything = {
        f"p{i}": {d: float(len(pool) - r) for r, d in enumerate(order)}
        for i, order in enumerate(permutations)
    }
    every = evaluate({f"p{i}": grades for i in range(len(permutations))}, everything, metrics)
    for name in metrics:
        best = float(np.max(every.per_query[name]))
        assert result.ceiling.metrics[name] == pytest.approx(best, abs=1e-12), name
        assert result.ceiling.metrics[name] >= result.retriever.metrics[name] - 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_ceiling_bounds_the_retriever_and_any_reranker(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    retriever: dict[str, dict[str, float]] = {}
    reranked: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(60)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in rng.choice(docs, 25, replace=False)}
        retriever[f"q{q}"] = {d: float(rng.integers(0, 20)) for d in docs}
        reranked[f"q{q}"] = {d: float(rng.random()) for d in docs}
    result = two_stage(qrels, retriever, reranked, pool=20, metrics=["nDCG@10", "P@5", "AP"])
    for name in ("nDCG@10", "P@5", "AP"):
        ceiling = result.ceiling.per_query[name]
        assert np.all(ceiling >= result.reranked.per_query[name] - 1e-12)
        assert np.all(ceiling >= result.retriever.per_query[name] - 1e-12)
    recall = [r.metrics["R@20"] for r in result.stages.values()]
    assert recall[0] == recall[1] == recall[2]


# -- a reranker function ----------------------------------------------------------------------
QUERIES = {"q1": "wing flutter", "q2": "heat transfer"}
DOCS = {
    "a": "flutter of a wing",
    "b": "boundary layers",
    "c": "wing flutter at high speed, wing flutter theory",
    "d": "heat",
    "e": "flutter",
    "x": "heat transfer in hypersonic flow",
    "y": "transfer",
    "z": "nothing here",
}


def overlap(pairs: list[tuple[str, str]]) -> list[float]:
    """Counts the query's words in the document: a reranker with no model."""
    return [float(sum(doc.split().count(w) for w in query.split())) for query, doc in pairs]


def test_a_reranker_function_scores_the_pool_in_batches() -> None:
    calls: list[int] = []

    def reranker(pairs: list[tuple[str, str]]) -> list[float]:
        calls.append(len(pairs))
        return overlap(pairs)

    result = two_stage(
        QRELS,
        RETRIEVER,
        reranker,
        pool=3,
        queries=QUERIES,
        docs=DOCS,
        batch_size=4,
        metrics=["nDCG@3"],
    )
    # 3 + 3 pairs, 4 at a time (q9 is not judged: its pool is not scored).
    assert calls == [4, 2]
    assert result.reranked.run == "reranker"
    # q1: c (4 words) > a (2) > b (0); q2: x (2) > y (1) > z (0).
    expected = two_stage(
        QRELS,
        RETRIEVER,
        {"q1": {"c": 4, "a": 2, "b": 0}, "q2": {"x": 2, "y": 1, "z": 0}},
        pool=3,
        metrics=["nDCG@3"],
    )
    assert dict(result.reranked.metrics) == dict(expected.reranked.metrics)


def test_documents_as_beir_records() -> None:
    from rankmeter.io.beir import Document

    docs = {d: Document("", text) for d, text in DOCS.items()}
    result = two_stage(QRELS, RETRIEVER, overlap, pool=3, queries=QUERIES, docs=docs)
    assert result.reranked.run == "overlap"


def test_a_cross_encoder_is_called_through_predict() -> None:
    class FakeCrossEncoder:
        def __init__(self) -> None:
            self.batch_sizes: list[int] = []

        def __call__(self, *args: Any) -> Any:  # a torch module's forward: never called
            raise AssertionError("called instead of predict")

        def predict(
            self, pairs: list[tuple[str, str]], batch_size: int = 32, show_progress_bar: bool = True
        ) -> Any:
            self.batch_sizes.append(batch_size)
            return np.array(overlap(pairs), dtype=np.float32)

    model = FakeCrossEncoder()
    direct = two_stage(QRELS, RETRIEVER, model, pool=3, queries=QUERIES, docs=DOCS)
    wrapped = two_stage(
        QRELS, RETRIEVER, cross_encoder(model, batch_size=8), pool=3, queries=QUERIES, docs=DOCS
    )
    assert dict(direct.reranked.metrics) == dict(wrapped.reranked.metrics)
    assert model.batch_sizes[-1] == 8


def test_cross_encoder_needs_a_model() -> None:
    with pytest.raises(PolicyError, match="has no predict method"):
        cross_encoder(object())
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(RankmeterError, match=r"pip install 'rankmeter\[embed\]'"):
            cross_encoder("no/such/model")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"queries": None}, PolicyError, "a reranker function scores texts"),
        ({"docs": {"a": "x"}}, RankmeterError, "no text for document 'b'"),
        ({"queries": {"q1": "x"}}, RankmeterError, "no text for query 'q2'"),
        (
            {"batch_size": 0},
            PolicyError,
            r"^batch_size=0 must be an integer >= 1 \(pairs per reranker call\)$",
        ),
        (
            {"pool": 0},
            PolicyError,
            r"^pool=0 must be an integer >= 1 \(candidates per query the reranker sees\)$",
        ),
    ],
)
def test_bad_reranker_inputs(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    options: dict[str, Any] = {"pool": 3, "queries": QUERIES, "docs": DOCS, **kwargs}
    with pytest.raises(error, match=match):
        two_stage(QRELS, RETRIEVER, overlap, **options)


@pytest.mark.parametrize(
    ("reranker", "match"),
    [
        (lambda pairs: [1.0], "returned 1 scores for 6 pairs"),
        (lambda pairs: [math.nan] * len(pairs), "not a finite number"),
    ],
)
def test_a_reranker_must_return_one_finite_score_per_pair(reranker: Any, match: str) -> None:
    with pytest.raises(RankmeterError, match=match):
        two_stage(QRELS, RETRIEVER, reranker, pool=3, queries=QUERIES, docs=DOCS, batch_size=99)


def test_inputs_are_not_modified() -> None:
    retriever = Run.from_dict(RETRIEVER, name="first")
    before = retriever.to_dict()
    two_stage(QRELS, retriever, RERANKED, pool=2)
    assert retriever.to_dict() == before


def test_a_cutoff_deeper_than_the_pool_is_noted() -> None:
    # Every stage holds the pool only: R@10 of a pool of 3 is R@3, silently.
    result = two_stage(QRELS, RETRIEVER, RERANKED, pool=3, metrics=["recall.10", "nDCG@3", "P@5"])
    assert result.reranked.metrics["recall.10"] == result.reranked.metrics["R@3"]
    assert result.notes == (
        "recall.10 and P@5 look deeper than the pool: every stage ranks only the pool's 3 "
        "results per query, so their cutoffs act as 3",
    )
    assert result.to_dict()["notes"] == list(result.notes)
    shallow = two_stage(QRELS, RETRIEVER, RERANKED, pool=3, metrics=["nDCG@3", "P@2", "AP"])
    assert shallow.notes == () and shallow.to_dict()["notes"] == []
    one = two_stage(QRELS, RETRIEVER, RERANKED, pool=2, metrics=["nDCG@10"])
    assert one.notes == (
        "nDCG@10 looks deeper than the pool: every stage ranks only the pool's 2 results per "
        "query, so its cutoff acts as 2",
    )
