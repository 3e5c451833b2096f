"""Run construction: rank order (the tie order), and the duplicate check at sizes where it takes
its bucketed path."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmeter import Run
from rankmeter.errors import FormatError


def _columns(n_queries: int, per_query: int) -> tuple[list[str], list[str], np.ndarray]:
    queries = [f"q{q}" for q in range(n_queries) for _ in range(per_query)]
    docs = [f"d{d}" for _ in range(n_queries) for d in range(per_query)]
    scores = np.tile(np.linspace(1.0, 0.0, per_query), n_queries)
    return queries, docs, scores


def test_many_unique_results_pass() -> None:
    queries, docs, scores = _columns(300, 100)
    run = Run.from_columns(queries, docs, scores)
    assert len(run) == 30_000
    assert run.ranking("q7")[:3] == ["d0", "d1", "d2"]


@pytest.mark.parametrize("at", [1, 12_345, 29_999])
def test_one_repeated_result_among_many_is_found(at: int) -> None:
    queries, docs, scores = _columns(300, 100)
    queries.append(queries[at])
    docs.append(docs[at])
    scores = np.append(scores, 0.5)
    with pytest.raises(
        FormatError, match=rf":30001: duplicate result for query '{queries[at]}', doc '{docs[at]}'"
    ):
        Run.from_columns(queries, docs, scores)


def test_same_doc_in_different_queries_is_fine() -> None:
    queries = [q for q in "abc" for _ in range(1000)]
    docs = [f"d{i}" for i in range(1000)] * 3
    run = Run.from_columns(queries, docs, np.arange(3000.0))
    assert run.n_queries == 3


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "10", "q"]),
            st.sampled_from(["d1", "d10", "d2", "D", "é", "a\x00", "a", "doc-long-id-9", "z" * 9]),
            st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.5]),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda row: (row[0], row[1]),
    ),
    st.booleans(),
    st.integers(1, 5),
)
def test_ranks_follow_trec_eval_order_in_tied_pairs_and_blocks(
    rows: list[tuple[str, str, float]], grouped: bool, chunks: int
) -> None:
    """Score descending, then doc id descending in byte order (tied pairs are swapped, longer
    tied blocks sorted), whatever the input order and however the columns are chunked."""
    if grouped:  # grouped by query, scores descending: the order most TREC runs come in
        rows = sorted(rows, key=lambda r: (r[0], -r[2]))
    size = -(-len(rows) // chunks)
    parts = [rows[i : i + size] for i in range(0, len(rows), size)]

    def column(at: int, kind: pa.DataType) -> pa.ChunkedArray:
        return pa.chunked_array([pa.array([r[at] for r in p], type=kind) for p in parts], kind)

    run = Run.from_columns(column(0, pa.string()), column(1, pa.string()), column(2, pa.float64()))
    for query in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == query]
        # Python's sort is stable: doc ids descending (UTF-8 bytes), then scores descending.
        expected = sorted(mine, key=lambda r: r[1].encode(), reverse=True)
        expected.sort(key=lambda r: -r[2])
        assert run.ranking(query) == [r[1] for r in expected]
        # The input policy keeps the given order among equal scores; back again is the same.
        by_input = run.with_ties("input")
        assert by_input.ranking(query) == [r[1] for r in sorted(mine, key=lambda r: -r[2])]
        assert by_input.with_ties("trec_eval").ranking(query) == run.ranking(query)
