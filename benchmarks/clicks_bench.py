"""Click models (issue 12, item 3): parameters recovered from simulated logs, and the time of
rankmeter's vectorised EM against a per-session Python EM written here.

The collection is synthetic: ``--queries`` queries of 10 documents, grades 0-3 drawn at random,
and a run that ranks them at random (grade and rank independent). ``rankmeter.clicks.simulate``
makes a log of ``--sessions`` requests (each request shows the run's top 10, half of them
shuffled) from a known click model with known propensities (1/r); the script fits it and
reports, per model:

- the propensity error per rank (|fitted - true|, both normalised to rank 1; PBM, the UBM's
  examination with no click above, the DBN's gamma);
- the Spearman correlation between the fitted relevance (attractiveness, x satisfaction for
  DBN) and the true grades, and the Pearson correlation with the true attractiveness;
- the fitting time (wall, one thread of NumPy).

Then PBM's EM is timed against a reference written the way PyClick does it: a Python loop over
sessions and their results, dicts of sums per (query, doc) and per rank, started from the same
values and run for ``--reference-iterations`` iterations; both must give the same parameters
(max difference printed), and the ratio of the times per iteration is the figure.

    python benchmarks/clicks_bench.py --sessions 100000 --sessions 1000000

Prints a Markdown section to stdout (docs/clicks.md quotes it).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import Any

import numpy as np
import pyarrow as pa
from scipy.stats import pearsonr, spearmanr

from rankmeter.clicks import (
    ClickLog,
    click_log,
    default_attractiveness,
    default_propensities,
    fit,
    simulate,
)

DEPTH = 10


def collection(n_queries: int, seed: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 4, (n_queries, DEPTH))
    scores = rng.random((n_queries, DEPTH))
    qrels = {f"q{q}": {f"d{d}": int(grades[q, d]) for d in range(DEPTH)} for q in range(n_queries)}
    run = {f"q{q}": {f"d{d}": float(scores[q, d]) for d in range(DEPTH)} for q in range(n_queries)}
    return qrels, run


def reference_pbm(log: ClickLog, alpha0: np.ndarray, theta0: np.ndarray, iterations: int) -> Any:
    """PBM's EM the PyClick way: for each session, for each result, update sums in dicts."""
    sessions = [
        [(int(p), r, bool(c)) for r, (p, c) in enumerate(zip(row_p, row_c, strict=True)) if p >= 0]
        for row_p, row_c in zip(log.pairs.tolist(), log.clicks.tolist(), strict=True)
    ]
    alpha = dict(enumerate(alpha0.tolist()))
    theta = dict(enumerate(theta0.tolist()))
    eps = 1e-6
    for _ in range(iterations):
        a_num: dict[int, float] = defaultdict(float)
        a_den: dict[int, int] = defaultdict(int)
        t_num: dict[int, float] = defaultdict(float)
        t_den: dict[int, int] = defaultdict(int)
        for session in sessions:
            for pair, rank, clicked in session:
                a, e = alpha[pair], theta[rank]
                if clicked:
                    post_a = post_e = 1.0
                else:
                    missed = max(1 - e * a, eps)
                    post_a = (1 - e) * a / missed
                    post_e = e * (1 - a) / missed
                a_num[pair] += post_a
                a_den[pair] += 1
                t_num[rank] += post_e
                t_den[rank] += 1
        alpha = {p: min(max(a_num[p] / a_den[p], eps), 1 - eps) for p in a_den}
        theta = {r: min(max(t_num[r] / t_den[r], eps), 1 - eps) for r in t_den}
    return np.array([alpha[p] for p in range(len(alpha0))]), np.array(
        [theta[r] for r in range(len(theta0))]
    )


