"""Evaluation results: frozen, always keyed by metric, exportable to dicts, pandas and Arrow."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter.data._columns import FloatArray
from rankmeter.metrics import Metric

__all__ = ["EvalResult", "EvalResults", "PerQuery", "Policies"]


@dataclass(frozen=True)
class Policies:
    """How an evaluation was done; every result carries the policies that produced it.

    Attributes
    ----------
    rel : float
        Minimum grade counted relevant by binary metrics (trec_eval -l; default 1).
    include_missing : bool
        True: judged queries without results are evaluated as empty rankings and score 0
        (trec_eval -c). False (default): only queries in both run and qrels.
    judged_only : bool
        Unjudged documents are removed from rankings before evaluation (trec_eval -J).
    ties : str
        How equal scores are ordered: ``"trec_eval"`` (doc id descending) or ``"input"``.
    """

    rel: float = 1
    include_missing: bool = False
    judged_only: bool = False
    ties: str = "trec_eval"

    def to_dict(self) -> dict[str, Any]:
        rel: float | int = int(self.rel) if float(self.rel).is_integer() else self.rel
        return {
            "rel": rel,
            "include_missing": self.include_missing,
            "judged_only": self.judged_only,
            "ties": self.ties,
        }

    def describe(self) -> str:
        queries = "all judged queries" if self.include_missing else "queries in both run and qrels"
        parts = [f"relevant: grade >= {self.to_dict()['rel']}", f"ties: {self.ties}", queries]
        if self.judged_only:
            parts.append("judged documents only")
        return "; ".join(parts)


def _plain(metric: Metric, value: float) -> float | int:
    return round(value) if metric.spec.integer else float(value)


@dataclass(frozen=True)
class PerQuery:
    """Per-query values: one row per evaluated query, one column per metric."""

    query_ids: tuple[str, ...]
    metrics: tuple[Metric, ...]
    values: Mapping[str, FloatArray] = field(repr=False)

    def __post_init__(self) -> None:
        frozen = {}
        for name, array in self.values.items():
            copy = np.array(array, dtype=np.float64)
            copy.flags.writeable = False
            frozen[name] = copy
        object.__setattr__(self, "values", MappingProxyType(frozen))

    def __len__(self) -> int:
        return len(self.query_ids)

    def __getitem__(self, metric: str | Metric) -> FloatArray:
        return self.values[_key(metric, self.metrics)]

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        """``{query_id: {metric: value}}``."""
        columns = [(str(m), m, self.values[str(m)]) for m in self.metrics]
        return {
            q: {name: _plain(m, float(col[i])) for name, m, col in columns}
            for i, q in enumerate(self.query_ids)
        }

    def to_arrow(self) -> Any:
        import pyarrow as pa

        data: dict[str, Any] = {"query_id": pa.array(self.query_ids, type=pa.string())}
        for m in self.metrics:
            col = self.values[str(m)]
            data[str(m)] = pa.array(col.astype(np.int64) if m.spec.integer else col)
        return pa.table(data)

    def to_pandas(self) -> Any:
        """A DataFrame indexed by query id with one column per metric."""
        return self.to_arrow().to_pandas().set_index("query_id")


def _key(metric: str | Metric, metrics: tuple[Metric, ...]) -> str:
    return metric_key(metric, [str(m) for m in metrics])


def metric_key(metric: str | Metric, names: Sequence[str], done: str = "evaluated") -> str:
    """The canonical name under which ``metric`` (any spelling: ``"ndcg_cut.10"``, a Metric)
    was ``done`` among ``names``; KeyError naming them otherwise."""
    if isinstance(metric, Metric):
        return str(metric)
    if metric in names:
        return metric
    from rankmeter.metrics import parse_metric

    canonical = str(parse_metric(metric))
    if canonical in names:
        return canonical
    raise KeyError(f"{metric!r} was not {done}; {done} metrics: {', '.join(names)}")


@dataclass(frozen=True)
class EvalResult:
    """The evaluation of one run.

    Attributes
    ----------
    run : str
        The run's name.
    metrics : Mapping[str, float]
        Canonical metric name -> aggregate over queries (mean; sum for counts). Always a
        mapping, even for one metric.
    per_query : PerQuery
        Per-query values (``to_dict``, ``to_pandas``, ``to_arrow``).
    policies : Policies
        The policies used.
    measures : tuple of Metric
        The metrics, parsed, in the order they were asked for.
    """

    run: str
    metrics: Mapping[str, float]
    per_query: PerQuery
    policies: Policies
    measures: tuple[Metric, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    def __getitem__(self, metric: str | Metric) -> float:
        return self.metrics[_key(metric, self.measures)]

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """``{"metrics": {...}}``, plus ``"per_query": {qid: {...}}`` when asked."""
        out: dict[str, Any] = {
            "metrics": {str(m): _plain(m, self.metrics[str(m)]) for m in self.measures}
        }
        if per_query:
            out["per_query"] = self.per_query.to_dict()
        return out

    def to_pandas(self) -> Any:
        """Per-query values as a DataFrame (index: query id; columns: metrics)."""
        return self.per_query.to_pandas()

    def to_arrow(self) -> Any:
        return self.per_query.to_arrow()

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.metrics.items())
        return f"EvalResult(run={self.run!r}, n_queries={self.n_queries}, {means})"


@dataclass(frozen=True)
class EvalResults(Mapping[str, EvalResult]):
    """Evaluations of several runs against the same qrels, keyed by run name (in input order)."""

    results: tuple[EvalResult, ...]

    def __getitem__(self, run: str) -> EvalResult:
        for result in self.results:
            if result.run == run:
                return result
        raise KeyError(f"no run named {run!r}; runs: {', '.join(self)}")

    def __iter__(self) -> Iterator[str]:
        return (r.run for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def policies(self) -> Policies:
        return self.results[0].policies

    @property
    def measures(self) -> tuple[Metric, ...]:
        return self.results[0].measures

    def to_dict(self, *, per_query: bool = False) -> list[dict[str, Any]]:
        """A list of ``{"run": name, "metrics": {...}[, "per_query": {...}]}``."""
        return [{"run": r.run, **r.to_dict(per_query=per_query)} for r in self.results]

    def to_pandas(self) -> Any:
        """Aggregates as a DataFrame: one row per run, one column per metric."""
        import pandas as pd

        return pd.DataFrame([{"run": r.run, **r.metrics} for r in self.results]).set_index("run")

    def __repr__(self) -> str:
        return f"EvalResults({', '.join(repr(r.run) for r in self.results)})"
