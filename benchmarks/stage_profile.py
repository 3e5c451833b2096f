"""Where rankmeter's time goes: stage timings and a cProfile of the evaluation pipeline.

Runs rankmeter's own pipeline in this process on one generated workload, stage by stage:

- read: the file's bytes (``rankmeter.io._source.Source``)
- parse: the TREC reader's Arrow CSV pass (``rankmeter.io.trec``)
- construction: ``Qrels.from_columns`` / ``Run.from_columns`` (interning, checks, the rank sort),
  also broken down into its steps when the private helpers are where this script expects them
- join: ``rankmeter.metrics._ranked.join``
- kernels: ``Metric.compute`` for each metric
- ``evaluate()`` on loaded objects (join + kernels + the result object)

then the import cost of a fresh process, and a cProfile of ``evaluate(read_qrels, read_run)``.
The report goes to stdout and into the profile section of benchmarks/RESULTS.md (replaced
atomically; run.py keeps that section when it rewrites the rest).

    python benchmarks/stage_profile.py --shape msmarco --scale 0.1
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file's name shadows the standard library's `profile`, which cProfile imports: take this
# folder off the path until cProfile has its own `profile`, then put it back at the end.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import cProfile  # noqa: E402
import datetime as dt  # noqa: E402
import gc  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

sys.path.append(str(HERE))

import generate  # noqa: E402
from run import (  # noqa: E402
    DEFAULT_OUT,
    PROFILE_END,
    PROFILE_START,
    fmt_seconds,
    git_state,
    log,
    measure,
    table,
    write_section,
)
from tools import METRICS  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Stages:
    """Wall and CPU time of named stages, over repetitions, and the RSS high-water mark."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.peak: dict[str, float] = {}
        self.group: dict[str, str] = {}
        self.notes: list[str] = []

    def time(self, group: str, name: str, work: Callable[[], Any]) -> Any:
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        value = work()
        self.wall.setdefault(name, []).append(time.perf_counter() - wall)
        self.cpu.setdefault(name, []).append(time.process_time() - cpu)
        self.peak[name] = peak_mb()
        self.group[name] = group
        return value

    def median(self, name: str) -> float:
        return statistics.median(self.wall[name])


def run_stages(w: generate.Workload, stages: Stages) -> None:
    """One pass over the pipeline, every stage timed."""
    import rankmeter
    from rankmeter.data import Qrels, Run
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import parse_metrics
    from rankmeter.metrics._ranked import join

    measures = parse_metrics(list(METRICS))
    try:  # the reader's internals, for the parse / construction split
        from rankmeter.io import trec
        from rankmeter.io._source import Source

        read, qrels_layout, run_layout = trec._read, trec.QRELS_LAYOUT, trec.RUN_LAYOUT
    except (ImportError, AttributeError) as exc:
        stages.notes.append(f"parse and construction are timed together ({exc})")
        qrels = stages.time(
            "qrels", "qrels: read_qrels (read, parse, construct)", lambda: read_qrels(w.qrels)
        )
        run = stages.time("run", "run: read_run (read, parse, construct)", lambda: read_run(w.run))
    else:
        q_source = Source(w.qrels)
        stages.time("qrels", "qrels: read bytes", lambda: q_source.data)
        q_columns = stages.time(
            "qrels", "qrels: parse (Arrow CSV)", lambda: read(q_source, qrels_layout)
        )
        qrels = stages.time(
            "qrels",
            "qrels: Qrels.from_columns (intern, sort)",
            lambda: Qrels.from_columns(q_columns["qid"], q_columns["docid"], q_columns["grade"]),
        )
        r_source = Source(w.run)
        stages.time("run", "run: read bytes", lambda: r_source.data)
        r_columns = stages.time("run", "run: parse (Arrow CSV)", lambda: read(r_source, run_layout))
        try:
            run_steps(stages, r_columns)
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            stages.notes.append(f"Run.from_columns is timed as a whole ({exc!r})")
        run = stages.time(
            "total",
            "run: Run.from_columns (all of its steps)",
            lambda: Run.from_columns(r_columns["qid"], r_columns["docid"], r_columns["score"]),
        )

    lookup = getattr(qrels, "doc_lookup", None)
    if lookup is not None:
        qrels._doc_lookup = None  # built once per Qrels, then reused by every join
        stages.time("evaluate", "join: qrels doc lookup table (once per qrels)", lookup)
    ranked = stages.time("evaluate", "join (metrics._ranked.join)", lambda: join(qrels, run))
    for m in measures:
        stages.time("evaluate", f"kernel {m}", lambda m=m: m.compute(ranked))
    stages.time(
        "total",
        "evaluate(qrels, run) on loaded objects",
        lambda: rankmeter.evaluate(qrels, run, list(METRICS)),
    )


