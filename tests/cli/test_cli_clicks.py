"""`rankmeter clicks fit|labels`: propensities and fit figures from a log file, click qrels
that `rankmeter evaluate` reads, and the one-line error contract for bad logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankmeter.clicks import default_propensities, simulate

from ._cli_support import CLI


def _collection() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(1)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(10)} for q in range(50)}
    run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(10)} for q in range(50)}
    return qrels, run


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    qrels, run = _collection()
    path = tmp_path_factory.mktemp("clicks") / "log.parquet"
    pq.write_table(simulate(qrels, run, sessions=10_000, shuffle=1.0, seed=2), path)
    return path


def test_fit_as_json_gives_the_propensities_and_the_held_out_figures(
    cli: CLI, log_file: Path
) -> None:
    result = cli("clicks", "fit", log_file, "--model", "pbm", "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    fitted = np.array(list(payload["fit"]["propensities"].values()))
    assert np.abs(fitted - default_propensities(10)).max() < 0.05
    assert payload["fit"]["sessions"] == 8_000
    assert payload["held_out"]["sessions"] == 2_000
    assert 1 < payload["held_out"]["perplexity"] < 2


def test_fit_as_a_table_to_a_file(cli: CLI, log_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "fit.txt"
    result = cli("clicks", "fit", log_file, "--model", "dbn", "--held-out", "0", "-o", target)
    assert result.code == 0 and result.out == ""
    text = target.read_text()
    assert "propensity" in text and "perplexity" not in text
    assert "dbn fitted to 10,000 requests" in text and "gamma" in text


def test_labels_write_trec_qrels_that_evaluate_reads(
    cli: CLI, log_file: Path, tmp_path: Path
) -> None:
    target = tmp_path / "click_qrels.txt"
    result = cli("clicks", "labels", log_file, "--model", "pbm", "-o", target)
    assert result.code == 0, result.err
    assert "500 (query, doc) pairs graded from the clicks of 10,000 requests" in result.out
    lines = target.read_text().splitlines()
    assert len(lines) == 500 and all(len(line.split()) == 4 for line in lines)
    run = tmp_path / "run.txt"
    _, scores = _collection()
    run.write_text(
        "".join(f"{q} Q0 {d} 1 {s} r\n" for q, docs in scores.items() for d, s in docs.items())
    )
    evaluated = cli("evaluate", target, run, "-m", "nDCG@10", "--judged-below", "0")
    assert evaluated.code == 0, evaluated.err


def test_labels_to_stdout_send_the_summary_to_stderr(cli: CLI, log_file: Path) -> None:
    result = cli(
        "clicks", "labels", log_file, "-o", "-", "--min-impressions", "200", "--grades", "0.5"
    )
    assert result.code == 0, result.err
    assert "pairs shown fewer than 200 times left out" in result.err
    assert {line.split()[3] for line in result.out.splitlines()} <= {"0", "1"}


@pytest.mark.parametrize(
    ("row", "position", "message"),
    [
        (2, 2, "{path}:3: position 2 is repeated within request 'r0'"),
        (4, 0, "{path}:5: position 0 is below 1"),
    ],
)
def test_a_bad_log_is_one_error_line_naming_file_and_row(
    cli: CLI, tmp_path: Path, row: int, position: int, message: str
) -> None:
    """The log is read by rankmeter.online.read_log, whose checks name the file and row."""
    log = simulate({"q": {"a": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, sessions=20, users=10)
    positions = log.column("position").to_pylist()
    positions[row] = position
    path = tmp_path / "bad.parquet"
    pq.write_table(log.set_column(9, "position", pa.array(positions)), path)
    expected = message.format(path=path)
    assert cli("clicks", "fit", path).assert_one_error_line(1).startswith(expected)
    target = tmp_path / "q.txt"
    assert cli("clicks", "labels", path, "-o", target).assert_one_error_line(1).startswith(expected)
    assert not target.exists()


def test_bad_options_are_usage_errors(cli: CLI, log_file: Path, tmp_path: Path) -> None:
    message = cli("clicks", "fit", log_file, "--held-out", "1.5").assert_one_error_line(2)
    assert "held_out=1.5 must be a number strictly between 0 and 1" in message
    message = cli(
        "clicks", "labels", log_file, "-o", tmp_path / "q.txt", "--grades", "0.5,0.2"
    ).assert_one_error_line(2)
    assert "grades=(0.5, 0.2) must increase" in message
    message = cli("clicks", "fit", log_file, "--gamma", "0.5").assert_one_error_line(2)
    assert "gamma=0.5 is a parameter of the DBN model, not of pbm" in message
    assert cli("clicks", "fit", log_file, "--model", "dcm").code == 2


def test_the_engine_option_is_the_shared_one(cli: CLI, log_file: Path, tmp_path: Path) -> None:
    import typer

    from rankmeter.cli import app

    group: Any = typer.main.get_command(app)
    ab = next(p for p in group.commands["ab"].params if "--engine" in p.opts)
    for name in ("fit", "labels"):
        command = group.commands["clicks"].commands[name]
        engine = next(p for p in command.params if "--engine" in p.opts)
        assert (engine.opts, engine.help, engine.default) == (ab.opts, ab.help, ab.default)
    assert "postgres" in cli(
        "clicks", "fit", log_file, "--engine", "postgres"
    ).assert_one_error_line(2)
    done = cli("clicks", "fit", log_file, "--held-out", "0", "-f", "json", "--engine", "duckdb")
    assert done.code == 0, done.err


@pytest.mark.spark
def test_spark_reads_the_same_log(
    cli: CLI, log_file: Path, tmp_path: Path, spark_backend: Any
) -> None:
    args = ("clicks", "fit", log_file, "--held-out", "0", "-f", "json", "--max-iter", "20")
    assert json.loads(cli(*args, "--engine", "spark").out) == json.loads(cli(*args).out)
    spark, duckdb = tmp_path / "spark.txt", tmp_path / "duckdb.txt"
    assert cli("clicks", "labels", log_file, "-o", spark, "--engine", "spark").code == 0
    assert cli("clicks", "labels", log_file, "-o", duckdb).code == 0
    assert spark.read_text() == duckdb.read_text()


def test_labels_count_in_the_engine_so_a_deep_position_needs_no_matrix(
    cli: CLI, log_file: Path, tmp_path: Path
) -> None:
    # One impression at position 3,000,000 would make a 10,000 x 3,000,000 request-by-position
    # matrix (refused as too big); PBM's labels read only the counts the engine aggregates.
    table = pq.read_table(log_file)
    first = table.slice(0, 1).to_pylist()[0]
    deep = dict(first, doc_id="deep-doc", position=3_000_000, clicked=False)
    if "dwell_ms" in deep:
        deep["dwell_ms"] = None
    path = tmp_path / "deep.parquet"
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist([deep], table.schema)]), path)
    qrels = tmp_path / "click.qrels"
    result = cli("clicks", "labels", path, "--model", "pbm", "-o", qrels)
    assert result.code == 0, result.err
    assert qrels.read_text().count("\n") > 100
    result = cli("clicks", "fit", path, "--model", "pbm", "--held-out", "0", "-f", "json")
    assert result.code == 0, result.err
    assert len(json.loads(result.out)["fit"]["propensities"]) == 3_000_000


def test_labels_to_a_terminal_escape_hostile_ids_and_stay_exact_in_a_pipe(
    tmp_path: Path,
) -> None:
    """Issue 22, item 12: `clicks labels -o -` writes the qrels as data, so at a terminal
    their ids' control sequences are shown as escapes (as `label` and `pool` do), and in a
    pipe they stay byte-exact."""
    from .test_cli_terminal import CSI, OSC_TITLE, raw_controls, run_commands

    qrels, run = _collection()
    hostile_doc, hostile_query = "d3" + OSC_TITLE, "q7" + CSI
    qrels = {(hostile_query if q == "q7" else q): docs for q, docs in qrels.items()}
    run = {(hostile_query if q == "q7" else q): docs for q, docs in run.items()}
    for docs in (*qrels.values(), *run.values()):
        docs[hostile_doc] = docs.pop("d3")  # type: ignore[attr-defined]
    log = tmp_path / "log.parquet"
    pq.write_table(simulate(qrels, run, sessions=2_000, shuffle=1.0, seed=2), log)
    argv = ["clicks", "labels", str(log), "-o", "-", "--min-impressions", "1"]
    ((shown, summary),) = run_commands([argv], tmp_path, terminal=True)
    assert "pairs graded from the clicks of 2,000 requests" in summary
    assert not raw_controls(shown) and not raw_controls(summary)
    assert "d3\\x1b]0;PWNED\\x07" in shown and "q7\\x1b[2J" in shown
    ((piped, _),) = run_commands([argv], tmp_path, terminal=False)
    assert f"{hostile_query} 0 {hostile_doc} " in piped


@pytest.mark.parametrize(
    ("query", "doc", "shown"),
    [
        ("q", "a\nb 0 c 3", r"doc id 'a\nb 0 c 3' (query 'q')"),
        ("q 1", "a", r"query id 'q 1' (query 'q 1')"),
    ],
)
def test_an_id_trec_qrels_cannot_hold_is_bad_data_naming_the_log(
    cli: CLI, tmp_path: Path, query: str, doc: str, shown: str
) -> None:
    """Issue 22 trial, item 4: a doc id "a\\nb 0 c 3" in the log was a usage error (exit 2)
    naming neither the log nor the query; now exit 1, the log named, nothing written."""
    log = simulate({query: {doc: 1}}, {query: {doc: 3.0, "b": 2.0, "c": 1.0}}, sessions=50, seed=1)
    path = tmp_path / "evil.parquet"
    pq.write_table(log, path)
    target = tmp_path / "q.txt"
    message = cli(
        "clicks", "labels", path, "-o", target, "--min-impressions", "5"
    ).assert_one_error_line(1)
    assert message == (
        f"{path}: {shown} cannot be written as TREC qrels: ids must be non-empty and hold no "
        "whitespace"
    )
    assert not target.exists()
