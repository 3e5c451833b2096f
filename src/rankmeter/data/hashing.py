"""64-bit hashes of Arrow strings, and :class:`HashLookup`, which finds strings in a vocabulary
by their hash (the join finds a run's doc ids among the judged ones this way).

Hashing was measured faster than interning doc ids into a shared vocabulary: a run's doc ids
stay Arrow strings in input order and are hashed once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.data import _compiled
from rankmeter.data.arrays import IntArray, compute, compute_options, numpy_of, one_chunk, take
from rankmeter.data.csr import offsets_from_sorted

__all__ = [
    "HashLookup",
    "KeyTable",
    "PairLookup",
    "group_keys",
    "pair_keys",
    "same_strings",
    "string_hashes",
]

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
    native = _compiled.NATIVE
    if native is not None:
        if n:
            offsets, large, first, text = _compiled.string_parts(strings)
            native.hash_strings(offsets, large, first, n, text, hashes)
        return hashes
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


class KeyTable:
    """Finds 64-bit keys (well mixed, such as :func:`string_hashes`) among a set of distinct
    keys: which probes are in it, and where.

    A direct-mapped table on the top bits of the key (a few slots per key) holds each key's
    index, so most probes are found or ruled out with one memory access; keys that share a slot
    are found by binary search over the sorted keys. ``distinct`` is False when two keys are
    equal (for hashes of distinct strings: never seen in practice); the table then answers
    nothing and callers look their values up another way.
    """

    __slots__ = ("_occupied", "_order", "_shift", "_sorted", "_table", "distinct", "keys")

    _SHARED = -1  # a slot that several keys map to
    #: Tables of more slots than this (256 KB) are looked at only where a bitmap of the
    #: occupied slots (1/32 of their size) says so: most probes are no key, and a bitmap that
    #: stays in cache rules them out far faster than a table that does not.
    _DIRECT_SLOTS = 1 << 16

    def __init__(self, keys: npt.NDArray[np.uint64]) -> None:
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64)
        ordered = np.sort(self.keys)
        self.distinct = len(keys) > 0 and not np.any(ordered[1:] == ordered[:-1])
        # The table is built at the first lookup that needs it: the compiled loop finds a
        # query's few judgments without it (see find_segmented's spans).
        self._table: npt.NDArray[np.int32] | None = None
        self._order = np.zeros(0, dtype=np.int64)
        self._sorted = ordered
        self._shift = np.uint64(63)
        self._occupied: npt.NDArray[np.uint64] | None = None

    def _build(self) -> npt.NDArray[np.int32]:
        """The direct-mapped table (and the order and bitmap beside it), built once."""
        if self._table is not None:
            return self._table
        keys = self.keys
        self._order = np.argsort(keys).astype(np.int64, copy=False)
        # (self._sorted, made by __init__, is keys[self._order] already)
        bits = min(max((len(keys) * 8).bit_length(), 10), 24)
        self._shift = np.uint64(64 - bits)
        # The slots of the sorted keys ascend: a slot that several keys share repeats.
        slots = (self._sorted >> self._shift).view(np.intp)
        table = np.zeros(1 << bits, dtype=np.int32)  # 0: empty, else index + 1
        table[slots] = self._order.astype(np.int32) + 1
        table[slots[1:][slots[1:] == slots[:-1]]] = self._SHARED
        if len(table) > self._DIRECT_SLOTS:
            used = np.zeros(1 << bits, dtype=bool)
            used[slots] = True
            self._occupied = np.packbits(used, bitorder="little").view("<u8")
        self._table = table
        return table

    def find(self, probes: npt.NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
        """The probes that are keys: their indices into ``probes`` (ascending) and the index
        of the equal key. A few passes over the probes, then work on the found ones alone."""
        if not self.distinct:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if _compiled.NATIVE is not None:
            return self._find_native(probes, None, None, None, None)
        table = self._build()
        # The slot numbers are below 2**24, so the shifted keys index as they are (a view).
        slots = probes >> self._shift
        if self._occupied is None:
            slot = table[slots.view(np.intp)]
            maybe = np.flatnonzero(slot)
            slot = slot[maybe]
        else:
            words = self._occupied[(slots >> np.uint64(6)).view(np.intp)]
            maybe = np.flatnonzero((words >> (slots & np.uint64(63))) & np.uint64(1))
            slot = table[slots[maybe].view(np.intp)]
            kept = np.flatnonzero(slot)
            maybe, slot = maybe[kept], slot[kept]
        index = slot.astype(np.int64) - 1
        shared = np.flatnonzero(index < 0)
        if len(shared):
            probe = probes[maybe[shared]]
            at = np.minimum(np.searchsorted(self._sorted, probe), len(self._sorted) - 1)
            index[shared] = self._order[at]
        found = self.keys[index] == probes[maybe]
        return maybe[found], index[found]

    def find_segmented(
        self,
        hashes: npt.NDArray[np.uint64],
        offsets: IntArray,
        adds: npt.NDArray[np.uint64],
        skip: npt.NDArray[np.bool_],
        spans: IntArray | None = None,
    ) -> tuple[IntArray, IntArray]:
        """:meth:`find` of the probes ``hashes[i] + adds[s]``, ``s`` the segment (CSR
        ``offsets``) that holds ``i``; the probes of a segment whose ``skip`` is True are not
        looked at (never found). The compiled loop makes each probe as it goes, NumPy makes
        them all first.

        ``spans`` (int64, shape (segments, 2)), when given, promise that a segment's probes
        matter only where they equal one of ``keys[low:high]``: the compiled loop scans a short
        span in place instead of probing the table, so it may leave out probes whose equal key
        lies outside their span (callers check the key's group anyway)."""
        if not self.distinct:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if _compiled.NATIVE is not None:
            return self._find_native(hashes, offsets, adds, skip, spans)
        lengths = np.diff(offsets)
        with np.errstate(over="ignore"):
            probes = hashes + np.repeat(adds, lengths)
        maybe, index = self.find(probes)
        if skip.any():
            kept = ~np.repeat(skip, lengths)[maybe]
            maybe, index = maybe[kept], index[kept]
        return maybe, index

    def _find_native(
        self,
        probes: npt.NDArray[np.uint64],
        offsets: IntArray | None,
        adds: npt.NDArray[np.uint64] | None,
        skip: npt.NDArray[np.bool_] | None,
        spans: IntArray | None,
    ) -> tuple[IntArray, IntArray]:
        native = _compiled.NATIVE
        assert native is not None
        probes = np.ascontiguousarray(probes, dtype=np.uint64)
        at = np.empty(len(probes), dtype=np.int64)  # pages are touched only where found
        index = np.empty(len(probes), dtype=np.int64)
        segments: object = b""
        added: object = b""
        skipped: object = b""
        spanned: object = b""
        if offsets is not None and len(offsets) > 1:
            segments = np.ascontiguousarray(offsets, dtype=np.int64)
            added = np.ascontiguousarray(adds, dtype=np.uint64)
            skipped = np.ascontiguousarray(skip, dtype=np.bool_).view(np.uint8)
            if spans is not None:
                spanned = np.ascontiguousarray(spans, dtype=np.int64)
        # Without spans, or with one too long for the loop to scan (its SCAN_SPAN), probes
        # look in the table; else the table is not read and need not be built (an empty one
        # is given).
        scanned = spans is not None and (
            len(spans) == 0 or int((spans[:, 1] - spans[:, 0]).max()) <= native.SCAN_SPAN
        )
        table: object = b"" if scanned else self._build()
        found = native.find_keys(
            table,
            int(self._shift),
            self._sorted,
            self._order,
            self.keys,
            probes,
            segments,
            added,
            skipped,
            spanned,
            at,
            index,
        )
        return at[:found].copy(), index[:found].copy()


class HashLookup:
    """Finds strings in a vocabulary of distinct strings (an Arrow string array) by their
    :func:`string_hashes` (a :class:`KeyTable` of them). Equal hashes propose a match and the
    strings themselves confirm it, so a hash collision can never pair two different ids."""

    __slots__ = ("_hashes", "_keys", "vocab")

    def __init__(self, vocab: Any) -> None:
        self.vocab = vocab
        self._hashes = string_hashes(vocab)
        self._keys = KeyTable(self._hashes)

    @property
    def hashes(self) -> npt.NDArray[np.uint64]:
        """The hash of every vocabulary string (:func:`string_hashes`)."""
        return self._hashes

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
        if not self._keys.distinct:  # (no vocabulary, or two ids share a hash): by text
            if len(self.vocab) == 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            lookup = compute_options("SetLookupOptions", value_set=self.vocab)
            all_codes = numpy_of(compute("index_in", take(strings, rows), options=lookup), fill=-1)
            where = np.flatnonzero(all_codes >= 0)
            return where, all_codes[where].astype(np.int64)
        maybe, codes = self._keys.find(hashes)
        same = same_strings(strings, rows[maybe], self.vocab, codes)
        return maybe[same], codes[same]


def same_strings(left: Any, left_rows: IntArray, right: Any, right_rows: IntArray) -> Any:
    """Whether ``left[left_rows[i]] == right[right_rows[i]]``, for each i (a bool array)."""
    if len(left_rows) == 0:
        return np.zeros(0, dtype=bool)
    texts = one_chunk(take(left, left_rows))
    return numpy_of(compute("equal", texts, one_chunk(take(right, right_rows))))


#: Mixes a judgment's query (its row in the qrels) into its doc id's hash: the key of a pair.
_PAIR = np.uint64(0xD6E8FEB86659FD93)


def group_keys(groups: IntArray) -> npt.NDArray[np.uint64]:
    """What each group adds to its strings' hashes in :func:`pair_keys`."""
    with np.errstate(over="ignore"):
        return groups.astype(np.uint64) * _PAIR


def pair_keys(groups: IntArray, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """One 64-bit key per (group, string hash) pair: the hash plus the group times an odd
    constant (what :class:`PairLookup` compares; equal keys are confirmed there)."""
    with np.errstate(over="ignore"):
        return hashes + group_keys(groups)


class PairLookup:
    """Finds (group, string) pairs among a table's rows, such as the (query, doc) pairs of the
    judgments: each row's key mixes its group into its string's hash (:func:`pair_keys`).

    A probe is found when its key is a row's key; the group and the string are then compared
    themselves, so the answer is exact. Compared with finding the string alone, only the pairs
    that exist are looked at further (a doc judged for another query is not)."""

    __slots__ = ("_group_offsets", "_keys", "groups", "string_rows", "strings")

    def __init__(
        self, groups: IntArray, hashes: npt.NDArray[np.uint64], strings: Any, string_rows: IntArray
    ) -> None:
        """``groups[i]`` and ``strings[string_rows[i]]`` (hashed as ``hashes[i]``) are row
        ``i``'s pair."""
        self.groups = groups
        self.strings = strings
        self.string_rows = string_rows
        self._keys = KeyTable(pair_keys(groups, hashes))
        # Rows grouped by group (the qrels' are): each group's rows are a span of the keys.
        self._group_offsets: IntArray | None = None
        if len(groups) and bool(np.all(groups[1:] >= groups[:-1])) and int(groups[0]) >= 0:
            self._group_offsets = offsets_from_sorted(groups, int(groups[-1]) + 1)

    @property
    def exact(self) -> bool:
        """Whether the keys are distinct (else :meth:`find` cannot answer: look up otherwise)."""
        return self._keys.distinct

    def find(
        self,
        keys: npt.NDArray[np.uint64],
        groups_of: Any,
        strings: Any,
        string_rows: IntArray,
    ) -> tuple[IntArray, IntArray]:
        """The probes (``keys``, from :func:`pair_keys`) that are a row's pair: their indices
        into ``keys`` (ascending) and the rows. ``groups_of(indices)`` gives the probes' groups
        and ``strings[string_rows[i]]`` is probe ``i``'s string; both are read only for the
        probes whose key matched."""
        return self._confirm(*self._keys.find(keys), groups_of, strings, string_rows)

    def find_segmented(
        self,
        hashes: npt.NDArray[np.uint64],
        offsets: IntArray,
        groups: IntArray,
        strings: Any,
        string_rows: IntArray,
    ) -> tuple[IntArray, IntArray]:
        """:meth:`find` where probe ``i`` is the string hashed ``hashes[i]`` in the group
        ``groups[s]`` of the segment ``s`` (CSR ``offsets``) holding it (-1: no group, never
        found); the keys are made as the probes are looked up."""

        def groups_of(indices: IntArray) -> IntArray:
            return groups[np.searchsorted(offsets, indices, side="right") - 1]

        spans = None
        bounds = self._group_offsets
        if bounds is not None:
            known = (groups >= 0) & (groups < len(bounds) - 1)
            at = np.where(known, groups, 0)
            spans = np.stack((bounds[at], np.where(known, bounds[at + 1], bounds[at])), axis=1)
        found = self._keys.find_segmented(hashes, offsets, group_keys(groups), groups < 0, spans)
        return self._confirm(*found, groups_of, strings, string_rows)

    def _confirm(
        self, maybe: IntArray, rows: IntArray, groups_of: Any, strings: Any, string_rows: IntArray
    ) -> tuple[IntArray, IntArray]:
        """Of the probes whose key matched, those whose group and string are the row's."""
        same = self.groups[rows] == groups_of(maybe)
        maybe, rows = maybe[same], rows[same]
        same = same_strings(strings, string_rows[maybe], self.strings, self.string_rows[rows])
        return maybe[same], rows[same]
