"""64-bit hashes of Arrow strings, and :class:`HashLookup`, which finds strings in a vocabulary
by their hash (the join finds a run's doc ids among the judged ones this way).

Hashing was measured faster than interning doc ids into a shared vocabulary: a run's doc ids
stay Arrow strings in input order and are hashed once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.data.arrays import IntArray, arrow_ints, numpy_of

__all__ = ["HashLookup", "string_hashes"]

_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_STEP = np.uint64(0x9E3779B97F4A7C15)


def string_hashes(strings: Any, *, chunk: int = 1 << 16) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of every string of an Arrow string array, eight bytes at a time.

    Equal strings hash equal; callers confirm equal hashes by comparing the strings. Each
    string is read as little-endian 64-bit words (the last one masked to the string's length),
    folded together with its length and mixed (a multiply after folding the upper half into
    the lower: a bijection, so mixing adds no collisions), so ids of up to eight bytes take
    one vectorised pass over the array and longer ids one more per eight bytes. Works a chunk
    of strings at a time (bounded memory, and each chunk's arrays stay in cache).
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
    data = _Words(buffers[2])
    for begin in range(0, n, chunk):
        stop = min(begin + chunk, n)
        offsets = all_offsets[strings.offset + begin : strings.offset + stop + 1]
        hashes[begin:stop] = _hash_words(offsets.astype(np.int64), data)
    return hashes


class _Words:
    """The 64-bit little-endian word at any byte position of a buffer: every 8-byte window as
    one unaligned word (a strided view, no copy); the few windows that would run past the end
    are read from a zero-padded copy of the last bytes."""

    __slots__ = ("base", "size", "tail", "windows")

    def __init__(self, data: Any) -> None:
        self.size = 0 if data is None else data.size
        last = self.size - 8
        self.windows = np.ndarray(
            (max(last + 1, 0),), dtype="<u8", buffer=data if last >= 0 else b"", strides=(1,)
        )
        self.base = max(last, 0)
        tail = np.zeros(16, dtype=np.uint8)
        if self.size:
            count = self.size - self.base
            tail[:count] = np.frombuffer(data, dtype=np.uint8, count=count, offset=self.base)
        self.tail = np.ndarray((9,), dtype="<u8", buffer=tail, strides=(1,))

    def at(self, positions: IntArray) -> npt.NDArray[np.uint64]:
        """The words starting at these byte positions (ascending)."""
        inside = int(np.searchsorted(positions, self.base, side="right"))
        if self.size < 8:
            inside = 0
        if inside == len(positions):
            # Fancy indexing reads the strided view in place (np.take would copy all of it).
            return self.windows[positions]  # type: ignore[no-any-return]
        word = np.empty(len(positions), dtype=np.uint64)
        word[:inside] = self.windows[positions[:inside]]
        word[inside:] = self.tail[positions[inside:] - self.base]
        return word


def _hash_words(offsets: IntArray, data: _Words) -> npt.NDArray[np.uint64]:
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    with np.errstate(over="ignore"):
        state = lengths.astype(np.uint64) * _STEP
        longest = int(lengths.max()) if len(lengths) else 0
        if data.size == 0 or longest == 0:
            return _mix(state)
        shortest = int(lengths.min())
        rows: IntArray | None = None  # None: every string; then those longer than 8 * step
        step = 0
        while True:
            at = starts if rows is None else starts[rows]
            word = data.at(at + 8 * step if step else at)
            if shortest - 8 * step >= 8:
                pass  # every string fills this whole word
            elif shortest == longest:
                word &= _MASKS[longest - 8 * step]
            else:
                left = lengths if rows is None else lengths[rows]
                if step:
                    left = left - 8 * step
                if longest - 8 * step > 8:
                    left = np.minimum(left, 8)
                word &= _MASKS.take(left)
            if rows is None:
                state ^= word
                state *= _STEP
            else:
                state[rows] = (state[rows] ^ word) * _STEP
            step += 1
            if longest <= 8 * step:
                break
            if shortest <= 8 * step:
                rows = np.flatnonzero(lengths > 8 * step)
        return _mix(state)


def _mix(state: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Spread the state's bits over the upper half, which the callers read (the lookup table
    and the duplicate check): fold the upper half into the lower, then multiply by an odd
    constant. Both steps are bijections, so mixing adds no collisions."""
    with np.errstate(over="ignore"):
        state ^= state >> np.uint64(32)
        state *= _MIX_1
    return state


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
        where, codes = self.find(strings, hashes, rows)
        out = np.full(len(hashes), -1, dtype=np.int64)
        out[where] = codes
        return out

    def find(
        self, strings: Any, hashes: npt.NDArray[np.uint64], rows: IntArray
    ) -> tuple[IntArray, IntArray]:
        """The strings ``strings[rows]`` (hashed as ``hashes``) that are in the vocabulary:
        their indices into ``hashes`` (ascending) and their positions in the vocabulary.

        Only the strings whose hash is found are read, so the cost follows the number of
        strings (three passes over their hashes) and the number found, not their text."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._table is None or len(self._sorted) == 0:
            texts = strings.take(arrow_ints(rows))
            all_codes = numpy_of(pc.index_in(texts, value_set=self.vocab), fill=-1)
            where = np.flatnonzero(all_codes >= 0)
            return where, all_codes[where].astype(np.int64)
        # The slot numbers are below 2**24, so the shifted hashes index as they are (a view).
        slot = self._table[(hashes >> self._shift).view(np.intp)]
        maybe = np.flatnonzero(slot)
        codes = slot[maybe].astype(np.int64) - 1
        shared = np.flatnonzero(codes < 0)
        if len(shared):
            probe = hashes[maybe[shared]]
            at = np.minimum(np.searchsorted(self._sorted, probe), len(self._sorted) - 1)
            codes[shared] = self._order[at]
        found = self._hashes[codes] == hashes[maybe]
        maybe, codes = maybe[found], codes[found]
        if len(maybe) == 0:
            return maybe, codes
        texts = strings.take(arrow_ints(rows[maybe]))
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        same = numpy_of(pc.equal(texts, self.vocab.take(arrow_ints(codes))))
        return maybe[same], codes[same]
