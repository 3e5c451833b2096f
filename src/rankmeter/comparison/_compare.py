"""compare(): the front. Checks every argument, then runs each step of a comparison."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankmeter import _validate
from rankmeter.comparison._annotations import (
    load_segments,
    load_texts,
    segment_coverage,
    text_coverage,
)
from rankmeter.comparison._curves import CURVE_DEPTH, CURVE_FAMILIES, mean_curves
from rankmeter.comparison._failures import explain_worst, failures_of, success_metric
from rankmeter.comparison._given import GivenRun
from rankmeter.comparison._queries import join_compared, select_queries
from rankmeter.comparison._records import Comparison, Difference, Settings
from rankmeter.comparison._segments import segment_groups, segment_results
from rankmeter.comparison._summaries import differences, summarise, system_means
from rankmeter.data import Run
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.evaluation import check_policies, no_common_queries, resolve_metrics
from rankmeter.io import as_qrels, load_runs
from rankmeter.metrics import Metric, join
from rankmeter.results import RunFacts, depth_of, relevant_only


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
    include_missing: bool = True,
    simultaneous: bool = False,
    values: Mapping[str, Any] | None = None,
) -> Comparison:
    """Compare systems with a baseline on the same queries, with honest statistics.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or Arrow table
    runs : a list of runs (paths, Runs, dicts, tables) or a dict ``{name: run}``; two or more.
        Or runs that stay elsewhere, each a :class:`~rankmeter.comparison.GivenRun` (all or
        none): their values, facts and query ids computed where they live (on Spark), only
        the rows of the worst queries asked for
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
    simultaneous : the intervals of the differences: each at ``level`` on its own (False,
        default; not corrected for the many comparisons, so one can exclude 0 where the
        corrected p is above alpha), or simultaneous (True): Bonferroni intervals, each at
        ``1 - (1 - level) / k`` for the ``k`` comparisons, which all hold together with
        probability at least ``level``: the intervals' counterpart of the Bonferroni and
        (conservatively) the Holm correction. The means' intervals stay at ``level``.
    segments : path to a table ``query id -> tag columns`` or ``{column: {query: value}}``
    min_segment : segments with fewer queries are shown but never flagged
    queries : path to query texts (TSV ``qid<TAB>text`` or BEIR JSONL) or ``{query: text}``
    worst : how many of the most-losing queries to list per system
    cutoff : "nothing relevant in the top ``cutoff``" for the failure lists
    rel, judged_only, ties : evaluation policies, as for :func:`rankmeter.evaluate`
    include_missing : which queries are compared. True (default): every judged query, as
        trec_eval -c; the set depends on the qrels alone, so adding or removing a system never
        changes another pair's n, means, p-value or interval. False: only the judged queries
        that at least one of the compared systems returned results for (the set then moves
        with the systems compared).
    values : mapping, optional
        The per-query values computed elsewhere, e.g. on Spark: ``{run name: EvalResult}``
        (an :class:`~rankmeter.EvalResults`, such as ``rankmeter.engines.spark.evaluate``
        gives with ``include_missing=True`` and the same policies), holding every metric and
        every compared query. The statistics use them instead of the in-process kernels'
        values; the failure lists, curves and explanations still join the runs here (give
        :class:`~rankmeter.comparison.GivenRun` runs for none of that).

    Either way a system without results for a compared query scores 0 on it, so systems are
    always paired on the same queries and a system cannot gain by skipping hard ones; such
    queries are listed among its failures and counted in ``Comparison.filled``.

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

    # Every argument is checked before any file is read, in the order of the signature.
    policies = check_policies(rel, include_missing, judged_only, check_ties(ties))
    test = _validate.choice("test", test, stats.TESTS, what="the paired test")
    correction = _validate.choice(
        "correction", correction, stats.CORRECTIONS, what="the multiple-comparison correction"
    )
    interval = _validate.choice(
        "interval", interval, stats.INTERVALS, what="the bootstrap interval method"
    )
    alpha = _validate.alpha(alpha)
    level = _validate.level(level)
    resamples = _validate.resamples(
        resamples,
        low=stats.MIN_RESAMPLES,
        what="randomizations and bootstrap resamples; fewer cannot give a p-value below 0.05",
    )
    seed = _validate.seed(seed)
    simultaneous = _validate.boolean("simultaneous", simultaneous)
    min_segment = _validate.integer(
        "min_segment", min_segment, low=1, what="smaller segments are shown, never flagged"
    )
    worst = _validate.integer(
        "worst", worst, low=0, what="how many of the most-losing queries to list per system"
    )
    cutoff = _validate.integer(
        "cutoff", cutoff, low=1, what="no relevant result in the top cutoff is a failure"
    )
    measures = resolve_metrics(metrics)
    loaded_qrels = as_qrels(qrels)
    given = _given_runs(runs)
    loaded: Sequence[Run | GivenRun] = (
        load_runs(runs, ties=policies.ties) if given is None else list(given.values())
    )
    if len(loaded) < 2:
        raise PolicyError(
            f"compare needs two runs or more (a baseline and a system); got {len(loaded)}"
        )
    names = [r.name for r in loaded]
    base = names[0] if baseline is None else str(baseline)
    base = _validate.choice("baseline", base, names, what="the name of one of the runs")
    order = [base, *(n for n in names if n != base)]
    by_name = {r.name: r for r in loaded}
    settings = Settings(
        baseline=base,
        test=test,
        correction=correction,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        interval=interval,
        level=level,
        min_segment=min_segment,
        cutoff=cutoff,
        policies=policies,
        simultaneous=simultaneous,
    )

    compared = select_queries(
        loaded_qrels, [by_name[n] for n in order], include_missing=policies.include_missing
    )
    # After select_queries, whose error says when no run matches at all.
    facts = {n: _facts(loaded_qrels, by_name[n]) for n in order}
    for n in order:
        # Every judged query is compared by default, so such a run would score 0 everywhere
        # without a word (and a foreign baseline would let any change pass a CI gate).
        if facts[n].overlap.empty:
            raise no_common_queries(n, facts[n].source, by_name[n].query_ids, loaded_qrels)
    notes = compared.note()
    caveat = stats.not_recommended_note(test)
    if caveat is not None:
        notes.append(caveat)
    n_compared = len(compared.ids)
    stats.check_bootstrap_test(test, n_compared)
    if test == "randomization" and stats.exact_randomization(n_compared, resamples):
        notes.append(
            f"with {n_compared} queries the randomization test counts all 2^{n_compared} = "
            f"{2**n_compared:,} sign patterns (exact p-values) instead of {resamples:,} random ones"
        )
    cautions = stats.sample_cautions(
        test=test,
        n=n_compared,
        resamples=resamples,
        alpha=alpha,
        correction=correction,
        family=len(measures) * (len(order) - 1),
    )
    here = {r.name: r for r in loaded if isinstance(r, Run)}  # the runs read here
    if given is None:
        ranked = {n: join_compared(loaded_qrels, here[n], policies, compared.rows) for n in order}
        num_rel = ranked[base].num_rel(policies.rel)
    else:  # the runs are elsewhere: what compare needs of them is in their given values
        ranked = {}
        num_rel = join(loaded_qrels, None, rel=policies.rel, only=compared.rows).num_rel(
            policies.rel
        )
    no_relevant = int((num_rel == 0).sum())
    if no_relevant:
        # Judged, but nothing relevant: every metric is 0 there for every system (a tie), and
        # a mean over such queries alone is 0, whose relative change reads "–".
        notes.append(
            f"{no_relevant} of the {len(compared.ids)} compared queries "
            f"{'has' if no_relevant == 1 else 'have'} no relevant document (grade >= "
            f"{policies.to_dict()['rel']}): every metric is 0 there for "
            "every system (a tie)"
        )
    # Read before the resampling, so that a file that belongs elsewhere fails at once.
    segment_table = load_segments(segments)
    notes += segment_coverage(segment_table, compared.ids, segments)
    if given is not None:
        values = {n: given[n].values for n in order}
    scores = (
        {m.label: {n: m.compute(ranked[n]) for n in order} for m in measures}
        if values is None
        else _given_scores(values, order, measures, compared.ids)
    )
    metric_names = tuple(m.label for m in measures)
    if given is None:
        judged_k, judged = _judged(measures, scores, ranked)
        hits = _hits(ranked, cutoff, policies)
        by_system = {n: mean_curves(ranked[n]) for n in order}
    else:
        extra = _given_extras(given, order, measures, compared.ids, cutoff, policies)
        judged_k, judged, hits, by_system = extra

    summary = summarise(order, metric_names, scores, settings)
    corrected = stats.correct(summary.tested.pvalue, correction, alpha=alpha)
    texts = load_texts(queries)
    notes += text_coverage(texts, compared.ids, queries)
    failures = tuple(
        failures_of(
            n,
            base=base,
            metric=metric_names[0],
            scores=scores,
            num_rel=num_rel,
            hits=hits[n],
            queries=compared,
            texts=texts,
            worst=worst,
            cutoff=cutoff,
            policies=policies,
        )
        for n in order
    )
    explanations = explain_worst(
        loaded_qrels,
        (lambda n, _: here[n]) if given is None else (lambda n, q: given[n].rows(q)),
        base,
        measures[0],
        failures,
        policies,
    )
    segment_rows, segment_means = segment_results(
        segment_groups(segment_table, compared.ids), order, metric_names, scores, settings
    )
    rows, power_notes = _detectable(
        differences(summary, scores, base, corrected), scores, alpha, correction
    )
    notes += power_notes
    return Comparison(
        systems=tuple(order),
        metrics=metric_names,
        query_ids=compared.ids,
        scores=scores,
        means=system_means(summary),
        differences=rows,
        failures=failures,
        segments=segment_rows,
        segment_means=segment_means,
        curves={family: {n: by_system[n][family] for n in order} for family in CURVE_FAMILIES},
        settings=settings,
        notes=tuple(notes),
        queries={q: texts[q] for q in compared.ids if q in texts},
        explanations=explanations,
        judged=judged,
        judged_k=judged_k,
        filled=compared.filled(),
        no_relevant=no_relevant,
        cautions=tuple(cautions),
        facts=facts,
        depths={n: _depth(by_name[n]) for n in order},
        relevant_only=relevant_only(loaded_qrels.grades, policies.rel),
    )


