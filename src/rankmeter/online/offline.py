"""Offline against online: did the A/B test confirm what the judged queries said?

Offline metrics are a proxy for what users do. Before trusting a judged set to choose rankers,
a team checks that the offline winner also wins online. :func:`online_vs_offline` puts the two
side by side for one pair of rankers: the offline difference on the judged queries
(:func:`rankmeter.compare`, paired over queries) and the online differences in the A/B log
(:func:`rankmeter.online.ab`, per user), and says for each online metric whether it agrees
with the offline verdict in sign and significance.

Every number comes from those two functions, unchanged; this module only pairs them and names
the agreement. The verdict compares directions (better, worse, no significant difference),
never magnitudes: an nDCG point and a CTR point are not the same unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rankmeter import _validate
from rankmeter.errors import PolicyError

__all__ = [
    "AGREEMENTS",
    "DEFAULT_ONLINE_METRICS",
    "Agreement",
    "OnlineOffline",
    "Side",
    "online_vs_offline",
]

#: The online metrics compared by default: those a better ranking should move. Latency and
#: no-result requests depend on the system, not on the order of the results.
DEFAULT_ONLINE_METRICS: tuple[str, ...] = ("ctr", "abandonment", "success", "reformulation")

#: What :attr:`Agreement.verdict` can say.
AGREEMENTS: Mapping[str, str] = {
    "agree": "both significant, in the same direction",
    "disagree": "both significant, in opposite directions",
    "offline only": "significant offline, not online",
    "online only": "significant online, not offline",
    "neither": "significant on neither side",
}

_NONE = "no significant difference"


@dataclass(frozen=True)
class Side:
    """One metric's difference, treatment against control, on one side.

    ``direction`` is ``"better"``, ``"worse"`` (significant after the side's correction, in the
    metric's own sense of better) or ``"no significant difference"``. ``low``/``high`` is the
    interval of ``difference`` (offline: the bootstrap interval of compare; online:
    tea-tasting's). ``p_corrected`` is corrected across the metrics of its side.
    """

    source: str  # "offline" or "online"
    metric: str
    control: float
    treatment: float
    difference: float
    low: float
    high: float
    p_value: float
    p_corrected: float
    significant: bool
    higher_is_better: bool
    direction: str
    n: int  # queries offline, users online

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "metric": self.metric,
            "control": self.control,
            "treatment": self.treatment,
            "difference": self.difference,
            "ci": [self.low, self.high],
            "p_value": self.p_value,
            "p_corrected": self.p_corrected,
            "significant": self.significant,
            "higher_is_better": self.higher_is_better,
            "direction": self.direction,
            "n": self.n,
        }


@dataclass(frozen=True)
class Agreement:
    """The primary offline metric against one online metric: see :data:`AGREEMENTS`."""

    offline_metric: str
    online_metric: str
    offline_direction: str
    online_direction: str
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "offline_metric": self.offline_metric,
            "online_metric": self.online_metric,
            "offline": self.offline_direction,
            "online": self.online_direction,
            "verdict": self.verdict,
            "meaning": AGREEMENTS[self.verdict],
        }


@dataclass(frozen=True)
class OnlineOffline:
    """Offline and online differences of one pair of rankers (:func:`online_vs_offline`).

    ``offline`` holds one :class:`Side` per offline metric (the first is the primary one),
    online metric; ``agreements`` pairs the primary offline metric with each
    online metric. ``warnings`` says first what makes the online side untrustworthy (a failed
    sample-ratio check), then whether the two sides measure different queries.
    ``log_queries`` is the number of distinct queries in the log, ``shared_queries`` how many
    of them are compared offline (judged).
    """

    control: str
    treatment: str
    offline: tuple[Side, ...]
    online: tuple[Side, ...]
    agreements: tuple[Agreement, ...]
    warnings: tuple[str, ...]
    alpha: float
    offline_test: str
    offline_correction: str
    online_correction: str
    queries: int
    users: int
    log_queries: int = 0
    shared_queries: int = 0
    #: The online side is CUPED-adjusted (a pre-period was given): its means, differences,
    #: intervals and p-values are ab()'s adjusted ones.
    cuped: bool = False

    @property
    def summary(self) -> str:
        """One sentence: what the primary offline metric says, and how many online metrics
        agree."""
        primary = self.offline[0]
        verdicts = [a.verdict for a in self.agreements]
        said = (
            f"{self.treatment} is {primary.direction} than {self.control}"
            if primary.significant
            else f"no significant difference between {self.treatment} and {self.control}"
        )
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in AGREEMENTS if v in verdicts)
        return f"offline ({primary.metric}): {said}; online metrics: {counts}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "warnings": list(self.warnings),
            "control": self.control,
            "treatment": self.treatment,
            "summary": self.summary,
            "offline": [s.to_dict() for s in self.offline],
            "online": [s.to_dict() for s in self.online],
            "agreements": [a.to_dict() for a in self.agreements],
            "settings": {
                "alpha": self.alpha,
                "offline_test": self.offline_test,
                "offline_correction": self.offline_correction,
                "online_correction": self.online_correction,
                "queries": self.queries,
                "users": self.users,
                "log_queries": self.log_queries,
                "shared_queries": self.shared_queries,
                "cuped": self.cuped,
            },
        }


def online_vs_offline(
    qrels: Any,
    control_run: Any,
    treatment_run: Any,
    log: Any,
    *,
    metrics: str | Iterable[str] = ("nDCG@10",),
    online_metrics: str | Iterable[str] = DEFAULT_ONLINE_METRICS,
    control: str | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    test: str = "randomization",
    resamples: int = 10_000,
    seed: int = 0,
    pre: Any = None,
    experiment: str | None = None,
    engine: str = "duckdb",
    ts_unit: str = "s",
    ordered: bool = True,
) -> OnlineOffline:
    """Compare two rankers offline (judged queries) and online (an A/B log), side by side.

    Parameters
    ----------
    qrels : Qrels or path
        The judgments of the offline comparison.
    control_run, treatment_run : Run or path
        The rankings of the log's control and treatment variants, in that order.
    log : path or table
        The A/B log (one row per impression; see :func:`rankmeter.online.read_log`).
    metrics : offline metric names, default ``nDCG@10``
        The first is the primary metric that the online metrics are checked against.
    online_metrics : names from :data:`rankmeter.online.AB_METRICS`
        Default: ctr, abandonment, success and reformulation.
    control : str, optional
        The control variant of the log (as :func:`rankmeter.online.ab`).
    alpha, correction : significance level and correction, used on both sides (offline
        across the offline metrics, online across the online metrics).
    test, resamples, seed : the offline paired test (:func:`rankmeter.compare`).
    pre, experiment, engine : as :func:`rankmeter.online.ab` (CUPED with a pre-period; the
        experiment_id analysed when the log holds several; where the log is read).
    ts_unit, ordered : how the log and ``pre`` are read, as :func:`rankmeter.online.read_log`.

    Returns
    -------
    OnlineOffline

    Raises
    ------
    PolicyError
        No online metric, an unknown one, the settings refused by compare or ab, or a log
        that shares no query with the offline comparison (a partial overlap is a warning).
    """
    from rankmeter.comparison import compare
    from rankmeter.io import as_qrels, as_run
    from rankmeter.metrics import parse_metrics
    from rankmeter.online.abtest import AB_METRICS, ab

    offline_metrics = parse_metrics(metrics)
    if not offline_metrics:
        raise PolicyError("metrics=() names no offline metric: give at least one (nDCG@10)")
    names = [online_metrics] if isinstance(online_metrics, str) else list(online_metrics)
    if not names:
        raise PolicyError("online_metrics=() names no online metric: give at least one (ctr)")
    alpha = _validate.alpha(alpha)

    # Read once: the overlap of queries and compare use the same objects.
    qrels = as_qrels(qrels)
    control_run, treatment_run = as_run(control_run), as_run(treatment_run)
    overlap = _QueryOverlap.of(log, qrels, (control_run, treatment_run), engine, experiment)
    online = ab(
        log,
        control=control,
        metrics=names,
        pre=pre,
        experiment=experiment,
        alpha=alpha,
        correction=correction,
        engine=engine,
        ts_unit=ts_unit,
        ordered=ordered,
    )
    runs = {online.control: control_run, online.treatment: treatment_run}
    offline = compare(
        qrels,
        runs,
        offline_metrics,
        baseline=online.control,
        test=test,
        correction=correction,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
    )
    offline_sides = tuple(
        Side(
            source="offline",
            metric=d.metric,
            control=d.baseline_mean,
            treatment=d.system_mean,
            difference=d.difference,
            low=d.low,
            high=d.high,
            p_value=d.p_value,
            p_corrected=d.p_corrected,
            significant=d.significant,
            higher_is_better=True,
            direction=_direction(d.significant, d.difference),
            n=d.n,
        )
        for d in offline.differences
        if d.system == online.treatment
    )
    users = sum(c.users for c in online.counts)
    online_sides = tuple(
        Side(
            source="online",
            metric=e.metric,
            control=e.control,
            treatment=e.treatment,
            difference=e.difference,
            low=e.difference_low,
            high=e.difference_high,
            p_value=e.pvalue,
            p_corrected=e.adjusted,
            significant=e.significant,
            higher_is_better=AB_METRICS[e.metric].higher_is_better,
            # ab's own verdict, read in its metric's direction; "not tested" is no direction.
            direction=e.verdict if e.verdict in ("better", "worse") else _NONE,
            n=users,
        )
        for e in online.metrics
    )
    primary = offline_sides[0]
    agreements = tuple(
        Agreement(
            offline_metric=primary.metric,
            online_metric=side.metric,
            offline_direction=primary.direction,
            online_direction=side.direction,
            verdict=_verdict(primary.direction, side.direction),
        )
        for side in online_sides
    )
    return OnlineOffline(
        control=online.control,
        treatment=online.treatment,
        offline=offline_sides,
        online=online_sides,
        agreements=agreements,
        warnings=(*online.warnings, *overlap.warnings()),
        alpha=alpha,
        offline_test=offline.settings.test,
        offline_correction=correction,
        online_correction=online.correction,
        queries=primary.n,
        users=users,
        cuped=online.cuped,
        log_queries=len(overlap.log),
        shared_queries=len(overlap.shared),
    )


def _examples(ids: Iterable[str], count: int = 3) -> str:
    return ", ".join(repr(q) for q in sorted(ids)[:count])


@dataclass(frozen=True)
class _QueryOverlap:
    """The log's queries against the queries compared offline (compare's default: every
    judged query, a run's missing query scoring 0)."""

    log: frozenset[str]
    offline: frozenset[str]

    @classmethod
    def of(
        cls, log: Any, qrels: Any, runs: tuple[Any, Any], engine: str, experiment: str | None
    ) -> _QueryOverlap:
        from rankmeter.online.logs import read_log

        # ab() validates the log; here only its distinct queries are needed. A request named
        # by its text only is matched by that text.
        table = read_log(log, engine=engine, validate=False)
        if experiment is not None:
            table = table.filter(table.experiment_id == experiment)
        query = table.query_id.coalesce(table.query_text)
        found = table.select(query=query).filter(query.notnull()).distinct().to_pyarrow()
        offline = frozenset(str(q) for q in qrels.query_ids)
        overlap = cls(frozenset(str(q) for q in found["query"].to_pylist()), offline)
        if not overlap.shared:
            raise PolicyError(
                f"none of the log's {len(overlap.log)} queries (e.g. "
                f"{_examples(overlap.log)}) is among the {len(offline)} queries compared "
                f"offline (e.g. {_examples(offline)}): the log, the qrels and the runs must "
                "name the same queries by the same ids"
            )
        return overlap

    @property
    def shared(self) -> frozenset[str]:
        return self.log & self.offline

    def warnings(self) -> tuple[str, ...]:
        """One warning when the two sides measure partly different queries."""
        log_only, offline_only = self.log - self.offline, self.offline - self.log
        if not log_only and not offline_only:
            return ()
        parts = []
        if log_only:
            parts.append(
                f"{len(log_only)} of the log's {len(self.log)} queries "
                f"{'is' if len(log_only) == 1 else 'are'} not compared offline "
                f"(not judged; e.g. {_examples(log_only)})"
            )
        if offline_only:
            parts.append(
                f"{len(offline_only)} of the {len(self.offline)} queries compared offline "
                f"{'is' if len(offline_only) == 1 else 'are'} not in the log "
                f"(e.g. {_examples(offline_only)})"
            )
        return (
            f"the log and the offline comparison share {len(self.shared)} "
            f"{'query' if len(self.shared) == 1 else 'queries'}: {', and '.join(parts)}: the "
            "two sides measure partly different queries",
        )


def _direction(significant: bool, difference: float) -> str:
    """An offline metric's direction: every IR metric is better higher."""
    if not significant or difference == 0:
        return _NONE
    return "better" if difference > 0 else "worse"


def _verdict(offline: str, online: str) -> str:
    if offline == _NONE and online == _NONE:
        return "neither"
    if online == _NONE:
        return "offline only"
    if offline == _NONE:
        return "online only"
    return "agree" if offline == online else "disagree"
