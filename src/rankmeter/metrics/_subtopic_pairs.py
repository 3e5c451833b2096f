"""The two sides of the diversity metrics (rankmeter.metrics.diversity) over (item, subtopic)
pairs: the run's (each result's gain and the subtopics it covers first) and the judgments'
(each query's subtopics, and ndeval's greedy ideal ordering).

Each side runs the compiled loops of rankmeter.data.key_loops where the C extension is built,
and the NumPy code here where it is not; the two give the same numbers bit for bit
(tests/metrics/test_diversity_native.py). In NumPy, the number of earlier results relevant to
the same subtopic is a running count within (query, subtopic) segments of the pairs sorted
stably by subtopic; the greedy ideal is sequential within a query, so each greedy step is taken
for every query at once, k steps for a cutoff of k. The compiled loops take a query at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked


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
class Covered:
    """The retrieved side: per entry (ranked within ``depth``), its gain and the subtopics it
    covers for the first time; and the pairs, for explanations."""

    score: FloatArray  # per entry: sum over its relevant subtopics of (1 - alpha)^c
    new: FloatArray  # per entry: how many of its relevant subtopics are covered first there
    pair_entry: IntArray
    pair_code: IntArray
    pair_seen: IntArray  # c: earlier results relevant to the same subtopic


def covered(ranked: Ranked, rel: float, alpha: float, depth: int) -> Covered:
    key = ("diversity-run", rel, alpha, depth)
    if key in ranked._cache:
        return ranked._cache[key]  # type: ignore[no-any-return]
    n = len(ranked.positions)
    # (1 - alpha)^c for every c a query's results can reach, looked up by both paths alike
    powers = np.power(1.0 - alpha, np.arange(max(_most(ranked.offsets), 1), dtype=np.float64))
    compiled = _covered_native(ranked, rel, depth, powers)
    if compiled is not None:
        ranked._cache[key] = compiled
        return compiled
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
    score = np.bincount(entry, weights=powers[pair_seen], minlength=n).astype(np.float64)
    new = np.bincount(entry, weights=(pair_seen == 0).astype(np.float64), minlength=n).astype(
        np.float64
    )
    made = Covered(score, new, entry, code, pair_seen)
    ranked._cache[key] = made
    return made


def _most(offsets: IntArray) -> int:
    """The most items of a segment."""
    return int(np.diff(offsets).max(initial=0))


def _pair_table(ranked: Ranked, grades: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    """What the compiled loops read of the subtopic judgments: each row's pairs (offsets into
    the codes and their grades), the qrels' table, or one pair (code 0) per item, row = item,
    where ``grades`` were given by hand."""
    if ranked.qrels is None:
        n = len(grades)
        return (
            np.arange(n + 1, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
            np.ascontiguousarray(grades, dtype=np.float64),
        )
    sub = ranked.qrels.subtopics
    return sub.offsets, sub.codes, sub.grades


def _covered_native(ranked: Ranked, rel: float, depth: int, powers: FloatArray) -> Covered | None:
    """covered's running counts by the compiled loop (key_repeats): the same numbers; None
    where the extension is not built."""
    from rankmeter.data.key_loops import key_repeats

    if ranked.qrels is None:
        rows = np.where(ranked.judged, np.arange(len(ranked.positions), dtype=np.int64), -1)
    elif ranked.judged.all():  # (a compact join: every entry judged, with its row)
        rows = ranked.entry_rows
    else:
        rows = np.where(ranked.judged, ranked.entry_rows, -1)
    table = _pair_table(ranked, ranked.grades)
    done = key_repeats(
        ranked.offsets, rows, ranked.positions, depth, table, rel, _n_codes(ranked), powers
    )
    return None if done is None else Covered(*done)


def _place_in_segment(sorted_keys: IntArray) -> IntArray:
    """0, 1, 2, ... within each run of equal keys."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    lengths = np.diff(np.append(starts, n))
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


@dataclass(frozen=True)
class Ideal:
    """The judged side: each query's subtopics with a relevant judgment (N), and ndeval's greedy
    ideal ordering to ``depth``: the gain at each rank and the judgment placed there."""

    subtopics: IntArray  # N per query
    gains: FloatArray  # (n_queries, depth)
    picked: IntArray  # (n_queries, depth): index into judgment_grades, -1 where none gains
    depth: int


def ideal(ranked: Ranked, rel: float, alpha: float, depth: int) -> Ideal:
    key = ("diversity-ideal", rel, alpha)
    cached = ranked._cache.get(key)
    if cached is not None and cached.depth >= depth:
        return cached  # type: ignore[no-any-return]
    nq = ranked.n_queries
    judgments = np.arange(len(ranked.judgment_grades), dtype=np.int64)
    compiled = _ideal_native(ranked, rel, alpha, depth, judgments)
    if compiled is not None:
        ranked._cache[key] = compiled
        return compiled
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
    made = Ideal(subtopics, gains, picked, depth)
    ranked._cache[key] = made
    return made


def _ideal_native(
    ranked: Ranked, rel: float, alpha: float, depth: int, judgments: IntArray
) -> Ideal | None:
    """ideal by the compiled loop (greedy_ideal): the same subtopic counts, gains and
    judgments placed, step by step the same arithmetic as _greedy's; None where the extension
    is not built."""
    from rankmeter.data.key_loops import greedy_ideal

    rows = judgments if ranked.qrels is None else ranked.judgment_rows
    width = min(depth, _most(ranked.judgment_offsets))
    table = _pair_table(ranked, ranked.judgment_grades)
    order = _doc_order(ranked, judgments) if width else judgments  # (read where width > 0)
    done = greedy_ideal(
        ranked.judgment_offsets, rows, order, table, rel, _n_codes(ranked), 1.0 - alpha, width
    )
    if done is None:
        return None
    gains, picked, subtopics, most = done
    if most < width:  # as wide as the most candidates of a query, as ideal's
        gains, picked = gains[:, :most].copy(), picked[:, :most].copy()
    return Ideal(subtopics, gains, picked, depth)


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
