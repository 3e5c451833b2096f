"""`rankmeter evaluate`: output formats, default metrics, policies, stdin, -o."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

import rankmeter
import rankmeter.io
from rankmeter import evaluate
from rankmeter.metrics import DEFAULT_METRICS, parse_metrics

from ._cli_support import CLI, NO_JUDGED_WARNING, QRELS, RUN_A, evaluate_json, run_process

METRICS = ["nDCG@10", "P@2", "R@100", "RR", "AP", "NumRet", "nDCG(gain=exp)@3", "Bpref"]


def metric_args(names: list[str] = METRICS) -> list[str]:
    return [arg for name in names for arg in ("-m", name)]


def library(files: dict[str, Path], run: str = "a", **policies: Any) -> rankmeter.EvalResult:
    return evaluate(files["qrels"], files[run], METRICS, **policies)


def test_json_for_one_run_is_exactly_the_metrics(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate",
        files["qrels"],
        files["a"],
        *metric_args(),
        "--format",
        "json",
        *NO_JUDGED_WARNING,
    )
    assert result.code == 0 and result.err == ""
    payload = evaluate_json(result.out)
    assert list(payload) == ["metrics"]
    expected = library(files)
    assert list(payload["metrics"]) == [str(m) for m in parse_metrics(METRICS)]
    for name, value in payload["metrics"].items():
        assert value == expected.metrics[name]  # full double precision, no rounding
    assert payload["metrics"]["NumRet"] == 9 and isinstance(payload["metrics"]["NumRet"], int)


def test_json_per_query(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate",
        files["qrels"],
        files["a"],
        *metric_args(),
        "-f",
        "json",
        *NO_JUDGED_WARNING,
        "-q",
    )
    payload = evaluate_json(result.out)
    assert list(payload) == ["metrics", "per_query"]
    expected = library(files)
    assert payload == expected.to_dict(per_query=True)
    assert set(payload["per_query"]) == {"1", "2", "007"}
    assert payload["per_query"]["2"]["RR"] == 0.5


def test_json_for_several_runs_is_a_list_with_run_names(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate",
        files["qrels"],
        files["a"],
        files["b"],
        *metric_args(),
        "-f",
        "json",
        *NO_JUDGED_WARNING,
    )
    payload = evaluate_json(result.out)
    assert [item["run"] for item in payload] == ["bm25", "dense"]
    assert all(list(item) == ["run", "metrics"] for item in payload)
    assert payload[1]["metrics"] == library(files, "b").to_dict()["metrics"]
    with_queries = evaluate_json(
        cli(
            "evaluate",
            files["qrels"],
            files["a"],
            files["b"],
            "-f",
            "json",
            *NO_JUDGED_WARNING,
            "-q",
        ).out
    )
    assert all(list(item) == ["run", "metrics", "per_query"] for item in with_queries)


def test_default_metrics(cli: CLI, files: dict[str, Path]) -> None:
    payload = json.loads(cli("evaluate", files["qrels"], files["a"], "-f", "json").out)
    assert list(payload["metrics"]) == [str(m) for m in parse_metrics(DEFAULT_METRICS)]
    expected = evaluate(files["qrels"], files["a"])
    assert payload["metrics"] == dict(expected.metrics)


def test_tsv_one_row_per_run(cli: CLI, files: dict[str, Path]) -> None:
    out = cli("evaluate", files["qrels"], files["a"], files["b"], *metric_args(), "-f", "tsv").out
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows[0] == ["run", *(str(m) for m in parse_metrics(METRICS))]
    assert [row[0] for row in rows[1:]] == ["bm25", "dense"]
    expected = library(files)
    assert [float(v) for v in rows[1][1:]] == [expected.metrics[n] for n in rows[0][1:]]


def test_tsv_per_query_rows_then_all(cli: CLI, files: dict[str, Path]) -> None:
    out = cli(
        "evaluate", files["qrels"], files["a"], files["b"], "-m", "P@2", "-f", "tsv", "-q"
    ).out
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows[0] == ["run", "query_id", "P@2"]
    a_rows = [row for row in rows[1:] if row[0] == "bm25"]
    assert [row[1] for row in a_rows] == ["1", "2", "007", "all"]
    assert [row[1] for row in rows[1:] if row[0] == "dense"][-1] == "all"
    per_query = library(files).per_query.to_dict()
    for row in a_rows[:-1]:
        assert float(row[2]) == per_query[row[1]]["P@2"]


def test_trec_lines_look_like_trec_eval_q(cli: CLI, files: dict[str, Path]) -> None:
    args = ["-m", "P@2", "-m", "nDCG@10", "-m", "AP", "-m", "RR", "-m", "NumRet"]
    out = cli("evaluate", files["qrels"], files["a"], *args, "-f", "trec", "-q").out
    lines = [line.split("\t") for line in out.splitlines()]
    assert all(len(parts) == 3 for parts in lines)
    names = {parts[0].strip() for parts in lines}
    assert names == {"P_2", "ndcg_cut_10", "map", "recip_rank", "num_ret", "runid", "num_q"}
    queries = [parts[1] for parts in lines]
    first_all = queries.index("all")
    assert set(queries[first_all:]) == {"all"} and set(queries[:first_all]) == {"1", "2", "007"}
    table = {(parts[0].strip(), parts[1]): parts[2] for parts in lines}
    assert table["runid", "all"] == "bm25"
    assert table["num_q", "all"] == "3"
    assert table["num_ret", "all"] == "9"
    # The same numbers as trec_eval (pytrec_eval) prints, query by query.
    qrels = rankmeter.io.read_qrels(files["qrels"]).to_dict()
    run = rankmeter.io.read_run(files["a"]).to_dict()
    measures = {"P_2", "ndcg_cut_10", "map", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()},
        {"P.2", "ndcg_cut.10", "map", "recip_rank"},
    )
    reference = evaluator.evaluate(run)
    for q, values in reference.items():
        for measure in measures:
            assert table[measure, q] == f"{values[measure]:.4f}"
    for measure in measures:
        mean = sum(v[measure] for v in reference.values()) / len(reference)
        assert table[measure, "all"] == f"{mean:.4f}"


def test_trec_without_per_query_prints_only_all(cli: CLI, files: dict[str, Path]) -> None:
    out = cli("evaluate", files["qrels"], files["a"], "-m", "map", "-f", "trec").out
    assert [line.split("\t")[1] for line in out.splitlines()] == ["all", "all", "all"]
    assert out.splitlines()[-1].split("\t")[0].strip() == "map"


def test_table(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("evaluate", files["qrels"], files["a"], files["b"], "-m", "nDCG@10", "-m", "P@2")
    assert result.code == 0
    for text in ("bm25", "dense", "nDCG@10", "P@2", "queries"):
        assert text in result.out
    expected = library(files)
    assert f"{expected.metrics['nDCG@10']:.4f}" in result.out
    per_query = cli("evaluate", files["qrels"], files["a"], "-m", "P@2", "-q").out
    assert "per query" in per_query and "007" in per_query


def _aggregate(cli: CLI, files: dict[str, Path], *options: str) -> dict[str, Any]:
    result = cli(
        "evaluate",
        files["qrels"],
        files["a"],
        *metric_args(),
        "-f",
        "json",
        *NO_JUDGED_WARNING,
        "-q",
        *options,
    )
    assert result.code == 0, result.err
    payload: dict[str, Any] = evaluate_json(result.out)
    return payload


@pytest.mark.parametrize(
    ("options", "policies", "changed"),
    [
        (["--rel", "2"], {"rel": 2}, "P@2"),
        (["-l", "2"], {"rel": 2}, "AP"),
        (["--include-missing"], {"include_missing": True}, "AP"),
        (["-c"], {"include_missing": True}, "nDCG@10"),
        (["--judged-only"], {"judged_only": True}, "P@2"),
        (["-J"], {"judged_only": True}, "RR"),
        (["--ties", "input"], {"ties": "input"}, "P@2"),
    ],
)
def test_policies_change_results_as_the_library_does(
    cli: CLI, files: dict[str, Path], options: list[str], policies: dict[str, Any], changed: str
) -> None:
    plain = _aggregate(cli, files)
    got = _aggregate(cli, files, *options)
    expected = library(files, **policies)
    assert got == expected.to_dict(per_query=True)
    assert got["metrics"][changed] != plain["metrics"][changed]


def test_include_missing_scores_judged_queries_without_results_as_zero(
    cli: CLI, files: dict[str, Path]
) -> None:
    got = _aggregate(cli, files, "--include-missing")
    assert set(got["per_query"]) == {"1", "2", "3", "007"}
    assert got["per_query"]["3"]["AP"] == 0 and got["per_query"]["3"]["NumRet"] == 0
    plain = _aggregate(cli, files)
    assert math.isclose(got["metrics"]["AP"], plain["metrics"]["AP"] * 3 / 4)


def test_ties_input_keeps_file_order(cli: CLI, files: dict[str, Path]) -> None:
    # Query 1: b and d tie at 2.0. trec_eval ranks d (doc id descending) before b.
    assert _aggregate(cli, files)["per_query"]["1"]["P@2"] == 0.5
    assert _aggregate(cli, files, "--ties", "input")["per_query"]["1"]["P@2"] == 1.0


def test_output_file_gets_what_stdout_would(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    for fmt in ("json", "tsv", "trec", "table"):
        target = tmp_path / f"out.{fmt}"
        target.write_text("old contents")
        shown = cli("evaluate", files["qrels"], files["a"], "-f", fmt, *NO_JUDGED_WARNING, "-q")
        written = cli(
            "evaluate",
            files["qrels"],
            files["a"],
            "-f",
            fmt,
            *NO_JUDGED_WARNING,
            "-q",
            "-o",
            target,
        )
        assert written.code == 0 and written.out == "" and written.err == ""
        if fmt != "table":  # the table is rendered for a terminal on stdout, plain text in a file
            assert target.read_text() == shown.out
        else:
            assert "bm25" in target.read_text()
    assert not list(tmp_path.glob(".rankmeter-*"))


def test_stdin_for_the_qrels_or_a_run(files: dict[str, Path]) -> None:
    expected = library(files).to_dict()
    by_qrels = run_process(
        ["evaluate", "-", files["a"], *metric_args(), "-f", "json", *NO_JUDGED_WARNING],
        stdin=QRELS.encode(),
    )
    assert by_qrels.code == 0, by_qrels.err
    assert evaluate_json(by_qrels.out) == expected
    by_run = run_process(
        ["evaluate", files["qrels"], "-", *metric_args(), "-f", "json", *NO_JUDGED_WARNING],
        stdin=gzip.compress(RUN_A.replace("\n", "\r\n").encode()),
    )
    assert by_run.code == 0, by_run.err
    assert evaluate_json(by_run.out) == expected
    assert by_run.err == ""


def test_gzip_csv_and_forced_formats(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    expected = json.loads(
        cli("evaluate", files["qrels"], files["a"], "-f", "json", *NO_JUDGED_WARNING).out
    )
    gz = tmp_path / "qrels.gz"
    gz.write_bytes(gzip.compress(QRELS.encode()))
    csv = tmp_path / "run.data"
    rows = [line.split() for line in RUN_A.splitlines()]
    csv.write_text("query_id,doc_id,score\n" + "".join(f"{r[0]},{r[2]},{r[4]}\n" for r in rows))
    result = cli("evaluate", gz, csv, "--run-format", "csv", "-f", "json", *NO_JUDGED_WARNING)
    assert result.code == 0, result.err
    assert json.loads(result.out) == expected
    trec_named_csv = tmp_path / "qrels.csv"
    trec_named_csv.write_text(QRELS)
    result = cli(
        "evaluate",
        trec_named_csv,
        files["a"],
        "--qrels-format",
        "trec",
        "-f",
        "json",
        *NO_JUDGED_WARNING,
    )
    assert json.loads(result.out) == expected


def test_beir_qrels_with_a_trec_run(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    beir = tmp_path / "test.tsv"
    lines = [line.split() for line in QRELS.splitlines()]
    beir.write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in lines)
    )
    expected = cli("evaluate", files["qrels"], files["a"], "-f", "json", "-q").out
    assert cli("evaluate", beir, files["a"], "-f", "json", "-q").out == expected


def test_cranfield_from_both_layouts(cli: CLI, cranfield: Path, tmp_path: Path) -> None:
    judged = rankmeter.io.read_qrels(cranfield / "qrels.trec").to_dict()
    run = tmp_path / "cran.run"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i} {-i} sorted\n"
            for q, docs in judged.items()
            for i, d in enumerate(sorted(docs))
        )
    )
    trec = cli("evaluate", cranfield / "qrels.trec", run, "-f", "json", "-q")
    beir = cli("evaluate", cranfield / "qrels" / "test.tsv", run, "-f", "json", "-q")
    assert trec.code == 0 and trec.out == beir.out
    assert len(json.loads(trec.out)["per_query"]) == 225


def test_runs_with_the_same_tag_are_told_apart_by_file(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    copy = tmp_path / "copy.run"
    copy.write_text(RUN_A)
    payload = json.loads(cli("evaluate", files["qrels"], files["a"], copy, "-f", "json").out)
    assert [item["run"] for item in payload] == [str(files["a"]), str(copy)]
    assert payload[0]["metrics"] == payload[1]["metrics"]


@pytest.mark.parametrize("fmt", ["json", "tsv", "trec", "table"])
def test_non_ascii_ids_on_an_ascii_stdout(tmp_path: Path, fmt: str) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("é 0 d 1\n", encoding="utf-8")
    run = tmp_path / "r.txt"
    run.write_text("é Q0 d 1 1 t\n", encoding="utf-8")
    result = run_process(
        ["evaluate", qrels, run, "-m", "P@1", "-q", "-f", fmt], env={"PYTHONIOENCODING": "ascii"}
    )
    assert (result.code, result.err) == (0, ""), result.err
    assert "é" in result.out


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_evaluate_stays_off_the_heavy_imports(files: dict[str, Path], stream: str) -> None:
    # pandas (pulled in by pyarrow's list conversion) costs more than the whole of a small
    # evaluation: the CLI path must never import it.
    script = (
        "import sys\nfrom rankmeter.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pandas', 'polars', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "evaluate", files["qrels"], files["a"], stream, "-q"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.decode().strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_a_grade_beyond_the_exp_gain_is_one_error_not_nan(
    tmp_path: Path, output_format: str
) -> None:
    # Grade 1100 with gain=exp: 2^1100 overflows float64. Not NaN with exit 0, nor NumPy's
    # RuntimeWarnings, nor a bare NaN in the JSON: one line that names the grade.
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1100\n1 0 b 1\n2 0 c 2\n")
    run.write_text("1 Q0 b 1 2.0 r\n1 Q0 a 2 1.0 r\n2 Q0 c 1 1.0 r\n")
    for command in (
        ["evaluate", qrels, run, "-m", "nDCG(gain=exp)@10", "-f", output_format],
        ["compare", qrels, run, run, "-m", "nDCG(gain=exp)@10", "--resamples", "20"],
        ["explain", qrels, run, "--query", "1", "-m", "nDCG(gain=exp)@10", "-f", "json"],
    ):
        done = run_process(command)
        message = done.assert_one_error_line(1)
        assert message.startswith("nDCG(gain=exp)@10: grade 1100 of query '1' has the gain ")
        assert "use gain=linear" in message
