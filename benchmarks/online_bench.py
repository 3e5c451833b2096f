"""`rankmeter ab` on a big search log, on DuckDB and on Spark: time, peak memory, same numbers.

A log of about ``--impressions`` rows is simulated from the shipped recruiting collection
(``rankmeter.online.simulate_log``: its two runs as the variants, position-biased clicks,
segments) and written as Parquet once (kept in ``--data-dir`` for the next run). Then, per
engine, one fresh process runs ``rankmeter ab LOG --engine E --segments is_new_user,device -f
json`` (wall time, CPU time, peak RSS of the whole process, from os.wait4); and in this process
the per-user aggregates (``rankmeter.online.user_metrics``) are computed on each engine and
compared row by row. The statistics of the two runs are compared number by number.

Writes its section of benchmarks/RESULTS.md (between its markers) and prints it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

from run import (  # noqa: E402
    DEFAULT_OUT,
    fmt_mb,
    fmt_seconds,
    git_state,
    log,
    machine,
    measure,
    table,
    write_section,
)

START = "<!-- online:start -->"
END = "<!-- online:end -->"
SEGMENTS = "is_new_user,device"
#: Impressions per simulated user (10 results per request, about 4.9 requests per user),
#: measured on a pilot of 2,000 users; the log's real size is reported.
ROWS_PER_USER = 51


def simulate(path: Path, impressions: int, seed: int) -> int:
    """Write the log once; a log already there with the same settings is reused."""
    manifest = path.with_suffix(".json")
    wanted = {"impressions": impressions, "seed": seed}
    if path.exists() and manifest.exists():
        recorded = json.loads(manifest.read_text())
        if {k: recorded.get(k) for k in wanted} == wanted:
            return int(recorded["rows"])
    import pyarrow.parquet as pq

    from rankmeter.datasets import recruiting
    from rankmeter.online import simulate_log

    collection = recruiting()
    users = max(impressions // ROWS_PER_USER, 100)
    started = time.perf_counter()
    table = simulate_log(
        collection.load_qrels(),
        collection.load_runs(),
        users=users,
        seed=seed,
        segment_effects={"new": 0.8},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    log(f"simulated {table.num_rows:,} impressions in {time.perf_counter() - started:.1f} s")
    manifest.write_text(json.dumps({**wanted, "rows": table.num_rows, "users": users}))
    return int(table.num_rows)


def per_user(path: Path, engine: str) -> Any:
    """The per-user aggregates on ``engine``, sorted, as an Arrow table."""
    from rankmeter.online import user_metrics

    users = user_metrics(str(path), engine=engine, validate=False)
    return users.order_by(["user_id", "variant"]).to_pyarrow()


def _aggregates_agree(first: Any, second: Any) -> str:
    """Counts must be identical; a sum of floats may differ in its last bits, as the engines
    add in different orders: say by how much."""
    import numpy as np
    import pyarrow as pa

    if first.schema != second.schema or first.num_rows != second.num_rows:
        return "**different shapes between the engines**."
    exact, floats, worst = [], [], 0.0
    for name in first.column_names:
        a, b = first.column(name), second.column(name)
        if pa.types.is_floating(a.type):
            x, y = np.asarray(a.to_numpy()), np.asarray(b.to_numpy())
            scale = np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)
            worst = max(worst, float(np.max(np.abs(x - y) / scale)) if len(x) else 0.0)
            floats.append(name)
        elif not a.equals(b):
            return f"**column {name} differs between the engines**."
        else:
            exact.append(name)
    said = f"{len(exact)} columns of ids and counts identical on both engines"
    if floats:
        said += (
            f"; {', '.join(floats)} (a sum of floats, added in another order by each engine) "
            f"equal to a relative {worst:.1e}"
        )
    return said + "."


def _numbers(result: dict[str, Any]) -> dict[str, float]:
    """Every number of an A/B JSON result, by its path."""
    out: dict[str, float] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[where] = float(value)

    walk(result, "")
    return out


def _largest_difference(a: dict[str, float], b: dict[str, float]) -> tuple[float, str]:
    worst, where = 0.0, ""
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, math.nan), b.get(key, math.nan)
        if math.isnan(x) and math.isnan(y):
            continue
        diff = abs(x - y) / max(abs(x), abs(y), 1e-300) if x != y else 0.0
        if math.isnan(diff) or diff > worst:
            worst, where = (math.inf if math.isnan(diff) else diff), key
    return worst, where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impressions", type=int, default=10_000_000)
    parser.add_argument("--engines", nargs="+", default=["duckdb", "spark"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=HERE / "data" / "online")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)

    path = args.data_dir / f"log-{args.impressions}-seed{args.seed}.parquet"
    rows = simulate(path, args.impressions, args.seed)
    cli = [sys.executable, "-c", "from rankmeter.cli import main; main()"]
    runs: dict[str, Any] = {}
    for engine in args.engines:
        command = [*cli, "ab", str(path), "--engine", engine, "--segments", SEGMENTS, "-f", "json"]
        log(f"rankmeter ab on {engine} ...")
        m = measure(command, timeout=3600)
        if not m.ok:
            log(f"{engine} failed: {m.error}")
        runs[engine] = m
    aggregates = {e: per_user(path, e) for e in args.engines if runs[e].ok}

    rows_out = []
    for engine, m in runs.items():
        rows_out.append([
            engine,
            fmt_seconds(m.wall) if m.ok else "failed",
            fmt_seconds(m.cpu) if m.ok else "",
            fmt_mb(m.rss) if m.ok else "",
            m.error if not m.ok else "",
        ])  # fmt: skip
    lines = [
        START,
        "## A/B analysis of a search log on DuckDB and Spark (online_bench.py)",
        "",
        f"Produced by `python benchmarks/online_bench.py "
        f"{shlex.join(argv if argv is not None else sys.argv[1:])}` on "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {git_state()}.",
        "",
        f"The log: {rows:,} impressions (one Parquet file, "
        f"{path.stat().st_size / 1e6:,.0f} MB) simulated from the recruiting collection. Each "
        f"row is one whole process: `rankmeter ab LOG --engine E --segments {SEGMENTS} -f json` "
        "(all six metrics, segments, exact latency quantiles; Spark: `local[2]`, its start "
        "included). CPU and peak RSS are those of the rankmeter process: Spark's JVM is not "
        "counted (its driver memory is Spark's own setting).",
        "",
        *table(["engine", "wall (s)", "CPU (s)", "peak RSS (MB)", "error"], rows_out, "lrrrl"),
        "",
    ]
    if len(aggregates) == 2:
        first, second = (aggregates[e] for e in args.engines)
        lines.append(
            f"Per-user aggregates ({first.num_rows:,} users × {first.num_columns} columns): "
            + _aggregates_agree(first, second)
        )
        a, b = (_numbers(json.loads(json.dumps(runs[e].output))) for e in args.engines)
        worst, where = _largest_difference(a, b)
        lines.append(
            f"Statistics ({len(a)} numbers of the JSON output): largest relative difference "
            f"{worst:.1e}" + (f" (at `{where}`)." if worst else ".")
        )
        lines.append("")
    lines += [*machine(), "", END]
    section = "\n".join(lines) + "\n"
    print(section)
    if not args.no_write:
        write_section(args.out, section, START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
