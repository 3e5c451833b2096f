"""Diversity metrics on subtopic qrels, as ndeval (TREC Web track) computes them: alpha-nDCG,
ERR-IA, nERR-IA and subtopic recall.

A diversity qrels file judges documents per subtopic (``qid subtopic docid grade``; see
:meth:`rankmeter.data.Qrels.from_subtopic_columns`). As in ndeval, relevance is binary per
subtopic (a grade >= rel), a subtopic counts only if some judged document is relevant to it (the
query's *N* subtopics), and a result relevant to subtopic *s* gains ``(1 - alpha)^c`` for it,
where *c* is the number of results above it already relevant to *s*. Ordinary qrels hold one
subtopic per query (every judgment is ``"0"``'s).

The kernels read two sides over the (result, subtopic) pairs, built in
rankmeter.metrics._subtopic_pairs (compiled loops where the C extension is built, NumPy where
not) and cached per join, so the four metrics share them: the run's (each result's gain and
the subtopics it covers first) and the judgments' (each query's subtopics, and the ideal
ordering for alpha-nDCG and nERR-IA: ndeval's greedy one, at each rank the judged document with
the largest gain given the ranks above, equal gains to the larger doc id, compared bytewise as
ndeval's strcmp).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter.metrics._spec import (
    REL,
    Breakdown,
    Metric,
    MetricSpec,
    Param,
    WorkedExample,
    approx,
    num,
    plural,
    ratio,
)
from rankmeter.metrics._subtopic_pairs import Covered as _Covered
from rankmeter.metrics._subtopic_pairs import Ideal as _Ideal
from rankmeter.metrics._subtopic_pairs import covered as _covered
from rankmeter.metrics._subtopic_pairs import ideal as _ideal

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked

ALPHA = Param(
    "alpha",
    "number",
    0.5,
    "redundancy penalty: a result gains (1 - alpha)^c for a subtopic already covered c times "
    "above it (0: no penalty; 1: only the first result of a subtopic gains)",
    low=0,
    high=1,
)

#: ERR-IA's alpha (ndeval's default, which ir_measures always passes for ERR-IA)
ERR_ALPHA = 0.5


def _alpha(metric: Metric) -> float:
    return float(metric.get("alpha")) if metric.spec.param("alpha") else ERR_ALPHA


#: The depth of a metric without a cutoff (a Metric made by hand: the names need one): the
#: whole ranking; ERR-IA then normalises to each query's number of results.
WHOLE = 2**62


def _depth(ranked: Ranked, metric: Metric) -> int:
    return WHOLE if metric.cutoff is None else int(metric.cutoff)


def _at(depth: int) -> str:
    return "" if depth == WHOLE else f"@{depth}"


def _reciprocal(positions: Any) -> FloatArray:
    return 1.0 / (positions + 1.0)  # type: ignore[no-any-return]


def _discount(positions: Any) -> FloatArray:
    return 1.0 / np.log2(np.asarray(positions, dtype=np.float64) + 2.0)


# -- kernels -----------------------------------------------------------------------------------


def _run_sum(
    ranked: Ranked, covered: _Covered, depth: int, weights: Callable[[Any], FloatArray]
) -> FloatArray:
    """Per query, the sum of gain x weights(rank) over its results that gain (the weights
    computed for those alone)."""
    top = np.flatnonzero((covered.score > 0) & (ranked.positions < depth))
    return ranked.total(ranked.groups[top], covered.score[top] * weights(ranked.positions[top]))


def alpha_dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), _alpha(metric), depth)
    return _run_sum(ranked, covered, depth, _discount)


def alpha_ndcg(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    ideal = _ideal(ranked, metric.rel(ranked), _alpha(metric), depth)
    gains = ideal.gains[:, :depth]
    best = _row_sums(gains * _discount(np.arange(gains.shape[1])))
    return ratio(alpha_dcg_values(ranked, metric), best)


def _row_sums(terms: FloatArray) -> FloatArray:
    """Each row's sum, its terms added in rank order (as the run's side adds them, and the
    same for one query as for many: a matrix product's order is BLAS's)."""
    if terms.shape[1] == 0:
        return np.zeros(terms.shape[0], dtype=np.float64)
    return np.cumsum(terms, axis=1)[:, -1]


def _err_sum(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), _alpha(metric), depth)
    return _run_sum(ranked, covered, depth, _reciprocal)


def _ideal_ideal(ranked: Ranked, depth: int) -> FloatArray:
    """ndeval's ERR-IA normaliser for one subtopic, per query: the sum to ``depth`` of a
    ranking whose every result is relevant to it (to each query's number of results where
    there is no cutoff)."""
    top = int(ranked.num_ret.max(initial=0)) if depth == WHOLE else depth
    ranks = np.arange(top, dtype=np.float64)
    sums = np.concatenate(([0.0], np.cumsum(np.power(1.0 - ERR_ALPHA, ranks) / (ranks + 1.0))))
    if depth == WHOLE:
        return sums[ranked.num_ret]  # type: ignore[no-any-return]
    return np.full(ranked.n_queries, sums[-1])


def err_ia(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    ideal = _ideal(ranked, metric.rel(ranked), ERR_ALPHA, 0)
    return ratio(_err_sum(ranked, metric), ideal.subtopics * _ideal_ideal(ranked, depth))


def nerr_ia(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    ideal = _ideal(ranked, metric.rel(ranked), ERR_ALPHA, depth)
    gains = ideal.gains[:, :depth]
    best = _row_sums(gains / np.arange(1.0, gains.shape[1] + 1.0))
    return ratio(_err_sum(ranked, metric), best)


def st_recall(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    rel = metric.rel(ranked)
    covered = _covered(ranked, rel, ERR_ALPHA, depth)
    top = np.flatnonzero((covered.new > 0) & (ranked.positions < depth))
    found = ranked.total(ranked.groups[top], covered.new[top])
    return ratio(found, _ideal(ranked, rel, ERR_ALPHA, 0).subtopics)


# -- explanations ------------------------------------------------------------------------------

#: the most ranks of the ideal ordering an explanation lists
IDEAL_ROWS = 20


def _names(ranked: Ranked, codes: Any) -> list[str]:
    if ranked.qrels is None:
        return ["0"] * len(codes)
    return ranked.qrels.subtopics.names(np.asarray(codes, dtype=np.int64))


def _cells(ranked: Ranked, covered: _Covered, alpha: float | None) -> list[str | None]:
    """Per rank, the subtopics the result is relevant to: ``2`` the first time, ``3 (x0.5)``
    (alpha-nDCG: its factor) or ``3 (seen 1x)`` when results above covered it already."""
    cells: list[list[str]] = [[] for _ in range(len(ranked.positions))]
    names = _names(ranked, covered.pair_code)
    for e, name, seen in zip(
        covered.pair_entry.tolist(), names, covered.pair_seen.tolist(), strict=True
    ):
        if seen == 0:
            cells[e].append(name)
        elif alpha is None:
            cells[e].append(f"{name} (seen {seen}x)")
        else:
            cells[e].append(f"{name} (x{num((1.0 - alpha) ** seen)})")
    return [", ".join(c) if c else None for c in cells]


def _sum_text(gains: Any, divisors: Any) -> str:
    """``1.5/1 + 0.5/1.585``: gain / divisor per rank with a gain; shortened when long."""
    terms = zip(np.asarray(gains).tolist(), np.asarray(divisors).tolist(), strict=True)
    shown = [f"{num(g)}/{num(d)}" for g, d in terms if g != 0] or ["0"]
    if len(shown) > 12:
        shown = [*shown[:10], f"... ({len(shown) - 11} more)", shown[-1]]
    return " + ".join(shown)


def _subtopic_step(ranked: Ranked, ideal: _Ideal, metric: Metric) -> str:
    n = int(ideal.subtopics[0])
    sub = None if ranked.qrels is None else ranked.qrels.subtopics
    if sub is not None and sub.given and len(sub.vocabulary) > 1:
        return f"the query has {plural(n, 'subtopic')} with a relevant judged document"
    where = "the grades given hold" if sub is None else "the qrels hold one subtopic or"
    return (
        f"{where} no subtopics: the query has {plural(n, 'subtopic')}, so {metric} is not a "
        "diversity number here"
    )


def _ideal_rows(
    ranked: Ranked, ideal: _Ideal, depth: int, divisors: FloatArray, divisor: str
) -> tuple[tuple[dict[str, Any], ...], str]:
    """The greedy ideal ordering as rows (rank, doc, gain, ``divisor``, contribution = gain /
    divisor), and as text."""
    picked = ideal.picked[0, :depth]
    places = np.flatnonzero(picked >= 0)
    rows = ranked.judgment_rows[picked[places]]
    if ranked.qrels is None:
        docs = [f"grade {num(g)}" for g in ranked.judgment_grades[picked[places]].tolist()]
    else:
        docs = [str(d) for d in ranked.qrels.doc_ids(rows).to_pylist()]
    gains = ideal.gains[0, places]
    table = tuple(
        {
            "rank": int(p) + 1,
            "doc": doc,
            "gain": float(g),
            divisor: float(divisors[p]),
            "contribution": float(g / divisors[p]),
        }
        for p, doc, g in zip(places.tolist(), docs, gains.tolist(), strict=True)
    )[:IDEAL_ROWS]
    text = ", ".join(f"{d} ({num(g)})" for d, g in zip(docs[:12], gains.tolist()[:12], strict=True))
    if len(docs) > 12:
        text += ", ..."
    return table, text or "no judged document gains"


def explain_alpha_ndcg(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    depth = _depth(ranked, metric)
    alpha = _alpha(metric)
    covered = _covered(ranked, metric.rel(ranked), alpha, depth)
    ideal = _ideal(ranked, metric.rel(ranked), alpha, depth)
    top = ranked.positions < depth
    divisors = np.log2(ranked.positions + 2.0)
    dcg = float(alpha_dcg_values(ranked, metric)[0])
    width = ideal.gains[:, :depth].shape[1]
    ideal_divisors = np.log2(np.arange(width) + 2.0)
    best = float(_row_sums(ideal.gains[:1, :width] * _discount(np.arange(width)))[0])
    table, order = _ideal_rows(ranked, ideal, width, ideal_divisors, "discount")
    label = f"alpha-DCG{_at(depth)}"
    steps = [
        _subtopic_step(ranked, ideal, metric),
        f"a result gains, for each subtopic it is relevant to, (1 - {num(alpha)})^c, where c is "
        "the number of results above it already relevant to that subtopic; discount = "
        "log2(rank + 1)",
        f"{label} = " + _sum_text(covered.score[top], divisors[top]) + f" = {approx(dcg)}",
        "ideal ordering (ndeval's greedy: at each rank the judged document that gains most, "
        f"equal gains to the larger doc id): {order}",
        f"ideal {label} = "
        + _sum_text(ideal.gains[0, :width], ideal_divisors)
        + f" = {approx(best)}",
    ]
    if best == 0:
        steps.append(f"no subtopic has a relevant judged document: {metric} = 0")
    else:
        steps.append(f"{metric} = {approx(dcg)} / {approx(best)} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={
            "subtopics": _cells(ranked, covered, alpha),
            "gain": covered.score,
            "discount": divisors,
            "contribution": covered.score / divisors,
        },
        contributes=covered.score > 0,
        limit=None if depth == WHOLE else depth,
        ideal=table,
    )


def _err_steps(ranked: Ranked, metric: Metric, covered: _Covered, depth: int) -> list[str]:
    top = ranked.positions < depth
    total = float(_err_sum(ranked, metric)[0])
    return [
        "a result gains, for each subtopic it is relevant to, 0.5^c, where c is the number of "
        "results above it already relevant to that subtopic; it adds gain / rank",
        f"sum{_at(depth)} = "
        + _sum_text(covered.score[top], (ranked.positions[top] + 1))
        + f" = {approx(total)}",
    ]


def explain_err_ia(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), ERR_ALPHA, depth)
    ideal = _ideal(ranked, metric.rel(ranked), ERR_ALPHA, 0)
    n = int(ideal.subtopics[0])
    steps = [_subtopic_step(ranked, ideal, metric), *_err_steps(ranked, metric, covered, depth)]
    norm = float(_ideal_ideal(ranked, depth)[0])
    total = float(_err_sum(ranked, metric)[0])
    steps.append(
        f"normaliser (ndeval): N x sum{_at(depth)} of a ranking whose every result is relevant "
        f"to one subtopic = {n} x {approx(norm)} = {approx(n * norm)}"
    )
    if n == 0:
        steps.append(f"no subtopic has a relevant judged document: {metric} = 0")
    else:
        steps.append(f"{metric} = {approx(total)} / {approx(n * norm)} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={
            "subtopics": _cells(ranked, covered, None),
            "gain": covered.score,
            "contribution": covered.score / (ranked.positions + 1.0),
        },
        contributes=covered.score > 0,
        limit=None if depth == WHOLE else depth,
    )


def explain_nerr_ia(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), ERR_ALPHA, depth)
    ideal = _ideal(ranked, metric.rel(ranked), ERR_ALPHA, depth)
    width = ideal.gains[:, :depth].shape[1]
    ranks = np.arange(1.0, width + 1.0)
    table, order = _ideal_rows(ranked, ideal, width, ranks, "divisor")
    best = float(_row_sums(ideal.gains[:1, :width] / ranks)[0])
    total = float(_err_sum(ranked, metric)[0])
    steps = [_subtopic_step(ranked, ideal, metric), *_err_steps(ranked, metric, covered, depth)]
    steps.append(
        "ideal ordering (ndeval's greedy: at each rank the judged document that gains most, "
        f"equal gains to the larger doc id): {order}"
    )
    steps.append(
        f"ideal sum{_at(depth)} = "
        + _sum_text(ideal.gains[0, :width], ranks)
        + f" = {approx(best)}"
    )
    if best == 0:
        steps.append(f"no subtopic has a relevant judged document: {metric} = 0")
    else:
        steps.append(f"{metric} = {approx(total)} / {approx(best)} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={
            "subtopics": _cells(ranked, covered, None),
            "gain": covered.score,
            "contribution": covered.score / (ranked.positions + 1.0),
        },
        contributes=covered.score > 0,
        limit=None if depth == WHOLE else depth,
        ideal=table,
    )


def explain_st_recall(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), ERR_ALPHA, depth)
    ideal = _ideal(ranked, metric.rel(ranked), ERR_ALPHA, 0)
    n = int(ideal.subtopics[0])
    first = (covered.pair_seen == 0) & (ranked.positions[covered.pair_entry] < depth)
    found = _names(ranked, covered.pair_code[first])
    steps = [
        _subtopic_step(ranked, ideal, metric),
        "subtopics covered by a relevant result"
        + ("" if depth == WHOLE else f" in the top {depth}")
        + ": "
        + (", ".join(found[:20]) + (", ..." if len(found) > 20 else "") if found else "none"),
    ]
    if n == 0:
        steps.append(f"no subtopic has a relevant judged document: {metric} = 0")
    else:
        steps.append(f"{metric} = {len(found)} / {n} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={"subtopics": _cells(ranked, covered, None), "new": covered.new},
        contributes=covered.new > 0,
        limit=None if depth == WHOLE else depth,
    )


_SUBTOPIC_EDGES = (
    "Relevance is binary per subtopic, as in ndeval: a (document, subtopic) line counts when its "
    "grade is at least rel (1 by default); higher grades count the same, and a negative grade "
    "is never relevant.",
    "A subtopic counts only if some judged document is relevant to it; a query without one "
    "scores 0. Ordinary qrels (second column 0 everywhere) give every query one subtopic: the "
    "value is then not a diversity number, and evaluate says so in a note.",
    "Unjudged documents are relevant to no subtopic; ties in scores are broken as for every "
    "metric (--ties) before the ranks are read.",
)

ALPHA_NDCG = MetricSpec(
    name="alpha_nDCG",
    description="alpha-nDCG (Clarke et al.): each result gains, for every subtopic it is "
    "relevant to, (1 - alpha)^c where c is the number of results above it already relevant "
    "to that subtopic (novelty), discounted by log2(rank + 1) and normalised by the same sum "
    "over ndeval's greedy ideal ordering. Needs subtopic qrels (the TREC qrels' second column "
    "is the subtopic). Matches ndeval (ir_measures' alpha_nDCG).",
    formula="alpha-nDCG@k = alpha-DCG@k / ideal alpha-DCG@k;  alpha-DCG@k = sum_{i<=k} "
    "sum_s rel(i,s) (1 - alpha)^{c(i,s)} / log2(i + 1)",
    kernel=alpha_ndcg,
    cutoff="required",
    high=None,
    params=(ALPHA, REL),
    aliases=("alpha-nDCG", "α-nDCG", "α_nDCG", "anDCG", "alphanDCG"),
    reference="Clarke et al., SIGIR 2008; ndeval alpha-nDCG@k (TREC Web track)",
    uses=("grade", "subtopics", "gain", "discount", "contribution"),
    explain=explain_alpha_ndcg,
    edge_cases=(
        *_SUBTOPIC_EDGES,
        "The ideal ordering is ndeval's greedy approximation (finding the best one is "
        "NP-hard): at each rank the judged document that gains most given the ranks above, "
        "equal gains to the larger doc id. It is not always the best ordering, so a run can "
        "score above 1 on rare subtopic qrels (no upper bound is declared).",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 1, "d3": 1},
        ranking=("d1", "d2", "d3"),
        metric="alpha_nDCG@3",
        value="1",
        working="With ordinary qrels (one subtopic): d1 gains 1, d2 gains 0.5 (the subtopic "
        "is covered once above it), d3 0.25; alpha-DCG@3 = 1/1 + 0.5/1.585 + 0.25/2 = 1.44, "
        "the ideal ordering has the same gains, so alpha_nDCG@3 = 1.",
    ),
)

ERR_IA = MetricSpec(
    name="ERR_IA",
    description="Intent-aware expected reciprocal rank as ndeval computes it: each result "
    "gains, for every subtopic it is relevant to, 0.5^c (c: results above it relevant to that "
    "subtopic) divided by its rank, summed over the top k and divided by N times the same sum "
    "for a ranking whose every result is relevant to one subtopic (ndeval's collection-"
    "independent normalisation; N: the query's subtopics). Matches ir_measures' ERR_IA.",
    formula="ERR-IA@k = sum_{i<=k} sum_s rel(i,s) 0.5^{c(i,s)} / i  /  (N sum_{i<=k} 0.5^{i-1} / i)",
    kernel=err_ia,
    cutoff="required",
    params=(REL,),
    aliases=("ERR-IA",),
    reference="Chapelle et al., CIKM 2009; ndeval ERR-IA@k",
    uses=("grade", "subtopics", "gain", "contribution"),
    explain=explain_err_ia,
    edge_cases=(
        *_SUBTOPIC_EDGES,
        "ndeval leaves ERR-IA@1 undivided (its normalisation starts at rank 2), so its ERR-IA@1 "
        "is the first result's gain, up to N; rankmeter divides at every k, so ERR-IA@1 is in "
        "[0, 1] and equals ndeval's divided by N.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0},
        ranking=("d2", "d1"),
        metric="ERR_IA@2",
        value="0.4",
        working="One subtopic (ordinary qrels): d2 at rank 1 is not relevant, d1 at rank 2 "
        "gains 1/2; the normaliser is 1 x (1/1 + 0.5/2) = 1.25, so ERR_IA@2 = 0.5 / 1.25 = 0.4.",
    ),
)

NERR_IA = MetricSpec(
    name="nERR_IA",
    description="ERR-IA normalised by the ideal ordering (ndeval's nERR-IA): the ERR-IA sum of "
    "the run over the same sum of ndeval's greedy ideal ordering (alpha = 0.5).",
    formula="nERR-IA@k = sum_{i<=k} sum_s rel(i,s) 0.5^{c(i,s)} / i  /  (same over the ideal)",
    kernel=nerr_ia,
    cutoff="required",
    high=None,
    params=(REL,),
    aliases=("nERR-IA",),
    reference="Chapelle et al., CIKM 2009; ndeval nERR-IA@k",
    uses=("grade", "subtopics", "gain", "contribution"),
    explain=explain_nerr_ia,
    edge_cases=(
        *_SUBTOPIC_EDGES,
        "The ideal ordering is ndeval's greedy one (see alpha_nDCG).",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0},
        ranking=("d2", "d1"),
        metric="nERR_IA@2",
        value="0.5",
        working="One subtopic: the run's sum is 1/2 (d1 at rank 2); the ideal puts d1 first, "
        "sum 1/1; nERR_IA@2 = 0.5 / 1 = 0.5.",
    ),
)

ST_RECALL = MetricSpec(
    name="StRecall",
    description="Subtopic recall (S-recall): the share of the query's subtopics (those with a "
    "relevant judged document) covered by a relevant result in the top k. Matches ndeval's "
    "strec (ir_measures' StRecall).",
    formula="S-recall@k = |subtopics covered in the top k| / N",
    kernel=st_recall,
    cutoff="required",
    params=(REL,),
    aliases=("S-recall", "S_recall", "subtopic_recall", "strec"),
    reference="Zhai et al., SIGIR 2003; ndeval strec@k",
    uses=("grade", "subtopics", "new"),
    explain=explain_st_recall,
    edge_cases=_SUBTOPIC_EDGES,
    example=WorkedExample(
        judgments={"d1": 1, "d2": 1},
        ranking=("d9", "d2"),
        metric="StRecall@2",
        value="1",
        working="One subtopic (ordinary qrels), covered by d2 at rank 2: 1 of 1 subtopic, "
        "StRecall@2 = 1.",
    ),
)

SPECS = (ALPHA_NDCG, ERR_IA, NERR_IA, ST_RECALL)


def reads_subtopics(metrics: Any) -> bool:
    """Whether any of ``metrics`` (names or Metric objects, one or many; None: the defaults)
    is a diversity metric, so the qrels are to be read with their subtopics (see
    :func:`rankmeter.io.read_qrels`). Names that do not parse are left to the caller, which
    refuses them where it parses them; an iterator is left unread (it can be read once only,
    and its reader reads it), as ordinary qrels.

    >>> reads_subtopics(["nDCG@10", "alpha-nDCG@20"]), reads_subtopics("P@10")
    (True, False)
    """
    from collections.abc import Iterator

    from rankmeter.errors import MetricError
    from rankmeter.metrics._parse import parse_metrics

    if metrics is None or isinstance(metrics, Iterator):
        return False
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    try:
        parsed = parse_metrics(list(metrics))
    except (MetricError, TypeError):
        return False
    return any(m.spec in SPECS for m in parsed)


def subtopic_notes(qrels: Any, metrics: Any) -> tuple[str, ...]:
    """A note where diversity metrics are read on qrels whose every query has one subtopic
    (ordinary qrels: their second column is 0 everywhere): the numbers are then no diversity
    numbers. ``qrels``: a :class:`~rankmeter.data.Qrels`."""
    from rankmeter.data.csr import row_groups
    from rankmeter.metrics._parse import parse_metrics

    if not reads_subtopics(metrics):
        return ()
    sub = qrels.subtopics
    pair_query = np.repeat(row_groups(qrels.offsets), np.diff(sub.offsets))
    pairs = np.unique(pair_query * max(len(sub.vocabulary), 1) + sub.codes)
    if len(pairs) > len(np.unique(pairs // max(len(sub.vocabulary), 1))):
        return ()
    listed = ", ".join(
        m.label
        for m in parse_metrics([metrics] if isinstance(metrics, (str, Metric)) else list(metrics))
        if m.spec in SPECS
    )
    return (
        f"{listed} read each query's subtopics (the second column of TREC qrels), but every "
        "query of these qrels has one subtopic (ordinary qrels: the column is the same on every "
        "line), so they measure no diversity here; give diversity qrels "
        "(qid subtopic docid grade) for diversity numbers",
    )
