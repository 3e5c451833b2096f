"""statAP, stat_nDCG@10 and stat_P@10 from a sampled pool, against judging the whole pool.

On Cranfield (``../shared/data/cranfield``; BM25 needs the ``[bm25]`` extra), four BM25 runs
(different k1, b and stopwords) retrieve 100 documents a query. Their depth-100 pool judged in
full, with Cranfield's grades (a pooled document without a judgment is not relevant), is the
truth: AP, nDCG@10 and P@10 of each run. Then, for each seed, ``rankmeter pool --depth 100
--max-per-query M`` keeps a stratified sample of each query's pool (ranks 1-5 and 6-10 whole
while they fit, then 11-20, 21-40, 41-80, 81-100 drawn), only the sampled items are "judged"
(given their Cranfield grade), and each run is evaluated with statAP, stat_nDCG@10 and
stat_P@10, with the pool's inclusion probabilities. Reported per metric, over seeds and runs:

- bias: the mean of (estimated mean over queries - true mean over queries), and its sd;
- r: the Pearson correlation of the estimated and true per-query values (all runs), the mean
  over seeds;
- tau: Kendall's tau between the runs' order by the estimate and by the truth, the mean over
  seeds (4 runs: 6 pairs);
- the bias of AP, nDCG@10 and P@10 computed on the same sampled judgments without weights
  (what evaluating the sample as if it were the qrels gives).

Run: ``PYTHONPATH=src python benchmarks/statap_sim.py [--seeds 50] [--max-per-query 40]``
(Markdown on stdout; docs/judgments.md shows its figures).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
#: (name, k1, b, stopwords) of the runs pooled
RUNS = (
    ("bm25", 1.5, 0.75, "en"),
    ("bm25-b0.4", 0.9, 0.4, "en"),
    ("bm25-b1", 2.0, 1.0, "en"),
    ("bm25-all-words", 1.2, 0.75, None),
)
#: estimate -> what it estimates
PAIRS = (("statAP", "AP"), ("stat_nDCG@10", "nDCG@10"), ("stat_P@10", "P@10"))


@dataclass(frozen=True)
class Figures:
    """One estimate's figures over the seeds: bias (mean and sd of the difference of the runs'
    means), per-query correlation and Kendall's tau of the runs' order (means over seeds); and
    the bias of the plain metric on the same sampled judgments, without the weights (the
    documents not drawn counted as not relevant)."""

    metric: str
    bias: float
    sd: float
    r: float
    tau: float
    unweighted: float


def make_runs(collection: Any, depth: int) -> list[Any]:
    from rankmeter.vector.bm25 import bm25_run

    return [
        bm25_run(collection, k=depth, k1=k1, b=b, name=name, stopwords=stop)
        for name, k1, b, stop in RUNS
    ]


def simulate(
    runs: list[Any], truth: dict[tuple[str, str], float], *, depth: int, budget: int, seeds: range
) -> tuple[list[Figures], float]:
    """The figures of each estimate, and the share of the pool judged (mean over seeds)."""
    import scipy.stats

    import rankmeter
    from rankmeter.judgments import pool

    named = {run.name: run for run in runs}
    whole = pool(named, depth=depth)
    full = {
        (item.query_id, item.doc_id): truth.get((item.query_id, item.doc_id), 0) for item in whole
    }
    true = rankmeter.evaluate(_qrels(full), named, [t for _, t in PAIRS])
    diffs: dict[str, list[float]] = {e: [] for e, _ in PAIRS}
    rs: dict[str, list[float]] = {e: [] for e, _ in PAIRS}
    taus: dict[str, list[float]] = {e: [] for e, _ in PAIRS}
    plain: dict[str, list[float]] = {e: [] for e, _ in PAIRS}
    shares = []
    for seed in seeds:
        sample = pool(named, depth=depth, max_per_query=budget, seed=seed)
        shares.append(len(sample) / len(whole))
        judged = {(i.query_id, i.doc_id): full[(i.query_id, i.doc_id)] for i in sample}
        found = rankmeter.evaluate(_qrels(judged), named, [e for e, _ in PAIRS], inclusion=sample)
        unweighted = rankmeter.evaluate(_qrels(judged), named, [t for _, t in PAIRS])
        for estimate, target in PAIRS:
            got = [found[name].metrics[estimate] for name in named]
            want = [true[name].metrics[target] for name in named]
            diffs[estimate] += [g - w for g, w in zip(got, want, strict=True)]
            plain[estimate] += [
                unweighted[name].metrics[target] - true[name].metrics[target] for name in named
            ]
            taus[estimate].append(float(scipy.stats.kendalltau(got, want).statistic))
            per_got = np.concatenate([found[n].per_query[estimate] for n in named])
            per_want = np.concatenate([true[n].per_query[target] for n in named])
            rs[estimate].append(float(np.corrcoef(per_got, per_want)[0, 1]))
    figures = [
        Figures(
            e,
            float(np.mean(diffs[e])),
            float(np.std(diffs[e], ddof=1)),
            float(np.mean(rs[e])),
            float(np.mean(taus[e])),
            float(np.mean(plain[e])),
        )
        for e, _ in PAIRS
    ]
    return figures, float(np.mean(shares))


def _qrels(judged: dict[tuple[str, str], float]) -> Any:
    import rankmeter

    pairs = sorted(judged)
    return rankmeter.Qrels.from_columns(
        [q for q, _ in pairs], [d for _, d in pairs], [judged[p] for p in pairs]
    )


def load_truth(folder: Path) -> tuple[Any, dict[tuple[str, str], float]]:
    import rankmeter
    from rankmeter.io.beir import load_beir

    qrels = rankmeter.as_qrels(folder / "qrels" / "test.tsv")
    truth = {(q, d): g for q, d, g in qrels}
    return load_beir(str(folder)), truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--max-per-query", type=int, default=40)
    parser.add_argument("--collection", type=Path, default=CRANFIELD)
    args = parser.parse_args(argv)
    collection, truth = load_truth(args.collection)
    runs = make_runs(collection, args.depth)
    figures, share = simulate(
        runs, truth, depth=args.depth, budget=args.max_per_query, seeds=range(args.seeds)
    )
    print(
        f"Cranfield, {len(runs)} BM25 runs pooled at depth {args.depth}, --max-per-query "
        f"{args.max_per_query} ({share:.0%} of the pool judged), {args.seeds} seeds:\n"
    )
    print(
        "| estimate | of | bias (mean) | bias (sd) | r per query | tau of the runs "
        "| bias of the unweighted metric |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for figure, (_, target) in zip(figures, PAIRS, strict=True):
        print(
            f"| {figure.metric} | {target} | {figure.bias:+.4f} | {figure.sd:.4f} | "
            f"{figure.r:.3f} | {figure.tau:.2f} | {figure.unweighted:+.4f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