def run_steps(stages: Stages, columns: dict[str, Any]) -> None:
    """Run.from_columns step by step, through the same private helpers in the same order."""
    import numpy as np

    from rankmeter.data import _inputs, csr, hashing, ids
    from rankmeter.data import origin as origins
    from rankmeter.data import run as r

    origin = origins.Origin("<profile>")
    q_codes, q_vocab = stages.time(
        "run",
        "run: group queries (intern_grouped)",
        lambda: ids.intern_grouped(columns["qid"], origin, "query id"),
    )
    docs = stages.time(
        "run",
        "run: check doc ids",
        lambda: _inputs.string_column(columns["docid"], origin, "doc id"),
    )
    values = stages.time(
        "run",
        "run: scores to float64",
        lambda: _inputs.as_float_column(columns["score"], origin, "score", allow_inf=True),
    )
    rows = np.arange(len(values), dtype=np.int64)
    hashes = stages.time(
        "run", "run: hash doc ids (string_hashes)", lambda: hashing.string_hashes(docs)
    )
    order, tied_at, tied_from = stages.time(
        "run",
        "run: rank order and ties (_rank_order)",
        lambda: r._rank_order(q_codes, docs, values, rows, "trec_eval", rows_ascending=True),
    )

    def apply() -> Any:
        q, v, i, h = q_codes, values, rows, hashes
        if order is not None:
            q, v, i, h = q[order], v[order], order, h[order]
        if tied_at is not None:
            for column in (v, i, h):
                column[tied_at] = column[tied_from]
        return q, h

    q, h = stages.time("run", "run: put rows in rank order", apply)
    offsets = csr.offsets_from_sorted(q, len(q_vocab))
    stages.time(
        "run", "run: duplicate check (segments_repeat)", lambda: csr.segments_repeat(offsets, h)
    )


def stream_split(w: generate.Workload) -> tuple[float, float, float]:
    """The default (streamed) evaluation: (wall, time the evaluating thread waited for the
    parsing thread, peak RSS so far)."""
    import rankmeter
    from rankmeter.io import stream

    waited = [0.0]
    original = stream._tables

    def timed(source: Any) -> Any:
        pieces = original(source)
        while True:
            start = time.perf_counter()
            try:
                piece = next(pieces)
            except StopIteration:
                waited[0] += time.perf_counter() - start
                return
            waited[0] += time.perf_counter() - start
            yield piece

    stream._tables = timed
    try:
        start = time.perf_counter()
        rankmeter.evaluate(str(w.qrels), str(w.run), list(METRICS))
        wall = time.perf_counter() - start
    finally:
        stream._tables = original
    return wall, waited[0], peak_mb()


