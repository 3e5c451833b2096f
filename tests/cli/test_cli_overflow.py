"""Absurdly large grades and weights at the command line: every value finite or one error line,
never `inf`, a JSON null, 300-digit numbers or NumPy's RuntimeWarnings on stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ._cli_support import run_process

# Two queries whose DCG@10 is 1.63e308 each: finite, but their sum is not.
QRELS = "q1 0 a 1e308\nq1 0 b 1e308\nq2 0 a 1e308\nq2 0 b 1e308\n"
RUN_A = "q1 Q0 a 1 3 A\nq1 Q0 b 2 2 A\nq2 Q0 a 1 1 A\nq2 Q0 b 2 0 A\n"
RUN_B = "q1 Q0 b 1 3 B\nq1 Q0 a 2 2 B\nq2 Q0 b 1 1 B\n"
LONG_NUMBER = re.compile(r"\d{20}")


@pytest.fixture
def huge(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "qrels", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    for key, text in (("qrels", QRELS), ("a", RUN_A), ("b", RUN_B)):
        paths[key].write_text(text)
    return paths


def test_evaluate_prints_the_finite_mean(huge: dict[str, Path]) -> None:
    done = run_process(["evaluate", huge["qrels"], huge["a"], "-m", "DCG@10", "-f", "json"])
    assert (done.code, done.err) == (0, "")
    assert json.loads(done.out)["metrics"]["DCG@10"] == pytest.approx(1.6309297535714574e308)
    table = run_process(["evaluate", huge["qrels"], huge["a"], "-m", "DCG@10"])
    assert (table.code, table.err) == (0, "")
    assert "1.6309e+308" in table.out and not LONG_NUMBER.search(table.out), table.out


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "latex"])
def test_compare_on_huge_values_is_quiet_and_finite(huge: dict[str, Path], fmt: str) -> None:
    args = ["compare", huge["qrels"], huge["a"], huge["b"], "-m", "DCG@10", "-m", "nDCG@10"]
    done = run_process([*args, "--resamples", "200", "-f", fmt])
    assert (done.code, done.err) == (0, "")  # no RuntimeWarning
    if fmt == "json":
        means = json.loads(done.out)["means"]
        assert all(m["low"] is not None and m["high"] is not None for m in means), means
    else:
        assert not LONG_NUMBER.search(done.out), done.out
        assert "e+308" in done.out


def test_two_stage_on_huge_values_is_quiet_and_finite(huge: dict[str, Path]) -> None:
    args = ["two-stage", huge["qrels"], huge["a"], huge["b"], "--pool", "2", "-m", "DCG@10"]
    done = run_process(args)
    assert (done.code, done.err) == (0, "")
    assert not LONG_NUMBER.search(done.out) and "inf" not in done.out, done.out


@pytest.mark.parametrize("method", ["zscore", "minmax", "rrf"])
def test_fused_scores_are_finite_or_an_error(tmp_path: Path, method: str) -> None:
    # Both runs put a first: its z-score is 1.22 (1.22e308 weighted), its min-max score 1 and
    # its RRF score with k=0 is 1 in each (1e308 + 1e308 fused).
    runs = []
    for name in ("A", "B"):
        runs.append(tmp_path / f"{name}.run")
        runs[-1].write_text(
            "".join(f"q1 Q0 {d} {r} {4 - r} {name}\n" for r, d in [(1, "a"), (2, "b"), (3, "c")])
        )
    args = ["fuse", *runs, "--weights", "1e308,1e308", "--method", method]
    done = run_process([*args, "--k", "0"] if method == "rrf" else args)
    message = done.assert_one_error_line(1)
    assert re.fullmatch(
        r"the fused scores of query '\w+' add up beyond the largest float \(about 1\.8e308\): "
        r"use smaller weights",
        message,
    ), message
