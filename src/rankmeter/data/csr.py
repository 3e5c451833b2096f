"""CSR layout helpers: rows grouped in segments, segment ``i`` being rows
``offsets[i]:offsets[i+1]`` (Qrels and Run store every query that way, and so does the join).

Pure NumPy; public, as the join (metrics) and the comparison read the same layout.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankmeter.data import _compiled
from rankmeter.data.arrays import IntArray

__all__ = ["gather_ranges", "offsets_from_sorted", "row_groups", "segments_repeat"]


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


def segments_repeat(offsets: IntArray, keys: npt.NDArray[np.uint64]) -> bool:
    """Whether some segment ``keys[offsets[i]:offsets[i+1]]`` holds a value twice.

    Each segment is sorted on its own (small sorts stay in cache: several times faster than one
    sort of all keys), first on the keys' upper 32 bits, half the memory to sort; only the
    segments where those repeat are checked again on all 64 bits (for well-mixed keys, one
    segment of 1,000 in about 8,000).
    """
    native = _compiled.NATIVE
    if native is not None:
        return bool(
            native.segments_repeat(
                np.ascontiguousarray(offsets, dtype=np.int64),
                np.ascontiguousarray(keys, dtype=np.uint64),
            )
        )
    lengths = np.diff(offsets)
    if len(lengths) == 0 or int(lengths.max()) < 2:
        return False
    upper = (keys >> np.uint64(32)).astype(np.uint32)
    suspects = _segments_with_repeats(offsets[:-1], lengths, upper)
    if len(suspects) == 0:
        return False
    starts = offsets[suspects]
    rows = gather_ranges(starts, lengths[suspects])
    again = np.zeros(len(suspects) + 1, dtype=np.int64)
    np.cumsum(lengths[suspects], out=again[1:])
    return len(_segments_with_repeats(again[:-1], lengths[suspects], keys[rows])) > 0


def _segments_with_repeats(
    starts: IntArray, lengths: IntArray, keys: npt.NDArray[np.unsignedinteger]
) -> IntArray:
    """The segments (indices) whose keys repeat: ``keys[starts[i] : starts[i] + lengths[i]]``.

    Segments of a length that many share (a run's 1,000 or 100 results per query) are sorted
    as rows of a matrix, read in place when they lie side by side; the others are padded to the
    next power of two with the largest key, a matrix per power.
    """
    found: list[IntArray] = []
    sized = np.flatnonzero(lengths >= 2)
    values, counts = np.unique(lengths[sized], return_counts=True)
    common = values[counts >= 8]
    for length in common.tolist():
        segs = sized[lengths[sized] == length]
        first, last = int(starts[segs[0]]), int(starts[segs[-1]])
        if last - first == (len(segs) - 1) * length:  # side by side: a view, no gather
            block = keys[first : last + length].reshape(len(segs), length)
        else:
            block = keys[gather_ranges(starts[segs], lengths[segs])].reshape(len(segs), length)
        block = np.sort(block, axis=1)
        found.append(segs[(block[:, 1:] == block[:, :-1]).any(axis=1)])
    rare = sized[~np.isin(lengths[sized], common)]
    if len(rare):
        classes = np.ceil(np.log2(lengths[rare])).astype(np.int64)
        top = np.iinfo(keys.dtype).max
        # The distinct classes (np.unique would load numpy.ma: 8 ms at every start).
        ordered = np.sort(classes)
        for c in ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))].tolist():
            segs = rare[classes == c]
            seg_lengths = lengths[segs]
            width = int(seg_lengths.max())
            rows = gather_ranges(starts[segs], seg_lengths)
            rank = rows - np.repeat(starts[segs], seg_lengths)
            block = np.full((len(segs), width), top, dtype=keys.dtype)
            block[np.repeat(np.arange(len(segs)), seg_lengths), rank] = keys[rows]
            block.sort(axis=1)
            # The first `length` sorted values of a row are its segment's values (padding is
            # the largest value), so only pairs inside that prefix are compared.
            inside = np.arange(width - 1)[None, :] < (seg_lengths - 1)[:, None]
            found.append(segs[((block[:, 1:] == block[:, :-1]) & inside).any(axis=1)])
    return np.sort(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
