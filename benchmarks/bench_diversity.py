"""Diversity metrics against nDCG@k on the same run (issue 24: within 3x of nDCG@k's time).

One process builds seeded subtopic qrels and a run (``--queries`` x ``--depth`` results; each
query with ``--judged`` judged documents, each judged for 1 to 3 of its ``--subtopics``
subtopics, grades 0-2) and times, the cases taking turns, medians of ``--repeat``:

- ``evaluate``: ``rankmeter.evaluate(qrels, run, [metric])`` whole (the join, the kernel and
  the run's Judged@k), per metric;
- ``kernel``: the metric's kernel alone on a fresh compact join (the join is not timed; the
  diversity kernels cache per join, so each pass gets a new one).

Each is given as a ratio to nDCG@20's time in the same pass. The section goes to stdout and
between ``<!-- diversity:start -->`` and ``<!-- diversity:end -->`` in benchmarks/RESULTS.md.

    python benchmarks/bench_diversity.py                      # 10,000 x 100, 5 passes
    python benchmarks/bench_diversity.py --queries 1000 --repeat 3 --out /tmp/D.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

from run import (  # noqa: E402
    DEFAULT_OUT,
    DIVERSITY_END,
    DIVERSITY_START,
    fmt_ratio,
    fmt_seconds,
    git_state,
    log,
    table,
    write_section,
)

START, END = DIVERSITY_START, DIVERSITY_END
GOAL = 3.0
METRICS = ("nDCG@20", "alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "StRecall@20")


def make(queries: int, depth: int, judged: int, subtopics: int, seed: int) -> tuple[Any, Any]:
    """Seeded subtopic qrels and a run: every judged document is retrieved, among unjudged
    ones, in a random order."""
    import numpy as np

    from rankmeter.data import Qrels, Run

    rng = np.random.default_rng(seed)
    n_pairs = queries * judged
    per_doc = rng.integers(1, 4, size=n_pairs)  # subtopics each judged document has
    q = np.repeat(np.arange(queries), judged)
    d = np.tile(np.arange(judged), queries)
    line_q, line_d = np.repeat(q, per_doc), np.repeat(d, per_doc)
    # distinct subtopics of one document: offsets from a random start, mod the subtopic count
    start = np.repeat(rng.integers(0, subtopics, size=n_pairs), per_doc)
    step = np.arange(len(line_q)) - np.repeat(np.cumsum(per_doc) - per_doc, per_doc)
    line_s = (start + step) % subtopics
    grades = rng.choice([0, 0, 1, 1, 2], size=len(line_q))
    qids = line_q.astype(str).astype(object)
    qrels = Qrels.from_subtopic_columns(
        qids, line_s.astype(str).astype(object), ("d" + line_d.astype(str)).astype(object), grades
    )
    docs = np.tile(np.arange(depth), queries)
    order = np.argsort(rng.random((queries, depth)), axis=1).ravel()
    run_docs = np.where(docs < judged, "d", "u").astype(object) + docs.astype(str).astype(object)
    run = Run.from_columns(
        np.repeat(np.arange(queries), depth).astype(str).astype(object),
        run_docs,
        (depth - order).astype(float),
        name="bench",
    )
    return qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--judged", type=int, default=30)
    parser.add_argument("--subtopics", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    import rankmeter
    from rankmeter.data._compiled import native_available
    from rankmeter.metrics import join, parse_metric

    log(f"making {args.queries:,} queries x {args.depth} results")
    qrels, run = make(args.queries, args.depth, args.judged, args.subtopics, args.seed)
    metrics = [parse_metric(m) for m in METRICS]
    whole: dict[str, list[float]] = {m: [] for m in METRICS}
    kernel: dict[str, list[float]] = {m: [] for m in METRICS}
    for metric in metrics:  # a pass untimed: lookups the first join builds, imports
        rankmeter.evaluate(qrels, run, [metric])
    for i in range(args.repeat):
        log(f"pass {i + 1}/{args.repeat}")
        for metric in metrics:
            began = time.perf_counter()
            rankmeter.evaluate(qrels, run, [metric])
            whole[metric.label].append(time.perf_counter() - began)
            ranked = join(qrels, run, compact=True)
            began = time.perf_counter()
            metric.compute(ranked)
            kernel[metric.label].append(time.perf_counter() - began)
    med_whole = {m: statistics.median(v) for m, v in whole.items()}
    med_kernel = {m: statistics.median(v) for m, v in kernel.items()}
    rows = [
        [
            m,
            fmt_seconds(med_whole[m]),
            fmt_ratio(med_whole[m] / med_whole["nDCG@20"]),
            f"{med_kernel[m] * 1000:.1f}",
            fmt_ratio(med_kernel[m] / med_kernel["nDCG@20"]),
            ""
            if m == "nDCG@20"
            else ("yes" if med_whole[m] / med_whole["nDCG@20"] <= GOAL else "no"),
            ""
            if m == "nDCG@20"
            else ("yes" if med_kernel[m] / med_kernel["nDCG@20"] <= GOAL else "no"),
        ]
        for m in METRICS
    ]
    lines = [
        START,
        "## Diversity metrics against nDCG@20 (bench_diversity.py)",
        "",
        f"{args.queries:,} queries × {args.depth} results; subtopic qrels of {args.judged} judged "
        f"documents a query, each judged for 1-3 of {args.subtopics} subtopics (grades 0-2); "
        f"medians of {args.repeat} passes in one process, the cases taking turns; the compiled "
        f"loops {'in use' if native_available() else 'not built (NumPy)'}. "
        f"{dt.date.today().isoformat()}, {git_state()}.",
        "",
        *table(
            [
                "metric",
                "evaluate (s)",
                "÷ nDCG@20",
                "kernel (ms)",
                "÷ nDCG@20",
                "evaluate ≤ 3×",
                "kernel ≤ 3×",
            ],
            rows,
            align="lrrrrll",
        ),
        "",
        "evaluate: the whole call (the join, the kernel, the run's Judged@k); kernel: the "
        "metric's kernel on a compact join made beforehand (not timed; nDCG's ideal, its "
        "judgments sorted by grade, is made in the join, the diversity metrics' in the kernel). "
        "The kernels read every judgment's subtopics (each query's N) and the top k's, and "
        "alpha-nDCG and nERR-IA build ndeval's greedy ideal, k steps over each query's "
        "judgments (compiled: rankmeter.data.key_loops).",
        END,
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    write_section(args.out, section, START, END)


if __name__ == "__main__":
    main()
