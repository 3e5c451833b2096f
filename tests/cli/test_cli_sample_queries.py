"""`rankmeter sample-queries LOG --n N` (issue 13, item 4): the library's sample written as
CSV, TSV or JSON lines (atomically with -o), a split column without overlap, a summary line on
stderr, the same seed the same file; bad input is one error line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rankmeter.online import sample_queries

from ._cli_support import CLI, run_process


@pytest.fixture
def traffic(tmp_path: Path) -> Path:
    path = tmp_path / "traffic.csv"
    rows = [
        f"q{i},{max(1, 5000 // (i + 1))},{'mobile' if i % 3 else 'desktop'}" for i in range(500)
    ]
    path.write_text("query_id,count,segment\n" + "\n".join(rows) + "\n")
    return path


def test_csv_is_the_librarys_sample(cli: CLI, traffic: Path) -> None:
    result = cli("sample-queries", traffic, "--n", "40", "--stratify", "bucket", "--seed", "4")
    assert result.code == 0, result.err
    expected = sample_queries(traffic, 40, stratify="bucket", seed=4)
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert [r["query_id"] for r in rows] == list(expected.query_ids)
    assert [r["stratum"] for r in rows] == list(expected.strata_of)
    assert [int(r["count"]) for r in rows] == list(expected.counts)
    assert result.err.startswith("drew 40 of 500 queries (traffic-weighted; seed 4): head ")
    assert result.err.count("\n") == 1


def test_holdout_is_a_split_column_without_overlap(cli: CLI, traffic: Path, tmp_path: Path) -> None:
    out = tmp_path / "set.tsv"
    args = ("sample-queries", traffic, "--n", "50", "--stratify", "bucket", "--holdout", "0.2")
    result = cli(*args, "-f", "tsv", "-o", out)
    assert (result.code, result.out) == (0, ""), result.err
    rows = list(csv.DictReader(io.StringIO(out.read_text()), delimiter="\t"))
    test = {r["query_id"] for r in rows if r["split"] == "test"}
    tuning = {r["query_id"] for r in rows if r["split"] == "tuning"}
    assert len(test) == 10 and len(tuning) == 40 and not test & tuning
    assert "holdout: 10 test, 40 tuning" in result.err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_jsonl_uniform_and_a_segment(cli: CLI, traffic: Path) -> None:
    args = (
        "sample-queries",
        traffic,
        "--n",
        "30",
        "--stratify",
        "segment",
        "--weighting",
        "uniform",
    )
    result = cli(*args, "-f", "jsonl")
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert len(rows) == 30 and {r["stratum"] for r in rows} == {"mobile", "desktop"}
    assert "(uniform; seed 0)" in result.err and "of queries" in result.err


def test_the_same_seed_gives_the_same_file(cli: CLI, traffic: Path) -> None:
    args = ("sample-queries", traffic, "--n", "30", "--stratify", "bucket", "--holdout", "0.5")
    first, again = cli(*args, "--seed", "1"), cli(*args, "--seed", "1")
    assert first.out == again.out and first.out != cli(*args, "--seed", "2").out


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (("--n", "0"), 2, r"n=0 must be an integer >= 1"),
        (("--n", "600"), 2, r"n=600 is more than the 500 distinct queries in .*traffic\.csv"),
        (("--holdout", "1.5"), 2, r"holdout=1\.5 must be"),
        (
            ("--stratify", "device"),
            2,
            r"stratify='device' is neither 'bucket' nor a segment column",
        ),
    ],
)
def test_bad_options_are_one_error_line(
    cli: CLI, traffic: Path, extra: tuple[str, ...], code: int, message: str
) -> None:
    import re

    result = cli("sample-queries", traffic, *extra)
    assert re.search(message, result.assert_one_error_line(code))


def test_a_bad_table_is_one_error_line_with_its_line(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("query_id,count\na,1\nb,two\n")
    message = cli("sample-queries", path, "--n", "1").assert_one_error_line(1)
    assert message.endswith("t.csv:3: count must be a whole number >= 0, not 'two': 'b,two'")


def test_the_real_command_lists_sample_queries(traffic: Path) -> None:
    result = run_process(["--help"])
    assert result.code == 0 and "sample-queries" in result.out
    done = run_process(["sample-queries", traffic, "--n", "5"])
    assert done.code == 0 and done.out.startswith("query_id,count,stratum\n")


# --- query-mix ----------------------------------------------------------------------------------


def test_query_mix_json_is_the_librarys(cli: CLI, traffic: Path, tmp_path: Path) -> None:
    from rankmeter.online import query_mix

    drawn = tmp_path / "set.csv"
    assert (
        cli("sample-queries", traffic, "--n", "60", "--weighting", "uniform", "-o", drawn).code == 0
    )
    result = cli("query-mix", drawn, traffic, "-f", "json")
    assert (result.code, result.err) == (0, ""), result.err
    payload = json.loads(result.out)
    expected = query_mix(drawn, traffic)
    assert payload["chi_square"] == pytest.approx(expected.chi_square)
    assert payload["strata"][0]["detectable_difference"] is None  # one head query: none
    assert [s["eval_n"] for s in payload["strata"]] == [s.eval_n for s in expected.strata]
    assert payload["headline"].startswith("the evaluation set against traffic: chi-square ")
    assert "the mix differs at alpha 0.05" in payload["headline"]


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_query_mix_formats_say_the_same(cli: CLI, traffic: Path, tmp_path: Path, fmt: str) -> None:
    drawn = tmp_path / "set.csv"
    cli("sample-queries", traffic, "--n", "40", "--stratify", "segment", "-o", drawn)
    out = tmp_path / f"mix.{fmt}"
    result = cli("query-mix", drawn, traffic, "--stratify", "segment", "-f", fmt, "-o", out)
    assert (result.code, result.out, result.err) == (0, "", ""), result.err
    text = out.read_text().replace("\\", "")
    assert "the evaluation set against traffic: chi-square" in text
    assert "mobile" in text and "desktop" in text
    assert "detectable Δ" in text and "d_z" in text


def test_query_mix_bad_input_is_one_error_line(cli: CLI, traffic: Path, tmp_path: Path) -> None:
    stray = tmp_path / "set.csv"
    stray.write_text("query_id\nzz\n")
    message = cli("query-mix", stray, traffic).assert_one_error_line(2)
    assert message.startswith("none of the 1 evaluation queries of ")
    bad = cli("query-mix", stray, traffic, "--sd", "-1").assert_one_error_line(2)
    assert bad.startswith("sd=-1.0 must be")
    missing = cli("query-mix", tmp_path / "none.qrels", traffic).assert_one_error_line(1)
    assert "none.qrels" in missing
