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
    arrow_ints,
    arrow_strings,
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
    "intern_grouped_arrow",
    "intern_natural",
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
    string array or many ids of any kind (made an Arrow array), in Python for a few.

    Numeric ids come first, sorted by their value (an id's text breaks a tie only among equal
    values, ``7`` and ``007``: sorted again with their text where any are equal), then the
    others, sorted by their text alone: no sort of every id's text, and no key made per id.
    """
    import pyarrow as pa

    if not isinstance(ids, pa.Array):
        texts = [str(q) for q in ids]
        if len(texts) > _FEW:
            try:
                strings = arrow_strings(texts)
            except UnicodeEncodeError:  # (a lone surrogate): sorted in Python
                pass
            else:
                return natural_order(strings)
        return _natural_order_in_python(texts)
    strings = ids
    n = len(strings)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    # ASCII digits only and not empty: str.isascii() and str.isdigit(), as natural_key asks.
    numeric = numpy_of(compute("ascii_is_decimal", strings))
    numbers_at = np.flatnonzero(numeric)
    others_at = np.flatnonzero(~numeric)
    parts: list[IntArray] = []
    if len(numbers_at):
        digits = strings if len(others_at) == 0 else take(strings, numbers_at)
        if int(compute("max", compute("binary_length", digits)).as_py()) > 18:
            return _natural_order_in_python(strings.to_pylist())  # beyond int64: Python's ints
        as_int = compute_options("CastOptions", target_type=pa.int64())
        numbers = numpy_of(compute("cast", digits, options=as_int))
        by_value = _distinct_order(numbers)
        if by_value is None:  # equal values, other texts (0007, 7)
            by_value = np.lexsort((_text_rank(digits), numbers))
        parts.append(numbers_at[by_value])
    if len(others_at):
        texts = strings if len(numbers_at) == 0 else take(strings, others_at)
        parts.append(others_at[numpy_of(compute("array_sort_indices", texts)).astype(np.int64)])
    return np.concatenate(parts).astype(np.int64, copy=False)


#: Up to this many ids are sorted by :func:`natural_key` in Python (no Arrow array to make).
_FEW = 1000


def _natural_order_in_python(texts: list[str]) -> IntArray:
    keys = [natural_key(q) for q in texts]
    return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def _distinct_order(numbers: IntArray) -> IntArray | None:
    """The permutation that sorts ``numbers`` (>= 0), or None where two are equal.

    Numbers spread over at most twice as many values as there are (query ids 1 to N, as
    numbered ids usually are) are placed, not sorted: each at its value's slot of a table
    (one pass, no comparisons); others are sorted.
    """
    n = len(numbers)
    low, high = int(numbers.min()), int(numbers.max())
    if high - low < 2 * n:
        slots = np.full(high - low + 1, -1, dtype=np.int64)
        slots[numbers - low] = np.arange(n, dtype=np.int64)
        placed = slots[slots >= 0]
        return placed if len(placed) == n else None
    order = np.argsort(numbers)
    ranked = numbers[order]
    return None if bool((ranked[1:] == ranked[:-1]).any()) else order


def _text_rank(strings: Any) -> IntArray:
    """Each string's place in byte order among ``strings``."""
    by_text = numpy_of(compute("array_sort_indices", strings)).astype(np.int64)
    rank = np.empty(len(by_text), dtype=np.int64)
    rank[by_text] = np.arange(len(by_text), dtype=np.int64)
    return rank


def intern(values: Any, origin: Origin, what: str) -> tuple[IntArray, ObjArray]:
    """Encode ids as int codes into a vocabulary sorted in natural order.

    Returns ``(codes, vocabulary)`` with ``vocabulary[codes] == values``.
    """
    codes, vocabulary = intern_natural(values, origin, what)
    return codes, np.asarray(vocabulary.to_pylist(), dtype=object)


def intern_natural(values: Any, origin: Origin, what: str) -> tuple[IntArray, Any]:
    """:func:`intern` with the vocabulary kept as an Arrow string array: no Python object
    per id (a Qrels makes them only when its ids are asked for)."""
    strings = string_column(values, origin, what)
    numbered = _intern_numbers(strings)
    if numbered is not None:
        return numbered
    codes, first_seen = _encode(strings)
    order = natural_order(first_seen)
    remap = np.empty(len(first_seen), dtype=np.int64)
    remap[order] = np.arange(len(first_seen), dtype=np.int64)
    return remap[codes], take(first_seen, order)


def _intern_numbers(strings: Any) -> tuple[IntArray, Any] | None:
    """:func:`intern_natural` of ids that are all numbers written without leading zeros
    (``1`` to ``N``, as numbered queries usually are) and spread over at most twice as many
    values as there are ids: equal ids are equal numbers, so each id's code is its number's
    rank among the numbers present, found by placing them in a table (no hashing, no sort).
    None for any other ids."""
    import pyarrow as pa

    n = len(strings)
    if n == 0 or not numpy_of(compute("ascii_is_decimal", strings)).all():
        return None
    lengths = numpy_of(compute("binary_length", strings))
    if int(lengths.max()) > 18:
        return None  # (beyond int64)
    zero = compute_options("MatchSubstringOptions", pattern="0")
    if (numpy_of(compute("starts_with", strings, options=zero)) & (lengths > 1)).any():
        return None  # (007 and 7 are two ids of one number)
    del lengths
    as_int = compute_options("CastOptions", target_type=pa.int64())
    numbers = numpy_of(compute("cast", strings, options=as_int))
    low, high = int(numbers.min()), int(numbers.max())
    if high - low >= 2 * n:
        return None
    numbers -= low
    present = np.zeros(high - low + 1, dtype=bool)
    present[numbers] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    codes = rank[numbers]
    del rank, numbers
    # The ids present, in order: their numbers written out (no leading zeros: as given).
    values = np.flatnonzero(present) + low
    as_text = compute_options("CastOptions", target_type=strings.type)
    return codes, compute("cast", arrow_ints(values), options=as_text)


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
    codes, vocabulary = intern_grouped_arrow(values, origin, what)
    return codes, np.asarray(vocabulary.to_pylist(), dtype=object)


def intern_grouped_arrow(values: Any, origin: Origin, what: str) -> tuple[IntArray, Any]:
    """:func:`intern_grouped` with the vocabulary kept as an Arrow string array: no Python
    object per id (a Run makes them only when its ids are asked for), and whether an id comes
    back after another is found by hashing the ids (:func:`_encode`), not by a Python set."""
    strings = string_column(values, origin, what)
    n = len(strings)
    if n < 2:
        return _encode(strings)
    changes = numpy_of(compute("not_equal", strings[1:], strings[:-1]))
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1)).astype(np.int64)
    del changes
    ids = one_chunk(take_rows(strings, starts))
    if len(_encode(ids)[1]) != len(ids):  # (hashed: Arrow's count_distinct is far slower)
        return _encode(strings)
    lengths = np.diff(np.append(starts, n))
    codes = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    return codes, ids


def intern_docs(values: Any, origin: Origin) -> tuple[IntArray, Any]:
    """Encode document ids as int codes; the vocabulary stays an Arrow string array (compact)."""
    return _encode(string_column(values, origin, "doc id"))
