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

    read = native.parse_run(data)
    if read is None:
        return None
    rows, q_offsets, q_bytes, d_offsets, d_bytes, scores = read

    # Each column's memory as the scanner sized it (a Block); Arrow reads it where it is.
    def strings(offsets: Any, values: Any) -> Any:
        return pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(values))

    return pa.table(
        {
            "qid": strings(q_offsets, q_bytes),
            "docid": strings(d_offsets, d_bytes),
            # (from buffers: pa.array on a NumPy array would import pandas, 0.2 s, at first use)
            "score": pa.Array.from_buffers(pa.float64(), rows, [None, pa.py_buffer(scores)]),
        }
    )
