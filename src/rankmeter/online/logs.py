"""Search logs: read one (Parquet, CSV, JSONL, a folder of Parquet, an in-memory table) as a
typed Ibis table, and check it against the log schema (docs/online.md, "Search logs").

One row is one impression (one shown result), aligned with OpenSearch's User Behavior Insights.
Every check is an Ibis expression run in the engine (DuckDB or Spark, :mod:`rankmeter.engines`):
only the first offending row of each problem and the per-variant counts come back to Python.

Rows are numbered where they are read, so that a problem names the line a person can open:
the file line for CSV (the header is line 1) and JSONL, the 1-based data row for Parquet and for
in-memory tables (pyarrow, pandas, polars). An Ibis table has no order of its own: its rows are
numbered in the order the engine returns them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankmeter.errors import FormatError, PolicyError

__all__ = [
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "LogCheck",
    "LogProblem",
    "VariantCounts",
    "check_log",
    "log_format",
    "read_log",
    "write_log",
]

#: The log's columns and their types (Ibis type names), in the order :func:`read_log` returns
#: them; any other column is a segment and is kept as it is, after these.
LOG_COLUMNS: Mapping[str, str] = {
    "event_ts": "timestamp('UTC')",
    "user_id": "string",
    "session_id": "string",
    "request_id": "string",
    "query_id": "string",
    "query_text": "string",
    "result_count": "int64",
    "latency_ms": "float64",
    "experiment_id": "string",
    "variant": "string",
    "interleave_team": "string",
    "doc_id": "string",
    "position": "int64",
    "clicked": "boolean",
    "dwell_ms": "float64",
}
#: Columns a log must have (and one of query_id, query_text).
REQUIRED_COLUMNS = (
    "event_ts",
    "user_id",
    "session_id",
    "request_id",
    "result_count",
    "latency_ms",
    "variant",
    "doc_id",
    "position",
    "clicked",
)
_QUERY_COLUMNS = ("query_id", "query_text")
#: Request-level columns: the same on every impression row of one request.
_REQUEST_COLUMNS = (
    "event_ts",
    "user_id",
    "session_id",
    "query_id",
    "query_text",
    "result_count",
    "latency_ms",
    "variant",
    "experiment_id",
)
#: Never empty: doc_id and position may be empty only on a no-result request's row.
_NOT_NULL = (
    "event_ts",
    "user_id",
    "session_id",
    "request_id",
    "result_count",
    "latency_ms",
    "variant",
    "clicked",
)
_STRINGS = tuple(name for name, kind in LOG_COLUMNS.items() if kind == "string")
_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
# Bookkeeping columns added where the rows are read (names no log uses).
_ROW = "__rankmeter_row"
_FILE = "__rankmeter_file"
_HOW_TO_READ = "give a .parquet, .csv or .jsonl file, a folder of .parquet files, or a table"
#: The units of epoch numbers in ``event_ts`` (``ts_unit``), and how many make a second.
TS_UNITS: Mapping[str, int] = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
#: Timestamps outside these years are a problem: a wrong unit (milliseconds read as seconds
#: give the year 56302) or a clock that was never set (1970) must not pass silently.
PLAUSIBLE_YEARS = (1990, 2100)
_LOW_SECONDS = 631_152_000  # 1990-01-01T00:00:00Z
_HIGH_SECONDS = 4_102_444_800  # 2100-01-01T00:00:00Z
# Epoch seconds beyond these are not made timestamps at all (engines overflow, Python's datetime
# stops at the year 9999); the range check names them.
_REPRESENTABLE_SECONDS = (-62_135_596_800, 253_402_300_799)
_SECONDS_PER_YEAR = 31_556_952  # the Gregorian calendar's mean year
# Columns computed for the timestamp checks (names no log uses).
_TS_SECONDS = "__rankmeter_ts_seconds"
_TS_YEAR = "__rankmeter_ts_year"


@dataclass(frozen=True)
class LogProblem:
    """One problem of a log: where it first occurs and what is wrong.

    Attributes
    ----------
    file : str
        The file (or ``"<table>"`` for an in-memory table).
    row : int or None
        The first offending row: the file line for CSV and JSONL, the 1-based data row
        otherwise; None for a problem of the whole log (missing columns).
    message : str
        What is wrong and how to fix it.
    """

    file: str
    row: int | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.row is None else f"{self.file}:{self.row}"
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "row": self.row, "message": self.message}

    def error(self) -> FormatError:
        """This problem as the error :func:`read_log` raises."""
        return FormatError(self.file, self.message, line=self.row)


@dataclass(frozen=True)
class VariantCounts:
    """How much of the log one variant has."""

    variant: str
    users: int
    sessions: int
    requests: int
    impressions: int
    clicks: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "users": self.users,
            "sessions": self.sessions,
            "requests": self.requests,
            "impressions": self.impressions,
            "clicks": self.clicks,
        }


@dataclass(frozen=True)
class LogCheck:
    """What :func:`check_log` found: the per-variant counts and the problems.

    Attributes
    ----------
    source : str
        The log (a path, or ``"<table>"``).
    engine : str
        Where the checks ran (``"duckdb"`` or ``"spark"``).
    rows : int
        Rows read (0 when the columns are missing).
    variants : tuple of VariantCounts
        One per variant, by name (empty when the columns are missing).
    problems : tuple of LogProblem
        The first offending row of each problem found, in file order.
    experiments : tuple of (str, int)
        Each experiment_id of the log with its rows, most rows first (empty without ids).
        The counts per variant pool them; :func:`rankmeter.online.ab` analyses one.
    """

    source: str
    engine: str
    rows: int
    variants: tuple[VariantCounts, ...] = ()
    problems: tuple[LogProblem, ...] = field(default=())
    experiments: tuple[tuple[str, int], ...] = ()

    @property
    def note(self) -> str | None:
        """What a reader of the counts must know: several experiments pooled in them."""
        if len(self.experiments) < 2:
            return None
        listed = ", ".join(f"{e!r}: {n:,} rows" for e, n in self.experiments[:5])
        more = f", and {len(self.experiments) - 5} more" if len(self.experiments) > 5 else ""
        return (
            f"the log holds {len(self.experiments)} experiments ({listed}{more}); the counts "
            "per variant pool them, and rankmeter ab analyses one (--experiment ID)"
        )

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "engine": self.engine,
            "rows": self.rows,
            "ok": self.ok,
            "variants": [v.to_dict() for v in self.variants],
            "experiments": {e: n for e, n in self.experiments},
            "note": self.note,
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass(frozen=True)
class _Source:
    """A log as read: an Ibis table with its row numbers (and file names, for a folder)."""

    table: Any
    name: str
    has_file_column: bool
    #: The unit of epoch numbers in event_ts.
    ts_unit: str = "s"
    #: Whether the rows have an order of their own (a file, an Arrow table): an Ibis table
    #: has none, so the time-order check does not apply to it.
    has_order: bool = True


def _ibis() -> Any:
    try:
        import ibis
    except ImportError as exc:
        raise PolicyError(
            "search logs need the [online] extra (Ibis with DuckDB): "
            f"pip install 'rankmeter[online]' ({exc})"
        ) from None
    return ibis


def read_log(
    log: Any,
    *,
    engine: str = "duckdb",
    validate: bool = True,
    ts_unit: str = "s",
    ordered: bool = True,
) -> Any:
    """Read a search log as an Ibis table with the log schema's columns, typed.

    Parameters
    ----------
    log : path, pyarrow.Table, pandas or polars DataFrame, or Ibis table
        A ``.parquet``, ``.csv`` or ``.jsonl`` file (by suffix), a folder of Parquet files, or
        a table with the log's columns (one row per impression; docs/online.md).
    engine : {"duckdb", "spark"}
        Where the log is read and checked (:func:`rankmeter.engines.connect`). An Ibis table
        stays on its own backend.
    validate : bool
        Check the log first (:func:`check_log`) and raise its first problem.
    ts_unit : {"s", "ms", "us", "ns"}
        The unit of ``event_ts`` given as epoch numbers (a numeric column, or numbers in CSV
        and JSONL text): seconds (default), milliseconds, microseconds or nanoseconds since
        1970. Timestamps and ISO 8601 text carry their own unit. Whatever the unit, a
        timestamp outside the years 1990-2100 is a problem (a wrong unit cannot pass).
    ordered : bool
        The rows are in time order within a session (as a logger appends them): a session
        whose event_ts goes backwards from one row to the next is a problem. False for an
        unsorted export (warehouses, Spark), which skips only that check. An Ibis table has
        no order of its own, so the check never applies to one (such as this function's
        result, passed on to :func:`rankmeter.online.ab`).

    Returns
    -------
    ibis.Table
        The columns of :data:`LOG_COLUMNS` in that order and typed so (``event_ts`` a UTC
        timestamp, ``clicked`` boolean, ``position`` int64 ...; an optional column the log
        lacks is all null), then the log's other columns (segments) as they are.

    Raises
    ------
    FormatError
        A file that cannot be read, missing columns (one line naming them all) or, with
        ``validate``, the first problem in file order, naming the file and the row (the file
        line for CSV and JSONL, the 1-based data row otherwise).
    PolicyError
        An unknown engine or a missing extra.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from rankmeter.online import read_log
    >>> rows = [
    ...     ("2024-05-01T10:00:00Z", "u1", "s1", "r1", "q1", "control", "d1", 1, 1),
    ...     ("2024-05-01T10:00:00Z", "u1", "s1", "r1", "q1", "control", "d2", 2, 0),
    ...     ("2024-05-01T10:01:00Z", "u2", "s2", "r2", "q1", "control", "d1", 1, 0),
    ... ]
    >>> names = ("event_ts", "user_id", "session_id", "request_id", "query_id", "variant",
    ...          "doc_id", "position", "clicked")
    >>> table = pa.table(dict(zip(names, map(list, zip(*rows)))))
    >>> table = table.append_column("result_count", pa.array([2, 2, 1]))
    >>> table = table.append_column("latency_ms", pa.array([40.0, 40.0, 35.5]))
    >>> log = read_log(table)
    >>> log.clicked.type()
    Boolean(nullable=True)
    >>> int(log.clicked.sum().execute())
    1
    """
    from rankmeter._validate import boolean

    boolean("validate", validate)
    source = _read(log, engine, *_reading(ts_unit, ordered))
    _require_columns(source)
    if validate:
        found = _problems(source, ordered)
        if found:
            raise found[0].error()
    return _typed(source).drop(*_bookkeeping(source))


def check_log(
    log: Any, *, engine: str = "duckdb", ts_unit: str = "s", ordered: bool = True
) -> LogCheck:
    """Check a search log against the log schema and count it per variant.

    The checks, each an aggregation in the engine reporting the first offending row:
    missing columns; values that are not of their column's type (an unparseable timestamp, a
    position that is not an integer, a clicked flag other than 0/1/true/false); empty required
    values; request-level columns that disagree within a request; positions below 1, not
    starting at 1 or repeated within a request; a no-result request (result_count 0) with
    more than one row or with a document, and a clicked no-result row (a click without an
    impression); a document without a position or a position without a document; negative
    result counts, latencies or dwell times; dwell on a row that was not clicked; an
    ``interleave_team`` other than A or B; a variant seen for one user only; a user in two
    variants; a timestamp outside the years 1990-2100 (epoch numbers in the wrong unit); and,
    with ``ordered``, timestamps that go backwards within a session in file order.

    Parameters
    ----------
    log : path or table
        As :func:`read_log` takes it.
    engine : {"duckdb", "spark"}
        Where the checks run.
    ts_unit, ordered
        As :func:`read_log` takes them.

    Returns
    -------
    LogCheck
        The per-variant counts (users, sessions, requests, impressions, clicks) and the
        problems in file order (none: the log is good).
    """
    source = _read(log, engine, *_reading(ts_unit, ordered))
    missing = _missing_columns(source)
    from rankmeter.engines import engine_name

    backend_name = _backend_name(source.table, engine_name)
    if missing:
        return LogCheck(
            source=source.name,
            engine=backend_name,
            rows=0,
            problems=(LogProblem(source.name, None, _missing_message(missing)),),
        )
    problems = _problems(source, ordered)
    typed = _typed(source)
    counts = (
        typed.filter(typed.variant.notnull())
        .group_by("variant")
        .aggregate(
            users=typed.user_id.nunique(),
            sessions=typed.session_id.nunique(),
            requests=typed.request_id.nunique(),
            impressions=typed.doc_id.notnull().cast("int64").sum(),
            clicks=typed.clicked.cast("int64").sum(),
        )
        .order_by("variant")
        .to_pyarrow()
        .to_pylist()
    )
    rows = int(typed.count().to_pyarrow().as_py())
    tagged = typed.filter(typed.experiment_id.notnull())
    by_experiment = (
        tagged.group_by("experiment_id").aggregate(rows=tagged.count()).to_pyarrow().to_pylist()
    )
    experiments = sorted(
        ((str(e["experiment_id"]), int(e["rows"])) for e in by_experiment),
        key=lambda item: (-item[1], item[0]),
    )
    return LogCheck(
        source=source.name,
        engine=backend_name,
        rows=rows,
        variants=tuple(
            VariantCounts(
                variant=str(c["variant"]),
                users=int(c["users"]),
                sessions=int(c["sessions"]),
                requests=int(c["requests"]),
                impressions=int(c["impressions"] or 0),
                clicks=int(c["clicks"] or 0),
            )
            for c in counts
        ),
        problems=tuple(problems),
        experiments=tuple(experiments),
    )


def _backend_name(table: Any, engine_name: Any) -> str:
    try:
        backend = table._find_backend(use_default=True)
    except Exception:  # an unbound table: it runs on Ibis' default backend, DuckDB
        return "duckdb"
    return str(engine_name(backend))


# --- writing ----------------------------------------------------------------------------------


def log_format(path: str | os.PathLike[str]) -> str:
    """The format a log file's name says, as :func:`read_log` reads it: ``"parquet"``
    (``.parquet``, ``.pq``), ``"csv"`` or ``"jsonl"`` (``.jsonl``, ``.ndjson``, ``.json``).

    Raises
    ------
    PolicyError
        A name with another suffix (or none): the log would be written in a format that
        no reader of logs would take for what it is.
    """
    suffix = Path(path).suffix
    kind = _SUFFIXES.get(suffix.lower())
    if kind is None:
        said = f"its suffix {suffix!r} names none" if suffix else "it has no suffix"
        raise PolicyError(
            f"{os.fspath(path)}: a log's name says its format, and {said}: "
            "end it in .parquet, .csv or .jsonl"
        )
    return kind


def write_log(log: Any, path: str | os.PathLike[str]) -> None:
    """Write a log (a pyarrow Table, one row per impression) in the format its name says
    (:func:`log_format`), so that :func:`read_log` reads it back: Parquet; CSV with a header
    (an empty field is a missing value, timestamps in ISO 8601 with their zone); or JSONL, one
    object a line. The file is replaced only when the whole log is written
    (:func:`rankmeter.io.atomic_write`).

    Raises
    ------
    PolicyError
        A name whose suffix names no log format.
    FormatError
        A target that cannot be written.
    """
    kind = log_format(path)
    from rankmeter.io import atomic_write

    with atomic_write(path) as handle:
        handle.flush()
        if kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(log, handle.buffer)
        elif kind == "csv":
            from pyarrow import csv

            csv.write_csv(log, handle.buffer)
        else:
            _write_jsonl(log, handle)


def _write_jsonl(log: Any, handle: Any) -> None:
    import json

    def plain(value: Any) -> Any:
        if hasattr(value, "isoformat"):
            return value.isoformat()
        raise TypeError(f"{type(value).__name__} is not a JSON value")

    for batch in log.to_batches(max_chunksize=65_536):
        handle.writelines(
            json.dumps(record, ensure_ascii=False, default=plain) + "\n"
            for record in batch.to_pylist()
        )


# --- reading ----------------------------------------------------------------------------------


def _reading(ts_unit: str, ordered: bool) -> tuple[str, bool]:
    """``ts_unit`` and ``ordered``, checked."""
    from rankmeter._validate import boolean, choice

    return (
        choice("ts_unit", ts_unit, TS_UNITS, what="the unit of epoch numbers in event_ts"),
        boolean("ordered", ordered),
    )


def _read(log: Any, engine: str, ts_unit: str = "s", ordered: bool = True) -> _Source:
    from dataclasses import replace

    from rankmeter.engines import connect

    if isinstance(log, str | os.PathLike):
        backend = connect(engine)
        return replace(_read_path(Path(log), backend), ts_unit=ts_unit)
    ibis = _ibis()
    if isinstance(log, ibis.Table):
        numbered = log.mutate(**{_ROW: ibis.row_number() + 1})
        return _Source(numbered, "<table>", has_file_column=False, ts_unit=ts_unit, has_order=False)
    import pyarrow as pa

    table = _half_floats_widened(_as_arrow(log, pa), pa)
    backend = connect(engine)
    table = table.append_column(_ROW, pa.array(range(1, table.num_rows + 1), pa.int64()))
    return _Source(_memtable(backend, table), "<table>", has_file_column=False, ts_unit=ts_unit)


def _as_arrow(log: Any, pa: Any) -> Any:
    if isinstance(log, pa.Table):
        return log
    if isinstance(log, pa.RecordBatch):
        return pa.Table.from_batches([log])
    kind = f"{type(log).__module__}.{type(log).__name__}"
    if kind.startswith("polars.") and hasattr(log, "to_arrow"):
        return log.to_arrow()
    if kind.startswith("pandas.") and hasattr(log, "columns"):
        return pa.Table.from_pandas(log, preserve_index=False)
    raise PolicyError(
        f"log={type(log).__name__} cannot be read as a search log: {_HOW_TO_READ} "
        "(pyarrow, pandas, polars or Ibis)"
    )


def _half_floats_widened(table: Any, pa: Any) -> Any:
    """``table`` with its float16 columns as float32 (exactly the same values): DuckDB and
    Spark take no Arrow half float, and a log made with NumPy or pandas may hold one."""
    fields = [
        pa.field(f.name, pa.float32(), f.nullable, f.metadata) if pa.types.is_float16(f.type) else f
        for f in table.schema
    ]
    if all(f is g for f, g in zip(fields, table.schema, strict=True)):
        return table
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _memtable(backend: Any, table: Any) -> Any:
    """An in-memory Arrow table as an Ibis table on ``backend``."""
    # Registered on the backend, so that expressions on it run there (DuckDB or Spark).
    name = f"rankmeter_log_{uuid.uuid4().hex}"
    if getattr(backend, "name", "") == "pyspark":
        backend._session.createDataFrame(table).createOrReplaceTempView(name)
    else:
        backend.con.register(name, table)
    return backend.table(name)


def _files_of(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".parquet", ".pq"))
        if not files:
            raise FormatError(str(path), f"the folder holds no .parquet files: {_HOW_TO_READ}")
        return files
    if not path.exists():
        raise FormatError(str(path), "no such file: give the path of a search log")
    return [path]


def _read_path(path: Path, backend: Any) -> _Source:
    name = str(path)
    files = _files_of(path)
    kind = "parquet" if path.is_dir() else _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise FormatError(
            name, f"cannot tell the log's format from the suffix {path.suffix!r}: {_HOW_TO_READ}"
        )
    if kind == "parquet":
        return _read_parquet(files, name, backend, is_folder=path.is_dir())
    import pyarrow as pa

    try:
        table = _read_csv(path, pa) if kind == "csv" else _read_jsonl(path, pa)
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
        raise FormatError(name, f"cannot read it as {kind.upper()}: {_one_line(exc)}") from None
    return _Source(_memtable(backend, table), name, has_file_column=False)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _read_csv(path: Path, pa: Any) -> Any:
    import io

    from pyarrow import csv

    data = path.read_bytes()
    # Ids and timestamps stay text: "007" is not 7, and timestamps are parsed in the engine,
    # where an unparseable one is a problem with a row number rather than a reader error.
    types = {name: pa.string() for name in (*_STRINGS, "event_ts")}
    # Empty (or NULL) is missing; "nan" is not: Arrow would read it as missing by default, and
    # a NaN dwell or latency must be reported, not taken for "no value".
    try:
        table = csv.read_csv(
            io.BytesIO(data),
            convert_options=csv.ConvertOptions(
                column_types=types,
                null_values=["", "NULL", "null"],
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        _require_utf8(path, data)
        raise
    if any(pa.types.is_binary(column.type) for column in table.columns):
        _require_utf8(path, data)  # Arrow reads a column that is not UTF-8 as bytes
    return table.append_column(_ROW, pa.array(_csv_lines(data, table.num_rows), pa.int64()))


def _require_utf8(path: Path, data: bytes) -> None:
    """A file that is not UTF-8 is named with the line of its first foreign byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(
            str(path),
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}): save the log as UTF-8",
            line=line,
        ) from None


