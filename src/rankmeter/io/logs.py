"""Search-log files: the format a log's name says, its files (one, or a folder of Parquet), CSV
and JSONL text read into Arrow with the file line of every row, and the writer.

A log's rows are checked and typed above this layer (:mod:`rankmeter.online`, in an engine);
here the files are read as they are, ids and timestamps of CSV kept as text, and every error
of a file names the path, and for a bad line its number and text, as io's other readers do.
Parquet is read by the engine that checks the log (it scans the files where they lie): this
module says which files, and how an unreadable one is named (:func:`log_read_error`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankmeter.errors import FormatError, PolicyError
from rankmeter.io._json import lone_surrogate

__all__ = [
    "LOG_SOURCES",
    "LOG_SUFFIXES",
    "LogFiles",
    "log_files",
    "log_format",
    "log_read_error",
    "read_log_text",
    "write_log_file",
]

#: The suffixes of log files and the format each names.
LOG_SUFFIXES: Mapping[str, str] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
#: What a log may be given as, for the messages that refuse something else.
LOG_SOURCES = "give a .parquet, .csv or .jsonl file, a folder of .parquet files, or a table"


def log_format(path: str | os.PathLike[str]) -> str:
    """The format a log file's name says, as :func:`rankmeter.online.read_log` reads it:
    ``"parquet"`` (``.parquet``, ``.pq``), ``"csv"`` or ``"jsonl"`` (``.jsonl``, ``.ndjson``,
    ``.json``).

    Raises
    ------
    PolicyError
        A name with another suffix (or none): the log would be written in a format that
        no reader of logs would take for what it is.
    """
    suffix = Path(path).suffix
    kind = LOG_SUFFIXES.get(suffix.lower())
    if kind is None:
        said = f"its suffix {suffix!r} names none" if suffix else "it has no suffix"
        raise PolicyError(
            f"{os.fspath(path)}: a log's name says its format, and {said}: "
            "end it in .parquet, .csv or .jsonl"
        )
    return kind


@dataclass(frozen=True)
class LogFiles:
    """A log on disk: its name, its format and its files.

    Attributes
    ----------
    name : str
        The path as given (a file or a folder).
    kind : str
        ``"parquet"``, ``"csv"`` or ``"jsonl"``.
    files : tuple of Path
        The file itself, or a folder's ``.parquet`` files in name order.
    is_folder : bool
        Whether the log is a folder of Parquet files (each row then names its file).
    """

    name: str
    kind: str
    files: tuple[Path, ...]
    is_folder: bool


def log_files(path: str | os.PathLike[str]) -> LogFiles:
    """The files of the log at ``path``: a file whose suffix names its format
    (:data:`LOG_SUFFIXES`), or a folder of ``.parquet`` files.

    Raises
    ------
    FormatError
        A path that does not exist, a folder without Parquet files, or a file whose suffix
        names no log format.
    """
    path = Path(path)
    name = str(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".parquet", ".pq"))
        if not files:
            raise FormatError(name, f"the folder holds no .parquet files: {LOG_SOURCES}")
        return LogFiles(name, "parquet", tuple(files), is_folder=True)
    if not path.exists():
        raise FormatError(name, "no such file: give the path of a search log")
    kind = LOG_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise FormatError(
            name, f"cannot tell the log's format from the suffix {path.suffix!r}: {LOG_SOURCES}"
        )
    return LogFiles(name, kind, (path,), is_folder=False)


def log_read_error(name: str, kind: str, exc: BaseException) -> FormatError:
    """The error for a log file that cannot be read as ``kind`` (what the reader said, on one
    line): one wording for every format and engine."""
    reason = " ".join(str(exc).split())
    return FormatError(name, f"cannot read it as {_kind_name(kind)}: {reason}")


def _kind_name(kind: str) -> str:
    """How messages name a log format: ``"parquet"`` -> ``"Parquet"``, ``"csv"`` -> ``"CSV"``."""
    return "Parquet" if kind == "parquet" else kind.upper()


def read_log_text(path: str | os.PathLike[str], kind: str, text_columns: Iterable[str]) -> Any:
    """A CSV or JSONL log file as an Arrow table, and the file line of each row.

    Parameters
    ----------
    path : path
        The file.
    kind : {"csv", "jsonl"}
        Its format (:func:`log_files`).
    text_columns : iterable of str
        Columns that are text whatever they hold: ids (``"007"`` is not 7) and, for CSV, the
        timestamps, which are parsed where the log is checked, so that a bad one is a problem
        at its row rather than a reader's error.

    Returns
    -------
    (pyarrow.Table, numpy.ndarray)
        The rows as written (an empty field, ``NULL`` or ``null`` is missing in CSV; ``nan`` is
        a value) and the int64 file line where each row starts (CSV's header is line 1; blank
        lines and fields over several lines are counted). An empty file, in either format, is
        a table without columns.

    Raises
    ------
    FormatError
        Text that is not UTF-8, a JSONL line that is not a JSON object or a CSV record with
        more or fewer fields than the header, naming the line and its text; anything else the
        reader refuses (``cannot read it as CSV: ...``).
    """
    import pyarrow as pa

    path = Path(path)
    columns = tuple(text_columns)
    try:
        data = path.read_bytes()
        if kind == "csv":
            return _read_csv(path, data, columns, pa)
        return _read_jsonl(path, data, columns, pa)
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
        raise log_read_error(str(path), kind, exc) from None


def _read_csv(path: Path, data: bytes, text_columns: tuple[str, ...], pa: Any) -> Any:
    import io

    import numpy as np
    from pyarrow import csv

    if not data.strip():
        # No header, no columns: as an empty JSONL file, the log's check names what is missing.
        return pa.table({}), np.empty(0, np.int64)
    # Empty (or NULL) is missing; "nan" is not: Arrow would read it as missing by default, and
    # a NaN dwell or latency must be reported, not taken for "no value".
    try:
        table = csv.read_csv(
            io.BytesIO(data),
            convert_options=csv.ConvertOptions(
                column_types={name: pa.string() for name in text_columns},
                null_values=["", "NULL", "null"],
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        _require_utf8(path, data)
        _require_fields(path, data)
        raise
    if any(pa.types.is_binary(column.type) for column in table.columns):
        _require_utf8(path, data)  # Arrow reads a column that is not UTF-8 as bytes
    return table, _csv_lines(data, table.num_rows)


def _require_utf8(path: Path, data: bytes) -> None:
    """A file that is not UTF-8 is named with the line of its first foreign byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        text = data[start : len(data) if end < 0 else end].rstrip(b"\r")
        raise FormatError(
            str(path),
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}): save the log as UTF-8",
            line=data.count(b"\n", 0, exc.start) + 1,
            text=text.decode("utf-8", errors="replace"),
        ) from None


