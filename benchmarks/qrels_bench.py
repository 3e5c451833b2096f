"""Reading qrels scales like reading runs (issue 22, item 17).

Click labels give a qrels file of one judgment per query: N lines, N queries. Issue 22 found
such a file read far slower than a run of as many lines (10M lines: 176 s and 4.2 GB). This
script times, for each N of ``--lines``, three files read whole by rankmeter (``read_qrels`` /
``read_run``, each in a fresh process started by a small spawner, so its peak RSS is its own:
see ``run.measure``):

- ``qrels``: N lines ``qid 0 docid grade``, N queries (one judgment each, shuffled);
- ``run/10``: N lines ``qid Q0 docid rank score tag``, N/10 queries of 10 results;
- ``run/1``: N lines, N queries of one result each.

and two ratios, each from the same run (the cases take turns; medians of ``--repeat``):

- qrels ÷ run/10 (goal: at most 3x): the qrels read as fast as a run of as many lines;
- run/1 ÷ run/10 (goal: at most 3x): a run's cost per query stays small.

The files are made once (seeded, byte-identical for the same arguments) under
``benchmarks/data/qrels-scaling/`` with pyarrow's CSV writer. The section goes to stdout and
between ``<!-- qrels:start -->`` and ``<!-- qrels:end -->`` in benchmarks/RESULTS.md.

    python benchmarks/qrels_bench.py                        # N = 1M and 10M, 3 passes
    python benchmarks/qrels_bench.py --lines 1000000 --repeat 5 --out /tmp/Q.md
    python benchmarks/qrels_bench.py --src /tmp/older/src  # another checkout, to compare
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

from run import (  # noqa: E402
    DEFAULT_OUT,
    QRELS_END,
    QRELS_START,
    fmt_mb,
    fmt_ratio,
    fmt_seconds,
    git_state,
    log,
    measure,
    table,
    write_section,
)

SRC = HERE.parent / "src"
DATA = HERE / "data" / "qrels-scaling"
GOAL = 3.0  # issue 22's bound on both ratios

#: What each case's process does with the file (path in argv[2]); it prints JSON.
READ = """
import json, sys
from rankmeter.io import read_qrels, read_run
kind, path = sys.argv[1], sys.argv[2]
data = read_qrels(path) if kind == "qrels" else read_run(path)
print(json.dumps({"rows": len(data), "queries": data.n_queries}))
"""
CASES = ("qrels", "run/10", "run/1")


def make_files(lines: int, folder: Path) -> dict[str, Path]:
    """The three files of ``lines`` lines (made once; seeded)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "qrels": folder / f"qrels-{lines}.txt",
        "run/10": folder / f"run10-{lines}.txt",
        "run/1": folder / f"run1-{lines}.txt",
    }
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    rng = np.random.default_rng(22)
    docs = rng.permutation(lines) * 7 + 11  # distinct: no document twice in a query
    for case, path in paths.items():
        if path.exists():
            continue
        log(f"writing {path}")
        if case == "qrels":
            columns = {
                "qid": (rng.permutation(lines) + 1).astype(str),
                "iter": np.zeros(lines, dtype=np.int64),
                "docid": np.char.add("D", docs.astype(str)),
                "grade": rng.integers(0, 2, lines),
            }
        else:
            depth = 10 if case == "run/10" else 1
            queries = lines // depth
            rank = np.tile(np.arange(1, depth + 1), queries)
            columns = {
                "qid": np.repeat(rng.permutation(queries) + 1, depth).astype(str),
                "Q0": np.full(lines, "Q0"),
                "docid": np.char.add("D", docs[: queries * depth].astype(str)),
                "rank": rank,
                "score": np.round(100.0 - rank / 7, 4),
                "tag": np.full(lines, "bench"),
            }
        partial = path.with_suffix(".partial")
        csv.write_csv(pa.table(columns), partial, write_options=options)
        os.replace(partial, path)
    return paths


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Qrels against runs of as many lines.")
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--src", type=Path, default=SRC, help="rankmeter sources to measure")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    env = {**os.environ, "PYTHONPATH": str(args.src)}
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for lines in args.lines:
        files = make_files(lines, args.data_dir)
        got: dict[str, list[tuple[float, float]]] = {case: [] for case in CASES}
        failed: dict[str, str] = {}
        for _ in range(args.repeat):
            for case in CASES:  # taking turns spreads the machine's noise over the cases
                if case in failed:
                    continue
                kind = "qrels" if case == "qrels" else "run"
                m = measure(
                    [sys.executable, "-c", READ, kind, str(files[case])],
                    env=env,
                    timeout=args.timeout,
                )
                if not m.ok:
                    failed[case] = m.error or f"exit {m.status}"
                    continue
                got[case].append((m.wall, m.rss))
                log(f"{lines:,} {case}: {m.wall:.2f} s, {m.rss / 2**20:,.0f} MB")
        wall = {c: statistics.median(w for w, _ in got[c]) for c in CASES if got[c]}
        rss = {c: statistics.median(r for _, r in got[c]) for c in CASES if got[c]}
        for case in CASES:
            if case in failed:
                rows.append([f"{lines:,}", case, "failed", "", "", failed[case][:80]])
                continue
            base = wall.get("run/10")
            rows.append(
                [
                    f"{lines:,}",
                    case,
                    fmt_seconds(wall[case]),
                    fmt_mb(rss[case]),
                    fmt_ratio(wall[case] / base) if base else "",
                    f"{(lines if case != 'run/10' else lines // 10):,} queries",
                ]
            )
        for case, what in (("qrels", "qrels"), ("run/1", "a run of N queries")):
            if case in wall and "run/10" in wall:
                ratio = wall[case] / wall["run/10"]
                met = "met" if ratio <= GOAL else "NOT met"
                verdicts.append(
                    f"N = {lines:,}: {what} ÷ a run of N/10 queries = {fmt_ratio(ratio)} "
                    f"(goal ≤ {GOAL:g}×: {met})"
                )

    command = shlex.join(["python", "benchmarks/qrels_bench.py", *argv])
    measured = git_state() if args.src == SRC else f"sources in {args.src}"
    header = ["N lines", "file", "wall s", "peak MB", "÷ run/10", "holds"]
    section = "\n".join(
        [
            QRELS_START,
            "## Qrels against runs of as many lines (qrels_bench.py)",
            "",
            f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"rankmeter {measured}. Each file read whole (`read_qrels` / `read_run`) in a "
            f"fresh process; median wall and peak RSS of {args.repeat} (the cases take turns). "
            "qrels: N lines, one judgment per query (as click labels are); run/10: N lines, "
            "10 results per query; run/1: N lines, one result per query.",
            "",
            *table(header, rows, "llrrrl"),
            "",
            *(f"- {v}" for v in verdicts),
            "",
            QRELS_END,
        ]
    )
    sys.stdout.write(section + "\n")
    write_section(args.out, section, QRELS_START, QRELS_END)
    log(f"wrote the qrels section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
