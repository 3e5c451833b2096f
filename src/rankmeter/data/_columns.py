"""Shared column helpers for Qrels and Run: interning, id ordering, provenance for errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.errors import FormatError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
ObjArray = npt.NDArray[np.object_]


class Origin:
    """Where a table's rows came from, so errors can name the file, line and text.

    ``locate(row)`` maps a 0-based row index to ``(line_number, line_text)``; it is only called
    when an error is being reported, so it may be slow (for example, rescan a file).
    """

    __slots__ = ("describe", "locate", "name")

    def __init__(
        self,
        name: str,
        locate: Callable[[int], tuple[int, str]] | None = None,
        describe: Callable[[int], str] | None = None,
    ) -> None:
        self.name = name
        self.locate = locate
        self.describe = describe  # for tables without lines: "query 'q1', doc 'd3'"

    def error(self, row: int | None, reason: str, text: str | None = None) -> FormatError:
        if row is not None and self.describe is not None:
            return FormatError(self.name, f"{self.describe(row)}: {reason}", text=text)
        if row is not None and self.locate is not None:
            line, line_text = self.locate(row)
            return FormatError(self.name, reason, line=line, text=line_text)
        if row is not None:
            return FormatError(self.name, reason, line=row + 1, text=text)
        return FormatError(self.name, reason, text=text)


def natural_key(qid: str) -> tuple[int, int, str]:
    """Sort key for ids: integer-looking ids numerically first, then the rest in byte order.

    The key depends on the id alone (not on the other ids), so any subset of ids keeps the
    same relative order in every table.
    """
    if qid.isascii() and qid.isdigit():
        return (0, int(qid), qid)
    return (1, 0, qid)


def intern(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes into a vocabulary sorted in natural order.

    Returns ``(codes, vocabulary)`` with ``vocabulary[codes] == values``.
    """
    codes, first_seen = intern_first_seen(values, origin, what)
    order = np.asarray(
        sorted(range(len(first_seen)), key=lambda i: natural_key(str(first_seen[i]))),
        dtype=np.int64,
    )
    remap = np.empty(len(first_seen), dtype=np.int64)
    remap[order] = np.arange(len(first_seen), dtype=np.int64)
    return remap[codes], first_seen[order]


