"""Search logs: read one (Parquet, CSV, JSONL, a folder of Parquet, an in-memory table) as a
typed Ibis table, check it against the log schema (docs/online.md, "Search logs"), write one.

One row is one impression (one shown result), aligned with OpenSearch's User Behavior Insights.
Every check is an Ibis expression run in the engine (DuckDB or Spark, :mod:`rankmeter.engines`):
only the first offending row of each problem and the per-variant counts come back to Python.
The schema is :mod:`._logschema`, the checks (one rule object each) :mod:`._logchecks`, and
the files are read and written by :mod:`rankmeter.io.logs`; this module is the entry points
and the step from a file or a table to the engine.

Rows are numbered where they are read, so that a problem names the line a person can open:
the file line for CSV (the header is line 1) and JSONL, the 1-based data row for Parquet and for
in-memory tables (pyarrow, pandas, polars). An Ibis table has no order of its own: its rows are
numbered in the order the engine returns them.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from rankmeter.errors import PolicyError
from rankmeter.io.logs import (
    LOG_SOURCES,
    LogFiles,
    log_files,
    log_format,
    log_read_error,
    read_log_text,
    write_log_file,
)
from rankmeter.online._logchecks import (
    LogCheck,
    LogProblem,
    VariantCounts,
    count_log,
    find_problems,
)
from rankmeter.online._logschema import (
    _FILE,
    _ROW,
    _STRINGS,
    LOG_COLUMNS,
    REQUIRED_COLUMNS,
    TS_UNITS,
    _bookkeeping,
    _ibis,
    _missing_columns,
    _missing_message,
    _require_columns,
    _Source,
    _typed,
)

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
        found = find_problems(source, ordered)
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
    problems = find_problems(source, ordered)
    rows, variants, experiments = count_log(_typed(source))
    return LogCheck(
        source=source.name,
        engine=backend_name,
        rows=rows,
        variants=variants,
        problems=tuple(problems),
        experiments=experiments,
    )


def _backend_name(table: Any, engine_name: Any) -> str:
    try:
        backend = table._find_backend(use_default=True)
    except Exception:  # an unbound table: it runs on Ibis' default backend, DuckDB
        return "duckdb"
    return str(engine_name(backend))


# --- writing ----------------------------------------------------------------------------------


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
    write_log_file(log, path)


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
        return replace(_read_path(log_files(log), backend), ts_unit=ts_unit)
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
        f"log={type(log).__name__} cannot be read as a search log: {LOG_SOURCES} "
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


def _read_path(files: LogFiles, backend: Any) -> _Source:
    """A log on disk in the engine: Parquet scanned there, CSV and JSONL read into Arrow
    (:func:`rankmeter.io.logs.read_log_text`) and handed to it with their lines."""
    if files.kind == "parquet":
        return _read_parquet(files, backend)
    import pyarrow as pa

    text_columns = (*_STRINGS, "event_ts") if files.kind == "csv" else _STRINGS
    table, lines = read_log_text(files.files[0], files.kind, text_columns)
    table = table.append_column(_ROW, pa.array(lines, pa.int64()))
    return _Source(_memtable(backend, table), files.name, has_file_column=False)


def _read_parquet(files: LogFiles, backend: Any) -> _Source:
    paths = [str(f) for f in files.files]
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
        raise log_read_error(files.name, "parquet", exc) from None
    if not files.is_folder:
        return _Source(table.drop(_FILE), files.name, has_file_column=False)
    return _Source(table, files.name, has_file_column=True)


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
