"""benchmarks/leaderboard_bench.py end to end on a tiny board (`make bench`-style runs use 30
models x 10 datasets): its section of RESULTS.md (replaced on a second run, kept when run.py
rewrites the rest) and its verdict on issue 24's target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_a_tiny_run_writes_its_section_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    out.write_text("# results\n\nearlier tables\n")
    command = [
        sys.executable, str(BENCH / "leaderboard_bench.py"), "--models", "4", "--datasets", "2",
        "--queries", "30", "20", "--resamples", "100", "--repeat", "1", "--out", str(out),
    ]  # fmt: skip
    for _ in range(2):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("# results\n\nearlier tables\n")
    assert text.count("<!-- leaderboard:start -->") == 1
    assert text.rstrip().endswith("<!-- leaderboard:end -->")
    assert "4 models x 2 datasets of 30, 20 queries each" in text
    rows = [line for line in text.splitlines() if line.startswith("| rank intervals")]
    assert len(rows) == 1 and float(rows[0].split("|")[2]) > 0
    assert any(line.startswith("- Target (issue 24)") for line in text.splitlines())

    sys.path.insert(0, str(BENCH))
    try:
        import run
    finally:
        sys.path.remove(str(BENCH))
    run.write_results(out, "# rewritten\n")
    kept = out.read_text()
    assert kept.startswith("# rewritten\n") and kept.count("<!-- leaderboard:start -->") == 1
