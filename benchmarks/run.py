"""`make bench`: rankmeter against its peers, each timed as a whole process, in the same run.

For every workload shape (see generate.py) each tool runs in a fresh process that reads the qrels
and the run and computes nDCG@10, RR@10, R@100, P@10 and AP; the harness records the wall time,
the CPU time (user + sys) and the peak RSS of that process (``os.wait4``), ``--repeat`` times in
rotating order, and reports medians and the ratio of each peer to rankmeter. Tools:

- ``rankmeter``: the CLI, ``rankmeter evaluate QRELS RUN -m ... -f json``
- ``rankmeter-stream``: the same with ``--stream`` (chunks of whole queries, bounded memory)
- ``rankmeter-api``: ``rankmeter.evaluate(QRELS, RUN, metrics)`` in Python (it reads the files)
- ``pytrec_eval``: trec_eval's code (pytrec-eval-terrier), files parsed with its parse_qrel/run
- ``ranx``: ``Qrels/Run.from_file(kind="trec")`` and ``ranx.evaluate`` (Numba: the session's first
  ranx process compiles on an empty cache; it is reported separately as the cold start)
- ``ir_measures``: ``read_trec_qrels/read_trec_run`` and ``calc_aggregate``
- ``floor``: the whole-process parse floor (issue 10): a process that starts Python, imports
  pyarrow and parses the run file (query id, doc id, score) with pyarrow's multi-threaded CSV
  reader, and does nothing else

Also: a 2-query evaluation from a cold start, 10 runs against the same qrels in one process vs
10 processes, and the agreement of every tool's numbers with rankmeter's (on the timed workload,
and on small tie-free and tied variants with per-query detail, to show why they differ).

Results: Markdown on stdout and in benchmarks/RESULTS.md (replaced atomically; the section that
stage_profile.py writes is kept). Progress goes to stderr.

    python benchmarks/run.py --shapes msmarco --scale 0.01 --repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from tools import METRICS  # noqa: E402

DEFAULT_OUT = HERE / "RESULTS.md"
TOOL_SCRIPT = HERE / "tools.py"
ALL_TOOLS = (
    "rankmeter",
    "rankmeter-stream",
    "rankmeter-api",
    "pytrec_eval",
    "ranx",
    "ir_measures",
    "floor",
)
#: the Python module each tool needs
MODULES = {
    "rankmeter": "rankmeter",
    "rankmeter-stream": "rankmeter",
    "rankmeter-api": "rankmeter",
    "pytrec_eval": "pytrec_eval",
    "ranx": "ranx",
    "ir_measures": "ir_measures",
    "floor": "pyarrow",
}
PEERS = ("pytrec_eval", "ranx", "ir_measures")
SECTIONS = ("cold-start", "multi-run", "agreement")
TOLERANCE = 1e-6
PROFILE_START = "<!-- profile:start -->"
PROFILE_END = "<!-- profile:end -->"
COMPARE_START = "<!-- compare:start -->"
COMPARE_END = "<!-- compare:end -->"
HASH_START = "<!-- hash:start -->"
HASH_END = "<!-- hash:end -->"
ONLINE_START = "<!-- online:start -->"  # benchmarks/online_bench.py's section
ONLINE_END = "<!-- online:end -->"
SPARK_EVAL_START = "<!-- spark-eval:start -->"
SPARK_EVAL_END = "<!-- spark-eval:end -->"
QRELS_START = "<!-- qrels:start -->"  # benchmarks/qrels_bench.py's section
QRELS_END = "<!-- qrels:end -->"
LEADERBOARD_START = "<!-- leaderboard:start -->"  # benchmarks/leaderboard_bench.py's section
LEADERBOARD_END = "<!-- leaderboard:end -->"
DIVERSITY_START = "<!-- diversity:start -->"  # benchmarks/bench_diversity.py's section
DIVERSITY_END = "<!-- diversity:end -->"
#: Sections other scripts write into RESULTS.md; run.py keeps them when it rewrites the rest.
KEPT_SECTIONS = (
    (COMPARE_START, COMPARE_END),
    (PROFILE_START, PROFILE_END),
    (HASH_START, HASH_END),
    (ONLINE_START, ONLINE_END),
    (SPARK_EVAL_START, SPARK_EVAL_END),
    (QRELS_START, QRELS_END),
    (LEADERBOARD_START, LEADERBOARD_END),
    (DIVERSITY_START, DIVERSITY_END),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- measuring one process ------------------------------------------------------------------------
@dataclass
class Measurement:
    wall: float
    cpu: float
    rss: int  # bytes
    status: int
    output: Any = None  # parsed JSON from stdout
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 0 and self.output is not None


#: Started fresh for every measurement, it spawns the command and reports its usage. A child's
#: ru_maxrss on Linux starts from the RSS of the process that spawned it (exec keeps the old
#: memory's high-water mark), so the spawner must be small: not this harness, which holds NumPy
#: and Arrow.
SPAWNER = """
import json, os, sys, time
out, command = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.posix_spawn(command[0], command, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
with open(out, "w") as handle:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
               "rss": usage.ru_maxrss * 1024, "status": os.waitstatus_to_exitcode(status)}, handle)
