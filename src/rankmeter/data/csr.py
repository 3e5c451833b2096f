"""CSR layout helpers: rows grouped in segments, segment ``i`` being rows
``offsets[i]:offsets[i+1]`` (Qrels and Run store every query that way, and so does the join).

Pure NumPy; public, as the join (metrics) and the comparison read the same layout.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
