"""Run: a system's ranked results, immutable and columnar, sorted once by the tie policy."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from rankmeter.data._columns import (
    FloatArray,
    IntArray,
    ObjArray,
    Origin,
    arrow_ints,
    as_float_column,
    byte_order_rank,
    intern,
    intern_docs,
    offsets_from_sorted,
    readonly,
    row_groups,
)
from rankmeter.errors import PolicyError

__all__ = ["TIE_POLICIES", "Run"]

#: How documents with equal scores are ordered.
#: ``"trec_eval"``: score descending, then doc id descending in byte order (trec_eval's rule).
#: ``"input"``: score descending, then the order in which they were given.
#: The rank column of a TREC run is never used, as in trec_eval.
TIE_POLICIES = ("trec_eval", "input")


def check_ties(ties: str) -> str:
    if ties not in TIE_POLICIES:
        raise PolicyError(
            f"ties={ties!r} is not a tie policy; use one of {', '.join(map(repr, TIE_POLICIES))}"
        )
    return ties


class Run:
    """A system's results: for each query, documents with scores, in rank order.

    Ranks come from the scores alone: score descending, ties broken by ``ties`` (default
    trec_eval's rule: doc id descending in byte order). A TREC file's rank column is ignored.

    Examples
    --------
    >>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}, name="bm25")
    >>> run
    Run('bm25', 1 queries, 3 results)
    >>> run.ranking("q1")
    ['d2', 'd3', 'd1']
    """

    __slots__ = (
        "_doc_codes",
        "_doc_vocab",
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
        query_ids: ObjArray,
        doc_vocab: Any,
        offsets: IntArray,
        doc_codes: IntArray,
        scores: FloatArray,
        input_rows: IntArray,
        ties: str,
        source: str,
    ) -> None:
        # Private: use the from_* constructors. Rows are grouped by query, in rank order.
        self.name = name
        self._query_ids = readonly(query_ids)
        self._doc_vocab = doc_vocab
        self._offsets = readonly(offsets)
        self._doc_codes = readonly(doc_codes)
        self._scores = readonly(scores)
        self._input_rows = readonly(input_rows)
        self.ties = ties
        self.source = source

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
        q_codes, q_vocab = intern(query_ids, origin, "query id")
        d_codes, d_vocab = intern_docs(doc_ids, origin)
        values = as_float_column(scores, origin, "score", allow_inf=True)
        if not (len(q_codes) == len(d_codes) == len(values)):
            raise origin.error(None, "query, doc and score columns have different lengths")
        if len(values) == 0:
            raise origin.error(None, "no results: a run must hold at least one line")
        _check_unique_pairs(q_codes, d_codes, len(d_vocab), q_vocab, d_vocab, origin)
        rows = np.arange(len(values), dtype=np.int64)
        order = _rank_order(q_codes, d_codes, values, rows, d_vocab, ties)
        q_sorted = q_codes[order]
        offsets = offsets_from_sorted(q_sorted, len(q_vocab))
        return cls(
            name, q_vocab, d_vocab, offsets, d_codes[order], values[order], order, ties, origin.name
        )

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

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        format: str | None = None,
        ties: str = "trec_eval",
    ) -> Run:
        """Read a run: TREC (``qid Q0 docid rank score tag``), CSV/TSV with a header, JSONL or
        Parquet; ``.gz`` compressed or ``"-"`` for standard input. The name defaults to the TREC
        tag, else the file name."""
        from rankmeter.io import read_run

        return read_run(path, name=name, format=format, ties=ties)

    @classmethod
    def from_arrow(cls, table: Any, *, name: str = "run", ties: str = "trec_eval") -> Run:
        """Build from an Arrow table with columns query_id, doc_id, score (aliases accepted)."""
        from rankmeter.io.tables import run_from_table

        return run_from_table(table, Origin("<arrow table>"), name=name, ties=ties)

    @classmethod
    def from_pandas(cls, frame: Any, *, name: str = "run", ties: str = "trec_eval") -> Run:
        """Build from a pandas DataFrame with columns query_id, doc_id, score."""
        from rankmeter.io.tables import arrow_from_pandas, run_from_table

        origin = Origin("<pandas DataFrame>")
        return run_from_table(arrow_from_pandas(frame), origin, name=name, ties=ties)

    @classmethod
    def from_polars(cls, frame: Any, *, name: str = "run", ties: str = "trec_eval") -> Run:
        """Build from a polars DataFrame with columns query_id, doc_id, score."""
        from rankmeter.io.tables import run_from_table

        origin = Origin("<polars DataFrame>")
        return run_from_table(frame.to_arrow(), origin, name=name, ties=ties)

    @classmethod
    def load(cls, value: Any, *, name: str | None = None, ties: str = "trec_eval") -> Run:
        """Accept any supported input: Run, path, dict of dicts, DataFrame or Arrow table."""
        from rankmeter.io.tables import coerce_run

        return coerce_run(value, name=name, ties=ties)

    def with_ties(self, ties: str) -> Run:
        """The same results ranked under another tie policy (self if it is already so)."""
        if check_ties(ties) == self.ties:
            return self
        groups = row_groups(self._offsets)
        order = _rank_order(
            groups, self._doc_codes, self._scores, self._input_rows, self._doc_vocab, ties
        )
        return Run(
            self.name,
            self._query_ids,
            self._doc_vocab,
            self._offsets,
            self._doc_codes[order],
            self._scores[order],
            self._input_rows[order],
            ties,
            self.source,
        )

    def renamed(self, name: str) -> Run:
        """The same run under another name."""
        return Run(
            name,
            self._query_ids,
            self._doc_vocab,
            self._offsets,
            self._doc_codes,
            self._scores,
            self._input_rows,
            self.ties,
            self.source,
        )

    # -- access -------------------------------------------------------------------------------
    @property
    def query_ids(self) -> tuple[str, ...]:
        """Queries with results, in natural order."""
        return tuple(self._query_ids)

    @property
    def n_queries(self) -> int:
        return len(self._query_ids)

    def __len__(self) -> int:
        return len(self._scores)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.n_queries} queries, {len(self)} results)"

    def ranking(self, query_id: str) -> list[str]:
        """Doc ids of one query in rank order."""
        hits = np.flatnonzero(self._query_ids == query_id)
        if len(hits) == 0:
            raise KeyError(query_id)
        q = int(hits[0])
        codes = self._doc_codes[self._offsets[q] : self._offsets[q + 1]]
        return [str(d) for d in self._doc_vocab.take(codes).to_pylist()]

    def __iter__(self) -> Iterator[tuple[str, str, float]]:
        docs = self._doc_vocab.to_pylist()
        groups = row_groups(self._offsets)
        for g, d, s in zip(groups, self._doc_codes, self._scores, strict=True):
            yield self._query_ids[g], docs[d], float(s)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` with docs in rank order."""
        out: dict[str, dict[str, float]] = {}
        for q, d, s in self:
            out.setdefault(q, {})[d] = s
        return out

    def to_arrow(self) -> Any:
        """Columns query_id, doc_id, rank (1-based, under this run's tie policy), score."""
        import pyarrow as pa

        groups = row_groups(self._offsets)
        rank = np.arange(len(groups), dtype=np.int64) - self._offsets[groups] + 1
        return pa.table(
            {
                "query_id": pa.array(self._query_ids[groups].tolist(), type=pa.string()),
                "doc_id": self._doc_vocab.take(pa.array(self._doc_codes)),
                "rank": pa.array(rank),
                "score": pa.array(self._scores),
            }
        )

    def to_pandas(self) -> Any:
        return self.to_arrow().to_pandas()


