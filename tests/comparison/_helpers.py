"""A small generated collection: graded qrels and three systems of different quality."""

from __future__ import annotations

import numpy as np


def collection(n_queries: int = 60, seed: int = 3) -> tuple[dict, dict[str, dict]]:
    """Qrels with graded judgments and three systems of different quality."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"base": {}, "better": {}, "noisy": {}}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(30)]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=30)
        qrels[qid] = {d: int(g) for d, g in zip(docs[:20], grades[:20], strict=True)}
        truth = grades + rng.normal(0, 1.0, 30)
        runs["base"][qid] = {
            d: float(s) for d, s in zip(docs, truth + rng.normal(0, 2.0, 30), strict=False)
        }
        runs["better"][qid] = {
            d: float(s) for d, s in zip(docs, truth + rng.normal(0, 0.7, 30), strict=False)
        }
        runs["noisy"][qid] = {
            d: float(s) for d, s in zip(docs, rng.normal(0, 1.0, 30), strict=False)
        }
    return qrels, runs


METRICS = ["nDCG@10", "P@5", "AP"]
