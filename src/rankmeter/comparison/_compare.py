"""compare(): the front. Its arguments are checked once (:class:`Options`), then each step of a
comparison runs on what the steps before it made: the systems (:class:`Systems`, read here, on
Spark or given), the compared queries, the per-query scores, the statistics, the failure
lists, the explanations and the segments."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankmeter import _validate
from rankmeter.comparison._annotations import (
    load_segments,
    load_texts,
    segment_coverage,
    text_coverage,
)
from rankmeter.comparison._curves import CURVE_FAMILIES, mean_curves
from rankmeter.comparison._failures import explain_worst, failures_of, success_metric
from rankmeter.comparison._given import (
    GivenRun,
    given_extras,
    given_runs,
    given_scores,
    run_depth,
    run_facts,
)
from rankmeter.comparison._queries import ComparedQueries, join_compared, select_queries
from rankmeter.comparison._records import Comparison, Difference, Settings
from rankmeter.comparison._segments import segment_groups, segment_results
from rankmeter.comparison._summaries import differences, summarise, system_means
from rankmeter.data import Qrels, Run
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.evaluation import check_policies, no_common_queries, resolve_metrics
from rankmeter.io import as_qrels, load_runs, sampled_qrels
from rankmeter.metrics import Metric, Ranked, join, pool_notes, reads_subtopics
from rankmeter.results import Policies, relevant_only

#: Where compare's per-query values are computed: here, or on Spark (:func:`spark_runs`).
ENGINES = ("process", "spark")


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
    engine: str = "process",
    spark: Any = None,
    inclusion: Any = None,
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
    engine : where the per-query values are computed: ``"process"`` (default: the runs are
        read here) or ``"spark"``: the runs are evaluated where they live, on Spark, and no
        run is read here (:func:`~rankmeter.comparison.spark_runs`; the runs are Spark
        DataFrames or paths Spark reads, a list or a dict, as
        :func:`rankmeter.engines.spark.evaluate` takes them, and ``qrels`` a path both Spark
        and :func:`rankmeter.io.as_qrels` read). The comparison is the same, number for number.
    spark : with ``engine="spark"``: a SparkSession, or the backend
        ``rankmeter.engines.connect("spark")`` gives (default: that backend, the process's
        one local session)
    inclusion : where the judgments are a sample of a pool, each judgment's inclusion
        probability (the pool file's path, the Pool, or ``{(query_id, doc_id): probability}``),
        read by statAP, stat_nDCG and stat_P, as :func:`rankmeter.evaluate` takes it; with
        ``engine="process"``

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

    options = Options.check(
        metrics=metrics,
        test=test,
        correction=correction,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        interval=interval,
        level=level,
        min_segment=min_segment,
        worst=worst,
        cutoff=cutoff,
        rel=rel,
        judged_only=judged_only,
        ties=ties,
        include_missing=include_missing,
        simultaneous=simultaneous,
        engine=engine,
        spark=spark,
    )
    if options.engine == "spark":
        from rankmeter.engines import spark_refusal

        refused = spark_refusal((), inclusion)  # (compare_files refuses subtopics itself)
        if refused:
            raise PolicyError(refused)
    systems = Systems.read(qrels, runs, baseline, options, spark, inclusion)
    compared = select_queries(
        systems.qrels, systems.in_order(), include_missing=options.policies.include_missing
    )
    facts = systems.facts()  # after select_queries, whose error says when no run matches
    notes = _sampling_notes(compared, options)
    notes += pool_notes(systems.qrels, options.measures)  # a pool read for nothing, or not theirs
    cautions = stats.sample_cautions(
        test=options.test,
        n=len(compared.ids),
        resamples=options.resamples,
        alpha=options.alpha,
        correction=options.correction,
        family=len(options.measures) * (len(systems.order) - 1),
    )
    ranked, num_rel = systems.joined(compared, options.policies)
    no_relevant = int((num_rel == 0).sum())
    notes += _no_relevant_note(no_relevant, len(compared.ids), options.policies)
    # Read before the resampling, so that a file that belongs elsewhere fails at once.
    segment_table = load_segments(segments)
    notes += segment_coverage(segment_table, compared.ids, segments)
    scores = systems.scores(options.measures, compared.ids, ranked, values)
    judged_k, judged, hits, by_system = systems.extras(options, compared.ids, scores, ranked)
    settings = options.settings(systems.base)
    metric_names = tuple(m.label for m in options.measures)
    # GMAP's per-query values are logs: its means are geometric, its tests on the logs.
    geometric = frozenset(m.label for m in options.measures if m.spec.aggregate == "geometric")
    summary = summarise(systems.order, metric_names, scores, settings, geometric)
    corrected = stats.correct(summary.tested.pvalue, options.correction, alpha=options.alpha)
    texts = load_texts(queries)
    notes += text_coverage(texts, compared.ids, queries)
    failures = tuple(
        failures_of(
            n,
            base=systems.base,
            metric=metric_names[0],
            scores=scores,
            num_rel=num_rel,
            hits=hits[n],
            queries=compared,
            texts=texts,
            worst=options.worst,
            cutoff=options.cutoff,
            policies=options.policies,
        )
        for n in systems.order
    )
    explanations = explain_worst(
        systems.qrels,
        systems.rows_of,
        systems.base,
        options.measures[0],
        failures,
        options.policies,
    )
    segment_rows, segment_means = segment_results(
        segment_groups(segment_table, compared.ids),
        systems.order,
        metric_names,
        scores,
        settings,
        geometric,
    )
    rows, power_notes = _detectable(
        differences(summary, scores, systems.base, corrected, geometric),
        scores,
        options.alpha,
        options.correction,
        geometric,
    )
    notes += power_notes
    return Comparison(
        systems=tuple(systems.order),
        metrics=metric_names,
        query_ids=compared.ids,
        scores=scores,
        means=system_means(summary),
        differences=rows,
        failures=failures,
        segments=segment_rows,
        segment_means=segment_means,
        curves={f: {n: by_system[n][f] for n in systems.order} for f in CURVE_FAMILIES},
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
        depths={n: run_depth(systems.by_name[n]) for n in systems.order},
        relevant_only=relevant_only(systems.qrels.grades, options.policies.rel),
    )


@dataclass(frozen=True)
class Options:
    """compare's settings, each checked once, before any file is read (:meth:`check`)."""

    policies: Policies
    test: str
    correction: str
    interval: str
    alpha: float
    level: float
    resamples: int
    seed: int
    simultaneous: bool
    min_segment: int
    worst: int
    cutoff: int
    measures: tuple[Metric, ...]
    engine: str = "process"

    @classmethod
    def check(
        cls,
        *,
        metrics: Any,
        test: Any,
        correction: Any,
        alpha: Any,
        resamples: Any,
        seed: Any,
        interval: Any,
        level: Any,
        min_segment: Any,
        worst: Any,
        cutoff: Any,
        rel: Any,
        judged_only: Any,
        ties: Any,
        include_missing: Any,
        simultaneous: Any,
        engine: Any = "process",
        spark: Any = None,
    ) -> Options:
        """Every setting checked (a PolicyError names the first bad one), in the order of
        :func:`compare`'s signature, the policies first."""
        from rankmeter import stats

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
        engine = _validate.choice("engine", engine, ENGINES, what="where the values are computed")
        if spark is not None and engine != "spark":
            raise PolicyError(f"spark is a setting of engine='spark', not of engine={engine!r}")
        return cls(
            policies=policies,
            test=test,
            correction=correction,
            interval=interval,
            alpha=alpha,
            level=level,
            resamples=resamples,
            seed=seed,
            simultaneous=simultaneous,
            min_segment=min_segment,
            worst=worst,
            cutoff=cutoff,
            measures=measures,
            engine=engine,
        )

    def settings(self, baseline: str) -> Settings:
        """The comparison's :class:`~rankmeter.comparison.Settings`, with its baseline."""
        return Settings(
            baseline=baseline,
            test=self.test,
            correction=self.correction,
            alpha=self.alpha,
            resamples=self.resamples,
            seed=self.seed,
            interval=self.interval,
            level=self.level,
            min_segment=self.min_segment,
            cutoff=self.cutoff,
            policies=self.policies,
            simultaneous=self.simultaneous,
        )


