"""Input columns checked and converted: ids to Arrow strings, numbers to float64.

Every bad value is reported through the table's :class:`~rankmeter.data.origin.Origin`, with
its row (so its file line), and nothing the caller gave is modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankmeter.data.arrays import (
    _NUMPY_TYPES,
    FloatArray,
    compute,
    compute_options,
    null_rows,
    numpy_of,
)
from rankmeter.data.origin import Origin

__all__ = ["as_float_column", "string_column"]


def string_column(values: Any, origin: Origin, what: str) -> Any:
    """A validated Arrow string column (an Array or a ChunkedArray, as given; chunks are not
    copied into one): no nulls, no empty strings; integers become their decimal text."""
    import pyarrow as pa

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
            values = compute(
                "cast", values, options=compute_options("CastOptions", target_type=pa.string())
            )
        else:
            raise origin.error(
                None, f"{what} column must hold strings or integers, not {values.type}"
            )
    if values.null_count:
        raise origin.error(int(null_rows(values)[0]), f"missing {what}")
    row = _first_empty(values)
    if row is not None:
        raise origin.error(row, f"empty {what}")
    return values


def _first_empty(strings: Any) -> int | None:
    """The row of the first empty string (an Arrow string array or chunked array without
    nulls), read from the offsets: a string is empty where its offset does not advance."""
    import pyarrow as pa

    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    before = 0
    for chunk in chunks:
        n = len(chunk)
        if n:
            wide = pa.types.is_large_string(chunk.type)
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32)
            own = offsets[chunk.offset : chunk.offset + n + 1]
            empty = own[1:] == own[:-1]
            if empty.any():
                return before + int(np.argmax(empty))
        before += n
    return None


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
