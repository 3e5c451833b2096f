"""Opening inputs: paths, ``-`` for stdin, gzip; format detection; line lookup for errors.

Every input is read as a stream of decoded bytes: gunzipped when it starts with gzip's magic
bytes (whatever its name), without a UTF-8 byte order mark. Decompression streams too: looking
at the start of a gzip file (to detect its format or a run's name) decompresses only the start.

A regular file may be opened more than once: Arrow reads it by path, and an error's line is
found by reading it again. Anything else (standard input, a FIFO, a process substitution such
as ``<(zcat run.gz)`` seen as ``/dev/fd/N``, a character device such as ``/dev/null``) can be
read only once, so it is opened exactly once: the bytes looked at ahead are kept and handed out
again, and the rest is read as a stream (whole, or in pieces by the streaming reader).
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from rankmeter.errors import FormatError

FORMATS = ("trec", "csv", "tsv", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_BOM = b"\xef\xbb\xbf"
_GZIP = b"\x1f\x8b"
#: Bytes read from an input at a time when it is read whole or line by line.
_BLOCK = 1 << 20


def folder_problem(path: str, role: str | None) -> str:
    """What is wrong with the folder ``path`` given where a file is read: a BEIR collection's
    folder (it holds ``qrels/*.tsv``) is named as one, with its qrels file for the qrels
    (``rankmeter evaluate medline/ run``) and ``rankmeter bm25`` for a run."""
    import glob
    import shlex

    found = sorted(glob.glob(os.path.join(glob.escape(path), "qrels", "*.tsv")))
    if not found:
        return "is a directory, expected a file"
    test = os.path.join(path, "qrels", "test.tsv")
    example = test if test in found else found[0]
    if role == "run":
        return f"a BEIR folder, not a run; `rankmeter bm25 {shlex.quote(path)}` makes a run from it"
    if role == "qrels":
        return f"a BEIR folder; give its qrels file, e.g. {example}"
    return f"a BEIR folder, expected a file (its qrels: {example})"


class Source:
    """The bytes of one input, with its display name.

    A regular file is opened again whenever that is cheaper than holding it; any other input
    is opened once (see the module's docstring).
    """

    def __init__(self, path: str | os.PathLike[str], role: str | None = None) -> None:
        self.path = os.fspath(path)
        self.name = "<stdin>" if self.path == "-" else self.path
        self.role = role  # "qrels" or "run": what a folder given in its place is told
        self._data: bytes | None = None
        self._regular: bool | None = None
        self._once: _Decoded | None = None  # the one opening of an input that cannot be reopened
        self._head = b""  # the start of a regular file, as far as it was looked at
        self._head_complete = False  # whether _head is the whole (decoded) file
        self._compressed: bool | None = None

    # -- what kind of input ----------------------------------------------------------------------
    @property
    def rereadable(self) -> bool:
        """Whether the input is a regular file, which can be opened and read again."""
        if self._regular is None:
            if self.path == "-":
                self._regular = False
            else:
                try:
                    mode = os.stat(self.path).st_mode
                except OSError:
                    self._open().close()  # raises the error that names the problem
                    raise  # pragma: no cover - the file appeared between the two calls
                self._regular = stat.S_ISREG(mode)
        return self._regular

    @property
    def held(self) -> bool:
        """Whether the whole content has been read and is held in memory."""
        return self._data is not None

    @property
    def compressed(self) -> bool:
        """Whether the input is gzip data (by its first bytes, not its name)."""
        if self._compressed is None:
            if self.rereadable:
                with self._open() as handle:
                    self._compressed = handle.read(2) == _GZIP
            else:
                self._compressed = self._one_stream().compressed
        return self._compressed

    def _open(self) -> BinaryIO:
        if self.path == "-":
            if sys.stdin is None:  # started with `<&-`
                raise FormatError(self.name, "standard input is closed")
            return sys.stdin.buffer
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise FormatError(self.name, "no such file") from None
        except IsADirectoryError:
            raise FormatError(self.name, folder_problem(self.path, self.role)) from None
        except PermissionError:
            raise FormatError(self.name, "permission denied") from None
        except OSError as exc:
            raise FormatError(self.name, f"cannot read: {exc.strerror or exc}") from None

    def _one_stream(self) -> _Decoded:
        """The single opening of an input that cannot be reopened."""
        if self._once is None:
            self._once = _Decoded(self._open(), self.name, close=self.path != "-")
        return self._once

    def _fresh_stream(self) -> _Decoded:
        """A new opening of a regular file, decoded from its start."""
        return _Decoded(self._open(), self.name, close=True)

    # -- reading ---------------------------------------------------------------------------------
    @property
    def data(self) -> bytes:
        """The whole decoded content (read once, then kept)."""
        if self._data is None:
            if self.rereadable and not self.compressed:
                with self._open() as handle:
                    raw = handle.read()  # one buffer of the file's size
                if raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
            elif self.rereadable:
                with self._fresh_stream() as stream:
                    raw = stream.read_all()
            else:
                raw = self._one_stream().read_all()
            if re.search(rb"\S", raw) is None:  # not raw.strip(): that copies the whole file
                raise FormatError(self.name, "file is empty")
            self._data = raw
        return self._data

    def head(self, size: int = 65536) -> bytes:
        """The first ``size`` bytes of the decoded content, without reading the rest (of a
        gzip file either: only its start is decompressed)."""
        if self._data is not None:
            return self._data[:size]
        if not self.rereadable:
            return self._one_stream().peek(size)
        if len(self._head) < size and not self._head_complete:
            with self._fresh_stream() as stream:
                self._compressed = stream.compressed
                self._head = stream.read(size)
                self._head_complete = len(self._head) < size
        return self._head[:size]

    def blocks(self, size: int = _BLOCK) -> Iterator[bytes]:
        """The decoded content in blocks of ``size`` bytes (the last one shorter), read as a
        stream: an input that cannot be reopened is consumed, so read it this way once."""
        if self._data is not None:
            for start in range(0, len(self._data), size):
                yield self._data[start : start + size]
            return
        if self.rereadable:
            with self._fresh_stream() as stream:
                yield from stream.blocks(size)
            return
        stream = self._one_stream()
        with stream:
            yield from stream.blocks(size)

    def read_range(self, start: int, stop: int) -> bytes:
        """Bytes ``start:stop`` of a regular file as stored (not decoded): how a piece of a
        plain file is read again to report an error."""
        with self._open() as handle:
            handle.seek(start)
            return handle.read(stop - start)

    def arrow_path(self) -> str | None:
        """The path, where Arrow's space-delimited reader can read the file by path as
        trec_eval splits it: a plain (not gzip) regular file without tabs, ``#``, vertical tabs,
        form feeds or loose blanks (:func:`loose_blanks`). Arrow then reads it in blocks, and it is never held whole in memory.
        Anything else is read in pieces (see :mod:`rankmeter.io.trec`)."""
        if not self.rereadable or self.compressed:
            return None
        with self._open() as handle:
            try:
                view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                raise FormatError(self.name, "file is empty") from None
            with view:
                if any(view.find(byte) >= 0 for byte in (b"\t", b"#", b"\x0b", b"\x0c")):
                    return None
                if loose_blanks(view):
                    return None
        return self.path

    def detect_format(self, given: str | None) -> str:
        if given is not None:
            fmt = given.lower()
            if fmt not in FORMATS:
                raise FormatError(
                    self.name, f"unknown format {given!r}; use one of {', '.join(FORMATS)}"
                )
            return fmt
        suffixes = [s.lower() for s in Path(self.path).suffixes]
        if suffixes and suffixes[-1] == ".gz":
            suffixes.pop()
        if suffixes and suffixes[-1] in _EXTENSIONS:
            return _EXTENSIONS[suffixes[-1]]
        return sniff(self.head())

    # -- lines, for error messages ---------------------------------------------------------------
    def first_line(self, wanted: Callable[[bytes], bool]) -> bytes | None:
        """The first line for which ``wanted(line)`` is true, however long (None if none).

        A regular file is read again from its start only as far as that line (a gzip file
        decompressed only so far); an input that cannot be reopened is read whole first.
        """
        for line in self._lines():
            if wanted(line):
                return line
        return None

    def line(self, number: int) -> str:
        """Text of 1-based line ``number`` (for error messages)."""
        for index, line in enumerate(self._lines(), start=1):
            if index == number:
                return line.decode("utf-8", errors="replace")
        return ""

    def nth_row_line(
        self, row: int, *, skip: int = 0, is_row: Callable[[bytes], bool] = bool
    ) -> tuple[int, str]:
        """Line number and text of the 0-based data ``row``, counting the lines after the
        first ``skip`` lines (a header) for which ``is_row`` holds (by default: non-empty).
        Used only to report errors; a regular file is scanned line by line, never loaded
        whole."""
        seen = -1
        index = 0
        for index, line in enumerate(self._lines(), start=1):
            if index > skip and is_row(line):
                seen += 1
                if seen == row:
                    return index, line.decode("utf-8", errors="replace")
        return index, ""

    def _lines(self) -> Iterator[bytes]:
        """The decoded lines, split as ``bytes.splitlines`` splits them, without their breaks.

        Lines are read from the bytes already held or from a new opening of a regular file; an
        input that cannot be reopened is read whole first.
        """
        if self._data is None and not self.rereadable:
            self.data  # noqa: B018 - read once and kept, so its lines can be looked up
        return split_lines(self.blocks())


#: Bytes looked at at a time by :func:`loose_blanks` (they stay in the CPU's cache).
_SCAN = 1 << 20


def loose_blanks(data: Any) -> bool:
    """Whether a space in ``data`` (bytes, a memory map, any buffer) stands next to another
    blank or a control character, or starts or ends it: a line with a leading, trailing or
    doubled blank.

    trec_eval splits lines at runs of blanks; Arrow's reader, at each single space, so such a
    line has an empty field for Arrow. A line with all its fields then has more columns than
    the layout and Arrow refuses it, but a line one field short has just enough
    (``1 Q0 d0 1 0.0 `` reads with an empty run tag), and trec_eval calls it malformed. Where
    this is true the exact reader reads the text. At about 10 GB/s: in blocks, each first
    looked at for two neighbouring bytes at or below the space (only a CR LF pair has them
    in a tidy file)."""
    import numpy as np

    octets = np.frombuffer(data, dtype=np.uint8)
    size = len(octets)
    if not size:
        return False
    at = len(_BOM) if bytes(octets[: len(_BOM)]) == _BOM else 0
    if (at < size and octets[at] == 32) or octets[-1] == 32:
        return True
    low = np.empty(min(size, _SCAN + 1), dtype=bool)
    for start in range(0, size - 1, _SCAN):
        block = octets[start : start + _SCAN + 1]  # one byte more: the pair across blocks
        blank = np.less_equal(block, 32, out=low[: len(block)])
        if not np.logical_and(blank[:-1], blank[1:]).any():
            continue
        space = block == 32
        if (space[:-1] & blank[1:]).any() or (blank[:-1] & space[1:]).any():
            return True
    return False


def split_lines(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of the concatenated ``blocks``, split as ``bytes.splitlines`` would split the
    whole (``\\n``, ``\\r\\n`` or ``\\r``), without their line breaks."""
    carry = b""
    for block in blocks:
        data = carry + block if carry else block
        lines = data.splitlines(keepends=True)
        # The last line may continue in the next block (or be a \r whose \n comes next).
        carry = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        for line in lines:
            yield _without_break(line)
    if carry:
        yield _without_break(carry)


def _without_break(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith((b"\n", b"\r")):
        return line[:-1]
    return line


class _Prepended(io.RawIOBase):
    """A readable stream: ``first``, then the rest of ``rest``."""

    def __init__(self, first: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._first = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._first or size < 0:
            return super().read(size) or b""
        return self._rest.read(size)

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._first:
            count = min(len(view), len(self._first))
            view[:count] = self._first[:count]
            self._first = self._first[count:]
            return count
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)


class _Decoded:
    """One opening of an input, decoded (gunzipped, without a byte order mark), read front to
    back, with bytes looked at ahead kept for the next read."""

    def __init__(self, handle: BinaryIO, name: str, *, close: bool) -> None:
        self.name = name
        self._handle = handle
        self._close = close
        self._ahead = b""
        try:
            magic = _read_full(handle, 2)
        except OSError as exc:
            raise FormatError(name, f"cannot read: {exc.strerror or exc}") from None
        self.compressed = magic == _GZIP
        stream = _Prepended(magic, handle)
        self._reader: Any = gzip.GzipFile(fileobj=stream, mode="rb") if self.compressed else stream
        if self.peek(len(_BOM)) == _BOM:
            self._ahead = self._ahead[len(_BOM) :]

    def _pull(self, size: int) -> bytes:
        try:
            data: bytes = self._reader.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            if self.compressed:
                raise FormatError(self.name, f"damaged gzip data ({exc})") from None
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise FormatError(self.name, f"cannot read: {reason}") from None
        return data

    def peek(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer at the end), kept to be read again."""
        while len(self._ahead) < size:
            more = self._pull(max(size - len(self._ahead), 1 << 16))
            if not more:
                break
            self._ahead += more
        return self._ahead[:size]

    def read(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer only at the end)."""
        parts = []
        wanted = size
        if self._ahead:
            parts.append(self._ahead[:wanted])
            self._ahead = self._ahead[wanted:]
            wanted -= len(parts[0])
        while wanted > 0:
            more = self._pull(wanted)
            if not more:
                break
            parts.append(more)
            wanted -= len(more)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def read_all(self) -> bytes:
        parts = [self._ahead]
        self._ahead = b""
        while True:
            more = self._pull(_BLOCK)
            if not more:
                break
            parts.append(more)
        return b"".join(parts)

    def blocks(self, size: int) -> Iterator[bytes]:
        while True:
            block = self.read(size)
            if not block:
                return
            yield block

    def close(self) -> None:
        if self._close:
            self._handle.close()

    def __enter__(self) -> _Decoded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_full(handle: BinaryIO, size: int) -> bytes:
    """``size`` bytes (fewer only at the end), however a pipe hands them over."""
    data = handle.read(size)
    while 0 < len(data) < size:
        more = handle.read(size - len(data))
        if not more:
            break
        data += more
    return data


def sniff(data: bytes) -> str:
    """Guess the format of a file from its first bytes."""
    if data.startswith(b"PAR1"):
        return "parquet"
    first = b""
    for line in data.splitlines():
        # A TREC comment ("# qid,docid,...") says nothing about the format: the first line
        # that is neither blank nor a comment decides.
        if line.strip() and not line.lstrip().startswith(b"#"):
            first = line.strip()
            break
    if first.startswith(b"{"):
        return "jsonl"
    header = first.decode("utf-8", errors="replace").lower()
    from rankmeter.io.tables import QUERY_COLUMNS

    for sep, fmt in (("\t", "tsv"), (",", "csv")):
        if sep in header and any(f.strip() in QUERY_COLUMNS for f in header.split(sep)):
            return fmt
    return "trec"
