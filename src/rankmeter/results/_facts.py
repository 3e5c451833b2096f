"""What an evaluation saw of a run's data, at no extra cost: its query ids against the
qrels' (:class:`Overlap`, counted by :class:`OverlapTally`) and its written score order
(:class:`ScoreOrder`), together a run's :class:`RunFacts`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankmeter.data.run import Run

__all__ = [
    "EXAMPLES",
    "WRITTEN_DEPTH",
    "Overlap",
    "OverlapTally",
    "RunFacts",
    "ScoreOrder",
    "overlap_of",
]

#: How deep into each query :attr:`EvalResult.written_order` looks: a swapped rank column
#: or lower-is-better scores show at the top as everywhere, and the look stays cheap.
WRITTEN_DEPTH = 10
#: Examples kept for each list of ids (queries without results, duplicate pairs, ...).
EXAMPLES = 5


@dataclass(frozen=True)
class Overlap:
    """The query ids of a run against the qrels'.

    Attributes
    ----------
    judged : queries in the qrels
    with_results : queries in the run
    common : queries in both (what ``evaluate`` averages over by default)
    judged_without_results, results_without_judgments : how many queries are only in the
        qrels, only in the run
    judged_without_results_examples, results_without_judgments_examples : the first few of
        each (natural order), at most :data:`EXAMPLES`
    """

    judged: int
    with_results: int
    common: int
    judged_without_results: int
    results_without_judgments: int
    judged_without_results_examples: tuple[str, ...]
    results_without_judgments_examples: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """No query in common: nothing of the run can be evaluated."""
        return self.common == 0

    @property
    def partial(self) -> bool:
        """Some queries are only in the qrels or only in the run."""
        return not self.empty and bool(
            self.judged_without_results or self.results_without_judgments
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "judged": self.judged,
            "with_results": self.with_results,
            "common": self.common,
            "judged_without_results": self.judged_without_results,
            "judged_without_results_examples": list(self.judged_without_results_examples),
            "results_without_judgments": self.results_without_judgments,
            "results_without_judgments_examples": list(self.results_without_judgments_examples),
        }


@dataclass(frozen=True)
class ScoreOrder:
    """Whether a run's scores fall with its rank, as they should (see
    :func:`rankmeter.checking.score_order`).

    Attributes
    ----------
    by : ``"rank column"``, ``"file order"`` or ``"written order"`` (each query's top
        :data:`WRITTEN_DEPTH`, as the evaluation saw them): what the written ranking was read
        from
    queries : queries whose scores are not all equal (the others say nothing)
    rising : those among them whose score rises with the rank
    rank_fractions : whether the rank column holds fractions (as scores do): then the rank
        and score columns look swapped, rather than the scores meaning lower-is-better
    """

    by: str
    queries: int
    rising: int
    rank_fractions: bool

    @property
    def reversed(self) -> bool:
        """The scores rise with the rank in most queries (more than half)."""
        return self.queries > 0 and self.rising * 2 > self.queries

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "queries": self.queries,
            "rising": self.rising,
            "rank_fractions": self.rank_fractions,
            "reversed": self.reversed,
        }


@dataclass(frozen=True)
class RunFacts:
    """What an evaluation saw of a run's data, at no extra cost: the warnings that
    ``rankmeter evaluate`` and ``rankmeter compare`` print beside their numbers come from it
    (:func:`rankmeter.checking.result_warnings`).

    Attributes
    ----------
    source : where the run was read from (a path, ``<dict>``, ...)
    overlap : its query ids against the qrels'
    written_order : whether its results were given lowest score first, by the order they were
        written in (``by="written order"``: the file's lines or the rows given), in each
        query's top :data:`WRITTEN_DEPTH` (``rankmeter check`` reads the rank column too)
    """

    source: str
    overlap: Overlap
    written_order: ScoreOrder

    @classmethod
    def of(cls, source: str, judged_ids: Any, run_ids: Any, written: Sequence[int]) -> RunFacts:
        """The facts of a run: its ``source``, the qrels' query ids and its own (strings, or
        Arrow string arrays: see :func:`overlap_of`), and its ``written`` order as
        ``(queries, rising)`` (:meth:`Run.written_order <rankmeter.data.Run.written_order>` at
        :data:`WRITTEN_DEPTH`, summed over chunks)."""
        return cls.of_tally(source, OverlapTally.of(judged_ids, run_ids), written)

    @classmethod
    def of_tally(cls, source: str, tally: OverlapTally, written: Sequence[int]) -> RunFacts:
        """The facts of a run whose query ids were counted part by part (a streamed run's
        chunks) by ``tally``; ``source`` and ``written`` as :meth:`of` takes them."""
        queries, rising = written
        order = ScoreOrder("written order", queries, rising, rank_fractions=False)
        return cls(source, tally.overlap(), order)

    @classmethod
    def of_run(cls, judged: Any, run: Run) -> RunFacts:
        """The facts of a run given whole, against ``judged``: the qrels (a
        :class:`~rankmeter.data.Qrels`: their ids are found in the table the joins use) or
        their query ids."""
        tally = OverlapTally.of(judged)
        tally.add(run.segment_strings)  # (no Python string per query: see OverlapTally)
        return cls.of_tally(run.source, tally, run.written_order(WRITTEN_DEPTH))


class OverlapTally:
    """An :class:`Overlap` counted from a run's query ids part by part (the chunks of a
    streamed run, each query in one part only), with no Python object per id: the judged ids
    stay an Arrow string array, which of them have results is a bool array, and of the ids
    only in the run the count and the first :data:`EXAMPLES` (natural order) are kept. Only
    the ids an :class:`Overlap` names become Python strings.

    >>> tally = OverlapTally.of(["1", "2", "3", "10"])
    >>> tally.add(["3", "x"]); tally.add(["1", "b", "a"])
    >>> overlap = tally.overlap()
    >>> overlap.common, overlap.judged_without_results_examples, overlap.results_without_judgments_examples
    (2, ('2', '10'), ('a', 'b', 'x'))
    """

    def __init__(self, judged: Any, rows_of: Any, *, natural: bool) -> None:
        # judged: distinct ids (an Arrow string array); rows_of: ids -> their rows in judged
        # (-1: not judged); natural: judged is in natural order already (the qrels' ids).
        self._judged = judged
        self._rows_of = rows_of
        self._natural = natural
        self._answered = np.zeros(len(judged), dtype=bool)
        self._with_results = 0
        self._only_ran = 0
        self._examples: list[str] = []

    @classmethod
    def of(cls, judged: Any, run_ids: Any = None) -> OverlapTally:
        """A tally against ``judged`` (a :class:`~rankmeter.data.Qrels`, or query ids:
        strings or an Arrow string array), with ``run_ids`` counted already when given."""
        from rankmeter.data.qrels import Qrels

        if isinstance(judged, Qrels):
            tally = cls(judged.query_strings, judged.rows_of, natural=True)
        else:
            ids = _distinct_strings(judged)
            tally = cls(ids, lambda found: _rows_in(found, ids), natural=False)
        if run_ids is not None:
            tally.add(run_ids)
        return tally

    def add(self, run_ids: Any) -> None:
        """Count a part of the run: its query ids (strings, or an Arrow string array), none
        counted before (repeats within the part count once)."""
        from rankmeter.data.arrays import take

        ids = _distinct_strings(run_ids)
        rows = np.asarray(self._rows_of(ids), dtype=np.int64)
        found = rows >= 0
        self._answered[rows[found]] = True
        self._with_results += len(ids)
        missing = np.flatnonzero(~found)
        if len(missing):
            self._only_ran += len(missing)
            firsts = _first_natural(take(ids, missing))
            self._examples = list(_first_natural([*self._examples, *firsts]))

    def overlap(self) -> Overlap:
        """The overlap of the ids counted so far with the judged ids."""
        from rankmeter.data.arrays import take

        unanswered = np.flatnonzero(~self._answered)
        if self._natural:  # (the first few rows are the first few ids)
            judged_examples = tuple(take(self._judged, unanswered[:EXAMPLES]).to_pylist())
        else:
            judged_examples = _first_natural(take(self._judged, unanswered))
        return Overlap(
            len(self._judged),
            self._with_results,
            len(self._judged) - len(unanswered),
            len(unanswered),
            self._only_ran,
            judged_examples,
            tuple(self._examples),
        )


def overlap_of(judged_ids: Any, run_ids: Any) -> Overlap:
    """The :class:`Overlap` of a run's query ids (``run_ids``) with the qrels' (``judged_ids``):
    each strings, or an Arrow string array (compared as they are, vectorised: only the ids the
    overlap names become Python strings).

    >>> overlap_of(["1", "2", "3"], ["2", "3", "9"]).to_dict()["judged_without_results_examples"]
    ['1']
    """
    return OverlapTally.of(judged_ids, run_ids).overlap()


def _distinct_strings(ids: Any) -> Any:
    """``ids`` as an Arrow string array without repeats (first seen kept, in their order)."""
    import pyarrow as pa

    from rankmeter.data.arrays import arrow_strings, compute, compute_options, one_chunk

    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        strings = one_chunk(ids)
    else:
        # (ids are checked on the way in: valid Unicode, so arrow_strings takes them)
        strings = arrow_strings([str(q) for q in ids])
    if not pa.types.is_string(strings.type) and not pa.types.is_large_string(strings.type):
        strings = compute(
            "cast", strings, options=compute_options("CastOptions", target_type=pa.string())
        )
    unique = compute("unique", strings)
    return strings if len(unique) == len(strings) else unique


def _rows_in(ids: Any, judged: Any) -> Any:
    """The row of each of ``ids`` in ``judged`` (Arrow string arrays), -1 where absent."""
    from rankmeter.data.arrays import compute, compute_options, numpy_of

    if ids.type != judged.type:  # (string and large_string)
        ids = ids.cast(judged.type)
    lookup = compute_options("SetLookupOptions", value_set=judged)
    return numpy_of(compute("index_in", ids, options=lookup), fill=-1).astype(np.int64)


def _first_natural(ids: Any) -> tuple[str, ...]:
    """The first :data:`EXAMPLES` of distinct ``ids`` (strings, or an Arrow string array) in
    natural order, as Python strings (vectorised for many: no sort key per id)."""
    import pyarrow as pa

    from rankmeter.data.arrays import take
    from rankmeter.data.ids import natural_order

    first = natural_order(ids)[:EXAMPLES]
    if isinstance(ids, pa.Array):
        return tuple(take(ids, first).to_pylist())
    return tuple(str(ids[i]) for i in first)
