"""Measures estimated from a sampled pool: statAP, stat_nDCG and stat_P (Horvitz-Thompson).

When only a stratified sample of the pool is judged (``rankmeter pool --max-per-query N``),
each judgment carries its inclusion probability pi (the chance the sample drew it; 1 for a
judgment made in full) in :attr:`rankmeter.data.Qrels.inclusion`, and a sampled judgment
stands for ``1 / pi`` documents like it (Horvitz-Thompson). With every probability 1 (no
sample, or no pool given) each measure is exactly its full-judgment twin: statAP = AP,
stat_nDCG = nDCG, stat_P = P, to the last bit (a test checks it).

What is estimated, per query (d ranges over the judged documents; rel(d) = grade >= rel):

- stat_P@k = (1/k) sum_{d in the top k, rel(d)} 1/pi_d: unbiased for P@k.
- R^ = sum_{d rel} 1/pi_d: unbiased for R, the number of relevant documents.
- statAP = (1/R^) sum_{d retrieved, rel(d)} (1/pi_d) PC^(rank d), where
  PC^(r) = (1 + sum_{d' rel, rank(d') < r} 1/pi_d') / r: the precision at the rank of a
  sampled relevant document, which counts that document itself with weight 1 (it is known
  relevant) and those above it by their weights. This is statAP as Aslam, Pavlu and Yilmaz
  (SIGIR 2006) and Yilmaz, Kanoulas and Aslam (SIGIR 2008) estimate it, with one
  simplification: the paper weighs a document above d by its inclusion probability given
  that d was drawn (the second-order probability pi_{d'd} / pi_d); rankmeter uses pi_d',
  the only probability a pool file records. The two differ only for two documents of one
  stratum ((n-1)/(N-1) against n/N), and the estimate is a ratio anyway, so statAP is not
  exactly unbiased: its bias, found by enumerating every sample of small designs, is small
  (tests/metrics/test_statap_sampling.py) and the Cranfield simulation in docs/judgments.md
  measures it on real runs.
- stat_nDCG@k = DCG^@k / IDCG^@k: DCG^@k = sum_{d in the top k} gain(g_d) / pi_d /
  log2(rank + 1) (unbiased for DCG@k); the ideal DCG is that of an ideal ranking holding,
  for each grade g, round(N^_g) documents, N^_g = sum_{d of grade g} 1/pi_d (rounded to the
  nearest whole number as NIST's sample_eval.pl does).

Kernels are NumPy over the join's arrays; the weights are read through ``entry_rows`` and
``judgment_rows`` from the qrels' inclusion column, so a metric that does not ask for them
pays nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter.errors import RankmeterError
from rankmeter.metrics._spec import (
    REL,
    Breakdown,
    Metric,
    MetricSpec,
    WorkedExample,
    approx,
    num,
    plural,
    ratio,
)
from rankmeter.metrics.ndcg import GAIN, _finite, discount, gain

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked


def _probabilities_of(ranked: Ranked, rows: IntArray) -> FloatArray:
    """The inclusion probability of each qrels row (-1: no judgment, 1)."""
    inclusion = None if ranked.qrels is None else ranked.qrels.inclusion
    if inclusion is None or not len(rows):
        return np.ones(len(rows), dtype=np.float64)
    return np.asarray(np.where(rows >= 0, inclusion[np.maximum(rows, 0)], 1.0), dtype=np.float64)


def _weights_of(ranked: Ranked, rows: IntArray) -> FloatArray:
    """1 / inclusion probability of each qrels row (-1: no judgment, weight 1)."""
    return 1.0 / _probabilities_of(ranked, rows)


# The most documents a query's judgments may stand for (the sum of their 1 / pi): beyond it a
# probability is a mistake (one judgment standing for billions of documents), and the estimated
# ideal ranking of stat_nDCG, one entry per estimated document, would not fit in memory.
MAX_ESTIMATED = 10**7


def entry_weights(ranked: Ranked) -> FloatArray:
    """The Horvitz-Thompson weight 1 / pi of every entry (1 for an entry judged in full)."""
    key = "stat_entry_weights"
    if key not in ranked._cache:
        judgment_weights(ranked)  # checks the probabilities
        ranked._cache[key] = _weights_of(ranked, ranked.entry_rows)
    return ranked._cache[key]  # type: ignore[no-any-return]


def judgment_weights(ranked: Ranked) -> FloatArray:
    """The weight 1 / pi of every judgment, in the join's ideal order (``judgment_grades``);
    a RankmeterError (bad data: exit 1) where a query's judgments stand for more than
    MAX_ESTIMATED documents."""
    key = "stat_judgment_weights"
    if key not in ranked._cache:
        probabilities = _probabilities_of(ranked, ranked.judgment_rows)
        with np.errstate(over="ignore", divide="ignore"):
            weights = 1.0 / probabilities
            totals = ranked.total(ranked.judgment_groups, weights)
        _check_estimates(ranked, probabilities, totals)
        ranked._cache[key] = weights
    return ranked._cache[key]  # type: ignore[no-any-return]


def _check_estimates(ranked: Ranked, probabilities: FloatArray, totals: FloatArray) -> None:
    over = np.flatnonzero(~(totals <= MAX_ESTIMATED))
    if not len(over):
        return
    query = int(over[0])
    mine = ranked.judgment_groups == query
    smallest = float(np.min(probabilities[mine]))
    raise RankmeterError(
        f"the inclusion probabilities of query {str(ranked.query_ids[query])!r} (the smallest "
        f"{smallest:g}) make its judgments stand for {float(totals[query]):.3g} documents (the "
        f"sum of 1 / probability), more than {MAX_ESTIMATED:,}: check the pool file's "
        "inclusion_probability values (rankmeter pool --max-per-query writes them)"
    )


def estimated_relevant(ranked: Ranked, rel: float) -> FloatArray:
    """R^ per query: the sum of 1 / pi over the query's relevant judgments."""
    mask = ranked.judgment_grades >= rel
    return ranked.total(ranked.judgment_groups[mask], judgment_weights(ranked)[mask])


