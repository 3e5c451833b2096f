"""rankmeter.online.read_log / check_log: the log schema, typed, and every problem named with
its file and row, for Parquet, CSV and JSONL files and for in-memory tables."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from _logs_support import arrow, log_rows

from rankmeter.errors import FormatError, PolicyError
from rankmeter.online import LogCheck, VariantCounts, check_log, read_log


def write(kind: str, rows: list[dict[str, Any]], tmp_path: Path, drop: tuple[str, ...] = ()) -> Any:
    """The log as ``kind`` (a file path, or the table itself) and its line-number offset."""
    table = arrow(rows, drop)
    if kind == "table":
        return table
    path = tmp_path / f"log.{kind}"
    if kind == "parquet":
        pq.write_table(table, path)
    elif kind == "csv":
        pacsv.write_csv(table, path)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in table.to_pylist()))
    return path


KINDS = ["parquet", "csv", "jsonl", "table"]


def where(kind: str, log: Any, row: int) -> str:
    """The start of the error message: ``path:line`` (CSV: the header is line 1)."""
    name = "<table>" if kind == "table" else str(log)
    return re.escape(f"{name}:{row + 1 if kind == 'csv' else row}: ")


@pytest.mark.parametrize("kind", KINDS)
def test_good_log_reads_typed(kind: str, tmp_path: Path) -> None:
    log = read_log(write(kind, log_rows(), tmp_path))
    schema = log.schema()
    assert list(schema)[:15] == [
        "event_ts",
        "user_id",
        "session_id",
        "request_id",
        "query_id",
        "query_text",
        "result_count",
        "latency_ms",
        "experiment_id",
        "variant",
        "interleave_team",
        "doc_id",
        "position",
        "clicked",
        "dwell_ms",
    ]
    assert schema["clicked"].is_boolean()
    assert schema["position"].is_integer()
    assert schema["event_ts"].is_timestamp()
    assert schema["latency_ms"].is_floating()
    rows = log.to_pyarrow().to_pylist()
    assert len(rows) == 7
    assert rows[0]["event_ts"].isoformat() == "2024-05-01T10:00:00+00:00"
    assert [r["clicked"] for r in rows] == [True, False, False, False, False, True, True]
    assert rows[2]["doc_id"] is None and rows[2]["position"] is None
    assert rows[0]["query_text"] is None  # an optional column the log lacks is all null


@pytest.mark.parametrize("kind", KINDS)
def test_check_log_counts_per_variant(kind: str, tmp_path: Path) -> None:
    check = check_log(write(kind, log_rows(), tmp_path))
    assert isinstance(check, LogCheck)
    assert check.ok and check.problems == ()
    assert check.rows == 7
    assert check.variants == (
        VariantCounts("control", users=2, sessions=2, requests=3, impressions=3, clicks=1),
        VariantCounts("treatment", users=2, sessions=2, requests=2, impressions=3, clicks=2),
    )
    assert check.to_dict()["variants"][0]["requests"] == 3


# (changes, drop, row, message): every bad input of issue 12 and the other checks.
BAD: dict[str, tuple[dict[str, Any], tuple[str, ...], int, str]] = {
    "position 0": ({"row2": {"p": 0}}, (), 2, r"position 0 is below 1: positions are 1-based"),
    "position repeated": (
        {"row2": {"p": 1}},
        (),
        2,
        r"position 1 is repeated within request 'r1'",
    ),
    "positions start at 2": (
        {"row1": {"p": 3}, "row2": {"p": 2}},
        (),
        1,
        r"request 'r1' starts at position 3: positions start at 1",
    ),
    "click without impression": (
        {"row3": {"c": 1}},
        (),
        3,
        r"a click on a row without a document \(request 'r2'\): a click needs an impression",
    ),
    "variant seen once": (
        {"row8": {"u": "u5", "s": "s5", "r": "r6", "v": "treatmnet", "ts": "2024-05-01T13:00:00Z"}},
        (),
        8,
        r"variant 'treatmnet' is seen for one user only \('u5'\)",
    ),
    "user in two variants": (
        {"row8": {"u": "u1", "s": "s9", "r": "r9", "v": "treatment", "ts": "2024-05-02T10:00:00Z"}},
        (),
        8,
        r"user 'u1' is in variant 'treatment' here and in another on an earlier row",
    ),
    "timestamps out of order": (
        {"row3": {"ts": "2024-05-01T09:00:00Z"}},
        (),
        3,
        r"event_ts 2024-05-01T09:00:00\+00:00 is earlier than the row before it in session 's1'",
    ),
    "timestamp unparseable": (
        {"row4": {"ts": "yesterday"}},
        (),
        4,
        r"event_ts 'yesterday' is not a timestamp \(ISO 8601 text, or seconds since 1970\)",
    ),
    "request columns disagree": (
        {"row2": {"q": "q9"}},
        (),
        2,
        r"query_id 'q9' differs from an earlier row of request 'r1': request-level columns",
    ),
    "no-result request with a document": (
        {"row3": {"d": "d5", "p": 1}},
        (),
        3,
        r"result_count is 0 but the row shows doc_id 'd5'",
    ),
    "document missing": (
        {"row4": {"d": None, "p": None}},
        (),
        4,
        r"doc_id is empty but result_count is 1",
    ),
    "negative latency": (
        {"row5": {"lat": -1.0}, "row6": {"lat": -1.0}},
        (),
        5,
        r"latency_ms -1 is negative",
    ),
    "negative dwell": ({"row6": {"dw": -5.0}}, (), 6, r"dwell_ms -5 is negative"),
    # inf and NaN were accepted: the latency means and quantiles became undefined, and a click
    # with NaN dwell silently stopped counting as a success.
    "infinite latency": (
        {"row5": {"lat": float("inf")}, "row6": {"lat": float("inf")}},
        (),
        5,
        r"latency_ms inf is not a finite number",
    ),
    "dwell not a number": ({"row6": {"dw": float("nan")}}, (), 6, r"dwell_ms nan is not a finite"),
    "dwell without click": (
        {"row2": {"dw": 1000.0}},
        (),
        2,
        r"dwell_ms 1000 on a row that was not clicked",
    ),
    "empty session": ({"row7": {"s": None}}, (), 7, r"session_id is empty: every row needs one"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(BAD))
def test_bad_log_names_file_and_row(kind: str, case: str, tmp_path: Path) -> None:
    changes, drop, row, message = BAD[case]
    log = write(kind, log_rows(**changes), tmp_path, drop)
    with pytest.raises(FormatError, match="^" + where(kind, log, row) + message):
        read_log(log)
    check = check_log(log)
    assert not check.ok
    assert any(
        re.match(message, p.message) and p.row == (row + (kind == "csv")) for p in check.problems
    )


@pytest.mark.parametrize("kind", KINDS)
def test_missing_columns_one_line_naming_them(kind: str, tmp_path: Path) -> None:
    log = write(kind, log_rows(), tmp_path, drop=("position", "clicked", "query_id"))
    name = "<table>" if kind == "table" else str(log)
    with pytest.raises(
        FormatError,
        match=re.escape(f"{name}: missing columns position, clicked, query_id or query_text: "),
    ):
        read_log(log)
    check = check_log(log)
    assert [(p.row, p.message.split(":")[0]) for p in check.problems] == [
        (None, "missing columns position, clicked, query_id or query_text")
    ]


def test_first_problem_in_file_order_is_raised(tmp_path: Path) -> None:
    rows = log_rows(row6={"p": 0}, row2={"q": "q9"})
    with pytest.raises(FormatError, match=r"^<table>:2: query_id 'q9' differs"):
        read_log(arrow(rows))
    problems = check_log(arrow(rows)).problems
    assert [p.row for p in problems] == [2, 6]
    assert str(problems[1]) == (
        "<table>:6: position 0 is below 1: positions are 1-based ranks on the results page"
    )


def test_validate_false_reads_a_bad_log(tmp_path: Path) -> None:
    log = read_log(arrow(log_rows(row2={"p": 0})), validate=False)
    assert log.position.min().execute() == 0


def test_clicked_other_than_0_or_1_is_a_type_problem() -> None:
    with pytest.raises(FormatError, match=r"^<table>:5: clicked 2 is not 0, 1, true or false"):
        read_log(arrow(log_rows(row5={"c": 2})))


def test_csv_keeps_ids_as_text_and_reads_epoch_seconds(tmp_path: Path) -> None:
    rows = log_rows()
    for row in rows:
        row["user_id"] = "00" + row["user_id"][1:]
    rows[0]["event_ts"] = rows[1]["event_ts"] = "1714557600.25"
    path = write("csv", rows, tmp_path)
    log = read_log(path).to_pyarrow().to_pylist()
    assert log[0]["user_id"] == "001"
    assert log[0]["event_ts"].isoformat() == "2024-05-01T10:00:00.250000+00:00"


def test_jsonl_lines_count_blank_lines(tmp_path: Path) -> None:
    rows = arrow(log_rows(row4={"p": 0})).to_pylist()
    path = tmp_path / "log.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in rows[:3])
        + "\n\n"
        + "\n".join(json.dumps(r) for r in rows[3:])
        + "\n"
    )
    with pytest.raises(FormatError, match=re.escape(f"{path}:5: position 0 is below 1")):
        read_log(path)


def test_folder_of_parquet_names_the_file(tmp_path: Path) -> None:
    rows = log_rows(row6={"p": 0})
    folder = tmp_path / "log"
    folder.mkdir()
    pq.write_table(arrow(rows[:4]), folder / "part-0.parquet")
    pq.write_table(arrow(rows[4:]), folder / "part-1.parquet")
    with pytest.raises(FormatError, match=re.escape(f"{folder / 'part-1.parquet'}:2: position 0")):
        read_log(folder)
    assert read_log(arrow(log_rows())).count().execute() == 7
    assert check_log(folder).rows == 7


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.to_pandas(),
        lambda t: pytest.importorskip("polars").from_arrow(t),
        lambda t: __import__("ibis").memtable(t),
    ],
    ids=["pandas", "polars", "ibis"],
)
def test_frames_and_ibis_tables(make: Callable[[pa.Table], Any]) -> None:
    good = make(arrow(log_rows()))
    assert check_log(good).ok
    bad = make(arrow(log_rows(row2={"p": 0})))
    with pytest.raises(FormatError, match=r"^<table>:2: position 0 is below 1"):
        read_log(bad)


def test_unreadable_inputs(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("x")
    with pytest.raises(
        FormatError, match=r"log\.txt: cannot tell the log's format from the suffix"
    ):
        read_log(tmp_path / "log.txt")
    with pytest.raises(FormatError, match=r"nothing\.parquet: no such file"):
        read_log(tmp_path / "nothing.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match=r"empty: the folder holds no \.parquet files"):
        read_log(tmp_path / "empty")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(FormatError, match=r"broken\.parquet: cannot read it as Parquet"):
        read_log(broken)
    with pytest.raises(PolicyError, match=r"log=list cannot be read as a search log"):
        read_log([1, 2])


@pytest.mark.spark
def test_spark_reads_and_checks_as_duckdb(spark_backend: Any, tmp_path: Path) -> None:
    good = write("parquet", log_rows(), tmp_path)
    assert check_log(good, engine="spark") == LogCheck(
        **{**check_log(good).__dict__, "engine": "spark"}
    )
    duck = read_log(good).to_pyarrow().to_pylist()
    spark = read_log(good, engine="spark").to_pyarrow().to_pylist()
    assert spark == duck
    bad = tmp_path / "bad.parquet"
    pq.write_table(arrow(log_rows(row2={"p": 1}, row3={"c": 1})), bad)
    assert [str(p) for p in check_log(bad, engine="spark").problems] == [
        str(p) for p in check_log(bad).problems
    ]
    with pytest.raises(FormatError, match=re.escape(f"{bad}:2: position 1 is repeated")):
        read_log(bad, engine="spark")
