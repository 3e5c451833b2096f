"""The leaderboard's per-query pairing: each result's per-query values of a metric (under any
spelling it was stored with), the check that results on one dataset hold the same queries, and
the paired randomization tests of each model against a dataset's best, batched by length."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankmeter.errors import FormatError, PolicyError

if TYPE_CHECKING:
    from rankmeter.vector.leaderboard import LeaderboardEntry


def _per_query_values(
    by_key: Mapping[tuple[str, str], LeaderboardEntry], label: str
) -> dict[tuple[str, str], list[float] | None]:
    """Each result's per-query values of ``label``, each dataset's queries in one order (its
    results hold the same queries); None where a result has no per-query values of it (only
    means), or lacks it for some query."""
    orders: dict[str, list[str]] = {}
    for (_, dataset), entry in by_key.items():
        if dataset not in orders and entry.per_query:
            orders[dataset] = sorted(entry.per_query)
    values: dict[tuple[str, str], list[float] | None] = {}
    for (model, dataset), entry in by_key.items():
        found = [_value(entry.per_query.get(q, {}), label) for q in orders.get(dataset, [])]
        kept = [v for v in found if v is not None]
        complete = bool(entry.per_query) and len(kept) == len(found)
        values[model, dataset] = kept if complete else None
    return values


def _check_same_queries(entries: list[LeaderboardEntry]) -> None:
    """Every result on one dataset holds every judged query, so results on other query ids
    were made on other judgments (two collections with one folder name, a changed qrels
    file): ranking them together, or pairing their queries, would compare different data. An
    entry made in Python without per-query values (only means) is not checked: it is never
    paired. A stored file always holds its queries' values, and is checked."""
    first: dict[str, LeaderboardEntry] = {}
    for entry in entries:
        if not entry.per_query and entry.path is None:  # only means, made in Python
            continue
        reference = first.setdefault(entry.dataset, entry)
        if set(entry.per_query) == set(reference.per_query):
            continue
        from rankmeter.vector.leaderboard import _shown_path

        where = f" ({_shown_path(reference.path)})" if reference.path is not None else ""
        reason = (
            f"the result of {entry.model!r} on {entry.dataset!r} has "
            f"{len(entry.per_query)} judged queries and that of {reference.model!r}{where} "
            f"{len(reference.per_query)}, or other query ids: the two were made on different "
            "judgments (collections are told apart by their folder's name); rerun one, or "
            "keep their results in separate folders"
        )
        if entry.path is not None:
            raise FormatError(_shown_path(entry.path), reason)
        raise PolicyError(reason)


def _pvalues(tested: list[Any]) -> list[float]:
    """The randomization test's p-value of each column of differences (NaN for an empty one),
    columns of one length tested together: the test draws the same sign flips for every column
    (common random numbers), so a column's p-value does not depend on the columns beside it,
    and one matrix is many times faster than a call per column."""
    import numpy as np

    from rankmeter.stats import paired_pvalues

    pvalues = [math.nan] * len(tested)
    by_length: dict[int, list[int]] = {}
    for i, diffs in enumerate(tested):
        if len(diffs):
            by_length.setdefault(len(diffs), []).append(i)
    for members in by_length.values():
        found = paired_pvalues(
            np.column_stack([tested[i] for i in members]), "randomization", seed=0
        )
        for i, pvalue in zip(members, found, strict=True):
            pvalues[i] = float(pvalue)
    return pvalues


def _value(values: Mapping[str, Any], label: str) -> float | None:
    """``values[label]``, also where it was stored under another spelling (NDCG@10)."""
    if label in values:
        return float(values[label])
    from rankmeter.errors import MetricError
    from rankmeter.metrics import parse_metric

    for name, value in values.items():
        try:
            if str(parse_metric(name)) == label:
                return float(value)
        except MetricError:
            continue
    return None


def _paired(best: LeaderboardEntry, other: LeaderboardEntry, label: str) -> Any:
    """Per-query differences (other minus best) on the queries both hold a value for."""
    import numpy as np

    pairs: list[float] = []
    for query, values in other.per_query.items():
        mine = _value(values, label)
        theirs = _value(best.per_query.get(query, {}), label)
        if mine is not None and theirs is not None:
            pairs.append(mine - theirs)
    return np.array(pairs, dtype=np.float64)