"""


def measure(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 3600,
    json_output: bool = True,
) -> Measurement:
    """Run ``command`` to completion; its wall time, CPU time and peak RSS (from os.wait4)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile(suffix=".json") as usage_file,
    ):
        spawner = [sys.executable, "-S", "-c", SPAWNER, usage_file.name, *command]
        process = subprocess.Popen(spawner, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        try:
            usage = json.loads(Path(usage_file.name).read_text())
        except ValueError:
            usage = {"wall": float("nan"), "cpu": float("nan"), "rss": 0, "status": -9}
    m = Measurement(usage["wall"], usage["cpu"], usage["rss"], usage["status"])
    if m.status == 0 and json_output:
        try:
            m.output = json.loads(stdout)
        except ValueError:
            m.status = 1
            m.error = "output is not JSON: " + stdout[:200].decode(errors="replace")
    elif m.status == 0:
        m.output = {}
    else:
        why = "killed (timeout?)" if m.status == -signal.SIGKILL else f"exit {m.status}"
        lines = stderr.decode(errors="replace").strip().splitlines()
        m.error = f"{why}: {lines[-1] if lines else ''}"[:300]
    return m


@dataclass
class Timing:
    """Repeated measurements of one tool on one workload."""

    runs: list[Measurement] = field(default_factory=list)

    @property
    def good(self) -> list[Measurement]:
        return [m for m in self.runs if m.ok]

    @property
    def failed(self) -> Measurement | None:
        return next((m for m in self.runs if not m.ok), None)

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(m, attribute) for m in self.good)

    @property
    def means(self) -> list[dict[str, float]]:
        """The metric means of each run file (from the first good process)."""
        return _means(self.good[0].output) if self.good else []


def _means(output: Any) -> list[dict[str, float]]:
    if isinstance(output, dict) and "runs" in output:  # tools.py
        return [dict(r) for r in output["runs"]]
    if isinstance(output, list):  # the CLI with several runs
        return [dict(r["metrics"]) for r in output]
    return [dict(output["metrics"])]  # the CLI with one run


# -- commands -------------------------------------------------------------------------------------
class Commands:
    def __init__(self, scratch: Path) -> None:
        self.python = sys.executable
        script = Path(sys.executable).parent / "rankmeter"
        if script.exists():
            self.cli = [str(script)]
        else:
            self.cli = [self.python, "-c", "from rankmeter.cli import main; main()"]
        self.scratch = scratch
        self.numba_cache = scratch / "numba-warm"

    def tool(
        self, tool: str, qrels: Path, runs: list[Path], per_query: Path | None = None
    ) -> list[str]:
        files = [str(qrels), *map(str, runs)]
        if tool in ("rankmeter", "rankmeter-stream"):
            metrics = [a for m in METRICS for a in ("-m", m)]
            extra = ["-q"] if per_query else []
            if tool == "rankmeter-stream":
                extra.append("--stream")
            return [*self.cli, "evaluate", *files, *metrics, *extra, "-f", "json"]
        extra = ["--per-query", str(per_query)] if per_query else []
        return [self.python, str(TOOL_SCRIPT), tool, *files, *extra]

    def env(self, tool: str) -> dict[str, str]:
        env = dict(os.environ)
        if tool == "ranx":
            # Numba compiles ranx on first use and caches it here (empty at the session's start).
            env["NUMBA_CACHE_DIR"] = str(self.numba_cache)
        return env


@dataclass
class Context:
    args: argparse.Namespace
    tools: list[str]
    missing: list[str]
    commands: Commands
    notes: list[str] = field(default_factory=list)
    ranx_cold: tuple[str, Measurement] | None = None
    ranx_warmups: dict[str, Measurement] = field(default_factory=dict)
    cold_directory: str = ""


def run_tool(ctx: Context, tool: str, qrels: Path, runs: list[Path]) -> Measurement:
    """One process of a tool on these files (ranx with the session's Numba cache)."""
    cmd = ctx.commands.tool(tool, qrels, runs)
    return measure(cmd, env=ctx.commands.env(tool), timeout=ctx.args.timeout)


def warm_up_ranx(ctx: Context, qrels: Path, runs: list[Path]) -> None:
    """An untimed ranx process on these very files before the timed ones.

    Numba caches what it compiles for ranx in the session's cache directory, which starts empty:
    the session's first ranx process is its cold start. A new input later still recompiles part
    of ranx (about 20 s here), so every workload gets this warm-up and the medians are warm.
    """
    m = run_tool(ctx, "ranx", qrels, runs)
    if ctx.ranx_cold is None:
        ctx.ranx_cold = (qrels.parent.name, m)
        log(f"  ranx cold start (empty Numba cache, untimed): {m.wall:.2f} s")
    else:
        ctx.ranx_warmups[qrels.parent.name] = m
        log(f"  ranx warm-up (untimed): {m.wall:.2f} s")


def warm_page_cache(paths: list[Path]) -> None:
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def time_tools(ctx: Context, tools: list[str], qrels: Path, runs: list[Path]) -> dict[str, Timing]:
    warm_page_cache([qrels, *runs])
    timings = {t: Timing() for t in tools}
    if "ranx" in tools:
        warm_up_ranx(ctx, qrels, runs)
    for rep in range(ctx.args.repeat):
        shift = rep % len(tools)
        for tool in tools[shift:] + tools[:shift]:  # rotate, so no tool always goes first
            m = run_tool(ctx, tool, qrels, runs)
            timings[tool].runs.append(m)
            state = "ok" if m.ok else m.error
            log(f"  {tool:<16} rep {rep + 1}: {m.wall:7.2f} s  {m.rss / 2**20:7.0f} MB  {state}")
    return timings


# -- sections -------------------------------------------------------------------------------------
@dataclass
class ShapeResult:
    workload: generate.Workload
    timings: dict[str, Timing]
    info: dict[str, Any]


def describe(w: generate.Workload) -> dict[str, Any]:
    shape = generate.SHAPES[w.shape]
    queries = generate.n_queries(shape, w.scale)
    with open(w.qrels, "rb") as handle:
        judgments = sum(1 for _ in handle)
    return {
        "queries": queries,
        "depth": shape.depth,
        "lines": queries * shape.depth,
        "judgments": judgments,
        "run_mb": w.run.stat().st_size / 2**20,
    }