def _require_fields(path: Path, data: bytes) -> None:
    """A CSV record with more or fewer fields than the header is named with its line and
    text, as io's CSV reader names it (Arrow's message names neither)."""
    import csv
    import io

    text = data.decode("utf-8")
    lines = io.StringIO(text, newline="").readlines()
    reader = csv.reader(io.StringIO(text, newline=""))
    width, read = None, 0
    try:
        for record in reader:
            start, read = read + 1, reader.line_num
            if not record:
                continue
            if width is None:
                width = len(record)
            elif len(record) != width:
                raise FormatError(
                    str(path),
                    f"expected {width} CSV fields as in the header, found {len(record)}",
                    line=start,
                    text=lines[start - 1].rstrip("\r\n"),
                )
    except csv.Error:  # what Python's reader refuses too: Arrow's message stands
        return


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
        return np.asarray(lines[1:], dtype=np.int64)
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
    return np.arange(2, rows + 2, dtype=np.int64)  # the header is line 1: row n is line n + 1


def _read_jsonl(path: Path, data: bytes, text_columns: tuple[str, ...], pa: Any) -> Any:
    import io

    import numpy as np
    from pyarrow import json

    # Arrow's JSON reader passes bytes that are not UTF-8 into its string columns, which
    # fail only later, when a value is decoded: refuse them here, at their line.
    _require_utf8(path, data)
    numbers: Any
    try:
        table = json.read_json(io.BytesIO(data))
    except pa.ArrowInvalid:
        # A broken line, a lone surrogate ("\ud800") or a value whose type changes (a number,
        # then text): read by Python, so that the line is named and a wrong value is a problem
        # of its column.
        table, numbers = _read_jsonl_by_lines(path, data, pa)
    else:
        # Blank lines hold no record: number the records by the lines that do.
        lines = data.split(b"\n")
        numbers = np.flatnonzero([bool(line.strip()) for line in lines]) + 1
        if len(numbers) != table.num_rows:  # a record over several lines: count records
            numbers = np.arange(1, table.num_rows + 1)
    for column in text_columns:
        if column in table.column_names and not pa.types.is_string(table[column].type):
            index = table.column_names.index(column)
            table = table.set_column(index, column, table[column].cast(pa.string()))
    return table, np.asarray(numbers, dtype=np.int64)


def _read_jsonl_by_lines(path: Path, data: bytes, pa: Any) -> tuple[Any, list[int]]:
    """JSONL read line by line: the table (a column whose values are of several JSON types
    becomes text, checked by its column's type where the log is checked) and each record's
    line."""
    import json

    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(
                str(path),
                f"not a JSON object: {exc.msg} (column {exc.colno})",
                line=number,
                text=line.rstrip("\r"),
            ) from None
        if not isinstance(record, dict):
            raise FormatError(
                str(path),
                "not a JSON object: each line holds one record, {...}",
                line=number,
                text=line.rstrip("\r"),
            )
        if (lone := lone_surrogate(line, record)) is not None:
            raise FormatError(str(path), lone, line=number, text=line.rstrip("\r"))
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


# --- writing ----------------------------------------------------------------------------------


def write_log_file(log: Any, path: str | os.PathLike[str]) -> None:
    """Write a log (a pyarrow Table) in the format its name says (:func:`log_format`):
    Parquet; CSV with a header (an empty field is a missing value, timestamps in ISO 8601
    with their zone); or JSONL, one object a line. The file is replaced only when the whole
    log is written (:func:`rankmeter.io.atomic_write`).

    Raises
    ------
    PolicyError
        A name whose suffix names no log format.
    FormatError
        A target that cannot be written.
    """
    kind = log_format(path)
    from rankmeter.io._atomic import atomic_write

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
