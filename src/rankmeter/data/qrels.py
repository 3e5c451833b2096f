"""Qrels: relevance judgments, immutable and columnar."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from rankmeter.data._inputs import as_float_column
from rankmeter.data.arrays import (
    FloatArray,
    IntArray,
    ObjArray,
    arrow_ints,
    arrow_strings,
    compute,
    compute_options,
    import_pandas,
    readonly,
    release_arrow_memory,
)
from rankmeter.data.csr import offsets_from_sorted, row_groups
from rankmeter.data.hashing import HashLookup, PairLookup, string_hashes
from rankmeter.data.ids import intern_docs, intern_natural
from rankmeter.data.origin import Origin
from rankmeter.data.subtopics import Subtopics

__all__ = ["Qrels"]

#: From this many judgments on, memory Arrow kept after reading is handed back (as a Run does).
RELEASE_ROWS = 1 << 21


def _pair_order(q_codes: IntArray, d_codes: IntArray, n_queries: int, n_docs: int) -> IntArray:
    """The rows sorted by (query, doc) code: ``np.lexsort((d_codes, q_codes))`` wherever no
    pair repeats (the order is then the only one), found faster. One judgment per query
    (click labels) is placed, not sorted: each row at its query's slot; other qrels are
    sorted once on one key, query and doc together."""
    n = len(q_codes)
    if n == n_queries:  # (every query holds a row: one each)
        order = np.empty(n, dtype=np.int64)
        order[q_codes] = np.arange(n, dtype=np.int64)
        return order
    if n_queries * max(n_docs, 1) < 2**62:
        return np.argsort(q_codes * max(n_docs, 1) + d_codes)
    return np.lexsort((d_codes, q_codes))


class Qrels:
    """Relevance judgments: for each query, the judged documents and their grades.

    Grades are numbers: ``grade >= rel`` is relevant for binary metrics, ``0 <= grade < rel`` is
    judged non-relevant, and a negative grade marks a document that was pooled but not judged
    (as in trec_eval: it is neither relevant nor judged). Float grades are kept as given
    (trec_eval truncates them to integers).

    Qrels are immutable. Build them with :meth:`from_dict` or :meth:`from_columns`; files,
    DataFrames and Arrow tables are read by :mod:`rankmeter.io` (``rankmeter.io.read_qrels``,
    ``rankmeter.as_qrels``, which takes any supported input).

    Stored columnar: one segment per judged query, in natural order (``segment_ids``), its
    judgments at rows ``offsets[i]:offsets[i+1]`` of ``grades`` (and of :meth:`doc_ids`),
    sorted by doc. Doc ids are interned into :attr:`doc_vocabulary`.

    Examples
    --------
    >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d7": 1}})
    >>> qrels
    Qrels(2 queries, 3 judgments)
    >>> qrels.to_dict()["q1"]
    {'d1': 2, 'd2': 0}
    """

    __slots__ = (
        "_doc_codes",
        "_doc_lookup",
        "_doc_order",
        "_doc_vocab",
        "_grades",
        "_inclusion",
        "_keys",
        "_offsets",
        "_pair_lookup",
        "_pool_coverage",
        "_query_ids",
        "_query_lookup",
        "_query_rows",
        "_query_vocab",
        "_subtopics",
        "source",
    )

    def __init__(
        self,
        query_vocab: Any,
        doc_vocab: Any,
        offsets: IntArray,
        doc_codes: IntArray,
        grades: FloatArray,
        source: str,
        subtopics: Subtopics | None = None,
    ) -> None:
        # Private: use the from_* constructors. Rows are sorted by (query, doc code).
        # The query ids stay an Arrow string array (natural order) until asked for as Python
        # strings (`segment_ids`, `query_ids`): a file of a million queries makes no million
        # objects to be read.
        self._query_vocab = query_vocab
        self._query_ids: ObjArray | None = None
        self._doc_vocab = doc_vocab
        self._offsets = readonly(offsets)
        self._doc_codes = readonly(doc_codes)
        self._grades = readonly(grades)
        n_docs = max(len(doc_vocab), 1)
        keys = row_groups(offsets) * n_docs + doc_codes
        self._keys = readonly(keys)
        self.source = source
        self._query_rows: dict[str, int] | None = None
        self._query_lookup: HashLookup | None = None
        self._doc_lookup: HashLookup | None = None
        self._pair_lookup: PairLookup | None = None
        self._inclusion: FloatArray | None = None
        self._pool_coverage: tuple[int, int] | None = None
        self._subtopics = subtopics
        self._doc_order: IntArray | None = None

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_columns(
        cls, query_ids: Any, doc_ids: Any, grades: Any, *, origin: Origin | str = "<columns>"
    ) -> Qrels:
        """Build from three parallel columns (lists, NumPy or Arrow arrays)."""
        if isinstance(origin, str):
            origin = Origin(origin)
        q_codes, q_vocab = intern_natural(query_ids, origin, "query id")
        del query_ids  # (each column freed once encoded, where the caller let it go)
        d_codes, d_vocab = intern_docs(doc_ids, origin)
        del doc_ids
        values = as_float_column(grades, origin, "relevance grade", allow_inf=False)
        del grades
        if len(values) >= RELEASE_ROWS:
            release_arrow_memory()
        if not (len(q_codes) == len(d_codes) == len(values)):
            raise origin.error(None, "query, doc and grade columns have different lengths")
        if len(values) == 0:
            raise origin.error(None, "no judgments: qrels must hold at least one line")
        order = _pair_order(q_codes, d_codes, len(q_vocab), len(d_vocab))
        q_sorted = q_codes[order]
        d_sorted = d_codes[order]
        dup = np.flatnonzero((q_sorted[1:] == q_sorted[:-1]) & (d_sorted[1:] == d_sorted[:-1]))
        if len(dup):
            # (the lines in file order within a pair: the second line of the first pair named)
            order = np.lexsort((d_codes, q_codes))
            q_sorted = q_codes[order]
            d_sorted = d_codes[order]
            dup = np.flatnonzero((q_sorted[1:] == q_sorted[:-1]) & (d_sorted[1:] == d_sorted[:-1]))
            row = int(max(order[dup[0]], order[dup[0] + 1]))
            raise origin.error(
                row,
                f"duplicate judgment for query {q_vocab[int(q_sorted[dup[0]])].as_py()!r}, "
                f"doc {d_vocab[int(d_sorted[dup[0]])].as_py()!r} "
                "(each query-doc pair may be judged once; remove one of the lines)",
            )
        del q_codes, d_codes
        offsets = offsets_from_sorted(q_sorted, len(q_vocab))
        del q_sorted
        return cls(q_vocab, d_vocab, offsets, d_sorted, values[order], origin.name)

    @classmethod
    def from_subtopic_columns(
        cls,
        query_ids: Any,
        subtopic_ids: Any,
        doc_ids: Any,
        grades: Any,
        *,
        origin: Origin | str = "<columns>",
    ) -> Qrels:
        """Build diversity qrels from four parallel columns: each line judges a document for
        one subtopic of its query (``qid subtopic docid grade``, as ndeval reads a TREC file).

        The Qrels holds one judgment per (query, doc) whose grade is the largest of its
        subtopic grades (ndeval's convention: relevant to any subtopic is relevant), so other
        metrics read it as ordinary qrels; :attr:`subtopics` keeps every subtopic grade.
        A (query, subtopic, doc) judged twice is an error naming the second line.

        >>> qrels = Qrels.from_subtopic_columns(
        ...     ["q", "q", "q"], ["1", "2", "2"], ["a", "a", "b"], [1, 0, 2])
        >>> qrels.to_dict(), qrels.subtopics.names(qrels.subtopics.codes)
        ({'q': {'a': 1, 'b': 2}}, ['1', '2', '2'])
        """
        if isinstance(origin, str):
            origin = Origin(origin)
        q_codes, q_vocab = intern_natural(query_ids, origin, "query id")
        s_codes, s_vocab = intern_natural(subtopic_ids, origin, "subtopic")
        d_codes, d_vocab = intern_docs(doc_ids, origin)
        values = as_float_column(grades, origin, "relevance grade", allow_inf=False)
        if not (len(q_codes) == len(s_codes) == len(d_codes) == len(values)):
            raise origin.error(
                None, "query, subtopic, doc and grade columns have different lengths"
            )
        if len(values) == 0:
            raise origin.error(None, "no judgments: qrels must hold at least one line")
        # (stable: the lines of one (query, doc, subtopic) stay in file order)
        order = np.lexsort((s_codes, d_codes, q_codes))
        qs, ds, ss = q_codes[order], d_codes[order], s_codes[order]
        same_pair = (qs[1:] == qs[:-1]) & (ds[1:] == ds[:-1])
        dup = np.flatnonzero(same_pair & (ss[1:] == ss[:-1]))
        if len(dup):
            row = int(max(order[dup[0]], order[dup[0] + 1]))
            raise origin.error(
                row,
                f"duplicate judgment for query {q_vocab[int(qs[dup[0]])].as_py()!r}, subtopic "
                f"{s_vocab[int(ss[dup[0]])].as_py()!r}, doc {d_vocab[int(ds[dup[0]])].as_py()!r} "
                "(each query-subtopic-doc triple may be judged once; remove one of the lines)",
            )
        starts = np.flatnonzero(np.concatenate(([True], ~same_pair)))
        sorted_grades = values[order]
        grade = np.maximum.reduceat(sorted_grades, starts) if len(starts) else sorted_grades
        bounds = np.append(starts, len(order)).astype(np.int64)
        subtopics = Subtopics(bounds, ss, sorted_grades, s_vocab, given=True)
        offsets = offsets_from_sorted(qs[starts], len(q_vocab))
        return cls(q_vocab, d_vocab, offsets, ds[starts], grade, origin.name, subtopics)

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, float]]) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape)."""
        origin = Origin("<dict>", describe=lambda row: f"query {qs[row]!r}, doc {ds[row]!r}")
        if not isinstance(judgments, Mapping):
            raise origin.error(
                None,
                f"expected a dict of dicts {{query: {{doc: grade}}}}, got {type(judgments).__name__}",
            )
        qs: list[Any] = []
        ds: list[Any] = []
        gs: list[Any] = []
        for q, docs in judgments.items():
            if not isinstance(docs, Mapping):
                raise origin.error(
                    None, f"query {q!r}: expected a dict {{doc: grade}}, got {type(docs).__name__}"
                )
            qs.extend([q] * len(docs))
            ds.extend(docs.keys())
            gs.extend(docs.values())
        return cls.from_columns(qs, ds, gs, origin=origin)

    # -- access -------------------------------------------------------------------------------
    @property
    def query_ids(self) -> tuple[str, ...]:
        """Judged queries, in natural order (numeric ids numerically, others in byte order)."""
        return tuple(self.segment_ids)

    def query_rows(self) -> dict[str, int]:
        """Query id -> its row in this table's query order (built once, then reused by every
        join: a run evaluated in chunks, or many runs against the same qrels)."""
        if self._query_rows is None:
            ids = self.segment_ids.tolist()
            self._query_rows = dict(zip(ids, range(len(ids)), strict=True))
        return self._query_rows

    def rows_of(self, query_ids: Any) -> IntArray:
        """The segment (row of :attr:`query_ids`) of each of these query ids (strings, in a
        sequence or an object array, as a Run's ``segment_ids``), -1 for an id not judged:
        ``query_rows().get(q, -1)`` for each, vectorised (the ids are hashed and found in a
        table of the judged ids built once, then reused by every join)."""
        if isinstance(query_ids, np.ndarray):
            query_ids = query_ids.tolist()
        # (an Arrow string array, as a Run's segment_strings, is looked up as it is)
        strings = query_ids if _is_arrow(query_ids) else arrow_strings(query_ids)
        if strings.type != self._query_vocab.type:  # (string and large_string)
            cast = compute_options("CastOptions", target_type=self._query_vocab.type)
            strings = compute("cast", strings, options=cast)
        if self._query_lookup is None:
            self._query_lookup = HashLookup(self._query_vocab)
        rows = np.arange(len(strings), dtype=np.int64)
        return self._query_lookup.codes(strings, string_hashes(strings), rows)

    def doc_lookup(self) -> HashLookup:
        """Finds doc ids in this table's doc vocabulary (built once, reused by every join)."""
        if self._doc_lookup is None:
            self._doc_lookup = HashLookup(self._doc_vocab)
        return self._doc_lookup

    def pair_lookup(self) -> PairLookup:
        """Finds (query, doc) pairs among the judgments: groups are segments (rows of
        :attr:`query_ids`), a found pair's row is its judgment row (built once, reused by
        every join)."""
        if self._pair_lookup is None:
            hashes = self.doc_lookup().hashes[self._doc_codes]
            self._pair_lookup = PairLookup(
                row_groups(self._offsets), hashes, self._doc_vocab, self._doc_codes
            )
        return self._pair_lookup

    @property
    def query_strings(self) -> Any:
        """The judged queries as an Arrow string array, in natural order (:attr:`query_ids`
        without a Python string per query)."""
        return self._query_vocab

    @property
    def segment_ids(self) -> ObjArray:
        """The query id of each segment (read-only object array): the judged queries in
        natural order, as :attr:`query_ids`; ``query_rows()`` maps an id to its segment."""
        if self._query_ids is None:
            self._query_ids = readonly(np.asarray(self._query_vocab.to_pylist(), dtype=object))
        return self._query_ids

    @property
    def offsets(self) -> IntArray:
        """CSR offsets (read-only int64, ``n_queries + 1``): the judgments of segment ``i``
        are rows ``offsets[i]:offsets[i+1]``."""
        return self._offsets

    @property
    def grades(self) -> FloatArray:
        """The grade of every judgment row (read-only float64), negative ones included."""
        return self._grades

    @property
    def doc_vocabulary(self) -> Any:
        """The distinct judged doc ids (an Arrow string array); :meth:`doc_lookup` finds
        strings in it, and :meth:`judgment_rows` takes positions in it."""
        return self._doc_vocab

    def doc_ids(self, rows: IntArray | slice = slice(None)) -> Any:
        """The doc ids of these judgment rows (all by default), as an Arrow string array."""
        return self._doc_vocab.take(arrow_ints(self._doc_codes[rows]))

    def doc_order(self) -> IntArray:
        """Each judgment row's doc id's place in byte order among the judged doc ids (as C's
        strcmp orders them: ndeval breaks ties by it); sorted once, then reused."""
        if self._doc_order is None:
            import pyarrow.compute as pc

            order = np.asarray(pc.sort_indices(self._doc_vocab), dtype=np.int64)
            place = np.empty(len(order), dtype=np.int64)
            place[order] = np.arange(len(order), dtype=np.int64)
            self._doc_order = readonly(place[self._doc_codes])
        return self._doc_order

    def judgment_rows(self, segments: IntArray, doc_codes: IntArray) -> IntArray:
        """The judgment row of each (segment, doc) pair, -1 where that doc is not judged for
        that query; ``doc_codes`` are positions in :attr:`doc_vocabulary` (>= 0)."""
        keys = segments * max(len(self._doc_vocab), 1) + doc_codes.astype(np.int64)
        at = np.minimum(np.searchsorted(self._keys, keys), max(len(self._keys) - 1, 0))
        rows: IntArray = np.where(self._keys[at] == keys, at, -1)
        return rows

    @property
    def inclusion(self) -> FloatArray | None:
        """Each judgment row's inclusion probability, where the judgments are a sample (read-only
        float64 in (0, 1], aligned with :attr:`grades`); None when every judgment was made in
        full (probability 1). The sampled-judgment metrics (statAP, stat_nDCG, stat_P) weigh a
        judgment by ``1 / probability``; every other metric ignores it."""
        return self._inclusion

    @property
    def pool_coverage(self) -> tuple[int, int] | None:
        """Where the inclusion probabilities came from a pool: (how many of the pool's items
        for these qrels' queries are judged here, how many items it holds for them); None
        otherwise (see :func:`rankmeter.io.sampled_qrels`)."""
        return self._pool_coverage

    def with_inclusion(self, probabilities: Any, coverage: tuple[int, int] | None = None) -> Qrels:
        """The same judgments, each row with its inclusion probability (see :attr:`inclusion`;
        None: judged in full), and where they came from a pool, its :attr:`pool_coverage`.
        The arrays are shared, not copied.

        >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}})
        >>> qrels.with_inclusion([0.5, 1.0]).inclusion.tolist(), qrels.inclusion is None
        ([0.5, 1.0], True)
        """
        import copy

        from rankmeter.errors import RankmeterError

        out = copy.copy(self)
        out._pool_coverage = None if probabilities is None else coverage
        if probabilities is None:
            out._inclusion = None
            return out
        values = np.asarray(probabilities, dtype=np.float64)
        if values.shape != self._grades.shape:
            raise RankmeterError(
                f"inclusion probabilities: {values.size} given for {len(self._grades)} judgments; "
                "give one per judgment row"
            )
        bad = np.flatnonzero(~((values > 0) & (values <= 1)))
        if len(bad):
            raise RankmeterError(
                f"inclusion probabilities must be in (0, 1], got {float(values[bad[0]])!r} for "
                f"judgment row {int(bad[0])}"
            )
        out._inclusion = readonly(values)
        return out

    @property
    def subtopics(self) -> Subtopics:
        """The subtopic judgments of every judgment row (see :meth:`from_subtopic_columns`);
        for ordinary qrels, each row judged for one subtopic (``subtopics.given`` False)."""
        if self._subtopics is None:
            self._subtopics = Subtopics.single(self._grades)
        return self._subtopics

    def __len__(self) -> int:
        return len(self._grades)

    @property
    def n_queries(self) -> int:
        return len(self._query_vocab)

    def __repr__(self) -> str:
        return f"Qrels({self.n_queries} queries, {len(self)} judgments)"

    def __iter__(self) -> Iterator[tuple[str, str, float]]:
        docs = self._doc_vocab.to_pylist()
        query_ids = self.segment_ids
        groups = row_groups(self._offsets)
        for g, d, grade in zip(groups, self._doc_codes, self._grades, strict=True):
            yield query_ids[g], docs[d], float(grade)

    def to_dict(self) -> dict[str, dict[str, int | float]]:
        """``{query_id: {doc_id: grade}}``; integral grades come back as ints."""
        out: dict[str, dict[str, int | float]] = {}
        for q, d, g in self:
            out.setdefault(q, {})[d] = int(g) if g.is_integer() else g
        return out

    def to_arrow(self) -> Any:
        import pyarrow as pa

        groups = row_groups(self._offsets)
        return pa.table(
            {
                "query_id": pa.array(self.segment_ids[groups].tolist(), type=pa.string()),
                "doc_id": self._doc_vocab.take(pa.array(self._doc_codes)),
                "relevance": pa.array(self._grades),
            }
        )

    def to_pandas(self) -> Any:
        import_pandas()
        return self.to_arrow().to_pandas()


def _is_arrow(values: Any) -> bool:
    import pyarrow as pa

    return isinstance(values, pa.Array)