def prepare(
    ctx: Context, shape: str, *, scale: float, ties: float, runs: int = 1
) -> generate.Workload:
    w = generate.workload(
        shape,
        scale=scale,
        ties=ties,
        runs=runs,
        sorted_queries=ctx.args.sorted_queries,
        data_dir=ctx.args.data_dir,
    )
    if ctx.args.no_generate:
        if not all(p.exists() for p in [w.qrels, *w.run_files]):
            raise SystemExit(f"--no-generate: {w.directory} is missing; run without it once")
        return w
    return generate.generate(w, quiet=False)


def bench_shape(ctx: Context, shape: str) -> ShapeResult:
    w = prepare(ctx, shape, scale=ctx.args.scale, ties=ctx.args.ties)
    info = describe(w)
    log(f"{shape}: {info['queries']:,} queries x {info['depth']:,} ({info['lines']:,} lines)")
    return ShapeResult(w, time_tools(ctx, ctx.tools, w.qrels, [w.run]), info)


def bench_cold_start(ctx: Context) -> dict[str, Timing]:
    w = prepare(ctx, "two", scale=1.0, ties=ctx.args.ties)
    ctx.cold_directory = w.directory.name
    log("cold start: 2 queries")
    python = ctx.commands.python
    timings: dict[str, Timing] = {}
    for label, cmd in (
        ("python -c pass", [python, "-c", "pass"]),
        ("import rankmeter", [python, "-c", "import rankmeter"]),
    ):
        timings[label] = Timing([measure(cmd, json_output=False) for _ in range(ctx.args.repeat)])
    timings.update(time_tools(ctx, ctx.tools, w.qrels, [w.run]))
    return timings


@dataclass
class MultiResult:
    workload: generate.Workload
    info: dict[str, Any]
    timings: dict[str, Timing]
    separate: list[Timing]  # per repetition: the 10 separate CLI processes
    consistent: bool | None


def bench_multi(ctx: Context) -> MultiResult | None:
    if "rankmeter" not in ctx.tools:
        return None
    scale = ctx.args.scale * ctx.args.multi_scale
    w = prepare(ctx, ctx.args.multi_shape, scale=scale, ties=ctx.args.ties, runs=10)
    info = describe(w)
    log(f"10 runs x {info['lines']:,} lines against the same qrels")
    warm_page_cache([w.qrels, *w.run_files])
    one_process = [t for t in ("rankmeter", "rankmeter-api", "pytrec_eval") if t in ctx.tools]
    timings = {t: Timing() for t in one_process}
    separate: list[Timing] = []
    for rep in range(ctx.args.repeat):
        for tool in one_process:
            m = run_tool(ctx, tool, w.qrels, w.run_files)
            timings[tool].runs.append(m)
            log(f"  {tool:<16} rep {rep + 1}: {m.wall:7.2f} s  {'ok' if m.ok else m.error}")
        separate.append(Timing([run_tool(ctx, "rankmeter", w.qrels, [r]) for r in w.run_files]))
        total = sum(m.wall for m in separate[-1].runs)
        log(f"  10 separate      rep {rep + 1}: {total:7.2f} s")
    consistent = None
    if timings["rankmeter"].good and separate and all(m.ok for m in separate[0].runs):
        together = timings["rankmeter"].means
        apart = [_means(m.output)[0] for m in separate[0].runs]
        consistent = len(together) == len(apart) and all(
            _max_diff(a, b) <= TOLERANCE for a, b in zip(together, apart, strict=True)
        )
    return MultiResult(w, info, timings, separate, consistent)


def _max_diff(a: dict[str, float], b: dict[str, float]) -> float:
    return max(abs(a[m] - b[m]) for m in METRICS)


# -- agreement ------------------------------------------------------------------------------------
REASONS = {
    "ranx": (
        "ranx orders each query's results with an unstable sort on the score alone "
        "(Numba argsort), so tied documents come out in an arbitrary order; trec_eval (and "
        "rankmeter by default) orders ties by doc id, descending."
    ),
    "ir_measures": (
        "ir_measures computes nDCG@10, R@100, P@10 and AP with its pytrec_eval provider "
        "(trec_eval's order), but RR@10, which trec_eval lacks, with its msmarco provider, "
        "which orders ties by doc id ascending (trec_eval: descending)."
    ),
    "rankmeter-api": "the Python API must give the CLI's numbers: a difference is a rankmeter bug.",
    "rankmeter-stream": (
        "streaming must give the in-memory numbers: a difference is a rankmeter bug."
    ),
    "pytrec_eval": (
        "pytrec_eval is trec_eval; RR@10 is derived from recip_rank (kept where 1/rank >= 0.1). "
        "A difference here would be a rankmeter bug."
    ),
}

SEMANTICS = [
    "Unjudged documents count as non-relevant in every tool (no tool here drops them: no "
    "trec_eval -J). Judgments with grade >= 1 are relevant; nDCG uses the raw grade as gain "
    "(trec_eval, ranx's default `ndcg`, ir_measures' `nDCG`).",
    "Run and qrels hold the same queries and every query has a relevant document, so the "
    "query-set policies (trec_eval -c, how a tool averages over queries without results or "
    "without relevant documents) do not enter.",
    "RR@10 is reciprocal rank cut at rank 10 (0 when no relevant document is in the top 10): "
    "rankmeter `RR@10`, ranx `mrr@10`, ir_measures `RR@10` (MS MARCO's script); pytrec_eval "
    "has only uncut `recip_rank`, from which RR@10 follows exactly.",
]


@dataclass
class Agreement:
    shape: str
    variant: str  # "timed", "tie-free", "tied"
    tool: str
    diffs: dict[str, float] | None  # signed tool - rankmeter; None: tool failed
    differing_queries: dict[str, int] = field(default_factory=dict)
    tied_relevant: dict[str, int] = field(default_factory=dict)  # differing with a relevant tie
    queries: int = 0
    error: str = ""


