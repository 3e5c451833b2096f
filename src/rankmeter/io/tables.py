"""Tables with named columns: CSV/TSV with a header, JSONL, Parquet, Arrow, pandas, polars."""

from __future__ import annotations

import csv as _csv_module
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rankmeter.data import Qrels, Run
from rankmeter.data.origin import Origin
from rankmeter.errors import FormatError
from rankmeter.io._json import lone_surrogate
from rankmeter.io._source import Source

QUERY_COLUMNS = ("query_id", "qid", "query-id", "query", "topic_id", "topic")
DOC_COLUMNS = ("doc_id", "docid", "corpus-id", "docno", "doc", "document_id", "pid")
GRADE_COLUMNS = ("relevance", "rel", "grade", "label", "judgment", "score")
SCORE_COLUMNS = ("score", "sim", "similarity")
#: A diversity qrels table's subtopic column (ir_measures calls it iteration)
SUBTOPIC_COLUMNS = ("subtopic", "subtopic_id", "iteration", "iter")
NAME_COLUMNS = ("run", "name", "tag", "system")
RATER_COLUMNS = ("rater", "annotator", "assessor", "judge", "labeler", "labeller", "worker", "user")


def _find(columns: Sequence[str], aliases: Sequence[str]) -> str | None:
    lowered = {c.strip().lower(): c for c in columns}
    for alias in aliases:
        if alias in lowered:
            return lowered[alias]
    return None


def _require(
    columns: Sequence[str],
    aliases: Sequence[str],
    role: str,
    origin: Origin,
    *,
    kind: str | None = None,
) -> str:
    """The column among ``columns`` named by one of ``aliases``, for a ``kind`` of table
    (``"qrels"`` or ``"run"``: a delimited file without a header gets the header it needs)."""
    found = _find(columns, aliases)
    if found is None:
        if isinstance(origin, DelimitedOrigin) and _looks_like_data(columns):
            raise origin.headerless(kind)
        raise origin.error(
            None,
            f"no {role} column: found columns {list(columns)}, expected one of {list(aliases)}",
        )
    if list(columns).count(found) > 1:
        raise origin.error(None, f"column {found!r} appears more than once")
    return found


def qrels_from_table(table: Any, origin: Origin, *, subtopics: bool = False) -> Qrels:
    """Qrels from a table's columns; with ``subtopics`` and a subtopic column (``subtopic``,
    ``iteration``, ...), each row judges a document for one subtopic, as the diversity metrics
    read it (see :meth:`Qrels.from_subtopic_columns`)."""
    names = table.column_names
    q = _require(names, QUERY_COLUMNS, "query id", origin, kind="qrels")
    d = _require(names, DOC_COLUMNS, "doc id", origin, kind="qrels")
    g = _require(names, GRADE_COLUMNS, "relevance", origin, kind="qrels")
    s = _find(names, SUBTOPIC_COLUMNS) if subtopics else None
    if s is not None:
        columns = (table.column(c) for c in (q, s, d, g))
        return Qrels.from_subtopic_columns(*columns, origin=origin)
    return Qrels.from_columns(table.column(q), table.column(d), table.column(g), origin=origin)


def run_from_table(table: Any, origin: Origin, *, name: str | None, ties: str) -> Run:
    names = table.column_names
    q = _require(names, QUERY_COLUMNS, "query id", origin, kind="run")
    d = _require(names, DOC_COLUMNS, "doc id", origin, kind="run")
    s = _require(names, SCORE_COLUMNS, "score", origin, kind="run")
    if name is None:
        name_column = _find(names, NAME_COLUMNS)
        if name_column is not None and table.num_rows:
            name = str(table.column(name_column)[0].as_py())
        else:
            name = "run"
    return Run.from_columns(
        table.column(q), table.column(d), table.column(s), name=name, ties=ties, origin=origin
    )


def arrow_from_pandas(frame: Any) -> Any:
    import pyarrow as pa

    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    # ValueError: repeated names; OverflowError: an integer beyond 64 bits in an object column.
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, OverflowError) as exc:
        raise FormatError("<pandas DataFrame>", f"cannot convert to columns: {exc}") from None