def _csv_lines(data: bytes, rows: int) -> Any:
    """The file line where each of the ``rows`` data rows of a CSV starts: a quoted field may
    hold line breaks and Arrow skips empty lines, so row n is not always line n + 1."""
    import numpy as np

    buffer = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(buffer == ord("\n"))
    quotes = np.flatnonzero(buffer == ord('"'))
    # A line break after an odd number of quotes is inside a quoted field ("" is two).
    ends = newlines[np.searchsorted(quotes, newlines) % 2 == 0] if len(quotes) else newlines
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [len(data)]))
    length = stops - starts
    empty = (length == 0) | ((length == 1) & (buffer[np.minimum(starts, len(data) - 1)] == 13))
    lines = np.searchsorted(newlines, starts[~empty]) + 1
    if len(lines) == rows + 1:  # the header, then the rows
        return lines[1:]
    return _csv_lines_by_reader(data, rows)


def _csv_lines_by_reader(data: bytes, rows: int) -> Any:
    """:func:`_csv_lines` by Python's CSV reader (slower; for what the quote count misreads,
    such as a quote inside an unquoted field)."""
    import csv
    import io

    import numpy as np

    reader = csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline=""))
    lines, read = [], 0
    for record in reader:
        if record:
            lines.append(read + 1)
        read = reader.line_num
    if len(lines) == rows + 1:
        return np.asarray(lines[1:], dtype=np.int64)
    return np.arange(2, rows + 2)  # the header is line 1: data row n is line n + 1


