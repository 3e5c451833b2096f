"""compare(qrels, runs, metrics) -> Comparison: did the change help, for whom, and can I trust it?

Every system is compared with a baseline on the same queries, per metric: the two means, the
difference with its confidence interval (paired bootstrap), the effect size, the p-value of a
paired test, that p-value corrected for every comparison made, and win/tie/loss counts. Around
it: the queries that lost most, the queries a system answered with nothing or with nothing
relevant near the top, segments of queries that got worse, and metric@k curves.

The module is named comparison, not compare, so that importing it never rebinds the package
attribute ``rankmeter.compare`` (the function) to a module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter.data import Qrels, Run
from rankmeter.data._columns import FloatArray, IntArray, natural_order
from rankmeter.data.run import check_ties
from rankmeter.errors import FormatError, PolicyError
from rankmeter.evaluation import _as_names, _load_runs, _policies
from rankmeter.metrics import DEFAULT_METRICS, Metric, parse_metric, parse_metrics
from rankmeter.metrics._ranked import Ranked, join
from rankmeter.results import ByMetric, Policies, metric_key

__all__ = [
    "CURVE_FAMILIES",
    "Comparison",
    "Difference",
    "Failures",
    "SegmentResult",
    "Settings",
    "SystemMean",
    "compare",
]

#: Metric families drawn as metric@k curves, k = 1 .. CURVE_DEPTH.
CURVE_FAMILIES = ("nDCG", "P", "R")
CURVE_DEPTH = 100


def _fields(record: Any) -> dict[str, Any]:
    """A flat record's fields as a dict, in declaration order."""
    from dataclasses import fields

    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class Settings:
    """How a comparison was made: everything needed to reproduce its numbers."""

    baseline: str
    test: str
    correction: str
    alpha: float
    resamples: int
    seed: int
    interval: str
    level: float
    min_segment: int
    cutoff: int
    policies: Policies

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "resamples": self.resamples,
            "seed": self.seed,
            "interval": self.interval,
            "level": self.level,
            "min_segment": self.min_segment,
            "cutoff": self.cutoff,
            "policies": self.policies.to_dict(),
        }

    def describe(self) -> str:
        from rankmeter.stats import NOT_RECOMMENDED

        test = {
            "randomization": f"paired randomization test ({self.resamples:,} sign flips, "
            f"seed {self.seed})",
            "t": "paired t-test",
            "bootstrap": f"paired bootstrap test ({self.resamples:,} resamples, seed {self.seed})",
            "wilcoxon": "Wilcoxon signed-rank test",
            "sign": "sign test",
        }[self.test]
        caveat = (
            f" (not recommended: {NOT_RECOMMENDED[self.test]})"
            if self.test in (NOT_RECOMMENDED)
            else ""
        )
        correction = {
            "holm": "Holm",
            "bonferroni": "Bonferroni",
            "bh": "Benjamini-Hochberg",
            "none": "no",
        }[self.correction]
        return (
            f"{test}{caveat}; {correction} correction across the comparisons shown; "
            f"alpha {self.alpha:g}; {self.level:.0%} {'BCa' if self.interval == 'bca' else 'percentile'} "
            f"bootstrap intervals ({self.resamples:,} resamples, seed {self.seed})"
        )


@dataclass(frozen=True)
class SystemMean:
    """One system's mean of one metric over the compared queries, with its interval."""

    system: str
    metric: str
    mean: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Difference:
    """A system against the baseline on one metric, paired over the same queries."""

    system: str
    baseline: str
    metric: str
    n: int
    baseline_mean: float
    system_mean: float
    difference: float
    relative: float
    low: float
    high: float
    effect_size: float
    p_value: float
    p_corrected: float
    significant: bool
    wins: int
    ties: int
    losses: int

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class QueryLoss:
    """A query where the system scored below the baseline."""

    query: str
    text: str | None
    baseline: float
    system: float
    difference: float

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Failures:
    """Where one system fails, judged on the comparison's first metric.

    Attributes
    ----------
    worst : the queries that lost most against the baseline (most negative difference first)
    no_results : queries the system returned nothing for
    nothing_relevant : queries with a relevant judgment but none in the system's top ``cutoff``
    quantiles : the distribution of per-query differences (min, 5%, 25%, 50%, 75%, 95%, max)
    """

    system: str
    metric: str
    worst: tuple[QueryLoss, ...]
    no_results: tuple[str, ...]
    nothing_relevant: tuple[str, ...]
    quantiles: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "metric": self.metric,
            "worst": [w.to_dict() for w in self.worst],
            "no_results": list(self.no_results),
            "nothing_relevant": list(self.nothing_relevant),
            "quantiles": dict(self.quantiles),
        }


