"""Diversity metrics on subtopic qrels, as ndeval (TREC Web track) computes them: alpha-nDCG,
ERR-IA, nERR-IA and subtopic recall.

A diversity qrels file judges documents per subtopic (``qid subtopic docid grade``; see
:meth:`rankmeter.data.Qrels.from_subtopic_columns`). As in ndeval, relevance is binary per
subtopic (a grade >= rel), a subtopic counts only if some judged document is relevant to it (the
query's *N* subtopics), and a result relevant to subtopic *s* gains ``(1 - alpha)^c`` for it,
where *c* is the number of results above it already relevant to *s*. Ordinary qrels hold one
subtopic per query (every judgment is ``"0"``'s).

Kernels are NumPy over the (result, subtopic) pairs: the number of earlier results relevant to
the same subtopic is a running count within (query, subtopic) segments of the pairs sorted
stably by subtopic. The ideal ordering for alpha-nDCG and nERR-IA is ndeval's greedy one (at
each rank, the judged document with the largest gain given the ranks above; equal gains to the
larger doc id, compared bytewise as ndeval's strcmp): it is sequential within a query, so each
greedy step is taken for every query at once, k steps for a cutoff of k.
"""

from __future__ import annotations

from dataclasses import dataclass
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

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
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


# -- the (item, subtopic) pairs ----------------------------------------------------------------


def _subtopic_pairs(
    ranked: Ranked, rows: IntArray, grades: FloatArray, items: IntArray, rel: float
) -> tuple[IntArray, IntArray]:
    """The relevant (item, subtopic code) pairs of judgment ``rows`` (one per item, ``items``
    their indices; ``grades`` their grades where the ranking was given by hand): pairs of one
    item in subtopic order, items in the order given."""
    from rankmeter.data.csr import gather_ranges

    qrels = ranked.qrels
    if qrels is None:  # grades given by hand: one subtopic
        keep = (grades >= rel) & (grades >= 0)
        return items[keep], np.zeros(int(keep.sum()), dtype=np.int64)
    sub = qrels.subtopics
    starts = sub.offsets[rows]
    lengths = sub.offsets[rows + 1] - starts
    at = gather_ranges(starts, lengths)
    owner = np.repeat(items, lengths)
    g = sub.grades[at]
    keep = (g >= rel) & (g >= 0)
    return owner[keep], sub.codes[at][keep]


def _n_codes(ranked: Ranked) -> int:
    return 1 if ranked.qrels is None else max(len(ranked.qrels.subtopics.vocabulary), 1)


@dataclass(frozen=True)
class _Covered:
    """The retrieved side: per entry (ranked within ``depth``), its gain and the subtopics it
    covers for the first time; and the pairs, for explanations."""

    score: FloatArray  # per entry: sum over its relevant subtopics of (1 - alpha)^c
    new: FloatArray  # per entry: how many of its relevant subtopics are covered first there
    pair_entry: IntArray
    pair_code: IntArray
    pair_seen: IntArray  # c: earlier results relevant to the same subtopic


def _covered(ranked: Ranked, rel: float, alpha: float, depth: int) -> _Covered:
    key = ("diversity-run", rel, alpha, depth)
    if key in ranked._cache:
        return ranked._cache[key]  # type: ignore[no-any-return]
    chosen = np.flatnonzero(ranked.judged & (ranked.positions < depth) & (ranked.entry_rows >= 0))
    if ranked.qrels is None:
        chosen = np.flatnonzero(ranked.judged & (ranked.positions < depth))
    entry, code = _subtopic_pairs(
        ranked, ranked.entry_rows[chosen], ranked.grades[chosen], chosen, rel
    )
    # Pairs are in rank order within a query: a stable sort by (query, subtopic) keeps it, so a
    # pair's place in its segment is the number of earlier results relevant to the subtopic.
    segment = ranked.groups[entry] * _n_codes(ranked) + code
    order = np.argsort(segment, kind="stable")
    seen = _place_in_segment(segment[order])
    pair_seen = np.empty(len(order), dtype=np.int64)
    pair_seen[order] = seen
    n = len(ranked.positions)
    gains = np.power(1.0 - alpha, pair_seen.astype(np.float64))
    score = np.bincount(entry, weights=gains, minlength=n).astype(np.float64)
    new = np.bincount(entry, weights=(pair_seen == 0).astype(np.float64), minlength=n).astype(
        np.float64
    )
    covered = _Covered(score, new, entry, code, pair_seen)
    ranked._cache[key] = covered
    return covered