def _segment_exclusive_sums(groups: IntArray, values: FloatArray) -> FloatArray:
    """For each item (grouped contiguously), the sum of ``values`` of its group's items before it."""
    if not len(values):
        return np.zeros(0, dtype=np.float64)
    running = np.cumsum(values)
    starts = np.ones(len(groups), dtype=bool)
    starts[1:] = groups[1:] != groups[:-1]
    before = np.concatenate(([0.0], running[:-1]))
    # (running - before at the group's first item: integral weights stay exact)
    first = np.maximum.accumulate(np.where(starts, np.arange(len(groups)), 0))
    return np.asarray(before - before[first], dtype=np.float64)


def _stat_ap_terms(ranked: Ranked, metric: Metric) -> tuple[IntArray, FloatArray, FloatArray]:
    """The relevant entries (indices), each one's estimated precision at its rank PC^, and its
    weight 1 / pi."""
    relevant = ranked.relevant(metric.rel(ranked))
    index = np.flatnonzero(relevant)
    weights = entry_weights(ranked)[index]
    above = _segment_exclusive_sums(ranked.groups[index], weights)
    precision = (above + 1.0) / (ranked.positions[index] + 1.0)
    return index, precision, weights


def stat_average_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    index, precision, weights = _stat_ap_terms(ranked, metric)
    if metric.cutoff is not None:
        keep = ranked.positions[index] < metric.cutoff
        index, precision, weights = index[keep], precision[keep], weights[keep]
    numerator = ranked.total(ranked.groups[index], weights * precision)
    return ratio(numerator, estimated_relevant(ranked, metric.rel(ranked)))


def stat_precision_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int]) -> FloatArray:
    """stat_P@k for every k of ``cutoffs``: shape (n_queries, len(cutoffs))."""
    relevant = ranked.relevant(metric.rel(ranked))
    hits = ranked.totals_within(cutoffs, where=relevant, weights=entry_weights(ranked))
    return hits / np.asarray(cutoffs, dtype=np.float64)


def stat_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    if metric.cutoff is None:
        relevant = ranked.relevant(metric.rel(ranked))
        hits = ranked.total(ranked.groups[relevant], entry_weights(ranked)[relevant])
        return ratio(hits, ranked.num_ret)
    return stat_precision_at(ranked, metric, (metric.cutoff,))[:, 0]