def _rank_order(
    q_codes: IntArray,
    d_codes: IntArray,
    scores: FloatArray,
    rows: IntArray,
    d_vocab: Any,
    ties: str,
) -> IntArray:
    """Permutation that groups rows by query and puts each query's rows in rank order."""
    # Equal scores (-0.0 == 0.0 included, as in trec_eval's comparison) are the only place the
    # tie policy matters, so doc ids are ranked in byte order only for the documents that tie.
    same_query = q_codes[1:] == q_codes[:-1]
    in_order = (q_codes[1:] > q_codes[:-1]) | (same_query & (scores[1:] <= scores[:-1]))
    if in_order.all() and _ascending(rows):
        order = np.arange(len(scores), dtype=np.int64)
    else:
        # np.lexsort sorts by the last key first; negating the scores sorts them descending.
        # Rows as the last key give the "input" policy's order.
        order = np.lexsort((rows, -scores, q_codes))
    q, s = q_codes[order], scores[order]
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if ties == "input" or not tied.any():
        return order
    involved = np.zeros(len(order), dtype=bool)
    involved[1:] |= tied
    involved[:-1] |= tied
    tied_docs = np.unique(d_codes[order[involved]])
    doc_rank = np.zeros(len(d_vocab), dtype=np.int64)
    doc_rank[tied_docs] = byte_order_rank(d_vocab.take(arrow_ints(tied_docs))) + 1
    return np.lexsort((-doc_rank[d_codes], -scores, q_codes))


def _ascending(values: IntArray) -> bool:
    return bool(np.all(values[1:] > values[:-1]))


def _check_unique_pairs(
    q_codes: IntArray,
    d_codes: IntArray,
    n_docs: int,
    q_vocab: ObjArray,
    d_vocab: Any,
    origin: Origin,
) -> None:
    import pyarrow.compute as pc

    keys = q_codes * max(n_docs, 1) + d_codes
    if len(pc.unique(arrow_ints(keys))) == len(keys):
        return
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = int(np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])[0])
    row = int(order[first + 1])
    raise origin.error(
        row,
        f"duplicate result for query {q_vocab[q_codes[row]]!r}, doc "
        f"{d_vocab[int(d_codes[row])].as_py()!r} (a document may appear once per query; "
        "remove the repeated line)",
    )