def _read_jsonl(path: Path, pa: Any) -> Any:
    import io

    import numpy as np
    from pyarrow import json

    data = path.read_bytes()
    # Arrow's JSON reader passes bytes that are not UTF-8 into its string columns, which
    # fail only later, when a value is decoded: refuse them here, at their line.
    _require_utf8(path, data)
    numbers: Any
    try:
        table = json.read_json(io.BytesIO(data))
    except pa.ArrowInvalid:
        # A broken line or a value whose type changes (a number, then text): read by Python,
        # so that the line is named and a wrong value is a problem of its column.
        table, numbers = _read_jsonl_by_lines(path, data, pa)
    else:
        # Blank lines hold no record: number the records by the lines that do.
        lines = data.split(b"\n")
        numbers = np.flatnonzero([bool(line.strip()) for line in lines]) + 1
        if len(numbers) != table.num_rows:  # a record over several lines: count records
            numbers = np.arange(1, table.num_rows + 1)
    for column in _STRINGS:
        if column in table.column_names and not pa.types.is_string(table[column].type):
            index = table.column_names.index(column)
            table = table.set_column(index, column, table[column].cast(pa.string()))
    return table.append_column(_ROW, pa.array(np.asarray(numbers, dtype="int64")))


def _read_jsonl_by_lines(path: Path, data: bytes, pa: Any) -> tuple[Any, list[int]]:
    """JSONL read line by line: the table (a column whose values are of several JSON types
    becomes text, checked by its column's type in the engine) and each record's line."""
    import json

    _require_utf8(path, data)
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(
                str(path), f"not a JSON object: {exc.msg} (column {exc.colno})", line=number
            ) from None
        if not isinstance(record, dict):
            raise FormatError(
                str(path), "not a JSON object: each line holds one record, {...}", line=number
            )
        records.append(record)
        numbers.append(number)
    names = list(dict.fromkeys(name for record in records for name in record))
    columns = {name: _json_column([r.get(name) for r in records], pa) for name in names}
    return pa.table(columns) if columns else pa.table({}), numbers