def stat_dcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    from rankmeter.metrics._ranked import totals_within

    top = ranked.within(None if cutoffs is None else max(cutoffs, default=0))
    grades, groups, positions = ranked.grades[top], ranked.groups[top], ranked.positions[top]
    weighted = gain(grades, metric.get("gain")) * entry_weights(ranked)[top]
    with np.errstate(over="ignore"):
        sums = totals_within(
            groups, positions, ranked.n_queries, cutoffs, weighted * discount(positions)
        )
    if sums.shape[1]:
        _finite(sums[:, -1], ranked, metric, groups, grades)
    return sums


def estimated_grades(ranked: Ranked) -> tuple[IntArray, FloatArray, FloatArray]:
    """Per query and positive grade (best first): the query, the grade and N^_g, the estimated
    number of documents of that grade (the sum of 1 / pi over its judgments)."""
    grades = ranked.judgment_grades
    positive = np.flatnonzero(grades > 0)
    groups, grades = ranked.judgment_groups[positive], grades[positive]
    weights = judgment_weights(ranked)[positive]
    if not len(positive):
        empty = np.zeros(0, dtype=np.float64)
        return np.zeros(0, dtype=np.int64), empty, empty
    starts = np.ones(len(grades), dtype=bool)
    starts[1:] = (groups[1:] != groups[:-1]) | (grades[1:] != grades[:-1])
    first = np.flatnonzero(starts)
    return groups[first], grades[first], np.add.reduceat(weights, first)


def _ideal_ranks(ranked: Ranked, depth: int | None) -> tuple[IntArray, IntArray, FloatArray]:
    """The estimated ideal ranking, as (query, 0-based rank, grade) of each of its ranks (the
    first ``depth`` of each query): round(N^_g) documents of each grade, best first."""
    groups, grades, estimates = estimated_grades(ranked)
    counts = np.floor(estimates + 0.5).astype(np.int64)
    starts = _segment_exclusive_sums(groups, counts.astype(np.float64)).astype(np.int64)
    if depth is not None:
        counts = np.clip(depth - starts, 0, counts)
    total = int(counts.sum())
    rank_groups = np.repeat(groups, counts)
    rank_grades = np.repeat(grades, counts)
    block_start = np.cumsum(counts) - counts  # where each grade's block begins in the output
    within = np.arange(total, dtype=np.int64) - np.repeat(block_start, counts)
    positions = np.repeat(starts, counts) + within
    return rank_groups, positions, rank_grades


def stat_ideal_dcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    from rankmeter.metrics._ranked import totals_within

    depth = None if cutoffs is None else max(cutoffs, default=0)
    groups, positions, grades = _ideal_ranks(ranked, depth)
    with np.errstate(over="ignore"):
        sums = totals_within(
            groups,
            positions,
            ranked.n_queries,
            cutoffs,
            gain(grades, metric.get("gain")) * discount(positions.astype(np.float64)),
        )
    if sums.shape[1]:
        _finite(sums[:, -1], ranked, metric, groups, grades)
    return sums


def stat_ndcg_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """stat_nDCG@k for every k of ``cutoffs`` (None: the whole list)."""
    return ratio(stat_dcg_at(ranked, metric, cutoffs), stat_ideal_dcg_at(ranked, metric, cutoffs))


def stat_ndcg(ranked: Ranked, metric: Metric) -> FloatArray:
    return stat_ndcg_at(ranked, metric, None if metric.cutoff is None else (metric.cutoff,))[:, 0]


# -- explanations ------------------------------------------------------------------------


def _sums(terms: list[str]) -> str:
    if not terms:
        return "0"
    if len(terms) > 12:
        terms = [*terms[:10], f"... ({len(terms) - 11} more)", terms[-1]]
    return " + ".join(terms)


def _sampled_note(weights: FloatArray) -> str:
    sampled = int((weights != 1).sum())
    if not sampled:
        return "every judgment is made in full (inclusion probability 1, weight 1)"
    return (
        f"{plural(sampled, 'judged result')} shown {'was' if sampled == 1 else 'were'} "
        "sampled: each stands for 1/pi documents like it (Horvitz-Thompson)"
    )


def _columns(ranked: Ranked) -> dict[str, Any]:
    weights = entry_weights(ranked)
    judged = ranked.judged
    return {
        "inclusion": [
            1.0 / w if j else None for w, j in zip(weights.tolist(), judged.tolist(), strict=True)
        ],
        "ht_weight": [
            w if j else None for w, j in zip(weights.tolist(), judged.tolist(), strict=True)
        ],
    }


