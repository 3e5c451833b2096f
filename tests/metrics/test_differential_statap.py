"""statAP, stat_nDCG and stat_P against references, per query and on the mean (abs 1e-9).

No installed package computes statAP (trec_eval 9 and ir_measures do not; NIST's
sample_eval.pl computes xinfAP from strata, another estimator). So the reference for sampled
judgments is an independent plain-Python implementation of the formulas documented in
rankmeter.metrics.statap, one query at a time, one document at a time; with every probability
1 the estimates are compared with trec_eval itself (map, map_cut, P, ndcg_cut through
pytrec_eval), which they must equal.

Random inputs: tied scores (broken by doc id descending, as trec_eval), grades -1..4 (-1:
pooled, not judged), unjudged results, queries in the run but not the qrels and the reverse,
inclusion probabilities in (0, 1] on some judgments (the others judged in full), a pool item
of a document that was never judged. Scores are exactly representable in float32 and every
qrels query has a grade >= 0, for pytrec_eval's sake (see test_differential.py).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import rankmeter

METRICS = [
    ("statAP", None),
    ("statAP@5", None),
    ("statAP(rel=2)", None),
    ("stat_P@5", None),
    ("stat_P@10", None),
    ("stat_P(rel=2)@3", None),
    ("stat_nDCG@5", None),
    ("stat_nDCG@20", None),
    ("stat_nDCG(gain=exp)@10", None),
]
PROBABILITIES = [1.0, 0.5, 0.25, 1 / 3, 0.1, 0.75]


def collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(14)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    inclusion: dict[tuple[str, str], float] = {}
    queries = [f"q{i}" for i in range(rng.randint(1, 5))]
    for q in queries:
        judged = rng.sample(docs, rng.randint(1, 9))
        grades = {d: rng.randint(-1, 4) for d in judged}
        if all(g < 0 for g in grades.values()):
            grades[judged[0]] = rng.randint(0, 2)
        qrels[q] = grades
        for d in judged:
            if rng.random() < 0.6:
                inclusion[(q, d)] = rng.choice(PROBABILITIES)
        inclusion[(q, "never-judged")] = 0.5
    # (a pool none of whose items is judged is refused: at least one is)
    first = next(d for d, g in qrels[queries[0]].items() if g >= 0)
    inclusion.setdefault((queries[0], first), 0.5)
    for q in [*queries[1:], "unjudged-query"]:  # queries[0] is judged but never run
        ranked = rng.sample([*docs, "u1", "u2", "u3"], rng.randint(1, 16))
        run[q] = {d: rng.choice([0.5, 1.0, 1.5, 2.0, 2.5, 3.0]) for d in ranked}
    if len(queries) == 1:
        run[queries[0]] = {"d0": 1.0, "u1": 2.0}
    return qrels, run, inclusion


def _parse(name: str) -> tuple[str, int | None, float, str]:
    metric = rankmeter.parse_metric(name)
    rel = metric.get("rel") if metric.spec.param("rel") else None
    gain = metric.get("gain") if metric.spec.param("gain") else "linear"
    return metric.spec.name, metric.cutoff, 1.0 if rel is None else float(rel), gain


def reference(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], inclusion: dict, name: str
) -> dict[str, float]:
    """The estimate of every query in both, one document at a time."""
    family, k, rel, gain_kind = _parse(name)
    out: dict[str, float] = {}
    for q in sorted(set(qrels) & set(run)):
        judged = {d: g for d, g in qrels[q].items() if g >= 0}

        def weight(doc: str, q: str = q) -> float:
            return 1.0 / inclusion.get((q, doc), 1.0)

        ranked = [d for d, _ in sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)]
        top = ranked if k is None else ranked[:k]
        if family == "stat_P":
            hits = sum(weight(d) for d in top if judged.get(d, -1) >= rel)
            out[q] = hits / (k if k is not None else len(ranked))
        elif family == "statAP":
            r_hat = sum(weight(d) for d, g in judged.items() if g >= rel)
            above, total = 0.0, 0.0
            for i, d in enumerate(top, start=1):
                if judged.get(d, -1) >= rel:
                    total += weight(d) * (1.0 + above) / i
                    above += weight(d)
            out[q] = total / r_hat if r_hat else 0.0
        else:

            def gain(g: float) -> float:
                return (2.0**g - 1.0) if gain_kind == "exp" else float(g)

            dcg = sum(
                gain(judged[d]) * weight(d) / math.log2(i + 1)
                for i, d in enumerate(top, start=1)
                if judged.get(d, 0) > 0
            )
            counts: dict[int, float] = {}
            for d, g in judged.items():
                if g > 0:
                    counts[g] = counts.get(g, 0.0) + weight(d)
            ideal: list[int] = []
            for g in sorted(counts, reverse=True):
                ideal += [g] * math.floor(counts[g] + 0.5)
            ideal = ideal if k is None else ideal[:k]
            idcg = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
            out[q] = dcg / idcg if idcg else 0.0
    return out


@pytest.mark.parametrize("seed", range(150))
def test_random_samples_match_the_reference(seed: int) -> None:
    qrels, run, inclusion = collection(seed)
    names = [name for name, _ in METRICS]
    result = rankmeter.evaluate(qrels, run, names, inclusion=inclusion)
    per_query = result.per_query.to_dict()
    for name in names:
        expected = reference(qrels, run, inclusion, name)
        assert set(per_query) == set(expected), name
        for q, value in expected.items():
            assert per_query[q][name] == pytest.approx(value, abs=1e-9), (name, q)
        mean = sum(expected.values()) / len(expected)
        assert result.metrics[name] == pytest.approx(mean, abs=1e-9), name


pytrec_eval = pytest.importorskip("pytrec_eval", reason="trec_eval (pytrec-eval-terrier)")

#: estimate -> the trec_eval measure it equals when every judgment is made in full
TREC = {
    "statAP": "map",
    "statAP@5": "map_cut_5",
    "stat_P@5": "P_5",
    "stat_P@10": "P_10",
    "stat_nDCG@5": "ndcg_cut_5",
    "stat_nDCG@20": "ndcg_cut_20",
}


@pytest.mark.parametrize("seed", range(150))
def test_judged_in_full_they_match_trec_eval(seed: int) -> None:
    qrels, run, _ = collection(seed)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "P", "ndcg_cut"})
    found: dict[str, Any] = evaluator.evaluate(run)
    ones = {(q, d): 1.0 for q, docs in qrels.items() for d in docs}
    result = rankmeter.evaluate(qrels, run, list(TREC), inclusion=ones)
    per_query = result.per_query.to_dict()
    assert set(per_query) == set(found)
    for name, trec in TREC.items():
        for q, values in found.items():
            assert per_query[q][name] == pytest.approx(values[trec], abs=1e-9), (name, q)