@dataclass(frozen=True)
class Systems:
    """The systems compared and the qrels: each run read here (a :class:`~rankmeter.Run`) or
    given (a :class:`GivenRun`: computed elsewhere), by name, in the comparison's order (the
    baseline first)."""

    qrels: Qrels
    order: tuple[str, ...]
    by_name: Mapping[str, Run | GivenRun]
    given: Mapping[str, GivenRun] | None

    @classmethod
    def read(
        cls,
        qrels: Any,
        runs: Any,
        baseline: str | None,
        options: Options,
        spark: Any = None,
        inclusion: Any = None,
    ) -> Systems:
        """The qrels and the runs read (or the runs evaluated on Spark, with
        ``options.engine``), two or more; the baseline named checked among them."""
        given: dict[str, GivenRun] | None
        if options.engine == "spark":
            from rankmeter.comparison._spark import driver_qrels, spark_runs

            loaded_qrels = as_qrels(driver_qrels(qrels))

            given = spark_runs(
                spark,
                qrels,
                runs,
                options.measures,
                rel=options.policies.rel,
                judged_only=options.policies.judged_only,
                ties=options.policies.ties,
                cutoff=options.cutoff,
            )
        else:
            loaded_qrels = sampled_qrels(
                as_qrels(qrels, subtopics=reads_subtopics(options.measures)), inclusion
            )
            given = given_runs(runs)
        loaded: Sequence[Run | GivenRun] = (
            load_runs(runs, ties=options.policies.ties) if given is None else list(given.values())
        )
        if len(loaded) < 2:
            raise PolicyError(
                f"compare needs two runs or more (a baseline and a system); got {len(loaded)}"
            )
        names = [r.name for r in loaded]
        base = names[0] if baseline is None else str(baseline)
        base = _validate.choice("baseline", base, names, what="the name of one of the runs")
        order = (base, *(n for n in names if n != base))
        return cls(loaded_qrels, order, {r.name: r for r in loaded}, given)

    @property
    def base(self) -> str:
        return self.order[0]

    def in_order(self) -> list[Run | GivenRun]:
        return [self.by_name[n] for n in self.order]

    def facts(self) -> dict[str, Any]:
        """Each run's :class:`~rankmeter.results.RunFacts`; a run with no judged query is
        refused: every judged query is compared by default, so such a run would score 0
        everywhere without a word (and a foreign baseline would let any change pass a CI
        gate)."""
        facts = {n: run_facts(self.qrels, self.by_name[n]) for n in self.order}
        for n in self.order:
            if facts[n].overlap.empty:
                raise no_common_queries(n, facts[n].source, self.by_name[n].query_ids, self.qrels)
        return facts

    def joined(
        self, compared: ComparedQueries, policies: Policies
    ) -> tuple[dict[str, Ranked], Any]:
        """Each run read here joined with the compared queries (none for given runs: what
        compare needs of them is in their values), and the compared queries' relevant
        counts."""
        if self.given is not None:
            whole = join(self.qrels, None, rel=policies.rel, only=compared.rows)
            return {}, whole.num_rel(policies.rel)
        ranked = {
            n: join_compared(self.qrels, self._here(n), policies, compared.rows) for n in self.order
        }
        return ranked, ranked[self.base].num_rel(policies.rel)

    def scores(
        self,
        measures: tuple[Metric, ...],
        ids: tuple[str, ...],
        ranked: Mapping[str, Ranked],
        values: Mapping[str, Any] | None,
    ) -> dict[str, dict[str, Any]]:
        """metric -> run -> the values of the compared queries: given (a GivenRun's values,
        else ``values``) or computed from the joins."""
        if self.given is not None:
            values = {n: self.given[n].values for n in self.order}
        if values is None:
            return {m.label: {n: m.compute(ranked[n]) for n in self.order} for m in measures}
        return given_scores(values, self.order, measures, ids)

    def extras(
        self,
        options: Options,
        ids: tuple[str, ...],
        scores: Mapping[str, Mapping[str, Any]],
        ranked: Mapping[str, Ranked],
    ) -> tuple[int, dict[str, float], dict[str, Any], dict[str, dict[str, Any]]]:
        """Judged@k (its k and each system's mean), Success@cutoff per system and query, and
        each system's mean curves: from the joins, or from the given values."""
        if self.given is not None:
            return given_extras(
                self.given, self.order, options.measures, ids, options.cutoff, options.policies
            )
        judged_k, judged = _judged(options.measures, scores, ranked)
        success = success_metric(options.cutoff, options.policies.rel)
        hits = {n: success.compute(r) for n, r in ranked.items()}
        return judged_k, judged, hits, {n: mean_curves(ranked[n]) for n in self.order}

    def rows_of(self, name: str, query_ids: list[str]) -> Run:
        """A run holding run ``name``'s results for these queries (the worst, explained)."""
        if self.given is None:
            return self._here(name)
        return self.given[name].rows(query_ids)

    def _here(self, name: str) -> Run:
        run = self.by_name[name]
        assert isinstance(run, Run)  # (every run is read here when none is given)
        return run


