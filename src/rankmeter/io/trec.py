"""TREC qrels (``qid iter docid grade``) and run (``qid Q0 docid rank score tag``) files.

What is read follows trec_eval's readers (``get_qrels.c``, ``get_trec_results.c``):

- fields are separated by ASCII whitespace; blank and whitespace-only lines are skipped;
- qrels: a line that starts with ``#`` is a comment (a ``#`` further on, as in the doc id
  ``CR#93E-1860``, is text); a line needs exactly four fields;
- runs: a line whose first non-blank character is ``#`` is a comment; a line needs at least six
  fields, and any after the sixth (the run tag) are ignored.

The fast path is Arrow's multi-threaded CSV reader with a single-space delimiter, on the file
with its comment lines emptied (when it has any: a ``#`` is looked for first, at the speed of a
memory scan). A file Arrow rejects is read again in pieces of whole lines (the streaming reader
reads every file so): each piece by Arrow where it can, and where it cannot (runs of blanks,
fields after the tag, a bad line) by an exact line-by-line reader that splits like trec_eval
and reports the first bad line.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from rankmeter._validate import number_text
from rankmeter.data import Qrels, Run
from rankmeter.data.origin import Origin
from rankmeter.data.scan import scan_run_piece
from rankmeter.errors import FormatError, PolicyError
from rankmeter.io._source import _BOM, Source, loose_blanks, split_lines

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


#: A diversity qrels file: the second column is the subtopic (as ndeval reads it).
SUBTOPIC_QRELS_LAYOUT = _Layout(
    "qrels", QRELS_LAYOUT.columns, "grade", ("qid", "iter", "docid", "grade")
)


def read_trec_qrels(source: Source, *, subtopics: bool = False) -> Qrels:
    """A TREC qrels file; with ``subtopics``, its second column is each line's subtopic (see
    :meth:`Qrels.from_subtopic_columns`), read only then (ordinary qrels skip it)."""
    if subtopics:
        columns = _read(source, SUBTOPIC_QRELS_LAYOUT)
        origin = _origin(source, columns, SUBTOPIC_QRELS_LAYOUT)
        return Qrels.from_subtopic_columns(
            columns.pop("qid"),
            columns.pop("iter"),
            columns.pop("docid"),
            columns.pop("grade"),
            origin=origin,
        )
    columns = _read(source, QRELS_LAYOUT)
    origin = _origin(source, columns, QRELS_LAYOUT)
    # Popped, so each column can be freed as soon as the Qrels has taken what it needs.
    return Qrels.from_columns(
        columns.pop("qid"), columns.pop("docid"), columns.pop("grade"), origin=origin
    )


#: The run's columns as written, rank included (as text: trec_eval never reads it), for
#: :func:`read_trec_run_columns`.
RUN_ROWS_LAYOUT = _Layout("run", RUN_LAYOUT.columns, "score", ("qid", "docid", "rank", "score"))
#: The same without the doc ids (for the checks that need only the order: less to read).
RUN_ORDER_LAYOUT = _Layout("run", RUN_LAYOUT.columns, "score", ("qid", "rank", "score"))


def read_trec_run(source: Source, *, name: str | None, ties: str) -> Run:
    columns = _read(source, RUN_LAYOUT)
    if name is None:
        name = _run_name(source, columns)
    origin = _origin(source, columns, RUN_LAYOUT)
    # Popped, so each column can be freed as soon as the Run has taken what it needs.
    return Run.from_columns(
        columns.pop("qid"),
        columns.pop("docid"),
        columns.pop("score"),
        name=name,
        ties=ties,
        origin=origin,
    )


def read_trec_run_columns(
    source: Source, *, docs: bool = True
) -> tuple[dict[str, Any], Origin, str]:
    """A run file's columns as written (``qid``, ``docid`` unless ``docs`` is False, ``rank``
    as text, ``score``), the origin of its rows and the run's name (its tag): read as
    :func:`read_trec_run` reads it, without building the Run (so repeated results are kept,
    to be counted)."""
    layout = RUN_ROWS_LAYOUT if docs else RUN_ORDER_LAYOUT
    columns = _read(source, layout)
    name = _run_name(source, columns)
    origin = _origin(source, columns, layout)
    columns.pop("_rows", None)
    return columns, origin, name


def _run_name(source: Source, columns: dict[str, Any]) -> str:
    """The tag of the first data line (not a comment; however long): from the first piece
    read, or from the file read again where Arrow read it whole."""
    rows = columns.get("_rows")
    if rows is not None:
        return rows.spans[0][0].tag() or "run"
    return run_tag(source.first_line(lambda line: is_row(line, RUN_LAYOUT))) or "run"


def trec_run_tag(name: str) -> str:
    """The tag a run named ``name`` is written under (TREC's sixth field): its whitespace as
    underscores (TREC splits fields on it), ``run`` for no name. Other characters are kept as
    they are, as the ids in the same lines are: a written run is data, byte-exact in files and
    pipes; a terminal is where rankmeter shows control characters as visible escapes.

    >>> trec_run_tag("rrf(a b+stem)")
    'rrf(a_b+stem)'
    """
    return "".join("_" if c.isspace() else c for c in name) or "run"


def trec_run_lines(run: Run) -> Iterator[str]:
    """The run's lines in TREC format (``qid Q0 docid rank score tag``), queries in natural
    order, each result at its rank under the run's tie policy; the score as Python's repr
    writes it (it reads back to the same float), whitespace in the name as underscores (:func:`trec_run_tag`)."""
    table = run.to_arrow()
    tag = trec_run_tag(run.name)
    for q, d, r, s in zip(
        table.column("query_id").to_pylist(),
        table.column("doc_id").to_pylist(),
        table.column("rank").to_pylist(),
        table.column("score").to_pylist(),
        strict=True,
    ):
        yield f"{q} Q0 {d} {r} {s!r} {tag}\n"


#: What an id must be to be written in a TREC qrels or run line (the words of every error
#: that refuses one).
TREC_ID_RULE = "ids must be non-empty and hold no whitespace"


def trec_id_writable(value: str) -> bool:
    """Whether ``value`` can be a query or doc id of a TREC line: non-empty, without
    whitespace (TREC splits fields on it). The one test every writer and every early check
    (``label``'s pool, ``clicks labels``' log) applies.

    >>> trec_id_writable("d1"), trec_id_writable("a b"), trec_id_writable("")
    (True, False, False)
    """
    return bool(value) and not any(c.isspace() for c in value)


def trec_qrels_lines(qrels: Qrels) -> Iterator[str]:
    """The qrels' lines in TREC format (``qid 0 docid grade``), queries in natural order, each
    query's documents as the Qrels hold them; a whole grade without a decimal point. An id
    with whitespace cannot be written (TREC splits fields on it): an error naming it."""
    for q, d, g in qrels:
        for name, value in (("query", q), ("doc", d)):
            if not trec_id_writable(value):
                raise PolicyError(
                    f"{name} id {value!r} cannot be written as TREC qrels: {TREC_ID_RULE}"
                )
        yield f"{q} 0 {d} {number_text(g)}\n"


def run_tag(line: bytes | None) -> str | None:
    """The run tag (sixth field) of a run line, or None."""
    fields = line.split() if line else []
    if len(fields) < len(RUN_LAYOUT.columns):
        return None
    return fields[len(RUN_LAYOUT.columns) - 1].decode("utf-8", errors="replace")


def is_comment(line: bytes, layout: _Layout) -> bool:
    """Whether trec_eval skips ``line`` as a comment: in qrels a line that starts with ``#``,
    in a run a line whose first non-blank character is ``#``."""
    if layout.kind == "qrels":
        return line.startswith(b"#")
    return line.lstrip().startswith(b"#")


def is_row(line: bytes, layout: _Layout) -> bool:
    """Whether ``line`` holds data: neither blank nor a comment."""
    return bool(line.strip()) and not is_comment(line, layout)


def blank_comments(data: bytes, layout: _Layout) -> bytes:
    """``data`` with every comment line emptied, its line break kept (so every other line
    keeps its number, and Arrow skips the empty line); ``data`` itself when it has none.

    One scan for ``#`` at the speed of ``bytes.find``; a line is looked at only where it
    holds a ``#``.
    """
    kept: list[bytes] = []
    start = 0  # where the part not yet kept begins
    at = data.find(b"#")
    while at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        line_start = data.rfind(b"\r", line_start, at) + 1 or line_start
        before = data[line_start:at]
        if before == b"" or (layout.kind == "run" and not before.strip()):
            line_end = data.find(b"\n", at)
            line_end = len(data) if line_end < 0 else line_end
            carriage = data.find(b"\r", at, line_end)
            line_end = line_end if carriage < 0 else carriage
            kept.append(data[start:line_start])
            start = line_end
            at = data.find(b"#", line_end)
        else:
            at = data.find(b"#", at + 1)
    if not kept:
        return data
    kept.append(data[start:])
    return b"".join(kept)


def _origin(source: Source, columns: dict[str, Any], layout: _Layout) -> Origin:
    rows = columns.get("_rows")
    if rows is not None:
        return Origin(source.name, rows.locate)
    return Origin(
        source.name, lambda row: source.nth_row_line(row, is_row=lambda x: is_row(x, layout))
    )


def _read(source: Source, layout: _Layout) -> dict[str, Any]:
    """The kept columns: by Arrow on the whole file where it can, else piece by piece."""
    path = source.arrow_path()
    if path is not None:
        try:
            return _read_fast(path, layout)
        except Exception:  # read again piece by piece, each by Arrow or the exact reader
            pass
    return _read_in_pieces(source, layout)


def _read_in_pieces(source: Source, layout: _Layout) -> dict[str, Any]:
    """The kept columns, each piece parsed by Arrow where it can and by the exact reader where
    it cannot (a field after the tag on one line sends only its piece there), and ``_rows``,
    where each row came from."""
    import pyarrow as pa

    options = arrow_csv_options(layout, block_size=BLOCK_SIZE)
    tables = []
    rows = Rows()
    text = False  # whether anything but blanks was read
    for piece in pieces(source, layout, PIECE_BYTES):
        table = parse_piece(piece, source.name, options)
        piece.forget()
        if table.num_rows:
            tables.append(table)
            rows.add(piece, table.num_rows)
        text = text or piece.has_text
    if not tables:
        raise FormatError(source.name, NO_DATA if text else "file is empty")
    table = pa.concat_tables(tables)
    columns: dict[str, Any] = {c: table.column(c) for c in layout.keep}
    columns["_rows"] = rows
    return columns


def _read_fast(path: str, layout: _Layout) -> dict[str, Any]:
    import pyarrow.csv as csv

    table = csv.read_csv(path, **arrow_csv_options(layout))
    if not table.num_rows:
        raise ValueError("no rows: read in pieces, which says why")
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
    """Why a line's fields do not fit the layout, or None. A run line may have fields after
    the tag (trec_eval ignores them); a qrels line has exactly four."""
    width = len(layout.columns)
    if len(fields) == width or (layout.kind == "run" and len(fields) > width):
        return None
    return (
        f"expected {width} columns ({layout.usage}) in a TREC {layout.kind} file, "
        f"found {len(fields)}"
    )


#: The error for a file that holds only comments (and blank lines).
NO_DATA = "no data lines, only comments"


def parse_lines(
    numbered: Iterable[tuple[int, bytes]], name: str, layout: _Layout
) -> dict[str, Any]:
    """The exact reader: the kept columns of the numbered lines as lists, and ``_lines``, the
    line number of each row. The first bad line raises a FormatError naming it."""
    positions = {c: layout.columns.index(c) for c in layout.keep}
    numeric_at = positions[layout.numeric]
    out: dict[str, list[Any]] = {c: [] for c in layout.keep}
    lines: list[int] = []
    for number, raw in numbered:
        fields = raw.split()
        if not fields or is_comment(raw, layout):
            continue

        def fail(reason: str, raw: bytes = raw, number: int = number) -> FormatError:
            return FormatError(
                name, reason, line=number, text=raw.decode("utf-8", errors="replace")
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
    result: dict[str, Any] = dict(out)
    result["_lines"] = lines
    return result


def _text(token: bytes) -> str:
    return token.decode("utf-8", errors="replace")


# -- reading in pieces ---------------------------------------------------------------------------
#: Bytes of a file parsed at a time where Arrow cannot read it whole (cut after a whole line).
PIECE_BYTES = 8 << 20
#: Bytes per Arrow parsing task within a piece (a piece is parsed on several threads).
BLOCK_SIZE = 2 << 20


class Piece:
    """Whole lines of an input, the number of the first one, and how to see them again.

    A piece of a plain regular file is a window of a memory map of it (:class:`_Window`):
    Arrow parses it in place, and its lines are counted only when an error needs a line
    number (:class:`_LineCount`). Any other input's piece holds its bytes, counted as read.
    """

    def __init__(
        self,
        data: bytes,
        first_line: int | None,
        layout: _Layout,
        source: Source,
        *,
        window: _Window | None = None,
        count: _LineCount | None = None,
    ) -> None:
        self.data = data
        self.layout = layout
        self.source = source
        self.window = window
        #: The line number of each parsed row, when the exact reader parsed the piece.
        self.row_lines: list[int] | None = None
        #: Whether it holds anything but blanks (looked at only when it has no rows).
        self.has_text = True
        self._first_line = first_line
        self._count = count
        self._n_lines: int | None = None if window is not None else line_count(data)

    @property
    def first_line(self) -> int:
        """The number of the piece's first line (1-based)."""
        if self._first_line is None:
            assert self._count is not None and self.window is not None
            self._first_line = self._count.first_line(self.window.start)
        return self._first_line

    @property
    def n_lines(self) -> int:
        """How many lines the piece holds."""
        if self._n_lines is None:
            self._n_lines = line_count(self.raw())
        return self._n_lines

    def raw(self) -> bytes:
        """The piece's bytes: held, or read again from the file."""
        if self.data or self.window is None:
            return self.data
        return self.source.read_range(self.window.start, self.window.stop)

    def forget(self) -> None:
        """Drop the bytes where the input can give its lines again (a regular file, or one
        held in memory): they are read again only to report an error. An input read once
        (a FIFO) keeps them while its rows may still need them."""
        if self.window is not None:
            self.window.close()
        if self.source.rereadable or self.source.held:
            self.data = b""

    def lines(self) -> Iterator[bytes]:
        if self.data or self.window is not None or not self.n_lines:
            return split_lines(iter((self.raw(),)))
        return islice(self.source._lines(), self.first_line - 1, self.first_line - 1 + self.n_lines)

    def locate(self, row: int) -> tuple[int, str]:
        """Line number and text of the piece's 0-based parsed ``row``."""
        wanted = None if self.row_lines is None else self.row_lines[row]
        seen = -1
        number = self.first_line
        for number, line in enumerate(self.lines(), start=self.first_line):
            if wanted is None:
                if not is_row(line, self.layout):
                    continue
                seen += 1
                if seen < row:
                    continue
            elif number != wanted:
                continue
            return number, line.decode("utf-8", errors="replace")
        return number, ""

    def tag(self) -> str | None:
        """The run tag of the piece's first data line (of a file's piece, only its start is
        read again, as far as that line)."""
        if self.data or self.window is None:
            lines: Iterable[bytes] = self.lines()
        else:
            lines = self._first_lines()
        for line in lines:
            if is_row(line, RUN_LAYOUT):
                return run_tag(line)
        return None

    def _first_lines(self) -> Iterator[bytes]:
        """The lines of a file's piece, read again from its start in growing steps."""
        assert self.window is not None
        start, stop = self.window.start, self.window.stop
        done = 0  # bytes whose lines were given
        size = 1 << 16
        while done < stop - start:
            head = self.source.read_range(start, min(start + size, stop))
            whole = len(head) if start + len(head) >= stop else head.rfind(b"\n") + 1
            if whole > done:
                yield from split_lines(iter((head[done:whole],)))
                done = whole
            size *= 8


class _Window:
    """Bytes ``start:stop`` of a file, memory-mapped: searched and parsed in place (no copy),
    unmapped once parsed, so that a file streamed this way holds no more than a piece in
    memory."""

    __slots__ = ("_map", "_skip", "start", "stop")

    def __init__(self, fileno: int, start: int, stop: int) -> None:
        import mmap

        aligned = start - start % mmap.ALLOCATIONGRANULARITY
        self._map: Any = mmap.mmap(fileno, stop - aligned, offset=aligned, access=mmap.ACCESS_READ)
        self._skip = start - aligned
        self.start, self.stop = start, stop

    def find(self, byte: bytes, start: int = 0) -> int:
        """Where ``byte`` first is at or after ``start`` (piece offsets), or -1."""
        at = int(self._map.find(byte, self._skip + start))
        return at - self._skip if at >= 0 else -1

    def rfind(self, byte: bytes, stop: int) -> int:
        """Where ``byte`` last is before ``stop`` (piece offsets), or -1."""
        at = int(self._map.rfind(byte, self._skip, self._skip + stop))
        return at - self._skip if at >= 0 else -1

    def arrow(self) -> Any:
        """The bytes as an Arrow buffer over the map (no copy)."""
        import pyarrow as pa

        return pa.py_buffer(self._map).slice(self._skip, self.stop - self.start)

    def bytes(self) -> bytes:
        return bytes(self._map[self._skip : self._skip + self.stop - self.start])

    def close(self) -> None:
        """Unmap, unless something still reads the map (then it is unmapped when that is
        gone: never while in use)."""
        with contextlib.suppress(BufferError):
            self._map.close()


class _LineCount:
    """The line numbers of consecutive pieces of a file, counted only when asked (to report an
    error), each piece once: the pieces before the one asked about are read again and counted
    in order."""

    def __init__(self, source: Source, start: int) -> None:
        self.source = source
        self.counted_to = start  # the byte where counting stopped
        self.lines = 0  # the lines before it
        self.ends: list[int] = []  # where each piece not yet counted ends

    def add(self, stop: int) -> None:
        self.ends.append(stop)

    def first_line(self, start: int) -> int:
        """The number of the line that begins at byte ``start`` (a piece's start)."""
        while self.counted_to < start and self.ends:
            stop = self.ends.pop(0)
            self.lines += line_count(self.source.read_range(self.counted_to, stop))
            self.counted_to = stop
        return self.lines + 1


@dataclass
class Rows:
    """Where the rows of a table came from: consecutive runs of rows of pieces."""

    spans: list[tuple[Piece, int, int]] = field(default_factory=list)  # piece, first row, count

    def add(self, piece: Piece, count: int) -> None:
        if count:
            self.spans.append((piece, 0, count))

    def split(self, cut: int) -> tuple[Rows, Rows]:
        """The first ``cut`` rows and the rest."""
        before, after = Rows(), Rows()
        for piece, first, count in self.spans:
            take = max(0, min(count, cut))
            if take:
                before.spans.append((piece, first, take))
            if count > take:
                after.spans.append((piece, first + take, count - take))
            cut -= take
        return before, after

    def locate(self, row: int) -> tuple[int, str]:
        """Line number and text of the 0-based ``row``."""
        for piece, first, count in self.spans:
            if row < count:
                return piece.locate(first + row)
            row -= count
        return 0, ""


def pieces(source: Source, layout: _Layout, size: int) -> Iterator[Piece]:
    """The input (decoded, read once as a stream) in pieces of whole lines of about ``size``
    bytes each, numbered. A plain regular file is memory-mapped a piece at a time
    (:func:`mapped_pieces`)."""
    if source.rereadable and not source.held and not source.compressed:
        yield from mapped_pieces(source, layout, size)
        return
    carry = b""
    line = 1
    for block in source.blocks(size):
        data = carry + block if carry else block
        # Cut after the last line break, but not after a final \r: its \n may come next.
        cut = max(data.rfind(b"\n"), data.rfind(b"\r", 0, len(data) - 1)) + 1
        if cut == 0:
            carry = data  # no whole line yet: read on
            continue
        whole = data[:cut] if cut < len(data) else data
        carry = data[cut:]
        piece = Piece(whole, line, layout, source)
        line += piece.n_lines
        yield piece
    if carry:
        yield Piece(carry, line, layout, source)


def mapped_pieces(source: Source, layout: _Layout, size: int) -> Iterator[Piece]:
    """A plain regular file in pieces of whole lines of about ``size`` bytes, each a window
    of a memory map (:class:`_Window`): nothing is copied or counted on the way."""
    with open(source.path, "rb") as handle:
        end = os.fstat(handle.fileno()).st_size
        start = len(_BOM) if handle.read(len(_BOM)) == _BOM else 0
        count = _LineCount(source, start)
        first = True
        while start < end:
            width = size
            while True:
                stop = min(start + width, end)
                window = _Window(handle.fileno(), start, stop)
                if stop == end:
                    cut = stop - start
                    break
                # Cut after the last line break, but not after a final \r: its \n may follow.
                cut = max(window.rfind(b"\n", stop - start), window.rfind(b"\r", stop - start - 1))
                cut += 1
                if cut > 0:
                    break
                window.close()  # no whole line yet: a wider window
                width *= 2
            if cut < stop - start:
                window.close()
                window = _Window(handle.fileno(), start, start + cut)
            count.add(start + cut)
            yield Piece(b"", 1 if first else None, layout, source, window=window, count=count)
            first = False
            start += cut


def parse_piece(piece: Piece, name: str, options: dict[str, Any]) -> Any:
    """The piece's rows as an Arrow table: by Arrow where it can, else by the exact reader
    (which names the first bad line)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    layout = piece.layout
    window = piece.window
    if layout is RUN_LAYOUT:
        # Nearly every run file is in one layout: the compiled scanner reads it in one pass
        # (the same columns as Arrow's reader; None sends the piece down the usual path).
        text = window.arrow() if window is not None and piece.data == b"" else piece.data
        scanned = scan_run_piece(text)
        if scanned is not None and scanned.num_rows:
            return scanned
    if window is not None and piece.data == b"":
        if all(window.find(byte) < 0 for byte in (b"\x0b", b"\x0c", b"\t", b"#")) and not (
            loose_blanks(window.arrow())
        ):
            try:
                table = csv.read_csv(pa.BufferReader(window.arrow()), **options)
            except (pa.ArrowException, UnicodeDecodeError):
                pass
            else:
                if not table.num_rows:
                    piece.has_text = re.search(rb"\S", window.bytes()) is not None
                return table
        piece.data = window.bytes()  # the rarer paths below read the bytes themselves
    data = piece.data
    exact = b"\x0b" in data or b"\x0c" in data  # only the exact reader splits lines at them
    if not exact:
        if b"\t" in data:
            data = data.replace(b"\t", b" ")
        if b"#" in data:
            data = blank_comments(data, layout)
        exact = loose_blanks(data)  # (after both: a tab may make one, a comment hold one)
    if not exact:
        try:
            table = csv.read_csv(pa.BufferReader(data), **options)
        except (pa.ArrowException, UnicodeDecodeError):
            pass
        else:
            if not table.num_rows:
                piece.has_text = re.search(rb"\S", piece.data) is not None
            return table
    del data
    numbered = enumerate(split_lines(iter((piece.data,))), start=piece.first_line)
    columns = parse_lines(numbered, name, layout)
    piece.row_lines = columns.pop("_lines")
    if not piece.row_lines:
        piece.has_text = re.search(rb"\S", piece.data) is not None
    types = {c: (pa.float64() if c == layout.numeric else pa.string()) for c in layout.keep}
    return pa.table({c: pa.array(columns[c], type=types[c]) for c in layout.keep})


def line_count(data: bytes) -> int:
    """How many lines ``bytes.splitlines`` finds in ``data``."""
    count = data.count(b"\n")
    if b"\r" in data:
        count += data.count(b"\r") - data.count(b"\r\n")
    return count + (1 if data and not data.endswith((b"\n", b"\r")) else 0)
