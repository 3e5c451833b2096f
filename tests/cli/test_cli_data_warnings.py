"""Issue 16, section 1: evaluate and compare print the data warnings their own pass found on
stderr (tests/test_result_warnings.py tests the findings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ._cli_support import CLI, run_process

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


@pytest.mark.parametrize(
    "args",
    [
        ("compare",),  # compare scores every judged query by default
        ("compare", "--answered-only"),  # the baseline answers, so the set is not empty
        ("compare", "--fail-on", "regression"),  # a CI gate must not pass on a foreign baseline
    ],
)
def test_compare_refuses_a_run_with_no_query_in_common(
    cli: CLI, tmp_path: Path, args: tuple[str, ...]
) -> None:
    # Issue 16, section 1: "fail with a clear error when [the overlap] is empty". Before,
    # evaluate -c and compare scored such a run 0 everywhere, exit 0, no word: a baseline
    # with ids from another scheme let any change pass the regression gate.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    good = _trec(tmp_path / "good.run", ALL)
    foreign = tmp_path / "foreign.run"  # its own tag: compare names it 'foreign'
    foreign.write_text("".join(f"x{i} Q0 a 1 1.0 foreign\n" for i in (1, 2, 3)))
    command, *options = args
    result = cli(command, qrels, foreign, good, "-m", "P@1", *options)
    message = result.assert_one_error_line(1)
    assert re.fullmatch(
        rf"run 'foreign' \({re.escape(str(foreign))}\) has no query in common with the qrels "
        rf"\({re.escape(str(qrels))}\): run queries start x1, x2, x3, qrels queries start q1, "
        r"q2, q3, \.\.\.; check that the files belong together",
        message,
    ), message


def test_evaluate_c_warns_about_a_run_with_no_query_in_common(cli: CLI, tmp_path: Path) -> None:
    # evaluate -c scores every judged query (0 without results), so it evaluates such a run
    # (as its Spark engine does); before, it printed nDCG 0.0 with no word on stderr.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    foreign = tmp_path / "foreign.run"
    foreign.write_text("".join(f"x{i} Q0 a 1 1.0 foreign\n" for i in (1, 2, 3)))
    result = cli("evaluate", qrels, foreign, "-m", "P@1", "-c")
    assert result.code == 0, result.err
    assert result.err == (
        f"rankmeter: warning: run 'foreign' ({foreign}) has no query in common with the qrels: "
        "0 of 4 judged queries have results; 4 judged queries without results ('q1', 'q2', "
        "'q3', 'q4'); 3 result queries without judgments ('x1', 'x2', 'x3'); check that the "
        "files belong together (ids from another scheme?)\n"
    )


def test_a_piped_run_that_looks_upside_down_is_not_told_to_negate_its_scores(
    tmp_path: Path,
) -> None:
    # A pipe cannot be read again for its rank column, so a run written bottom-up (rank 3
    # first, right scores) looks like one with lower-is-better scores. Before, the warning
    # said "negate them", which would turn right numbers into wrong ones.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    lines = [
        f"{q} Q0 {doc} {rank} {score} sys\n"
        for q in ALL
        for doc, rank, score in [("c", 3, 1.5), ("b", 2, 2.5), ("a", 1, 3.5)]
    ]
    result = run_process(["evaluate", qrels, "-", "-m", "P@1"], stdin="".join(lines).encode())
    assert result.code == 0, result.err
    (line,) = result.err.splitlines()
    assert line.startswith("rankmeter: warning: run 'sys' (<stdin>) ranks upside down"), line
    assert "(distances?): negate them" not in line  # no longer said without a doubt
    assert "unless the run is only written bottom-up (rank 1 last): look at its rank column" in line


def test_the_markdown_summary_carries_the_data_warnings(cli: CLI, tmp_path: Path) -> None:
    # docs/ci.md: the PR comment holds "the table of differences against the baseline and any
    # warning"; the data warnings went to the CI log (stderr) only, not to the comment.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in ALL for d, g in QRELS[q].items()))
    good = _trec(tmp_path / "good.run", ALL)
    partial = _trec(tmp_path / "partial.run", ["q1", "q2", "q3", "q7"])
    summary = tmp_path / "summary.md"
    result = cli(
        "compare",
        qrels,
        f"base={good}",
        f"new={partial}",
        "-m",
        "P@1",
        "-f",
        "markdown",
        "-o",
        summary,
        "--quiet",
    )
    assert result.code == 0, result.err
    text = summary.read_text("utf-8")
    table_end = text.index("<details>")
    assert "> warning: run 'new' (" in text[:table_end]
    assert "matches the qrels' queries only in part" in text[:table_end]
    assert "run 'base'" not in text