def _json_column(values: list[Any], pa: Any) -> Any:
    """One JSONL column: typed when its values agree, else as text (JSON's own spelling)."""
    import json

    kinds = {type(v) for v in values if v is not None}
    if kinds == {int, float}:
        kinds = {float}
    if len(kinds) <= 1 and not kinds & {dict, list}:
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    return pa.array(
        [v if v is None or isinstance(v, str) else json.dumps(v) for v in values], pa.string()
    )


def _read_parquet(files: list[Path], name: str, backend: Any, *, is_folder: bool) -> _Source:
    paths = [str(f) for f in files]
    try:
        if getattr(backend, "name", "") == "pyspark":
            table = _read_parquet_spark(paths, backend)
        else:
            # can_have_nan: Parquet's min/max statistics leave NaN out, and a file without a
            # nan_count (pyarrow's, Spark's) would otherwise be taken to hold none, so that
            # DuckDB folds isnan() to false from the statistics and a NaN latency passes.
            raw = backend.read_parquet(
                paths, file_row_number=True, filename=True, can_have_nan=True
            )
            table = raw.rename({_ROW: "file_row_number", _FILE: "filename"})
            table = table.mutate(**{_ROW: table[_ROW] + 1})
    except Exception as exc:
        if type(exc).__module__.startswith("rankmeter"):
            raise
        raise FormatError(name, f"cannot read it as Parquet: {_one_line(exc)}") from None
    if not is_folder:
        return _Source(table.drop(_FILE), name, has_file_column=False)
    return _Source(table, name, has_file_column=True)


