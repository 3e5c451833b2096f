"""benchmarks/spark_eval_bench.py end to end at a tiny size: two Spark processes (the agreement
and one timed evaluation on local[2]) and the streaming process; everything written to
temporary folders. The full run is `make bench`'s (hours)."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _rows(section: str, heading: str) -> list[list[str]]:
    """The body rows of the first table after ``heading``."""
    after = section[section.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("| "))
    rows = []
    for line in after[start + 2 :]:
        if not line.startswith("| "):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.spark
def test_a_tiny_run_agrees_times_and_models(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the Spark benchmark needs the [spark] extra")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17")
    out = tmp_path / "RESULTS.md"
    out.write_text("# kept\n")
    command = [
        sys.executable, str(BENCH / "spark_eval_bench.py"), "--scale", "0.001", "--rows", "5000",
        "--masters", "local[2]", "--no-cranfield", "--data-dir", str(tmp_path / "data"),
        "--out", str(out), "--model-rows", "1000000",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("# kept\n")  # the rest of RESULTS.md stays
    section = text[text.index("<!-- spark-eval:start -->") :]
    assert section.rstrip().endswith("<!-- spark-eval:end -->")
    assert "reduced run" in section and "`python benchmarks/spark_eval_bench.py`" in section

    # The agreement: both policies on the msmarco-shaped workload, values really compared.
    agreement = _rows(section, "### The same numbers")
    assert [row[1] for row in agreement] == ["defaults", "include_missing=True"]
    for row in agreement:
        assert int(row[3].replace(",", "")) == 10 * int(row[2].replace(",", "")) > 0
        assert row[4] == "yes" and row[7] == "yes"
        assert float(row[5]) <= 1e-12 and float(row[6]) <= 1e-12
    assert "every per-query value within 1e-12" in section

    # The timing: one size, the streaming process and the Spark process each timed.
    (timing,) = _rows(section, "### Time: whole processes")
    lines, queries, stream_wall, _, spark_wall, session, call = timing
    assert lines == "5,000" and queries == "5"  # 5 queries x 1,000
    assert float(stream_wall) > 0 and 0 < float(session) < float(spark_wall)
    assert 0 < float(call) < float(spark_wall)
    assert re.search(r"- Spark `local\[2\]`: .*5,000 lines", section)

    # Spark's own stage metrics: the shuffle carried every run line once.
    stages = _rows(section, "### What Spark did")
    assert stages and all(int(row[2]) >= 1 for row in stages)
    assert any(float(row[8]) > 0 for row in stages)  # a stage read the shuffle
    shuffled = re.search(r"MB of shuffle written \(([\d,]+) records", section)
    assert shuffled is not None and int(shuffled.group(1).replace(",", "")) >= 5_000

    # The model: four cluster sizes, and more executors never predicted slower.
    model = _rows(section, "### A scaling model")
    assert [row[1] for row in model] == ["1 x 4", "4 x 4", "16 x 4", "64 x 4"]
    totals = [float(row[6]) for row in model]
    assert all(a >= b for a, b in itertools.pairwise(totals)) and totals[-1] > 0


def test_the_model_spreads_the_per_row_work_and_keeps_the_fixed_part() -> None:
    """Two sizes measured: the fitted fixed part is paid once, the per-row part divides by the
    task slots up to the stage's tasks, and the shuffle's network time falls with executors."""
    sys.path.insert(0, str(BENCH))
    try:
        import spark_eval_bench as bench
    finally:
        sys.path.remove(str(BENCH))

    def stage(i: int, run_s: float, input_bytes: int, read: int, write: int) -> dict[str, float]:
        return {
            "id": i, "tasks": 1, "run_s": run_s, "longest_s": run_s, "wall_s": run_s,
            "input_bytes": input_bytes, "shuffle_read_bytes": read,
            "shuffle_write_bytes": write, "shuffle_write_records": write // 20,
        }  # fmt: skip

    # Before the shuffle: 2 s + 10 s per million rows; after it: 1 s + 20 s per million.
    measured = [
        (
            rows,
            {
                "evaluate_s": 5 + 2 + 1 + 30 * rows / 1e6,
                "stages": [
                    stage(0, 2 + 10 * rows / 1e6, 30 * rows, 0, 20 * rows),
                    stage(1, 1 + 20 * rows / 1e6, 0, 20 * rows, 0),
                ],
            },
        )
        for rows in (1_000_000, 3_000_000)
    ]
    assert bench.fit([(1_000_000, 12.0), (3_000_000, 32.0)]) == pytest.approx((2.0, 1e-5))
    one = bench.model(measured, 100_000_000, 1, 4, 1e9, buckets=None)
    assert one["driver_s"] == pytest.approx(5.0)
    assert one["before_s"] == pytest.approx(2 + 1000 / 4)  # 3 GB of input: 23 splits > 4 slots
    assert one["after_s"] == pytest.approx(1 + 2000 / 4)  # 16 buckets > 4 slots
    assert one["network_s"] == 0  # one executor: no shuffle crosses a network
    many = bench.model(measured, 100_000_000, 16, 4, 1e9, buckets=8)
    assert many["before_s"] == pytest.approx(2 + 1000 / 64)  # 3 GB spread over 64 slots
    huge = bench.model(measured, 10_000_000_000, 4, 4, 1e9, buckets=None)
    assert huge["before_s"] == pytest.approx(2 + 100_000 / 16)  # 300 GB: 2,236 splits
    assert many["after_s"] == pytest.approx(1 + 2000 / 8)  # 8 buckets: at most 8 tasks
    assert many["network_s"] == pytest.approx(2e9 * 15 / 16 / (16 * 1e9))
    parts = ("driver_s", "before_s", "after_s", "network_s")
    assert many["total_s"] == pytest.approx(sum(many[k] for k in parts))


def test_run_py_keeps_the_spark_section_when_it_rewrites_results(tmp_path: Path) -> None:
    """`make bench` runs run.py first, but run.py alone rewrites RESULTS.md: the Spark
    evaluation's section must survive it, as the profile's and the hash kernels' do."""
    sys.path.insert(0, str(BENCH))
    try:
        import run
        import spark_eval_bench as bench
    finally:
        sys.path.remove(str(BENCH))
    out = tmp_path / "RESULTS.md"
    section = f"{bench.START}\n## Evaluation on Spark\n\nmeasured\n{bench.END}\n"
    run.write_section(out, section, bench.START, bench.END)
    run.write_results(out, "# rewritten\n")
    kept = out.read_text()
    assert kept.startswith("# rewritten\n") and section.strip() in kept


def test_run_py_keeps_the_online_section_when_it_rewrites_results(tmp_path: Path) -> None:
    """The same for `rankmeter ab`'s section (benchmarks/online_bench.py): run.py alone
    deleted it."""
    sys.path.insert(0, str(BENCH))
    try:
        import online_bench
        import run
    finally:
        sys.path.remove(str(BENCH))
    out = tmp_path / "RESULTS.md"
    section = f"{online_bench.START}\n## A/B on a big log\n\nmeasured\n{online_bench.END}\n"
    run.write_section(out, section, online_bench.START, online_bench.END)
    run.write_results(out, "# rewritten\n")
    assert section.strip() in out.read_text()
