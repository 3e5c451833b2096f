"""benchmarks/qrels_bench.py end to end on tiny files (`make bench` runs it at 1M and 10M
lines): its files, its section of RESULTS.md (replaced on a second run, kept when run.py
rewrites the rest) and its verdicts on issue 22's goals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
LINES = 2_000


def test_the_files_hold_what_their_names_say(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import qrels_bench
    finally:
        sys.path.remove(str(BENCH))
    files = qrels_bench.make_files(LINES, tmp_path / "a")
    again = qrels_bench.make_files(LINES, tmp_path / "b")
    for case, path in files.items():
        assert path.read_bytes() == again[case].read_bytes()  # seeded
        rows = [line.split() for line in path.read_text().splitlines()]
        assert len(rows) == LINES
        queries = {row[0] for row in rows}
        assert len(queries) == (LINES // 10 if case == "run/10" else LINES)
        assert len({(row[0], row[2]) for row in rows}) == LINES  # no pair twice
        assert all(len(row) == (4 if case == "qrels" else 6) for row in rows)


def test_a_tiny_run_writes_its_section_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    out.write_text("# results\n\nearlier tables\n")
    command = [
        sys.executable, str(BENCH / "qrels_bench.py"), "--lines", str(LINES), "--repeat", "1",
        "--data-dir", str(tmp_path / "data"), "--out", str(out),
    ]  # fmt: skip
    for _ in range(2):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("# results\n\nearlier tables\n")
    assert text.count("<!-- qrels:start -->") == 1 and text.rstrip().endswith("qrels:end -->")
    rows = [line for line in text.splitlines() if line.startswith(f"| {LINES:,} |")]
    assert [row.split("|")[3].strip() for row in rows] == ["qrels", "run/10", "run/1"]
    for row in rows:
        assert float(row.split("|")[4]) > 0, row  # a wall time, no failure
    verdicts = [line for line in text.splitlines() if line.startswith("- N = ")]
    assert len(verdicts) == 2 and all("goal ≤ 3×" in v for v in verdicts)

    sys.path.insert(0, str(BENCH))
    try:
        import run
    finally:
        sys.path.remove(str(BENCH))
    run.write_results(out, "# rewritten\n")
    kept = out.read_text()
    assert kept.startswith("# rewritten\n") and kept.count("<!-- qrels:start -->") == 1
