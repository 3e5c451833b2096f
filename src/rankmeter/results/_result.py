"""The evaluation of one run (:class:`EvalResult`, its :class:`PerQuery` values) and of
several (:class:`EvalResults`): frozen, keyed by metric, exportable to dicts, pandas and Arrow."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankmeter.data.arrays import FloatArray, import_pandas
from rankmeter.data.run import unique_names
from rankmeter.metrics import Metric
from rankmeter.results._by_metric import ByMetric, metric_key
from rankmeter.results._facts import RunFacts
from rankmeter.results._judged import (
    JUDGED_BELOW,
    JUDGED_DEFAULT_K,
    JudgedWarning,
    check_judged_below,
    judged_warning,
)
from rankmeter.results._policies import Policies

__all__ = ["EvalResult", "EvalResults", "PerQuery", "check_worst"]


def check_worst(value: Any) -> int:
    """How many of the worst queries to list (``evaluate --worst``), checked: an integer >= 1."""
    from rankmeter._validate import integer

    return integer("worst", value, low=1, what="how many of the worst queries to list")


def _plain(metric: Metric, value: float) -> float | int:
    return round(value) if metric.spec.integer else float(value)


def _frozen_column(values: Any) -> FloatArray:
    copy = np.array(values, dtype=np.float64)
    copy.flags.writeable = False
    return copy


class _QueryIds:
    """:attr:`PerQuery.query_ids`: given as strings, or as an Arrow string array (what
    ``evaluate`` gives: a million queries make no million strings until they are asked for),
    a tuple of str when read."""

    def __get__(self, obj: Any, owner: Any = None) -> tuple[str, ...]:
        if obj is None:
            raise AttributeError("query_ids")
        ids = obj.__dict__["_query_ids"]
        if not isinstance(ids, tuple):
            ids = tuple(ids.to_pylist())
            obj.__dict__["_query_ids"] = ids
        return ids

    def __set__(self, obj: Any, ids: Any) -> None:
        import pyarrow as pa

        if "_query_ids" in obj.__dict__:
            raise dataclasses.FrozenInstanceError("cannot assign to field 'query_ids'")
        obj.__dict__["_query_ids"] = (
            ids if isinstance(ids, (tuple, pa.Array, pa.ChunkedArray)) else tuple(ids)
        )


@dataclass(frozen=True)
class PerQuery:
    """Per-query values: one row per evaluated query, one column per metric (named by its
    label). ``query_ids`` may be given as an Arrow string array (made a tuple of str when
    first read)."""

    query_ids: tuple[str, ...]
    metrics: tuple[Metric, ...]
    values: Mapping[str, FloatArray] = field(repr=False)

    def __post_init__(self) -> None:
        frozen = {m.label: _frozen_column(self.values[m.label]) for m in self.metrics}
        object.__setattr__(self, "values", ByMetric(self.metrics, frozen))

    def __len__(self) -> int:
        return len(self.__dict__["_query_ids"])

    def __getitem__(self, metric: str | Metric) -> FloatArray:
        return self.values[metric_key(metric, self.metrics)]

    def worst(self, metric: str | Metric, n: int) -> tuple[tuple[str, float], ...]:
        """The ``n`` queries with the lowest values of ``metric``, lowest first, as
        ``(query_id, value)`` pairs; equal values keep the queries' order (``evaluate
        --worst N``). Fewer when there are fewer queries.

        >>> import rankmeter
        >>> result = rankmeter.evaluate({"q1": {"a": 1}, "q2": {"a": 1}},
        ...                             {"q1": {"b": 2.0, "a": 1.0}, "q2": {"a": 1.0}}, "RR")
        >>> result.per_query.worst("RR", 1)
        (('q1', 0.5),)
        """
        n = check_worst(n)
        values = self[metric]
        order = np.argsort(values, kind="stable")[:n]
        ids = self.__dict__["_query_ids"]
        if isinstance(ids, tuple):
            named = [ids[i] for i in order]
        else:  # (the few ids named, not every query's, made Python strings)
            from rankmeter.data.arrays import take

            named = take(ids, order).to_pylist()
        return tuple((q, float(values[i])) for q, i in zip(named, order, strict=True))

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        """``{query_id: {metric: value}}``."""
        columns = [(m.label, m, self.values[m.label]) for m in self.metrics]
        return {
            q: {name: _plain(m, float(col[i])) for name, m, col in columns}
            for i, q in enumerate(self.query_ids)
        }

    def to_arrow(self) -> Any:
        import pyarrow as pa

        data: dict[str, Any] = {"query_id": pa.array(self.query_ids, type=pa.string())}
        for m in self.metrics:
            col = self.values[m.label]
            data[m.label] = pa.array(col.astype(np.int64) if m.spec.integer else col)
        return pa.table(data)

    def to_pandas(self) -> Any:
        """A DataFrame indexed by query id with one column per metric."""
        import_pandas()
        return self.to_arrow().to_pandas().set_index("query_id")


# (set once the dataclass is made, so the field stays required: its __init__ sets the ids
# through the descriptor, and __repr__ and __eq__ read them through it)
setattr(PerQuery, "query_ids", _QueryIds())  # noqa: B010


@dataclass(frozen=True)
class EvalResult:
    """The evaluation of one run.

    Attributes
    ----------
    run : str
        The run's name.
    metrics : Mapping[str, float]
        Metric -> aggregate over queries (mean; sum for counts), keyed by the names the
        metrics were asked for (``"MRR@10"`` stays ``"MRR@10"``); a lookup accepts any name of
        a metric (``result.metrics["RR@10"]``). Always a mapping, even for one metric.
    per_query : PerQuery
        Per-query values (``to_dict``, ``to_pandas``, ``to_arrow``).
    policies : Policies
        The policies used.
    measures : tuple of Metric
        The metrics, parsed, in the order they were asked for.
    judged : float
        The run's mean Judged@k (the ``Judged`` metric at ``judged_k``) over the queries it
        answered, computed with the same qrels and policies whether or not it was asked for:
        how much of what the metrics looked at has a judgment. NaN when not computed.
    judged_k : int
        Its k: the largest cutoff of the metrics asked for, 10 when none has one
        (:func:`judged_cutoff`).
    depth : int or None
        The most results any evaluated query of the run has (so a cutoff beyond it measures
        no deeper); None when not known.
    facts : RunFacts or None
        What the evaluation saw of the run's data (its source, query overlap with the qrels,
        written order), for the warnings beside the numbers; None when not known.
    relevant_only : bool
        The qrels hold only relevant judgments (:func:`relevant_only` at the policies' rel):
        the Judged@k warning then says what such qrels mean instead.
    """

    run: str
    metrics: Mapping[str, float]
    per_query: PerQuery
    policies: Policies
    measures: tuple[Metric, ...]
    judged: float = math.nan
    judged_k: int = JUDGED_DEFAULT_K
    depth: int | None = None
    facts: RunFacts | None = field(default=None, compare=False, repr=False)
    relevant_only: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", ByMetric(self.measures, self.metrics))

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    def __getitem__(self, metric: str | Metric) -> float:
        return self.metrics[metric_key(metric, self.measures)]

    def judged_warning(self, threshold: float = JUDGED_BELOW) -> JudgedWarning | None:
        """A :class:`JudgedWarning` if the run's Judged@k is below ``threshold`` (0: never)."""
        return judged_warning(self.run, self.judged_k, self.judged, threshold, self.relevant_only)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """``{"metrics": {...}}``, plus ``"per_query": {qid: {...}}`` when asked."""
        out: dict[str, Any] = {
            "metrics": {m.label: _plain(m, self.metrics[m.label]) for m in self.measures}
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


#: What one run's result has and several runs' results do not (see EvalResults.__getattr__).
_ONE_RUN = frozenset(name for name in dir(EvalResult) if not name.startswith("_")) | frozenset(
    f.name for f in dataclasses.fields(EvalResult)
)


@dataclass(frozen=True)
class EvalResults(Mapping[str, EvalResult]):
    """Evaluations of several runs against the same qrels, keyed by run name (in input order).

    Take one run's :class:`EvalResult` by its name (``results["bm25"].per_query``), or go
    through them all (``for name, result in results.items()``).

    >>> import rankmeter
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> runs = {"bm25": {"q1": {"d1": 1.0}}, "dense": {"q1": {"d2": 1.0}, "q2": {"d2": 1.0}}}
    >>> results = rankmeter.evaluate(qrels, runs, ["P@1"])
    >>> list(results), results["dense"].metrics["P@1"]
    (['bm25', 'dense'], 0.5)
    >>> results["bm25"].per_query.to_dict()
    {'q1': {'P@1': 1.0}}
    """

    results: tuple[EvalResult, ...]

    @classmethod
    def named(cls, results: Sequence[EvalResult], sources: Sequence[str]) -> EvalResults:
        """The evaluations of runs evaluated one by one, keyed by unique names: runs that
        share a name are renamed as :func:`unique_names` says (``sources``: their files), as
        :func:`rankmeter.evaluate` names several runs evaluated together."""
        names = unique_names([r.run for r in results], sources)
        return cls(
            tuple(
                r if r.run == n else dataclasses.replace(r, run=n)
                for r, n in zip(results, names, strict=True)
            )
        )

    def __getitem__(self, run: str) -> EvalResult:
        for result in self.results:
            if result.run == run:
                return result
        raise KeyError(f"no run named {run!r}; runs: {', '.join(self)}")

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: what one run's EvalResult has (per_query,
        # metrics, ...) is asked of several runs. Say how to take one run, by name.
        if name in _ONE_RUN and name != "results":
            runs = list(self)
            first = runs[0] if runs else "NAME"
            raise AttributeError(
                f"{name!r} is one run's: these are the results of {len(runs)} runs "
                f"({', '.join(map(repr, runs))}); take one by name, e.g. "
                f"results[{first!r}].{name}, or loop over results.items()"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __iter__(self) -> Iterator[str]:
        return (r.run for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def policies(self) -> Policies:
        return self.results[0].policies

    def judged_warnings(self, threshold: float = JUDGED_BELOW) -> tuple[JudgedWarning, ...]:
        """The runs whose Judged@k is below ``threshold`` (0: none), in run order."""
        threshold = check_judged_below(threshold)
        found = (r.judged_warning(threshold) for r in self.results)
        return tuple(w for w in found if w is not None)

    @property
    def measures(self) -> tuple[Metric, ...]:
        return self.results[0].measures

    def to_dict(self, *, per_query: bool = False) -> list[dict[str, Any]]:
        """A list of ``{"run": name, "metrics": {...}[, "per_query": {...}]}``."""
        return [{"run": r.run, **r.to_dict(per_query=per_query)} for r in self.results]

    def to_pandas(self) -> Any:
        """Aggregates as a DataFrame: one row per run, one column per metric."""
        pd = import_pandas()
        rows = [{"run": r.run, **dict(r.metrics)} for r in self.results]
        return pd.DataFrame(rows).set_index("run")

    def __repr__(self) -> str:
        return f"EvalResults({', '.join(repr(r.run) for r in self.results)})"
