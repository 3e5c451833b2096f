"""How long the leaderboard's rank intervals take: 30 models x 10 datasets, 1,000 resamples.

Issue 24 asks for each model's rank interval from a paired bootstrap over each dataset's
queries in under a second for 1,000 resamples of 30 models on 10 datasets. The results are
built in memory (seeded): every model's per-query nDCG@10 on every dataset, its mean plus a
query effect shared by the models plus noise, so that the models are close (wide intervals,
as on MTEB) rather than trivially apart. Timed in this process (imports and a first untimed
pass excluded, median of --repeat): the bootstrap alone
(``rankmeter.vector._rank_intervals.rank_intervals`` on the leaderboard's inputs) and
``leaderboard_of`` end to end (the per-dataset randomization tests against the best, 10,000
sign flips each, included). The section goes to benchmarks/RESULTS.md between its leaderboard
markers.

    python benchmarks/leaderboard_bench.py [--models 30] [--datasets 10] [--queries 1000]
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
    DEFAULT_OUT,
    LEADERBOARD_END,
    LEADERBOARD_START,
    git_state,
    log,
    machine,
    table,
    write_section,
)

#: The target of issue 24: the bootstrap of 1,000 resamples, 30 models x 10 datasets.
TARGET_SECONDS = 1.0


def entries(models: int, datasets: int, queries: list[int], seed: int) -> list[Any]:
    import numpy as np

    from rankmeter.vector.leaderboard import LeaderboardEntry

    rng = np.random.default_rng(seed)
    means = rng.uniform(0.35, 0.55, models)
    made = []
    for d in range(datasets):
        n = queries[d % len(queries)]
        effect = rng.uniform(-0.25, 0.25, n)
        for m in range(models):
            values = np.clip(means[m] + effect + rng.normal(0, 0.15, n), 0, 1)
            per_query = {f"q{i}": {"nDCG@10": float(v)} for i, v in enumerate(values)}
            made.append(
                LeaderboardEntry(
                    f"model-{m:02d}", f"dataset-{d:02d}", {"nDCG@10": float(values.mean())},
                    per_query,
                )
            )  # fmt: skip
    return made


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--datasets", type=int, default=10)
    parser.add_argument(
        "--queries", type=int, nargs="+", default=[1000],
        help="queries per dataset (several: taken in turn by the datasets)",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    from rankmeter.vector._rank_intervals import rank_intervals
    from rankmeter.vector.leaderboard import _per_query_values, leaderboard_of

    log(f"building {args.models} models x {args.datasets} datasets")
    made = entries(args.models, args.datasets, args.queries, seed=1)
    board = leaderboard_of(made, resamples=args.resamples)  # untimed: imports, caches
    by_key = {(e.model, e.dataset): e for e in made}
    values = _per_query_values(by_key, board.metric)
    boot, whole = [], []
    for i in range(args.repeat):
        log(f"pass {i + 1} of {args.repeat}")
        start = time.perf_counter()
        ranks = rank_intervals(
            values, board.scores, board.models, board.mean_rank, resamples=args.resamples
        )
        boot.append(time.perf_counter() - start)
        start = time.perf_counter()
        again = leaderboard_of(made, resamples=args.resamples)
        whole.append(time.perf_counter() - start)
    assert board.ranks is not None and again.ranks == board.ranks
    assert dict(ranks.interval) == dict(board.ranks.interval)
    widths = [high - low for low, high in board.ranks.interval.values()]
    groups = len(set(board.ranks.group.values()))
    median = statistics.median(boot)
    sizes = ", ".join(f"{n:,}" for n in args.queries)
    rows = [
        [
            "rank intervals (the bootstrap alone)",
            f"{median:.3f}",
            f"{min(boot):.3f}–{max(boot):.3f}",
        ],
        [
            "leaderboard_of (randomization tests and intervals)",
            f"{statistics.median(whole):.3f}",
            f"{min(whole):.3f}–{max(whole):.3f}",
        ],
    ]
    met = "met" if median < TARGET_SECONDS else "NOT met"
    command = shlex.join(["python", "benchmarks/leaderboard_bench.py", *argv])
    section = "\n".join(
        [
            LEADERBOARD_START,
            "## Leaderboard rank intervals (leaderboard_bench.py)",
            "",
            f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"rankmeter {git_state()}.",
            "",
            *machine()[:2],
            f"- {args.models} models x {args.datasets} datasets of {sizes} queries each "
            f"(per-query nDCG@10, seeded, models close together), {args.resamples:,} paired "
            f"bootstrap resamples of each dataset's queries, seed 0; in one process, imports "
            f"and a first pass excluded; median of {args.repeat}.",
            "",
            *table(["step", "wall (s, median)", "min–max"], rows, "lrr"),
            "",
            f"- Target (issue 24): the bootstrap of {args.resamples:,} resamples in under "
            f"{TARGET_SECONDS:g} s: {median:.3f} s, {met}.",
            f"- What it found on these close models: median interval width "
            f"{statistics.median(widths):g} ranks, {groups} groups of {args.models} models.",
            "",
            LEADERBOARD_END,
            "",
        ]
    )
    sys.stdout.write(section)
    write_section(args.out, section, LEADERBOARD_START, LEADERBOARD_END)
    log(f"wrote the leaderboard section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
