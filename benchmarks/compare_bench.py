"""How long a comparison takes: 10 systems x 5 metrics x 7,000 queries, 10,000 randomizations.

The systems are built in memory (seeded): 7,000 queries with 100 results each and graded
judgments, nine systems that perturb the baseline's scores by different amounts. Timed in this
process (imports excluded, median of --repeat): ``rankmeter.compare`` end to end (joins,
kernels, the paired test, BCa intervals for every mean and difference, the Holm correction,
failures, metric@k curves), and the statistics alone on the per-query matrix. The section goes to
benchmarks/RESULTS.md between its compare markers.

    python benchmarks/compare_bench.py [--queries 7000] [--systems 10] [--resamples 10000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

from run import (  # noqa: E402
    COMPARE_END,
    COMPARE_START,
    DEFAULT_OUT,
    git_state,
    log,
    table,
    write_section,
)

METRICS = ["nDCG@10", "RR@10", "R@100", "P@10", "AP"]


def systems(n_queries: int, n_systems: int, depth: int, seed: int) -> tuple[Any, list[Any]]:
    import numpy as np

    from rankmeter.data import Qrels, Run

    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), depth).astype(str)
    d = np.char.add("d", np.arange(n_queries * depth).astype(str))
    truth = rng.gamma(1.0, 1.0, size=n_queries * depth)
    judged = rng.random(n_queries * depth) < 0.05
    grades = np.minimum(np.floor(truth[judged]), 3).astype(np.int64)
    qrels = Qrels.from_columns(q[judged], d[judged], grades)
    runs = []
    for i in range(n_systems):
        noise = 0.5 + 0.1 * i
        scores = truth + rng.normal(0, noise, size=len(truth))
        runs.append(Run.from_columns(q, d, scores, name=f"system{i}"))
    return qrels, runs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    import numpy as np

    import rankmeter
    from rankmeter import stats

    log(f"building {args.systems} systems x {args.queries:,} queries x {args.depth}")
    qrels, runs = systems(args.queries, args.systems, args.depth, seed=1)
    walls, stat_walls = [], []
    result = None
    for i in range(args.repeat):
        log(f"compare, pass {i + 1} of {args.repeat}")
        start = time.perf_counter()
        result = rankmeter.compare(qrels, runs, METRICS, resamples=args.resamples, seed=0)
        walls.append(time.perf_counter() - start)
    assert result is not None
    base = result.systems[0]
    diffs = np.column_stack(
        [
            result.scores[m][s] - result.scores[m][base]
            for m in result.metrics
            for s in result.systems[1:]
        ]
    )
    for _ in range(args.repeat):
        start = time.perf_counter()
        stats.paired_pvalues(diffs, "randomization", resamples=args.resamples, seed=0)
        stats.bootstrap_intervals(diffs, resamples=args.resamples, seed=0)
        stat_walls.append(time.perf_counter() - start)
    columns = diffs.shape[1]
    rows = [
        [
            "rankmeter.compare (everything)",
            f"{statistics.median(walls):.2f}",
            f"{min(walls):.2f}–{max(walls):.2f}",
        ],
        [
            f"randomization test + BCa intervals on the {args.queries:,} x {columns} differences",
            f"{statistics.median(stat_walls):.2f}",
            f"{min(stat_walls):.2f}–{max(stat_walls):.2f}",
        ],
    ]
    command = shlex.join(["python", "benchmarks/compare_bench.py", *argv])
    section = "\n".join(
        [
            COMPARE_START,
            "## Comparing systems (compare_bench.py)",
            "",
            f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"rankmeter {git_state()}.",
            "",
            f"{args.systems} systems x {len(METRICS)} metrics ({', '.join(METRICS)}) x "
            f"{args.queries:,} queries ({args.depth} results each), {args.resamples:,} "
            "randomizations and bootstrap resamples, seed 0; in one process on loaded runs, "
            f"imports excluded; median of {args.repeat}. `compare` covers the joins, kernels, the "
            f"paired randomization test and BCa intervals for all {columns} differences and "
            f"{args.systems * len(METRICS)} means, the Holm correction, failure lists and "
            "metric@k curves (k = 1..100, three families).",
            "",
            *table(["step", "wall (s, median)", "min–max"], rows, "lrr"),
            "",
            COMPARE_END,
            "",
        ]
    )
    sys.stdout.write(section)
    write_section(args.out, section, COMPARE_START, COMPARE_END)
    log(f"wrote the compare section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