def _given_runs(runs: Any) -> dict[str, GivenRun] | None:
    """The runs by name when every one is a :class:`GivenRun` (None when none is; only a
    list, tuple or dict of runs is looked into, so that nothing else is consumed here)."""
    if isinstance(runs, Mapping):
        listed = list(runs.values())
    elif isinstance(runs, (list, tuple)):
        listed = list(runs)
    else:
        return None
    kept = [r for r in listed if isinstance(r, GivenRun)]
    if not kept:
        return None
    if len(kept) != len(listed):
        raise PolicyError("runs: give every run as a GivenRun, or none (they cannot be mixed)")
    named: dict[str, GivenRun] = {}
    for run in kept:
        if run.name in named:
            raise PolicyError(f"two runs are named {run.name!r}: give each run its own name")
        named[run.name] = run
    return named


def _depth(run: Run | GivenRun) -> int:
    """The most results any query of the run has (a GivenRun knows it)."""
    return run.depth if isinstance(run, GivenRun) else depth_of(run.offsets)


def _facts(qrels: Any, run: Run | GivenRun) -> RunFacts:
    """What the data warnings need of a run: read from it, or given with its values."""
    if isinstance(run, GivenRun):
        if run.values.facts is None:
            raise PolicyError(f"the values of run {run.name!r} carry no facts (RunFacts)")
        return run.values.facts
    return RunFacts.of_run(qrels.query_ids, run)


