"""The sampled-judgment estimates against every sample a stratified design can draw.

A design is a few strata of pooled documents; from a stratum of N documents n are drawn
uniformly without replacement (each of the C(N, n) subsets equally likely), independently
across strata, as ``rankmeter pool --max-per-query`` draws them: each document's inclusion
probability is n / N. Enumerating every sample gives each estimate's exact expectation:

- stat_P@k, R^ (the estimated number of relevant documents) and DCG^@k are Horvitz-Thompson
  sums, so their expectation is the full-judgment value exactly (checked to 1e-12);
- statAP is a ratio of estimates whose numerator weighs the documents above a relevant one by
  their first-order probabilities (see rankmeter.metrics.statap): neither part is exactly
  unbiased, so its exact bias is computed here and held small on these designs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest

import rankmeter
from rankmeter.io import sampled_qrels
from rankmeter.metrics import join, parse_metric
from rankmeter.metrics.statap import estimated_relevant, stat_dcg_at

from ._helpers import ranking


@dataclass(frozen=True)
class Design:
    """One query: its ranking, the true grade of every ranked document (0: not relevant), the
    strata (documents, how many are drawn) and the judgments made in full outside the pool."""

    name: str
    ranked: tuple[str, ...]
    grades: dict[str, int]
    strata: tuple[tuple[tuple[str, ...], int], ...]
    outside: dict[str, int]


DESIGNS = [
    Design(
        "two-strata",
        ranked=("a", "b", "c", "d", "e", "f", "g", "h"),
        grades={"a": 2, "b": 0, "c": 1, "d": 1, "e": 0, "f": 3, "g": 0, "h": 1},
        strata=((("a", "b", "c"), 3), (("d", "e", "f", "g", "h"), 2)),
        outside={},
    ),
    Design(
        "three-strata",
        ranked=("a", "b", "c", "d", "e", "f", "g", "h", "i"),
        grades={"a": 1, "b": 1, "c": 0, "d": 2, "e": 0, "f": 1, "g": 0, "h": 0, "i": 2},
        strata=((("a", "b"), 2), (("c", "d", "e", "f"), 2), (("g", "h", "i"), 1)),
        outside={"z": 1},  # judged in full: relevant, never retrieved
    ),
    Design(
        "every-stratum-sampled",
        ranked=("a", "b", "c", "d", "e", "f", "g"),
        grades={"a": 1, "b": 0, "c": 1, "d": 1, "e": 0, "f": 0, "g": 1},
        strata=((("a", "b", "c"), 2), (("d", "e", "f", "g"), 1)),
        outside={},
    ),
]


def samples(design: Design) -> list[tuple[float, dict[str, int], dict[tuple[str, str], float]]]:
    """Every sample: its probability, its judgments and their inclusion probabilities."""
    per_stratum = [list(itertools.combinations(docs, n)) for docs, n in design.strata]
    out = []
    for chosen in itertools.product(*per_stratum):
        weight = 1.0
        judgments = dict(design.outside)
        inclusion: dict[tuple[str, str], float] = {}
        for (docs, n), subset in zip(design.strata, chosen, strict=True):
            weight /= math.comb(len(docs), n)
            for doc in subset:
                judgments[doc] = design.grades[doc]
                inclusion[("q", doc)] = n / len(docs)
        out.append((weight, judgments, inclusion))
    assert math.isclose(sum(w for w, _, _ in out), 1.0)
    return out


def full_judgments(design: Design) -> dict[str, int]:
    return {**design.grades, **design.outside}


def estimates(design: Design, judgments: dict[str, int], inclusion: dict) -> dict[str, float]:
    """stat_P@k, statAP, R^ and DCG^@k of one sample."""
    qrels = sampled_qrels(rankmeter.as_qrels({"q": judgments}), inclusion)
    run = {"q": ranking(*design.ranked)}
    values = rankmeter.evaluate(qrels, run, ["stat_P@3", "stat_P@6", "statAP"]).metrics
    ranked = join(qrels, rankmeter.as_run(run))
    dcg = stat_dcg_at(ranked, parse_metric("stat_nDCG"), [3, 6])[0]
    r_hat = float(estimated_relevant(ranked, 1.0)[0])
    return {
        "stat_P@3": values["stat_P@3"],
        "stat_P@6": values["stat_P@6"],
        "statAP": values["statAP"],
        "R": r_hat,
        "numerator": values["statAP"] * r_hat,
        "DCG@3": float(dcg[0]),
        "DCG@6": float(dcg[1]),
    }


def truth(design: Design) -> dict[str, float]:
    judged = full_judgments(design)
    run = {"q": ranking(*design.ranked)}
    values = rankmeter.evaluate(
        {"q": judged}, run, ["P@3", "P@6", "AP", "NumRel", "DCG@3", "DCG@6"]
    )
    m = values.metrics
    return {
        "stat_P@3": m["P@3"],
        "stat_P@6": m["P@6"],
        "statAP": m["AP"],
        "R": m["NumRel"],
        "numerator": m["AP"] * m["NumRel"],
        "DCG@3": m["DCG@3"],
        "DCG@6": m["DCG@6"],
    }


def expectation(design: Design) -> dict[str, float]:
    total: dict[str, float] = {}
    for weight, judgments, inclusion in samples(design):
        for key, value in estimates(design, judgments, inclusion).items():
            total[key] = total.get(key, 0.0) + weight * value
    return total


@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_horvitz_thompson_sums_are_exactly_unbiased(design: Design) -> None:
    expected, true = expectation(design), truth(design)
    for key in ("stat_P@3", "stat_P@6", "R", "DCG@3", "DCG@6"):
        assert expected[key] == pytest.approx(true[key], abs=1e-12), key


#: The exact bias of statAP (its expectation minus AP) on each design, as enumerated: the
#: sign and the size are pinned so that a change to the estimator is seen.
STATAP_BIAS = {"two-strata": -0.0309, "three-strata": -0.0110, "every-stratum-sampled": -0.0521}


@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_statap_has_a_small_exact_bias(design: Design) -> None:
    expected, true = expectation(design), truth(design)
    bias = expected["statAP"] - true["statAP"]
    assert bias == pytest.approx(STATAP_BIAS[design.name], abs=5e-5)
    assert abs(bias) < 0.1 * true["statAP"]


@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_the_numerators_expectation_is_what_first_order_weights_give(design: Design) -> None:
    """E[numerator] = sum over relevant d of (1 + sum over relevant d' above d of
    pi_{dd'} / (pi_d pi_d')) / rank(d): the factor is 1 across strata (independent draws) and
    (n - 1) N / (n (N - 1)) within one, where rankmeter weighs d' by 1/pi_d' rather than by
    the second-order 1 / pi_{d'|d}: the whole of statAP's numerator bias."""
    stratum = {doc: (len(docs), n) for docs, n in design.strata for doc in docs}
    relevant = [d for d in design.ranked if design.grades.get(d, 0) >= 1]
    expected = 0.0
    for d in relevant:
        rank = design.ranked.index(d) + 1
        above = 0.0
        for other in relevant[: relevant.index(d)]:
            same = stratum[other] == stratum[d] and any(
                d in docs and other in docs for docs, _ in design.strata
            )
            big, n = stratum[d]
            above += (n - 1) * big / (n * (big - 1)) if same and n < big else 1.0
        expected += (1 + above) / rank
    assert expectation(design)["numerator"] == pytest.approx(expected, abs=1e-12)


def test_a_stratum_judged_whole_is_no_sample() -> None:
    """Every stratum drawn whole (n = N): one sample, and each estimate is its twin."""
    design = DESIGNS[0]
    whole = Design(
        "whole", design.ranked, design.grades, tuple((d, len(d)) for d, _ in design.strata), {}
    )
    ((weight, judgments, inclusion),) = samples(whole)
    got, true = estimates(whole, judgments, inclusion), truth(whole)
    assert weight == 1.0 and got == true


def test_the_library_sampler_draws_what_the_enumeration_assumes() -> None:
    """rankmeter's own stratified sample of a pool gives each item n / N, N its stratum's size."""
    from rankmeter.judgments import pool

    run = {"q": {f"d{i:02d}": 100.0 - i for i in range(30)}}  # best ranks 1..30
    sample = pool({"bm25": run}, depth=30, max_per_query=12, seed=5)
    by_rank = {item.best_rank: item.inclusion_probability for item in sample}
    # strata 1-5, 6-10 whole; 11-20 and 21-30 share what is left: 12 - 10 = 2, one reserved
    # for the last stratum: 1 of 10 and 1 of 10.
    assert {by_rank[r] for r in by_rank if r <= 10} == {1.0}
    assert {by_rank[r] for r in by_rank if r > 10} == {0.1}
    assert len(sample) == 12
    assert np.isclose(sum(1 / p for p in by_rank.values()), 30)
