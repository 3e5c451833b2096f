"""Opening inputs: paths, ``-`` for stdin, gzip; format detection; line lookup for errors."""

from __future__ import annotations

import gzip
import mmap
import os
import re
import sys
import zlib
from collections.abc import Iterator
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


class Source:
    """The bytes of one input, read once, with its display name."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.name = "<stdin>" if self.path == "-" else self.path
        self._data: bytes | None = None

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = self._read()
        return self._data

    def _open(self) -> BinaryIO:
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise FormatError(self.name, "no such file") from None
        except IsADirectoryError:
            raise FormatError(self.name, "is a directory, expected a file") from None
        except PermissionError:
            raise FormatError(self.name, "permission denied") from None
        except OSError as exc:
            raise FormatError(self.name, f"cannot read: {exc.strerror or exc}") from None

    def head(self, size: int = 65536) -> bytes:
        """The first ``size`` bytes of the decoded content (without reading a plain file whole)."""
        if self._data is None and self.path != "-":
            with self._open() as handle:
                start: bytes = handle.read(size)
            if start[:2] != b"\x1f\x8b":
                return start[len(_BOM) :] if start.startswith(_BOM) else start
        return self.data[:size]

    def fast_input(self) -> Any:
        """What Arrow's space-delimited reader should read, or None where only the exact
        line-by-line reader splits lines as trec_eval does (vertical tab, form feed).

        A plain file is handed over by path, so Arrow reads it in blocks and it is never held
        whole in memory; tabs (common in TREC files) become spaces, which needs the bytes.
        """
        if self._data is None and self.path != "-" and not self.head(2).startswith(b"\x1f\x8b"):
            with self._open() as handle:
                try:
                    view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                except ValueError:  # an empty file cannot be mapped
                    raise FormatError(self.name, "file is empty") from None
                with view:
                    if view.find(b"\x0b") >= 0 or view.find(b"\x0c") >= 0:
                        return None
                    if view.find(b"\t") < 0:
                        return self.path
        data = self.data
        if b"\x0b" in data or b"\x0c" in data:
            return None
        return data.replace(b"\t", b" ") if b"\t" in data else data

    def _read(self) -> bytes:
        if self.path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with self._open() as handle:
                raw = handle.read()
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise FormatError(self.name, f"damaged gzip data ({exc})") from None
        if raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if re.search(rb"\S", raw) is None:  # not raw.strip(): that copies the whole file
            raise FormatError(self.name, "file is empty")
        return raw

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

    def line(self, number: int) -> str:
        """Text of 1-based line ``number`` (for error messages)."""
        lines = self.data.splitlines()
        if 1 <= number <= len(lines):
            return lines[number - 1].decode("utf-8", errors="replace")
        return ""

    def nth_row_line(self, row: int, *, skip: int = 0) -> tuple[int, str]:
        """Line number and text of the 0-based data ``row``, counting non-empty lines after
        the first ``skip`` lines (a header). Used only to report errors; a plain file is
        scanned line by line, never loaded whole."""
        seen = -1
        index = 0
        for index, line in enumerate(self._lines(), start=1):
            if index > skip and line:
                seen += 1
                if seen == row:
                    return index, line.decode("utf-8", errors="replace")
        return index, ""

    def _lines(self) -> Iterator[bytes]:
        if self._data is None and self.path != "-" and not self.head(2).startswith(b"\x1f\x8b"):
            with self._open() as handle:
                first = True
                for raw in handle:
                    line = raw.rstrip(b"\r\n")
                    if first and line.startswith(_BOM):
                        line = line[len(_BOM) :]
                    first = False
                    yield line
            return
        yield from self.data.splitlines()


def sniff(data: bytes) -> str:
    """Guess the format of a file from its first bytes."""
    if data.startswith(b"PAR1"):
        return "parquet"
    first = b""
    for line in data.splitlines():
        if line.strip():
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