def _read_parquet_spark(paths: list[str], backend: Any) -> Any:
    """Parquet on Spark with each row's file and 1-based row (Spark's ``_metadata``)."""
    from pyspark.sql import functions

    session = backend._session
    frame = session.read.parquet(*paths)
    frame = frame.select(
        "*",
        functions.col("_metadata.file_path").alias(_FILE),
        (functions.col("_metadata.row_index") + 1).alias(_ROW),
    )
    view = f"rankmeter_log_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(view)
    table = backend.table(view)
    # Spark names files by URI (file:///tmp/a.parquet): show the path.
    return table.mutate(**{_FILE: table[_FILE].re_replace("^file:(//)?", "")})


def _bookkeeping(source: _Source) -> list[str]:
    return [_ROW, _FILE] if source.has_file_column else [_ROW]


# --- schema and types -------------------------------------------------------------------------


def _missing_columns(source: _Source) -> list[str]:
    present = set(source.table.columns)
    missing = [c for c in REQUIRED_COLUMNS if c not in present]
    if not any(c in present for c in _QUERY_COLUMNS):
        missing.append("query_id or query_text")
    return missing


def _missing_message(missing: list[str]) -> str:
    return (
        f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}: a search log "
        "has one row per impression with event_ts, user_id, session_id, request_id, "
        "query_id or query_text, result_count, latency_ms, variant, doc_id, position, clicked "
        "(docs/online.md)"
    )


def _require_columns(source: _Source) -> None:
    missing = _missing_columns(source)
    if missing:
        raise FormatError(source.name, _missing_message(missing))


def _typed_column(raw: Any, kind: str, ts_unit: str = "s") -> Any:
    """``raw`` as ``kind``; a value that is not of the type becomes null (checked apart).
    Epoch numbers count ``ts_unit``s."""
    ibis = _ibis()
    dtype = raw.type()
    if kind == "boolean":
        if dtype.is_boolean():
            return raw
        if dtype.is_numeric():
            return ibis.cases((raw == 1, True), (raw == 0, False), else_=ibis.null("boolean"))
        if dtype.is_string():
            word = raw.strip().lower()
            return ibis.cases(
                (word.isin(["1", "true"]), True),
                (word.isin(["0", "false"]), False),
                else_=ibis.null("boolean"),
            )
        return ibis.null("boolean")
    if kind.startswith("timestamp"):
        if dtype.is_timestamp() or dtype.is_date():
            return raw.cast(kind)
        seconds = _epoch_number_seconds(raw, kind, ts_unit)
        if seconds is None:
            return ibis.null(kind)
        representable = seconds.between(*_REPRESENTABLE_SECONDS)
        epoch = _epoch_seconds(ibis.ifelse(representable, seconds, ibis.null("float64")), kind)
        return epoch if dtype.is_numeric() else raw.try_cast(kind).coalesce(epoch)
    if kind == "string":
        return raw if dtype.is_string() else raw.cast("string")
    if kind == "int64":
        if dtype.is_integer():
            return raw.cast("int64")
        if dtype.is_floating():
            # 3.0 is the integer 3; 3.5 is not an integer.
            return ibis.ifelse(raw == raw.round(), raw, ibis.null("float64")).try_cast("int64")
        return raw.try_cast("int64")
    return raw if dtype == ibis.dtype(kind) else raw.try_cast(kind)


