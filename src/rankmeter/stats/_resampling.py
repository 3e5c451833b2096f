"""Common random numbers: random sign flips and bootstrap resamples as matrix products.

Every randomised statistic here is a weighted sum of a column, ``w @ x``, with one row of
weights per resample: 0/1 flip indicators for the randomization test, resample counts for the
bootstrap. The weights are drawn from ``Generator(PCG64(seed))`` in chunks whose sizes depend
only on ``n`` and ``resamples``, never on the columns, so every column sees the very same
resamples (common random numbers) and its result does not depend on which columns come with it.

The products are taken in blocks of a fixed number of columns (zero-padded), so that BLAS runs
the same kernel on the same shapes whatever the number of columns: a single column would
otherwise go through a matrix-vector routine that rounds differently.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from rankmeter.stats._checks import FloatArray

#: Columns per matrix product (padding with zeros): the same BLAS shapes for any column count.
BLOCK_COLUMNS = 16
#: About this many weights are drawn and multiplied at a time (16 MiB of float64).
CHUNK_ELEMENTS = 1 << 21
#: At most this many resamples per chunk (for short columns).
MAX_CHUNK_ROWS = 1024
#: Statistics closer than this fraction of the column's scale count as equal. Rounding in a sum
#: of n terms is at most about n * 2.2e-16 of that scale, far below this for any realistic n.
RELATIVE_TOLERANCE = 1e-9


def chunk_sizes(n: int, resamples: int) -> Iterator[int]:
    """Number of resamples in each chunk: a function of ``n`` and ``resamples`` only."""
    rows = max(1, min(MAX_CHUNK_ROWS, CHUNK_ELEMENTS // max(n, 1)))
    done = 0
    while done < resamples:
        size = min(rows, resamples - done)
        yield size
        done += size


def flip_weights(n: int, resamples: int, seed: int) -> Iterator[FloatArray]:
    """0/1 indicators (rows x n): which queries have their difference's sign flipped."""
    rng = np.random.Generator(np.random.PCG64(seed))
    n_bytes = (n + 7) // 8
    for rows in chunk_sizes(n, resamples):
        random_bytes = rng.integers(0, 256, size=(rows, n_bytes), dtype=np.uint8)
        yield np.unpackbits(random_bytes, axis=1, count=n).astype(np.float64)


#: Above this many queries the sign patterns are never enumerated (2^n would overflow the
#: count; MAX_RESAMPLES is far below 2^62 anyway).
_MAX_EXACT_N = 62


def exact_randomization(n: int, resamples: int) -> bool:
    """True where all 2^n sign patterns fit in ``resamples``: the randomization test counts
    them all (exact) instead of drawing ``resamples`` of them."""
    return 1 <= n <= _MAX_EXACT_N and 2**n <= resamples


def every_flip(n: int) -> Iterator[FloatArray]:
    """Every one of the 2^n 0/1 flip patterns (rows x n), in chunks, each exactly once."""
    for start in range(0, 2**n, MAX_CHUNK_ROWS):  # n <= 62: a chunk is at most 62 KiB x 8
        stop = min(start + MAX_CHUNK_ROWS, 2**n)
        codes = np.arange(start, stop, dtype=np.int64)[:, None]
        yield ((codes >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)


def bootstrap_weights(n: int, resamples: int, seed: int) -> Iterator[FloatArray]:
    """Resample counts (rows x n): how often each query is drawn, n draws with replacement."""
    rng = np.random.Generator(np.random.PCG64(seed))
    for rows in chunk_sizes(n, resamples):
        drawn = rng.integers(0, n, size=(rows, n), dtype=np.int64)
        drawn += np.arange(0, rows * n, n, dtype=np.int64)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rows * n)
        yield counts.reshape(rows, n).astype(np.float64)


class Columns:
    """The columns of an (n, m) matrix, laid out for weighted sums ``weights @ column``."""

    def __init__(self, values: FloatArray) -> None:
        n, m = values.shape
        self.m = m
        self.blocks: list[tuple[int, int, FloatArray]] = []
        for start in range(0, m, BLOCK_COLUMNS):
            stop = min(start + BLOCK_COLUMNS, m)
            block = np.zeros((n, BLOCK_COLUMNS), dtype=np.float64)
            block[:, : stop - start] = values[:, start:stop]
            self.blocks.append((start, stop, block))

    def weighted_sums(self, weights: FloatArray) -> FloatArray:
        """``weights @ values`` (rows x m), each column computed the same way whatever m is."""
        out = np.empty((weights.shape[0], self.m), dtype=np.float64)
        for start, stop, block in self.blocks:
            out[:, start:stop] = (weights @ block)[:, : stop - start]
        return out


def column_sums(values: FloatArray) -> FloatArray:
    """Sum of each column, computed row by row of the transpose (pairwise, column-independent)."""
    return np.asarray(np.ascontiguousarray(values.T).sum(axis=1), dtype=np.float64)


def constant_columns(values: FloatArray) -> npt.NDArray[np.bool_]:
    """True where every value of the column is the same (or the column is empty)."""
    if values.shape[0] == 0:
        return np.ones(values.shape[1], dtype=bool)
    return np.asarray((values == values[0]).all(axis=0))
