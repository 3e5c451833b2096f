"""`rankmeter interleave LOG` end to end on files (issue 12, item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from ._cli_support import CLI, run_process

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

# Nine users, one request each: B wins 6, A wins 1, one tie, one request without a click.
WINS = ["B"] * 6 + ["A"] + ["tie", "none"]
SHOWN = {
    "A": [("A", True), ("B", False)],
    "B": [("A", False), ("B", True)],
    "tie": [("A", True), ("B", True)],
    "none": [("A", False), ("B", False)],
}


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i, kind in enumerate(WINS):
        for position, (team, clicked) in enumerate(SHOWN[kind], start=1):
            rows.append(
                {
                    "event_ts": f"2026-01-01T00:00:{i:02d}",
                    "user_id": f"u{i}",
                    "session_id": f"s{i}",
                    "request_id": f"r{i}",
                    "query_id": "q1",
                    "result_count": 2,
                    "latency_ms": 10.0,
                    "variant": "interleaved",
                    "interleave_team": team,
                    "doc_id": f"d{position}",
                    "position": position,
                    "clicked": clicked,
                }
            )
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return _write(tmp_path / "log.parquet", _rows())


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_has_the_counts_and_scipys_test(cli: CLI, log: Path) -> None:
    done = cli("interleave", log, "--format", "json")
    assert done.code == 0, done.err
    document = _strict(done.out)
    assert document["unit"] == "user"
    assert document["wins"] == {"A": 1, "B": 6, "ties": 1}
    assert document["no_click"] == 1 and document["n"] == 8
    assert document["p_value"] == pytest.approx(stats.binomtest(6, 7).pvalue)
    ci = stats.binomtest(6, 7).proportion_ci(method="wilson")
    assert document["interval"]["share_b"] == pytest.approx([ci.low, ci.high])
    assert document["interval"]["method"] == "wilson"
    assert document["preferred"] is None  # p = 0.125


def test_table_markdown_and_output_file(cli: CLI, log: Path, tmp_path: Path) -> None:
    table = cli("interleave", log, "--unit", "request")
    assert table.code == 0, table.err
    assert "no significant preference" in table.out and "won by B (requests)" in table.out
    markdown = cli("interleave", log, "-f", "markdown", "--interval", "exact")
    assert markdown.code == 0, markdown.err
    assert "| won by B (users) | 6 |  |" in markdown.out
    assert "Clopper-Pearson exact" in markdown.out
    target = tmp_path / "out.json"
    written = cli("interleave", log, "-f", "json", "-o", target)
    assert written.code == 0 and written.out == ""
    assert _strict(target.read_text())["wins"]["B"] == 6


def test_a_clicked_row_with_a_bad_team_is_one_error_line(cli: CLI, tmp_path: Path) -> None:
    rows = _rows()
    rows[3]["interleave_team"] = "C"  # r1's second row: clicked
    path = _write(tmp_path / "bad.parquet", rows)
    message = cli("interleave", path).assert_one_error_line(1)
    # Only the columns the credit reads are checked (not the whole A/B log schema).
    assert message.startswith(f"{path}:4: interleave_team must be 'A' or 'B' on a clicked row")


def test_a_log_that_is_not_interleaved_is_one_error_line(cli: CLI, tmp_path: Path) -> None:
    # interleave_team is optional in the A/B log schema, but team-draft credit needs it: a log
    # without the column is a missing column of the file, not a problem "at line 2".
    rows = [{k: v for k, v in row.items() if k != "interleave_team"} for row in _rows()]
    path = _write(tmp_path / "plain.parquet", rows)
    message = cli("interleave", path).assert_one_error_line(1)
    assert message.startswith(f"{path}: no interleave_team column: team-draft credit needs ")


#: The columns team-draft credit needs (docs/interleaving.md): user_id only per user.
MINIMAL = ("request_id", "user_id", "clicked", "interleave_team")


def test_a_log_with_only_the_columns_interleaving_needs(cli: CLI, tmp_path: Path) -> None:
    path = _write(tmp_path / "minimal.parquet", [{k: r[k] for k in MINIMAL} for r in _rows()])
    done = cli("interleave", path, "-f", "json")
    assert done.code == 0, done.err
    assert _strict(done.out)["wins"] == {"A": 1, "B": 6, "ties": 1}
    no_user = [{k: r[k] for k in MINIMAL if k != "user_id"} for r in _rows()]
    path = _write(tmp_path / "no_user.parquet", no_user)
    done = cli("interleave", path, "-f", "json", "--unit", "request")
    assert done.code == 0, done.err
    assert _strict(done.out)["wins"] == {"A": 1, "B": 6, "ties": 1}
    message = cli("interleave", path).assert_one_error_line(1)
    assert message.startswith(f"{path}: no user_id column")


def test_a_minimal_csv_log_is_typed_and_names_its_file_lines(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "minimal.csv"
    header = "request_id,clicked,interleave_team,position\n"
    path.write_text(header + "r1,0,A,1\nr1,1,B,2\nr2,true,B,1\nr2,false,A,2\n")
    done = cli("interleave", path, "-f", "json", "--unit", "request")
    assert done.code == 0, done.err
    assert _strict(done.out)["wins"] == {"A": 0, "B": 2, "ties": 0}
    path.write_text(header + "r1,0,A,1\nr1,1,B,2\nr2,1,C,1\n")
    message = cli("interleave", path, "--unit", "request").assert_one_error_line(1)
    assert message.startswith(f"{path}:4: interleave_team must be 'A' or 'B' on a clicked row")
    path.write_text(header + "r1,0,A,1\nr1,yes,B,2\n")
    message = cli("interleave", path, "--unit", "request").assert_one_error_line(1)
    assert message.startswith(f"{path}:3: clicked 'yes' is not 0, 1, true or false")
    path.write_text(header + "r1,0,A,1\nr1,1,B,1\n")
    message = cli("interleave", path, "--unit", "request").assert_one_error_line(1)
    assert message.startswith(f"{path}:3: position 1 appears twice in request 'r1'")


def test_a_folder_of_parquet_names_the_file_of_a_bad_row(cli: CLI, tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    rows = [{k: r[k] for k in MINIMAL} for r in _rows()]
    _write(folder / "part-0.parquet", rows[:8])
    rows[9]["interleave_team"] = None  # r4's second row: clicked
    _write(folder / "part-1.parquet", rows[8:])
    message = cli("interleave", folder).assert_one_error_line(1)
    assert message.startswith(f"{folder / 'part-1.parquet'}:2: a clicked result has no ")


def test_the_engine_option(cli: CLI, log: Path) -> None:
    done = cli("interleave", log, "-f", "json", "--engine", "duckdb")
    assert done.code == 0, done.err
    assert _strict(done.out)["wins"]["B"] == 6
    assert "postgres" in cli("interleave", log, "--engine", "postgres").assert_one_error_line(2)


@pytest.mark.spark
def test_spark_gives_the_same_answer(cli: CLI, log: Path, spark_backend: Any) -> None:
    duckdb = cli("interleave", log, "-f", "json")
    spark = cli("interleave", log, "-f", "json", "--engine", "spark")
    assert spark.code == 0, spark.err
    assert _strict(spark.out) == _strict(duckdb.out)


def test_usage_errors_exit_2(cli: CLI, log: Path) -> None:
    assert "'--unit'" in cli("interleave", log, "--unit", "query").assert_one_error_line(2)
    message = cli("interleave", log, "--alpha", "2").assert_one_error_line(2)
    assert message.startswith("alpha=2.0 must be a number strictly between 0 and 1")


def test_the_real_command(log: Path) -> None:
    done = run_process(["interleave", log, "-f", "json"])
    assert done.code == 0, done.err
    assert _strict(done.out)["wins"]["B"] == 6


def test_balanced_credit_reads_the_runs(cli: CLI, tmp_path: Path) -> None:
    # A = d1 d2 d3 d4, B = d2 d3 d4 d1; every request shows d1 d2 d3 d4 (A started). One click
    # each: on d1 (A's top 1: A wins), d2, d3 and d4 (B wins each: Hofmann et al.'s example).
    run_a = tmp_path / "a.run"
    run_b = tmp_path / "b.run"
    run_a.write_text("".join(f"q1 Q0 d{i} {i} {10 - i} a\n" for i in (1, 2, 3, 4)))
    run_b.write_text("".join(f"q1 Q0 d{d} {r} {10 - r} b\n" for r, d in enumerate((2, 3, 4, 1), 1)))
    rows = []
    for request, clicked_doc in enumerate(("d1", "d2", "d3", "d4")):
        for position, team in enumerate("ABBB", start=1):
            row = _rows()[0] | {
                "user_id": f"u{request}",
                "session_id": f"s{request}",
                "request_id": f"r{request}",
                "result_count": 4,
                "interleave_team": team,
                "doc_id": f"d{position}",
                "position": position,
                "clicked": f"d{position}" == clicked_doc,
            }
            rows.append(row)
    log = _write(tmp_path / "balanced.parquet", rows)
    args = ["interleave", log, "-f", "json", "--method", "balanced", "--run-a", run_a]
    done = cli(*args, "--run-b", run_b)
    assert done.code == 0, done.err
    document = _strict(done.out)
    assert document["method"] == "balanced"
    assert document["wins"] == {"A": 1, "B": 3, "ties": 0}
    message = cli(*args).assert_one_error_line(2)
    assert message.startswith("method='balanced' credits clicks by the ranks in the two rankings")


def test_simulate_then_interleave_end_to_end(cli: CLI, tmp_path: Path) -> None:
    """docs/interleaving.md's "simulate -> interleave": a simulated interleaved log, written
    to Parquet, read by the command, which prefers the better run."""
    from rankmeter.online import simulate_log

    qrels = {f"q{i}": {f"d{i}-{j}": 2 if j < 3 else 0 for j in range(12)} for i in range(20)}
    good = {q: {d: 12.0 - j for j, d in enumerate(docs)} for q, docs in qrels.items()}
    poor = {q: {d: float(j) for j, d in enumerate(docs)} for q, docs in qrels.items()}
    log = simulate_log(qrels, {"A": poor, "B": good}, users=300, seed=1, interleave="team-draft")
    path = tmp_path / "interleaved.parquet"
    pq.write_table(log, path)
    done = cli("interleave", path, "-f", "json")
    assert done.code == 0, done.err
    document = _strict(done.out)
    assert document["preferred"] == "B" and document["users"] == 300
    assert document["wins"]["B"] > 10 * document["wins"]["A"]
