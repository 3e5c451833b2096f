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


def natural_order(ids: Any) -> IntArray:
    """The permutation that sorts distinct ids by :func:`natural_key`: vectorised for an Arrow
    string array, in Python for anything else."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(ids, pa.Array):
        keys = [natural_key(str(q)) for q in ids]
        return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
    strings = ids
    n = len(strings)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    digits = pc.match_substring_regex(strings, "^[0-9]+$")
    numeric = numpy_of(digits)
    if numeric.any() and int(pc.max(pc.binary_length(strings.filter(digits))).as_py()) > 18:
        return natural_order(strings.to_pylist())  # beyond int64: Python's integers
    by_text = numpy_of(pc.sort_indices(strings)).astype(np.int64)
    text_rank = np.empty(n, dtype=np.int64)
    text_rank[by_text] = np.arange(n, dtype=np.int64)
    number = np.zeros(n, dtype=np.int64)
    at = np.flatnonzero(numeric)
    if len(at):
        number[at] = numpy_of(pc.cast(strings.take(arrow_ints(at)), pa.int64()))
    return np.lexsort((text_rank, number, ~numeric)).astype(np.int64)


def intern(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes into a vocabulary sorted in natural order.

    Returns ``(codes, vocabulary)`` with ``vocabulary[codes] == values``.
    """
    codes, first_seen = _dictionary_encode(values, origin, what)
    order = natural_order(first_seen)
    remap = np.empty(len(first_seen), dtype=np.int64)
    remap[order] = np.arange(len(first_seen), dtype=np.int64)
    vocabulary = np.asarray(first_seen.take(arrow_ints(order)).to_pylist(), dtype=object)
    return remap[codes], vocabulary