def agreement_from_timings(shape: str, timings: dict[str, Timing]) -> list[Agreement]:
    reference = _reference(timings)
    if reference is None:
        return []
    out = []
    for tool, timing in timings.items():
        if tool in ("rankmeter", "floor") or tool == reference[0]:
            continue
        if not timing.good:
            out.append(Agreement(shape, "timed", tool, None, error=_error(timing)))
            continue
        mine = timing.means[0]
        out.append(Agreement(shape, "timed", tool, {m: mine[m] - reference[1][m] for m in METRICS}))
    return out


def _reference(timings: dict[str, Timing]) -> tuple[str, dict[str, float]] | None:
    for tool in ("rankmeter", "rankmeter-api"):
        if tool in timings and timings[tool].good:
            return tool, timings[tool].means[0]
    return None


def _error(timing: Timing) -> str:
    failed = timing.failed
    return failed.error if failed else "no result"


def check_agreement(ctx: Context, shape: str) -> list[Agreement]:
    """Per-query comparison on small tie-free and tied variants of the shape (untimed)."""
    tools = [t for t in ctx.tools if t in PEERS or t in ("rankmeter-api", "rankmeter-stream")]
    if "rankmeter" not in ctx.tools and "rankmeter-api" not in ctx.tools:
        return []
    queries = generate.SHAPES[shape].queries
    scale = min(ctx.args.scale, max(200 / queries, 0.01))
    out = []
    for variant, ties in (("tie-free", 0.0), ("tied", ctx.args.ties)):
        if variant == "tied" and ties == 0:
            continue
        w = prepare(ctx, shape, scale=scale, ties=ties)
        log(f"agreement: {w.directory.name}")
        values = {}
        errors = {}
        with tempfile.TemporaryDirectory() as tmp:
            first = "rankmeter" if "rankmeter" in ctx.tools else "rankmeter-api"
            for tool in dict.fromkeys([first, *tools]):
                path = Path(tmp) / f"{tool}.json"
                cmd = ctx.commands.tool(tool, w.qrels, [w.run], per_query=path)
                m = measure(cmd, env=ctx.commands.env(tool), timeout=ctx.args.timeout)
                if not m.ok:
                    errors[tool] = m.error
                    continue
                if tool in ("rankmeter", "rankmeter-stream"):
                    by_query = m.output["per_query"]
                    values[tool] = {q: by_query[q] for q in by_query}
                else:
                    per_metric = json.loads(path.read_text())[0]
                    values[tool] = _transpose(per_metric)
        reference_tool = "rankmeter" if "rankmeter" in values else "rankmeter-api"
        reference = values.get(reference_tool)
        if reference is None:
            continue
        tied = queries_with_relevant_ties(w) if ties else set()
        for tool in tools:
            if tool == reference_tool:
                continue
            if tool in errors:
                out.append(Agreement(shape, variant, tool, None, error=errors[tool]))
                continue
            out.append(_compare(shape, variant, tool, values[tool], reference, tied))
    return out


