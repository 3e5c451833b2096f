"""Query and doc ids: their natural order, and interning them into integer codes.

Ids are validated (:mod:`rankmeter.data._inputs`) on the way in: strings or integers, no nulls,
no empty ids, valid Unicode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter.data import _compiled
from rankmeter.data._inputs import string_column
from rankmeter.data.arrays import (
    IntArray,
    ObjArray,
    compute,
    compute_options,
    numpy_of,
    one_chunk,
    take,
    take_rows,
)
from rankmeter.data.hashing import string_hashes
from rankmeter.data.origin import Origin

__all__ = [
    "intern",
    "intern_docs",
    "intern_first_seen",
    "intern_grouped",
    "natural_key",
    "natural_order",
]


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

    if not isinstance(ids, pa.Array):
        keys = [natural_key(str(q)) for q in ids]
        return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
    strings = ids
    n = len(strings)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    pattern = compute_options("MatchSubstringOptions", pattern="^[0-9]+$")
    digits = compute("match_substring_regex", strings, options=pattern)
    numeric = numpy_of(digits)
    if numeric.any():
        longest = compute("max", compute("binary_length", compute("filter", strings, digits)))
        if int(longest.as_py()) > 18:
            return natural_order(strings.to_pylist())  # beyond int64: Python's integers
    by_text = numpy_of(compute("array_sort_indices", strings)).astype(np.int64)
    text_rank = np.empty(n, dtype=np.int64)
    text_rank[by_text] = np.arange(n, dtype=np.int64)
    number = np.zeros(n, dtype=np.int64)
    at = np.flatnonzero(numeric)
    if len(at):
        as_int = compute_options("CastOptions", target_type=pa.int64())
        number[at] = numpy_of(compute("cast", take(strings, at), options=as_int))
    return np.lexsort((text_rank, number, ~numeric)).astype(np.int64)


def intern(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes into a vocabulary sorted in natural order.

    Returns ``(codes, vocabulary)`` with ``vocabulary[codes] == values``.
    """
    codes, first_seen = _dictionary_encode(values, origin, what)
    order = natural_order(first_seen)
    remap = np.empty(len(first_seen), dtype=np.int64)
    remap[order] = np.arange(len(first_seen), dtype=np.int64)
    vocabulary = np.asarray(take(first_seen, order).to_pylist(), dtype=object)
    return remap[codes], vocabulary


def intern_first_seen(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes numbered in order of first appearance."""
    codes, first_seen = _dictionary_encode(values, origin, what)
    return codes, np.asarray(first_seen.to_pylist(), dtype=object)


def _dictionary_encode(values: Any, origin: Origin, what: str) -> tuple[IntArray, Any]:
    return _encode(string_column(values, origin, what))


def _encode(strings: Any) -> tuple[IntArray, Any]:
    """Arrow's ``dictionary_encode`` of a string column: a code per row, numbered in order of
    first appearance, and the distinct strings in that order (an Arrow array). The compiled
    loop, where built, does it on the strings' hashes (the same codes and strings)."""
    import pyarrow as pa

    native = _compiled.NATIVE
    if native is not None:
        array = one_chunk(strings)
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            n = len(array)
            codes = np.empty(n, dtype=np.int64)
            firsts = np.empty(n, dtype=np.int64)
            offsets, wide, first, data = _compiled.string_parts(array)
            distinct = native.dictionary_codes(
                offsets, wide, first, n, data, string_hashes(array), codes, firsts
            )
            return codes, take(array, firsts[:distinct])
    encoded = compute("dictionary_encode", strings)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return numpy_of(encoded.indices).astype(np.int64), encoded.dictionary


def intern_grouped(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Like :func:`intern_first_seen`, faster for ids that come in runs of equal values (a
    TREC run's query column): ids are compared with their neighbours, and only when some id
    comes back after another one does it fall back to hashing every row."""
    strings = string_column(values, origin, what)
    n = len(strings)
    if n < 2:
        return intern_first_seen(strings, origin, what)
    changes = numpy_of(compute("not_equal", strings[1:], strings[:-1]))
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1)).astype(np.int64)
    del changes
    ids = take_rows(strings, starts).to_pylist()
    if len(set(ids)) != len(ids):
        return intern_first_seen(strings, origin, what)
    lengths = np.diff(np.append(starts, n))
    codes = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    return codes, np.asarray(ids, dtype=object)


def intern_docs(values: Any, origin: Origin) -> tuple[IntArray, Any]:
    """Encode document ids as int codes; the vocabulary stays an Arrow string array (compact)."""
    return _encode(string_column(values, origin, "doc id"))
