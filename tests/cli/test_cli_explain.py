"""`rankmeter explain`: per-rank tables and steps in text, Markdown, JSON and HTML; its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankmeter

from ._cli_support import CLI


def test_text_for_a_query_of_the_files(cli: CLI, files: dict[str, Path]) -> None:
    done = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "nDCG@10", "-m", "AP")
    assert done.code == 0, done.err
    assert done.err == ""
    out = done.out
    assert out.startswith("nDCG@10 for query '1' in run 'bm25' = 0.7985\n\n")
    assert "rank  doc  score     grade  gain  discount  contribution\n" in out
    assert "   2  d        2  unjudged     0     1.585             0\n" in out
    assert "\nideal ordering:\n" in out
    assert "  DCG@10 = 2/1 + 0/1.585 + 1/2 + 0/2.322 = 2.5\n" in out
    assert "  nDCG@10 = 2.5 / 3.13 = 0.8\n" in out
    assert "results with equal scores (ranks 2, 3) are ordered by doc id, descending" in out
    assert "\nAP for query '1' in run 'bm25' = 0.5556\n" in out
    assert "  AP = (1/1 + 2/3) / 3 relevant judged = 1.667 / 3 = 0.56\n" in out


def test_the_lesson_from_grades_alone(cli: CLI) -> None:
    done = cli("explain", "--grades", "3,0,2", "-m", "nDCG(gain=exp)@3")
    assert done.code == 0, done.err
    assert done.out.startswith("nDCG(gain=exp)@3 for the grades given = 0.9558\n")
    for line in (
        "DCG@3 = 7/1 + 0/1.585 + 3/2 = 8.5",
        "ideal DCG@3 = 7/1 + 3/1.585 + 0/2 = 8.89",
        "nDCG(gain=exp)@3 = 8.5 / 8.89 = 0.96",
    ):
        assert f"  {line}\n" in done.out
    linear = cli("explain", "--grades", "3,0,2", "-m", "nDCG@3", "--judgments", "3,2,2,1")
    assert "  DCG@3 = 3/1 + 0/1.585 + 2/2 = 4.0\n" in linear.out
    assert "  ideal DCG@3 = 3/1 + 2/1.585 + 2/2 = 5.26\n" in linear.out


def test_grades_with_several_metrics(cli: CLI) -> None:
    done = cli("explain", "--grades", "1,0,1,0,0,0,0,0,0,1", "-m", "P@10", "-m", "RR", "-m", "AP")
    assert done.code == 0, done.err
    assert "  P@10 = 3 relevant in the top 10 / 10 = 0.3\n" in done.out
    assert "  first relevant result at rank 1: RR = 1/1 = 1.0\n" in done.out
    assert "  AP = (1/1 + 2/3 + 3/10) / 3 relevant judged = 1.967 / 3 = 0.66\n" in done.out
    # An unjudged result (?) and a negative grade, which must not be taken for an option.
    odd = cli("explain", "--grades", "-1,?,2", "-m", "RR")
    assert odd.code == 0, odd.err
    assert "-1 (unjudged)" in odd.out and "first relevant result at rank 3" in odd.out


def test_markdown(cli: CLI, files: dict[str, Path]) -> None:
    done = cli(
        "explain", files["qrels"], files["a"], "--query", "2", "-m", "Bpref", "-J", "-f", "markdown"
    )
    assert done.code == 0, done.err
    assert done.out.startswith("### `Bpref` for query `2` in run `bm25` = 1.0000\n\n")
    assert (
        "| rank | doc | score | grade | judged | relevant | non-relevant above | contribution |"
        in (done.out)
    )
    assert "| 1 | a | 8 | 1 | yes | yes | 0 | 1 |" in done.out
    assert "*judged\\_only (-J): 2 unjudged results were removed before scoring" in done.out
    assert "1. Bpref = (1 + 1) / 2 = 2 / 2 = 1.0" in done.out


def test_json_matches_evaluate(cli: CLI, files: dict[str, Path]) -> None:
    done = cli(
        "explain", files["qrels"], files["a"], "--query", "1", "-m", "nDCG@10", "-m", "P@2",
        "--rel", "2", "--format", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["query"] == "1" and data["run"] == "bm25"
    assert data["policies"] == {"rel": 2, "judged_only": False, "ties": "trec_eval"}
    assert list(data["metrics"]) == ["nDCG@10", "P@2"]
    expected = rankmeter.evaluate(files["qrels"], files["a"], ["nDCG@10", "P@2"], rel=2)
    row = expected.per_query.to_dict()["1"]
    for name, explained in data["metrics"].items():
        assert explained["value"] == row[name]
        assert explained["query"] == "1"
    assert data["metrics"]["P@2"]["rows"][0] == {
        "rank": 1, "doc": "a", "score": 3.0, "grade": 2, "relevant": True,
    }  # fmt: skip
    grades = json.loads(cli("explain", "--grades", "3,0,2", "-m", "RR", "-f", "json").out)
    assert grades["grades"] == [3, 0, 2] and grades["query"] is None
    assert grades["metrics"]["RR"]["value"] == 1.0


def test_html_fragment(cli: CLI, files: dict[str, Path]) -> None:
    done = cli("explain", files["qrels"], files["a"], "--query", "007", "-m", "RR", "-f", "html")
    assert done.code == 0, done.err
    assert done.out.startswith('<section class="rankmeter-explain" id="explain-bm25-007-RR">\n')
    assert "<h3>RR for query &#x27;007&#x27; in run &#x27;bm25&#x27; = 1.0000</h3>" in done.out


def test_ties_input_and_output_file(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "explained.md"
    done = cli(
        "explain", files["qrels"], files["a"], "--query", "1", "-m", "P@3", "--ties", "input",
        "-f", "markdown", "-o", target,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.out == ""
    text = target.read_text(encoding="utf-8")
    assert "| 2 | b | 2 | 1 | yes |\n| 3 | d | 2 | unjudged | no |" in text
    assert "in the order they were given (ties=input)" in text
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["explained.md"]


def test_queries_that_evaluate_leaves_out_are_explained(cli: CLI, files: dict[str, Path]) -> None:
    no_results = cli(
        "explain", files["qrels"], files["a"], "--query", "3", "-m", "NumRel", "-m", "AP"
    )
    assert no_results.code == 0, no_results.err
    assert "run 'bm25' has no results for query '3': evaluate leaves the query out" in (
        no_results.out
    )
    assert "(no results to show)" in no_results.out
    assert "  no relevant result: AP = 0 / 1 = 0\n" in no_results.out
    unjudged = cli("explain", files["qrels"], files["a"], "--query", "9", "-m", "P@5")
    assert unjudged.code == 0, unjudged.err
    assert "the qrels have no judgments for query '9'" in unjudged.out
    assert "  P@5 = 0 relevant in the top 5 / 5 = 0.0\n" in unjudged.out


# --- errors: one line on stderr, nothing on stdout ----------------------------------------------


def test_unknown_query(cli: CLI, files: dict[str, Path]) -> None:
    message = cli(
        "explain", files["qrels"], files["a"], "--query", "8", "-m", "AP"
    ).assert_one_error_line(1)
    assert message == (
        f"query '8' is in neither the qrels ({files['qrels']}) nor the run 'bm25' "
        f"({files['a']}); nearest known ids: '007', '9', '3'"
    )
    named = cli("explain", files["qrels"], files["a"], "--query", "1x").assert_one_error_line(1)
    assert named.endswith("nearest known ids: '1'")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--grades", "3,0,2", "{qrels}"), "--grades explains a ranking given by hand: give it "
         "without QRELS and RUN files (or give the files and --query instead)"),
        (("--grades", "3,0,2", "--query", "1"), "--query needs QRELS and RUN files; it does not go "
         "with --grades"),
        (("--grades", "3,0,2", "-J"), "--judged-only needs QRELS and RUN files; it does not go "
         "with --grades"),
        (("{qrels}", "{run}", "--query", "1", "--judgments", "1"), "--judgments goes with --grades (a "
         "ranking given by hand)"),
        (("{qrels}", "--query", "1"), "give QRELS and RUN files and --query, or --grades (e.g. "
         "--grades 3,0,2)"),
        (("{qrels}", "{run}"), "give --query: the query to explain (e.g. --query 1)"),
    ],
)  # fmt: skip
def test_usage_errors(
    cli: CLI, files: dict[str, Path], args: tuple[str, ...], message: str
) -> None:
    filled = [a.format(qrels=files["qrels"], run=files["a"]) for a in args]
    got = cli("explain", *filled).assert_one_error_line(2)
    assert got == f"{message} (see 'rankmeter explain --help')"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--grades", "3,high,2"), "grades: item 2, 'high', is not a grade; give numbers "
         "separated by commas, e.g. 3,0,2 (? for an unjudged result)"),
        (("--grades", ""), "grades: none given; give numbers separated by commas, e.g. 3,0,2 "
         "(? for an unjudged result)"),
        (("--grades", "3,,2"), "grades: item 2 is empty in '3,,2'; give numbers separated by "
         "commas, e.g. 3,0,2 (? for an unjudged result)"),
        (("--grades", ","), "grades: item 1 is empty in ','; give numbers separated by commas, "
         "e.g. 3,0,2 (? for an unjudged result)"),
        (("--grades", "3,nan"), "grades: item 2, 'nan', is not a finite grade; give numbers "
         "separated by commas, e.g. 3,0,2 (? for an unjudged result)"),
        (("--grades", "1", "--judgments", "2,,1"), "judgments: item 2 is empty in '2,,1'; give "
         "numbers separated by commas, e.g. 3,0,2"),
        (("--grades", "1", "--judgments", "2,?"), "judgments: item 2, '?', is not a grade here; give "
         "numbers separated by commas, e.g. 3,0,2"),
        (("--grades", "1", "-m", "ndgc@10"), "unknown metric 'ndgc@10'; did you mean nDCG@10?"),
        (("-", "-", "--query", "1"), "only one input can be read from stdin ('-')"),
    ],
)  # fmt: skip
def test_bad_grades_and_metrics_are_usage_errors(
    cli: CLI, args: tuple[str, ...], message: str
) -> None:
    assert cli("explain", *args).assert_one_error_line(2).startswith(message)


def test_bad_data_and_unwritable_output(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1 0 a high\n")
    message = cli("explain", bad, files["a"], "--query", "1").assert_one_error_line(1)
    assert message == f"{bad}:1: grade must be a number, not 'high': '1 0 a high'"
    into_dir = cli("explain", "--grades", "1", "-m", "RR", "-o", tmp_path).assert_one_error_line(1)
    assert into_dir == f"{tmp_path}: is a directory; give a file name to write to"


# -- issue 16: --queries shows the query's text; the ideal ordering names its documents


@pytest.mark.parametrize(
    ("fmt", "shown"),
    [
        ("text", "query text: what is <bm25>?"),
        ("markdown", "Query text: what is \\<bm25\\>?"),
        ("html", '<p class="explain-query">query text: what is &lt;bm25&gt;?</p>'),
    ],
)
def test_queries_file_shows_the_query_text(
    cli: CLI, files: dict[str, Path], tmp_path: Path, fmt: str, shown: str
) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("1\twhat is <bm25>?\n2\tother\n")
    args = ("explain", files["qrels"], files["a"], "--query", "1", "-m", "nDCG@10")
    result = cli(*args, "--queries", queries, "-f", fmt)
    assert result.code == 0, result.err
    assert shown in result.out
    assert "query text" not in cli(*args, "-f", fmt).out.lower()  # only with --queries


def test_queries_file_in_json_and_without_the_query(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("1\twhat is bm25\n")
    args = ("explain", files["qrels"], files["a"], "-m", "nDCG@10", "--queries", queries)
    payload = json.loads(cli(*args, "--query", "1", "-f", "json").out)
    assert payload["query_text"] == "what is bm25"
    assert payload["metrics"]["nDCG@10"]["query_text"] == "what is bm25"
    absent = cli(*args, "--query", "2", "-f", "json")
    assert absent.code == 0 and "query_text" not in json.loads(absent.out)


def test_queries_goes_with_files_not_grades(cli: CLI, tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("1\twhat is bm25\n")
    got = cli("explain", "--grades", "3,0", "--queries", queries).assert_one_error_line(2)
    assert got == (
        "--queries needs QRELS and RUN files; it does not go with --grades (see 'rankmeter "
        "explain --help')"
    )


def test_the_ideal_table_names_the_documents(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "nDCG@10")
    assert result.code == 0, result.err
    ideal = result.out.split("ideal ordering:", 1)[1].split("how the value follows", 1)[0]
    lines = [line.split() for line in ideal.strip().splitlines()]
    assert lines[0][:3] == ["rank", "doc", "grade"]
    # Query 1's judgments: a 2, b 1, e 1 (c is 0): best first, equal grades in doc id order.
    assert [row[1] for row in lines[1:]] == ["a", "b", "e"]