def _hits(ranked: Mapping[str, Any], cutoff: int, policies: Any) -> dict[str, Any]:
    """Per system, Success@``cutoff`` at the policies' ``rel`` on each compared query."""
    success = success_metric(cutoff, policies.rel)
    return {n: success.compute(r) for n, r in ranked.items()}


def _given_extras(
    given: Mapping[str, GivenRun],
    order: list[str],
    measures: tuple[Metric, ...],
    ids: Any,
    cutoff: int,
    policies: Any,
) -> tuple[int, dict[str, float], dict[str, Any], dict[str, dict[str, Any]]]:
    """What compare computes from a joined run, taken from given values (:func:`given_metrics`):
    Judged@k (its k and each system's mean), Success@``cutoff`` per system and query, and
    each system's mean curves, as :func:`_judged`, :func:`_hits` and
    :func:`~rankmeter.comparison._curves.mean_curves` compute them from the join."""
    import numpy as np

    from rankmeter.metrics import parse_metric
    from rankmeter.results import judged_cutoff, judged_mean

    k = judged_cutoff(measures)
    wanted = [
        parse_metric(f"Judged@{k}"),
        parse_metric("num_ret"),
        success_metric(cutoff, policies.rel),
    ]
    curve_metrics = {
        family: [parse_metric(f"{family}@{i}") for i in range(1, CURVE_DEPTH + 1)]
        for family in CURVE_FAMILIES
    }
    every = [*wanted, *(m for family in CURVE_FAMILIES for m in curve_metrics[family])]
    columns = _given_scores({n: given[n].values for n in order}, order, tuple(every), ids)
    judged: dict[str, float] = {}
    hits: dict[str, Any] = {}
    curves: dict[str, dict[str, Any]] = {}
    for n in order:
        judged[n] = judged_mean(columns[wanted[0].label][n], columns[wanted[1].label][n])
        hits[n] = columns[wanted[2].label][n]
        curves[n] = {}
        for family in CURVE_FAMILIES:
            if not len(ids):
                curves[n][family] = np.zeros(CURVE_DEPTH)
                continue
            # One contiguous row per cutoff, averaged as mean_curves averages them.
            per_cutoff = np.stack([columns[m.label][n] for m in curve_metrics[family]])
            curves[n][family] = np.ascontiguousarray(per_cutoff).mean(axis=1)
    return k, judged, hits, curves


