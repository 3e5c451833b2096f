"""`rankmeter check` and the data warnings of `rankmeter evaluate` (issue 16, section 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._cli_support import CLI

QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\nq2 0 e 0\n"
GOOD = "q1 Q0 a 1 3.25 sys\nq1 Q0 b 2 2.5 sys\nq1 Q0 c 3 1.75 sys\nq2 Q0 d 1 0.75 sys\nq2 Q0 e 2 0.5 sys\n"
SWAPPED = "q1 Q0 a 3.25 1 sys\nq1 Q0 b 2.5 2 sys\nq1 Q0 c 1.75 3 sys\nq2 Q0 d 0.75 1 sys\nq2 Q0 e 0.5 2 sys\n"
# One judged query without results (q2), one result query without judgments (q9).
PARTIAL = "q1 Q0 a 1 3.25 sys\nq1 Q0 b 2 2.5 sys\nq9 Q0 a 1 1.0 sys\n"
FOREIGN = "x1 Q0 a 1 3.25 sys\n"
DUPLICATED = GOOD + "q1 Q0 a 1 3.25 sys\nq2 Q0 e 2 0.5 sys\nq2 Q0 e 2 0.5 sys\n"
TIED = "q1 Q0 a 1 1 sys\nq1 Q0 b 2 1 sys\nq1 Q0 c 3 1 sys\nq2 Q0 d 1 1 sys\nq2 Q0 e 2 1 sys\n"


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    texts = {
        "qrels": QRELS,
        "good": GOOD,
        "swapped": SWAPPED,
        "partial": PARTIAL,
        "foreign": FOREIGN,
        "duplicated": DUPLICATED,
        "tied": TIED,
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = tmp_path / f"{name}.run"
        paths[name].write_text(text)
    return paths


def test_clean_data_exits_0(cli: CLI, data: dict[str, Path]) -> None:
    result = cli("check", data["qrels"], data["good"], "-k", "3")
    assert result.code == 0 and result.err == ""
    assert "0 errors, 0 warnings" in " ".join(result.out.split())


@pytest.mark.parametrize(
    ("run", "words"),
    [
        ("swapped", "rank and score columns look swapped"),
        ("foreign", "no query in common with the qrels"),
        ("duplicated", "3 repeated lines (2 pairs written more than once"),
    ],
)
def test_meaningless_numbers_exit_1(cli: CLI, data: dict[str, Path], run: str, words: str) -> None:
    result = cli("check", data["qrels"], data["good"], data[run], "--format", "json")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["ok"] is False and [r["ok"] for r in report["runs"]] == [True, False]
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankmeter: check failed: 1 error makes ")
    table = cli("check", data["qrels"], data[run])
    assert table.code == 1 and words in " ".join(table.out.split())


def test_warnings_alone_exit_0(cli: CLI, data: dict[str, Path]) -> None:
    result = cli("check", data["qrels"], data["partial"], data["tied"], "-k", "2")
    assert result.code == 0 and result.err == ""
    out = " ".join(result.out.split())
    assert "1 judged query without results ('q2')" in out
    assert "1 result query without judgments ('q9')" in out
    assert "has ties in 100% of its top 2 positions" in out


def test_ties_with_metrics(cli: CLI, data: dict[str, Path]) -> None:
    result = cli("check", data["qrels"], data["tied"], "-m", "RR", "-m", "P@1", "-f", "json")
    ranges = json.loads(result.out)["runs"][0]["ties"]["metrics"]
    assert [r["metric"] for r in ranges] == ["RR", "P@1"]
    rr = ranges[0]
    # q1: c, b, a under trec_eval's order (b is the first relevant: RR 1/2); q2: e, d (1/2).
    # The worst order is the same; the best puts a and d first.
    assert (rr["value"], rr["best"], rr["worst"]) == (0.5, 1.0, 0.5)


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_every_format_renders_and_writes(
    cli: CLI, data: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    target = tmp_path / f"report.{fmt}"
    result = cli("check", data["qrels"], data["partial"], "--format", fmt, "-o", target)
    assert result.code == 0 and result.out == ""
    text = target.read_text()
    assert "q9" in text
    if fmt == "json":
        assert json.loads(text)["qrels"]["grades"] == [
            {"grade": 0, "count": 2},
            {"grade": 1, "count": 2},
            {"grade": 2, "count": 1},
        ]
    elif fmt == "markdown":
        assert "| run | queries | common |" in text and "| grade | judgments |" in text


def test_untrusted_ids_are_escaped(cli: CLI, data: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "evil.run"
    run.write_text("q1 Q0 a 1 3.0 sys\n<b>|\x1b[2J Q0 a 1 1.0 sys\n")
    table = cli("check", data["qrels"], run)
    assert "\x1b" not in table.out and "\\x1b[2J" in table.out
    markdown = cli("check", data["qrels"], run, "-f", "markdown")
    assert "\x1b" not in markdown.out and "\\<b\\>\\|\\\\x1b\\[2J" in markdown.out
    report = json.loads(cli("check", data["qrels"], run, "-f", "json").out)
    examples = report["runs"][0]["overlap"]["results_without_judgments_examples"]
    assert examples == ["<b>|\x1b[2J"]


def test_bad_input_is_one_line(cli: CLI, data: dict[str, Path], tmp_path: Path) -> None:
    missing = cli("check", data["qrels"], tmp_path / "nope.run")
    assert "nope.run" in missing.assert_one_error_line(1)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 high sys\n")
    assert "bad.run:1: score must be a number" in cli(
        "check", data["qrels"], bad
    ).assert_one_error_line(1)
    assert "k=0 must be an integer >= 1" in cli(
        "check", data["qrels"], data["good"], "-k", "0"
    ).assert_one_error_line(2)
    assert (
        "unknown metric"
        in cli("check", data["qrels"], data["good"], "-m", "nope").assert_one_error_line(2).lower()
    )


@pytest.mark.parametrize("columns", ["60", "120"])
def test_the_qrels_heading_is_one_line_whatever_the_width(
    cli: CLI, data: dict[str, Path], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    # As the grade table's title it was wrapped to the table's width (19 columns), even on a
    # 120-column terminal: "qrels: 24 queries," / "360 judgments".
    monkeypatch.setenv("COLUMNS", columns)
    result = cli("check", data["qrels"], data["good"])
    lines = result.out.splitlines()
    (heading,) = [line for line in lines if line.startswith("qrels: ")]
    assert heading.rstrip().endswith(" judgments"), heading