@dataclass(frozen=True)
class SegmentMean:
    """One system's mean of one metric over a segment of queries (``column=value``)."""

    segment: str
    system: str
    metric: str
    mean: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class SegmentResult:
    """A segment of queries (``column=value``): one system against the baseline on one metric."""

    segment: str
    system: str
    metric: str
    n: int
    baseline_mean: float
    system_mean: float
    difference: float
    low: float
    high: float
    p_value: float
    p_corrected: float
    small: bool
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Comparison:
    """The comparison of several systems with a baseline on the same queries.

    Attributes
    ----------
    systems : names, baseline first
    metrics : the metrics' names as asked for (``MRR@10`` stays ``MRR@10``), in that order;
        lookups (``mean``, ``difference``) accept any name of a metric
    query_ids : the compared queries (judged queries that at least one system answered)
    scores : ``{metric: {system: per-query values aligned with query_ids}}``
    means : every system's mean of every metric, with its interval
    differences : every system other than the baseline against it, per metric
    failures : per system (the baseline included) on the first metric
    segments : per segment, system and metric against the baseline (empty without segments)
    segment_means : per segment, every system's mean of every metric with its interval
    curves : ``{family: {system: mean metric@k for k = 1..CURVE_DEPTH}}``
    settings : how the numbers were made (test, correction, alpha, seed, ...)
    notes : what a reader should know (queries left out, tests flagged as not recommended)
    queries : the texts of the compared queries, where given
    explanations : ``{system: {query: Explanation}}`` of the first metric, rank by rank, for
        every listed worst query, for the system that lost and for the baseline
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    query_ids: tuple[str, ...]
    scores: Mapping[str, Mapping[str, FloatArray]] = field(repr=False)
    means: tuple[SystemMean, ...]
    differences: tuple[Difference, ...]
    failures: tuple[Failures, ...]
    segments: tuple[SegmentResult, ...]
    segment_means: tuple[SegmentMean, ...]
    curves: Mapping[str, Mapping[str, FloatArray]] = field(repr=False)
    settings: Settings
    notes: tuple[str, ...] = ()
    queries: Mapping[str, str] = field(default_factory=dict, repr=False)
    explanations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "scores", ByMetric(self.metrics, _frozen_nested(self.scores), done="compared")
        )
        object.__setattr__(self, "curves", _frozen_nested(self.curves))
        object.__setattr__(self, "queries", MappingProxyType(dict(self.queries)))
        object.__setattr__(
            self,
            "explanations",
            MappingProxyType(
                {s: MappingProxyType(dict(by_query)) for s, by_query in self.explanations.items()}
            ),
        )

    @property
    def baseline(self) -> str:
        return self.settings.baseline

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def mean(self, system: str, metric: str) -> SystemMean:
        metric = metric_key(metric, self.metrics, done="compared")
        for m in self.means:
            if m.system == system and m.metric == metric:
                return m
        raise KeyError(f"no system {system!r}; systems: {', '.join(self.systems)}")

    def difference(self, system: str, metric: str) -> Difference:
        metric = metric_key(metric, self.metrics, done="compared")
        for d in self.differences:
            if d.system == system and d.metric == metric:
                return d
        others = [s for s in self.systems if s != self.baseline]
        raise KeyError(f"no comparison for {system!r}; compared systems: {', '.join(others)}")

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready dict: settings, means, differences, failures, segments, curves."""
        out: dict[str, Any] = {
            "settings": self.settings.to_dict(),
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "n_queries": self.n_queries,
            "means": [m.to_dict() for m in self.means],
            "differences": [d.to_dict() for d in self.differences],
            "failures": [f.to_dict() for f in self.failures],
            "segments": [s.to_dict() for s in self.segments],
            "segment_means": [s.to_dict() for s in self.segment_means],
            "curves": {
                family: {s: [float(v) for v in values] for s, values in by_system.items()}
                for family, by_system in self.curves.items()
            },
            "notes": list(self.notes),
        }
        if per_query:
            out["per_query"] = {
                metric: {
                    s: dict(zip(self.query_ids, map(float, values), strict=True))
                    for s, values in by_system.items()
                }
                for metric, by_system in self.scores.items()
            }
        return out

    def to_pandas(self) -> Any:
        """The differences as a DataFrame, one row per (system, metric)."""
        import pandas as pd

        return pd.DataFrame([d.to_dict() for d in self.differences])


