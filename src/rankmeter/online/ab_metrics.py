"""The A/B metrics, declared once: what each measures per user (an Ibis expression over the
request table), how it is tested, its direction, its words and the digits it is shown with.

The analysis (:func:`rankmeter.online.ab`), the command line's help and validation and the
renderers (:mod:`rankmeter.report.ab`) all read :data:`AB_METRICS` and :data:`PER_USER`, as
help text, docs/metrics.md and report labels come from a retrieval metric's spec. A new A/B
metric is one :class:`ABMetric` row (and, where it needs one, a :class:`UserColumn` row for a
per-user sum the others do not have); docs/ab.md's table of metrics is checked against the
rows by the tests.

Nothing here imports Ibis: the expressions are functions of the request table, called when the
per-user table is built (:mod:`rankmeter.online.ab_users`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from rankmeter.errors import MetricError

__all__ = ["AB_METRICS", "PER_USER", "USER_COLUMNS", "ABMetric", "UserColumn", "metric_names"]

#: An Ibis table expression (Ibis ships no type information).
IbisTable: TypeAlias = Any


@dataclass(frozen=True)
class UserColumn:
    """One per-user column of :func:`rankmeter.online.user_metrics`.

    ``aggregate`` maps the request table (one row per results page: ``impressions``,
    ``clicks``, ``long_clicks``, ``result_count``, ``latency_ms``, ``reformulated``,
    ``session_id``) to the Ibis aggregate of this column over one user's requests; ``reads``
    names the log columns it comes from.
    """

    name: str
    description: str
    reads: tuple[str, ...]
    aggregate: Callable[[IbisTable], Any]


def _int_sum(condition: Any) -> Any:
    return condition.cast("int64").sum()


#: The per-user columns, in the order :func:`rankmeter.online.user_metrics` gives them.
PER_USER: tuple[UserColumn, ...] = (
    UserColumn("impressions", "shown results", ("doc_id",), lambda r: r.impressions.sum()),
    UserColumn("clicks", "clicks", ("clicked",), lambda r: r.clicks.sum()),
    UserColumn("requests", "results pages", ("request_id",), lambda r: r.count()),
    UserColumn(
        "result_requests",
        "requests with result_count > 0",
        ("result_count",),
        lambda r: _int_sum(r.result_count > 0),
    ),
    UserColumn(
        "abandoned_requests",
        "requests with results and no click",
        ("result_count", "clicked"),
        lambda r: _int_sum((r.result_count > 0) & (r.clicks == 0)),
    ),
    UserColumn(
        "no_result_requests",
        "requests with result_count == 0",
        ("result_count",),
        lambda r: _int_sum(r.result_count == 0),
    ),
    UserColumn(
        "reformulated_requests",
        "requests followed in their session by another query within the reformulation window",
        ("event_ts", "query_id", "query_text"),
        lambda r: r.reformulated.sum(),
    ),
    UserColumn(
        "latency_ms_sum",
        "the requests' latencies added up",
        ("latency_ms",),
        lambda r: r.latency_ms.sum(),
    ),
    UserColumn("sessions", "sessions", ("session_id",), lambda r: r.session_id.nunique()),
    UserColumn(
        "successful_sessions",
        "sessions with a click of dwell_ms >= the success dwell",
        ("session_id", "clicked", "dwell_ms"),
        lambda r: r.session_id.nunique(where=r.long_clicks > 0),
    ),
)

#: The per-user columns of :func:`rankmeter.online.user_metrics`, besides ``user_id`` and
#: ``variant``.
USER_COLUMNS: tuple[str, ...] = tuple(c.name for c in PER_USER)


@dataclass(frozen=True)
class ABMetric:
    """One A/B metric: a ratio of two per-user sums, tested with the delta method.

    Attributes
    ----------
    name : str
        The name users give (``ctr``).
    numerator, denominator : str
        The per-user columns (:data:`PER_USER`) whose means are divided.
    higher_is_better : bool
        The direction that counts as better (a segment is flagged when it moved the other way).
    unit : str
        What one unit of the denominator is (``impression``, ``request``, ``session``).
    description : str
        What the metric measures, in a sentence.
    definition : str
        Numerator / denominator per user, as docs/ab.md's table of metrics gives it.
    digits : int
        Decimals the renderers show its means and differences with.
    """

    name: str
    numerator: str
    denominator: str
    higher_is_better: bool
    unit: str
    description: str
    definition: str = ""
    digits: int = 4

    @property
    def columns(self) -> tuple[UserColumn, UserColumn]:
        """The numerator's and the denominator's :class:`UserColumn`."""
        by_name = {c.name: c for c in PER_USER}
        return by_name[self.numerator], by_name[self.denominator]

    @property
    def reads(self) -> tuple[str, ...]:
        """The log columns the metric is computed from (those of its two per-user columns)."""
        found: list[str] = []
        for column in self.columns:
            found += [c for c in column.reads if c not in found]
        return tuple(found)


def _table(*metrics: ABMetric) -> Mapping[str, ABMetric]:
    known = set(USER_COLUMNS)
    for m in metrics:
        missing = {m.numerator, m.denominator} - known
        if missing:  # pragma: no cover - a declaration error, caught by any import
            raise AssertionError(f"A/B metric {m.name!r} uses undeclared columns {missing}")
    return {m.name: m for m in metrics}


#: The metrics, in the order they are reported. Each is a ratio of means (per-user sums): a
#: user with many requests weighs as much as those requests, and the delta method accounts for
#: the requests of one user not being independent.
AB_METRICS: Mapping[str, ABMetric] = _table(
    ABMetric(
        "ctr",
        "clicks",
        "impressions",
        True,
        "impression",
        "clicks per shown result",
        "clicks / impressions",
    ),
    ABMetric(
        "abandonment",
        "abandoned_requests",
        "result_requests",
        False,
        "request",
        "share of requests that showed results and got no click",
        "requests with results and no click / requests with results",
    ),
    ABMetric(
        "success",
        "successful_sessions",
        "sessions",
        True,
        "session",
        "share of sessions with a click whose dwell time reached the success threshold",
        "successful sessions / sessions; a session is successful when it has a click with "
        "`dwell_ms` ≥ the success dwell (30 s by default; a click of exactly 30 s counts)",
    ),
    ABMetric(
        "reformulation",
        "reformulated_requests",
        "requests",
        False,
        "request",
        "share of requests followed in their session by a request for another query "
        "within the reformulation window",
        "reformulated requests / requests",
    ),
    ABMetric(
        "no_result",
        "no_result_requests",
        "requests",
        False,
        "request",
        "share of requests that returned no result",
        "requests with `result_count` = 0 / requests",
    ),
    ABMetric(
        "latency",
        "latency_ms_sum",
        "requests",
        False,
        "request",
        "mean server latency per request, in milliseconds",
        "sum of the requests' `latency_ms` / requests: the mean latency per request",
        digits=1,
    ),
)


def metric_names(metrics: Iterable[str] | None) -> list[str]:
    """The A/B metrics asked for, checked and in the order given, without repeats (all of
    :data:`AB_METRICS` for ``None``). A name is read case-blind, ``-`` as ``_``.

    Raises
    ------
    MetricError
        For an unknown name, naming the choices; for an empty list.

    >>> metric_names(["CTR", "no-result", "ctr"])
    ['ctr', 'no_result']
    """
    if metrics is None:
        return list(AB_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    names: list[str] = []
    for given in metrics:
        name = str(given).strip().lower().replace("-", "_")
        if name not in AB_METRICS:
            raise MetricError(f"unknown A/B metric {given!r}; choose from {', '.join(AB_METRICS)}")
        if name not in names:
            names.append(name)
    if not names:
        raise MetricError(f"no A/B metric given; choose from {', '.join(AB_METRICS)}")
    return names
