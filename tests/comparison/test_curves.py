"""metric@k curves: computed by the metrics' own kernels, each point the number evaluate()
gives for that cutoff, and the same numbers as the separate curve code they replaced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import rankmeter
from rankmeter import evaluate
from rankmeter.comparison import CURVE_DEPTH, CURVE_FAMILIES
from rankmeter.comparison._curves import mean_curves
from rankmeter.data import Qrels, Run
from rankmeter.io import read_qrels
from rankmeter.metrics._ranked import Ranked, join


def test_curves_equal_the_metrics_at_each_cutoff(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    for family in ("nDCG", "P", "R"):
        for k in (1, 5, 10, 30, 100):
            expected = evaluate(qrels, runs["better"], [f"{family}@{k}"]).metrics
            curve = result.curves[family]["better"]
            assert len(curve) == 100
            assert curve[k - 1] == pytest.approx(next(iter(expected.values())), abs=1e-12)


def test_every_point_is_bit_for_bit_the_mean_evaluate_reports(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    names = [f"{family}@{k}" for family in CURVE_FAMILIES for k in range(1, CURVE_DEPTH + 1)]
    for system in result.systems:
        means = evaluate(qrels, runs[system], names).metrics
        for family in CURVE_FAMILIES:
            expected = [means[f"{family}@{k}"] for k in range(1, CURVE_DEPTH + 1)]
            assert result.curves[family][system].tolist() == expected


def gain(grades: np.ndarray, kind: str) -> np.ndarray:
    """Linear gain as trec_eval defines it: the grade, and nothing for a grade <= 0."""
    assert kind == "linear"
    return np.where(grades > 0.0, grades, 0.0)


def discount(positions: np.ndarray) -> np.ndarray:
    """trec_eval's discount of the 0-based position p (rank p + 1): 1 / log2(p + 2)."""
    return 1.0 / np.log2(positions + 2.0)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (trec_eval's rule)."""
    out = np.zeros(np.shape(numerator))
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def test_the_reference_gain_discount_and_ratio() -> None:
    """The reference's own pieces, on values worked by hand (rank 1 counts fully, rank 3 by
    1/log2(4) = 1/2), so the curves are checked against arithmetic, not against themselves."""
    np.testing.assert_array_equal(gain(np.array([-1.0, 0.0, 1.5, 3.0]), "linear"), [0, 0, 1.5, 3])
    np.testing.assert_array_equal(discount(np.array([0.0, 2.0, 6.0])), [1.0, 0.5, 1 / 3])
    np.testing.assert_array_equal(ratio(np.array([1.0, 2.0]), np.array([0.0, 4.0])), [0.0, 0.5])


def _reference_curves(ranked: Ranked, rel: float) -> dict[str, np.ndarray]:
    """The curves as rankmeter computed them before they went through the metrics' kernels
    (comparison._curves at 50a94f5): a second implementation of nDCG, P and R, with its own
    gain, discount and ratio (not the kernels', which are what it checks)."""
    n, depth = ranked.n_queries, CURVE_DEPTH
    if n == 0:
        return {family: np.zeros(depth) for family in CURVE_FAMILIES}
    top = ranked.positions < depth
    rows, columns = ranked.groups[top], ranked.positions[top]
    dcg = np.zeros((n, depth))
    dcg[rows, columns] = gain(ranked.grades[top], "linear") * discount(columns.astype(float))
    np.cumsum(dcg, axis=1, out=dcg)
    j_groups = ranked.judgment_groups
    j_positions = np.arange(len(j_groups), dtype=np.int64) - ranked.judgment_offsets[j_groups]
    j_top = j_positions < depth
    ideal = np.zeros((n, depth))
    ideal[j_groups[j_top], j_positions[j_top]] = gain(
        ranked.judgment_grades[j_top], "linear"
    ) * discount(j_positions[j_top].astype(float))
    np.cumsum(ideal, axis=1, out=ideal)
    hits = np.zeros((n, depth))
    hits[rows, columns] = ranked.relevant(rel)[top]
    np.cumsum(hits, axis=1, out=hits)
    cutoffs = np.arange(1, depth + 1, dtype=np.float64)
    num_rel = ranked.num_rel(rel).astype(np.float64)
    ndcg = ratio(dcg.ravel(), ideal.ravel()).reshape(n, depth)
    recall = ratio(hits.ravel(), np.repeat(num_rel, depth)).reshape(n, depth)

    def mean(matrix: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(matrix.T).mean(axis=1)

    return {"nDCG": mean(ndcg), "P": mean(hits / cutoffs), "R": mean(recall)}


def _assert_same_curves(ranked: Ranked, rel: float) -> None:
    got, expected = mean_curves(ranked), _reference_curves(ranked, rel)
    assert set(got) == set(expected) == set(CURVE_FAMILIES)
    for family in CURVE_FAMILIES:
        assert got[family].shape == (CURVE_DEPTH,)
        np.testing.assert_array_equal(got[family], expected[family])


@pytest.mark.parametrize("seed", range(6))
def test_the_same_curves_as_before_on_random_collections(seed: int) -> None:
    rng = np.random.default_rng(seed)
    judgments: dict[str, dict[str, float]] = {}
    results: dict[str, dict[str, float]] = {}
    for q in range(int(rng.integers(1, 60))):
        docs = [f"d{q}_{i}" for i in range(int(rng.integers(0, 250)))]
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3, 1.5], size=len(docs))
        judged = rng.random(len(docs)) < 0.25
        judgments[f"q{q}"] = {
            d: float(g) for d, g, j in zip(docs, grades, judged, strict=True) if j
        }
        judgments[f"q{q}"][f"x{q}"] = float(rng.integers(0, 4))
        if rng.random() < 0.85:
            scores = np.round(rng.normal(size=len(docs)), 1)
            results[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    qrels, run = Qrels.from_dict(judgments), Run.from_dict(results or {"z": {"d": 1.0}})
    for rel in (1, 2):
        for judged_only in (False, True):
            ranked = join(qrels, run, rel=rel, include_missing=True, judged_only=judged_only)
            _assert_same_curves(ranked, rel)


_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if len(t) > 1}


def test_the_same_curves_as_before_on_cranfield(cranfield: Path) -> None:
    qrels = read_qrels(cranfield / "qrels.trec")
    with (cranfield / "corpus.jsonl").open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle if line.strip()]
    with (cranfield / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = [json.loads(line) for line in handle if line.strip()]
    words = {d["_id"]: _tokens(d.get("title", "") + " " + d.get("text", "")) for d in docs}
    overlap: dict[str, dict[str, float]] = {}
    for q in queries:
        terms = _tokens(q["text"])
        scores = {d: float(len(terms & w)) for d, w in words.items()}
        overlap[q["_id"]] = {d: s for d, s in scores.items() if s >= 2}  # integer scores: ties
    run = Run.from_dict(overlap)
    for rel in (1, 2, 3):
        ranked = join(qrels, run, rel=rel, include_missing=True)
        assert ranked.n_queries == 225
        _assert_same_curves(ranked, rel)