def _transpose(per_metric: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for metric, by_query in per_metric.items():
        for q, v in by_query.items():
            out.setdefault(q, {})[metric] = v
    return out


def _compare(
    shape: str,
    variant: str,
    tool: str,
    mine: dict[str, dict[str, float]],
    reference: dict[str, dict[str, float]],
    tied: set[str],
) -> Agreement:
    queries = sorted(reference)
    diffs: dict[str, float] = {}
    a = Agreement(shape, variant, tool, diffs, queries=len(queries))
    if set(mine) != set(reference):
        a.error = f"query sets differ: {len(mine)} vs {len(reference)} queries"
    common = [q for q in queries if q in mine]
    for m in METRICS:
        own = [mine[q][m] for q in common]
        ref = [reference[q][m] for q in common]
        diffs[m] = (sum(own) - sum(ref)) / max(len(common), 1)
        differing = [q for q, x, y in zip(common, own, ref, strict=True) if abs(x - y) > TOLERANCE]
        a.differing_queries[m] = len(differing)
        a.tied_relevant[m] = sum(q in tied for q in differing)
    return a


def queries_with_relevant_ties(w: generate.Workload) -> set[str]:
    """Queries where a relevant document has the same score as another retrieved document."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    def read(path: Path, names: list[str], keep: list[str]) -> Any:
        return csv.read_csv(
            path,
            read_options=csv.ReadOptions(column_names=names),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=csv.ConvertOptions(
                column_types={"qid": pa.string(), "docid": pa.string()}, include_columns=keep
            ),
        ).to_pydict()

    qrels = read(w.qrels, ["qid", "iter", "docid", "grade"], ["qid", "docid", "grade"])
    relevant = {
        (q, d)
        for q, d, g in zip(qrels["qid"], qrels["docid"], qrels["grade"], strict=True)
        if g > 0
    }
    run = read(w.run, ["qid", "q0", "docid", "rank", "score", "tag"], ["qid", "docid", "score"])
    qids = np.asarray(run["qid"], dtype=object)
    scores = np.asarray(run["score"])
    is_relevant = np.fromiter(
        ((q, d) in relevant for q, d in zip(run["qid"], run["docid"], strict=True)),
        dtype=bool,
        count=len(qids),
    )
    # Lines are grouped by query in rank order: equal neighbours are ties.
    tie = (qids[1:] == qids[:-1]) & (scores[1:] == scores[:-1])
    with_relevant = tie & (is_relevant[1:] | is_relevant[:-1])
    return set(qids[1:][with_relevant].tolist())


# -- report ---------------------------------------------------------------------------------------
def fmt_seconds(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def fmt_mb(x: float) -> str:
    return f"{x / 2**20:,.0f}"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×"


def table(header: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    align = align or "l" + "r" * (len(header) - 2) + "l"
    rule = ["---:" if a == "r" else "---" for a in align]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(rule) + " |",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def timing_rows(timings: dict[str, Timing], reference: str | None) -> list[list[str]]:
    ref = timings.get(reference) if reference else None
    ref_wall = ref.median("wall") if ref and ref.good else None
    rows = []
    for tool, t in timings.items():
        if not t.good:
            rows.append([tool, "failed", "", "", "", "", _error(t).replace("|", "/")])
            continue
        walls = [m.wall for m in t.good]
        ratio = fmt_ratio(t.median("wall") / ref_wall) if ref_wall else ""
        spread = f"{fmt_seconds(min(walls))}–{fmt_seconds(max(walls))}" if len(walls) > 1 else ""
        rows.append(
            [
                tool,
                fmt_seconds(t.median("wall")),
                spread,
                fmt_seconds(t.median("cpu")),
                fmt_mb(t.median("rss")),
                ratio,
                "",
            ]
        )
    return rows


TIMING_HEADER = [
    "tool",
    "wall (s, median)",
    "wall min–max",
    "CPU user+sys (s)",
    "peak RSS (MB)",
    "wall ÷ rankmeter",
    "note",
]


def machine() -> list[str]:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    memory = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    packages = ", ".join(
        f"{d} {version(d)}"
        for d in (
            "rankmeter",
            "numpy",
            "pyarrow",
            "pytrec-eval-terrier",
            "ranx",
            "numba",
            "ir-measures",
        )
    )
    return [
        f"- Machine: {usable} usable CPUs (nproc; {os.cpu_count()} online), {memory} RAM, {cpu}; "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()} ({sys.executable}); {packages}",
        f"- rankmeter source at the start of the run: {SOURCE_STATE[0]}",
        f"- rankmeter's inner loops: {compiled_loops()}",
    ]


def compiled_loops() -> str:
    """Whether the timed rankmeter runs the compiled loops (rankmeter.data._native) or the
    NumPy ones (the extension not built, or RANKMETER_PURE=1)."""
    from rankmeter.data import _compiled

    if _compiled.NATIVE is not None:
        return "compiled (the C extension rankmeter.data._native)"
    if os.environ.get("RANKMETER_PURE", "") not in ("", "0"):
        return "NumPy (RANKMETER_PURE=1)"
    return "NumPy (the C extension is not built)"


def byte_compile_rankmeter() -> None:
    """Byte-compile rankmeter's modules before anything is timed, as an installed package is:
    an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module
    it imports from source in every timed process (tens of milliseconds each time)."""
    import compileall

    import rankmeter

    for folder in rankmeter.__path__:
        compileall.compile_dir(folder, quiet=1)


SOURCE_STATE = ["unknown"]  # filled when a run starts (the source may change while it runs)


def git_state() -> str:
    root = HERE.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"commit {head}" + (" with uncommitted changes in src/" if dirty else "")


def render(
    ctx: Context,
    command: str,
    started: dt.datetime,
    elapsed: float,
    shapes: list[ShapeResult],
    cold: dict[str, Timing] | None,
    multi: MultiResult | None,
    agreements: list[Agreement],
) -> str:
    args = ctx.args
    out = [
        "# rankmeter benchmarks",
        "",
        f"Produced by `{command}` on {started:%Y-%m-%d %H:%M} UTC ({elapsed / 60:.1f} min).",
        "",
        *machine(),
        f"- Each tool runs as a fresh process (interpreter start, imports, reading both files, "
        f"nDCG@10, RR@10, R@100, P@10, AP); {args.repeat} repetition(s) in rotating order; "
        "wall = median; CPU = user + sys of the process; peak RSS = its ru_maxrss (os.wait4).",
        f"- Workloads from `benchmarks/generate.py` (seeded): scale {args.scale:g}, "
        f"{args.ties:g} of results tied with the one above, queries "
        + (
            "in ascending id order."
            if args.sorted_queries
            else "in shuffled order (as in a topics file)."
        ),
        "",
    ]
    if ctx.missing:
        out += [f"Not installed, skipped: {', '.join(ctx.missing)}.", ""]
    out += summary(shapes)
    out += targets(shapes, cold)
    for r in shapes:
        out += shape_section(ctx, r)
    if cold is not None:
        out += cold_section(ctx, cold)
    if multi is not None:
        out += multi_section(multi)
    if agreements:
        out += agreement_section(agreements)
    if ctx.notes:
        out += ["## Notes", "", *(f"- {n}" for n in ctx.notes), ""]
    return "\n".join(out).rstrip() + "\n"


def summary(shapes: list[ShapeResult]) -> list[str]:
    if not shapes:
        return []
    tools = [t for t in ALL_TOOLS if any(t in r.timings for r in shapes)]
    rows = []
    for r in shapes:
        ref = r.timings.get("rankmeter")
        ref_wall = ref.median("wall") if ref and ref.good else None
        cells = [f"{r.workload.shape} ({r.info['queries']:,} × {r.info['depth']:,})"]
        for tool in tools:
            t = r.timings.get(tool)
            if t is None:
                cells.append("—")
            elif not t.good:
                cells.append("failed")
            else:
                wall = t.median("wall")
                ratio = (
                    f" ({fmt_ratio(wall / ref_wall)})" if ref_wall and tool != "rankmeter" else ""
                )
                cells.append(f"{fmt_seconds(wall)} s{ratio}")
        rows.append(cells)
    return [
        "## Summary: median wall time, whole process (× = tool's time ÷ rankmeter CLI's)",
        "",
        *table(["workload", *tools], rows, "l" + "r" * len(tools)),
        "",
    ]


#: Issue 10's targets: whole-process wall time of the CLI and of the API against the parse floor
#: and against pytrec_eval (trec_eval inside), by workload shape.
FLOOR_TARGET = 1.25  # wall ÷ the floor's, at most
PYTREC_TARGET = 6.0  # pytrec_eval's wall ÷ ours, at least
DEEP_TARGET = 1.0  # wall ÷ pytrec_eval's, at most (start-up dominates there)
TARGETS_BY_SHAPE = {
    "msmarco": ("floor", "pytrec_eval"),
    "wide": ("floor", "pytrec_eval"),
    "deep": ("deep",),
}
TARGET_LABELS = {
    "floor": f"wall ÷ floor ≤ {FLOOR_TARGET:g}×",
    "pytrec_eval": f"pytrec_eval ÷ wall ≥ {PYTREC_TARGET:g}×",
    "deep": f"wall ÷ pytrec_eval ≤ {DEEP_TARGET:g}×",
}


def target_ratio(timings: dict[str, Timing], target: str, tool: str) -> tuple[float, bool] | None:
    """The ratio a target is about for one of rankmeter's tools, and whether it is met (None:
    a tool it needs did not run or failed)."""

    def wall(name: str) -> float | None:
        t = timings.get(name)
        return t.median("wall") if t and t.good else None

    mine = wall(tool)
    if mine is None:
        return None
    if target == "floor":
        floor = wall("floor")
        return None if floor is None else (mine / floor, mine / floor <= FLOOR_TARGET)
    peer = wall("pytrec_eval")
    if peer is None:
        return None
    if target == "pytrec_eval":
        return peer / mine, peer / mine >= PYTREC_TARGET
    return mine / peer, mine / peer <= DEEP_TARGET


def targets(shapes: list[ShapeResult], cold: dict[str, Timing] | None) -> list[str]:
    """Issue 10's targets, as measured in this run: every ratio is of whole processes timed in
    this same run (medians)."""
    rows = []
    for r in shapes:
        wanted = TARGETS_BY_SHAPE.get(r.workload.shape)
        for target in wanted or ("floor", "pytrec_eval", "deep"):
            cells = [r.workload.shape, TARGET_LABELS[target]]
            verdicts = []
            for tool in ("rankmeter", "rankmeter-api"):
                found = target_ratio(r.timings, target, tool)
                cells.append(fmt_ratio(found[0]) if found else "—")
                verdicts.append(("yes" if found[1] else "no") if found else "—")
            cells.append(" / ".join(verdicts) if wanted else "(no target for this shape)")
            rows.append(cells)
    out = [
        "## Targets (issue 10)",
        "",
        "The floor is a whole process that starts Python, imports pyarrow and parses the run "
        "file (query id, doc id, score) with pyarrow's multi-threaded CSV reader: the `floor` "
        "tool, timed in the same run.",
        "",
        *table(["workload", "target", "CLI", "API", "met: CLI / API"], rows, "llrrl"),
        "",
    ]
    rss = []
    for r in shapes:
        cells = [
            fmt_mb(t.median("rss")) if (t := r.timings.get(tool)) and t.good else "—"
            for tool in ("rankmeter", "rankmeter-api", "pytrec_eval")
        ]
        rss.append(f"{r.workload.shape} {' / '.join(cells)}")
    if rss:
        out += [f"- Peak RSS (MB), CLI / API / pytrec_eval: {'; '.join(rss)}."]
    if cold is not None and (t := cold.get("rankmeter")) is not None and t.good:
        two = t.median("wall")
        verdict = "met" if two < 0.5 else "not met"
        out += [f"- 2-query CLI run from a cold start: {fmt_seconds(two)} s (< 0.5 s: {verdict})."]
    return [*out, ""] if out[-1] else out


def shape_section(ctx: Context, r: ShapeResult) -> list[str]:
    info = r.info
    out = [
        f"## {r.workload.shape}: {info['queries']:,} queries × {info['depth']:,} results",
        "",
        f"{info['lines']:,} run lines ({info['run_mb']:,.0f} MB), {info['judgments']:,} "
        f"judgments; files in `{r.workload.directory.name}/`.",
        "",
        *table(TIMING_HEADER, timing_rows(r.timings, "rankmeter")),
        "",
    ]
    t = r.timings
    lines = []
    floor = t.get("floor")
    if floor and floor.good:
        for tool in ("rankmeter", "rankmeter-api"):
            if tool in t and t[tool].good:
                lines.append(
                    f"{tool} = {t[tool].median('wall') / floor.median('wall'):.2f} × the floor "
                    f"(reading and parsing the run with pyarrow: "
                    f"{fmt_seconds(floor.median('wall'))} s whole process; target ≤ "
                    f"{FLOOR_TARGET:g}×)"
                )
    peers = {p: t[p].median("wall") for p in PEERS if p in t and t[p].good}
    if peers and "rankmeter" in t and t["rankmeter"].good:
        fastest = min(peers, key=peers.__getitem__)
        for tool in ("rankmeter", "rankmeter-api"):
            if tool in t and t[tool].good:
                speedup = peers[fastest] / t[tool].median("wall")
                target = f" (target ≥ {PYTREC_TARGET:g}×)" if fastest == "pytrec_eval" else ""
                lines.append(
                    f"{tool}: the fastest peer ({fastest}) takes {speedup:.2f} × its wall time"
                    + target
                )
        if "pytrec_eval" in t and t["pytrec_eval"].good:
            lines.append(
                f"peak RSS: rankmeter {fmt_mb(t['rankmeter'].median('rss'))} MB, pytrec_eval "
                f"(trec_eval inside) {fmt_mb(t['pytrec_eval'].median('rss'))} MB"
            )
    stages = child_stages(t)
    if stages:
        lines.append("time inside the process (median, s): " + stages)
    lines += ranx_lines(ctx, r.workload.directory.name)
    out += [f"- {line}" for line in lines]
    return [*out, ""]


def child_stages(timings: dict[str, Timing]) -> str:
    parts = []
    for tool, t in timings.items():
        if not t.good or not isinstance(t.good[0].output, dict):
            continue
        seconds = t.good[0].output.get("seconds")
        if not seconds:
            continue
        stages = {
            k: statistics.median(m.output["seconds"].get(k, 0.0) for m in t.good) for k in seconds
        }
        parts.append(f"{tool} " + ", ".join(f"{k} {fmt_seconds(v)}" for k, v in stages.items()))
    return "; ".join(parts)


def ranx_lines(ctx: Context, directory: str) -> list[str]:
    lines = []
    if ctx.ranx_cold and ctx.ranx_cold[0] == directory:
        lines.append(cold_ranx_line(ctx.ranx_cold[1]))
    warmup = ctx.ranx_warmups.get(directory)
    if warmup is not None:
        lines.append(
            f"ranx: an untimed first process on this workload ({fmt_seconds(warmup.wall)} s) "
            "filled Numba's cache for it; the medians above are warm"
        )
    return lines


def cold_ranx_line(m: Measurement) -> str:
    if not m.ok:
        return f"ranx cold start (empty Numba cache) failed: {m.error}"
    return (
        f"ranx cold start (the session's first ranx process, on an empty Numba cache, untimed): "
        f"{fmt_seconds(m.wall)} s wall, {fmt_seconds(m.cpu)} s CPU, {fmt_mb(m.rss)} MB; "
        "the medians above are warm"
    )


def cold_section(ctx: Context, timings: dict[str, Timing]) -> list[str]:
    out = [
        "## Cold start: 2 queries × 100 results",
        "",
        "Interpreter start included. Target: rankmeter under 0.5 s.",
        "",
        *table(TIMING_HEADER, timing_rows(timings, "rankmeter")),
        "",
    ]
    extra = ranx_lines(ctx, ctx.cold_directory)
    return out + [f"- {line}" for line in extra] + ([""] if extra else [])


def multi_section(r: MultiResult) -> list[str]:
    info = r.info
    rows = timing_rows(r.timings, "rankmeter")
    names = {
        "rankmeter": "rankmeter CLI, one process",
        "rankmeter-api": "rankmeter API, one process",
        "pytrec_eval": "pytrec_eval, one process",
    }
    for row in rows:
        row[0] = names.get(row[0], row[0])
    separate_wall = [sum(m.wall for m in t.runs) for t in r.separate]
    separate_cpu = [sum(m.cpu for m in t.runs) for t in r.separate]
    separate_rss = [max(m.rss for m in t.runs) for t in r.separate]
    one = r.timings["rankmeter"]
    if separate_wall:
        ratio = fmt_ratio(statistics.median(separate_wall) / one.median("wall")) if one.good else ""
        rows.append(
            [
                "rankmeter CLI, 10 processes (sum)",
                fmt_seconds(statistics.median(separate_wall)),
                "",
                fmt_seconds(statistics.median(separate_cpu)),
                fmt_mb(statistics.median(separate_rss)) + " (max)",
                ratio,
                "",
            ]
        )
    out = [
        f"## 10 runs against the same qrels ({info['queries']:,} queries × {info['depth']:,} "
        f"each, {10 * info['lines']:,} lines in all)",
        "",
        "`rankmeter evaluate QRELS RUN1 ... RUN10` in one process against ten separate "
        "invocations; the one-process peers parse the qrels once as well.",
        "",
        *table(TIMING_HEADER, rows),
        "",
    ]
    if r.consistent is not None:
        word = "identical" if r.consistent else "NOT identical"
        out += [f"- Numbers from one process and from ten are {word} (1e-6).", ""]
    return out


def agreement_section(agreements: list[Agreement]) -> list[str]:
    rows = []
    for a in agreements:
        label = {
            "timed": "timed workload",
            "tie-free": "small, no ties",
            "tied": "small, tied",
        }[a.variant]
        if a.diffs is None:
            rows.append([a.shape, label, a.tool, *(["failed"] * len(METRICS))])
            continue
        cells = []
        for m in METRICS:
            d = a.diffs[m]
            n = a.differing_queries.get(m)
            if abs(d) <= TOLERANCE and not n:
                cells.append("=")
                continue
            text = f"{d:+.1e}" if abs(d) > TOLERANCE else "≈0"
            if n:
                text += f" ({n}/{a.queries} q, {a.tied_relevant.get(m, 0)} tied)"
            cells.append(text)
        rows.append([a.shape, label, a.tool, *cells])
    out = [
        "## Agreement with rankmeter",
        "",
        "Difference of the mean (tool − rankmeter); `=` agrees within 1e-6. On the small variants "
        "every query is compared: `(n/N q, k tied)` = n of N queries differ, k of them have a "
        "relevant document whose score ties with another retrieved document.",
        "",
        *table(["workload", "variant", "tool", *METRICS], rows, "lll" + "r" * len(METRICS)),
        "",
    ]
    differing = {
        a.tool
        for a in agreements
        if (a.diffs and any(abs(d) > TOLERANCE for d in a.diffs.values()))
        or any(a.differing_queries.values())
    }
    failed = [a for a in agreements if a.diffs is None]
    why = []
    for tool in sorted(differing):
        mine = [a for a in agreements if a.tool == tool and a.diffs is not None]
        tie_free = [a for a in mine if a.variant == "tie-free"]
        tied = [a for a in mine if a.variant == "tied"]
        clean = bool(tie_free) and not any(any(a.differing_queries.values()) for a in tie_free)
        untied = sum(a.differing_queries[m] - a.tied_relevant[m] for a in tied for m in METRICS)
        evidence = ""
        if clean and tied and not untied:
            evidence = (
                " Evidence: on the tie-free variants it agrees on every query, and every query "
                "that differs on the tied variants has a relevant document in a tie."
            )
        elif clean:
            evidence = " On the tie-free variants it agrees on every query."
        if untied:
            evidence += (
                f" {untied} differing (query, metric) pairs on the tied variants have no relevant "
                "document in a tie: look there first."
            )
        why.append(f"**{tool}**: {REASONS.get(tool, 'unexplained difference.')}{evidence}")
    for a in failed:
        why.append(f"**{a.tool}** failed on {a.shape} ({a.variant}): {a.error}")
    for a in agreements:
        if a.error and a.diffs is not None:
            why.append(f"**{a.tool}** on {a.shape} ({a.variant}): {a.error}")
    if why:
        out += ["Why they differ:", "", *(f"- {w}" for w in why), ""]
    out += ["Semantics, the same for every tool here:", "", *(f"- {s}" for s in SEMANTICS), ""]
    return out


def write_results(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping the sections that other scripts write (the compare
    benchmark, the profile, the hash kernels, evaluation on Spark)."""
    kept = []
    with contextlib.suppress(OSError):
        old = path.read_text()
        for start_mark, end_mark in KEPT_SECTIONS:
            if start_mark in old and end_mark in old:
                start = old.index(start_mark)
                kept.append(old[start : old.index(end_mark) + len(end_mark)] + "\n")
    atomic_write_text(path, text + "".join("\n" + k for k in kept))