def explain_stat_ap(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    index, precision, weights = _stat_ap_terms(ranked, metric)
    hit = np.ones(len(index), dtype=bool)
    if metric.cutoff is not None:
        hit = ranked.positions[index] < metric.cutoff
    r_hat = float(estimated_relevant(ranked, rel)[0])
    where = "" if metric.cutoff is None else f" in the top {metric.cutoff}"
    all_weights = judgment_weights(ranked)[ranked.judgment_grades >= rel]
    steps = [
        "PC^(r) = (1 + the weights 1/pi of the relevant results above r) / r: the estimated "
        "precision at a relevant result's rank r, counting that result once"
    ]
    steps.append(
        f"R^ = the sum of 1/pi over the {plural(len(all_weights), 'relevant judgment')} of the "
        f"query = {_sums([num(w) for w in all_weights.tolist()])} = {num(r_hat)}"
    )
    terms = [
        f"{num(w)}*{num(p)}"
        for w, p in zip(weights[hit].tolist(), precision[hit].tolist(), strict=True)
    ]
    if r_hat == 0:
        steps.append(f"the query has no relevant judgments (grade >= {num(rel)}): {metric} = 0")
    elif not terms:
        steps.append(f"no relevant result{where}: {metric} = 0 / {num(r_hat)} = 0")
    else:
        total = float((weights[hit] * precision[hit]).sum())
        steps.append(
            f"{metric} = (the sum of 1/pi * PC^ over the relevant results{where}) / R^ = "
            f"({_sums(terms)}) / {num(r_hat)} = {num(total)} / {num(r_hat)} = {approx(value)}"
        )
    steps.append(_sampled_note(entry_weights(ranked)[ranked.judged]))
    estimate: list[float | None] = [None] * len(relevant)
    for i, p in zip(index.tolist(), precision.tolist(), strict=True):
        estimate[i] = p
    columns: dict[str, Any] = {**_columns(ranked), "precision": estimate}
    return Breakdown(steps=tuple(steps), columns=columns, limit=metric.cutoff)


def explain_stat_p(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    relevant = ranked.relevant(metric.rel(ranked))
    hit = relevant & ranked.within(metric.cutoff)
    weights = entry_weights(ranked)
    terms = [num(w) for w in weights[hit].tolist()]
    total = float(weights[hit].sum())
    if metric.cutoff is None:
        n = len(relevant)
        if n == 0:
            steps = [f"no results returned: {metric} = 0"]
        else:
            steps = [
                f"{metric} = (the sum of 1/pi over the relevant results) / "
                f"{plural(n, 'result')} returned = ({_sums(terms)}) / {n} = {approx(value)}"
            ]
    else:
        k = metric.cutoff
        steps = [
            f"{metric} = (the sum of 1/pi over the relevant results in the top {k}) / {k} = "
            f"({_sums(terms)}) / {k} = {num(total)} / {k} = {approx(value)}"
        ]
    steps.append(_sampled_note(weights[ranked.judged]))
    return Breakdown(steps=tuple(steps), columns=_columns(ranked), limit=metric.cutoff)


def explain_stat_ndcg(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    kind = metric.get("gain")
    weights = entry_weights(ranked)
    gains = gain(ranked.grades, kind) * weights
    positions = ranked.positions
    top = ranked.within(metric.cutoff)
    label = "DCG^" if metric.cutoff is None else f"DCG^@{metric.cutoff}"
    cutoffs = None if metric.cutoff is None else (metric.cutoff,)
    dcg = float(stat_dcg_at(ranked, metric, cutoffs)[0, 0])
    idcg = float(stat_ideal_dcg_at(ranked, metric, cutoffs)[0, 0])
    rule = "2^grade - 1 (gain=exp)" if kind == "exp" else "grade (gain=linear)"
    shown = [
        f"{num(g)}/{num(np.log2(p + 2.0))}"
        for g, p in zip(gains[top].tolist(), positions[top].tolist(), strict=True)
        if g != 0
    ]
    _, grades, estimates = estimated_grades(ranked)
    counts = ", ".join(
        f"grade {num(g)}: {num(n)} -> {int(np.floor(n + 0.5))}"
        for g, n in zip(grades.tolist(), estimates.tolist(), strict=True)
    )
    steps = [
        f"a rank adds gain / pi / log2(rank + 1), gain = {rule}",
        f"{label} = {_sums(shown)} = {approx(dcg)}",
        "the ideal ranking holds round(N^_g) documents of each grade g, N^_g = the sum of "
        f"1/pi over its judgments: {counts or 'no positive grade'}",
        f"ideal {label} = {approx(idcg)}",
    ]
    if idcg == 0:
        steps.append(f"no judgment has a positive grade, so the ideal {label} is 0: {metric} = 0")
    else:
        steps.append(f"{metric} = {approx(dcg)} / {approx(idcg)} = {approx(value)}")
    steps.append(_sampled_note(weights[ranked.judged]))
    columns: dict[str, Any] = {
        **_columns(ranked),
        "gain": gain(ranked.grades, kind),
        "contribution": gains * discount(positions),
    }
    return Breakdown(
        steps=tuple(steps), columns=columns, contributes=gains > 0, limit=metric.cutoff
    )


_FULL = (
    "With every inclusion probability 1 (no sample; no pool given; judgments outside the pool "
    "file) it is exactly {twin}."
)
_SAMPLE = (
    "A judged (query, doc) pair not in the pool file has probability 1 (judged in full); a "
    "pool item without a judgment, an unjudged result or a grade < 0 counts nothing. "
    "Probabilities that make one query's judgments stand for more than 10,000,000 documents "
    "(the sum of 1 / pi) are an error naming the query: a mistake in the pool file."
)

STAT_AP = MetricSpec(
    name="statAP",
    description="AP estimated from a sampled pool (Horvitz-Thompson): each judgment weighs "
    "1/pi, its inclusion probability pi read from the pool file (--pool). R, the precision at "
    "each relevant rank and their sum are estimated from the sample. Equals AP when nothing "
    "is sampled.",
    formula="statAP = (1/R^) sum_{d rel, retrieved} PC^(rank d) / pi_d;  R^ = sum_{d rel} "
    "1/pi_d;  PC^(r) = (1 + sum_{d' rel, rank < r} 1/pi_d') / r",
    kernel=stat_average_precision,
    params=(REL,),
    high=None,
    aliases=("statMAP", "stat_AP", "stat_map"),
    reference="Aslam, Pavlu & Yilmaz, SIGIR 2006; Yilmaz, Kanoulas & Aslam, SIGIR 2008 "
    "(second-order probabilities replaced by first-order ones: see the module)",
    uses=("grade", "relevant", "inclusion", "ht_weight", "precision"),
    explain=explain_stat_ap,
    edge_cases=(
        _FULL.format(twin="AP (map), to the last bit"),
        _SAMPLE,
        "A ratio of estimates, so slightly biased (not exactly unbiased as stat_P is): "
        "docs/judgments.md gives the bias measured on Cranfield.",
        "No relevant judgment (R^ = 0): 0. A sample's value may exceed 1 (a sampled "
        "document stands for 1/pi of them).",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": 1, "d4": 1},
        ranking=("d1", "d2", "d3", "d9"),
        metric="statAP",
        value="0.5556",
        working="Judged in full (pi = 1): R^ = 3; PC^ is 1/1 at d1 and 2/3 at d3, so statAP "
        "= (1 + 2/3) / 3 = 0.5556 = AP. Had d3 been sampled with pi = 0.5 (weight 2): R^ = 1 + "
        "2 + 1 = 4, PC^(3) = (1 + 1)/3 still, and statAP = (1 + 2 * 2/3) / 4 = 0.5833.",
    ),
)

STAT_NDCG = MetricSpec(
    name="stat_nDCG",
    description="nDCG estimated from a sampled pool: DCG with each judged result's gain "
    "weighed 1/pi (--pool), over the DCG of an ideal ranking holding round(N^_g) documents of "
    "each grade g. Raw grades, as nDCG. Equals nDCG when nothing is sampled.",
    formula="stat_nDCG@k = DCG^@k / IDCG^@k;  DCG^@k = sum_{i<=k} gain(g_i) / pi_i / "
    "log2(i + 1);  N^_g = sum_{d of grade g} 1/pi_d",
    kernel=stat_ndcg,
    params=(GAIN,),
    high=None,
    aliases=("statNDCG", "stat_NDCG"),
    reference="Yilmaz, Kanoulas & Aslam, SIGIR 2008 (NDCG from a sample; the ideal's counts "
    "rounded as NIST's sample_eval.pl rounds them)",
    uses=("grade", "inclusion", "ht_weight", "gain", "contribution"),
    explain=explain_stat_ndcg,
    at_cutoffs=stat_ndcg_at,
    edge_cases=(
        _FULL.format(twin="nDCG (trec_eval ndcg_cut)"),
        _SAMPLE,
        "A ratio of estimates: DCG^ is unbiased, the ratio is not exactly so; it may exceed 1 "
        "on a lucky sample.",
        "No judgment with a positive grade: 0.",
    ),
    example=WorkedExample(
        judgments={"d1": 2, "d2": 0, "d3": 1},
        ranking=("d2", "d1", "d3"),
        metric="stat_nDCG@3",
        value="0.6697",
        working="Judged in full (pi = 1): DCG^@3 = 0/1 + 2/1.585 + 1/2 = 1.762; the ideal holds "
        "one document of grade 2 and one of grade 1: 2/1 + 1/1.585 = 2.631; 1.762 / 2.631 = "
        "0.6697 = nDCG@3. Had d3 been sampled with pi = 0.5 (weight 2): DCG^@3 = 1.262 + 2/2 = "
        "2.262, N^_1 = 2, so the ideal is 2/1 + 1/1.585 + 1/2 = 3.131 and stat_nDCG@3 = 0.7224.",
    ),
)

STAT_P = MetricSpec(
    name="stat_P",
    description="Precision estimated from a sampled pool: the sum of 1/pi over the relevant "
    "results of the top k (--pool), divided by k; unbiased. Equals P when nothing is sampled.",
    formula="stat_P@k = (1/k) sum_{i<=k, d_i rel} 1/pi_i",
    kernel=stat_precision,
    params=(REL,),
    high=None,
    aliases=("statP", "stat_Precision"),
    reference="Horvitz & Thompson 1952; Yilmaz, Kanoulas & Aslam, SIGIR 2008",
    uses=("grade", "relevant", "inclusion", "ht_weight"),
    explain=explain_stat_p,
    at_cutoffs=stat_precision_at,
    edge_cases=(
        _FULL.format(twin="P (trec_eval P.k)"),
        _SAMPLE,
        "Unbiased: its mean over every sample the design can draw is P@k; one sample's value "
        "may exceed 1.",
        "Divides by k even when fewer than k results were returned, as P@k does.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": 1},
        ranking=("d1", "d2", "d3", "d4"),
        metric="stat_P@4",
        value="0.5000",
        working="Judged in full: (1 + 1) / 4 = 0.5 = P@4. Had d3 been sampled with pi = 0.25 "
        "(weight 4): (1 + 4) / 4 = 1.25, an estimate above 1 (the mean over samples is P@4).",
    ),
)

SPECS = (STAT_AP, STAT_NDCG, STAT_P)


def pool_notes(qrels: Any, metrics: Any) -> tuple[str, ...]:
    """Notes on a pool given with the qrels (:attr:`rankmeter.data.Qrels.pool_coverage`, set by
    :func:`rankmeter.io.sampled_qrels`): that it changes nothing when no sampled-judgment
    metric (statAP, stat_nDCG, stat_P) is asked; and, when one is, that it may not be these
    judgments' pool when fewer than half of its items for the qrels' queries are judged (a
    sample is drawn to be judged whole, so most of it is judged in the qrels made from it).
    ``metrics``: names or :class:`~rankmeter.metrics.Metric` objects."""
    from rankmeter.metrics._parse import parse_metrics

    coverage = getattr(qrels, "pool_coverage", None)
    if coverage is None:
        return ()
    given = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
    if not any(m.spec in SPECS for m in parse_metrics(given)):
        return (
            "the pool is read by statAP, stat_nDCG and stat_P only (their inclusion "
            "probabilities); none was asked, so it changes nothing",
        )
    judged, items = coverage
    if 2 * judged >= items:
        return ()
    return (
        f"{judged:,} of the pool's {items:,} items are judged in {qrels.source}: is this the "
        "pool these judgments were made from, and is its sample judged?",
    )