def _sampling_notes(compared: ComparedQueries, options: Options) -> list[str]:
    """The notes on the compared queries, the test and an exact randomization; a bootstrap
    test on too few queries is refused."""
    from rankmeter import stats

    notes = compared.note()
    caveat = stats.not_recommended_note(options.test)
    if caveat is not None:
        notes.append(caveat)
    n = len(compared.ids)
    stats.check_bootstrap_test(options.test, n)
    if options.test == "randomization" and stats.exact_randomization(n, options.resamples):
        notes.append(
            f"with {n} queries the randomization test counts all 2^{n} = "
            f"{2**n:,} sign patterns (exact p-values) instead of {options.resamples:,} random ones"
        )
    return notes


def _no_relevant_note(no_relevant: int, compared: int, policies: Policies) -> list[str]:
    """Judged, but nothing relevant: every metric is 0 there for every system (a tie), and a
    mean over such queries alone is 0, whose relative change reads "–"."""
    if not no_relevant:
        return []
    return [
        f"{no_relevant} of the {compared} compared queries "
        f"{'has' if no_relevant == 1 else 'have'} no relevant document (grade >= "
        f"{policies.to_dict()['rel']}): every metric is 0 there for "
        "every system (a tie)"
    ]


#: The power a compare report's "detectable difference" is stated at.
REPORTED_POWER = 0.8


def _detectable(
    rows: Sequence[Difference],
    scores: Mapping[str, Mapping[str, Any]],
    alpha: float,
    correction: str,
    geometric: frozenset[str] = frozenset(),
) -> tuple[tuple[Difference, ...], list[str]]:
    """Each difference with the smallest difference its queries can detect at 80 % power (the
    paired t-test's, analytic), and one note per system on the first metric (for a metric in
    ``geometric``, GMAP, a difference of log AP, and said so)."""
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
                + stats.power_sentence(
                    row.n,
                    value,
                    f"log AP ({row.metric})" if row.metric in geometric else row.metric,
                    REPORTED_POWER,
                )
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
