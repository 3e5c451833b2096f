"""How many requests interleaving needs to find a known difference, against an A/B test on CTR.

Two rankers of known, different quality on Cranfield (``../shared/data/cranfield``): A is BM25
without document-length normalisation (b = 0), B is BM25 with rankmeter.vector.bm25_run's
defaults (k1 = 1.5, b = 0.75); B has the higher nDCG@10 (needs the ``[bm25]`` extra). Users click with a
position-biased model: a result at rank r is examined with probability 1/r, and an examined
result is clicked with a probability that grows with its grade (``CLICK_GIVEN_GRADE``;
unjudged documents count as grade 0).

- **Interleaving**: every request shows a team-draft interleaving of the two top tens
  (:func:`rankmeter.online.interleave_runs`), clicks are simulated on it, credited with
  :func:`rankmeter.online.interleaving_credit`, and N requests are tested with the sign test
  of :func:`rankmeter.online.interleaving_test` (exact binomial, ties left out).
- **A/B on CTR**: N requests split in half, one half shown A's top ten, the other B's; the
  clicks per request (CTR = clicks / 10 shown results) compared with Welch's t-test.

Each request is a new user (one request per user), so the per-user and per-request tests
agree. Power at N = the share of ``--replicates`` simulated experiments of N requests that
find the difference in the right direction at alpha 0.05; requests are drawn (with
replacement) from pools of ``--impressions`` simulated requests per query. The figure is the
smallest N with power >= 0.8, interpolated on a log scale between the grid's sizes.

Run: ``PYTHONPATH=src python benchmarks/interleaving_sim.py`` (Markdown table on stdout).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats

from rankmeter import Qrels, Run, as_qrels, evaluate
from rankmeter.online import interleave_runs, interleaving_credit

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"

#: P(click | examined) by grade (Cranfield grades 0-4; unjudged = 0).
CLICK_GIVEN_GRADE = np.array([0.05, 0.2, 0.4, 0.6, 0.8])

SIZES = (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200)


def click_probability(grades: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Examination 1/rank times P(click | examined) by grade."""
    grade = np.clip(np.asarray(grades, dtype=np.int64), 0, len(CLICK_GIVEN_GRADE) - 1)
    return (1.0 / np.asarray(positions, dtype=np.float64)) * CLICK_GIVEN_GRADE[grade]


def _grades(qrels: Qrels, query_ids: Any, doc_ids: Any) -> np.ndarray:
    """The grade of each (query, doc) pair; 0 when unjudged."""
    judged = qrels.to_arrow().rename_columns(["query_id", "doc_id", "grade"])
    shown = pa.table({"query_id": query_ids, "doc_id": doc_ids, "row": np.arange(len(doc_ids))})
    joined = shown.join(judged, ["query_id", "doc_id"], join_type="left outer")
    grades = np.zeros(len(doc_ids), dtype=np.int64)
    rows = joined["row"].to_numpy()
    grade = pc.fill_null(pc.cast(joined["grade"], pa.float64()), 0).to_numpy()
    grades[rows] = np.maximum(grade, 0).astype(np.int64)
    return grades


@dataclass(frozen=True)
class Pools:
    """Simulated requests: interleaving outcomes (+1 B won, -1 A won, 0 tie, None no click as
    NaN) and the clicks of A/B requests per arm."""

    interleaved: np.ndarray  # float: +1, -1, 0, or NaN (no click)
    clicks_a: np.ndarray  # clicks per request shown A's list
    clicks_b: np.ndarray  # clicks per request shown B's list
    ctr_a: float  # expected CTR of A (exact, from the click model)
    ctr_b: float


def simulate_pools(
    qrels: Qrels, run_a: Run, run_b: Run, *, impressions: int, length: int = 10, seed: int = 0
) -> Pools:
    """Pools of simulated interleaved and A/B requests, ``impressions`` per query, on the
    queries where both runs show a full page of ``length`` results."""
    rng = np.random.default_rng(seed)
    full = [{q for q in run.query_ids if len(run.ranking(q)) >= length} for run in (run_a, run_b)]
    queries = sorted(full[0] & full[1])
    run_a, run_b = run_a.subset(queries), run_b.subset(queries)
    shown = interleave_runs(
        run_a, run_b, method="team-draft", length=length, impressions=impressions, seed=seed
    )
    grades = _grades(qrels, shown["query_id"], shown["doc_id"])
    p = click_probability(grades, shown["position"].to_numpy())
    log = shown.append_column("clicked", pa.array(rng.random(len(p)) < p))
    credit = interleaving_credit(log)
    a, b = credit["clicks_a"].to_numpy(), credit["clicks_b"].to_numpy()
    interleaved = np.where(a + b == 0, np.nan, np.sign(b - a).astype(np.float64))

    clicks = []
    ctr = []
    for run in (run_a, run_b):
        pages = run.head(length).to_arrow()
        page_p = click_probability(
            _grades(qrels, pages["query_id"], pages["doc_id"]), pages["rank"].to_numpy()
        ).reshape(len(queries), length)
        ctr.append(float(page_p.mean()))
        per_request = np.repeat(page_p, impressions, axis=0)
        clicks.append((rng.random(per_request.shape) < per_request).sum(axis=1))
    return Pools(interleaved, clicks[0], clicks[1], ctr[0] / 1.0, ctr[1] / 1.0)


