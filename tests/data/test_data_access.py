"""The public, read-only view of Qrels and Run that the join, explain, fusion and the BEIR reader
use instead of their private columns: offsets, segment ids, scores, grades, doc ids, the doc
lookup, and the run's head and subset."""

from __future__ import annotations

import numpy as np
import pytest

from rankmeter import PolicyError, Qrels, Run
from rankmeter.data.hashing import HashLookup

QRELS = {"q2": {"d1": 2, "d3": -1}, "10": {"x": 1}, "q1": {"d2": 0, "d1": 1}}
# Two queries with ties: under trec_eval's policy equal scores go doc id descending.
RESULTS = {
    "q1": {"d1": 3.0, "d2": 1.0, "d3": 2.0, "d4": 2.0, "d5": 0.5},
    "q2": {"a": 1.0, "b": 1.0, "c": 1.0},
}


def run(ties: str = "trec_eval") -> Run:
    return Run.from_dict(RESULTS, name="sys", ties=ties)


def test_run_columns_are_read_only_and_in_rank_order() -> None:
    r = run()
    assert list(r.segment_ids) == ["q1", "q2"]
    assert r.offsets.tolist() == [0, 5, 8]
    assert r.scores.tolist() == [3.0, 2.0, 2.0, 1.0, 0.5, 1.0, 1.0, 1.0]
    assert r.doc_ids(slice(0, 5)).to_pylist() == ["d1", "d4", "d3", "d2", "d5"]
    for column in (r.segment_ids, r.offsets, r.scores):
        assert not column.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            column[0] = column[1]


def test_qrels_columns_are_read_only_and_by_query_then_doc() -> None:
    qrels = Qrels.from_dict(QRELS)
    # Natural order: numeric ids first, then byte order.
    assert list(qrels.segment_ids) == ["10", "q1", "q2"] == list(qrels.query_ids)
    assert qrels.offsets.tolist() == [0, 1, 3, 5]
    row = qrels.query_rows()["q2"]
    start, stop = int(qrels.offsets[row]), int(qrels.offsets[row + 1])
    docs = qrels.doc_ids(slice(start, stop)).to_pylist()
    judged = dict(zip(docs, qrels.grades[start:stop].tolist(), strict=True))
    assert judged == {"d1": 2.0, "d3": -1.0}
    assert sorted(qrels.doc_vocabulary.to_pylist()) == ["d1", "d2", "d3", "x"]
    assert len(qrels.doc_ids()) == len(qrels) == 5
    for column in (qrels.segment_ids, qrels.offsets, qrels.grades):
        assert not column.flags.writeable


def test_judgment_rows_find_each_pair_or_say_minus_one() -> None:
    qrels = Qrels.from_dict(QRELS)
    lookup = qrels.doc_lookup()
    assert isinstance(lookup, HashLookup)
    r = Run.from_dict({"q1": {"d1": 1.0, "d2": 0.5, "x": 0.1, "nope": 0.0}})
    codes = r.doc_codes(lookup)
    assert codes[r.doc_ids(slice(None)).to_pylist().index("nope")] == -1
    segment = qrels.query_rows()["q1"]
    rows = qrels.judgment_rows(np.full(len(codes), segment, dtype=np.int64), np.maximum(codes, 0))
    found = {
        d: float(qrels.grades[at]) if at >= 0 and c >= 0 else None
        for d, at, c in zip(r.doc_ids(slice(None)).to_pylist(), rows, codes, strict=True)
    }
    # x is judged, but for query 10, not q1.
    assert found == {"d1": 1.0, "d2": 0.0, "x": None, "nope": None}
    some = np.array([2, 0], dtype=np.int64)
    assert r.doc_codes(lookup, some).tolist() == codes[some].tolist()


def test_head_keeps_each_querys_top_in_rank_order() -> None:
    r = run()
    top = r.head(2)
    assert top.ranking("q1") == ["d1", "d4"] and top.ranking("q2") == ["c", "b"]
    assert (top.name, top.ties, top.source) == (r.name, r.ties, r.source)
    assert top.scores.tolist() == [3.0, 2.0, 1.0, 1.0]
    assert top.to_dict() == {q: dict(list(d.items())[:2]) for q, d in r.to_dict().items()}
    assert r.head(5) is r and r.head(50) is r


def test_head_of_a_random_run_equals_cutting_each_ranking() -> None:
    rng = np.random.default_rng(7)
    qs = [f"q{q}" for q in range(30) for _ in range(40)]
    ds = [f"d{d}" for _ in range(30) for d in rng.permutation(40)]
    scores = rng.integers(0, 6, size=len(qs)).astype(float)  # many ties
    r = Run.from_columns(qs, ds, scores)
    top = r.head(7)
    assert len(top) == 7 * r.n_queries
    for q in r.query_ids:
        assert top.ranking(q) == r.ranking(q)[:7]
    assert np.array_equal(
        top.doc_hashes(), np.concatenate([r.doc_hashes()[s : s + 7] for s in r.offsets[:-1]])
    )


def test_head_keeps_the_input_order_for_the_input_tie_policy() -> None:
    # The head knows the order its results were given in: re-ranked under "input", the two
    # kept of q2's three tied results (c, b by trec_eval's rule) come in input order.
    r = run().head(2)
    assert r.ranking("q2") == ["c", "b"]
    assert r.with_ties("input").ranking("q2") == ["b", "c"]
    assert run(ties="input").head(2).ranking("q2") == ["a", "b"]


def test_head_checks_its_cutoff() -> None:
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(PolicyError, match=r"^cutoff=.* must be an integer >= 1"):
            run().head(bad)  # type: ignore[arg-type]


def test_subset_keeps_the_queries_asked_for() -> None:
    r = run()
    only = r.subset(["q2", "unknown"])
    assert only.query_ids == ("q2",)
    assert only.ranking("q2") == r.ranking("q2")
    assert only.scores.tolist() == [1.0, 1.0, 1.0]
    assert r.subset(["q1", "q2"]) is r
    assert len(r.subset(["nothing"])) == 0