def truth_of(model: Any, qrels: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    pairs = model.pairs().to_pydict()
    grades = np.array(
        [qrels[q][d] for q, d in zip(pairs["query_id"], pairs["doc_id"], strict=True)]
    )
    return grades, default_attractiveness(3)[grades]


def recovery(sessions: int, n_queries: int, seed: int, models: list[str]) -> list[str]:
    qrels, run = collection(n_queries)
    truth = default_propensities(DEPTH)
    rows = []
    for name in models:
        started = time.perf_counter()
        log = simulate(qrels, run, sessions=sessions, model=name, shuffle=0.5, seed=seed)
        simulated = time.perf_counter() - started
        started = time.perf_counter()
        data = click_log(log)
        read = time.perf_counter() - started
        started = time.perf_counter()
        model = fit(data, name)
        elapsed = time.perf_counter() - started
        grades, attract = truth_of(model, qrels)
        relevance = model.attractiveness
        if model.satisfaction is not None:
            relevance = relevance * model.satisfaction
        if name == "pbm":
            error = np.abs(model.propensities - truth)
        elif name == "ubm":
            assert model.examination is not None
            no_click = model.examination[:, 0] / model.examination[0, 0]
            error = np.abs(no_click - truth)
        else:
            error = np.array([])
        errors = " ".join(f"{e:.3f}" for e in error) if len(error) else "–"
        gamma = f"{model.gamma:.3f} (true 0.9)" if model.gamma is not None else "–"
        rows.append(
            f"| {sessions:,} | {name} | {errors} | {gamma} | "
            f"{spearmanr(grades, relevance)[0]:.3f} | {pearsonr(attract, model.attractiveness)[0]:.3f} | "
            f"{model.iterations} ({'converged' if model.converged else 'not converged'}) | "
            f"{elapsed:.1f} s | {simulated:.1f} s / {read:.1f} s |"
        )
    return rows


def speed(sessions: int, n_queries: int, iterations: int, seed: int) -> str:
    qrels, run = collection(n_queries)
    data = click_log(simulate(qrels, run, sessions=sessions, shuffle=0.5, seed=seed))
    started = time.perf_counter()
    model = fit(data, "pbm", max_iter=iterations, tol=1e-300, seed=seed)
    vectorised = time.perf_counter() - started
    # The same starting values fit() draws, which numbers pairs in (query, doc) order.
    order = pa.table({"q": data.query_ids, "d": data.doc_ids}).sort_by(
        [("q", "ascending"), ("d", "ascending")]
    )
    canonical = np.empty(data.n_pairs, dtype=np.int64)
    keys = {
        (q, d): i
        for i, (q, d) in enumerate(zip(order["q"].to_pylist(), order["d"].to_pylist(), strict=True))
    }
    for p, key in enumerate(zip(data.query_ids.to_pylist(), data.doc_ids.to_pylist(), strict=True)):
        canonical[p] = keys[key]
    rng = np.random.default_rng(seed)
    alpha0 = np.clip(0.5 + rng.uniform(-0.1, 0.1, data.n_pairs), 1e-6, 1 - 1e-6)[canonical]
    theta0 = np.clip(0.5 + rng.uniform(-0.1, 0.1, data.depth), 1e-6, 1 - 1e-6)
    started = time.perf_counter()
    alpha, theta = reference_pbm(data, alpha0, theta0, iterations)
    reference = time.perf_counter() - started
    assert model.examination is not None
    difference = max(
        np.abs(alpha - model.attractiveness[canonical]).max(),
        np.abs(theta - model.examination).max(),
    )
    return (
        f"| {sessions:,} | {iterations} | {vectorised:.2f} s | {reference:.2f} s | "
        f"{reference / vectorised:.0f}x | {difference:.1e} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, action="append", help="repeatable")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--reference-iterations", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--models", default="pbm,ubm,dbn,cascade", help="comma list of the models to recover"
    )
    parser.add_argument("--no-speed", action="store_true", help="skip the EM-vs-Python timing")
    args = parser.parse_args(argv)
    sizes = args.sessions or [100_000, 1_000_000]
    models = args.models.split(",")
    print(f"## Click models: recovery ({args.queries:,} queries x {DEPTH} documents)\n")
    print(
        "| requests | model | propensity error, ranks 1-10 | gamma | Spearman (grades) | "
        "Pearson (attractiveness) | EM iterations | fit | simulate / read |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for sessions in sizes:
        for row in recovery(sessions, args.queries, args.seed, models):
            print(row, flush=True)
    if args.no_speed:
        return 0
    print("\n## PBM's EM: vectorised vs a per-session Python loop\n")
    print("| requests | iterations | rankmeter | Python reference | ratio | max difference |")
    print("| --- | --- | --- | --- | --- | --- |")
    for sessions in sizes:
        print(speed(sessions, args.queries, args.reference_iterations, args.seed), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
