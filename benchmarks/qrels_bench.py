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
``benchmarks/data/qrels-scaling-2/`` with pyarrow's CSV writer. The section goes to stdout and
between ``<!-- qrels:start -->`` and ``<!-- qrels:end -->`` in benchmarks/RESULTS.md.

    python benchmarks/qrels_bench.py                        # N = 1M and 10M, 3 passes
    python benchmarks/qrels_bench.py --lines 1000000 --repeat 5 --out /tmp/Q.md
    python benchmarks/qrels_bench.py --baseline /tmp/older/src  # and another checkout
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any

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
DATA = HERE / "data" / "qrels-scaling-2"  # (-2: numeric ids, written in chunks)
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
    """The three files of ``lines`` lines (made once; seeded), written a million lines at a
    time (bounded memory). Ids are numbers, as MS MARCO's are; every doc id is distinct."""
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
    step = 1_000_000

    def constant(text: str, n: int) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(np.zeros(n, dtype=np.int32), [text])

    for case, path in paths.items():
        if path.exists():
            continue
        log(f"writing {path}")
        rng = np.random.default_rng(22)
        docs = rng.permutation(lines) * 7 + 11  # distinct: no document twice in a query
        depth = {"qrels": 1, "run/10": 10, "run/1": 1}[case]
        queries = np.repeat(rng.permutation(lines // depth) + 1, depth)
        partial = path.with_suffix(".partial")
        with csv.CSVWriter(partial, SCHEMAS[case], write_options=options) as writer:
            for at in range(0, len(queries), step):
                qid = queries[at : at + step]
                n = len(qid)
                if case == "qrels":
                    columns = [qid, constant("0", n), docs[at : at + n], rng.integers(0, 2, n)]
                else:
                    rank = np.arange(at, at + n) % depth + 1
                    score = np.round(100.0 - rank / 7, 4)
                    columns = [qid, constant("Q0", n), docs[at : at + n], rank, score]
                    columns.append(constant("bench", n))
                writer.write_table(pa.table(columns, schema=SCHEMAS[case]))
        os.replace(partial, path)
    return paths


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    word = pa.dictionary(pa.int32(), pa.string())
    qrels = pa.schema(
        [("qid", pa.int64()), ("iter", word), ("docid", pa.int64()), ("grade", pa.int64())]
    )
    run = pa.schema(
        [
            ("qid", pa.int64()),
            ("Q0", word),
            ("docid", pa.int64()),
            ("rank", pa.int64()),
            ("score", pa.float64()),
            ("tag", word),
        ]
    )
    return {"qrels": qrels, "run/10": run, "run/1": run}


SCHEMAS = _schemas()


def measure_sizes(
    lines: int, files: dict[str, Path], sources: dict[str, Path], args: argparse.Namespace
) -> tuple[list[list[str]], list[str]]:
    """Each case read by each source, ``args.repeat`` times in turn: the table's rows and the
    verdicts on issue 22's goals."""
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    failed: dict[tuple[str, str], str] = {}
    for _ in range(args.repeat):
        for label, src in sources.items():
            env = {**os.environ, "PYTHONPATH": str(src)}
            for case in CASES:  # taking turns spreads the machine's noise over the cases
                key = (label, case)
                if key in failed:
                    continue
                kind = "qrels" if case == "qrels" else "run"
                m = measure(
                    [sys.executable, "-c", READ, kind, str(files[case])],
                    env=env,
                    timeout=args.timeout,
                )
                if not m.ok:
                    failed[key] = m.error or f"exit {m.status}"
                    continue
                got.setdefault(key, []).append((m.wall, m.rss))
                log(f"{lines:,} {label} {case}: {m.wall:.2f} s, {m.rss / 2**20:,.0f} MB")
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for label in sources:
        wall = {
            c: statistics.median(w for w, _ in got[label, c]) for c in CASES if (label, c) in got
        }
        rss = {
            c: statistics.median(r for _, r in got[label, c]) for c in CASES if (label, c) in got
        }
        for case in CASES:
            if (label, case) in failed:
                rows.append([f"{lines:,}", label, case, "failed", "", "", failed[label, case][:80]])
                continue
            base = wall.get("run/10")
            rows.append(
                [
                    f"{lines:,}",
                    label,
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
                    f"N = {lines:,}, {label}: {what} ÷ a run of N/10 queries = "
                    f"{fmt_ratio(ratio)} (goal ≤ {GOAL:g}×: {met})"
                )
    return rows, verdicts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Qrels against runs of as many lines.")
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--src", type=Path, default=SRC, help="rankmeter sources to measure")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="other sources measured in the same run"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    measured = git_state() if args.src == SRC else f"sources in {args.src}"
    sources = {"this": args.src}
    if args.baseline is not None:
        sources["baseline"] = args.baseline
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for lines in args.lines:
        files = make_files(lines, args.data_dir)
        more_rows, more_verdicts = measure_sizes(lines, files, sources, args)
        rows += more_rows
        verdicts += more_verdicts

    command = shlex.join(["python", "benchmarks/qrels_bench.py", *argv])
    header = ["N lines", "sources", "file", "wall s", "peak MB", "÷ run/10", "holds"]
    baseline = (
        f" The baseline, sources in `{args.baseline}`, was measured in the same run, in turn."
        if args.baseline is not None
        else ""
    )
    section = "\n".join(
        [
            QRELS_START,
            "## Qrels against runs of as many lines (qrels_bench.py)",
            "",
            f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f'rankmeter {measured} ("this"). Each file read whole (`read_qrels` / `read_run`) '
            f"in a fresh process; median wall and peak RSS of {args.repeat} (the cases take "
            "turns). qrels: N lines, one judgment per query (as click labels are); run/10: N "
            f"lines, 10 results per query; run/1: N lines, one result per query.{baseline}",
            "",
            *table(header, rows, "lllrrrl"),
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