@dataclass(frozen=True)
class Power:
    sizes: tuple[int, ...]
    interleaving: tuple[float, ...]
    ab: tuple[float, ...]


def power_curves(
    pools: Pools, sizes: Sequence[int], *, replicates: int, alpha: float = 0.05, seed: int = 0
) -> Power:
    """Power at each size: the share of replicates whose test finds B better at ``alpha``."""
    rng = np.random.default_rng(seed)
    interleaving, ab = [], []
    for n in sizes:
        found = 0
        for _ in range(replicates):
            votes = pools.interleaved[rng.integers(0, len(pools.interleaved), n)]
            wins_b, wins_a = int((votes > 0).sum()), int((votes < 0).sum())
            if wins_a + wins_b and wins_b > wins_a:
                found += stats.binomtest(wins_b, wins_a + wins_b).pvalue < alpha
        interleaving.append(found / replicates)
        found = 0
        for _ in range(replicates):
            a = pools.clicks_a[rng.integers(0, len(pools.clicks_a), n // 2)]
            b = pools.clicks_b[rng.integers(0, len(pools.clicks_b), n - n // 2)]
            if b.mean() > a.mean():
                with warnings.catch_warnings():  # all-equal samples: p is NaN, say nothing
                    warnings.simplefilter("ignore", RuntimeWarning)
                    found += stats.ttest_ind(b, a, equal_var=False).pvalue < alpha
        ab.append(found / replicates)
    return Power(tuple(sizes), tuple(interleaving), tuple(ab))


def needed(sizes: Sequence[int], power: Sequence[float], target: float = 0.8) -> float:
    """The smallest size reaching ``target`` power, interpolated on log(size); inf if none."""
    for i, value in enumerate(power):
        if value >= target:
            if i == 0:
                return float(sizes[0])
            lo, hi = power[i - 1], value
            t = (target - lo) / (hi - lo) if hi > lo else 1.0
            return float(math.exp(math.log(sizes[i - 1]) + t * math.log(sizes[i] / sizes[i - 1])))
    return math.inf


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cranfield", type=Path, default=CRANFIELD)
    parser.add_argument("--impressions", type=int, default=1000, help="pool requests per query")
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--a-k1", type=float, default=1.5, help="ranker A's BM25 k1")
    parser.add_argument("--a-b", type=float, default=0.0, help="ranker A's BM25 b")
    args = parser.parse_args(argv)

    from rankmeter.io.beir import load_beir
    from rankmeter.vector import bm25_run

    started = time.perf_counter()
    collection = load_beir(args.cranfield)
    qrels = as_qrels(args.cranfield / "qrels.trec")
    name_a = f"bm25-k1={args.a_k1:g}-b={args.a_b:g}"
    run_a = bm25_run(collection, k=100, k1=args.a_k1, b=args.a_b, name=name_a)
    run_b = bm25_run(collection, k=100, name="bm25")
    offline = {
        run.name: evaluate(qrels, run, ["nDCG@10", "P@10"]).metrics for run in (run_a, run_b)
    }
    pools = simulate_pools(qrels, run_a, run_b, impressions=args.impressions, seed=args.seed)
    power = power_curves(pools, SIZES, replicates=args.replicates, seed=args.seed)
    need_i = needed(power.sizes, power.interleaving)
    need_ab = needed(power.sizes, power.ab)
    decided = pools.interleaved[~np.isnan(pools.interleaved)]
    out = sys.stdout
    out.write(f"## Interleaving vs A/B on CTR (Cranfield, {name_a} as A vs BM25 as B)\n\n")
    for name, metrics in offline.items():
        out.write(f"- {name}: nDCG@10 {metrics['nDCG@10']:.4f}, P@10 {metrics['P@10']:.4f}\n")
    out.write(
        f"- expected CTR (click model): A {pools.ctr_a:.4f}, B {pools.ctr_b:.4f} "
        f"(relative {pools.ctr_b / pools.ctr_a - 1:+.1%})\n"
        f"- interleaved requests with a click: {len(decided) / len(pools.interleaved):.1%}; "
        f"among them B wins {np.mean(decided > 0):.1%}, A {np.mean(decided < 0):.1%}, "
        f"ties {np.mean(decided == 0):.1%}\n"
        f"- pools: {args.impressions} requests per query; {args.replicates} replicates per "
        f"size; seed {args.seed}\n\n"
    )
    out.write("| requests | power, interleaving | power, A/B on CTR |\n| ---: | ---: | ---: |\n")
    for n, pi, pab in zip(power.sizes, power.interleaving, power.ab, strict=True):
        out.write(f"| {n} | {pi:.2f} | {pab:.2f} |\n")
    out.write(
        f"\nRequests for 80% power at alpha 0.05: interleaving {need_i:,.0f}, "
        f"A/B on CTR {need_ab:,.0f} ({need_ab / need_i:.1f}x as many).\n"
        f"\n({time.perf_counter() - started:.0f} s)\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