def stream_paragraph(streamed: list[tuple[float, float, float]]) -> list[str]:
    if not streamed:
        return []
    wall = statistics.median(x[0] for x in streamed)
    waited = statistics.median(x[1] for x in streamed)
    return [
        "The default path, `evaluate(qrels_path, run_path)` (what the CLI does): the run is "
        "streamed: one background thread parses the next pieces of the file, another builds "
        "each chunk's Run (grouping, hashing, rank order, duplicate check), while the calling "
        f"thread joins and evaluates the current chunk. Median of {len(streamed)}: {wall:.3f} s "
        "wall, of "
        f"which the evaluating thread waited {waited:.3f} s for parsed pieces "
        f"({waited / wall:.0%}; the rest is the join and the kernels, overlapped with parsing "
        "and construction). "
        + (
            "Parsing is off the critical path: the stages above after the parse are what to "
            "attack next."
            if waited < 0.3 * wall
            else "Parsing is still on the critical path here."
        ),
        "",
    ]


def import_costs(repeat: int) -> list[list[str]]:
    python = sys.executable
    rows = []
    for label, code in (
        ("interpreter alone", "pass"),
        ("rankmeter's front door (lazy)", "import rankmeter"),
        ("NumPy and Arrow", "import numpy, pyarrow, pyarrow.csv, pyarrow.compute"),
        ("the API's path (evaluate, io)", "import rankmeter, rankmeter.io; rankmeter.evaluate"),
        (
            "the CLI's path (cli, evaluate, io)",
            "import rankmeter, rankmeter.cli, rankmeter.io; rankmeter.evaluate",
        ),
    ):
        runs = [measure([python, "-c", code], json_output=False) for _ in range(repeat)]
        good = [m for m in runs if m.status == 0]
        if not good:
            rows.append([label, "failed", "", runs[0].error])
            continue
        wall = statistics.median(m.wall for m in good)
        rss = statistics.median(m.rss for m in good) / 2**20
        rows.append([label, fmt_seconds(wall), f"{rss:.0f}", f"`python -c {shlex.quote(code)}`"])
    return rows


def cli_imports(data_dir: Path, top: int) -> tuple[float, list[Row]]:
    """What a 2-query ``rankmeter evaluate`` imports: ``python -X importtime``, top-level
    modules by cumulative time (microseconds in the output, seconds here)."""
    import subprocess

    w = generate.generate(generate.workload("two", data_dir=data_dir))
    argv = ["rankmeter", "evaluate", str(w.qrels), str(w.run), "-f", "json"]
    code = f"import sys; sys.argv = {argv!r}; from rankmeter.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    entries = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name.startswith("  ") or not cumulative.strip().isdigit():
            continue  # imported by another module: counted in that module's cumulative time
        entries.append((int(cumulative) / 1e6, name.strip()))
    total = sum(seconds for seconds, _ in entries)
    entries.sort(reverse=True)
    return total, [[f"`{name}`", f"{seconds:.3f}"] for seconds, name in entries[:top]]


#: Functions whose direct callees are listed (path suffix, function name, label).
BREAKDOWNS = (
    ("rankmeter/io/trec.py", "read_trec_run", "read_trec_run (parse + Run construction)"),
    ("rankmeter/data/run.py", "from_columns", "Run.from_columns"),
    ("rankmeter/data/qrels.py", "from_columns", "Qrels.from_columns"),
    ("rankmeter/metrics/_ranked.py", "join", "join"),
)

Key = tuple[str, int, str]
Row = list[str]