def _place_in_segment(sorted_keys: IntArray) -> IntArray:
    """0, 1, 2, ... within each run of equal keys."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    lengths = np.diff(np.append(starts, n))
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


@dataclass(frozen=True)
class _Ideal:
    """The judged side: each query's subtopics with a relevant judgment (N), and ndeval's greedy
    ideal ordering to ``depth``: the gain at each rank and the judgment placed there."""

    subtopics: IntArray  # N per query
    gains: FloatArray  # (n_queries, depth)
    picked: IntArray  # (n_queries, depth): index into judgment_grades, -1 where none gains
    depth: int


def _ideal(ranked: Ranked, rel: float, alpha: float, depth: int) -> _Ideal:
    key = ("diversity-ideal", rel, alpha)
    cached = ranked._cache.get(key)
    if cached is not None and cached.depth >= depth:
        return cached  # type: ignore[no-any-return]
    nq = ranked.n_queries
    judgments = np.arange(len(ranked.judgment_grades), dtype=np.int64)
    item, code = _subtopic_pairs(
        ranked, ranked.judgment_rows, ranked.judgment_grades, judgments, rel
    )
    # The (query, subtopic) keys, numbered in sorted order: one stable sort gives the numbers
    # and the pairs by key (the greedy's index); pairs come by judgment, so the candidates
    # (judgments with a relevant subtopic) need none.
    segment = ranked.judgment_groups[item] * _n_codes(ranked) + code
    by_key = np.argsort(segment, kind="stable")
    ordered = segment[by_key]
    new_key = _first_of_runs(ordered)
    key_of_pair = np.empty(len(segment), dtype=np.int64)
    key_of_pair[by_key] = np.cumsum(new_key, dtype=np.int64) - 1
    keys = ordered[new_key]
    subtopics = np.bincount(keys // _n_codes(ranked), minlength=nq).astype(np.int64)
    new_item = _first_of_runs(item)
    candidates = item[new_item]
    cand_of_pair = np.cumsum(new_item, dtype=np.int64) - 1
    most = int(np.bincount(ranked.judgment_groups[candidates]).max()) if len(candidates) else 0
    gains = np.zeros((nq, min(depth, most)), dtype=np.float64)
    picked = np.full((nq, min(depth, most)), -1, dtype=np.int64)
    if len(candidates) and depth:
        pairs = (cand_of_pair, key_of_pair, by_key, len(keys))
        _greedy(ranked, alpha, candidates, pairs, gains, picked)
    ideal = _Ideal(subtopics, gains, picked, depth)
    ranked._cache[key] = ideal
    return ideal


def _greedy(
    ranked: Ranked,
    alpha: float,
    candidates: IntArray,
    pairs: tuple[IntArray, IntArray, IntArray, int],
    gains: FloatArray,
    picked: IntArray,
) -> None:
    """ndeval's greedy ideal ordering, one step for every query at once, into ``gains`` and
    ``picked`` (one column per rank).

    Each candidate judgment's gain is kept up to date instead of summed again at each step:
    placing a judgment multiplies the weight of each of its (query, subtopic) keys by
    (1 - alpha), which takes weight x alpha from every candidate sharing the key (found through
    the pairs sorted by key). A step is then a few passes over the candidates (the best gain
    of each query, the largest doc id among those that have it) and work on the keys of the
    judgments placed. The gain recorded for a placed judgment is its weights summed afresh, in
    subtopic order as ndeval sums them. (With alpha = 0.5, 0.25, 0 or 1 every gain is exact, so
    equal gains are equal as ndeval finds them; with other alphas, two mathematically equal
    gains may differ in their last bit here or there, and a tie be broken otherwise.)
    """
    from rankmeter.data.csr import gather_ranges, offsets_from_sorted

    cand_of_pair, key_of_pair, by_key, n_keys = pairs
    n_cand = len(candidates)
    query = ranked.judgment_groups[candidates]
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
    local = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n_cand)))
    owner = query[starts]
    # each candidate's place among its query's by doc id (distinct within a query), and the
    # candidate at each place: a query's winner is found from the place alone
    by_doc = np.lexsort((_doc_order(ranked, candidates), local))
    place = np.empty(n_cand, dtype=np.int64)
    place[by_doc] = np.arange(n_cand, dtype=np.int64) - starts[local]
    # pairs by candidate (they come so) and by key
    cand_offsets = offsets_from_sorted(cand_of_pair, n_cand)
    key_offsets = offsets_from_sorted(key_of_pair[by_key], n_keys)
    cand_by_key = cand_of_pair[by_key]
    key_lengths = np.diff(key_offsets)
    weight = np.ones(n_keys, dtype=np.float64)
    score = np.bincount(cand_of_pair, minlength=n_cand).astype(np.float64)
    for rank in range(gains.shape[1]):
        best = np.maximum.reduceat(score, starts)
        tied = np.where(score == best[local], place, -1)
        top = np.maximum.reduceat(tied, starts)
        live = best > 0
        if not live.any():
            break
        winners = by_doc[starts[live] + top[live]]
        lengths = cand_offsets[winners + 1] - cand_offsets[winners]
        won_keys = key_of_pair[gather_ranges(cand_offsets[winners], lengths)]
        won = np.repeat(np.arange(len(winners)), lengths)
        q = owner[live]
        gains[q, rank] = np.bincount(won, weights=weight[won_keys], minlength=len(winners))
        picked[q, rank] = candidates[winners]
        # (the keys of different winners differ: each winner's query is its own)
        old = weight[won_keys]
        weight[won_keys] = old * (1.0 - alpha)  # (as ndeval: the weight times 1 - alpha)
        width = key_lengths[won_keys]
        sharing = cand_by_key[gather_ranges(key_offsets[won_keys], width)]
        np.subtract.at(score, sharing, np.repeat(old - weight[won_keys], width))
        score[winners] = -np.inf


def _first_of_runs(values: IntArray) -> Any:
    """Where each run of equal values begins (a bool array)."""
    first = np.ones(len(values), dtype=bool)
    first[1:] = values[1:] != values[:-1]
    return first


def _doc_order(ranked: Ranked, judgments: IntArray) -> IntArray:
    """Each judgment's place in the byte order of its doc id (ndeval breaks equal gains by
    strcmp, the larger doc id first); by judgment where the grades were given by hand (>= 0:
    the greedy step marks the other judgments -1)."""
    if ranked.qrels is None:
        return len(ranked.judgment_grades) - 1 - judgments
    order: IntArray = ranked.qrels.doc_order()[ranked.judgment_rows[judgments]]
    return order


def _discount(positions: Any) -> FloatArray:
    return 1.0 / np.log2(np.asarray(positions, dtype=np.float64) + 2.0)


# -- kernels -----------------------------------------------------------------------------------


def _run_sum(ranked: Ranked, covered: _Covered, depth: int, weights: FloatArray) -> FloatArray:
    top = np.flatnonzero((covered.score > 0) & (ranked.positions < depth))
    return ranked.total(ranked.groups[top], covered.score[top] * weights[top])


def alpha_dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    depth = _depth(ranked, metric)
    covered = _covered(ranked, metric.rel(ranked), _alpha(metric), depth)
    return _run_sum(ranked, covered, depth, _discount(ranked.positions))


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
    return _run_sum(ranked, covered, depth, 1.0 / (ranked.positions + 1.0))


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