def _given_scores(
    values: Mapping[str, Any], order: list[str], measures: tuple[Metric, ...], ids: Any
) -> dict[str, dict[str, Any]]:
    """``values`` (run name -> EvalResult) as compare's scores: metric -> run -> the values
    of the compared queries ``ids``, in their order."""
    import numpy as np

    scores: dict[str, dict[str, Any]] = {m.label: {} for m in measures}
    for name in order:
        if name not in values:
            raise PolicyError(
                f"values has no run {name!r} (it has {', '.join(map(str, values)) or 'none'})"
            )
        per_query = values[name].per_query
        position = {q: i for i, q in enumerate(per_query.query_ids)}
        absent = [q for q in ids if q not in position]
        if absent:
            raise PolicyError(
                f"values of run {name!r} lack {len(absent)} compared queries (e.g. "
                f"{absent[0]!r}): compute them with include_missing=True"
            )
        rows = np.fromiter((position[q] for q in ids), dtype=np.int64, count=len(ids))
        for m in measures:
            try:
                given = per_query[m.label]
            except KeyError:
                raise PolicyError(f"values of run {name!r} lack the metric {m.label}") from None
            scores[m.label][name] = np.asarray(given, dtype=np.float64)[rows]
    return scores


#: The power a compare report's "detectable difference" is stated at.
REPORTED_POWER = 0.8


def _detectable(
    rows: Sequence[Difference],
    scores: Mapping[str, Mapping[str, Any]],
    alpha: float,
    correction: str,
) -> tuple[tuple[Difference, ...], list[str]]:
    """Each difference with the smallest difference its queries can detect at 80 % power (the
    paired t-test's, analytic), and one note per system on the first metric."""
    import dataclasses

    from rankmeter import stats

    family = len(rows)
    out: list[Difference] = []
    lines: list[str] = []
    for row in rows:
        diffs = scores[row.metric][row.system] - scores[row.metric][row.baseline]
        try:
            value = stats.detectable_difference(
                diffs,
                alpha=alpha,
                power=REPORTED_POWER,
                comparisons=family,
                correction=correction,
            )
        except RankmeterError:  # fewer than 2 queries, or no spread: nothing to size
            value = math.nan
        out.append(dataclasses.replace(row, detectable=value))
        if row.metric == rows[0].metric and math.isfinite(value):
            lines.append(
                f"{row.system} vs {row.baseline}: "
                + stats.power_sentence(row.n, value, row.metric, REPORTED_POWER)
                + f" (paired t-test, alpha {alpha:g}"
                + (f" / {family} comparisons" if family > 1 and correction != "none" else "")
                + ")"
            )
    return tuple(out), lines


def _judged(
    measures: tuple[Metric, ...],
    scores: Mapping[str, Mapping[str, Any]],
    ranked: Mapping[str, Any],
) -> tuple[int, dict[str, float]]:
    """Each system's mean Judged@k over the compared queries it answered, k the largest cutoff
    asked for (10 without one): the values already computed when Judged@k was asked for."""
    from rankmeter.metrics import parse_metric
    from rankmeter.results import judged_cutoff, judged_mean

    k = judged_cutoff(measures)
    metric = parse_metric(f"Judged@{k}")
    asked = next((m.label for m in measures if m == metric), None)
    judged = {
        n: judged_mean(scores[asked][n] if asked is not None else metric.compute(r), r.num_ret)
        for n, r in ranked.items()
    }
    return k, judged
