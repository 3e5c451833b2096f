"""Two loops over segments of keyed pairs, compiled (the C extension ``rankmeter.data._native``),
for the diversity metrics (rankmeter.metrics._subtopic_pairs holds their NumPy twins).

Items lie in segments (CSR ``offsets``); item ``j`` reads row ``rows[j]`` of a *pair table*
(``table``: each row's pairs as offsets into ``keys`` and ``grades``), the pairs whose grade is
>= ``threshold`` and >= 0 counting. :func:`key_repeats` counts, per pair, the pairs before it in
its segment with the same key; :func:`greedy_ideal` orders each segment's items greedily by
their keys' weights. Each returns None where the extension is not built (or
``RANKMETER_PURE=1``): the caller then runs its NumPy twin, which gives the same answers
(tests/metrics/test_diversity_native.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter.data import _compiled
from rankmeter.data.arrays import FloatArray, IntArray

__all__ = ["greedy_ideal", "key_repeats"]

#: a pair table: each row's pairs (offsets, n_rows + 1), their keys and their grades
PairTable = tuple[IntArray, IntArray, FloatArray]


def _ints(values: Any) -> IntArray:
    return np.ascontiguousarray(values, dtype=np.int64)


def key_repeats(
    offsets: IntArray,
    rows: IntArray,
    ranks: IntArray,
    depth: int,
    table: PairTable,
    threshold: float,
    n_keys: int,
    powers: FloatArray,
) -> tuple[FloatArray, FloatArray, IntArray, IntArray, IntArray] | None:
    """Per item (none where rows[j] < 0 or ranks[j] >= depth), ``score``: the sum over its counting pairs of
    ``powers[seen]`` (seen: the counting pairs before it in the segment with its key, added in
    the pairs' order), and ``new``: how many have seen 0; and the counting pairs (item, key,
    seen) in segment, item and pair order. None without the extension."""
    native = _compiled.NATIVE
    if native is None:
        return None
    n = len(rows)
    score = np.empty(n, dtype=np.float64)
    new = np.empty(n, dtype=np.float64)
    pair_offsets, keys, grades = table
    room = len(keys)  # (each item's row distinct, as in every join: room for every pair)
    while True:
        out = [np.empty(room, dtype=np.int64) for _ in range(3)]
        count = native.key_repeats(
            _ints(offsets),
            _ints(rows),
            _ints(ranks),
            int(depth),
            _ints(pair_offsets),
            _ints(keys),
            np.ascontiguousarray(grades, dtype=np.float64),
            float(threshold),
            int(n_keys),
            np.ascontiguousarray(powers, dtype=np.float64),
            score,
            new,
            *out,
        )
        if count <= room:
            break
        room = count
    item, key, seen = (o[:count] for o in out)
    return score, new, item, key, seen


def greedy_ideal(
    offsets: IntArray,
    rows: IntArray,
    tie_keys: IntArray,
    table: PairTable,
    threshold: float,
    n_keys: int,
    factor: float,
    width: int,
) -> tuple[FloatArray, IntArray, IntArray, int] | None:
    """Per segment, its candidates (items with a counting pair) ordered greedily to ``width``
    ranks: at each rank the candidate of the largest score (its keys' weights summed; equal
    scores: the largest ``tie_keys``) while that is > 0, its keys' weights then multiplied by
    ``factor`` (scores kept by subtraction, see _native.c). Returns ``gains`` and ``picked``
    (segments x width: the placed item's weights summed, and the item; 0 and -1 where none),
    ``distinct`` (per segment, the different keys of its counting pairs) and the most
    candidates of a segment (``tie_keys`` are read only where ``width`` > 0). None without the
    extension."""
    native = _compiled.NATIVE
    if native is None:
        return None
    n_segments = len(offsets) - 1
    gains = np.empty((n_segments, width), dtype=np.float64)
    picked = np.empty((n_segments, width), dtype=np.int64)
    distinct = np.empty(n_segments, dtype=np.int64)
    pair_offsets, keys, grades = table
    most = native.greedy_ideal(
        _ints(offsets),
        _ints(rows),
        _ints(tie_keys),
        _ints(pair_offsets),
        _ints(keys),
        np.ascontiguousarray(grades, dtype=np.float64),
        float(threshold),
        int(n_keys),
        float(factor),
        int(width),
        gains,
        picked,
        distinct,
    )
    return gains, picked, distinct, int(most)
