"""Which queries are compared, and each run joined with exactly those queries.

The compared queries are the judged queries that at least one system returned results for. A
system without results for one of them scores 0 on it (trec_eval -c, over the union of the
systems' queries), so every system is paired on the same queries and none gains by skipping
hard ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rankmeter.data import Qrels, Run
from rankmeter.data.arrays import IntArray
from rankmeter.data.csr import gather_ranges
from rankmeter.errors import PolicyError
from rankmeter.metrics import Ranked, join
from rankmeter.results import Policies


@dataclass(frozen=True)
class ComparedQueries:
    """The queries a comparison is made on.

    Attributes
    ----------
    rows : their rows in the qrels (qrels order)
    ids : their ids, in the same order
    answered : per system, the query ids it returned results for
    skipped : judged queries that no system returned results for (left out)
    """

    rows: IntArray
    ids: tuple[str, ...]
    answered: Mapping[str, frozenset[str]]
    skipped: int

    def note(self) -> list[str]:
        """What a reader should know about the queries left out (nothing when none were)."""
        if not self.skipped:
            return []
        return [
            f"{self.skipped} judged queries without results from any system are left out "
            f"({len(self.rows)} compared)"
        ]


def select_queries(qrels: Qrels, systems: Sequence[Run]) -> ComparedQueries:
    """The judged queries that some system answered, or a PolicyError when there are none."""
    answered = {run.name: frozenset(run.query_ids) for run in systems}
    index = qrels.query_rows()
    chosen = np.zeros(qrels.n_queries, dtype=bool)
    for queries in answered.values():
        chosen[[index[q] for q in queries if q in index]] = True
    rows = np.flatnonzero(chosen)
    if len(rows) == 0:
        raise PolicyError(
            "no run has results for any judged query: check that the runs and the qrels belong "
            "together"
        )
    all_ids = qrels.query_ids
    return ComparedQueries(
        rows=rows,
        ids=tuple(str(all_ids[i]) for i in rows),
        answered=answered,
        skipped=qrels.n_queries - len(rows),
    )


def join_compared(qrels: Qrels, run: Run, policies: Policies, rows: IntArray) -> Ranked:
    """The run joined with every compared query (empty rankings where it has no results)."""
    full = join(
        qrels,
        run,
        rel=policies.rel,
        include_missing=True,
        judged_only=policies.judged_only,
        compact=True,
    )
    if len(full.query_ids) == len(rows):
        return full
    return restrict(full, np.searchsorted(full.qrels_rows, rows))


def restrict(ranked: Ranked, keep: IntArray) -> Ranked:
    """The same join for a subset of its queries (``keep``: their positions in ``ranked``)."""
    starts = ranked.offsets[keep]
    lengths = ranked.offsets[keep + 1] - starts
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
        positions=ranked.positions[rows] if ranked.compact else None,
        num_ret=ranked.num_ret[keep] if ranked.compact else None,
    )
    out.qrels_rows = ranked.qrels_rows[keep]
    return out
