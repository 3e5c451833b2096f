"""Arrow <-> NumPy helpers: array types, Arrow columns read as NumPy without pandas, read-only
arrays.

Pure NumPy/Arrow: nothing here knows about qrels or runs. Other packages (metrics, io, vector,
comparison) use these helpers too, so they are public.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "FloatArray",
    "IntArray",
    "ObjArray",
    "arrow_ints",
    "arrow_strings",
    "compute",
    "compute_options",
    "import_pandas",
    "null_rows",
    "numpy_of",
    "one_chunk",
    "readonly",
    "release_arrow_memory",
    "take",
    "take_rows",
]

#: One-dimensional NumPy arrays of the three kinds the columns use.
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
ObjArray = npt.NDArray[np.object_]


def arrow_ints(values: npt.NDArray[Any]) -> Any:
    """An Arrow int64 array over a NumPy array, without ``pa.array`` (which imports pandas)."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def arrow_strings(texts: Sequence[str]) -> Any:
    """An Arrow string array of Python strings, without ``pa.array`` (which imports pandas to
    ask whether a list is a pandas object): their UTF-8 bytes joined, and their offsets.

    Raises UnicodeEncodeError for a string that is not valid Unicode (a lone surrogate).
    """
    import pyarrow as pa

    n = len(texts)
    joined = "".join(texts)
    if joined.isascii():  # (a character is a byte: the lengths are the strings' lengths)
        data = joined.encode("ascii")
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    else:
        encoded = [text.encode("utf-8") for text in texts]
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
    wide = len(data) >= 2**31 - 1
    offsets = np.zeros(n + 1, dtype=np.int64 if wide else np.int32)
    np.cumsum(lengths, out=offsets[1:])
    kind = pa.large_string() if wide else pa.string()
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def import_pandas() -> Any:
    """The pandas module, for the ``to_pandas()`` methods: without it (pandas is the
    ``[pandas]`` extra), one clear error naming the extra instead of pyarrow's
    ModuleNotFoundError from deep inside its conversion.

    Raises
    ------
    RankmeterError
        When pandas cannot be imported.
    """
    try:
        import pandas
    except ImportError as exc:
        from rankmeter.errors import RankmeterError

        raise RankmeterError(
            f"to_pandas() needs pandas: pip install 'rankmeter[pandas]' ({exc})"
        ) from None
    return pandas


def compute(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow's compute function ``name`` on ``args`` (Arrow arrays, chunked arrays, tables or
    scalars), with ``options`` (see :func:`compute_options`).

    Called through ``pyarrow._compute``, which runs every compute function and loads in a few
    milliseconds, not through ``pyarrow.compute``, whose import builds a Python wrapper for
    each of its hundreds of functions (about 30 ms at every start of a command). The methods
    of Arrow arrays that compute (``take``, ``filter``, ``cast``, ...) import it too, so the
    paths that run at every evaluation call this instead.
    """
    return _call_function()(name, list(args), options)


def compute_options(kind: str, **values: Any) -> Any:
    """An options object of Arrow's compute functions, such as ``SortOptions``."""
    return getattr(_compute_module(), kind)(**values)


def take(array: Any, rows: npt.NDArray[Any]) -> Any:
    """``array[rows]`` (an Arrow Array or ChunkedArray; see :func:`take_rows` for a few rows
    of a long chunked one)."""
    return compute("take", array, arrow_ints(rows))


def load_arrow() -> None:
    """Import, in the calling thread, the Arrow modules the functions here use.

    Two threads that import pyarrow at the same moment can see it half-initialised
    (``ImportError: cannot import name 'BuildInfo' from partially initialized module
    'pyarrow.lib'``, seen under load): code that starts threads which use Arrow calls this
    first.
    """
    import pyarrow  # noqa: F401

    _compute_module()


def _compute_module() -> Any:
    try:
        import pyarrow._compute as module  # pyarrow's own: pyarrow.compute re-exports it
    except ImportError:  # pragma: no cover - a pyarrow laid out otherwise
        import pyarrow.compute as module
    return module


def _call_function() -> Any:
    return _compute_module().call_function


def one_chunk(array: Any) -> Any:
    """An Arrow Array: a ChunkedArray's chunks joined (one sequential copy), an Array as is.

    Taking rows from a ChunkedArray costs about as much as joining all of it, whatever the
    number of rows taken, so a column that rows are taken from again and again is joined once.
    """
    import pyarrow as pa

    if not isinstance(array, pa.ChunkedArray):
        return array
    if array.num_chunks == 1:
        return array.chunk(0)
    return array.combine_chunks()


def take_rows(array: Any, rows: npt.NDArray[Any]) -> Any:
    """``array[rows]`` as one Arrow Array, for an Array or a ChunkedArray; from a ChunkedArray,
    chunk by chunk, without joining its chunks (few rows from a long column cost little)."""
    import pyarrow as pa

    if not isinstance(array, pa.ChunkedArray):
        return take(array, rows)
    if array.num_chunks == 1:
        return take(array.chunk(0), rows)
    order = np.argsort(rows, kind="stable")
    ordered = np.asarray(rows)[order]
    bounds = np.zeros(array.num_chunks + 1, dtype=np.int64)
    np.cumsum([len(c) for c in array.chunks], out=bounds[1:])
    which = np.searchsorted(bounds, ordered, side="right") - 1  # ascending, as `ordered`
    cuts = np.searchsorted(which, np.arange(array.num_chunks + 1)).tolist()
    parts = [
        take(array.chunk(c), ordered[cuts[c] : cuts[c + 1]] - bounds[c])
        for c in range(array.num_chunks)
        if cuts[c + 1] > cuts[c]
    ]
    taken = pa.concat_arrays(parts) if parts else pa.array([], type=array.type)
    if np.all(order[1:] > order[:-1]):
        return taken
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order), dtype=np.int64)
    return take(taken, inverse)


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
