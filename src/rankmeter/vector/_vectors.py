"""Reading vectors: NumPy arrays, ``.npy`` files and ``.parquet`` tables, checked on the way in.

Every problem is one line that names the input and what is wrong with it: not 2-D, not numbers,
NaN or infinity (with the row), no vectors, rows of different lengths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.errors import FormatError

__all__ = ["load_vectors", "same_dimension"]

Float32Array = npt.NDArray[np.float32]


def _name(source: Any, what: str) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"<{what} array>"


def load_vectors(source: Any, what: str = "vectors") -> Float32Array:
    """A C-contiguous float32 matrix (vectors x dimensions) from an array or a file.

    Parameters
    ----------
    source : array-like, or path to a ``.npy`` or ``.parquet`` file
        Parquet: one list (or fixed-size list) column of floats, one vector per row (other,
        non-list columns such as an id are ignored); or, without a list column, one numeric
        column per dimension.
    what : str
        What the vectors are ("corpus", "queries"), for error messages about arrays.

    Raises
    ------
    FormatError
        Naming the file (or ``<corpus array>``) and what is wrong.
    """
    name = _name(source, what)
    if isinstance(source, (str, os.PathLike)):
        array = _read_file(Path(source), name)
    else:
        try:
            array = np.asarray(source)
        except (TypeError, ValueError) as exc:
            raise FormatError(name, f"not an array of numbers ({exc})") from None
    return _checked(array, name)


def _read_file(path: Path, name: str) -> Any:
    suffix = path.suffix.lower()
    if suffix not in (".npy", ".parquet", ".pq"):
        raise FormatError(
            name, f"unknown vector file type {suffix or '(none)'!r}; expected .npy or .parquet"
        )
    if not path.exists():
        raise FormatError(name, "no such file")
    if path.is_dir():
        raise FormatError(name, "is a directory, expected a file")
    if suffix == ".npy":
        try:
            return np.load(path, allow_pickle=False)
        except ValueError as exc:
            # Object arrays need pickle, which is never allowed for data files.
            raise FormatError(name, f"not a numeric .npy array ({exc})") from None
        except OSError as exc:
            raise FormatError(name, f"not a readable .npy file ({exc})") from None
    return _read_parquet(path, name)


def _read_parquet(path: Path, name: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(name, f"not a readable Parquet file ({exc})") from None
    lists = [
        field.name
        for field in table.schema
        if pa.types.is_list(field.type)
        or pa.types.is_large_list(field.type)
        or pa.types.is_fixed_size_list(field.type)
    ]
    if len(lists) > 1:
        raise FormatError(
            name,
            f"several list columns ({', '.join(lists)}); keep only the vector column",
        )
    if not lists:
        bad = [
            f"{field.name} ({field.type})"
            for field in table.schema
            if not (pa.types.is_floating(field.type) or pa.types.is_integer(field.type))
        ]
        if bad:
            raise FormatError(
                name,
                "expected one list column of floats, or one numeric column per dimension; "
                f"not numeric: {', '.join(bad)}",
            )
        if table.num_columns == 0:
            raise FormatError(name, "has no columns")
        columns = []
        for column_name in table.column_names:
            column = table.column(column_name)
            if column.null_count:
                raise FormatError(name, f"column {column_name!r} has empty (null) values")
            columns.append(column.to_numpy())
        return np.stack(columns, axis=1) if columns else np.empty((0, 0))
    column = table.column(lists[0]).combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise FormatError(name, f"column {lists[0]!r}: row {row} has no vector (null)")
    values = column.flatten()
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
        raise FormatError(name, f"column {lists[0]!r} holds {values.type}, expected floats")
    if values.null_count:
        raise FormatError(name, f"column {lists[0]!r} has null values inside vectors")
    lengths = column.value_lengths().to_numpy(zero_copy_only=False)
    if len(column) == 0:
        return np.empty((0, 0), dtype=np.float32)
    if (lengths != lengths[0]).any():
        row = int(np.flatnonzero(lengths != lengths[0])[0])
        raise FormatError(
            name,
            f"column {lists[0]!r}: row {row} has {int(lengths[row])} values but row 0 has "
            f"{int(lengths[0])}; every vector needs the same length",
        )
    flat = values.to_numpy(zero_copy_only=False)
    return flat.reshape(len(column), int(lengths[0]))


def _checked(array: Any, name: str) -> Float32Array:
    if array.dtype.kind not in "fiu":
        raise FormatError(name, f"expected floats, got dtype {array.dtype}")
    if array.ndim != 2:
        raise FormatError(
            name, f"expected a 2-D array (vectors x dimensions), got shape {array.shape}"
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise FormatError(name, f"has no vectors (shape {array.shape})")
    out = np.ascontiguousarray(array, dtype=np.float32)
    bad = ~np.isfinite(out)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(out[row, col]) else "infinity"
        original = np.asarray(array[row, col], dtype=np.float64)
        if np.isfinite(original):
            kind = f"{float(original):g}, too large for float32"
        raise FormatError(
            name, f"row {row}, dimension {col} is {kind}; vectors must be finite numbers"
        )
    return out


def same_dimension(corpus: Float32Array, queries: Float32Array, names: tuple[str, str]) -> None:
    """Queries and corpus must have the same number of dimensions."""
    if corpus.shape[1] != queries.shape[1]:
        raise FormatError(
            names[1],
            f"queries have {queries.shape[1]} dimensions but the corpus ({names[0]}) has "
            f"{corpus.shape[1]}",
        )
