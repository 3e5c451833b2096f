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


# --- the finite-number rules, on every input format and engine ------------------------------
# A NaN latency in a Parquet log passed: DuckDB took the file's min/max statistics (which leave
# NaN out) as bounds on every value and folded isnan() to false. On Spark, Ibis counts a NaN as
# null, so a NaN was reported as an empty value and shown as None.

#: Each float column the schema requires finite, at a row of its own (row 4 is request r3's one
#: row; row 6 is a clicked row).
FINITE_ROWS = {"latency_ms": ("lat", 4), "dwell_ms": ("dw", 6)}
NOT_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def not_finite_log(kind: str, tmp_path: Path, values: dict[str, str]) -> Any:
    """The good log with ``values`` (column -> "nan", "inf" or "-inf") at FINITE_ROWS."""
    changes = {
        f"row{FINITE_ROWS[column][1]}": {FINITE_ROWS[column][0]: NOT_FINITE[value]}
        for column, value in values.items()
    }
    return write(kind, log_rows(**changes), tmp_path)


def finite_problems(kind: str, log: Any, values: dict[str, str]) -> list[str]:
    """The problems ``check_log`` must find in :func:`not_finite_log`'s log, in file order."""
    name = "<table>" if kind == "table" else str(log)
    found = []
    for column, value in sorted(values.items(), key=lambda item: FINITE_ROWS[item[0]][1]):
        at = f"{name}:{FINITE_ROWS[column][1] + (kind == 'csv')}: {column} {value}"
        found.append(f"{at} is not a finite number")
        if value == "-inf":
            found.append(f"{at} is negative")
    return found


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("column", list(FINITE_ROWS))
@pytest.mark.parametrize("value", list(NOT_FINITE))
def test_not_finite_numbers_are_found_in_every_format(
    kind: str, column: str, value: str, tmp_path: Path
) -> None:
    log = not_finite_log(kind, tmp_path, {column: value})
    want = finite_problems(kind, log, {column: value})
    got = [str(p) for p in check_log(log).problems]
    assert [line.split(": it is")[0] for line in got] == want
    with pytest.raises(FormatError, match="^" + re.escape(want[0])):
        read_log(log)


@pytest.mark.spark
@pytest.mark.parametrize("kind", KINDS)
def test_not_finite_numbers_on_spark_as_on_duckdb(
    spark_backend: Any, kind: str, tmp_path: Path
) -> None:
    # Three logs cover each rule (NaN, inf, -inf) on each float column, one Spark job each.
    for values in (
        {"latency_ms": "nan", "dwell_ms": "inf"},
        {"latency_ms": "inf", "dwell_ms": "-inf"},
        {"latency_ms": "-inf", "dwell_ms": "nan"},
    ):
        folder = tmp_path / values["latency_ms"]
        folder.mkdir()
        log = not_finite_log(kind, folder, values)
        got = [str(p) for p in check_log(log, engine="spark").problems]
        assert got == [str(p) for p in check_log(log).problems]
        assert [line.split(": it is")[0] for line in got] == finite_problems(kind, log, values)


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


@pytest.mark.parametrize("as_frame", [False, True], ids=["arrow", "pandas"])
def test_half_float_columns_are_read_as_floats(as_frame: bool) -> None:
    """A float16 latency_ms (NumPy's half float) is read as the float it holds:
    DuckDB takes no Arrow half float, and once raised a raw NotImplementedException."""
    import numpy as np

    table = arrow(log_rows())
    i = table.schema.get_field_index("latency_ms")
    values = table.column("latency_ms").to_numpy(zero_copy_only=False).astype(np.float16)
    table = table.set_column(i, "latency_ms", pa.array(values, pa.float16(), from_pandas=True))
    log = table.to_pandas() if as_frame else table
    assert check_log(log).ok
    read = read_log(log).to_pyarrow()
    assert read.column("latency_ms").to_pylist() == [
        float(v) for v in table.column("latency_ms").to_pylist()
    ]


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


# --- epoch units and the plausibility of every timestamp (a wrong unit must not pass) ---------


def epoch_rows(factor: int) -> list[dict[str, Any]]:
    """The good log with event_ts as integer epoch numbers: seconds times ``factor``."""
    import datetime as dt

    rows = log_rows()
    for row in rows:
        when = dt.datetime.fromisoformat(row["event_ts"].replace("Z", "+00:00"))
        row["event_ts"] = int(when.timestamp()) * factor
    return rows


