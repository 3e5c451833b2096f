"""A synthetic collection for the click tests: 100 queries of 10 documents, grades 0-3 drawn
at random, and a run that ranks them at random (so grade and rank are independent)."""

from __future__ import annotations

import numpy as np

N_QUERIES = 100
N_DOCS = 10


def collection(seed: int = 1) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(N_DOCS)} for q in range(N_QUERIES)
    }
    run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(N_DOCS)} for q in range(N_QUERIES)}
    return qrels, run
