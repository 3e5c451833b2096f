"""Which queries are compared, and each run joined with exactly those queries."""

from __future__ import annotations

import numpy as np

from rankmeter.data import Qrels, Run
from rankmeter.data._columns import IntArray
from rankmeter.metrics._ranked import Ranked, join
from rankmeter.results import Policies


def _join(qrels: Qrels, run: Run, policies: Policies, selected: IntArray) -> Ranked:
    """The run joined with every compared query (empty rankings where it has no results)."""
    full = join(
        qrels,
        run,
        rel=policies.rel,
        include_missing=True,
        judged_only=policies.judged_only,
    )
    if len(full.query_ids) == len(selected):
        return full
    return _restrict(full, np.searchsorted(full.qrels_rows, selected))


def _restrict(ranked: Ranked, keep: IntArray, depth: int | None = None) -> Ranked:
    """The same join for a subset of its queries, optionally cut to the top ``depth``."""
    from rankmeter.data._columns import gather_ranges

    starts = ranked.offsets[keep]
    lengths = ranked.offsets[keep + 1] - starts
    if depth is not None:
        lengths = np.minimum(lengths, depth)
    rows = gather_ranges(starts, lengths)
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    j_starts = ranked.judgment_offsets[keep]
    j_lengths = ranked.judgment_offsets[keep + 1] - j_starts
    j_rows = gather_ranges(j_starts, j_lengths)
    j_offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(j_lengths, out=j_offsets[1:])
    out = Ranked(
        ranked.query_ids[keep],
        offsets,
        ranked.grades[rows],
        ranked.judged[rows],
        j_offsets,
        ranked.judgment_grades[j_rows],
        ranked.rel,
    )
    out.qrels_rows = ranked.qrels_rows[keep]
    return out