@pytest.mark.parametrize("kind", KINDS)
def test_epoch_milliseconds_read_as_seconds_are_a_problem_naming_the_unit(
    kind: str, tmp_path: Path
) -> None:
    # 1714557600000 ms read as seconds is the year 56302: it passed silently, and the
    # reformulation rate (next request within 60 s) then read 0.
    log = write(kind, epoch_rows(1000), tmp_path)
    with pytest.raises(
        FormatError,
        match="^"
        + where(kind, log, 1)
        + re.escape(
            "event_ts 1714557600000 read as seconds since 1970 is in the year 56302, outside "
            "1990-2100: it looks like milliseconds; give ts_unit='ms' (--ts-unit ms)"
        ),
    ):
        read_log(log)
    assert not check_log(log).ok


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("unit", "factor"), [("s", 1), ("ms", 1000), ("us", 10**6), ("ns", 10**9)])
def test_ts_unit_reads_epoch_numbers(kind: str, unit: str, factor: int, tmp_path: Path) -> None:
    log = read_log(write(kind, epoch_rows(factor), tmp_path), ts_unit=unit)
    first = log.to_pyarrow().to_pylist()[0]["event_ts"]
    assert first.isoformat() == "2024-05-01T10:00:00+00:00"
    assert check_log(write(kind, epoch_rows(factor), tmp_path), ts_unit=unit).ok


def test_epoch_text_in_csv_with_a_unit_and_fractions(tmp_path: Path) -> None:
    rows = log_rows()
    for row in rows:
        row["event_ts"] = "1714557600250" if row["request_id"] == "r1" else "1714557700000"
    log = read_log(write("csv", rows, tmp_path), ts_unit="ms").to_pyarrow().to_pylist()
    assert log[0]["event_ts"].isoformat() == "2024-05-01T10:00:00.250000+00:00"


def test_epoch_nanoseconds_read_as_seconds_name_the_year_and_suggest_ns(tmp_path: Path) -> None:
    # Too far out to be a timestamp at all as seconds: still the range problem, not a type one.
    log = write("parquet", epoch_rows(10**9), tmp_path)
    check = check_log(log)
    assert [p.message.split(":")[0] for p in check.problems] == [
        "event_ts 1714557600000000000 read as seconds since 1970 is in the year 54332169411, "
        "outside 1990-2100"
    ]
    assert "give ts_unit='ns' (--ts-unit ns)" in check.problems[0].message


def test_a_real_timestamp_column_out_of_range_is_a_problem(tmp_path: Path) -> None:
    # A timestamp column written with the wrong unit (ms values stored as seconds).
    table = arrow(epoch_rows(1000))
    index = table.column_names.index("event_ts")
    table = table.set_column(index, "event_ts", table["event_ts"].cast(pa.timestamp("s")))
    path = tmp_path / "log.parquet"
    pq.write_table(table, path)
    with pytest.raises(
        FormatError,
        match=re.escape(f"{path}:1: event_ts is in the year 56302, outside 1990-2100: "),
    ):
        read_log(path)
    # ISO text too: the epoch's zero is a clock that was never set.
    rows = log_rows(row4={"ts": "1970-01-01T00:00:00Z"})
    with pytest.raises(FormatError, match=r"^<table>:4: event_ts is in the year 1970, outside"):
        read_log(arrow(rows))


def test_ts_unit_is_checked() -> None:
    with pytest.raises(PolicyError, match=r"ts_unit='sec' must be one of 's', 'ms', 'us', 'ns'"):
        read_log(arrow(log_rows()), ts_unit="sec")
    with pytest.raises(PolicyError, match=r"ordered=1 must be"):
        check_log(arrow(log_rows()), ordered=1)  # type: ignore[arg-type]


# --- unsorted logs -----------------------------------------------------------------------------


def unsorted_rows() -> list[dict[str, Any]]:
    """The good log with session s1's requests in reverse time order (as Spark writes it)."""
    rows = log_rows()
    return [rows[2], rows[0], rows[1], *rows[3:]]


