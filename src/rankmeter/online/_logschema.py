"""The search-log schema (docs/online.md, "Search logs"): its columns and their types, the
columns a log must have, how a column as written is typed in the engine, and the relation
every check of :mod:`rankmeter.online._logchecks` is an expression over.

One row is one impression (one shown result), aligned with OpenSearch's User Behavior Insights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rankmeter.errors import FormatError, PolicyError

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
# Bookkeeping columns added where the rows are read (names no log uses).
_ROW = "__rankmeter_row"
_FILE = "__rankmeter_file"
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


#: How messages name a column's type; a timestamp's names the unit of its epoch numbers.
_TYPE_NAMES = {
    "int64": "an integer",
    "float64": "a number",
    "boolean": "0, 1, true or false",
    "string": "text",
}
_TIMESTAMP_NAME = "a timestamp (ISO 8601 text, or {units} since 1970)"


def _type_name(kind: str, ts_unit: str = "s") -> str:
    return _TYPE_NAMES.get(kind) or _TIMESTAMP_NAME.format(units=_UNIT_WORDS[ts_unit])


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
