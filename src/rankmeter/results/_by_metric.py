"""Results keyed by metric: :func:`metric_key` finds the label a metric was asked for under
(any name of it looks up), :class:`ByMetric` is the read-only mapping that uses it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Generic, TypeVar

from rankmeter.metrics import Metric

__all__ = ["ByMetric", "metric_key"]

V = TypeVar("V")


def metric_key(
    metric: str | Metric, measures: Sequence[Metric | str], done: str = "evaluated"
) -> str:
    """The label under which ``metric`` (any name of it: ``"MRR@10"``, ``"ndcg_cut.10"``, a
    Metric) was ``done`` among ``measures`` (Metrics, or labels); KeyError naming them
    otherwise."""
    from rankmeter.errors import MetricError
    from rankmeter.metrics import parse_metric

    labels = [m.label if isinstance(m, Metric) else m for m in measures]
    if isinstance(metric, str) and metric in labels:
        return metric
    try:
        wanted = metric if isinstance(metric, Metric) else parse_metric(metric)
    except MetricError as exc:
        raise KeyError(
            f"{metric!r} was not {done} ({exc}); {done} metrics: {', '.join(labels)}"
        ) from None
    for measure, label in zip(measures, labels, strict=True):
        if isinstance(measure, str):
            try:
                measure = parse_metric(measure)
            except MetricError:
                continue
        if measure == wanted:
            return label
    raise KeyError(f"{metric!r} was not {done}; {done} metrics: {', '.join(labels)}")


class ByMetric(Mapping[str, V], Generic[V]):
    """A read-only mapping keyed by the metrics' labels (the names the user wrote), in the
    order they were asked for; a lookup accepts any name of a metric (``"MRR@10"``,
    ``"RR@10"``, ``"recip_rank"`` where it has no cutoff, a :class:`Metric`).

    >>> from rankmeter.metrics import parse_metrics
    >>> means = ByMetric(parse_metrics(["MRR@10", "ndcg_cut.10"]), {"MRR@10": 0.5, "ndcg_cut.10": 0.25})
    >>> list(means), means["RR@10"], means["nDCG@10"], "P@10" in means
    (['MRR@10', 'ndcg_cut.10'], 0.5, 0.25, False)
    """

    __slots__ = ("_data", "_done", "_measures")

    def __init__(
        self,
        measures: Sequence[Metric | str],
        values: Mapping[str, V],
        *,
        done: str = "evaluated",
    ) -> None:
        self._measures = tuple(measures)
        labels = [m.label if isinstance(m, Metric) else m for m in self._measures]
        self._data = {label: values[label] for label in labels}
        self._done = done

    def __getitem__(self, metric: str | Metric) -> V:
        return self._data[metric_key(metric, self._measures, self._done)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)
