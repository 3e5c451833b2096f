"""benchmarks/bench_diversity.py end to end on a tiny run (the timings themselves are not tested:
benchmarks measure speed, tests do not)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_diversity.py"
SRC = Path(__file__).resolve().parents[2] / "src"


def test_the_section_lists_every_metric_against_ndcg(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    out.write_text("# results\n\nkept\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(BENCH), "--queries", "40", "--depth", "30", "--repeat", "1",
         "--out", str(out)],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# results\n\nkept\n")
    section = text[text.index("<!-- diversity:start -->") : text.index("<!-- diversity:end -->")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[0] for r in rows[1:]] == [
        "| nDCG@20", "| alpha_nDCG@20", "| ERR_IA@20", "| nERR_IA@20", "| StRecall@20",
    ]  # fmt: skip
    assert rows[1].split(" | ")[2] == "1.00×"
