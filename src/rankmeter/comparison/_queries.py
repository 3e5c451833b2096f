"""Which queries are compared, and each run joined with exactly those queries.

By default the compared queries are every judged query (``include_missing=True``, as
trec_eval -c): the set depends on the qrels alone, never on which systems are compared, so
adding a system to a comparison leaves every other pair's numbers as they were. With
``include_missing=False`` they are the judged queries that at least one compared system
returned results for (a set that moves when a system is added or removed). Either way a system
without results for a compared query scores 0 on it, so every system is paired on the same
queries and none gains by skipping hard ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

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
    skipped : judged queries that no system returned results for (left out; always 0 with
        ``include_missing``)
    include_missing : every judged query is compared (True), or only those some system
        answered (False)
    """

    rows: IntArray
    ids: tuple[str, ...]
    answered: Mapping[str, frozenset[str]]
    skipped: int
    include_missing: bool = True

    def filled(self) -> dict[str, int]:
        """Per system, how many compared queries it returned nothing for (each scores 0)."""
        return {
            name: sum(1 for q in self.ids if q not in queries)
            for name, queries in self.answered.items()
        }

    def note(self) -> list[str]:
        """What a reader should know about the queries left out, or answered by no system
        (nothing when there are none)."""
        if self.include_missing:
            nobody = sum(1 for q in self.ids if not any(q in a for a in self.answered.values()))
            if not nobody:
                return []
            return [
                f"{nobody} judged {'query has' if nobody == 1 else 'queries have'} no results "
                "from any system: every system scores 0 there (a tie)"
            ]
        if not self.skipped:
            return []
        return [
            f"{self.skipped} judged queries without results from any system are left out "
            f"({len(self.rows)} compared)"
        ]


class Answering(Protocol):
    """What :func:`select_queries` reads of a system: its name and the queries it answered
    (a :class:`~rankmeter.Run`, or a :class:`~rankmeter.comparison.GivenRun`)."""

    @property
    def name(self) -> str: ...

    @property
    def query_ids(self) -> tuple[str, ...]: ...


def select_queries(
    qrels: Qrels, systems: Sequence[Answering], *, include_missing: bool = True
) -> ComparedQueries:
    """Every judged query (``include_missing``), or the judged queries that some system
    answered; a PolicyError when no system answered any judged query."""
    answered = {run.name: frozenset(run.query_ids) for run in systems}
    index = qrels.query_rows()
    chosen = np.zeros(qrels.n_queries, dtype=bool)
    for queries in answered.values():
        chosen[[index[q] for q in queries if q in index]] = True
    if not chosen.any():
        raise PolicyError(
            "no run has results for any judged query: check that the runs and the qrels belong "
            "together"
        )
    if include_missing:
        chosen[:] = True
    rows = np.flatnonzero(chosen)
    all_ids = qrels.query_ids
    return ComparedQueries(
        rows=rows,
        ids=tuple(str(all_ids[i]) for i in rows),
        answered=answered,
        skipped=qrels.n_queries - len(rows),
        include_missing=include_missing,
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
