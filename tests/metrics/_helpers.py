"""Small shared helpers for the metric tests: evaluate dicts, get plain per-query values."""

from __future__ import annotations

from typing import Any

import rankmeter


def per_query(
    qrels: Any, run: Any, metrics: list[str] | str, **policies: Any
) -> dict[str, dict[str, float]]:
    """``{query: {canonical metric name: value}}`` as floats, through ``rankmeter.evaluate``."""
    result = rankmeter.evaluate(qrels, run, metrics, **policies)
    return {
        q: {name: float(v) for name, v in row.items()}
        for q, row in result.per_query.to_dict().items()
    }


def ranking(*docs: str, top: float = 100.0) -> dict[str, float]:
    """A run for one query ranking ``docs`` in the given order (distinct, descending scores)."""
    return {doc: top - i for i, doc in enumerate(docs)}
