"""The one join of a Run with Qrels: what every metric kernel reads.

For each evaluated query: the grades of the retrieved documents in rank order, which of them are
judged, and all judgments of the query sorted by grade (the ideal ordering). Kernels are NumPy
over these flat arrays with per-query offsets (CSR); nothing loops per query in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.data import Qrels, Run
from rankmeter.data.arrays import FloatArray, IntArray, ObjArray, readonly, take
from rankmeter.data.csr import gather_ranges, offsets_from_sorted, row_groups

BoolArray = npt.NDArray[np.bool_]


class Ranked:
    """Retrieved documents joined with their judgments, per query, in rank order.

    The entries are every retrieved document, or, in a *compact* join (what evaluate uses),
    only the judged ones, each with its rank, and each query's number of results in
    :attr:`num_ret`. Every metric kernel gives the same numbers from both: an unjudged
    document is never relevant, gains nothing and is not judged, so leaving it out removes only
    terms that are 0 (a test runs every registered metric on both). Explanations, which show
    every result, read a full join.

    Attributes
    ----------
    query_ids : array of str
        The evaluated queries (natural order).
    offsets : int array, ``n_queries + 1``
        Entries of query ``i`` are ``offsets[i]:offsets[i+1]`` of the flat arrays below.
    groups, positions : int arrays
        Query index and 0-based rank of every entry.
    grades : float array
        Grade of every entry; 0 for documents without a (non-negative) judgment.
    judged : bool array
        The entry has a judgment with grade >= 0.
    judgment_offsets, judgment_grades
        All non-negative judgments of each query, sorted by grade descending.
    rel : float
        The evaluation's relevance level (metrics may override it).
    compact : bool
        Whether the entries are the judged documents only.
    entry_rows : int array
        The qrels row (judgment) of every entry, -1 for an unjudged one: what a metric reads
        from a judgment's other columns (a sample's inclusion probability, a subtopic).
    judgment_rows : int array
        The qrels row of every judgment in ``judgment_grades`` (the ideal ordering's order).
    pooled_groups, pooled_positions : int arrays
        Query index and 0-based rank of the retrieved documents whose judgment has a negative
        grade (pooled but not judged, as trec_eval reads -1; infAP reads them), in query and
        rank order; empty under ``judged_only`` (those documents are removed there).
    qrels : Qrels or None
        The judgments joined (None for a ranking given by hand).
    """

    def __init__(
        self,
        query_ids: ObjArray,
        offsets: IntArray,
        grades: FloatArray,
        judged: BoolArray,
        judgment_offsets: IntArray,
        judgment_grades: FloatArray,
        rel: float,
        *,
        positions: IntArray | None = None,
        num_ret: IntArray | None = None,
        entry_rows: IntArray | None = None,
        judgment_rows: IntArray | None = None,
        pooled: tuple[IntArray, IntArray] | None = None,
        qrels: Qrels | None = None,
    ) -> None:
        """``positions`` and ``num_ret`` are given for a compact join (the ranks of its
        entries, and each query's number of results); without them the entries are every
        result of each query, ranked in their order. ``entry_rows``, ``judgment_rows``,
        ``pooled`` (groups, positions) and ``qrels`` tie the entries to the judgments joined;
        without them (a ranking given by hand) no entry has a row and nothing is pooled."""
        # (an Arrow string array, as a join gives, is made Python strings only when read)
        self._query_ids = readonly(query_ids) if isinstance(query_ids, np.ndarray) else query_ids
        self.offsets = readonly(offsets)
        self.groups = readonly(row_groups(offsets))
        self.compact = positions is not None
        if positions is None:
            positions = np.arange(len(self.groups), dtype=np.int64) - offsets[self.groups]
        self.positions = readonly(positions)
        self._num_ret = readonly(np.diff(offsets) if num_ret is None else num_ret)
        self.grades = readonly(grades)
        self.judged = readonly(judged)
        self.judgment_offsets = readonly(judgment_offsets)
        self.judgment_grades = readonly(judgment_grades)
        self.judgment_groups = readonly(row_groups(judgment_offsets))
        self.rel = rel
        none = np.zeros(0, dtype=np.int64)
        if entry_rows is None:
            entry_rows = np.full(len(self.grades), -1, dtype=np.int64)
        self.entry_rows = readonly(entry_rows)
        if judgment_rows is None:
            judgment_rows = np.full(len(self.judgment_grades), -1, dtype=np.int64)
        self.judgment_rows = readonly(judgment_rows)
        self.pooled_groups = readonly(none if pooled is None else pooled[0])
        self.pooled_positions = readonly(none if pooled is None else pooled[1])
        self.qrels = qrels
        #: the qrels row of each evaluated query (set by join)
        self.qrels_rows: IntArray = np.zeros(0, dtype=np.int64)
        self._cache: dict[Any, Any] = {}

    @property
    def query_ids(self) -> ObjArray:
        """The evaluated queries (read-only object array of str, natural order)."""
        if not isinstance(self._query_ids, np.ndarray):
            ids = np.asarray(self._query_ids.to_pylist(), dtype=object)
            self._query_ids = readonly(ids)
        return self._query_ids

    @property
    def n_queries(self) -> int:
        return len(self._query_ids)

    @property
    def num_ret(self) -> IntArray:
        """The number of results of each query (retrieved documents, judged or not)."""
        return self._num_ret

    def relevant(self, rel: float) -> BoolArray:
        """Entries judged relevant at level ``rel``."""
        key = ("relevant", rel)
        if key not in self._cache:
            self._cache[key] = readonly(self.judged & (self.grades >= rel))
        return self._cache[key]  # type: ignore[no-any-return]

    def num_rel(self, rel: float) -> IntArray:
        """Judgments with grade >= ``rel``, per query (retrieved or not)."""
        key = ("num_rel", rel)
        if key not in self._cache:
            mask = self.judgment_grades >= rel
            self._cache[key] = readonly(self.count(self.judgment_groups[mask]))
        return self._cache[key]  # type: ignore[no-any-return]

    def num_nonrel(self, rel: float) -> IntArray:
        """Judged non-relevant documents (0 <= grade < ``rel``), per query."""
        mask = self.judgment_grades < rel
        return self.count(self.judgment_groups[mask])

    def count(self, groups: IntArray) -> IntArray:
        """Number of entries per query, given the query index of each selected entry."""
        return np.bincount(groups, minlength=self.n_queries).astype(np.int64)

    def total(self, groups: IntArray, weights: FloatArray) -> FloatArray:
        """Sum of ``weights`` per query, given the query index of each entry."""
        return np.bincount(groups, weights=weights, minlength=self.n_queries).astype(np.float64)

    def within(self, cutoff: int | None) -> BoolArray:
        """Entries ranked within the cutoff (all entries when cutoff is None)."""
        if cutoff is None:
            return np.ones(len(self.positions), dtype=bool)
        return self.positions < cutoff

    def totals_within(
        self,
        cutoffs: Sequence[int] | None,
        *,
        where: BoolArray | None = None,
        weights: FloatArray | None = None,
    ) -> FloatArray:
        """Per query, the sum of ``weights`` (1 per entry when None) over the entries ``where``
        is True, ranked within each cutoff: shape (n_queries, len(cutoffs)); ``cutoffs=None``
        is one column over every entry. See :func:`totals_within`."""
        masks = [] if where is None else [where]
        if cutoffs is not None:
            masks.append(self.positions < max(cutoffs, default=0))
        chosen: slice | IntArray = slice(None)
        if masks:
            # One pass over the entries, then gathers of the few chosen ones.
            chosen = np.flatnonzero(masks[0] if len(masks) == 1 else masks[0] & masks[1])
        return totals_within(
            self.groups[chosen],
            self.positions[chosen],
            self.n_queries,
            cutoffs,
            None if weights is None else weights[chosen],
        )


def totals_within(
    groups: IntArray,
    positions: IntArray,
    n_queries: int,
    cutoffs: Sequence[int] | None,
    weights: FloatArray | None = None,
) -> FloatArray:
    """Per query, the sum of ``weights`` over the entries ranked within each cutoff.

    ``groups`` and ``positions`` give each entry's query and 0-based rank (entries of a query
    in rank order); ``weights`` is one value per entry, 1 when None. Returns float64 of shape
    (n_queries, len(cutoffs)); ``cutoffs=None`` sums every entry, in one column.

    This is how every cutoff metric adds up its ranks, so that a metric at many cutoffs (the
    metric@k curves) is the same number as the metric at each one. Each query's terms are added
    one by one in rank order, starting from 0, whatever was asked: one cutoff is one bincount
    over the entries within it; several are running sums along a query-by-rank matrix as deep
    as the deepest cutoff, read at each cutoff (n_queries x depth floats, for a few cutoffs of
    a shallow depth like k = 1..100, far cheaper than a bincount per cutoff). Both add the same
    terms in the same order, so a column never depends on the other cutoffs asked for.
    """
    if cutoffs is None or len(cutoffs) == 1:
        keep = slice(None) if cutoffs is None else positions < cutoffs[0]
        kept = None if weights is None else weights[keep]
        sums = np.bincount(groups[keep], weights=kept, minlength=n_queries)
        return np.asarray(sums, dtype=np.float64).reshape(n_queries, 1)
    if len(cutoffs) == 0:
        return np.zeros((n_queries, 0), dtype=np.float64)
    ks = np.asarray(cutoffs, dtype=np.int64)
    depth = int(ks.max())
    keep = positions < depth
    running = np.zeros((n_queries, depth), dtype=np.float64)
    running[groups[keep], positions[keep]] = 1.0 if weights is None else weights[keep]
    np.cumsum(running, axis=1, out=running)
    return running[:, ks - 1]


def join(
    qrels: Qrels,
    run: Run | None,
    *,
    rel: float = 1,
    include_missing: bool = False,
    judged_only: bool = False,
    only: IntArray | None = None,
    compact: bool = False,
) -> Ranked:
    """Join a run with qrels under the given policies (see :func:`rankmeter.evaluate`).

    ``run=None`` evaluates judged queries as empty rankings; ``only`` restricts the evaluated
    queries to these qrels rows (used by streaming evaluation for queries no chunk had).
    ``compact`` keeps only the judged results, with their ranks (see :class:`Ranked`): every
    metric gives the same numbers, and the join costs a pass over the run's doc id hashes plus
    work on the judged results alone, so evaluate joins this way.
    """
    if run is None:
        selected = np.arange(qrels.n_queries, dtype=np.int64) if only is None else only
        return _ranked(
            qrels,
            selected,
            np.zeros(0),
            np.zeros(0, dtype=bool),
            np.zeros(len(selected) + 1, dtype=np.int64),
            rel,
        )
    # Queries: those in both (trec_eval default) or every judged query (trec_eval -c).
    # (vectorised, from the run's Arrow ids: no dict of every query, no string per query)
    run_to_qrels = qrels.rows_of(run.segment_strings)
    present = run_to_qrels >= 0
    qrels_to_run = np.full(qrels.n_queries, -1, dtype=np.int64)
    qrels_to_run[run_to_qrels[present]] = np.flatnonzero(present)
    if include_missing:
        selected = np.arange(qrels.n_queries, dtype=np.int64)
    else:
        selected = np.flatnonzero(qrels_to_run >= 0)
    run_q = qrels_to_run[selected]
    has = run_q >= 0
    run_offsets = run.offsets
    starts = np.where(has, run_offsets[np.maximum(run_q, 0)], 0)
    lengths = np.where(has, run_offsets[np.maximum(run_q, 0) + 1] - starts, 0)
    # Documents: the results whose doc id is judged for some query (found by hash), each with
    # its query (an index into `selected`) and its rank; then those judged for their own query.
    if compact:
        # The (query, doc) pairs that are judged, looked up in the run's own order: only the
        # judged results are then placed.
        pairs = qrels.pair_lookup()
        if pairs.exact:
            found, at = run.find_pairs(pairs, run_to_qrels)
        else:  # two judgments' keys are equal (never seen): the doc ids first, then the pairs
            found, doc_code = run.find_docs(qrels.doc_lookup())
        segment = np.searchsorted(run_offsets, found, side="right") - 1
        run_to_selected = np.full(run.n_queries, -1, dtype=np.int64)
        run_to_selected[run_q[has]] = np.flatnonzero(has)
        group = run_to_selected[segment]
        rank = found - run_offsets[segment]
        kept = group >= 0
        group, rank = group[kept], rank[kept]
        at = at[kept] if pairs.exact else qrels.judgment_rows(selected[group], doc_code[kept])
    else:
        in_run_order = np.array_equal(starts, run_offsets[:-1]) and np.array_equal(
            lengths, np.diff(run_offsets)
        )
        positions = None if in_run_order else gather_ranges(starts, lengths)
        all_codes = run.doc_codes(qrels.doc_lookup(), positions)
        candidates = np.flatnonzero(all_codes >= 0)
        ends = np.cumsum(lengths)
        group = np.searchsorted(ends, candidates, side="right")
        rank = candidates - (ends - lengths)[group]
        doc_code = all_codes[candidates]
        at = qrels.judgment_rows(selected[group], doc_code)
    found_here = at >= 0
    row = at[found_here]
    grade = qrels.grades[row]
    judged_here = grade >= 0  # a negative grade: pooled, not judged (trec_eval)
    group, rank = group[found_here], rank[found_here]
    pooled: tuple[IntArray, IntArray] | None = None
    if not judged_only and not judged_here.all():
        unjudged = ~judged_here
        pooled_order = np.lexsort((rank[unjudged], group[unjudged]))
        pooled = (group[unjudged][pooled_order], rank[unjudged][pooled_order])
    group, rank, row = group[judged_here], rank[judged_here], row[judged_here]
    grade = grade[judged_here]

    if compact:
        order = np.lexsort((rank, group))
        group, rank, grade, row = group[order], rank[order], grade[order], row[order]
        offsets = offsets_from_sorted(group, len(selected))
        judged = np.ones(len(grade), dtype=bool)
        if judged_only:
            # trec_eval -J: the unjudged documents are gone, so ranks count the judged only.
            return _ranked(qrels, selected, grade, judged, offsets, rel, entry_rows=row)
        return _ranked(
            qrels,
            selected,
            grade,
            judged,
            offsets,
            rel,
            positions=rank,
            num_ret=lengths,
            entry_rows=row,
            pooled=pooled,
        )
    offsets = np.zeros(len(selected) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    hit = offsets[group] + rank
    n_entries = int(offsets[-1])
    grades = np.zeros(n_entries, dtype=np.float64)
    grades[hit] = grade
    judged = np.zeros(n_entries, dtype=bool)
    judged[hit] = True
    entry_rows = np.full(n_entries, -1, dtype=np.int64)
    entry_rows[hit] = row
    if judged_only:
        # trec_eval -J: unjudged documents are removed before anything is computed.
        groups = row_groups(offsets)[judged]
        offsets = offsets_from_sorted(groups, len(selected))
        grades = grades[judged]
        entry_rows = entry_rows[judged]
        judged = judged[judged]

    return _ranked(
        qrels, selected, grades, judged, offsets, rel, entry_rows=entry_rows, pooled=pooled
    )


def _ranked(
    qrels: Qrels,
    selected: IntArray,
    grades: FloatArray,
    judged: BoolArray,
    offsets: IntArray,
    rel: float,
    *,
    positions: IntArray | None = None,
    num_ret: IntArray | None = None,
    entry_rows: IntArray | None = None,
    pooled: tuple[IntArray, IntArray] | None = None,
) -> Ranked:
    # Judgments of the selected queries, grades descending (the ideal ordering).
    j_offsets_all = qrels.offsets
    j_starts = j_offsets_all[selected]
    j_lengths = j_offsets_all[selected + 1] - j_starts
    j_rows = gather_ranges(j_starts, j_lengths)
    j_groups = np.repeat(np.arange(len(selected), dtype=np.int64), j_lengths)
    j_grades = qrels.grades[j_rows]
    keep = j_grades >= 0
    j_groups, j_grades, j_rows = j_groups[keep], j_grades[keep], j_rows[keep]
    order = np.lexsort((-j_grades, j_groups))
    j_offsets = offsets_from_sorted(j_groups, len(selected))
    ranked = Ranked(
        take(qrels.query_strings, selected),  # (no Python string per query: see query_ids)
        offsets,
        grades,
        judged,
        j_offsets,
        j_grades[order],
        float(rel),
        positions=positions,
        num_ret=num_ret,
        entry_rows=np.zeros(0, dtype=np.int64) if entry_rows is None else entry_rows,
        judgment_rows=j_rows[order],
        pooled=pooled,
        qrels=qrels,
    )
    ranked.qrels_rows = readonly(np.asarray(selected, dtype=np.int64))
    return ranked
