"""Run construction at sizes where the duplicate check takes its bucketed path."""

from __future__ import annotations

import numpy as np
import pytest

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