def _epoch_number_seconds(raw: Any, kind: str, ts_unit: str) -> Any:
    """The seconds since 1970 of an event_ts given as epoch numbers in ``ts_unit`` (a numeric
    column, or numbers in text that is not an ISO 8601 timestamp); None for a column that
    cannot hold them (a timestamp column)."""
    ibis = _ibis()
    dtype = raw.type()
    if dtype.is_numeric():
        number = raw.cast("float64")
    elif dtype.is_string():
        number = ibis.ifelse(raw.try_cast(kind).isnull(), raw.try_cast("float64"), None)
    else:
        return None
    finite = ibis.ifelse(_not_finite(number), ibis.null("float64"), number)
    return finite / TS_UNITS[ts_unit]


def _not_finite(number: Any) -> Any:
    """Whether a float column's value is NaN, inf or -inf, on every engine. Not
    ``isinf()``: Ibis' PySpark compiler turns it into ``FALSE OR FALSE`` (it compares the
    expressions in Python), so that an infinite value passed on Spark. (A NaN from Parquet is
    seen by DuckDB only with ``can_have_nan``: :func:`_read_parquet`.)"""
    import math

    return number.isnan() | (number.abs() == _ibis().literal(math.inf, "float64"))


def _epoch_seconds(seconds: Any, kind: str) -> Any:
    """Seconds since 1970 (fractions kept to the microsecond) as a UTC timestamp."""
    ibis = _ibis()
    finite = ibis.ifelse(seconds.isnull() | _not_finite(seconds), ibis.null("float64"), seconds)
    whole = finite.floor().cast("int64")
    micros = ((finite - finite.floor()) * 1_000_000).round().cast("int64")
    return whole.as_timestamp("s").cast(kind) + micros.as_interval("us")


def _typed(source: _Source) -> Any:
    """The log's columns typed as :data:`LOG_COLUMNS` says, then the other columns."""
    ibis = _ibis()
    table = source.table
    present = set(table.columns)
    columns = {
        name: _typed_column(table[name], kind, source.ts_unit)
        if name in present
        else ibis.null(kind)
        for name, kind in LOG_COLUMNS.items()
    }
    rest = [c for c in table.columns if c not in LOG_COLUMNS]
    return table.select(**columns, **{c: table[c] for c in rest})


# --- the checks -------------------------------------------------------------------------------


def _type_name(kind: str, ts_unit: str = "s") -> str:
    return {
        "int64": "an integer",
        "float64": "a number",
        "boolean": "0, 1, true or false",
        "string": "text",
    }.get(kind, f"a timestamp (ISO 8601 text, or {_UNIT_WORDS[ts_unit]} since 1970)")


def _combined(source: _Source) -> Any:
    """One relation with the typed columns (by their names), the log's columns as written
    (``raw__<name>``) and the row numbers: every check is an expression over it."""
    ibis = _ibis()
    raw = source.table
    present = set(raw.columns)
    typed = {
        name: _typed_column(raw[name], kind, source.ts_unit) if name in present else ibis.null(kind)
        for name, kind in LOG_COLUMNS.items()
    }
    written = {f"raw__{name}": raw[name] for name in LOG_COLUMNS if name in present}
    seconds = None
    if "event_ts" in present:
        seconds = _epoch_number_seconds(raw.event_ts, LOG_COLUMNS["event_ts"], source.ts_unit)
    timestamps = {
        _TS_SECONDS: ibis.null("float64") if seconds is None else seconds,
        # (the year of the UTC instant: engines refuse EXTRACT from a zoned timestamp)
        _TS_YEAR: typed["event_ts"].cast("timestamp").year().cast("int64"),
    }
    return raw.select(*[raw[c] for c in _bookkeeping(source)], **typed, **written, **timestamps)