def intern_first_seen(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes numbered in order of first appearance."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(_as_string_array(values, origin, what))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    first_seen = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    return numpy_of(encoded.indices).astype(np.int64), first_seen


def intern_docs(values: Any, origin: Origin) -> tuple[IntArray, Any]:
    """Encode document ids as int codes; the vocabulary stays an Arrow string array (compact)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(string_column(values, origin, "doc id"))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return numpy_of(encoded.indices).astype(np.int64), encoded.dictionary


def string_column(values: Any, origin: Origin, what: str) -> Any:
    """A validated Arrow string column (an Array or a ChunkedArray, as given; chunks are not
    copied into one): no nulls, no empty strings."""
    return _as_string_array(values, origin, what)


_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


def string_hashes(strings: Any, *, chunk: int = 1 << 20) -> npt.NDArray[np.uint64]:
    """A 64-bit FNV-1a hash of every string of an Arrow string array, vectorised by byte
    position, a chunk of strings at a time (bounded memory). Equal strings hash equal;
    callers confirm equal hashes by comparing the strings."""
    import pyarrow as pa

    if isinstance(strings, pa.ChunkedArray):
        parts = [string_hashes(c, chunk=chunk) for c in strings.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    n = len(strings)
    hashes = np.empty(n, dtype=np.uint64)
    wide = pa.types.is_large_string(strings.type)
    buffers = strings.buffers()
    all_offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else None
    for begin in range(0, n, chunk):
        stop = min(begin + chunk, n)
        offsets = all_offsets[strings.offset + begin : strings.offset + stop + 1]
        hashes[begin:stop] = _fnv1a(offsets.astype(np.int64), data)
    return hashes


def _fnv1a(offsets: IntArray, data: npt.NDArray[np.uint8] | None) -> npt.NDArray[np.uint64]:
    n = len(offsets) - 1
    state = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    lengths = np.diff(offsets)
    if data is None or n == 0 or lengths.max() == 0:
        return state
    # Strings sorted by length: those longer than j are a contiguous suffix, so every step is a
    # contiguous operation and every byte is visited once.
    by_length = np.argsort(
        lengths.astype(np.uint16) if lengths.max() < 65536 else lengths, kind="stable"
    )
    sorted_lengths = lengths[by_length]
    starts = offsets[:-1][by_length]
    with np.errstate(over="ignore"):
        for j in range(int(sorted_lengths[-1])):
            first = int(np.searchsorted(sorted_lengths, j, side="right"))
            active = state[first:]
            np.bitwise_xor(active, data[starts[first:] + j], out=active)
            np.multiply(active, _FNV_PRIME, out=active)
    out = np.empty(n, dtype=np.uint64)
    out[by_length] = state
    return out


def _as_string_array(values: Any, origin: Origin, what: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    # A chunked string column (what Arrow's readers give) is validated chunk-wise, without a
    # copy into one chunk: callers that need one chunk combine it themselves.
    if isinstance(values, pa.ChunkedArray) and not (
        pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    ):
        values = values.combine_chunks()
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = _to_arrow_strings(values, origin, what)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        if pa.types.is_integer(values.type):
            values = pc.cast(values, pa.string())
        else:
            raise origin.error(
                None, f"{what} column must hold strings or integers, not {values.type}"
            )
    if values.null_count:
        raise origin.error(int(null_rows(values)[0]), f"missing {what}")
    # Comparing with a Python scalar would make Arrow import pandas (slow), so take the minimum.
    lengths = pc.binary_length(values)
    if len(values) and pc.min(lengths).as_py() == 0:
        row = int(np.flatnonzero(numpy_of(lengths) == 0)[0])
        raise origin.error(row, f"empty {what}")
    return values


def _to_arrow_strings(values: Any, origin: Origin, what: str) -> Any:
    import pyarrow as pa

    seq: Sequence[Any] = values if isinstance(values, Sequence) else list(values)
    try:
        return pa.array(seq, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        pass
    out = []
    for row, value in enumerate(seq):
        if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
            raise origin.error(
                row, f"{what} must be a string or an integer, not {type(value).__name__}"
            )
        text = str(value)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise origin.error(
                row, f"{what} is not valid Unicode (it holds a lone surrogate)", text=text
            ) from None
        out.append(text)
    return pa.array(out, type=pa.string())


def as_float_column(values: Any, origin: Origin, what: str, *, allow_inf: bool) -> FloatArray:
    """Convert a column of numbers to float64, rejecting NaN (and inf unless allowed)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if values.null_count:
            raise origin.error(int(null_rows(values)[0]), f"missing {what}")
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
            raise origin.error(None, f"{what} column must be numeric, not {values.type}")
        if str(values.type) not in _NUMPY_TYPES:
            values = values.cast(pa.float64())
        out = numpy_of(values).astype(np.float64, copy=False)
    elif isinstance(values, np.ndarray) and values.dtype != np.bool_:
        try:
            out = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            out = _floats_one_by_one(values, origin, what)
    else:
        # One by one, so that None, booleans and numbers beyond a double (which NumPy would
        # turn into nan, 1.0 or an OverflowError) are reported with their row.
        out = _floats_one_by_one(values, origin, what)
    if out.ndim != 1:
        raise origin.error(None, f"{what} column must be one-dimensional")
    bad = np.isnan(out) if allow_inf else ~np.isfinite(out)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        expected = "a number (NaN is not allowed)" if allow_inf else "a finite number"
        raise origin.error(row, f"{what} must be {expected}", text=repr(float(out[row])))
    return out


def _floats_one_by_one(values: Any, origin: Origin, what: str) -> FloatArray:
    out = []
    for row, value in enumerate(values):
        if value is None:
            raise origin.error(row, f"missing {what}")
        if isinstance(value, (bool, np.bool_)):
            raise origin.error(row, f"{what} must be a number, not a boolean", text=str(value))
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            raise origin.error(row, f"{what} must be a number", text=str(value)) from None
        except OverflowError:
            raise origin.error(row, f"{what} is too large for a double", text=repr(value)) from None
    return np.asarray(out, dtype=np.float64)


def offsets_from_sorted(codes: IntArray, n_groups: int) -> IntArray:
    """CSR offsets of a code column sorted ascending: rows of group g are offsets[g]:offsets[g+1]."""
    counts = np.bincount(codes, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def row_groups(offsets: IntArray) -> IntArray:
    """Group index of every row of a CSR layout."""
    counts = np.diff(offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def gather_ranges(starts: IntArray, lengths: IntArray) -> IntArray:
    """Indices of the concatenation of ranges ``starts[i] : starts[i] + lengths[i]``."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    shift = np.repeat(starts - (ends - lengths), lengths)
    out: IntArray = np.arange(total, dtype=np.int64) + shift
    return out


def arrow_ints(values: npt.NDArray[Any]) -> Any:
    """An Arrow int64 array over a NumPy array, without ``pa.array`` (which imports pandas)."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


_NUMPY_TYPES = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float": np.float32,
    "double": np.float64,
}


def numpy_of(array: Any, *, fill: float | None = None) -> npt.NDArray[Any]:
    """A NumPy copy of a numeric or boolean Arrow array.

    Arrow's own ``to_numpy`` imports pandas when it is installed (150 ms), so the buffers are
    read directly. Nulls are replaced by ``fill``; without ``fill`` the array must have none.
    """
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n, offset = len(array), array.offset
    validity, data = array.buffers()[:2]
    if pa.types.is_boolean(array.type):
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        values: npt.NDArray[Any] = bits[offset : offset + n].astype(bool)
    else:
        dtype = _NUMPY_TYPES[str(array.type)]
        values = np.frombuffer(data, dtype=dtype)[offset : offset + n].copy()
    if array.null_count:
        if fill is None:
            raise ValueError("array has nulls")
        valid_bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        valid = valid_bits[offset : offset + n].astype(bool)
        values = np.where(valid, values, fill)
    return values


def null_rows(array: Any) -> npt.NDArray[np.int64]:
    """Row numbers of the nulls of an Arrow array."""
    return np.flatnonzero(numpy_of(array.is_null()))


def release_arrow_memory() -> None:
    """Hand memory that Arrow's allocator keeps after frees back to the system: large reads
    otherwise leave hundreds of MB of retained pages behind."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.flags.writeable = False
    return array
