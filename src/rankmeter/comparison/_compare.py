"""compare(): the front. Checks every argument, then runs each step of a comparison."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from rankmeter.comparison._annotations import (
    _load_queries,
    _load_segments,
    _segment_coverage,
    _text_coverage,
)
from rankmeter.comparison._curves import CURVE_FAMILIES, _curves
from rankmeter.comparison._failures import _explanations, _failures
from rankmeter.comparison._queries import _join
from rankmeter.comparison._records import Comparison, Settings, SystemMean
from rankmeter.comparison._segments import _segment_groups, _segments
from rankmeter.comparison._summaries import _differences, _Options, _summaries
from rankmeter.data import Qrels
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError
from rankmeter.evaluation import _as_names, _load_runs, _policies
from rankmeter.metrics import DEFAULT_METRICS, Metric, parse_metrics


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
    caveat = stats.not_recommended_note(test)
    if caveat is not None:
        notes.append(caveat)

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