def _checks(source: _Source, typed: Any, ordered: bool = True) -> list[tuple[str, Any, str]]:
    """(name, predicate over ``typed`` (:func:`_combined`), message template) for every check.

    Templates are formatted with the offending row's values (``{position}``...) after the
    row is found.
    """
    ibis = _ibis()
    order = [_FILE, _ROW] if source.has_file_column else [_ROW]
    present = set(source.table.columns)
    checks: list[tuple[str, Any, str]] = []

    # Values that are not of their column's type.
    for name, kind in LOG_COLUMNS.items():
        if name not in present:
            continue
        written = typed[f"raw__{name}"]
        bad = written.notnull() & typed[name].isnull()
        if written.type().is_floating():
            bad = bad & ~written.isnan()
        if name == "event_ts":  # epoch numbers too far out: the range check names them
            bad = bad & typed[_TS_SECONDS].isnull()
        checks.append(
            (f"type:{name}", bad, f"{name} {{{name}!r}} is not {_type_name(kind, source.ts_unit)}")
        )
    for name in _NOT_NULL:
        if name in present:
            checks.append(
                (
                    f"empty:{name}",
                    _is_empty(typed[f"raw__{name}"]),
                    f"{name} is empty: every row needs one (it repeats on each impression row "
                    "of a request)",
                )
            )
    query_columns = [c for c in _QUERY_COLUMNS if c in present]
    checks.append(
        (
            "empty:query",
            ibis.and_(*(typed[c].isnull() for c in query_columns)),
            f"{' and '.join(query_columns)} empty: a request needs the query it ran",
        )
    )

    w_request = ibis.window(group_by="request_id", order_by=order)
    w_request_all = ibis.window(group_by="request_id")
    for name in _REQUEST_COLUMNS:
        if name not in present:
            continue
        previous = typed[name].lag().over(w_request)
        first = ibis.row_number().over(w_request) == 0
        checks.append(
            (
                f"request:{name}",
                ~first & ~typed[name].identical_to(previous) & typed.request_id.notnull(),
                f"{name} {{{name}!r}} differs from an earlier row of request "
                f"{{request_id!r}}: request-level columns repeat unchanged on every "
                "impression row of a request",
            )
        )
    has_doc = typed.doc_id.notnull()
    checks += [
        (
            "position:below1",
            typed.position < 1,
            "position {position!r} is below 1: positions are 1-based ranks on the results page",
        ),
        (
            "position:repeated",
            (typed.position.notnull() & typed.request_id.notnull())
            & (
                ibis.row_number().over(
                    ibis.window(group_by=["request_id", "position"], order_by=order)
                )
                > 0
            ),
            "position {position!r} is repeated within request {request_id!r}: each shown "
            "result has its own position",
        ),
        (
            "position:start",
            typed.request_id.notnull()
            & (typed.position.min().over(w_request_all) > 1)
            & (ibis.row_number().over(w_request) == 0),
            "request {request_id!r} starts at position {position!r}: positions start at 1",
        ),
        (
            "doc:no-position",
            has_doc & typed.position.isnull(),
            "doc_id {doc_id!r} has no position: give each shown result its 1-based rank",
        ),
        (
            "doc:no-doc",
            ~has_doc & typed.position.notnull(),
            "position {position!r} has no doc_id: a row is one shown result (only a "
            "no-result request's row has neither)",
        ),
        (
            "doc:missing",
            ~has_doc & (typed.result_count > 0),
            "doc_id is empty but result_count is {result_count!r}: only a no-result request "
            "(result_count 0) has a row without a document",
        ),
        (
            "noresult:doc",
            has_doc & (typed.result_count == 0),
            "result_count is 0 but the row shows doc_id {doc_id!r}: a no-result request has "
            "one row with doc_id and position empty",
        ),
        (
            "noresult:rows",
            (typed.result_count == 0)
            & (ibis.row_number().over(w_request) > 0)
            & typed.request_id.notnull(),
            "no-result request {request_id!r} has more than one row: it is exactly one row "
            "with doc_id and position empty",
        ),
        (
            "click:no-impression",
            typed.clicked & ~has_doc,
            "a click on a row without a document (request {request_id!r}): a click needs an "
            "impression, and a no-result request has none",
        ),
        (
            "negative:result_count",
            typed.result_count < 0,
            "result_count {result_count!r} is negative: it counts the results (0 for none)",
        ),
        (
            "finite:latency_ms",
            _not_finite(typed.latency_ms),
            "latency_ms {latency_ms!r} is not a finite number: it is a duration in milliseconds",
        ),
        (
            "finite:dwell_ms",
            _not_finite(typed.dwell_ms),
            "dwell_ms {dwell_ms!r} is not a finite number: it is a duration in milliseconds "
            "(leave it empty when there was no click)",
        ),
        (
            "negative:latency_ms",
            typed.latency_ms < 0,
            "latency_ms {latency_ms!r} is negative: it is a duration in milliseconds",
        ),
        (
            "negative:dwell_ms",
            typed.dwell_ms < 0,
            "dwell_ms {dwell_ms!r} is negative: it is a duration in milliseconds",
        ),
        (
            "dwell:not-clicked",
            (typed.dwell_ms > 0) & ~typed.clicked,
            "dwell_ms {dwell_ms!r} on a row that was not clicked: dwell is the time on a "
            "clicked document (leave it empty otherwise)",
        ),
        (
            "interleave_team",
            typed.interleave_team.notnull() & ~typed.interleave_team.isin(["A", "B"]),
            "interleave_team {interleave_team!r} is not A or B: it names the ranker that "
            "contributed the shown document",
        ),
    ]
    w_variant = ibis.window(group_by="variant")
    checks.append(
        (
            "variant:one-user",
            typed.variant.notnull()
            & typed.user_id.notnull()
            & (typed.user_id.min().over(w_variant) == typed.user_id.max().over(w_variant)),
            "variant {variant!r} is seen for one user only ({user_id!r}): an A/B arm needs "
            "many users (is the label misspelt?)",
        )
    )
    w_user = ibis.window(group_by="user_id", order_by=order)
    checks.append(
        (
            "user:two-variants",
            typed.user_id.notnull()
            & typed.variant.notnull()
            & (ibis.row_number().over(w_user) > 0)
            & ~typed.variant.identical_to(typed.variant.lag().over(w_user)),
            "user {user_id!r} is in variant {variant!r} here and in another on an earlier "
            "row: users are the randomisation unit, each stays in one variant",
        )
    )
    # Timestamps a person could have logged: epoch numbers in another unit than ts_unit, or a
    # clock that was never set, land decades or millennia away.
    low, high = PLAUSIBLE_YEARS
    seconds = typed[_TS_SECONDS]
    epoch_out = seconds.notnull() & ((seconds < _LOW_SECONDS) | (seconds >= _HIGH_SECONDS))
    unit = _UNIT_WORDS[source.ts_unit]
    checks += [
        (
            "range:epoch",
            epoch_out,
            f"event_ts {{ts_written}} read as {unit} since 1970 is in the year {{ts_year}}, outside "
            f"{low}-{high}: {{ts_hint}}",
        ),
        (
            "range:timestamp",
            ~epoch_out.fill_null(False)
            & typed.event_ts.notnull()
            & ((typed[_TS_YEAR] < low) | (typed[_TS_YEAR] >= high)),
            f"event_ts is in the year {{ts_year}}, outside {low}-{high}: a clock that was not "
            "set, or epoch numbers stored as a timestamp in the wrong unit",
        ),
    ]
    if ordered and source.has_order:
        w_session = ibis.window(group_by="session_id", order_by=order)
        checks.append(
            (
                "time:backwards",
                typed.session_id.notnull()
                & (typed.event_ts < typed.event_ts.lag().over(w_session)),
                "event_ts {event_ts} is earlier than the row before it in session "
                "{session_id!r}: a session's requests are logged in time order; give "
                "ordered=False (--unordered) when the rows are not in time order",
            )
        )
    return checks


