"""TREC qrels (``qid iter docid grade``) and run (``qid Q0 docid rank score tag``) files.

The fast path is Arrow's multi-threaded CSV reader with a single-space delimiter. Anything it
rejects (tabs, repeated spaces, a bad line) goes to a line-by-line reader that splits on ASCII
whitespace like trec_eval and reports the first bad line exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rankmeter.data import Qrels, Run
from rankmeter.data._columns import Origin
from rankmeter.errors import FormatError
from rankmeter.io._source import Source

_NUMBER = re.compile(
    rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE
)


@dataclass(frozen=True)
class _Layout:
    kind: str
    columns: tuple[str, ...]
    numeric: str  # the column holding a number
    keep: tuple[str, ...]

    @property
    def usage(self) -> str:
        return " ".join(self.columns)


QRELS_LAYOUT = _Layout(
    "qrels", ("qid", "iter", "docid", "grade"), "grade", ("qid", "docid", "grade")
)
RUN_LAYOUT = _Layout(
    "run", ("qid", "Q0", "docid", "rank", "score", "tag"), "score", ("qid", "docid", "score")
)


def read_trec_qrels(source: Source) -> Qrels:
    columns = _read(source, QRELS_LAYOUT)
    return Qrels.from_columns(
        columns["qid"], columns["docid"], columns["grade"], origin=_origin(source, columns)
    )


def read_trec_run(source: Source, *, name: str | None, ties: str) -> Run:
    columns = _read(source, RUN_LAYOUT)
    if name is None:
        # The tag of the first line names the run, as trec_eval's runid.
        name = _first_tag(source.head()) or _first_tag(source.data) or "run"
    origin = _origin(source, columns)
    # Popped, so each column can be freed as soon as the Run has taken what it needs.
    return Run.from_columns(
        columns.pop("qid"),
        columns.pop("docid"),
        columns.pop("score"),
        name=name,
        ties=ties,
        origin=origin,
    )


def _first_tag(data: bytes) -> str | None:
    for line in data.splitlines():
        fields = line.split()
        if fields:
            return fields[-1].decode("utf-8", errors="replace")
    return None


def _origin(source: Source, columns: dict[str, Any]) -> Origin:
    lines = columns.get("_lines")
    if lines is not None:
        return Origin(source.name, lambda row: (lines[row], source.line(lines[row])))
    return Origin(source.name, source.nth_row_line)


def _read(source: Source, layout: _Layout) -> dict[str, Any]:
    fast = source.fast_input()
    if fast is not None:
        try:
            return _read_fast(fast, layout)
        except Exception:  # any failure goes to the exact line-by-line reader
            pass
    return _read_exact(source, layout)


def _read_fast(data: bytes | str, layout: _Layout) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.csv as csv

    table = csv.read_csv(
        pa.BufferReader(data) if isinstance(data, bytes) else data,
        **arrow_csv_options(layout),
    )
    return {c: table.column(c) for c in layout.keep}


def arrow_csv_options(layout: _Layout, *, block_size: int | None = None) -> dict[str, Any]:
    """Arrow CSV options that read a TREC file as trec_eval splits it when the columns are
    separated by single spaces: no quoting, no nulls, ids kept as text, only ``layout.keep``
    converted. Shared by the whole-file reader and the streaming one."""
    import pyarrow as pa
    import pyarrow.csv as csv

    types = {c: (pa.float64() if c == layout.numeric else pa.string()) for c in layout.keep}
    read = csv.ReadOptions(column_names=list(layout.columns), use_threads=True)
    if block_size is not None:
        read.block_size = block_size
    return {
        "read_options": read,
        "parse_options": csv.ParseOptions(
            delimiter=" ",
            quote_char=False,
            double_quote=False,
            escape_char=False,
            newlines_in_values=False,
            ignore_empty_lines=True,
        ),
        "convert_options": csv.ConvertOptions(
            column_types=types,
            include_columns=list(layout.keep),
            null_values=[],
            true_values=[],
            false_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        ),
    }


def column_count_problem(fields: list[bytes], layout: _Layout) -> str | None:
    """Why a line's fields do not fit the layout, or None."""
    width = len(layout.columns)
    if len(fields) == width:
        return None
    return (
        f"expected {width} columns ({layout.usage}) in a TREC {layout.kind} file, "
        f"found {len(fields)}"
    )


def _read_exact(source: Source, layout: _Layout) -> dict[str, Any]:
    positions = {c: layout.columns.index(c) for c in layout.keep}
    numeric_at = positions[layout.numeric]
    out: dict[str, list[Any]] = {c: [] for c in layout.keep}
    lines: list[int] = []
    for number, raw in enumerate(source.data.splitlines(), start=1):
        fields = raw.split()
        if not fields:
            continue

        def fail(reason: str, raw: bytes = raw, number: int = number) -> FormatError:
            return FormatError(
                source.name, reason, line=number, text=raw.decode("utf-8", errors="replace")
            )

        problem = column_count_problem(fields, layout)
        if problem is not None:
            raise fail(problem)
        token = fields[numeric_at]
        if not _NUMBER.fullmatch(token):
            raise fail(f"{layout.numeric} must be a number, not {_text(token)!r}")
        for column, at in positions.items():
            if at == numeric_at:
                out[column].append(float(token))
                continue
            try:
                out[column].append(fields[at].decode("utf-8"))
            except UnicodeDecodeError:
                raise fail(f"{column} is not valid UTF-8") from None
        lines.append(number)
    if not lines:
        raise FormatError(source.name, "file is empty")
    result: dict[str, Any] = dict(out)
    result["_lines"] = lines
    return result


def _text(token: bytes) -> str:
    return token.decode("utf-8", errors="replace")
