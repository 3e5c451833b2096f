"""Streaming a TREC run that need not fit in memory: chunks of whole queries.

The input is read once, front to back, in pieces of whole lines, whatever it is: a regular
file, gzip data (decompressed as it is read), a FIFO, a process substitution (``/dev/fd/N``).
A background thread parses the next pieces with Arrow's multi-threaded CSV reader while the
caller evaluates the current chunk, so parsing and evaluating overlap; a piece Arrow cannot
read (runs of blanks, fields after the tag, a bad line) is read by the exact line-by-line
reader, which names the first bad line. Rows are cut into chunks at query boundaries, so every
chunk is a complete Run for its queries. A query whose results are split across the file (not
grouped) cannot be evaluated this way and gets a clear error saying what to do.

Errors name their line: each piece knows the number of its first line. A regular file is
read again to show the line; the pieces of an input that can be read only once (a FIFO) are
kept until the rows parsed from them have been checked.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from rankmeter.data import Run
from rankmeter.data.arrays import compute, load_arrow, numpy_of
from rankmeter.data.origin import Origin
from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.io._source import Source
from rankmeter.io.trec import (
    NO_DATA,
    RUN_LAYOUT,
    Piece,
    Rows,
    arrow_csv_options,
    parse_piece,
    pieces,
)

#: Rows per chunk: about 40 MB of working memory per chunk (small chunks stay in cache).
CHUNK_ROWS = 250_000
#: Bytes of the file parsed at a time (cut after the last whole line).
PIECE_BYTES = 8 << 20
#: Bytes per Arrow parsing task within a piece (pieces are parsed on several threads).
BLOCK_SIZE = 2 << 20
#: Parsed pieces waiting for the caller: bounds memory while parsing runs ahead.
AHEAD = 1


def run_files_to_stream(
    runs: Any, *, many: bool, explicit: bool
) -> list[tuple[str | None, Any]] | None:
    """``(name, path)`` of the run files to stream (name None: the file's own), or None when
    they are to be read whole.

    ``runs`` is one run (``many`` False), or a list or ``{name: run}`` of them. Unasked
    (``explicit`` False), runs stream when every one is a TREC run file that can be read
    again (a regular file, not stdin): a FIFO or ``/dev/fd/N`` can be read only once, so the
    in-memory reader could not take over where streaming gives up. With ``explicit``
    (``stream=True``) every run must be a path, and anything else is a PolicyError.
    """
    if not many:
        named: list[tuple[str | None, Any]] = [(None, runs)]
    elif isinstance(runs, Mapping):
        named = [(str(k), v) for k, v in runs.items()]
    else:
        named = [(None, v) for v in runs]
    if not named or not all(
        isinstance(p, (str, os.PathLike)) and os.fspath(p) != "-" for _, p in named
    ):
        if explicit:
            raise PolicyError("stream=True reads run files: give paths, not runs or tables")
        return None
    if explicit:
        return named
    try:
        sources = [Source(p, role="run") for _, p in named]
        if all(s.rereadable and s.detect_format(None) == "trec" for s in sources):
            return named
    except RankmeterError:
        pass
    return None


def iter_run_chunks(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    ties: str = "trec_eval",
    chunk_rows: int | None = None,
) -> Iterator[Run]:
    """Yield Runs, each holding every result of its queries, reading the file in pieces.

    The file is a TREC run (plain or gzip; a regular file, a FIFO or a process substitution),
    read once as a stream. Peak memory follows the chunk size and the largest query, not the
    file. Three stages overlap: one thread parses pieces of the file, another builds each
    chunk's Run (grouping, hashing, rank order, checks), and the caller evaluates the previous
    chunk meanwhile. The run is named ``name``, else after the tag of its first data line.
    """
    chunk_rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
    source = Source(path, role="run")
    if source.path == "-":
        raise FormatError(source.name, "streaming reads a file, not standard input")
    source.head(1)  # a missing or unreadable file fails here, not at the first chunk
    return _ahead(lambda: _chunks(source, name, ties, chunk_rows), "rankmeter-chunks")


def _chunks(source: Source, name: str | None, ties: str, chunk_rows: int) -> Iterator[Run]:
    tables = _tables(source)
    try:
        yield from _cut(tables, source, name, ties, chunk_rows)
    finally:
        tables.close()


def _cut(
    tables: Iterator[Any], source: Source, name: str | None, ties: str, chunk_rows: int
) -> Iterator[Run]:
    """Runs of whole queries from the parsed pieces (see :func:`_chunks`)."""
    import pyarrow as pa

    seen: set[str] = set()
    pending: list[Any] = []
    pending_rows = 0
    rows = Rows()  # where the pending rows came from
    run_name = name
    yielded = False
    text = False  # whether anything but blanks was read
    for table, piece in tables:
        text = text or piece.has_text
        if not table.num_rows:
            continue
        if run_name is None:
            run_name = piece.tag() or "run"
        pending.append(table)
        rows.add(piece, table.num_rows)
        pending_rows += table.num_rows
        if pending_rows < chunk_rows:
            continue
        table = pa.concat_tables(pending)
        cut = _last_query_start(table.column("qid"))
        if cut == 0:
            continue  # one query so far: keep reading until it ends
        done, rows = rows.split(cut)
        yield _chunk(table.slice(0, cut), done, source.name, run_name, ties, seen)
        yielded = True
        pending = [table.slice(cut)]
        pending_rows = pending[0].num_rows
    if pending_rows:
        table = pa.concat_tables(pending)
        yield _chunk(table, rows, source.name, run_name or "run", ties, seen)
    elif not yielded:
        raise FormatError(source.name, NO_DATA if text else "file is empty")


def _last_query_start(queries: Any) -> int:
    """Where the rows of the last query begin: after the last row of another query (0: every
    row is the last query's). Looked for from the end, in windows that grow eightfold: the
    last query's rows are usually a few hundred."""
    n = len(queries)
    last = queries[n - 1]
    width = 1024
    while True:
        begin = max(n - width, 0)
        others = np.flatnonzero(~numpy_of(compute("equal", queries.slice(begin), last)))
        if len(others):
            return begin + int(others[-1]) + 1
        if begin == 0:
            return 0
        width *= 8


def _tables(source: Source) -> _Ahead:
    """Parsed pieces of the file in order, parsed by a background thread one piece ahead."""
    return _ahead(lambda: _parse_pieces(source), "rankmeter-parse")


def _ahead(produce: Callable[[], Iterable[Any]], name: str) -> _Ahead:
    """The items of ``produce()``, made by a background thread, started at once, that runs
    AHEAD items ahead of the caller; its exceptions are raised in the caller's thread. Closing
    the iterator (or dropping it) stops the thread."""
    return _Ahead(produce, name)


class _Ahead(Iterator[Any]):
    """See :func:`_ahead`. The thread starts when the iterator is made, not at its first item,
    so that a run is being read while the caller still prepares (reads the qrels)."""

    def __init__(self, produce: Callable[[], Iterable[Any]], name: str) -> None:
        _load_modules()
        self._done = object()
        self._made: queue.Queue[Any] = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._finished = False
        self._worker = threading.Thread(target=self._work, args=(produce,), name=name, daemon=True)
        self._worker.start()

    def _offer(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._made.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, produce: Callable[[], Iterable[Any]]) -> None:
        items = None
        try:
            items = iter(produce())
            for item in items:
                if not self._offer(item):
                    return
            self._offer(self._done)
        except BaseException as exc:  # handed to the caller's thread, raised there
            self._offer(_Failure(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()  # stops what the producer started (its own reading thread)

    def __next__(self) -> Any:
        if self._finished:
            raise StopIteration
        item = self._made.get()
        if item is self._done:
            self.close()
            raise StopIteration
        if isinstance(item, _Failure):
            self.close()
            raise item.error
        return item

    def close(self) -> None:
        """Stop the thread (it ends its current item first) and wait for it."""
        if self._finished and not self._worker.is_alive():
            return
        self._finished = True
        self._stop.set()
        while self._worker.is_alive():
            with contextlib.suppress(queue.Empty):  # a full queue holds the thread: empty it
                self._made.get_nowait()
            self._worker.join(timeout=0.05)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def _load_modules() -> None:
    """Import what the background threads use before one starts: a module imported by two
    threads at once can be seen half-initialised (pyarrow: ``cannot import name 'BuildInfo'
    from partially initialized module 'pyarrow.lib'``), and the caller's thread is importing
    too (reading the qrels) while a run is parsed."""
    import mmap  # noqa: F401

    import pyarrow.csv  # noqa: F401

    load_arrow()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _parse_pieces(source: Source) -> Iterator[tuple[Any, Piece]]:
    options = arrow_csv_options(RUN_LAYOUT, block_size=BLOCK_SIZE)
    for piece in pieces(source, RUN_LAYOUT, PIECE_BYTES):
        table = parse_piece(piece, source.name, options)
        piece.forget()  # a regular file is read again to report an error; a FIFO cannot be
        yield table, piece


def _chunk(table: Any, rows: Rows, source: str, name: str, ties: str, seen: set[str]) -> Run:
    try:
        run = Run.from_columns(
            table.column("qid"),
            table.column("docid"),
            table.column("score"),
            name=name,
            ties=ties,
            origin=Origin(source, rows.locate),
        )
    except FormatError:
        # A query that comes back is the first thing to say, as the user must sort the file.
        queries = compute("unique", table.column("qid")).to_pylist()
        _check_grouped(queries, table, rows, source, seen)
        raise
    # The chunk's queries are the Run's segments: no second pass over the query column.
    _check_grouped([str(q) for q in run.segment_ids], table, rows, source, seen)
    return run


def _check_grouped(queries: list[str], table: Any, rows: Rows, source: str, seen: set[str]) -> None:
    """Remember the chunk's queries; a query that an earlier chunk had is an error."""
    again = seen.intersection(queries)
    if again:
        query = min(again)
        line, text = rows.locate(_first_row_of(table, query))
        raise FormatError(
            source,
            f"the run is not grouped by query: query {query!r} appears again after other "
            "queries; streaming needs each query's results together (sort the file by query, "
            "e.g. sort -s -k1,1, or evaluate without --stream)",
            line=line,
            text=text,
        )
    seen.update(queries)


def _first_row_of(table: Any, query: str) -> int:
    column = table.column("qid")
    for index, value in enumerate(column.to_pylist()):
        if value == query:
            return index
    return 0