def _is_empty(column: Any) -> Any:
    """Whether ``column`` holds no value (SQL NULL). Ibis on PySpark counts a float's NaN as
    null in ``isnull()``; a NaN is a value, reported as not a finite number, not as empty."""
    if column.type().is_floating():
        return column.isnull() & ~column.isnan().fill_null(False)
    return column.isnull()


def _epoch_hint(value: Any, ts_unit: str) -> tuple[int | None, str]:
    """The year that epoch number ``value`` (in ``ts_unit``) gives, and which unit to give
    instead."""
    try:
        seconds = float(value) / TS_UNITS[ts_unit]
    except (TypeError, ValueError):
        return None, "give the unit of the epoch numbers"
    year = int(1970 + seconds // _SECONDS_PER_YEAR)
    for unit, per_second in TS_UNITS.items():
        if unit != ts_unit and _LOW_SECONDS <= float(value) / per_second < _HIGH_SECONDS:
            return year, (
                f"it looks like {_UNIT_WORDS[unit]}; give ts_unit={unit!r} (--ts-unit {unit})"
            )
    return year, "give the unit of the epoch numbers: ts_unit (--ts-unit) s, ms, us or ns"


def _problems(source: _Source, ordered: bool = True) -> list[LogProblem]:
    """The first offending row of every check, in file order (file, row, check)."""
    ibis = _ibis()
    typed = _combined(source)
    checks = _checks(source, typed, ordered)
    # One query per kind of check (the checks over one window share it): measured faster on
    # DuckDB than one query holding every window (check_log on 4.6 million rows: 24 s against
    # 43 s; read_log's validation 15 s against 42 s).
    kinds: dict[str, list[int]] = {}
    for i, (name, _, _) in enumerate(checks):
        kinds.setdefault(name.split(":")[0], []).append(i)
    found: list[dict[str, Any]] = []
    for members in kinds.values():
        marked = typed.mutate(**{f"__check{i}": checks[i][1].fill_null(False) for i in members})
        firsts = {
            f"__first{i}": ibis.ifelse(
                marked[f"__check{i}"], marked[_ROW], ibis.null("int64")
            ).min()
            for i in members
        }
        if source.has_file_column:
            found += marked.group_by(_FILE).aggregate(**firsts).to_pyarrow().to_pylist()
        else:
            found += [
                {**row, _FILE: source.name}
                for row in marked.aggregate(**firsts).to_pyarrow().to_pylist()
            ]
    places: dict[int, tuple[str, int]] = {}
    for group in found:
        for i in range(len(checks)):
            row = group.get(f"__first{i}")
            if row is None:
                continue
            place = (str(group[_FILE]), int(row))
            if i not in places or place < places[i]:
                places[i] = place
    if not places:
        return []
    values = _rows(source, typed, set(places.values()))
    problems = []
    for i, place in places.items():
        template = checks[i][2]
        problems.append(
            (place, i, LogProblem(place[0], place[1], _fill(template, values.get(place, {}))))
        )
    problems.sort(key=lambda item: (item[0], item[1]))
    return [problem for _, _, problem in problems]


def _rows(
    source: _Source, typed: Any, places: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], dict[str, Any]]:
    """The values of the rows at ``places`` (one query), as typed or else as written."""
    ibis = _ibis()
    # Python's datetime holds the years 1 to 9999: a timestamp beyond is shown by its year.
    both = typed.mutate(
        **{
            name: ibis.ifelse(typed[_TS_YEAR].between(1, 9999), typed[name], None)
            for name in ("event_ts", "raw__event_ts")
            if name in typed.columns and typed[name].type().is_timestamp()
        }
    )
    # Spark's rows come back through pandas, where NaN becomes null: which values were NaN
    # is asked of the engine, so that a NaN is shown as nan on every engine.
    floats = [name for name, kind in LOG_COLUMNS.items() if kind == "float64"]
    both = both.mutate(**{f"__nan_{name}": both[name].isnan().fill_null(False) for name in floats})
    wanted = []
    for file, row in places:
        hit = both[_ROW] == row
        if source.has_file_column:
            hit = hit & (both[_FILE] == file)
        wanted.append(hit)
    rows = both.filter(ibis.or_(*wanted)).to_pyarrow().to_pylist()
    result: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        file = str(row[_FILE]) if source.has_file_column else source.name
        values = {name: row[name] for name in LOG_COLUMNS}
        for name in floats:
            if row[f"__nan_{name}"]:
                values[name] = float("nan")
        for name in LOG_COLUMNS:
            # A value that failed its type is shown as it was written.
            if values[name] is None and row.get(f"raw__{name}") is not None:
                values[name] = row[f"raw__{name}"]
        values["ts_year"] = row[_TS_YEAR]
        if row[_TS_SECONDS] is not None:  # epoch numbers: shown as written, and their year
            values["ts_written"] = row.get("raw__event_ts")
            values["ts_year"], values["ts_hint"] = _epoch_hint(row["raw__event_ts"], source.ts_unit)
        result[(file, int(row[_ROW]))] = values
    return result


class _Shown(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return None


def _fill(template: str, values: Mapping[str, Any]) -> str:
    shown = _Shown()
    for name, value in values.items():
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        shown[name] = value
    return template.format_map(shown)