class Profile:
    """cProfile of one evaluation, read three ways."""

    def __init__(self, work: Callable[[], Any]) -> None:
        profiler = cProfile.Profile()
        profiler.enable()
        work()
        profiler.disable()
        # {(path, line, function): (primitive calls, calls, own, cumulative, callers)}
        self.stats: dict[Key, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]

    def by_own_time(self, top: int) -> list[Row]:
        entries = sorted(self.stats.items(), key=lambda kv: -kv[1][2])[:top]
        return [_row(key, v[1], v[2], v[3]) for key, v in entries]

    def ours_by_cumulative(self, top: int) -> list[Row]:
        ours = [(k, v) for k, v in self.stats.items() if "rankmeter/" in k[0].replace("\\", "/")]
        entries = sorted(ours, key=lambda kv: -kv[1][3])[:top]
        return [_row(key, v[1], v[2], v[3]) for key, v in entries]

    def callees(self, path_suffix: str, function: str) -> tuple[float, list[Row]] | None:
        """The direct callees of one function: the time spent in each when called from it."""
        targets = [
            k
            for k in self.stats
            if k[2] == function and k[0].replace("\\", "/").endswith(path_suffix)
        ]
        if not targets:
            return None
        total = sum(self.stats[k][3] for k in targets)
        rows = []
        for key, (_, _, _, _, callers) in self.stats.items():
            edges = [callers[t] for t in targets if t in callers]
            if not edges:
                continue
            calls = sum(e[1] for e in edges)
            cumulative = sum(e[3] for e in edges)
            rows.append((cumulative, key, calls))
        own = sum(self.stats[k][2] for k in targets)
        rows.sort(key=lambda r: -r[0])
        out = [
            [f"`{_where(*key)}`", str(calls), f"{cum:.3f}", f"{cum / total:.0%}" if total else ""]
            for cum, key, calls in rows
            if cum >= 0.001 or len(rows) <= 12
        ][:15]
        out.append(
            ["(own code of the function)", "", f"{own:.3f}", f"{own / total:.0%}" if total else ""]
        )
        return total, out


def _row(key: Key, calls: int, own: float, cumulative: float) -> Row:
    return [f"`{_where(*key)}`", str(calls), f"{own:.3f}", f"{cumulative:.3f}"]


def _where(path: str, line: int, function: str) -> str:
    if path == "~":  # a built-in
        return function.replace("|", "/")
    path = path.replace("\\", "/")
    marker = "site-packages/"
    if marker in path:
        path = path.split(marker, 1)[1]
    elif "/src/" in path:
        path = path.split("/src/", 1)[1]
    return f"{path}:{line} {function}"


