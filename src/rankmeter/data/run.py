"""Run: a system's ranked results, immutable and columnar, sorted once by the tie policy."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer
from rankmeter.data import _compiled
from rankmeter.data._inputs import as_float_column, string_column
from rankmeter.data.arrays import (
    FloatArray,
    IntArray,
    ObjArray,
    arrow_ints,
    arrow_strings,
    compute,
    compute_options,
    import_pandas,
    numpy_of,
    one_chunk,
    readonly,
    release_arrow_memory,
    take,
)
from rankmeter.data.csr import gather_ranges, offsets_from_sorted, row_groups, segments_repeat
from rankmeter.data.hashing import HashLookup, PairLookup, string_hashes
from rankmeter.data.ids import intern_grouped_arrow, natural_order
from rankmeter.data.origin import Origin

__all__ = ["TIE_POLICIES", "Run", "check_ties", "unique_names"]

#: How documents with equal scores are ordered.
#: ``"trec_eval"``: score descending, then doc id descending in byte order (trec_eval's rule).
#: ``"input"``: score descending, then the order in which they were given.
#: The rank column of a TREC run is never used, as in trec_eval.
TIE_POLICIES = ("trec_eval", "input")

#: Runs built from this many rows or more hand the memory Arrow freed back to the system (a
#: whole file read at once leaves hundreds of MB behind). Smaller ones, such as the chunks of
#: a streamed run, leave it to be reused: memory handed back is faulted in again, page by
#: page, when it is next taken.
RELEASE_ROWS = 1 << 21


def check_ties(ties: Any) -> str:
    """``ties`` if it is one of :data:`TIE_POLICIES`, else a PolicyError naming them."""
    return choice("ties", ties, TIE_POLICIES, what="how equal scores are ordered")


def unique_names(names: Sequence[str], sources: Sequence[str]) -> list[str]:
    """Names for several runs, all different: runs that share a name are told apart by their
    source (the file they were read from), else by a number.

    Parameters
    ----------
    names : the runs' own names (their TREC tags)
    sources : where each run came from; ``<...>`` (a dict, a frame) names no file

    Examples
    --------
    >>> unique_names(["bm25", "bm25", "dense"], ["a.run", "b.run", "c.run"])
    ['a.run', 'b.run', 'dense']
    >>> unique_names(["run", "run"], ["<dict>", "<dict>"])
    ['run#1', 'run#2']
    """
    names, sources = list(names), list(sources)
    if len(set(names)) == len(names):
        return names
    unique_sources = len(set(sources)) == len(sources) and not any(
        s.startswith("<") for s in sources
    )
    seen: dict[str, int] = {}
    out = []
    for name, source in zip(names, sources, strict=True):
        if names.count(name) == 1:
            out.append(name)
        elif unique_sources:
            out.append(source)
        else:
            seen[name] = seen.get(name, 0) + 1
            out.append(f"{name}#{seen[name]}")
    return out


class Run:
    """A system's results: for each query, documents with scores, in rank order.

    Ranks come from the scores alone: score descending, ties broken by ``ties`` (default
    trec_eval's rule: doc id descending in byte order). A TREC file's rank column is ignored.

    Stored columnar: one segment per query (in the order they first appear: ``segment_ids``),
    its results at positions ``offsets[i]:offsets[i+1]`` in rank order (``scores``, and doc ids
    through :meth:`doc_ids`). Doc ids are not interned: the join looks them up in the qrels
    directly (:meth:`doc_codes`), which is what scales.

    Runs are immutable. Build them with :meth:`from_dict` or :meth:`from_columns`; files,
    DataFrames and Arrow tables are read by :mod:`rankmeter.io` (``rankmeter.io.read_run``,
    ``rankmeter.as_run``, which takes any supported input).

    Examples
    --------
    >>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}, name="bm25")
    >>> run
    Run('bm25', 1 queries, 3 results)
    >>> run.ranking("q1")
    ['d2', 'd3', 'd1']
    >>> run.head(2).ranking("q1")
    ['d2', 'd3']
    """

    __slots__ = (
        "_doc_hashes",
        "_docs",
        "_input_rows",
        "_offsets",
        "_query_ids",
        "_scores",
        "name",
        "source",
        "ties",
    )

    def __init__(
        self,
        name: str,
        query_ids: Any,
        offsets: IntArray,
        docs: Any,
        scores: FloatArray,
        input_rows: IntArray,
        ties: str,
        source: str,
        doc_hashes: npt.NDArray[np.uint64] | None = None,
    ) -> None:
        # Private: use the from_* constructors. Rows are grouped by query (segments in
        # query_ids order), each query's rows in rank order.
        # The query ids: an object array, or an Arrow string array until they are asked for
        # as Python strings (`segment_ids`): a run of a million queries makes no million
        # objects to be read.
        self.name = name
        self._query_ids = readonly(query_ids) if isinstance(query_ids, np.ndarray) else query_ids
        self._offsets = readonly(offsets)
        self._docs = docs
        self._scores = readonly(scores)
        self._input_rows = readonly(input_rows)
        self.ties = ties
        self.source = source
        self._doc_hashes = None if doc_hashes is None else readonly(doc_hashes)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        query_ids: Any,
        doc_ids: Any,
        scores: Any,
        *,
        name: str = "run",
        ties: str = "trec_eval",
        origin: Origin | str = "<columns>",
    ) -> Run:
        """Build from three parallel columns (lists, NumPy or Arrow arrays)."""
        check_ties(ties)
        if isinstance(origin, str):
            origin = Origin(origin)
        q_codes, q_vocab = intern_grouped_arrow(query_ids, origin, "query id")
        del query_ids
        # One chunk: rows are taken from the doc ids at every tie, join and lookup.
        docs = one_chunk(string_column(doc_ids, origin, "doc id"))
        values = as_float_column(scores, origin, "score", allow_inf=True)
        del scores
        if len(values) >= RELEASE_ROWS:
            release_arrow_memory()
        if not (len(q_codes) == len(docs) == len(values)):
            raise origin.error(None, "query, doc and score columns have different lengths")
        if len(values) == 0:
            raise origin.error(None, "no results: a run must hold at least one line")
        rows = np.arange(len(values), dtype=np.int64)
        hashes = string_hashes(docs)
        order, tied_at, tied_from = _rank_order(
            q_codes, docs, values, rows, ties, rows_ascending=True
        )
        # Doc ids stay in input order (moving millions of strings is the dearest step of all);
        # the rows column says where each ranked result's doc id is.
        if order is not None:
            q_codes, values, rows, hashes = q_codes[order], values[order], order, hashes[order]
            del order
        if tied_at is not None:
            # Tied results change places within their query: only those rows move (query
            # codes cannot differ among them).
            for column in (values, rows, hashes):
                column[tied_at] = column[tied_from]
        offsets = offsets_from_sorted(q_codes, len(q_vocab))
        if segments_repeat(offsets, hashes):
            _check_unique_pairs(q_codes, hashes, docs, rows, q_vocab, origin)
        return cls(name, q_vocab, offsets, docs, values, rows, ties, origin.name, hashes)

    @classmethod
    def from_dict(
        cls,
        results: Mapping[str, Mapping[str, float]],
        *,
        name: str = "run",
        ties: str = "trec_eval",
    ) -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        origin = Origin("<dict>", describe=lambda row: f"query {qs[row]!r}, doc {ds[row]!r}")
        if not isinstance(results, Mapping):
            raise origin.error(
                None,
                f"expected a dict of dicts {{query: {{doc: score}}}}, got {type(results).__name__}",
            )
        qs: list[Any] = []
        ds: list[Any] = []
        ss: list[Any] = []
        for q, docs in results.items():
            if not isinstance(docs, Mapping):
                raise origin.error(
                    None, f"query {q!r}: expected a dict {{doc: score}}, got {type(docs).__name__}"
                )
            qs.extend([q] * len(docs))
            ds.extend(docs.keys())
            ss.extend(docs.values())
        return cls.from_columns(qs, ds, ss, name=name, ties=ties, origin=origin)

    def with_ties(self, ties: str) -> Run:
        """The same results ranked under another tie policy (self if it is already so)."""
        if check_ties(ties) == self.ties:
            return self
        groups = row_groups(self._offsets)
        order, tied_at, tied_from = _rank_order(
            groups,
            self._docs,
            self._scores,
            self._input_rows,
            ties,
            rows_ascending=_ascending(self._input_rows),
        )
        if order is None:
            order = np.arange(len(self), dtype=np.int64)
        if tied_at is not None:
            order[tied_at] = order[tied_from]
        return Run(
            self.name,
            self._query_ids,
            self._offsets,
            self._docs,
            self._scores[order],
            self._input_rows[order],
            ties,
            self.source,
            None if self._doc_hashes is None else self._doc_hashes[order],
        )

    def renamed(self, name: str) -> Run:
        """The same run under another name."""
        return Run(
            name,
            self._query_ids,
            self._offsets,
            self._docs,
            self._scores,
            self._input_rows,
            self.ties,
            self.source,
            self._doc_hashes,
        )

    def head(self, cutoff: int) -> Run:
        """Each query's top ``cutoff`` results, in rank order.

        Parameters
        ----------
        cutoff : results kept per query (an integer >= 1)

        Returns
        -------
        Run with the same name, tie policy and source; the run itself when no query has more
        than ``cutoff`` results. Equal scores keep this run's order: the cut is made after the
        tie policy ranked them, so a tie straddling the cutoff keeps the results the policy
        put first.

        Examples
        --------
        >>> run = Run.from_dict({"q1": {"a": 0.9, "b": 0.5, "c": 0.5}, "q2": {"d": 1.0}})
        >>> top = run.head(2)
        >>> top.ranking("q1"), top.ranking("q2"), run.head(3) is run
        (['a', 'c'], ['d'], True)
        """
        cutoff = integer("cutoff", cutoff, low=1, what="results kept per query")
        lengths = np.diff(self._offsets)
        if int(lengths.max(initial=0)) <= cutoff:
            return self
        kept = np.minimum(lengths, cutoff)
        return self._take(self._query_ids, self._offsets[:-1], kept)

    def written_order(self, depth: int) -> tuple[int, int]:
        """How many queries were given lowest score first, looking at each query's top
        ``depth`` results: ``(queries, rising)``.

        Each step down the ranking to a lower score is *backwards* when its result came
        earlier in the input (the file's lines, the rows or dict entries given) and *forwards*
        when later; a query is counted when it has such steps, and *rising* when three in four
        of them or more are backwards (a query written in no order is not), as when a run's rank and score columns are swapped or its scores mean
        lower-is-better. Costs one pass over ``depth`` results per query.

        >>> run = Run.from_dict({"q1": {"a": 1.0, "b": 2.0, "c": 3.0}, "q2": {"d": 5.0, "e": 4.0}})
        >>> run.written_order(10)
        (2, 1)
        """
        depth = integer("depth", depth, low=2, what="results looked at per query")
        n = len(self._query_ids)
        kept = np.minimum(np.diff(self._offsets), depth)
        positions = gather_ranges(self._offsets[:-1], kept)
        groups = np.repeat(np.arange(n, dtype=np.int64), kept)
        scores, rows = self._scores[positions], self._input_rows[positions]
        # Steps within one query, to a strictly lower score (the rank order falls or ties).
        steps = (groups[1:] == groups[:-1]) & (scores[1:] < scores[:-1])
        earlier = rows[1:] < rows[:-1]
        at = groups[1:]
        backwards = np.bincount(at[steps & earlier], minlength=n)
        forwards = np.bincount(at[steps & ~earlier], minlength=n)
        # Rising as rankmeter.checking.clearly_rising says: three steps in four or more.
        rising = (backwards > 0) & (backwards >= 3 * forwards)
        return int(np.count_nonzero(backwards + forwards)), int(np.count_nonzero(rising))

    def subset(self, query_ids: Iterable[str]) -> Run:
        """The results of these queries only, in this run's order of queries.

        Ids without results here are skipped (the subset may be empty); name, tie policy and
        source are kept, and the run itself is returned when every query is asked for.

        >>> Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}}).subset(["q2", "q9"]).query_ids
        ('q2',)
        """
        wanted = {str(q) for q in query_ids}
        ids = self.segment_ids
        segments = np.flatnonzero([str(q) in wanted for q in ids])
        if len(segments) == len(ids):
            return self
        starts = self._offsets[segments]
        return self._take(ids[segments], starts, self._offsets[segments + 1] - starts)

    def _take(self, query_ids: ObjArray, starts: IntArray, lengths: IntArray) -> Run:
        """A run of the results at positions ``starts[i] : starts[i] + lengths[i]`` (segment
        ``i``, query ``query_ids[i]``). Only those doc ids are kept, in their input order, so
        the "input" tie policy still sees the order they were given in."""
        positions = gather_ranges(starts, lengths)
        rows = self._input_rows[positions]
        kept_rows = np.sort(rows)
        docs = self._docs.take(arrow_ints(kept_rows))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Run(
            self.name,
            query_ids,
            offsets,
            docs,
            self._scores[positions],
            np.searchsorted(kept_rows, rows).astype(np.int64),
            self.ties,
            self.source,
            None if self._doc_hashes is None else self._doc_hashes[positions],
        )

    # -- access -------------------------------------------------------------------------------
    @property
    def query_ids(self) -> tuple[str, ...]:
        """Queries with results, in natural order."""
        return tuple(str(q) for q in self.segment_ids[self._natural_order()])

    @property
    def segment_strings(self) -> Any:
        """The query id of each segment as an Arrow string array, in stored order (as
        :attr:`segment_ids`): for a run read from a file, without a Python string per query."""
        if isinstance(self._query_ids, np.ndarray):
            return arrow_strings(self._query_ids.tolist())
        return one_chunk(self._query_ids)

    @property
    def segment_ids(self) -> ObjArray:
        """The query id of each segment (read-only object array), in stored order: the order
        of :attr:`offsets`, which is the order queries first appear in the input."""
        if not isinstance(self._query_ids, np.ndarray):
            self._query_ids = readonly(np.asarray(self._query_ids.to_pylist(), dtype=object))
        return self._query_ids

    @property
    def offsets(self) -> IntArray:
        """CSR offsets (read-only int64, ``len(segment_ids) + 1``): the results of segment
        ``i`` are positions ``offsets[i]:offsets[i+1]``, in rank order."""
        return self._offsets

    @property
    def scores(self) -> FloatArray:
        """The score of every result (read-only float64), by position: segments in stored
        order, each in rank order."""
        return self._scores

    def _natural_order(self) -> IntArray:
        return natural_order(self._query_ids)

    @property
    def n_queries(self) -> int:
        return len(self._query_ids)

    def doc_ids(self, positions: IntArray | slice) -> Any:
        """The doc ids at these positions of the rank-ordered results, as an Arrow array."""
        import pyarrow as pa

        docs = self._docs.take(arrow_ints(self._input_rows[positions]))
        return docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs

    def doc_hashes(self) -> npt.NDArray[np.uint64]:
        """A 64-bit hash of every result's doc id, in rank order (see ``string_hashes``)."""
        if self._doc_hashes is None:
            self._doc_hashes = readonly(string_hashes(self._docs)[self._input_rows])
        return self._doc_hashes

    def find_docs(self, lookup: HashLookup) -> tuple[IntArray, IntArray]:
        """The results whose doc id is in ``lookup``'s vocabulary: their positions (ascending)
        and where each doc id is in the vocabulary. Only the doc ids whose hash matched are
        read, so the cost follows the number of results and of the matches."""
        return lookup.find(self._docs, self.doc_hashes(), self._input_rows)

    def find_pairs(self, lookup: PairLookup, groups: IntArray) -> tuple[IntArray, IntArray]:
        """The results whose (group of their query, doc id) pair is in ``lookup``: their
        positions (ascending) and the lookup's rows (for the qrels' :meth:`Qrels.pair_lookup`,
        the judgment rows). ``groups[i]`` is the group of segment ``i`` (-1: none; its results
        are never found).

        One pass over the results' hashes makes their pair keys; only the results whose key
        matched are looked at further (group and doc id compared themselves)."""
        return lookup.find_segmented(
            self.doc_hashes(), self._offsets, groups, self._docs, self._input_rows
        )

    def doc_codes(self, lookup: HashLookup, positions: IntArray | None = None) -> IntArray:
        """Where each result's doc id is in ``lookup``'s vocabulary (-1: not there), for the
        results at ``positions`` (every result, in position order, when None).

        Doc ids are found by their hash and confirmed by their text; only the doc ids whose
        hash matched are read, which is what keeps the join fast."""
        hashes = self.doc_hashes()
        if positions is None:
            return lookup.codes(self._docs, hashes, self._input_rows)
        return lookup.codes(self._docs, hashes[positions], self._input_rows[positions])

    def __len__(self) -> int:
        return len(self._scores)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.n_queries} queries, {len(self)} results)"

    def ranking(self, query_id: str) -> list[str]:
        """Doc ids of one query in rank order."""
        hits = np.flatnonzero(self.segment_ids == query_id)
        if len(hits) == 0:
            raise KeyError(query_id)
        q = int(hits[0])
        start, stop = int(self._offsets[q]), int(self._offsets[q + 1])
        return [str(d) for d in self.doc_ids(slice(start, stop)).to_pylist()]

    def __iter__(self) -> Iterator[tuple[str, str, float]]:
        """(query, doc, score) in rank order, queries in natural order."""
        for q in self._natural_order():
            start, stop = int(self._offsets[q]), int(self._offsets[q + 1])
            query = str(self.segment_ids[q])
            docs = self.doc_ids(slice(start, stop)).to_pylist()
            for d, score in zip(docs, self._scores[start:stop].tolist(), strict=True):
                yield query, d, score

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` with docs in rank order."""
        out: dict[str, dict[str, float]] = {}
        for q, d, s in self:
            out.setdefault(q, {})[d] = s
        return out

    def to_arrow(self) -> Any:
        """Columns query_id, doc_id, rank (1-based, under this run's tie policy), score;
        queries in natural order."""
        import pyarrow as pa

        segments = self._natural_order()
        starts = self._offsets[segments]
        lengths = self._offsets[segments + 1] - starts
        rows = gather_ranges(starts, lengths)
        groups = np.repeat(segments, lengths)
        rank = rows - self._offsets[groups] + 1
        return pa.table(
            {
                "query_id": pa.array(self.segment_ids[groups].tolist(), type=pa.string()),
                "doc_id": self.doc_ids(rows),
                "rank": pa.array(rank),
                "score": pa.array(self._scores[rows]),
            }
        )

    def to_pandas(self) -> Any:
        import_pandas()
        return self.to_arrow().to_pandas()


def _rank_order(
    q_codes: IntArray,
    docs: Any,
    scores: FloatArray,
    rows: IntArray,
    ties: str,
    *,
    rows_ascending: bool,
) -> tuple[IntArray | None, IntArray | None, IntArray | None]:
    """How to put rows in rank order: grouped by query code, each query's rows by score
    descending, equal scores by the tie policy.

    Returns ``(order, tied_at, tied_from)``: first take ``x[order]`` (``order`` None: the rows
    are already grouped and sorted by score, as in most TREC runs, so nothing is copied), then
    move tied rows: ``x[tied_at] = x[tied_from]`` (None: nothing to move).
    ``rows[i]`` is the input row of row ``i`` (its position in ``docs``) and orders equal
    scores under the "input" policy; ``rows_ascending`` says that they already are in it."""
    order: IntArray | None = None
    if not (rows_ascending and _grouped_by_score(q_codes, scores)):
        # np.lexsort sorts by the last key first; negating the scores sorts them descending.
        # Rows as the first key give the "input" policy's order among equal scores.
        order = np.lexsort((rows, -scores, q_codes))
    if ties == "input":
        return order, None, None
    if _compiled.NATIVE is not None:
        compiled = _tie_moves_native(q_codes, docs, scores, rows, order)
        if compiled is not None:
            return order, *compiled
    # Equal scores (-0.0 == 0.0 included, as in trec_eval's comparison) are the only place the
    # doc ids matter, so only the tied rows are put in doc id order, descending in byte order.
    q = q_codes if order is None else q_codes[order]
    s = scores if order is None else scores[order]
    links = np.flatnonzero(s[1:] == s[:-1])  # position i ties with i + 1 ...
    links = links[q[links + 1] == q[links]]  # ... within one query
    del q, s
    if len(links) == 0:
        return order, None, None

    def input_rows(positions: IntArray) -> IntArray:
        """The input row (a position in ``docs``) of the row that ends at these positions."""
        return rows[positions] if order is None else rows[order[positions]]

    # A block of tied positions is a run of consecutive links; most blocks are two results,
    # which are swapped when the first doc id is the smaller one.
    starts_block = np.ones(len(links), dtype=bool)
    starts_block[1:] = links[1:] != links[:-1] + 1
    firsts = links[starts_block]
    sizes = np.diff(np.append(np.flatnonzero(starts_block), len(links))) + 1
    pairs = firsts[sizes == 2]
    large = sizes > 2
    positions = gather_ranges(firsts[large], sizes[large])
    # The doc ids looked at, in one take (a take from a chunked column is dear per call).
    texts = one_chunk(take(docs, input_rows(np.concatenate((pairs, pairs + 1, positions)))))
    moved_at: list[IntArray] = []
    moved_from: list[IntArray] = []
    if len(pairs):
        swap = _smaller(texts.slice(0, len(pairs)), texts.slice(len(pairs), len(pairs)))
        upper = pairs[swap]
        moved_at += [upper, upper + 1]
        moved_from += [upper + 1, upper]
    if len(positions):
        blocks = np.repeat(np.arange(int(large.sum()), dtype=np.int64), sizes[large])
        within = _doc_order_within(texts.slice(2 * len(pairs)), blocks)
        moved = np.flatnonzero(within != np.arange(len(within)))
        moved_at.append(positions[moved])
        moved_from.append(positions[within[moved]])
    if not sum(len(m) for m in moved_at):
        return order, None, None
    return order, np.concatenate(moved_at), np.concatenate(moved_from)


def _tie_moves_native(
    q_codes: IntArray, docs: Any, scores: FloatArray, rows: IntArray, order: IntArray | None
) -> tuple[IntArray | None, IntArray | None] | None:
    """:func:`_rank_order`'s tie moves by the compiled loop (the same moves, in position
    order); None when the doc ids are not one Arrow string array (then NumPy does it)."""
    import pyarrow as pa

    native = _compiled.NATIVE
    if native is None or not isinstance(docs, pa.Array):
        return None
    if not (pa.types.is_string(docs.type) or pa.types.is_large_string(docs.type)):
        return None
    n = len(scores)
    at = np.empty(n, dtype=np.int64)  # pages are touched only where a result moves
    source = np.empty(n, dtype=np.int64)
    offsets, wide, first, data = _compiled.string_parts(docs)
    count = native.tie_moves(
        np.ascontiguousarray(q_codes, dtype=np.int64),
        np.ascontiguousarray(scores, dtype=np.float64),
        b"" if order is None else np.ascontiguousarray(order, dtype=np.int64),
        np.ascontiguousarray(rows, dtype=np.int64),
        offsets,
        wide,
        first,
        data,
        at,
        source,
    )
    if count == 0:
        return None, None
    return at[:count].copy(), source[:count].copy()


def _grouped_by_score(q_codes: IntArray, scores: FloatArray) -> bool:
    """Whether the rows are grouped by query code (ascending) and, within a query, sorted by
    score descending. One pass over the scores; the few places where a score rises are then
    looked at (the first row of each query, mostly)."""
    if len(scores) < 2:
        return True
    if not bool(np.all(q_codes[1:] >= q_codes[:-1])):
        return False
    rises = np.flatnonzero(scores[1:] > scores[:-1])
    return bool(np.all(q_codes[rises + 1] != q_codes[rises]))


def _smaller(first: Any, second: Any) -> npt.NDArray[np.bool_]:
    """For each pair of doc ids (two Arrow string arrays), whether the first sorts before the
    second in byte order."""
    return numpy_of(compute("less", first, second))


def _doc_order_within(doc_ids: Any, blocks: IntArray) -> IntArray:
    """The order that sorts doc ids (an Arrow string array) by block (ascending), then by doc
    id descending in byte order."""
    import pyarrow as pa

    table = pa.table({"block": arrow_ints(blocks), "doc": doc_ids})
    keys = compute_options("SortOptions", sort_keys=[("block", "ascending"), ("doc", "descending")])
    return numpy_of(compute("sort_indices", table, options=keys)).astype(np.int64)


def _ascending(values: IntArray) -> bool:
    return bool(np.all(values[1:] > values[:-1]))


def _pair_keys(q_codes: IntArray, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        return hashes ^ (q_codes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def _shared_buckets(keys: npt.NDArray[np.uint64]) -> IntArray:
    """Rows whose key shares a hash bucket with another row: the only rows that can repeat a
    key. Counting buckets is far cheaper than sorting every key; with four buckets or more
    per key, a fifth of the rows or fewer remain to be sorted."""
    n = len(keys)
    bits = max(int(n * 4 - 1).bit_length(), 10)
    if bits > 23:  # over 2M keys: the bucket counts would take more memory than they save
        return np.arange(n, dtype=np.int64)
    buckets = (keys & np.uint64((1 << bits) - 1)).astype(np.int64)
    counts = np.bincount(buckets, minlength=1 << bits)
    return np.flatnonzero(counts[buckets] > 1)


def _check_unique_pairs(
    q_codes: IntArray,
    hashes: npt.NDArray[np.uint64],
    docs: Any,
    rows: IntArray,
    q_vocab: Any,
    origin: Origin,
) -> None:
    """A document may appear once per query. Hashes find candidates; strings confirm them.
    (The exact check, run when the fast one on hashes alone found a possible repeat.)"""
    keys = _pair_keys(q_codes, hashes)
    shared = _shared_buckets(keys)
    subset = keys if len(shared) == len(keys) else keys[shared]
    ordered = np.sort(subset)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if len(repeated) == 0:
        return
    candidates = shared[np.isin(subset, repeated)]
    seen: dict[tuple[int, str], int] = {}
    duplicates = []
    texts = take(docs, rows[candidates]).to_pylist()
    for at, doc in zip(candidates.tolist(), texts, strict=True):
        key = (int(q_codes[at]), doc)
        if key in seen:
            duplicates.append((max(int(rows[at]), int(rows[seen[key]])), key))
        else:
            seen[key] = at
    if duplicates:
        row, (q, doc) = min(duplicates)
        raise origin.error(
            row,
            f"duplicate result for query {str(q_vocab[q])!r}, doc {doc!r} (a document may appear "
            "once per query; remove the repeated line)",
        )