# -- files with named columns --------------------------------------------------------------------
def read_table(source: Source, fmt: str) -> tuple[Any, Origin]:
    """Read a CSV/TSV/JSONL/Parquet source into an Arrow table, with ids kept as strings."""
    if fmt == "parquet":
        return _read_parquet(source), Origin(source.name)
    if fmt == "jsonl":
        return _read_jsonl(source)
    return _read_delimited(source, "," if fmt == "csv" else "\t")


def _read_parquet(source: Source) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(source.data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(source.name, f"not a readable Parquet file ({exc})") from None


def _read_delimited(source: Source, sep: str) -> tuple[Any, Origin]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    lines = source.head().splitlines()
    if not lines or not source.data.strip():
        kind = "CSV" if sep == "," else "TSV"
        raise FormatError(source.name, f"file is empty (a {kind} file starts with a header line)")
    header_line = lines[0].decode("utf-8", errors="replace")
    if sep == "," and "\t" in header_line and "," not in header_line:
        sep = "\t"  # a tab-separated file named .csv: its header says so
    kind = "CSV" if sep == "," else "TSV"
    # The names as Arrow will see them (quotes removed, spaces kept), so that every column is
    # read as text: "007" stays "007" even when the header has spaces after the commas.
    raw_header = next(_csv_module.reader([header_line], delimiter=sep))
    header = [h.strip() for h in raw_header]
    origin = DelimitedOrigin(
        source.name, lambda row: source.nth_row_line(row, skip=1), header_line, sep
    )
    if len(set(header)) != len(header) or not all(header):
        if _looks_like_data(header):
            raise origin.headerless(None)
        raise FormatError(
            source.name, f"{kind} header has empty or repeated names", line=1, text=header_line
        )
    if b'"' in source.data:
        _check_quotes(source, sep, kind)
    try:
        table = csv.read_csv(
            pa.BufferReader(source.data),
            read_options=csv.ReadOptions(use_threads=True),
            parse_options=csv.ParseOptions(delimiter=sep, newlines_in_values=False),
            convert_options=csv.ConvertOptions(
                column_types={h: pa.string() for h in raw_header},
                null_values=[""],
                strings_can_be_null=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError) as exc:
        raise _delimited_error(source, sep, len(header), kind, exc) from None
    table = table.rename_columns([c.strip() for c in table.column_names])
    # Surrounding blanks are not part of an id or a number ("1, d1, 2" reads as "1", "d1", 2).
    for index, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            trimmed = pc.utf8_trim(table.column(index), characters=_BLANKS)
            table = table.set_column(index, field.name, trimmed)
    # Numbers are converted here so that a bad one is reported with its line.
    numeric = {
        c
        for c in (
            _find(table.column_names, GRADE_COLUMNS),
            _find(table.column_names, SCORE_COLUMNS),
        )
        if c is not None
    }
    for column in numeric:
        values = table.column(column)
        ok = pc.match_substring_regex(values, _NUMBER_PATTERN, ignore_case=True)
        ok = pc.fill_null(ok, False)
        if len(values) and not pc.all(ok).as_py():
            import numpy as np

            row = int(np.flatnonzero(~ok.to_numpy(zero_copy_only=False))[0])
            line, text = source.nth_row_line(row, skip=1)
            raise FormatError(
                source.name, f"column {column!r} must hold numbers", line=line, text=text
            )
        converted = pc.cast(values, pa.float64())
        table = table.set_column(table.column_names.index(column), column, converted)
    return table, origin


_BLANKS = " \t\r\n\x0b\x0c"
_NUMBER_PATTERN = r"^\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*$"

#: The header a file without one needs, by kind and number of fields: TREC's layouts
#: (the iteration, Q0 and rank columns are read and ignored), else the three columns needed.
_HEADERS = {
    ("qrels", 4): ("query_id", "iteration", "doc_id", "relevance"),
    ("run", 6): ("query_id", "Q0", "doc_id", "rank", "score", "run"),
    ("qrels", None): ("query_id", "doc_id", "relevance"),
    ("run", None): ("query_id", "doc_id", "score"),
}


class DelimitedOrigin(Origin):
    """The origin of a CSV/TSV file's rows, which also knows its first line and separator:
    when that line holds data instead of column names, the error shows the header to add."""

    __slots__ = ("header_line", "separator")

    def __init__(
        self,
        name: str,
        locate: Callable[[int], tuple[int, str]],
        header_line: str,
        separator: str,
    ) -> None:
        super().__init__(name, locate)
        self.header_line = header_line
        self.separator = separator

    def headerless(self, kind: str | None) -> FormatError:
        """The error for a first line that is data: the header line it needs, as the file
        would spell it (``kind`` None when qrels or run is not known yet)."""
        fields = len(next(_csv_module.reader([self.header_line], delimiter=self.separator)))
        if kind is None:
            # TREC's layouts tell a qrels file (4 fields) from a run (6) by themselves.
            kind = {4: "qrels", 6: "run"}.get(fields)
        if kind is None:
            wanted = (
                f"{self._spelled(_HEADERS['qrels', None])} for qrels or "
                f"{self._spelled(_HEADERS['run', None])} for a run"
            )
        else:
            columns = _HEADERS.get((kind, fields), _HEADERS[kind, None])
            wanted = self._spelled(columns)
        return FormatError(
            self.name,
            f"the first line looks like data, not a header: start the file with the header "
            f"line {wanted}",
            line=1,
            text=self.header_line,
        )

    def _spelled(self, columns: Sequence[str]) -> str:
        if self.separator == ",":
            return ",".join(columns)
        return f"{', '.join(columns)} (separated by tabs)"


def _looks_like_data(names: Sequence[str]) -> bool:
    """A header with a number among its names is a line of data (no id column is named 2)."""
    return any(re.match(_NUMBER_PATTERN, name, flags=re.IGNORECASE) for name in names)


def _check_quotes(source: Source, sep: str, kind: str) -> None:
    """Refuse a quoted value that does not close on its line, naming the line.

    Values may be quoted (``"a,b"``, with ``""`` for a quote inside) but not span lines: Arrow would
    otherwise read an unbalanced quote on to the end of the file, swallowing the lines after
    it, or fail without saying where. Only lines holding a quote are looked at.
    """
    data = source.data
    number = 1  # the line number at ``counted``
    counted = 0
    at = data.find(b'"')
    while at >= 0:
        start = max(data.rfind(b"\n", 0, at), data.rfind(b"\r", 0, at)) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        carriage = data.find(b"\r", at, end)
        end = end if carriage < 0 else carriage
        number += _line_breaks(data, counted, start)
        counted = start
        raw = data[start:end]
        text = raw.decode("utf-8", errors="replace")
        try:
            next(_csv_module.reader([text], delimiter=sep, strict=True))
        except _csv_module.Error as exc:
            # Only a quote that never closes is refused: text after a closing quote
            # ('"senior" engineer') is read as every CSV reader reads it, as it always was.
            if "end of data" in str(exc):
                raise FormatError(
                    source.name,
                    f"unbalanced quote: a quoted {kind} value must end on its own line "
                    '(a " inside it is written "")',
                    line=number,
                    text=text,
                ) from None
        at = data.find(b'"', end)


def _line_breaks(data: bytes, start: int, end: int) -> int:
    """How many lines ``bytes.splitlines`` ends in ``data[start:end]``."""
    count = data.count(b"\n", start, end)
    carriages = data.count(b"\r", start, end)
    if carriages:
        count += carriages - data.count(b"\r\n", start, end)
    return count


def _delimited_error(
    source: Source, sep: str, width: int, kind: str, exc: Exception
) -> FormatError:
    for number, raw in enumerate(source.data.splitlines(), start=1):
        if not raw:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return FormatError(
                source.name,
                "not valid UTF-8",
                line=number,
                text=raw.decode("utf-8", errors="replace"),
            )
        fields = len(next(_csv_module.reader([text], delimiter=sep)))
        if fields != width:
            return FormatError(
                source.name,
                f"expected {width} {kind} fields as in the header, found {fields}",
                line=number,
                text=text,
            )
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FormatError(source.name, f"cannot read {kind}: {reason}")


def _read_jsonl(source: Source) -> tuple[Any, Origin]:
    """JSON lines, one object per line. Parsed line by line so every error names its line."""
    import pyarrow as pa

    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    keys: list[str] | None = None
    for number, raw in enumerate(source.data.splitlines(), start=1):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", errors="replace")
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            msg = getattr(exc, "msg", "invalid text")
            raise FormatError(
                source.name, f"not valid JSON ({msg})", line=number, text=text
            ) from None
        if not isinstance(obj, dict):
            raise FormatError(
                source.name, "expected a JSON object per line", line=number, text=text
            )
        if (lone := lone_surrogate(raw, obj)) is not None:
            raise FormatError(source.name, lone, line=number, text=text)
        if keys is None:
            keys = list(obj)
        rows.append(obj)
        lines.append(number)
    if keys is None:
        raise FormatError(source.name, "file is empty")
    origin = Origin(source.name, lambda row: (lines[row], source.line(lines[row])))
    columns: dict[str, list[Any]] = {k: [] for k in keys}
    for index, obj in enumerate(rows):
        for k in keys:
            if k not in obj:
                raise origin.error(index, f"missing key {k!r}")
            columns[k].append(obj[k])
    arrays = {}
    for k, values in columns.items():
        arrays[k] = _json_column(values, k, origin)
    return pa.table(arrays), origin


def _json_column(values: list[Any], key: str, origin: Origin) -> Any:
    import pyarrow as pa

    if all(isinstance(v, str) for v in values):
        return pa.array(values, type=pa.string())
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        if all(isinstance(v, int) for v in values) and _looks_like_id(key):
            return pa.array([str(v) for v in values], type=pa.string())
        return _json_floats(values, key, origin)
    for row, v in enumerate(values):
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise origin.error(row, f"key {key!r} must be a string or a number, not {json_type(v)}")
    # A mix of strings and numbers: ids become strings; numeric keys report the bad value.
    if _looks_like_id(key):
        return pa.array([str(v) for v in values], type=pa.string())
    for row, v in enumerate(values):
        if isinstance(v, str):
            raise origin.error(row, f"key {key!r} must be a number, not {v!r}")
    return _json_floats(values, key, origin)


def json_type(value: Any) -> str:
    """What JSON calls the type of a parsed value (for messages: null, not NoneType)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _json_floats(values: list[Any], key: str, origin: Origin) -> Any:
    import pyarrow as pa

    floats = []
    for row, v in enumerate(values):
        try:
            floats.append(float(v))
        except OverflowError:  # an integer beyond the range of doubles
            raise origin.error(row, f"key {key!r} holds a number too large for a double") from None
    return pa.array(floats, type=pa.float64())


def _looks_like_id(key: str) -> bool:
    k = key.strip().lower()
    return k in QUERY_COLUMNS or k in DOC_COLUMNS or k in NAME_COLUMNS or k in RATER_COLUMNS


# -- data frames ---------------------------------------------------------------------------------
def frame_table(value: Any) -> tuple[Any, Origin] | None:
    """An Arrow table and its origin for a pandas or polars DataFrame or an Arrow table (by the
    object's module: neither pandas nor polars is imported); None for anything else."""
    kind = _frame_kind(value)
    if kind == "pandas":
        return arrow_from_pandas(value), Origin("<pandas DataFrame>")
    if kind == "polars":
        return value.to_arrow(), Origin("<polars DataFrame>")
    if kind == "arrow":
        return value, Origin("<arrow table>")
    return None


def _frame_kind(value: Any) -> str | None:
    module = type(value).__module__.split(".")[0]
    if module == "pandas" and hasattr(value, "columns"):
        return "pandas"
    if module == "polars" and hasattr(value, "to_arrow"):
        return "polars"
    if module == "pyarrow" and hasattr(value, "column_names"):
        return "arrow"
    return None


#: The extensions dropped from a file name to name the run in it (``run.trec.gz`` -> ``run``).
RUN_EXTENSIONS = (".gz", ".trec", ".run", ".txt", ".tsv", ".csv", ".jsonl", ".parquet")


def default_run_name(path: str) -> str:
    """The name of a run read from ``path`` that names itself nowhere inside: the file name
    without its extensions, however many (``dense.run.csv.gz`` -> ``dense``).

    >>> default_run_name("runs/dense.run.csv.gz")
    'dense'
    """
    p = Path(path)
    name = p.name
    while True:
        suffix = next((s for s in RUN_EXTENSIONS if name.lower().endswith(s)), None)
        if suffix is None or len(name) == len(suffix):
            break
        name = name[: -len(suffix)]
    return name or p.name
