"""`rankmeter agree` end to end on files (issue 11, item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ._cli_support import CLI, run_process

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

LABELS = (
    "query_id,doc_id,rater,label\n"
    "1,d1,ann,1\n1,d1,bob,1\n"
    "1,d2,ann,0\n1,d2,bob,0\n"
    "1,d3,ann,1\n1,d3,bob,0\n"
    "1,d4,ann,0\n1,d4,bob,0\n"
)


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(LABELS)
    return path


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_a_long_table_as_json(cli: CLI, labels: Path) -> None:
    done = cli("agree", labels, "--format", "json", "--scale", "0-1", "--resamples", "50")
    assert done.code == 0, done.err
    document = _strict(done.out)
    (pair,) = document["pairs"]
    # The hand-computed 2x2 table of tests/judgments/test_agreement.py: kappa 0.5.
    assert pair["cohen_kappa"] == pytest.approx(0.5)
    assert pair["confusion"] == [[2, 0], [1, 1]]
    assert document["raw_agreement"] == 0.75
    assert document["krippendorff_alpha"]["resamples"] == 50
    assert document["disagreements"][0]["labels"] == {"ann": 1, "bob": 0}


def test_the_table_and_markdown(cli: CLI, labels: Path) -> None:
    table = cli("agree", labels, "--resamples", "20")
    assert table.code == 0, table.err
    assert "Cohen's κ" in table.out and "0.500" in table.out and "most disputed" in table.out
    markdown = cli("agree", labels, "-f", "markdown", "--resamples", "20", "--top", "0")
    assert markdown.code == 0
    assert "| ann | bob | 4 | 0.750 | 0.500 |" in markdown.out
    assert "Most disputed" not in markdown.out


def test_the_seed_decides_the_interval(cli: CLI, labels: Path) -> None:
    def interval(seed: str) -> Any:
        done = cli("agree", labels, "-f", "json", "--seed", seed, "--resamples", "30")
        return _strict(done.out)["krippendorff_alpha"]["levels"]

    assert interval("1") == interval("1")


def test_output_to_a_file(cli: CLI, labels: Path, tmp_path: Path) -> None:
    out = tmp_path / "agreement.json"
    done = cli("agree", labels, "-f", "json", "-o", out, "--resamples", "10")
    assert done.code == 0 and done.out == ""
    assert _strict(out.read_text())["raters"] == ["ann", "bob"]


def test_several_qrels_files_one_per_rater(cli: CLI, tmp_path: Path) -> None:
    ann = tmp_path / "ann.qrels.txt"
    ann.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n1 0 d4 0\n")
    bob = tmp_path / "bob.txt"
    bob.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 0\n1 0 d4 0\n")
    done = cli("agree", ann, bob, "-f", "json", "--resamples", "10")
    assert done.code == 0, done.err
    document = _strict(done.out)
    assert document["raters"] == ["ann", "bob"]
    assert document["pairs"][0]["cohen_kappa"] == pytest.approx(0.5)
    named = _strict(cli("agree", ann, bob, "-f", "json", "--raters", "x,y").out)
    assert named["raters"] == ["x", "y"]


def test_a_hostile_rater_name_is_escaped(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    hostile = "<script>alert(1)</script>\x1b]0;pwned\x07|x"
    path.write_text(
        "".join(
            json.dumps({"query_id": "1", "doc_id": d, "rater": r, "label": g}) + "\n"
            for d, a, b in (("d1", 1, 0), ("d2", 0, 0), ("d3", 1, 1))
            for r, g in ((hostile, a), ("bob", b))
        )
    )
    table = cli("agree", path, "--resamples", "10")
    assert table.code == 0, table.err
    assert "\x1b" not in table.out and "\x07" not in table.out
    assert "\\x1b]0;pwned\\x07" in table.out
    markdown = cli("agree", path, "-f", "markdown", "--resamples", "10")
    assert "<script>" not in markdown.out and "\x1b" not in markdown.out
    assert "\\<script\\>" in markdown.out and "\\|x" in markdown.out
    document = _strict(cli("agree", path, "-f", "json", "--resamples", "10").out)
    assert hostile in document["raters"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--scale", "three"], 2, "scale='three' must be LOW-HIGH"),
        (["--raters", "a,b"], 2, "--raters names the raters of several qrels files"),
        (["--top", "-1"], 2, "top=-1 must be an integer >= 0"),
        (["--resamples", "0"], 2, "resamples=0 must be an integer from 1 to 1,000,000"),
        (["--scale", "0-0"], 2, "scale='0-0' must be LOW-HIGH"),
    ],
)
def test_usage_errors(cli: CLI, labels: Path, args: list[str], code: int, message: str) -> None:
    assert message in cli("agree", labels, *args).assert_one_error_line(code)


def test_data_errors(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,rater,label\n1,d1,ann,1\n1,d1,bob,5\n")
    error = cli("agree", path, "--scale", "0-3").assert_one_error_line(1)
    assert error.startswith(f"{path}:3: label 5 is outside the scale 0-3")
    path.write_text("query_id,doc_id,rater,label\n1,d1,ann,1\n1,d2,bob,1\n")
    error = cli("agree", path).assert_one_error_line(1)
    assert "no item was labelled by two raters or more" in error
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n")
    error = cli("agree", qrels).assert_one_error_line(1)
    assert "a labels table is CSV/TSV with a header" in error
    missing = cli("agree", tmp_path / "nope.csv").assert_one_error_line(1)
    assert "nope.csv: no such file" in missing


def test_empty_inputs_are_one_line_naming_them(cli: CLI, tmp_path: Path) -> None:
    # issue 23's trial: `rankmeter agree empty.qrels` ended in an internal error (exit 70)
    empty = tmp_path / "empty.qrels"
    empty.write_bytes(b"")
    error = cli("agree", empty).assert_one_error_line(1)
    assert error == f"{empty}: file is empty: no labels in it"
    blank = tmp_path / "blank.qrels"
    blank.write_text("\n\n")
    error = cli("agree", blank).assert_one_error_line(1)
    assert error == f"{blank}: file is empty: no labels in it"
    assert "file is empty" in run_process(["agree", "-"]).assert_one_error_line(1)
    for name, text in (("empty.csv", ""), ("header.csv", "query_id,doc_id,rater,label\n")):
        path = tmp_path / name
        path.write_text(text)
        assert str(path) in cli("agree", path).assert_one_error_line(1)
    judged = tmp_path / "judged.qrels"
    judged.write_text("1 0 d1 1\n")
    error = cli("agree", judged, empty).assert_one_error_line(1)
    assert error == f"{empty}: file is empty"


def test_rater_names_must_match_the_files(cli: CLI, tmp_path: Path) -> None:
    a = tmp_path / "a" / "judge.txt"
    b = tmp_path / "b" / "judge.txt"
    for path in (a, b):
        path.parent.mkdir()
        path.write_text("1 0 d1 1\n")
    error = cli("agree", a, b).assert_one_error_line(2)
    assert "two qrels files are rater 'judge': name the raters with --raters" in error
    error = cli("agree", a, b, "--raters", "x").assert_one_error_line(2)
    assert "--raters gives 1 names for 2 qrels files" in error
