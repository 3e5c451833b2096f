"""A piece of a TREC run read by the compiled scanner (``rankmeter.data._native``), when the
piece is in the layout nearly every run file has.

:func:`scan_run_piece` reads whole lines of ``qid Q0 docid rank score tag``: six fields of
printable ASCII split by single spaces, empty lines skipped, scores written as decimal numbers
(``-1.5``, ``12``, ``3.2e-05``). It gives the columns Arrow's CSV reader gives for such a
piece under the streaming reader's options, the same strings and the same doubles (each score
correctly rounded, as Arrow and Python's ``float`` round), in one pass that copies only the two
id columns and leaves the other fields unread. Anything else gives None and the caller reads
the piece as before (Arrow, then the exact line-by-line reader), so what it accepts, refuses
and reports never changes; tests/io/test_scan.py compares the two readers on random pieces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter.data import _compiled

__all__ = ["scan_run_piece"]


def scan_run_piece(data: Any) -> Any:
    """The ``qid``, ``docid`` and ``score`` columns of a piece of a TREC run (a buffer of
    whole lines) as an Arrow table, or None: the compiled scanner is not built, or the piece
    is not in the common layout (see the module's docstring).

    >>> table = scan_run_piece(b"q1 Q0 d7 1 2.5 bm25\\nq1 Q0 d3 2 -1e-3 bm25\\n")
    >>> table is None or table.to_pydict() == {
    ...     "qid": ["q1", "q1"], "docid": ["d7", "d3"], "score": [2.5, -0.001]}
    True
    """
    native = _compiled.NATIVE
    if native is None:
        return None
    import pyarrow as pa

    size = len(memoryview(data))
    capacity = size // 12 + 2  # the shortest line, "q Q d 1 0 t\n", is 12 bytes
    q_offsets = np.empty(capacity, dtype=np.int32)
    d_offsets = np.empty(capacity, dtype=np.int32)
    scores = np.empty(capacity, dtype=np.float64)
    q_bytes = np.empty(max(size, 1), dtype=np.uint8)  # pages are touched only as filled
    d_bytes = np.empty(max(size, 1), dtype=np.uint8)
    counts = native.parse_run(data, q_offsets, q_bytes, d_offsets, d_bytes, scores)
    if counts is None:
        return None
    rows, q_used, d_used = counts

    # Copies of what was written (a few MB, far cheaper than the scan): the buffers were sized
    # for the worst case, and a view would keep them allocated as long as the table lives.
    def strings(offsets: Any, values: Any, used: int) -> Any:
        return pa.StringArray.from_buffers(
            rows, pa.py_buffer(offsets[: rows + 1].copy()), pa.py_buffer(values[:used].copy())
        )

    return pa.table(
        {
            "qid": strings(q_offsets, q_bytes, q_used),
            "docid": strings(d_offsets, d_bytes, d_used),
            # (from buffers: pa.array on a NumPy array would import pandas, 0.2 s, at first use)
            "score": pa.Array.from_buffers(
                pa.float64(), rows, [None, pa.py_buffer(scores[:rows].copy())]
            ),
        }
    )
