"""Streaming a TREC run that need not fit in memory: chunks of whole queries.

The file is read in pieces of whole lines; a background thread parses the next pieces with
Arrow's multi-threaded CSV reader while the caller evaluates the current chunk, so parsing
and evaluating overlap. Rows are cut into chunks at query boundaries, so every chunk is a
complete Run for its queries. A query whose results are split across the file (not grouped)
cannot be evaluated this way and gets a clear error saying what to do.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from rankmeter.data import Run
from rankmeter.data._columns import Origin, numpy_of
from rankmeter.errors import FormatError
from rankmeter.io._source import Source
from rankmeter.io.trec import RUN_LAYOUT, _first_tag, arrow_csv_options, column_count_problem

#: Rows per chunk: about 40 MB of working memory per chunk (small chunks stay in cache).
CHUNK_ROWS = 250_000
#: Bytes of the file parsed at a time (cut after the last whole line).
PIECE_BYTES = 8 << 20
#: Bytes per Arrow parsing task within a piece (pieces are parsed on several threads).
BLOCK_SIZE = 2 << 20
#: Parsed pieces waiting for the caller: bounds memory while parsing runs ahead.
AHEAD = 1


def iter_run_chunks(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    ties: str = "trec_eval",
    chunk_rows: int | None = None,
) -> Iterator[Run]:
    """Yield Runs, each holding every result of its queries, reading the file in blocks.

    The file is a space-separated TREC run (plain or gzip). Peak memory follows the chunk
    size and the largest query, not the file. Three stages overlap: one thread parses pieces
    of the file, another builds each chunk's Run (grouping, hashing, rank order, checks), and
    the caller evaluates the previous chunk meanwhile.
    """
    chunk_rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
    source = Source(path)
    if source.path == "-":
        raise FormatError(source.name, "streaming reads a file, not standard input")
    head = source.head()
    if b"\t" in head or b"\x0b" in head or b"\x0c" in head:
        raise FormatError(
            source.name,
            "streaming reads space-separated TREC runs and this one has tabs; replace them "
            "(tr '\\t' ' ') or evaluate without streaming",
        )
    run_name = name or _first_tag(head) or "run"
    return _ahead(lambda: _chunks(source, run_name, ties, chunk_rows), "rankmeter-chunks")


def _chunks(source: Source, run_name: str, ties: str, chunk_rows: int) -> Iterator[Run]:
    import pyarrow as pa
    import pyarrow.compute as pc

    seen: set[str] = set()
    pending: list[Any] = []
    pending_rows = 0
    first_row = 0  # file row of the first pending row
    for piece in _tables(source):
        pending.append(piece)
        pending_rows += piece.num_rows
        if pending_rows < chunk_rows:
            continue
        table = pa.concat_tables(pending)
        queries = table.column("qid")
        same_as_last = numpy_of(pc.equal(queries, queries[len(queries) - 1]))
        others = np.flatnonzero(~same_as_last)
        if len(others) == 0:
            continue  # one query so far: keep reading until it ends
        cut = int(others[-1]) + 1
        yield _chunk(table.slice(0, cut), source, first_row, run_name, ties, seen)
        first_row += cut
        pending = [table.slice(cut)]
        pending_rows = pending[0].num_rows
    if pending_rows:
        yield _chunk(pa.concat_tables(pending), source, first_row, run_name, ties, seen)
    elif first_row == 0:
        raise FormatError(source.name, "file is empty")


def _tables(source: Source) -> Iterator[Any]:
    """Parsed pieces of the file in order, parsed by a background thread one piece ahead."""
    return _ahead(lambda: _parse_pieces(source), "rankmeter-parse")


def _ahead(produce: Callable[[], Iterable[Any]], name: str) -> Iterator[Any]:
    """The items of ``produce()``, made by a background thread that runs AHEAD items ahead of
    the caller; its exceptions are raised in the caller's thread. Closing the iterator early
    stops the thread."""
    done = object()
    made: queue.Queue[Any] = queue.Queue(maxsize=AHEAD)
    stop = threading.Event()

    def offer(item: Any) -> bool:
        while not stop.is_set():
            try:
                made.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in produce():
                if not offer(item):
                    return
            offer(done)
        except BaseException as exc:  # handed to the caller's thread, raised there
            offer(_Failure(exc))

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while True:
            item = made.get()
            if item is done:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        worker.join()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _parse_pieces(source: Source) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.csv as csv

    options = arrow_csv_options(RUN_LAYOUT, block_size=BLOCK_SIZE)
    try:
        for piece in _pieces(source):
            yield csv.read_csv(pa.BufferReader(piece), **options)
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as exc:
        raise _first_bad_line(source, exc) from None


def _pieces(source: Source) -> Iterator[Any]:
    """The file (decompressed) in buffers of whole lines of about PIECE_BYTES each."""
    import pyarrow as pa

    with pa.input_stream(source.path, compression="detect") as stream:
        carry = b""
        while True:
            block = stream.read(PIECE_BYTES)
            if not block:
                break
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data  # no line end yet: read on
                continue
            whole = pa.py_buffer(data)
            yield whole.slice(0, cut) if cut < len(data) else whole
            carry = data[cut:]
        if carry:
            yield pa.py_buffer(carry)


def _first_bad_line(source: Source, exc: Exception) -> FormatError:
    """Find the line Arrow could not read, scanning the file line by line."""
    from rankmeter.io.trec import _NUMBER

    width = len(RUN_LAYOUT.columns)
    for number, raw in enumerate(source._lines(), start=1):
        fields = raw.split()
        if not fields:
            continue
        text = raw.decode("utf-8", errors="replace")
        problem = column_count_problem(fields, RUN_LAYOUT)
        if problem is not None:
            return FormatError(source.name, problem, line=number, text=text)
        if not _NUMBER.fullmatch(fields[4]):
            return FormatError(source.name, "score must be a number", line=number, text=text)
        if len(raw.split(b" ")) != width:
            return FormatError(
                source.name,
                "streaming reads runs whose columns are separated by single spaces",
                line=number,
                text=text,
            )
    return FormatError(source.name, f"cannot read: {exc}")


def _chunk(table: Any, source: Source, first_row: int, name: str, ties: str, seen: set[str]) -> Run:
    import pyarrow.compute as pc

    queries = pc.unique(table.column("qid")).to_pylist()
    again = seen.intersection(queries)
    if again:
        query = min(again)
        at = _first_row_of(table, query)
        line, text = source.nth_row_line(first_row + at)
        raise FormatError(
            source.name,
            f"the run is not grouped by query: query {query!r} appears again after other "
            "queries; streaming needs each query's results together (sort the file by query, "
            "e.g. sort -s -k1,1, or evaluate without --stream)",
            line=line,
            text=text,
        )
    seen.update(queries)
    origin = Origin(source.name, lambda row: source.nth_row_line(first_row + row))
    return Run.from_columns(
        table.column("qid"),
        table.column("docid"),
        table.column("score"),
        name=name,
        ties=ties,
        origin=origin,
    )


def _first_row_of(table: Any, query: str) -> int:
    column = table.column("qid")
    for index, value in enumerate(column.to_pylist()):
        if value == query:
            return index
    return 0
