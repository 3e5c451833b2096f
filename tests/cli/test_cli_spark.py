"""``rankmeter evaluate|compare --engine spark``: the per-query values computed on Spark give
the output of the in-process engine, byte for byte; what Spark cannot do is one error line,
before any session starts. The Spark tests share the test run's one local[2] session."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rankmeter.cli import _fast

from ._cli_support import CLI, NO_JUDGED_WARNING, run_process

SPARK = ("--engine", "spark")


@pytest.mark.spark
def test_evaluate_on_spark_prints_what_the_default_engine_prints(
    cli: CLI, files: dict[str, Path], tmp_path: Path, spark_backend: Any
) -> None:
    # Both sample runs share a tag with a copy of one of them: the names are told apart by
    # their files, as in process.
    twin = tmp_path / "twin.run"
    twin.write_text(files["a"].read_text())
    args = ["evaluate", files["qrels"], files["a"], files["b"], twin, "-m", "nDCG@10"]
    args += ["-m", "P(rel=2)@2", "-m", "AP", "-m", "RR", "-m", "R@100", "-m", "num_ret"]
    for options in (
        ["-f", "json", "-q", "-c"],
        ["-f", "tsv", "-q", "-J", "--rel", "2", *NO_JUDGED_WARNING],
        ["-c"],  # the table, with its Judged@k warnings
    ):
        here = cli(*args, *options)
        on_spark = cli(*args, *options, *SPARK, "--spark-master", "local[2]")
        assert here.code == 0, here.err
        assert (on_spark.code, on_spark.out, on_spark.err) == (here.code, here.out, here.err)
    names = [r["run"] for r in json.loads(cli(*args, "-f", "json", *SPARK).out)]
    assert names == [str(files["a"]), "dense", str(twin)]


@pytest.mark.spark
def test_compare_on_spark_prints_what_the_default_engine_prints(
    cli: CLI, files: dict[str, Path], spark_backend: Any
) -> None:
    args = ["compare", files["qrels"], files["a"], files["b"], "-m", "AP", "-m", "P@2"]
    args += ["--resamples", "2000", "-f", "json", "-q"]
    here = cli(*args)
    on_spark = cli(*args, *SPARK)
    assert here.code == 0, here.err
    assert (on_spark.code, on_spark.out, on_spark.err) == (here.code, here.out, here.err)
    answered = cli(*args, "--answered-only", "--rel", "2", "-f", "markdown")
    assert cli(*args, "--answered-only", "--rel", "2", "-f", "markdown", *SPARK) == answered


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--spark-master", "local[4]"], r"--spark-master is a setting of --engine spark, not"),
        (["--spark-conf", "a=b"], r"--spark-conf is a setting of --engine spark, not of"),
        ([*SPARK, "--spark-conf", "no-value"], r"--spark-conf takes KEY=VALUE.*'no-value'"),
        ([*SPARK, "--stream"], r"--stream/--no-stream are settings of --engine process"),
        ([*SPARK, "--run-format", "csv"], r"TREC text and Parquet, not --run-format csv"),
    ],
)
def test_what_spark_cannot_do_is_one_line(
    cli: CLI, files: dict[str, Path], options: list[str], message: str
) -> None:
    import re

    got = cli("evaluate", files["qrels"], files["a"], *options).assert_one_error_line(2)
    assert re.search(message, got), got


def test_spark_reads_no_stdin(cli: CLI, files: dict[str, Path]) -> None:
    for command in (["evaluate", "-", files["a"]], ["compare", files["qrels"], files["a"], "-"]):
        got = cli(*command, *SPARK).assert_one_error_line(2)
        assert got == "--engine spark reads files (Spark reads them itself), not stdin ('-')"


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX PATH")
def test_without_pyspark_or_java_one_line_names_the_extra(
    files: dict[str, Path], tmp_path: Path
) -> None:
    # A pyspark that cannot be imported, placed before the real one on the path.
    stub = tmp_path / "stub" / "pyspark"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('No module named pyspark')\n")
    import os

    path = os.pathsep.join([str(stub.parent), os.environ.get("PYTHONPATH", "")])
    args = ["evaluate", files["qrels"], files["a"], *SPARK]
    got = run_process(args, env={"PYTHONPATH": path}).assert_one_error_line(2)
    assert "needs the [spark] extra: pip install 'rankmeter[spark]'" in got, got
    got = run_process(
        ["compare", files["qrels"], files["a"], files["b"], *SPARK], env={"PYTHONPATH": path}
    ).assert_one_error_line(2)
    assert "[spark] extra" in got, got
    no_java = {"PATH": str(tmp_path / "empty"), "JAVA_HOME": ""}
    got = run_process(args, env=no_java).assert_one_error_line(2)
    assert "needs Java 17" in got, got


def test_the_fast_start_reads_the_engine_options() -> None:
    values = _fast.evaluate_args(
        [
            *["evaluate", "q", "r", "--engine", "spark", "--spark-master=local[3]"],
            *["--spark-conf", "a=1", "--spark-conf", "b=2"],
        ]
    )
    assert values is not None and values["engine"] == "spark"
    assert values["spark_master"] == "local[3]" and values["spark_conf"] == ["a=1", "b=2"]
    assert _fast.evaluate_args(["evaluate", "q", "r", "--engine", "SPARK"]) is None


def _data_warning_files(tmp_path: Path) -> list[Path]:
    """qrels and runs that trigger each data warning: a partial query overlap, scores rising
    with the written order (rank and score columns swapped), and a run written bottom-up with
    right ranks (its rank column clears it), beside a good run."""
    judged = [f"q{i}" for i in range(1, 9)]
    grades = {"a": 2, "b": 1, "c": 0}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in judged for d, g in grades.items()))
    results = [("a", 1, 3.5), ("b", 2, 2.5), ("c", 3, 1.5), ("d", 4, 0.5)]

    def trec(name: str, queries: list[str], rows: list[tuple[str, float, float]]) -> Path:
        path = tmp_path / name
        path.write_text(
            "".join(f"{q} Q0 {doc} {r} {s} sys\n" for q in queries for doc, r, s in rows)
        )
        return path

    return [
        qrels,
        trec("good.run", judged, results),
        trec("partial.run", [*judged[2:], "x1", "x2"], results),
        trec("swapped.run", judged, [(d, s, r) for d, r, s in results]),
        trec("bottom-up.run", judged, results[::-1]),
    ]


@pytest.mark.spark
def test_evaluate_on_spark_prints_the_data_warnings_of_the_default_engine(
    cli: CLI, tmp_path: Path, spark_backend: Any
) -> None:
    qrels, *runs = _data_warning_files(tmp_path)
    session = spark_backend._session
    # Files read in several partitions still give each query's written order.
    session.conf.set("spark.sql.files.maxPartitionBytes", "256")
    try:
        for options in (["-f", "json"], ["-c"]):
            args = ["evaluate", qrels, *runs, "-m", "P@2", *NO_JUDGED_WARNING, *options]
            here = cli(*args)
            on_spark = cli(*args, *SPARK)
            assert here.code == 0, here.raw_err
            assert "partial.run" in str(here.raw_err) and "swapped.run" in str(here.raw_err)
            assert "bottom-up.run" not in str(here.raw_err)
            assert (on_spark.out, on_spark.raw_err) == (here.out, here.raw_err)
    finally:
        session.conf.unset("spark.sql.files.maxPartitionBytes")


@pytest.mark.spark
def test_compare_on_spark_prints_what_the_default_engine_prints_in_every_format(
    cli: CLI, tmp_path: Path, spark_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Runs with every data warning, and one (swapped) that loses on every query: failure
    # lists, explanations of the worst queries, curves, Judged@k, the warnings on stderr.
    qrels, good, partial, swapped, bottom_up = _data_warning_files(tmp_path)
    # The runs share a tag: the three not named on the command line are told apart by their
    # files, as in process.
    args = ["compare", qrels, f"base={good}", partial, swapped, bottom_up, "-m", "AP", "-m", "P@2"]
    args += ["--resamples", "2000", "--worst", "3", "--cutoff", "1", "--rel", "2"]
    for options in (
        ["-f", "json", "-q"],
        ["-f", "markdown"],
        ["-f", "latex", "--answered-only", "-J"],
        ["-f", "html"],
        ["--goal", "candidate-pool"],  # the goal's notes on the runs' depths
        [],
    ):
        here = cli(*args, *options)
        on_spark = cli(*args, *options, *SPARK)
        assert here.code == 0, here.raw_err
        assert (on_spark.code, on_spark.out, on_spark.raw_err) == (
            here.code,
            here.out,
            here.raw_err,
        ), options
    assert "partial.run" in str(here.raw_err) and "swapped.run" in str(here.raw_err)


@pytest.mark.spark
def test_compare_on_spark_reads_no_run_on_the_driver(
    cli: CLI, tmp_path: Path, spark_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the rows of the worst queries come to the driver (one filter on Spark), for their
    # explanations; no run file is read here, whole or streamed.
    import rankmeter.checking
    import rankmeter.io
    from rankmeter.engines.spark import KeptRuns

    qrels, good, partial, _, bottom_up = _data_warning_files(tmp_path)
    args = ["compare", qrels, good, partial, bottom_up, "-m", "AP", "--resamples", "2000"]
    args += ["--worst", "2", "-f", "html"]
    here = cli(*args)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a run read on the driver: {args}")

    for module, reader in [
        (rankmeter.io, "read_run"),
        (rankmeter.io, "load_runs"),
        (rankmeter.checking, "read_run_rows"),
    ]:
        monkeypatch.setattr(module, reader, refused)
    fetched: list[tuple[str, list[str], int]] = []
    fetch = KeptRuns.of

    def counted(self: KeptRuns, name: str, query_ids: list[str]) -> Any:
        run = fetch(self, name, query_ids)
        fetched.append((name, list(query_ids), len(run)))
        return run

    monkeypatch.setattr(KeptRuns, "of", counted)
    on_spark = cli(*args, *SPARK)
    assert (on_spark.code, on_spark.out, on_spark.raw_err) == (here.code, here.out, here.raw_err)
    # The baseline and the systems that lost, two worst queries each: four rows a query the
    # run answers (partial.run lost both by not answering: one row of it, as a Run is never
    # empty), of the 32 to 40 rows of each run.
    assert sorted((Path(name).name, queries, rows) for name, queries, rows in fetched) == [
        ("good.run", ["q1", "q2"], 8),
        ("partial.run", ["q1", "q2"], 1),
    ]


@pytest.mark.spark
def test_evaluate_on_spark_names_runs_as_the_default_engine(
    cli: CLI, files: dict[str, Path], tmp_path: Path, spark_backend: Any
) -> None:
    # A copy of run a shares its tag; a named on the command line, the copy keeps the tag.
    twin = tmp_path / "twin.run"
    twin.write_text(files["a"].read_text())
    args = ["evaluate", files["qrels"], f"first={files['a']}", files["b"], twin, "-m", "AP"]
    here = cli(*args, "-f", "json")
    on_spark = cli(*args, "-f", "json", *SPARK)
    assert [r["run"] for r in json.loads(here.out)] == ["first", "dense", "bm25"]
    assert (on_spark.out, on_spark.raw_err) == (here.out, here.raw_err)


@pytest.mark.spark
def test_compare_on_spark_refuses_a_foreign_run_as_the_default_engine(
    cli: CLI, tmp_path: Path, spark_backend: Any
) -> None:
    # No query in common: the error names the run's first query ids, known from Spark.
    qrels, good, *_ = _data_warning_files(tmp_path)
    foreign = tmp_path / "foreign.run"
    foreign.write_text("".join(f"x{i} Q0 a 1 1.0 foreign\n" for i in (10, 2, 3, 1)))
    args = ["compare", qrels, foreign, good, "-m", "AP"]
    here = cli(*args).assert_one_error_line(1)
    assert "run queries start x1, x10, x2, ..., qrels queries start q1" in here, here
    assert cli(*args, *SPARK).assert_one_error_line(1) == here


@pytest.mark.spark
def test_compare_on_spark_of_parquet_runs_prints_what_the_default_engine_prints(
    cli: CLI, tmp_path: Path, spark_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parquet runs (named by their files), one with swapped rank and score columns: its rank
    # column is read on Spark for the warning, as the in-process engine re-reads the file.
    import pyarrow as pa
    import pyarrow.parquet as pq

    import rankmeter.checking

    qrels, good, partial, swapped, _ = _data_warning_files(tmp_path)
    parquet = []
    for run in (good, partial, swapped):
        rows = [line.split() for line in run.read_text().splitlines()]
        table = pa.table(
            {
                "query_id": [r[0] for r in rows],
                "doc_id": [r[2] for r in rows],
                "rank": [float(r[3]) for r in rows],
                "score": [float(r[4]) for r in rows],
            }
        )
        pq.write_table(table, run.with_suffix(".parquet"))
        parquet.append(run.with_suffix(".parquet"))
    args = ["compare", qrels, *parquet, "-m", "AP", "--resamples", "2000", "-f", "markdown"]
    here = cli(*args)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a run read on the driver: {args}")

    monkeypatch.setattr(rankmeter.checking, "read_run_rows", refused)
    on_spark = cli(*args, *SPARK)
    assert here.code == 0, here.raw_err
    assert "swapped.parquet" in str(here.raw_err) and "ranks upside down" in str(here.raw_err)
    assert (on_spark.out, on_spark.raw_err) == (here.out, here.raw_err)


@pytest.mark.spark
def test_evaluate_on_spark_refuses_a_foreign_run_as_the_default_engine(
    cli: CLI, tmp_path: Path, spark_backend: Any
) -> None:
    # No query in common (and no -c): the in-process error line, its exit status and the
    # run's first query ids.
    qrels, *_ = _data_warning_files(tmp_path)
    foreign = tmp_path / "foreign.run"
    foreign.write_text("".join(f"x{i} Q0 a 1 1.0 foreign\n" for i in (10, 2, 3, 1)))
    args = ["evaluate", qrels, foreign, "-m", "AP"]
    here = cli(*args).assert_one_error_line(1)
    assert "run queries start x1, x10, x2, ..., qrels queries start q1" in here, here
    assert cli(*args, *SPARK).assert_one_error_line(1) == here


def test_compare_on_spark_refuses_formats_spark_cannot_read(
    cli: CLI, files: dict[str, Path]
) -> None:
    # Before Spark starts, as evaluate refuses them.
    for option in (["--run-format", "csv"], ["--qrels-format", "jsonl"]):
        got = cli(
            "compare", files["qrels"], files["a"], files["b"], *option, *SPARK
        ).assert_one_error_line(2)
        assert got == (
            f"--engine spark reads TREC text and Parquet, not {option[0]} {option[1]}: convert "
            "the file, or use --engine process"
        ), got


def _bad_row_files(tmp_path: Path) -> dict[str, tuple[Path, Path, str]]:
    """qrels and a run, one of them with a bad row (or column), and the in-process error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    good = tmp_path / "good.run"
    good.write_text("1 Q0 a 1 2.0 r\n2 Q0 a 1 1.0 r\n")

    def parquet(name: str, **columns: list[Any]) -> Path:
        path = tmp_path / name
        pq.write_table(pa.table(columns), path)
        return path

    ids = {"query_id": ["1", "1", "2", "1"], "doc_id": ["a", "b", "a", "a"]}
    twice = tmp_path / "twice.txt"
    twice.write_text("1 0 a 1\n1 0 b 0\n1 0 a 2\n")
    return {
        "duplicate": (qrels, parquet("dup.parquet", **ids, score=[3.0, 2.0, 1.0, 0.5]), ":4: "),
        "nan score": (
            qrels,
            parquet("nan.parquet", **ids, score=[3.0, float("nan"), 1.0, 0.25]),
            ":2: score must be a number (NaN is not allowed): 'nan'",
        ),
        "no doc id": (
            qrels,
            parquet("nodoc.parquet", query_id=["1", "1"], doc_id=["a", None], score=[2.0, 1.0]),
            ":2: missing doc id",
        ),
        "text scores": (
            qrels,
            parquet("text.parquet", **ids, score=["3", "2", "1", "x"]),
            "text.parquet: score column must be numeric, not string",
        ),
        "duplicate judgment": (
            parquet("dup-qrels.parquet", **ids, relevance=[1, 0, 2, 1]),
            good,
            "dup-qrels.parquet:4: duplicate judgment for query '1', doc 'a'",
        ),
        "duplicate judgment in text": (twice, good, "twice.txt:3: duplicate judgment"),
    }


@pytest.mark.spark
def test_evaluate_on_spark_names_a_bad_row_as_the_default_engine(
    cli: CLI, tmp_path: Path, spark_backend: Any
) -> None:
    # A bad Parquet row lost its row number on Spark, a Parquet run's text score column was
    # named <run>, and a duplicate judgment lost its line: the in-process lines, word for word.
    for case, (qrels, run, message) in _bad_row_files(tmp_path).items():
        args = ["evaluate", qrels, run, "-m", "AP"]
        here = cli(*args).assert_one_error_line(1)
        assert message in here, (case, here)
        assert cli(*args, *SPARK).assert_one_error_line(1) == here, case