def _frozen_nested(data: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    out = {}
    for key, inner in data.items():
        frozen = {}
        for name, array in inner.items():
            copy = np.array(array, dtype=np.float64)
            copy.flags.writeable = False
            frozen[name] = copy
        out[key] = MappingProxyType(frozen)
    return MappingProxyType(out)


def compare(
    qrels: Any,
    runs: Sequence[Any] | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    interval: str = "bca",
    level: float = 0.95,
    segments: Any = None,
    min_segment: int = 20,
    queries: Any = None,
    worst: int = 10,
    cutoff: int = 10,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
) -> Comparison:
    """Compare systems with a baseline on the same queries, with honest statistics.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or Arrow table
    runs : a list of runs (paths, Runs, dicts, tables) or a dict ``{name: run}``; two or more
    metrics : metric names; default nDCG@10, P@10, R@100, RR, AP
    baseline : the run every other run is compared with; default the first
    test : paired test: ``"randomization"`` (default; sign flips), ``"t"``, ``"bootstrap"``,
        ``"wilcoxon"`` or ``"sign"`` (the last two are not recommended for means)
    correction : for the many comparisons: ``"holm"`` (default), ``"bonferroni"``, ``"bh"``
        (Benjamini-Hochberg) or ``"none"``
    alpha : significance level for the corrected p-values
    resamples, seed : randomizations/bootstrap resamples and the seed: the same seed gives the
        same numbers, always
    interval, level : ``"bca"`` (default) or ``"percentile"`` bootstrap intervals at ``level``
    segments : path to a table ``query id -> tag columns`` or ``{column: {query: value}}``
    min_segment : segments with fewer queries are shown but never flagged
    queries : path to query texts (TSV ``qid<TAB>text`` or BEIR JSONL) or ``{query: text}``
    worst : how many of the most-losing queries to list per system
    cutoff : "nothing relevant in the top ``cutoff``" for the failure lists
    rel, judged_only, ties : evaluation policies, as for :func:`rankmeter.evaluate`

    Which queries: every judged query that at least one system returned results for. A system
    without results for such a query scores 0 on it (trec_eval -c, applied to the union of the
    systems' queries), so systems are always paired on the same queries and a system cannot gain
    by skipping hard ones; such queries are listed among its failures.

    Examples
    --------
    >>> qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(30)}
    >>> good = {f"q{i}": {"a": 2.0, "b": 1.0, "x": 0.5} for i in range(30)}
    >>> poor = {f"q{i}": {"x": 2.0, "a": 1.0, "y": 0.5} for i in range(30)}
    >>> result = compare(qrels, {"poor": poor, "good": good}, ["P@2"], resamples=2000)
    >>> d = result.difference("good", "P@2")
    >>> d.baseline_mean, d.system_mean, d.wins, d.losses
    (0.5, 1.0, 30, 0)
    >>> d.significant, round(d.p_value, 4)
    (True, 0.0005)
    """
    from rankmeter import stats

    policies = _policies(rel, True, judged_only, check_ties(ties))
    _check_settings(test, correction, alpha, resamples, seed, interval, level, min_segment)
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise PolicyError(f"worst={worst!r} must be a whole number >= 0")
    if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1:
        raise PolicyError(f"cutoff={cutoff!r} must be a whole number >= 1")
    measures = parse_metrics(DEFAULT_METRICS if metrics is None else _as_names(metrics))
    loaded_qrels = Qrels.load(qrels)
    loaded = _load_runs(runs, policies.ties)
    if len(loaded) < 2:
        raise PolicyError(
            f"compare needs two runs or more (a baseline and a system); got {len(loaded)}"
        )
    names = [r.name for r in loaded]
    base = names[0] if baseline is None else str(baseline)
    if base not in names:
        raise PolicyError(f"baseline {base!r} is not one of the runs: {', '.join(names)}")
    order = [base, *(n for n in names if n != base)]
    by_name = {r.name: r for r in loaded}
    systems = [by_name[n] for n in order]

    # The compared queries: judged queries that some system answered (qrels order).
    answered_by = {run.name: {str(q) for q in run._query_ids} for run in systems}
    answered = np.zeros(loaded_qrels.n_queries, dtype=bool)
    index = loaded_qrels.query_rows()
    for queries_answered in answered_by.values():
        answered[[index[q] for q in queries_answered if q in index]] = True
    selected = np.flatnonzero(answered)
    if len(selected) == 0:
        raise PolicyError(
            "no run has results for any judged query: check that the runs and the qrels belong "
            "together"
        )
    notes = []
    skipped = loaded_qrels.n_queries - len(selected)
    if skipped:
        notes.append(
            f"{skipped} judged queries without results from any system are left out "
            f"({len(selected)} compared)"
        )
    if test in stats.NOT_RECOMMENDED:
        notes.append(f"{test} test: {stats.NOT_RECOMMENDED[test]}")

    ranked = {run.name: _join(loaded_qrels, run, policies, selected) for run in systems}
    query_ids = tuple(str(q) for q in loaded_qrels._query_ids[selected])
    # Read before the resampling, so that a file that belongs elsewhere fails at once.
    segment_table = _load_segments(segments)
    notes += _segment_coverage(segment_table, query_ids, segments)
    scores = {m.label: {n: m.compute(ranked[n]) for n in order} for m in measures}
    metric_names = tuple(m.label for m in measures)

    options = _Options(stats, test, correction, interval, level, resamples, seed)
    mean_rows, tested = _summaries(order, metric_names, scores, options, correction)
    means = tuple(SystemMean(*row) for row in mean_rows)
    differences = _differences(tested, scores, base, alpha)
    texts = _load_queries(queries)
    notes += _text_coverage(texts, query_ids, queries)
    failures = tuple(
        _failures(
            n,
            base,
            metric_names[0],
            scores,
            ranked[n],
            answered_by[n],
            query_ids,
            texts,
            worst,
            cutoff,
            policies,
        )
        for n in order
    )
    explanations = _explanations(loaded_qrels, by_name, base, measures[0], failures, policies)
    groups = _segment_groups(segment_table, query_ids)
    segment_rows, segment_means = _segments(
        groups, order, metric_names, scores, options, alpha, min_segment
    )
    by_system = {n: _curves(ranked[n], policies.rel) for n in order}
    curves = {family: {n: by_system[n][family] for n in order} for family in CURVE_FAMILIES}
    settings = Settings(
        base,
        test,
        correction,
        float(alpha),
        resamples,
        seed,
        interval,
        float(level),
        min_segment,
        cutoff,
        policies,
    )
    return Comparison(
        tuple(order),
        metric_names,
        query_ids,
        scores,
        means,
        differences,
        failures,
        segment_rows,
        segment_means,
        curves,
        settings,
        tuple(notes),
        {q: texts[q] for q in query_ids if q in texts},
        explanations,
    )


def _explanations(
    qrels: Qrels,
    runs: Mapping[str, Run],
    base: str,
    metric: Metric,
    failures: tuple[Failures, ...],
    policies: Policies,
) -> dict[str, dict[str, Any]]:
    """The first metric explained rank by rank for each listed worst query, for the system
    that lost on it and for the baseline."""
    from rankmeter.explanation import explain

    wanted: dict[str, list[str]] = {}
    for f in failures:
        for loss in f.worst:
            wanted.setdefault(f.system, []).append(loss.query)
            wanted.setdefault(base, []).append(loss.query)
    out: dict[str, dict[str, Any]] = {}
    for system, query_list in wanted.items():
        out[system] = {
            q: explain(
                qrels,
                runs[system],
                q,
                metric,
                rel=policies.rel,
                judged_only=policies.judged_only,
                ties=policies.ties,
            )
            for q in dict.fromkeys(query_list)
        }
    return out


def _check_settings(
    test: str,
    correction: str,
    alpha: float,
    resamples: int,
    seed: int,
    interval: str,
    level: float,
    min_segment: int,
) -> None:
    from rankmeter import stats

    if test not in stats.TESTS:
        raise PolicyError(
            f"test={test!r} is not a paired test; use one of {', '.join(stats.TESTS)}"
        )
    if correction not in stats.CORRECTIONS:
        raise PolicyError(
            f"correction={correction!r} is not known; use one of {', '.join(stats.CORRECTIONS)}"
        )
    if interval not in stats.INTERVALS:
        raise PolicyError(
            f"interval={interval!r} is not known; use one of {', '.join(stats.INTERVALS)}"
        )
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise PolicyError(f"alpha={alpha!r} must be a number between 0 and 1")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise PolicyError(f"level={level!r} must be a number between 0 and 1 (e.g. 0.95)")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise PolicyError(f"resamples={resamples!r} must be a whole number >= 1")
    from rankmeter.stats._checks import check_resample_limit

    check_resample_limit(resamples)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PolicyError(f"seed={seed!r} must be a whole number >= 0")
    if isinstance(min_segment, bool) or not isinstance(min_segment, int) or min_segment < 1:
        raise PolicyError(f"min_segment={min_segment!r} must be a whole number >= 1")


def _join(qrels: Qrels, run: Run, policies: Policies, selected: IntArray) -> Ranked:
    """The run joined with every compared query (empty rankings where it has no results)."""
    full = join(
        qrels,
        run,
        rel=policies.rel,
        include_missing=True,
        judged_only=policies.judged_only,
    )
    if len(full.query_ids) == len(selected):
        return full
    return _restrict(full, np.searchsorted(full.qrels_rows, selected))


def _restrict(ranked: Ranked, keep: IntArray, depth: int | None = None) -> Ranked:
    """The same join for a subset of its queries, optionally cut to the top ``depth``."""
    from rankmeter.data._columns import gather_ranges

    starts = ranked.offsets[keep]
    lengths = ranked.offsets[keep + 1] - starts
    if depth is not None:
        lengths = np.minimum(lengths, depth)
    rows = gather_ranges(starts, lengths)
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    j_starts = ranked.judgment_offsets[keep]
    j_lengths = ranked.judgment_offsets[keep + 1] - j_starts
    j_rows = gather_ranges(j_starts, j_lengths)
    j_offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(j_lengths, out=j_offsets[1:])
    out = Ranked(
        ranked.query_ids[keep],
        offsets,
        ranked.grades[rows],
        ranked.judged[rows],
        j_offsets,
        ranked.judgment_grades[j_rows],
        ranked.rel,
    )
    out.qrels_rows = ranked.qrels_rows[keep]
    return out


def _curves(ranked: Ranked, rel: float) -> dict[str, FloatArray]:
    """Mean nDCG@k, P@k and R@k for k = 1..CURVE_DEPTH from one pass over the top results:
    per-query running sums along the ranks (a query-by-rank matrix), added in rank order as
    the kernels add them, so every point equals what evaluate() gives for that cutoff."""
    from rankmeter.metrics._spec import ratio
    from rankmeter.metrics.ndcg import discount, gain

    n, depth = ranked.n_queries, CURVE_DEPTH
    if n == 0:
        return {family: np.zeros(depth) for family in CURVE_FAMILIES}
    top = ranked.positions < depth
    rows, columns = ranked.groups[top], ranked.positions[top]
    dcg = np.zeros((n, depth))
    dcg[rows, columns] = gain(ranked.grades[top], "linear") * discount(columns.astype(float))
    np.cumsum(dcg, axis=1, out=dcg)
    j_groups = ranked.judgment_groups
    j_positions = np.arange(len(j_groups), dtype=np.int64) - ranked.judgment_offsets[j_groups]
    j_top = j_positions < depth
    ideal = np.zeros((n, depth))
    ideal[j_groups[j_top], j_positions[j_top]] = gain(
        ranked.judgment_grades[j_top], "linear"
    ) * discount(j_positions[j_top].astype(float))
    np.cumsum(ideal, axis=1, out=ideal)
    hits = np.zeros((n, depth))
    hits[rows, columns] = ranked.relevant(rel)[top]
    np.cumsum(hits, axis=1, out=hits)
    cutoffs = np.arange(1, depth + 1, dtype=np.float64)
    num_rel = ranked.num_rel(rel).astype(np.float64)
    ndcg = ratio(dcg.ravel(), ideal.ravel()).reshape(n, depth)
    recall = ratio(hits.ravel(), np.repeat(num_rel, depth)).reshape(n, depth)

    def mean(matrix: FloatArray) -> FloatArray:
        # Rank by rank over queries, each a contiguous row: summed as a 1-D mean is.
        out: FloatArray = np.ascontiguousarray(matrix.T).mean(axis=1)
        return out

    return {"nDCG": mean(ndcg), "P": mean(hits / cutoffs), "R": mean(recall)}


def _matrix(
    scores: Mapping[str, Mapping[str, FloatArray]], pairs: list[tuple[str, str]], base: str | None
) -> FloatArray:
    """Columns of per-query values (or differences from ``base``) for (metric, system) pairs."""
    columns = []
    for metric, system in pairs:
        column = scores[metric][system]
        columns.append(column if base is None else column - scores[metric][base])
    return np.column_stack(columns) if columns else np.zeros((0, 0))


class _Options:
    """The statistical settings every summary of a comparison is made with."""

    def __init__(
        self,
        stats: Any,
        test: str,
        correction: str,
        interval: str,
        level: float,
        resamples: int,
        seed: int,
    ) -> None:
        self.stats, self.test, self.correction = stats, test, correction
        self.interval, self.level, self.resamples, self.seed = interval, level, resamples, seed


Tested = tuple[float, float, float, float, float, int, int, int]


def _summaries(
    order: list[str],
    metrics: tuple[str, ...],
    scores: Mapping[str, Mapping[str, FloatArray]],
    options: _Options,
    correction: str,
) -> tuple[list[tuple[str, str, float, float, float, int]], list[tuple[str, str, Tested]]]:
    """Every system's mean with its interval, and every system against the baseline (p,
    corrected p, interval, effect size, win/tie/loss): one bootstrap pass serves both, the
    resamples being shared by all columns."""
    stats = options.stats
    base = order[0]
    mean_pairs = [(m, s) for m in metrics for s in order]
    diff_pairs = [(m, s) for m in metrics for s in order[1:]]
    values = _matrix(scores, mean_pairs, None)
    diffs = _matrix(scores, diff_pairs, base)
    n = len(values)
    # What happened on each query is known whatever n is: counted always.
    wins, ties, losses = stats.win_tie_loss(diffs)
    column_means = stats.means(values)  # (finite where the values are, whatever their sum)
    if n < 2:
        # No interval, test or effect size from fewer than two queries: NaN (shown as "–").
        nan = float("nan")
        means = [(s, m, float(column_means[i]), nan, nan, n) for i, (m, s) in enumerate(mean_pairs)]
        untested = [
            (m, s, (nan, nan, nan, nan, nan, int(wins[i]), int(ties[i]), int(losses[i])))
            for i, (m, s) in enumerate(diff_pairs)
        ]
        return means, untested
    low, high = stats.bootstrap_intervals(
        np.hstack([values, diffs]),
        level=options.level,
        method=options.interval,
        resamples=options.resamples,
        seed=options.seed,
    )
    k = values.shape[1]
    means = [
        (s, m, float(column_means[i]), float(low[i]), float(high[i]), n)
        for i, (m, s) in enumerate(mean_pairs)
    ]
    p = stats.paired_pvalues(diffs, options.test, resamples=options.resamples, seed=options.seed)
    corrected = stats.adjust(p, correction)
    d_z = stats.effect_sizes(diffs)
    tested = [
        (
            m,
            s,
            (
                float(p[i]),
                float(corrected[i]),
                float(low[k + i]),
                float(high[k + i]),
                float(d_z[i]),
                int(wins[i]),
                int(ties[i]),
                int(losses[i]),
            ),
        )
        for i, (m, s) in enumerate(diff_pairs)
    ]
    return means, tested


def _differences(
    tested: list[tuple[str, str, Tested]],
    scores: Mapping[str, Mapping[str, FloatArray]],
    base: str,
    alpha: float,
) -> tuple[Difference, ...]:
    from rankmeter.stats import means

    out = []
    for m, s, (p, pc, low, high, d_z, wins, ties, losses) in tested:
        b, v = (float(means(scores[m][name])[0]) for name in (base, s))
        out.append(
            Difference(
                s,
                base,
                m,
                len(scores[m][base]),
                b,
                v,
                v - b,
                (v - b) / b if b else float("nan"),
                low,
                high,
                d_z,
                p,
                pc,
                bool(pc < alpha),
                wins,
                ties,
                losses,
            )
        )
    return tuple(out)


def _load_queries(queries: Any) -> dict[str, str]:
    if queries is None:
        return {}
    if isinstance(queries, Mapping):
        return {str(k): str(v) for k, v in queries.items()}
    if isinstance(queries, (str, os.PathLike)):
        from rankmeter.io.annotations import read_queries

        return read_queries(queries)
    raise PolicyError(
        f"queries must be a path or a dict {{query: text}}, not {type(queries).__name__}"
    )


def _load_segments(segments: Any) -> dict[str, dict[str, str]]:
    if segments is None:
        return {}
    if isinstance(segments, (str, os.PathLike)):
        from rankmeter.io.annotations import read_segments

        return read_segments(segments)
    if isinstance(segments, Mapping) and all(isinstance(v, Mapping) for v in segments.values()):
        return {str(c): {str(q): str(v) for q, v in m.items()} for c, m in segments.items()}
    raise PolicyError(
        "segments must be a path or a dict {column: {query: value}}, not "
        f"{type(segments).__name__}"
    )


def _is_path(given: Any) -> bool:
    return isinstance(given, (str, os.PathLike))


def _input_name(given: Any, label: str) -> str:
    """How errors name a segments or query-texts input: its path, or ``<label>`` for a dict."""
    if _is_path(given):
        path = os.fspath(given)
        return "<stdin>" if path == "-" else path
    return f"<{label}>"


def _examples(ids: Iterable[str], count: int = 3) -> str:
    listed = list(ids)
    shown = ", ".join(repr(q) for q in listed[:count])
    return shown + (", ..." if len(listed) > count else "")


def _none_compared(known: list[str], query_ids: tuple[str, ...]) -> str:
    return (
        f"none of its {len(known)} query {'id' if len(known) == 1 else 'ids'} is among the "
        f"{len(query_ids)} compared queries (its ids start {_examples(known)}; the compared "
        f"queries start {_examples(query_ids)})"
    )


def _segment_coverage(
    segments: Mapping[str, Mapping[str, str]], query_ids: tuple[str, ...], given: Any
) -> list[str]:
    """A note on how the segments' query ids meet the compared queries (none when they are
    exactly the compared queries); an error when they meet none of them."""
    if not segments:
        return []
    known = list(dict.fromkeys(q for values in segments.values() for q in values))
    compared = set(query_ids)
    covered = sum(1 for q in known if q in compared)
    if covered == 0:
        kind = "file" if _is_path(given) else "segments"
        raise FormatError(
            _input_name(given, "segments"),
            f"{_none_compared(known, query_ids)}; check that the {kind} belongs to these qrels "
            "and runs",
        )
    strangers = [q for q in known if q not in compared]
    if covered == len(query_ids) and not strangers:
        return []
    if _is_path(given):
        label, place = f"segments file {_input_name(given, 'segments')}", "in the file"
    else:
        label, place = "segments", "in the segments"
    note = f"{label}: {covered} of {len(query_ids)} compared queries have a segment"
    if len(strangers) == 1:
        note += f"; 1 id {place} matches no compared query (e.g. {_examples(strangers)})"
    elif strangers:
        note += (
            f"; {len(strangers)} ids {place} match no compared query (e.g. {_examples(strangers)})"
        )
    return [note]


def _text_coverage(texts: Mapping[str, str], query_ids: tuple[str, ...], given: Any) -> list[str]:
    """Texts are decoration: a note only when none of them belongs to a compared query."""
    if not texts or any(q in texts for q in query_ids):
        return []
    label = (
        f"query texts file {_input_name(given, 'queries')}" if _is_path(given) else ("query texts")
    )
    return [f"{label}: {_none_compared(list(texts), query_ids)}, so no texts are shown"]


def _failures(
    system: str,
    base: str,
    metric: str,
    scores: Mapping[str, Mapping[str, FloatArray]],
    ranked: Ranked,
    answered: set[str],
    query_ids: tuple[str, ...],
    texts: Mapping[str, str],
    worst: int,
    cutoff: int,
    policies: Policies,
) -> Failures:
    values = scores[metric][system]
    diffs = values - scores[metric][base]
    order = np.lexsort((np.arange(len(diffs)), diffs))
    losers = [int(i) for i in order[:worst] if diffs[i] < 0]
    lost = tuple(
        QueryLoss(
            query_ids[i],
            texts.get(query_ids[i]),
            float(scores[metric][base][i]),
            float(values[i]),
            float(diffs[i]),
        )
        for i in losers
    )
    no_results = tuple(q for q in query_ids if q not in answered)
    success = parse_metric(f"Success(rel={_number(policies.rel)})@{cutoff}")
    num_rel = ranked.num_rel(policies.rel)
    hits = success.compute(ranked)
    missed = np.flatnonzero((hits == 0) & (num_rel > 0))
    nothing = tuple(query_ids[i] for i in missed if query_ids[i] in answered)
    if len(diffs):
        points = np.quantile(diffs, [0, 0.05, 0.25, 0.5, 0.75, 0.95, 1])
    else:
        points = np.full(7, np.nan)
    names = ("min", "5%", "25%", "median", "75%", "95%", "max")
    return Failures(
        system,
        metric,
        lost if system != base else (),
        no_results,
        nothing,
        MappingProxyType({k: float(v) for k, v in zip(names, points, strict=True)}),
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _segment_groups(
    segments: Mapping[str, Mapping[str, str]], query_ids: tuple[str, ...]
) -> list[tuple[str, IntArray]]:
    """``(column=value, rows of the compared queries in it)`` for every tag value."""
    position = {q: i for i, q in enumerate(query_ids)}
    groups: list[tuple[str, IntArray]] = []
    for column, values in segments.items():
        labels = sorted(set(values.values()))
        for label in [labels[i] for i in natural_order(labels)]:
            rows = sorted(position[q] for q, v in values.items() if v == label and q in position)
            groups.append((f"{column}={label}", np.asarray(rows, dtype=np.int64)))
    return groups


def _subset(
    scores: Mapping[str, Mapping[str, FloatArray]], rows: IntArray
) -> dict[str, dict[str, FloatArray]]:
    return {m: {s: v[rows] for s, v in by_system.items()} for m, by_system in scores.items()}


def _segments(
    groups: list[tuple[str, IntArray]],
    order: list[str],
    metrics: tuple[str, ...],
    scores: Mapping[str, Mapping[str, FloatArray]],
    options: _Options,
    alpha: float,
    min_segment: int,
) -> tuple[tuple[SegmentResult, ...], tuple[SegmentMean, ...]]:
    """Each segment's means and differences. Segments of at least ``min_segment`` queries are
    tested and corrected together (one family across segments, systems and metrics); smaller
    ones are shown but never flagged."""
    base = order[0]
    found = []
    means = []
    for name, rows in groups:
        if len(rows) == 0:
            continue
        subset = _subset(scores, rows)
        mean_rows, tested = _summaries(order, metrics, subset, options, "none")
        means += [SegmentMean(name, *row) for row in mean_rows]
        found += [(name, subset, m, s, len(rows), row) for m, s, row in tested]
    family = [i for i, f in enumerate(found) if f[4] >= min_segment]
    corrected = np.full(len(found), np.nan)
    if family:
        tested_p = np.asarray([found[i][5][0] for i in family], dtype=np.float64)
        corrected[family] = options.stats.adjust(tested_p, options.correction)
    out = []
    for i, (name, subset, m, s, n, row) in enumerate(found):
        p, low, high = row[0], row[2], row[3]
        small = n < min_segment
        b, v = (float(options.stats.means(subset[m][name])[0]) for name in (base, s))
        pc = float(corrected[i])
        flagged = bool(not small and v < b and pc < alpha)
        out.append(SegmentResult(name, s, m, n, b, v, v - b, low, high, p, pc, small, flagged))
    return tuple(out), tuple(means)
