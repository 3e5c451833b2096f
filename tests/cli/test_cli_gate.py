"""`rankmeter compare --fail-on regression`: a regression gate for CI (issue 16, item 2).

Exit 3 when a metric or a segment got significantly worse than the baseline (after the
correction) by more than --min-effect, one line per reason on stderr; the report still goes
to stdout or -o. Exit 0 when it passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ._cli_support import CLI

#: The documented exit status of a failed gate (1 is bad data, 2 usage).
REGRESSION = 3
N = 60


def write_case(folder: Path, *, broken: range, tail: range = range(0)) -> dict[str, Path]:
    """A generated collection: graded qrels, a good baseline, and a new run made worse on
    purpose on the ``broken`` queries (its scores reversed) and, on the ``tail`` queries,
    reversed as well; elsewhere the new run scores as the baseline does plus small noise."""
    rng = np.random.default_rng(16)
    qrels, base, new = [], [], []
    for q in range(N):
        grades = rng.choice([0, 0, 1, 2], size=10)
        grades[0] = 2  # every query has a relevant document
        qrels += [f"{q} 0 d{i} {g}" for i, g in enumerate(grades)]
        good = grades + rng.normal(0, 0.3, 10)
        mine = -good if q in broken or q in tail else good + rng.normal(0, 0.01, 10)
        for name, scores, lines in (("base", good, base), ("new", mine, new)):
            lines += [f"{q} Q0 d{i} 0 {s:.6f} {name}" for i, s in enumerate(scores)]
    paths = {
        "qrels": folder / "qrels.txt",
        "base": folder / "base.run",
        "new": folder / "new.run",
        "segments": folder / "segments.tsv",
    }
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["base"].write_text("\n".join(base) + "\n")
    paths["new"].write_text("\n".join(new) + "\n")
    rows = ["query_id\tfreq"] + [f"{q}\t{'tail' if q in tail else 'head'}" for q in range(N)]
    paths["segments"].write_text("\n".join(rows) + "\n")
    return paths


def gate(cli: CLI, case: dict[str, Path], *args: str) -> tuple[int, str, str]:
    result = cli(
        "compare",
        case["qrels"],
        case["base"],
        case["new"],
        "-m",
        "nDCG@10",
        "--resamples",
        "2000",
        "--fail-on",
        "regression",
        *args,
    )
    return result.code, result.out, result.err


def test_a_planted_regression_fails_the_gate(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0, N, 2))
    code, out, err = gate(cli, case, "-f", "json")
    assert code == REGRESSION, err
    payload = json.loads(out)  # the report still goes to stdout, whole
    assert payload["differences"][0]["significant"]
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rankmeter: regression: new is worse than base on nDCG@10")
    assert "Holm p " in lines[0] and "60 queries" in lines[0]


def test_a_clean_change_passes(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0))
    code, out, err = gate(cli, case)
    assert code == 0, err
    assert "Against base" in out
    assert err == "rankmeter: gate passed: no metric is significantly worse than base\n"


def test_quiet_passes_without_a_word(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0))
    code, out, err = gate(cli, case, "--quiet")
    assert (code, err) == (0, "") and "Against base" in out


def test_min_effect_above_the_drop_passes(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0, N, 2))
    code, out, _ = gate(cli, case, "-f", "json")
    drop = -json.loads(out)["differences"][0]["difference"]
    assert drop > 0.05
    code, _, err = gate(cli, case, "--min-effect", f"{drop + 0.01:.4f}")
    assert code == 0, err
    assert "by more than" in err
    code, _, err = gate(cli, case, "--min-effect", f"{drop - 0.01:.4f}")
    assert code == REGRESSION
    assert f"a drop of more than --min-effect {drop - 0.01:.4f}".rstrip("0") in err


def test_a_segment_that_got_worse_fails_the_gate(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0), tail=range(40, N))
    out_file = tmp_path / "report.md"
    # Overall the drop is a third of the tail's: a --min-effect between them lets only the
    # segment fail the gate.
    code, out, err = gate(
        cli,
        case,
        "--segments",
        str(case["segments"]),
        "--min-segment",
        "10",
        "-f",
        "markdown",
        "-o",
        str(out_file),
        "--min-effect",
        "0.25",
    )
    assert code == REGRESSION, err
    assert out == "" and "WORSE" in out_file.read_text()  # -o still written
    (line,) = err.splitlines()
    assert line.startswith(
        "rankmeter: regression: new is worse than base on nDCG@10 in segment freq=tail "
        "(20 queries): -"
    ), line
    # Without segments the same change passes at that threshold.
    code, _, err = gate(cli, case, "--min-effect", "0.25")
    assert code == 0, err


def test_each_reason_is_one_line(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0, N, 2))
    result = cli(
        "compare",
        case["qrels"],
        case["base"],
        case["new"],
        case["new"],
        "-m",
        "nDCG@10",
        "-m",
        "P@5",
        "--resamples",
        "2000",
        "--fail-on",
        "regression",
    )
    assert result.code == REGRESSION, result.err
    lines = result.err.splitlines()
    assert len(lines) == 4 and all(x.startswith("rankmeter: regression: ") for x in lines)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-0.1", "min_effect=-0.1 must be a number >= 0"),
        ("nan", "min_effect=nan must be a finite number >= 0"),
        ("inf", "min_effect=inf must be a finite number >= 0"),
    ],
)
def test_a_bad_min_effect_is_one_error_line(
    cli: CLI, tmp_path: Path, value: str, message: str
) -> None:
    case = write_case(tmp_path, broken=range(0))
    result = cli(
        "compare", case["qrels"], case["base"], "/nonexistent.run", "--fail-on", "regression",
        "--min-effect", value,
    )  # fmt: skip
    assert result.assert_one_error_line(2).startswith(message)  # before any file is read


def test_min_effect_needs_the_gate(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0))
    result = cli("compare", case["qrels"], case["base"], case["new"], "--min-effect", "0.01")
    assert result.assert_one_error_line(2) == (
        "--min-effect is the threshold of the regression gate: give --fail-on regression with it"
    )


def test_the_gate_needs_a_baseline_pair(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0))
    result = cli("compare", case["qrels"], case["base"], "--fail-on", "regression")
    assert "compare needs two runs or more" in result.assert_one_error_line(2)


def test_an_unknown_fail_on_is_one_error_line(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path, broken=range(0))
    result = cli("compare", case["qrels"], case["base"], case["new"], "--fail-on", "worse")
    assert "'worse' is not one of 'regression'" in result.assert_one_error_line(2)


def test_the_exit_status_is_documented(cli: CLI) -> None:
    help_text = " ".join(cli("compare", "--help").out.split())
    assert "exit 3" in help_text and "--fail-on" in help_text