def intern_first_seen(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes numbered in order of first appearance."""
    codes, first_seen = _dictionary_encode(values, origin, what)
    return codes, np.asarray(first_seen.to_pylist(), dtype=object)


def _dictionary_encode(values: Any, origin: Origin, what: str) -> tuple[IntArray, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(_as_string_array(values, origin, what))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return numpy_of(encoded.indices).astype(np.int64), encoded.dictionary


def intern_grouped(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Like :func:`intern_first_seen`, faster for ids that come in runs of equal values (a
    TREC run's query column): ids are compared with their neighbours, and only when some id
    comes back after another one does it fall back to hashing every row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    strings = _as_string_array(values, origin, what)
    n = len(strings)
    if n < 2:
        return intern_first_seen(strings, origin, what)
    changes = numpy_of(pc.not_equal(strings[1:], strings[:-1]))
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1)).astype(np.int64)
    del changes
    firsts = strings.take(arrow_ints(starts))
    if isinstance(firsts, pa.ChunkedArray):
        firsts = firsts.combine_chunks()
    ids = firsts.to_pylist()
    if len(set(ids)) != len(ids):
        return intern_first_seen(strings, origin, what)
    lengths = np.diff(np.append(starts, n))
    codes = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    return codes, np.asarray(ids, dtype=object)


class HashLookup:
    """Finds strings in a vocabulary of distinct strings (an Arrow string array) by their
    :func:`string_hashes`.

    A direct-mapped table on the top bits of the hash (a few slots per vocabulary entry) holds
    each entry's position, so most strings are found or ruled out with one memory access;
    entries that share a slot are found by binary search over the sorted hashes. Equal hashes
    then confirm a match and the strings themselves confirm it again, so a hash collision can
    never pair two different ids."""

    __slots__ = ("_hashes", "_order", "_shift", "_sorted", "_table", "vocab")

    _SHARED = -1  # a slot that several vocabulary entries map to

    def __init__(self, vocab: Any) -> None:
        self.vocab = vocab
        self._hashes = string_hashes(vocab)
        self._order = np.argsort(self._hashes)
        self._sorted = self._hashes[self._order]
        bits = min(max((len(self._hashes) * 8).bit_length(), 10), 24)
        self._shift = np.uint64(64 - bits)
        slots = (self._hashes >> self._shift).astype(np.intp)
        counts = np.bincount(slots, minlength=1 << bits)
        table = np.zeros(1 << bits, dtype=np.int32)  # 0: empty, else position + 1
        table[slots] = np.arange(1, len(slots) + 1, dtype=np.int32)
        table[counts > 1] = self._SHARED
        # Two ids sharing a hash (never seen in practice): look every string up by its text.
        unique = not np.any(self._sorted[1:] == self._sorted[:-1])
        self._table: npt.NDArray[np.int32] | None = table if unique else None

    def codes(self, strings: Any, hashes: npt.NDArray[np.uint64], rows: IntArray) -> IntArray:
        """Position in the vocabulary of the strings ``strings[rows]`` (hashed as ``hashes``),
        -1 for strings not in it."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._table is None or len(self._sorted) == 0:
            texts = strings.take(arrow_ints(rows))
            return numpy_of(pc.index_in(texts, value_set=self.vocab), fill=-1).astype(np.int64)
        slot = self._table[(hashes >> self._shift).astype(np.intp)]
        maybe = np.flatnonzero(slot)
        codes = slot[maybe].astype(np.int64) - 1
        shared = np.flatnonzero(codes < 0)
        if len(shared):
            probe = hashes[maybe[shared]]
            at = np.minimum(np.searchsorted(self._sorted, probe), len(self._sorted) - 1)
            codes[shared] = self._order[at]
        found = self._hashes[codes] == hashes[maybe]
        maybe, codes = maybe[found], codes[found]
        out = np.full(len(hashes), -1, dtype=np.int64)
        if len(maybe) == 0:
            return out
        texts = strings.take(arrow_ints(rows[maybe]))
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        same = numpy_of(pc.equal(texts, self.vocab.take(arrow_ints(codes))))
        out[maybe[same]] = codes[same]
        return out


def segments_repeat(offsets: IntArray, keys: npt.NDArray[np.uint64]) -> bool:
    """Whether some segment ``keys[offsets[i]:offsets[i+1]]`` holds a value twice.

    Segments are sorted row-wise in padded matrices, one per power-of-two length class
    (small sorts stay in cache: several times faster than one sort of all keys)."""
    lengths = np.diff(offsets)
    if len(lengths) == 0 or int(lengths.max()) < 2:
        return False
    if int(lengths.min()) == int(lengths.max()):
        square = np.sort(keys[offsets[0] : offsets[-1]].reshape(len(lengths), -1), axis=1)
        return bool((square[:, 1:] == square[:, :-1]).any())
    starts = offsets[:-1]
    classes = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    classes[lengths < 2] = -1
    top = np.iinfo(np.uint64).max
    for c in np.unique(classes[classes >= 0]).tolist():
        segs = np.flatnonzero(classes == c)
        seg_lengths = lengths[segs]
        width = int(seg_lengths.max())
        rows = gather_ranges(starts[segs], seg_lengths)
        rank = rows - np.repeat(starts[segs], seg_lengths)
        block = np.full((len(segs), width), top, dtype=np.uint64)
        block[np.repeat(np.arange(len(segs)), seg_lengths), rank] = keys[rows]
        block.sort(axis=1)
        # The first `length` sorted values of a row are its segment's values (padding is the
        # largest value), so only pairs inside that prefix are compared.
        inside = np.arange(width - 1)[None, :] < (seg_lengths - 1)[:, None]
        if ((block[:, 1:] == block[:, :-1]) & inside).any():
            return True
    return False


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


_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_STEP = np.uint64(0x9E3779B97F4A7C15)


def string_hashes(strings: Any, *, chunk: int = 1 << 16) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of every string of an Arrow string array, eight bytes at a time.

    Equal strings hash equal; callers confirm equal hashes by comparing the strings. Each
    string is read as little-endian 64-bit words (the last one masked to the string's length),
    folded together with its length and mixed (SplitMix64's finaliser), so ids of up to eight
    bytes take one vectorised pass over the array and longer ids one more per eight bytes.
    Works a chunk of strings at a time (bounded memory).
    """
    import pyarrow as pa

    if isinstance(strings, pa.ChunkedArray):
        parts = [string_hashes(c, chunk=chunk) for c in strings.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    n = len(strings)
    hashes = np.empty(n, dtype=np.uint64)
    wide = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    buffers = strings.buffers()
    all_offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    data = buffers[2]
    for begin in range(0, n, chunk):
        stop = min(begin + chunk, n)
        offsets = all_offsets[strings.offset + begin : strings.offset + stop + 1]
        hashes[begin:stop] = _hash_words(offsets.astype(np.int64), data)
    return hashes


def _hash_words(offsets: IntArray, data: Any) -> npt.NDArray[np.uint64]:
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    with np.errstate(over="ignore"):
        state = lengths.astype(np.uint64) * _STEP
        size = 0 if data is None else data.size
        longest = int(lengths.max()) if len(lengths) else 0
        if size == 0 or longest == 0:
            return _mix(state)
        uniform = int(lengths.min()) == longest
        # Every 8-byte window of the data buffer as one unaligned word (a strided view, no
        # copy); the few windows that would run past the end are read from a padded copy.
        last = size - 8
        words = np.ndarray((max(last + 1, 0),), dtype="<u8", buffer=data, strides=(1,))
        base = max(last, 0)
        tail = np.zeros(16, dtype=np.uint8)
        tail[: size - base] = np.frombuffer(data, dtype=np.uint8, count=size - base, offset=base)
        tail_words = np.ndarray((9,), dtype="<u8", buffer=tail, strides=(1,))
        rows: IntArray | None = None  # None: every string; then those longer than 8 * step
        step = 0
        while True:
            at = starts if rows is None else starts[rows]
            left = lengths if rows is None else lengths[rows]
            if step:
                at = at + 8 * step
                left = left - 8 * step
            # Positions ascend, so the windows past the end are a suffix.
            inside = int(np.searchsorted(at, last, side="right"))
            word = np.empty(len(at), dtype=np.uint64)
            word[:inside] = words[at[:inside]]
            word[inside:] = tail_words[at[inside:] - base]
            if uniform and longest - 8 * step >= 8:
                pass  # every remaining string fills the whole word
            elif uniform:
                word &= _MASKS[longest - 8 * step]
            else:
                word &= _MASKS[np.minimum(left, 8)]
            if rows is None:
                state ^= word
                state *= _STEP
            else:
                state[rows] = (state[rows] ^ word) * _STEP
            if longest <= 8 * (step + 1):
                break
            rows = np.flatnonzero(lengths > 8 * (step + 1))
            step += 1
        return _mix(state)


def _mix(state: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Spread every bit of the state over the whole word (a bijection: no new collisions)."""
    with np.errstate(over="ignore"):
        state ^= state >> np.uint64(32)
        state *= _MIX_1
        state ^= state >> np.uint64(29)
    return state


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

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if values.null_count:
            raise origin.error(int(null_rows(values)[0]), f"missing {what}")
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
            raise origin.error(None, f"{what} column must be numeric, not {values.type}")
        if str(values.type) not in _NUMPY_TYPES:
            values = values.cast(pa.float64())
        out = numpy_of(values).astype(np.float64, copy=False)
    elif isinstance(values, np.ndarray) and values.dtype != np.bool_:
        try:
            out = np.array(values, dtype=np.float64)  # a copy: never the caller's array
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
        if array.num_chunks == 1:
            array = array.chunk(0)
        elif array.null_count or pa.types.is_boolean(array.type) or array.num_chunks == 0:
            array = array.combine_chunks()
        else:  # one copy, straight from each chunk's buffer
            return np.concatenate([_values_of(chunk) for chunk in array.chunks])
    if not array.null_count and not pa.types.is_boolean(array.type):
        return _values_of(array).copy()
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


def _values_of(array: Any) -> npt.NDArray[Any]:
    """A read-only NumPy view of a numeric Arrow array's values (no nulls)."""
    dtype = _NUMPY_TYPES[str(array.type)]
    data = array.buffers()[1]
    if len(array) == 0 or data is None:
        return np.empty(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype)[array.offset : array.offset + len(array)]


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
