"""Issue 16, section 1: evaluate and compare print the data warnings their own pass found on
stderr (tests/test_result_warnings.py tests the findings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._cli_support import CLI

QRELS = {f"q{i}": {"a": 2, "b": 1, "c": 0} for i in range(1, 5)}
ALL = ["q1", "q2", "q3", "q4"]


def _trec(path: Path, queries: list[str], *, swap: bool = False) -> Path:
    lines = []
    for q in queries:
        for doc, rank, score in [("a", 1, 3.5), ("b", 2, 2.5), ("c", 3, 1.5)]:
            first, second = (score, rank) if swap else (rank, score)
            lines.append(f"{q} Q0 {doc} {first} {second} sys\n")
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_the_cli_prints_the_warnings_on_stderr_and_exits_0(
    cli: CLI, tmp_path: Path, command: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    good = _trec(tmp_path / "good.run", ALL)
    swapped = _trec(tmp_path / "swapped.run", ["q1", "q2", "q3", "q7"], swap=True)
    result = cli(command, qrels, good, swapped, "-m", "P@1", "-f", "json")
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if "swapped.run" in line]
    assert len(lines) == 2, result.err
    assert any("ranks upside down" in line for line in lines)
    assert any("matches the qrels' queries only in part" in line for line in lines)
    assert all(line.startswith("rankmeter: warning: ") for line in lines)
    assert "good.run" not in result.err
    assert result.out.startswith(("{", "["))  # the report itself is unchanged JSON
    quiet = cli(command, qrels, good, swapped, "-m", "P@1", "-f", "json", "--quiet")
    assert "swapped.run" not in quiet.err


@pytest.mark.parametrize("command", ["compare", "evaluate"])
def test_a_run_with_no_query_in_common_is_said_on_stderr(
    cli: CLI, tmp_path: Path, command: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    runs = [_trec(tmp_path / f"{name}.run", ALL) for name in ("good", "also")]
    alien = _trec(tmp_path / "alien.run", ["x1", "x2", "x3", "x4"])
    extra = ["-c"] if command == "evaluate" else []
    result = cli(command, qrels, *runs, alien, "-m", "P@1", "-f", "json", *extra)
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if "alien.run" in line]
    assert len(lines) == 1, result.err
    assert lines[0].startswith("rankmeter: warning: run ")
    assert "has no query in common with the qrels" in lines[0]
    assert "it scores 0 on every judged query" in lines[0]
