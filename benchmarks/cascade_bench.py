"""Issue 24's cascade measures: their kernels beside the existing ones, and their references.

On one generated workload (see generate.py), read once and joined once as evaluate joins
(compact), each metric's kernel is timed alone (median of ``--repeat``): nDCG@10 and AP as the
yardstick, then ERR@10, nERR@10, RBP(p=0.8), RBP_resid(p=0.8) and Compat(p=0.95). The whole
evaluate of the five default metrics is timed with and without the five new ones, to show what
they add. Then the references on the same files, where they run in reasonable time: ir_measures'
Compat (pure Python) and RBP(p=0.8,rel=1) (cwl_eval), with the largest per-query difference
from rankmeter's values (the run is handed to them in rankmeter's order, tie-free).

    python benchmarks/cascade_bench.py --shape deep --scale 1 --repeat 5
    python benchmarks/cascade_bench.py --shape msmarco --scale 0.1 --no-references
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

OLD = ("nDCG@10", "P@10", "R@100", "RR", "AP")
NEW = ("ERR@10", "nERR@10", "RBP(p=0.8)", "RBP_resid(p=0.8)", "Compat(p=0.95)")


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def ordered_run(run: Any) -> dict[str, dict[str, float]]:
    """The run as {query: {doc: score}} in rankmeter's order, scores strictly decreasing."""
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.to_dict().items():
        ranked = sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)
        out[q] = {d: float(len(ranked) - i) for i, (d, _) in enumerate(ranked)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="deep", choices=list(generate.SHAPES))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=generate.DEFAULT_DATA_DIR)
    parser.add_argument("--no-references", action="store_true")
    args = parser.parse_args(argv)

    import rankmeter
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import parse_metric
    from rankmeter.metrics._ranked import join

    w = generate.generate(generate.workload(args.shape, scale=args.scale, data_dir=args.data_dir))
    qrels, run = read_qrels(w.qrels), read_run(w.run)
    ranked = join(qrels, run, compact=True)
    lines = [
        f"## Cascade measures: {args.shape} x{args.scale:g} ({ranked.n_queries:,} queries, "
        f"{int(ranked.num_ret.sum()):,} results, {len(qrels.grades):,} judgments; median of "
        f"{args.repeat})",
        "",
        "| kernel | ms |",
        "|---|---:|",
    ]
    for name in ("nDCG@10", "AP", *NEW):
        metric = parse_metric(name)
        ms = 1000 * median_time(lambda m=metric: m.compute(ranked), args.repeat)
        lines.append(f"| {name} | {ms:.1f} |")
    old = median_time(lambda: rankmeter.evaluate(qrels, run, list(OLD)), args.repeat)
    both = median_time(lambda: rankmeter.evaluate(qrels, run, [*OLD, *NEW]), args.repeat)
    lines += [
        "",
        f"evaluate, the five default metrics: {1000 * old:.0f} ms; with the five new ones too: "
        f"{1000 * both:.0f} ms",
    ]
    if not args.no_references:
        import ir_measures

        values = rankmeter.evaluate(qrels, run, ["Compat(p=0.95)", "RBP(p=0.8,rel=1)"])
        mine = values.per_query.to_dict()
        ordered = ordered_run(run)
        judgments = qrels.to_dict()
        lines += ["", "| reference | s | largest per-query difference |", "|---|---:|---:|"]
        for label, provider, name in (
            ("ir_measures Compat(p=0.95) (compat)", ir_measures.compat, "Compat(p=0.95)"),
            ("ir_measures RBP(p=0.8,rel=1) (cwl_eval)", ir_measures.cwl_eval, "RBP(p=0.8,rel=1)"),
        ):
            measure = ir_measures.parse_measure(name)
            started = time.perf_counter()
            found = {m.query_id: m.value for m in provider.iter_calc([measure], judgments, ordered)}
            took = time.perf_counter() - started
            worst = max(abs(row[name] - found[q]) for q, row in mine.items())
            lines.append(f"| {label} | {took:.2f} | {worst:.1e} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