def write_section(path: Path, section: str, start_mark: str, end_mark: str) -> None:
    """Put ``section`` (which starts with start_mark and ends with end_mark) into ``path`` in
    place of the old one, or at the end."""
    try:
        old = path.read_text()
    except OSError:
        old = ""
    if start_mark in old and end_mark in old:
        start = old.index(start_mark)
        end = old.index(end_mark) + len(end_mark)
        new = old[:start] + section.rstrip("\n") + old[end:]
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + section
    atomic_write_text(path, new if new.endswith("\n") else new + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- main -----------------------------------------------------------------------------------------
def split_list(values: list[str]) -> list[str]:
    return [v for value in values for v in value.replace(",", " ").split()]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time rankmeter and its peers as whole processes; write benchmarks/RESULTS.md."
    )
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=list(generate.MAIN_SHAPES),
        help=f"workload shapes (default: {' '.join(generate.MAIN_SHAPES)}; also smoke)",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the number of queries")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per tool (default 3)")
    parser.add_argument(
        "--tools", nargs="+", default=list(ALL_TOOLS), help=f"default: {' '.join(ALL_TOOLS)}"
    )
    parser.add_argument(
        "--ties",
        type=float,
        default=generate.DEFAULT_TIES,
        help="share of results tied with the one above (0: tie-free workloads)",
    )
    parser.add_argument(
        "--sorted-queries",
        action="store_true",
        help="run files in ascending query id order (default: shuffled, like a topics file)",
    )
    parser.add_argument(
        "--skip", nargs="+", default=[], help=f"sections to leave out: {' '.join(SECTIONS)}"
    )
    parser.add_argument(
        "--no-generate", action="store_true", help="use the files already in --data-dir"
    )
    parser.add_argument("--data-dir", type=Path, default=generate.DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the Markdown report")
    parser.add_argument("--multi-shape", default="msmarco", help="shape of the 10-run section")
    parser.add_argument(
        "--multi-scale",
        type=float,
        default=0.1,
        help="its queries as a share of the shape's (times --scale; default 0.1)",
    )
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per process")
    args = parser.parse_args(argv)
    args.shapes = split_list(args.shapes)
    args.tools = split_list(args.tools)
    args.skip = split_list(args.skip)
    for name in args.shapes:
        if name not in generate.SHAPES:
            parser.error(f"unknown shape {name!r}; choose from {', '.join(generate.SHAPES)}")
    for name in args.tools:
        if name not in ALL_TOOLS:
            parser.error(f"unknown tool {name!r}; choose from {', '.join(ALL_TOOLS)}")
    for name in args.skip:
        if name not in SECTIONS:
            parser.error(f"unknown section {name!r}; choose from {', '.join(SECTIONS)}")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    SOURCE_STATE[0] = git_state()
    byte_compile_rankmeter()
    started = dt.datetime.now(dt.timezone.utc)
    clock = time.perf_counter()
    tools = [t for t in args.tools if importlib.util.find_spec(MODULES[t]) is not None]
    missing = [t for t in args.tools if t not in tools]
    with tempfile.TemporaryDirectory(prefix="rankmeter-bench-") as scratch:
        ctx = Context(args, tools, missing, Commands(Path(scratch)))
        cold = None if "cold-start" in args.skip else bench_cold_start(ctx)
        shapes = [bench_shape(ctx, s) for s in args.shapes]
        multi = None if "multi-run" in args.skip else bench_multi(ctx)
        agreements = [
            a for r in shapes for a in agreement_from_timings(r.workload.shape, r.timings)
        ]
        if "agreement" not in args.skip:
            agreements += [a for s in args.shapes for a in check_agreement(ctx, s)]
    script = Path(sys.argv[0]).resolve()
    try:
        shown = script.relative_to(Path.cwd())
    except ValueError:
        shown = script
    command = shlex.join(["python", str(shown), *argv])
    text = render(
        ctx, command, started, time.perf_counter() - clock, shapes, cold, multi, agreements
    )
    sys.stdout.write(text)
    write_results(args.out, text)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