@pytest.mark.parametrize("kind", KINDS)
def test_unsorted_log_is_refused_by_default_and_read_with_ordered_false(
    kind: str, tmp_path: Path
) -> None:
    log = write(kind, unsorted_rows(), tmp_path)
    with pytest.raises(
        FormatError,
        match=re.escape("give ordered=False (--unordered) when the rows are not in time order"),
    ):
        read_log(log)
    assert read_log(log, ordered=False).count().execute() == 7
    check = check_log(log, ordered=False)
    assert check.ok, check.problems


def test_an_ibis_table_has_no_file_order_to_check() -> None:
    # read_log's own result is an Ibis table: passing it on (to ab(), online_vs_offline() ...)
    # validates it again, and that must not undo ordered=False.
    ibis = pytest.importorskip("ibis")
    table = read_log(arrow(unsorted_rows()), ordered=False)
    assert check_log(table).ok
    assert check_log(ibis.memtable(arrow(unsorted_rows()))).ok
    assert read_log(table).count().execute() == 7


# --- JSONL and CSV: the true file line, and our wording ----------------------------------------


def jsonl_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(row) for row in rows]


def test_jsonl_mistyped_value_is_our_problem_at_its_line(tmp_path: Path) -> None:
    # pyarrow said "JSON parse error: Column(/position) changed from number to string in row 3"
    # (its 0-based record, one off, and blank lines not counted).
    lines = jsonl_lines(log_rows(row4={"p": "x"}))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines[:2], "", *lines[2:]]) + "\n")
    with pytest.raises(
        FormatError, match="^" + re.escape(f"{path}:5: position 'x' is not an integer")
    ):
        read_log(path)
    check = check_log(path)
    assert (check.problems[0].row, check.problems[0].message) == (
        5,
        "position 'x' is not an integer",
    )


def test_jsonl_not_utf8_names_the_line(tmp_path: Path) -> None:
    # Arrow's JSON reader let the byte through: check_log said "no problems", and ab crashed
    # decoding the segment value later.
    lines = jsonl_lines(log_rows(row3={"q": "caf\u00e9"}))
    path = tmp_path / "log.jsonl"
    data = ("\n".join(lines) + "\n").encode().replace(b"caf\\u00e9", b"caf\xe9")
    path.write_bytes(data)
    message = "^" + re.escape(f"{path}:3: not UTF-8 text (byte 0xe9): save the log as UTF-8")
    with pytest.raises(FormatError, match=message):
        read_log(path)
    with pytest.raises(FormatError, match=message):
        check_log(path)


def test_jsonl_broken_line_is_named(tmp_path: Path) -> None:
    lines = jsonl_lines(log_rows())
    lines[2] = lines[2][:-1]  # the closing brace lost
    path = tmp_path / "log.jsonl"
    path.write_text("\n\n".join(lines) + "\n")  # blank lines between the records
    with pytest.raises(
        FormatError,
        match="^" + re.escape(f"{path}:5: not a JSON object: Expecting ',' delimiter"),
    ):
        read_log(path)


def test_csv_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    pacsv.write_csv(arrow(log_rows(row3={"q": "caf\u00e9"})), path)
    path.write_bytes(path.read_bytes().replace("caf\u00e9".encode(), b"caf\xe9"))
    with pytest.raises(
        FormatError,
        match="^" + re.escape(f"{path}:4: not UTF-8 text (byte 0xe9): save the log as UTF-8"),
    ):
        read_log(path)


def test_csv_rows_over_several_lines_keep_the_file_lines(tmp_path: Path) -> None:
    # Quoted fields over two lines (rows 1 and 2) and a blank line (after row 3): the later
    # rows' lines were counted as if each row were one line.
    rows = log_rows(row6={"p": 0})
    for row in rows:
        row["query_text"] = "two\nlines" if row["request_id"] == "r1" else "one line"
    path = tmp_path / "log.csv"
    pacsv.write_csv(arrow(rows), path)
    text = path.read_text().split("\n")
    # header 1, rows 1 and 2 lines 2-5, row 3 line 6, blank line 7, row 4 line 8 ... row 6 10
    path.write_text("\n".join([*text[:6], "", *text[6:]]))
    with pytest.raises(FormatError, match="^" + re.escape(f"{path}:10: position 0 is below 1")):
        read_log(path)