def render(
    args: argparse.Namespace,
    command: str,
    w: generate.Workload,
    stages: Stages,
    imports: list[Row],
    cli: tuple[float, list[Row]],
    profile: Profile,
    default: Profile,
    streamed: list[tuple[float, float, float]],
) -> str:
    shape = generate.SHAPES[w.shape]
    queries = generate.n_queries(shape, w.scale)
    names = list(stages.wall)
    parts = [n for n in names if stages.group[n] != "total"]
    accounted = sum(stages.median(n) for n in parts)
    rows = []
    for n in names:
        wall = stages.median(n)
        share = f"{wall / accounted:.0%}" if n in parts and accounted else ""
        cpu = statistics.median(stages.cpu[n])
        rows.append([n, fmt_seconds(wall), share, fmt_seconds(cpu), f"{stages.peak[n]:,.0f}"])
    rows.append(
        ["sum of the stages (without the rows in full)", fmt_seconds(accounted), "100%", "", ""]
    )
    out = [
        PROFILE_START,
        "## Where the time goes (stage_profile.py)",
        "",
        f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"rankmeter {args.source_state}.",
        "",
        f"Workload: {w.shape}, {queries:,} queries × {shape.depth:,} results "
        f"({queries * shape.depth:,} run lines), `{w.directory.name}/`. Stages of rankmeter's "
        f"pipeline in one process (imports excluded), median of {args.repeat} passes; CPU > wall "
        "where Arrow uses several threads; peak RSS is the process's high-water mark so far.",
        "",
        *table(["stage", "wall (s)", "share", "CPU (s)", "peak RSS so far (MB)"], rows, "lrrrr"),
        "",
        *(f"- {note}" for note in stages.notes),
        *([""] if stages.notes else []),
        *stream_paragraph(streamed),
        f"Import cost: one fresh process per row (wall, median of {args.repeat}):",
        "",
        *table(["imports", "wall (s)", "peak RSS (MB)", "command"], imports, "lrrl"),
        "",
        f"What a 2-query `rankmeter evaluate ... -f json` imports (`python -X importtime`; "
        f"{cli[0]:.3f} s in all), top-level imports by cumulative time:",
        "",
        *table(["module", "cumulative (s)"], cli[1], "lr"),
        "",
        f"cProfile of the whole-file path, `evaluate(read_qrels(...), read_run(...), "
        f"{list(METRICS)})` (profiling slows Python code more than C code; read shares, not "
        "seconds).",
        "",
    ]
    for suffix, function, label in BREAKDOWNS:
        found = profile.callees(suffix, function)
        if found is None:
            out += [f"- {label}: not found in the profile ({suffix} {function})", ""]
            continue
        total, callee_rows = found
        out += [
            f"Inside {label} ({total:.3f} s under the profiler), by direct callee:",
            "",
            *table(["callee", "calls", "cumulative (s)", "share"], callee_rows, "lrrr"),
            "",
        ]
    out += [
        f"Top {args.top} functions by own time (the C code inside an Arrow or NumPy call is "
        "charged to that call):",
        "",
        *table(
            ["function", "calls", "own (s)", "cumulative (s)"],
            profile.by_own_time(args.top),
            "lrrr",
        ),
        "",
        f"rankmeter's functions by cumulative time (top {args.top}):",
        "",
        *table(
            ["function", "calls", "own (s)", "cumulative (s)"],
            profile.ours_by_cumulative(args.top),
            "lrrr",
        ),
        "",
        "The default path for files, `evaluate(qrels_path, run_path, metrics)` (what the "
        "`rankmeter-api` tool and the CLI run; TREC runs may be streamed there), "
        f"top {args.top} functions by own time:",
        "",
        *table(
            ["function", "calls", "own (s)", "cumulative (s)"],
            default.by_own_time(args.top),
            "lrrr",
        ),
        "",
        f"and rankmeter's functions on that path by cumulative time (top {args.top}):",
        "",
        *table(
            ["function", "calls", "own (s)", "cumulative (s)"],
            default.ours_by_cumulative(args.top),
            "lrrr",
        ),
        "",
        PROFILE_END,
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Stage timings and a cProfile of rankmeter.")
    parser.add_argument("--shape", default="msmarco", choices=list(generate.SHAPES))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--ties", type=float, default=generate.DEFAULT_TIES)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the stages")
    parser.add_argument("--top", type=int, default=20, help="rows of the cProfile tables")
    parser.add_argument("--sorted-queries", action="store_true", help="queries in id order")
    parser.add_argument("--no-generate", action="store_true")
    parser.add_argument("--data-dir", type=Path, default=generate.DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.source_state = git_state()
    w = generate.workload(
        args.shape,
        scale=args.scale,
        ties=args.ties,
        sorted_queries=args.sorted_queries,
        data_dir=args.data_dir,
    )
    if args.no_generate:
        if not w.is_current():
            raise SystemExit(f"--no-generate: {w.directory} is missing; run without it once")
    else:
        generate.generate(w, quiet=False)
    stages = Stages()
    for i in range(args.repeat):
        log(f"stages, pass {i + 1} of {args.repeat}")
        run_stages(w, stages)
    log("streamed path")
    streamed = [stream_split(w) for _ in range(args.repeat)]
    log("imports")
    imports = import_costs(args.repeat)
    cli = cli_imports(args.data_dir, 12)
    log("cProfile")
    import rankmeter
    from rankmeter.io import read_qrels, read_run

    metrics = list(METRICS)
    profile = Profile(lambda: rankmeter.evaluate(read_qrels(w.qrels), read_run(w.run), metrics))
    default = Profile(lambda: rankmeter.evaluate(str(w.qrels), str(w.run), metrics))
    command = shlex.join(["python", "benchmarks/stage_profile.py", *argv])
    section = render(args, command, w, stages, imports, cli, profile, default, streamed)
    sys.stdout.write(section)
    write_section(args.out, section, PROFILE_START, PROFILE_END)
    log(f"wrote the profile section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
