"""Hand-computed tables, per metric: every expected number is derived in a comment.

The main collection ``A`` (one query) is, in rank order (scores strictly descending):

    rank  doc  grade
    1     b    0       judged, not relevant
    2     a    2       relevant at rel 1 and 2
    3     e    -1      pooled but unjudged: neither relevant nor judged
    4     x    -       not in the qrels
    5     c    1       relevant at rel 1 only
    6     d    3       relevant at rel 1 and 2
    7     f    0       judged, not relevant
    -     g    1       relevant at rel 1, never retrieved

At rel 1: relevant a, c, d, g (R = 4), judged non-relevant b, f (N = 2).
At rel 2: relevant a, d (R = 2), judged non-relevant b, c, f, g (N = 4).
"""

from __future__ import annotations

from math import log, log2
from typing import Any

import pytest
from pytest import param

import rankmeter
from rankmeter.metrics import SPECS

from ._helpers import per_query, ranking

A_QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1, "f": 0, "g": 1}}
A_RUN = {"q": ranking("b", "a", "e", "x", "c", "d", "f")}

# Ideal orders (non-negative judgments by grade): linear gains 3, 2, 1, 1, 0, 0;
# exp gains 7, 3, 1, 1, 0, 0.
A_IDCG = 3 + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)
A_IDCG_EXP = 7 + 3 / log2(3) + 1 / log2(4) + 1 / log2(5)

A_CASES = [
    # --- P: relevant flags in rank order at rel 1: 0 1 0 0 1 1 0
    param("P@1", {}, 0.0, id="P@1"),
    param("P@2", {}, 1 / 2, id="P@2"),
    param("P@5", {}, 2 / 5, id="P@5"),
    # only 7 retrieved, but P@10 still divides by 10 (trec_eval P_10): 3 / 10
    param("P@10", {}, 3 / 10, id="P@10-short-list"),
    param("P", {}, 3 / 7, id="P-whole-list"),
    # rel 2: relevant flags 0 1 0 0 0 1 0
    param("P(rel=2)@5", {}, 1 / 5, id="P(rel=2)@5"),
    param("P@5", {"rel": 2}, 1 / 5, id="P@5-evaluate-rel-2"),
    param("P(rel=2)@5", {"rel": 1}, 1 / 5, id="P-param-rel-overrides-evaluate"),
    param("P(rel=3)@10", {}, 1 / 10, id="P(rel=3)@10"),
    # --- R: 4 relevant (g never retrieved)
    param("R@2", {}, 1 / 4, id="R@2"),
    param("R@5", {}, 2 / 4, id="R@5"),
    param("R", {}, 3 / 4, id="R-whole-list"),
    param("R(rel=2)@5", {}, 1 / 2, id="R(rel=2)@5"),
    param("R", {"rel": 2}, 2 / 2, id="R-evaluate-rel-2"),
    # --- nDCG / DCG: linear gains in rank order 0 2 0 0 1 3 0
    param("DCG", {}, 2 / log2(3) + 1 / log2(6) + 3 / log2(7), id="DCG"),
    param("DCG@3", {}, 2 / log2(3), id="DCG@3"),
    param("DCG@1", {}, 0.0, id="DCG@1"),
    param("DCG(gain=exp)", {}, 3 / log2(3) + 1 / log2(6) + 7 / log2(7), id="DCG(gain=exp)"),
    param("nDCG", {}, (2 / log2(3) + 1 / log2(6) + 3 / log2(7)) / A_IDCG, id="nDCG"),
    # ideal top 3: 3, 2, 1
    param("nDCG@3", {}, (2 / log2(3)) / (3 + 2 / log2(3) + 1 / 2), id="nDCG@3"),
    param(
        "nDCG(gain=exp)",
        {},
        (3 / log2(3) + 1 / log2(6) + 7 / log2(7)) / A_IDCG_EXP,
        id="nDCG(gain=exp)",
    ),
    param(
        "nDCG(gain=exp)@2",
        {},
        (3 / log2(3)) / (7 + 3 / log2(3)),
        id="nDCG(gain=exp)@2",
    ),
    # nDCG uses raw grades: the relevance level does not change it
    param("nDCG", {"rel": 2}, (2 / log2(3) + 1 / log2(6) + 3 / log2(7)) / A_IDCG, id="nDCG-rel-2"),
    # --- RR: first relevant at rank 2
    param("RR", {}, 1 / 2, id="RR"),
    param("RR@1", {}, 0.0, id="RR@1"),
    param("RR@2", {}, 1 / 2, id="RR@2"),
    # rel 3: only d (rank 6)
    param("RR(rel=3)", {}, 1 / 6, id="RR(rel=3)"),
    # --- AP: relevant at ranks 2, 5, 6 -> P@i = 1/2, 2/5, 3/6, divided by R = 4
    param("AP", {}, (1 / 2 + 2 / 5 + 3 / 6) / 4, id="AP"),
    # map_cut.5: only ranks 2 and 5 count, still divided by all 4 relevant
    param("AP@5", {}, (1 / 2 + 2 / 5) / 4, id="AP@5"),
    param("AP@1", {}, 0.0, id="AP@1"),
    # rel 2: relevant at ranks 2 and 6 -> (1/2 + 2/6) / 2
    param("AP(rel=2)", {}, (1 / 2 + 2 / 6) / 2, id="AP(rel=2)"),
    param("AP", {"rel": 2}, (1 / 2 + 2 / 6) / 2, id="AP-evaluate-rel-2"),
    # --- R-Prec: top R = 4 is b a e x -> 1 relevant
    param("R-Prec", {}, 1 / 4, id="R-Prec"),
    # rel 2: top R = 2 is b a -> 1 relevant
    param("R-Prec(rel=2)", {}, 1 / 2, id="R-Prec(rel=2)"),
    # --- Bpref at rel 1: R = 4, N = 2, min(N, R) = 2. Judged non-relevant above a: b (1);
    # above c: b (1; e and x are unjudged); above d: b (1). Each 1 - 1/2; sum 1.5 over R = 4.
    param("Bpref", {}, (3 * (1 - 1 / 2)) / 4, id="Bpref"),
    # rel 2: R = 2, N = 4, min = 2. Above a: b (1) -> 1/2; above d: b, c (2) -> 0. Sum 1/2 / 2.
    param("Bpref(rel=2)", {}, (1 - 1 / 2 + 1 - 2 / 2) / 2, id="Bpref(rel=2)"),
    # --- infAP (eps = 1e-5): a term per relevant result at 0-based rank j > 0,
    # 1/(j+1) + j/(j+1) * (judged + pooled above)/j * (rel above + eps)/(judged above + 2 eps).
    # a (j=1): b judged non-relevant above. c (j=4): b, a judged, e pooled, x unpooled.
    # d (j=5): b, a, c judged, e pooled, x unpooled. R = 4.
    param(
        "infAP",
        {},
        (
            (1 / 2 + 1 / 2 * 1 * (1e-5 / (1 + 2e-5)))
            + (1 / 5 + 4 / 5 * 3 / 4 * ((1 + 1e-5) / (2 + 2e-5)))
            + (1 / 6 + 5 / 6 * 4 / 5 * ((2 + 1e-5) / (3 + 2e-5)))
        )
        / 4,
        id="infAP",
    ),
    # rel 2: a and d relevant (R = 2); c is judged non-relevant above d.
    param(
        "infAP(rel=2)",
        {},
        (
            (1 / 2 + 1 / 2 * 1 * (1e-5 / (1 + 2e-5)))
            + (1 / 6 + 5 / 6 * 4 / 5 * ((1 + 1e-5) / (3 + 2e-5)))
        )
        / 2,
        id="infAP(rel=2)",
    ),
    # --- IPrec: relevant a (rank 2, P 1/2), c (rank 5, 2/5), d (rank 6, 3/6); R = 4.
    # A level asks for floor(r * 4 + 0.9) relevant results; the best precision from there down.
    param("IPrec@0", {}, 1 / 2, id="IPrec@0"),  # 0.9 -> 0: the best anywhere
    param("IPrec@0.25", {}, 1 / 2, id="IPrec@0.25"),  # 1.9 -> 1: max(1/2, 2/5, 3/6)
    param("IPrec@0.5", {}, 3 / 6, id="IPrec@0.5"),  # 2.9 -> 2: max(2/5, 3/6)
    param("IPrec@0.6", {}, 3 / 6, id="IPrec@0.6"),  # 3.3 -> 3
    param("IPrec@0.8", {}, 0.0, id="IPrec@0.8"),  # 4.1 -> 4: g is never returned
    param("iprec_at_recall_0.50", {}, 3 / 6, id="iprec_at_recall_0.50"),
    # rel 2: a (rank 2, 1/2), d (rank 6, 2/6); R = 2. 0.5 -> floor(1.9) = 1.
    param("IPrec(rel=2)@0.5", {}, 1 / 2, id="IPrec(rel=2)@0.5"),
    # levels 0..0.2 ask for <= 1 (1/2), 0.3..0.7 for 2 or 3 (1/2 each: 3/6), 0.8..1 for 4 (0)
    param("11pt_avg", {}, (3 * 1 / 2 + 5 * 3 / 6) / 11, id="11pt_avg"),
    # --- GMAP per query: log(max(AP, 0.00001)); AP = (1/2 + 2/5 + 3/6) / 4 = 0.35
    param("gm_map", {}, log(0.35), id="gm_map"),
    # rel 2: AP = (1/2 + 2/6) / 2
    param("GMAP(rel=2)", {}, log((1 / 2 + 2 / 6) / 2), id="GMAP(rel=2)"),
    # rel 4: no relevant judgment, AP 0 counts as 0.00001
    param("GMAP(rel=4)", {}, log(0.00001), id="GMAP(rel=4)"),
    # --- Success
    param("Success@1", {}, 0.0, id="Success@1"),
    param("Success@2", {}, 1.0, id="Success@2"),
    param("Success", {}, 1.0, id="Success-whole-list"),
    param("Success(rel=3)@5", {}, 0.0, id="Success(rel=3)@5"),
    param("Success(rel=3)@6", {}, 1.0, id="Success(rel=3)@6"),
    # --- Judged: b a judged, e (negative grade) and x unjudged, c d f judged
    param("Judged@1", {}, 1.0, id="Judged@1"),
    param("Judged@4", {}, 2 / 4, id="Judged@4"),
    param("Judged", {}, 5 / 7, id="Judged-whole-list"),
    # past the end of the list it divides by the 7 results shown, as ir_measures' Judged@k does:
    # 5 judged / min(10, 7). (Negative grades stay unjudged, unlike ir_measures.)
    param("Judged@10", {}, 5 / 7, id="Judged@10-short-list"),
    # --- counts
    param("NumRet", {}, 7.0, id="NumRet"),
    param("NumRel", {}, 4.0, id="NumRel"),
    param("NumRel(rel=2)", {}, 2.0, id="NumRel(rel=2)"),
    param("NumRel", {"rel": 3}, 1.0, id="NumRel-evaluate-rel-3"),
    param("NumRelRet", {}, 3.0, id="NumRelRet"),
    param("NumRelRet@2", {}, 1.0, id="NumRelRet@2"),
    param("NumRelRet(rel=2)", {}, 2.0, id="NumRelRet(rel=2)"),
    # --- ERR (max_grade 4): R = (2^g - 1)/16: a 3/16 (rank 2), c 1/16 (rank 5), d 7/16 (rank 6);
    # e (negative) and x (unjudged) never stop the user.
    param("ERR@5", {}, 3 / 16 / 2 + (13 / 16) * (1 / 16) / 5, id="ERR@5"),
    param(
        "ERR",
        {},
        3 / 16 / 2 + (13 / 16) * (1 / 16) / 5 + (13 / 16) * (15 / 16) * (7 / 16) / 6,
        id="ERR-whole-list",
    ),
    # raw grades: --rel changes nothing
    param("ERR@5", {"rel": 3}, 3 / 16 / 2 + (13 / 16) * (1 / 16) / 5, id="ERR@5-rel-3"),
    # max_grade 3: R = (2^g - 1)/8: a 3/8, c 1/8, d 7/8
    param(
        "ERR(max_grade=3)",
        {},
        3 / 8 / 2 + (5 / 8) * (1 / 8) / 5 + (5 / 8) * (7 / 8) * (7 / 8) / 6,
        id="ERR(max_grade=3)",
    ),
    # --- nERR: the ideal grades 3, 2, 1, 1 stop with 7/16, 3/16, 1/16, 1/16
    param("nERR@2", {}, (3 / 16 / 2) / (7 / 16 + (9 / 16) * (3 / 16) / 2), id="nERR@2"),
    param(
        "nERR",
        {},
        (3 / 16 / 2 + (13 / 16) * (1 / 16) / 5 + (13 / 16) * (15 / 16) * (7 / 16) / 6)
        / (
            7 / 16
            + (9 / 16) * (3 / 16) / 2
            + (9 / 16) * (13 / 16) * (1 / 16) / 3
            + (9 / 16) * (13 / 16) * (15 / 16) * (1 / 16) / 4
        ),
        id="nERR-whole-list",
    ),
    # --- RBP(p=0.5): rank i weighs 0.5 * 0.5^(i-1); relevant ranks 2, 5, 6 (rel 2: 2, 6)
    param("RBP(p=0.5)", {}, 0.5 * (0.5 + 0.5**4 + 0.5**5), id="RBP(p=0.5)"),
    param("RBP(p=0.5,rel=2)", {}, 0.5 * (0.5 + 0.5**5), id="RBP(p=0.5,rel=2)"),
    param("RBP(p=0.5)", {"rel": 2}, 0.5 * (0.5 + 0.5**5), id="RBP-evaluate-rel-2"),
    param("RBP(p=0.5)@5", {}, 0.5 * (0.5 + 0.5**4), id="RBP(p=0.5)@5"),
    param("RBP", {}, 0.2 * (0.8 + 0.8**4 + 0.8**5), id="RBP-default-p-0.8"),
    # --- RBP_resid(p=0.5): unjudged ranks 3 (e) and 4 (x), then p^7 for the ranks past 7
    param("RBP_resid(p=0.5)", {}, 0.5 * (0.5**2 + 0.5**3) + 0.5**7, id="RBP_resid(p=0.5)"),
    # at 2 every rank is judged: the ranks past the cutoff, 0.5^2
    param("RBP_resid(p=0.5)@2", {}, 0.5**2, id="RBP_resid(p=0.5)@2"),
    param("RBP_resid(p=0.5)@4", {}, 0.5 * (0.5**2 + 0.5**3) + 0.5**4, id="RBP_resid@4"),
    # --- Compat(p=0.5): ideal d a c g (c before g: retrieved first); D = max(7, 4) = 7.
    # a is in both prefixes from depth 2, c from 5 (its run rank), d from 6: overlaps at
    # depths 1..7 are 0 1 1 1 2 3 3; the ideal with itself: min(d, 4).
    param(
        "Compat(p=0.5)",
        {},
        (0.5 / 2 + 0.25 / 3 + 0.125 / 4 + 0.0625 * 2 / 5 + 0.03125 * 3 / 6 + 0.015625 * 3 / 7)
        / (1 + 0.5 + 0.25 + 0.125 + 0.0625 * 4 / 5 + 0.03125 * 4 / 6 + 0.015625 * 4 / 7),
        id="Compat(p=0.5)",
    ),
    # --- the sampled-judgment estimates, with every judgment made in full (no pool): their twins
    param("statAP", {}, (1 / 2 + 2 / 5 + 3 / 6) / 4, id="statAP"),
    param("statAP(rel=2)@5", {}, (1 / 2) / 2, id="statAP(rel=2)@5"),
    param("stat_nDCG", {}, (2 / log2(3) + 1 / log2(6) + 3 / log2(7)) / A_IDCG, id="stat_nDCG"),
    param("stat_P@5", {}, 2 / 5, id="stat_P@5"),
    param("stat_P", {}, 3 / 7, id="stat_P-whole-list"),
    # --- diversity, on ordinary qrels: one subtopic. Relevant at rel 1: a (rank 2), c (5),
    # d (6), g; each later relevant result gains half the one before: a 1, c 0.5, d 0.25.
    # The greedy ideal is four relevant documents: gains 1, 0.5, 0.25, 0.125.
    param(
        "alpha_nDCG@5",
        {},
        (1 / log2(3) + 0.5 / log2(6)) / (1 + 0.5 / log2(3) + 0.25 / 2 + 0.125 / log2(5)),
        id="alpha_nDCG@5",
    ),
    # rel 2: a (2) and d (6) relevant; the ideal gains 1, 0.5
    param(
        "alpha_nDCG(rel=2)@6",
        {},
        (1 / log2(3) + 0.5 / log2(7)) / (1 + 0.5 / log2(3)),
        id="alpha_nDCG(rel=2)@6",
    ),
    # alpha 1: only the first relevant result gains
    param("alpha_nDCG(alpha=1)@6", {}, 1 / log2(3), id="alpha_nDCG(alpha=1)@6"),
    # ERR-IA: gain / rank, over N = 1 times the sum of 0.5^(i-1) / i to k
    param(
        "ERR_IA@5",
        {},
        (1 / 2 + 0.5 / 5) / (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4 + 0.0625 / 5),
        id="ERR_IA@5",
    ),
    param(
        "nERR_IA@5",
        {},
        (1 / 2 + 0.5 / 5) / (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4),
        id="nERR_IA@5",
    ),
    param("StRecall@1", {}, 0.0, id="StRecall@1"),
    param("StRecall@2", {}, 1.0, id="StRecall@2"),
]


@pytest.mark.parametrize(("metric", "policies", "expected"), A_CASES)
def test_collection_a(metric: str, policies: dict[str, Any], expected: float) -> None:
    values = per_query(A_QRELS, A_RUN, metric, **policies)
    assert list(values) == ["q"]
    (value,) = values["q"].values()
    assert value == pytest.approx(expected, abs=1e-12)


def test_every_metric_family_has_a_row_in_the_table() -> None:
    tested = {rankmeter.parse_metric(p.values[0]).spec.name for p in A_CASES}
    assert tested == {spec.name for spec in SPECS}


# --- ties: equal scores rank by doc id descending in byte order --------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        param("d9", "d10", id="d9-before-d10"),
        param("d", "D", id="lower-before-upper"),
        param("ab", "a", id="longer-before-prefix"),
        param("é", "z", id="utf8-bytes-above-ascii"),
        param("20", "100", id="numeric-ids-compare-as-bytes"),
    ],
)
def test_ties_break_by_doc_id_descending_bytes(first: str, second: str) -> None:
    qrels = {"q": {first: 1, second: 0}}
    # Same score; the dict order is the opposite of the expected ranking.
    run = {"q": {second: 1.0, first: 1.0}}
    values = per_query(qrels, run, ["P@1", "RR", "AP"])["q"]
    # first ranks 1st: P@1 = 1, RR = 1, AP = (1/1) / 1
    assert values == {"P@1": 1.0, "RR": 1.0, "AP": 1.0}
    # The relevant document the other way round ranks 2nd: P@1 = 0, RR = 1/2, AP = (1/2) / 1
    qrels = {"q": {first: 0, second: 1}}
    values = per_query(qrels, run, ["P@1", "RR", "AP"])["q"]
    assert values == {"P@1": 0.0, "RR": 0.5, "AP": 0.5}


def test_score_beats_doc_id_and_ties_only_among_equal_scores() -> None:
    # Order: z (2.0), then the tie at 1.0: d9, d10, d1; then a (0.5).
    qrels = {"q": {"d10": 1, "a": 1}}
    run = {"q": {"a": 0.5, "d1": 1.0, "d10": 1.0, "z": 2.0, "d9": 1.0}}
    values = per_query(qrels, run, ["RR", "AP", "P@3"])["q"]
    # d10 at rank 3, a at rank 5: RR = 1/3, AP = (1/3 + 2/5) / 2, P@3 = 1/3
    assert values["RR"] == pytest.approx(1 / 3)
    assert values["AP"] == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert values["P@3"] == pytest.approx(1 / 3)


def test_rank_column_is_ignored_in_favour_of_scores(tmp_path: Any) -> None:
    # The TREC rank column says b first; the scores say a first.
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 b 1 0.5 t\nq Q0 a 2 0.9 t\n")
    result = rankmeter.evaluate(tmp_path / "qrels", tmp_path / "run", ["RR", "P@1"])
    # a ranks 1st by score: RR = 1, P@1 = 1
    assert dict(result.metrics) == {"RR": 1.0, "P@1": 1.0}


def test_scores_compare_as_doubles() -> None:
    # 0.30000000000000004 > 0.3 as doubles, so d1 ranks first although "d2" > "d1" as bytes.
    # (trec_eval 9 inside pytrec_eval compares 32-bit floats and sees a tie: RR 1/2 there.)
    qrels = {"q": {"d1": 1, "d2": 0}}
    run = {"q": {"d1": 0.1 + 0.2, "d2": 0.3}}
    assert per_query(qrels, run, "RR")["q"]["RR"] == 1.0


def test_input_tie_policy_keeps_the_given_order_among_equal_scores() -> None:
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d10": 1.0, "d9": 1.0, "top": 2.0}}
    # trec_eval order: top, d9, d10 -> RR 1/3; input order: top, d10, d9 -> RR 1/2
    assert per_query(qrels, run, "RR")["q"]["RR"] == pytest.approx(1 / 3)
    assert per_query(qrels, run, "RR", ties="input")["q"]["RR"] == 0.5


# --- grades: float, negative; queries without relevant documents -------------------------------


def test_float_grades_are_kept() -> None:
    # b (0.5) ranked above a (1.5). At rel 1 only a is relevant; b is judged non-relevant.
    qrels = {"q": {"a": 1.5, "b": 0.5}}
    run = {"q": ranking("b", "a")}
    metrics = ["nDCG", "DCG", "P@1", "P(rel=0.5)@1", "RR", "Bpref", "NumRel", "Judged"]
    values = per_query(qrels, run, metrics)["q"]
    # DCG = 0.5 / log2(2) + 1.5 / log2(3); IDCG = 1.5 + 0.5 / log2(3)
    assert values["DCG"] == pytest.approx(0.5 + 1.5 / log2(3))
    assert values["nDCG"] == pytest.approx((0.5 + 1.5 / log2(3)) / (1.5 + 0.5 / log2(3)))
    # b at rank 1 is not relevant at rel 1 (0.5 < 1) but is at rel 0.5
    assert values["P@1"] == 0.0
    assert values["P(rel=0.5)@1"] == 1.0
    # a at rank 2: RR = 1/2; Bpref: R = 1, N = 1, one non-relevant above a -> 1 - 1/1 = 0
    assert values["RR"] == 0.5
    assert values["Bpref"] == 0.0
    assert values["NumRel"] == 1
    assert values["Judged"] == 1.0


def test_evaluate_rel_may_be_a_float() -> None:
    qrels = {"q": {"a": 1.5, "b": 0.5}}
    run = {"q": ranking("b", "a")}
    # rel 0.5: both relevant -> P@2 = 2/2, AP = (1 + 1) / 2
    values = per_query(qrels, run, ["P@2", "AP", "NumRel"], rel=0.5)["q"]
    assert values == {"P@2": 1.0, "AP": 1.0, "NumRel": 2}


ZERO_IF_NOTHING_RELEVANT = [
    "P@2",
    "P",
    "R@2",
    "R",
    "nDCG",
    "nDCG@2",
    "nDCG(gain=exp)",
    "DCG",
    "RR",
    "AP",
    "AP@2",
    "R-Prec",
    "Bpref",
    "Success@2",
    "NumRel",
    "NumRelRet",
]


def test_query_without_relevant_documents_scores_0() -> None:
    # Judgments: a non-relevant (0), b pooled-unjudged (-1); c is not judged.
    qrels = {"q": {"a": 0, "b": -1}}
    run = {"q": ranking("a", "b", "c")}
    values = per_query(qrels, run, [*ZERO_IF_NOTHING_RELEVANT, "Judged@2", "NumRet"])["q"]
    for name in ZERO_IF_NOTHING_RELEVANT:
        assert values[name] == 0.0, name
    # only a is judged: 1 of the top 2; 3 returned
    assert values["Judged@2"] == 0.5
    assert values["NumRet"] == 3


def test_query_with_only_negative_grades_is_evaluated_and_scores_0() -> None:
    # pytrec_eval crashes on such queries with bpref (hence tested by hand here).
    qrels = {"q": {"a": -1, "b": -2}, "p": {"a": 1}}
    run = {"q": ranking("a", "b"), "p": ranking("a")}
    metrics = [*ZERO_IF_NOTHING_RELEVANT, "Judged", "NumRet"]
    values = per_query(qrels, run, metrics)
    assert set(values) == {"p", "q"}
    for name in [*ZERO_IF_NOTHING_RELEVANT, "Judged"]:
        assert values["q"][name] == 0.0, name
    assert values["q"]["NumRet"] == 2
    # the same with -J: every document is unjudged, so nothing is left
    values = per_query(qrels, run, metrics, judged_only=True)
    for name in [*ZERO_IF_NOTHING_RELEVANT, "Judged", "NumRet"]:
        assert values["q"][name] == 0.0, name
    assert values["p"]["P@2"] == 0.5


def test_negative_grade_is_not_relevant_even_at_a_negative_level() -> None:
    # With rel = -1 the negative-graded document is still unjudged: never relevant (rankmeter's
    # rule; trec_eval's -l is meant for positive levels).
    qrels = {"q": {"a": -1, "b": 0}}
    run = {"q": ranking("a", "b")}
    values = per_query(qrels, run, ["P@1", "P@2", "NumRel", "RR"], rel=-1)["q"]
    # b (grade 0 >= -1) is relevant at rank 2: P@1 = 0, P@2 = 1/2, NumRel = 1, RR = 1/2
    assert values == {"P@1": 0.0, "P@2": 0.5, "NumRel": 1, "RR": 0.5}


# --- which queries: default, include_missing (-c), judged_only (-J) ---------------------------

MISSING_QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 2, "e": 0}}
MISSING_RUN = {"q1": ranking("a", "b"), "q3": ranking("c")}  # q2 not run; q3 not judged


def test_default_evaluates_queries_in_both_run_and_qrels() -> None:
    result = rankmeter.evaluate(MISSING_QRELS, MISSING_RUN, ["P@1", "NumRel", "NumRet"])
    assert result.per_query.query_ids == ("q1",)
    # q1: a at rank 1
    assert dict(result.metrics) == {"P@1": 1.0, "NumRel": 1, "NumRet": 2}


def test_include_missing_scores_judged_queries_without_results_0() -> None:
    metrics = ["P@1", "AP", "nDCG", "RR", "Success@1", "NumRel", "NumRet", "NumRelRet"]
    result = rankmeter.evaluate(MISSING_QRELS, MISSING_RUN, metrics, include_missing=True)
    assert set(result.per_query.query_ids) == {"q1", "q2"}  # q3 is still not judged
    values = result.per_query.to_dict()
    assert values["q2"] == {
        "P@1": 0.0,
        "AP": 0.0,
        "nDCG": 0.0,
        "RR": 0.0,
        "Success@1": 0.0,
        # num_rel still counts the judgments of q2: c and d
        "NumRel": 2,
        "NumRet": 0,
        "NumRelRet": 0,
    }
    # means over both queries: q1 scores 1 on the first five; sums for the counts
    assert result.metrics["P@1"] == 0.5
    assert result.metrics["AP"] == 0.5
    assert result.metrics["nDCG"] == 0.5
    assert result.metrics["NumRel"] == 1 + 2
    assert result.metrics["NumRet"] == 2
    assert result.metrics["NumRelRet"] == 1


JUDGED_QRELS = {"q": {"a": 0, "b": 1, "c": 1, "n": -1}}
# x and y are not judged, n is pooled-unjudged; the judged order is a, b.
JUDGED_RUN = {"q": ranking("x", "a", "n", "y", "b")}


@pytest.mark.parametrize(
    ("metric", "default", "judged_only"),
    [
        # b at rank 5 by default, rank 2 after removing x, n and y
        param("P@2", 0.0, 1 / 2, id="P@2"),
        param("P", 1 / 5, 1 / 2, id="P"),
        param("RR", 1 / 5, 1 / 2, id="RR"),
        param("AP", (1 / 5) / 2, (1 / 2) / 2, id="AP"),
        param("R@2", 0.0, 1 / 2, id="R@2"),
        param("NumRet", 5.0, 2.0, id="NumRet"),
        param("NumRel", 2.0, 2.0, id="NumRel"),
        param("Judged", 2 / 5, 1.0, id="Judged"),
        # Bpref ignores unjudged documents anyway: a above b -> 1 - min(1, 2) / min(1, 2) = 0
        param("Bpref", 0.0, 0.0, id="Bpref"),
        # nDCG: b (gain 1) at rank 5 vs 2; ideal 1 + 1 / log2(3)
        param(
            "nDCG", (1 / log2(6)) / (1 + 1 / log2(3)), (1 / log2(3)) / (1 + 1 / log2(3)), id="nDCG"
        ),
    ],
)
def test_judged_only_drops_unjudged_documents_first(
    metric: str, default: float, judged_only: float
) -> None:
    assert per_query(JUDGED_QRELS, JUDGED_RUN, metric)["q"][metric] == pytest.approx(default)
    values = per_query(JUDGED_QRELS, JUDGED_RUN, metric, judged_only=True)
    assert values["q"][metric] == pytest.approx(judged_only)


# --- aggregation over queries -----------------------------------------------------------------


def test_means_and_sums_over_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}, "q3": {"d": 0}}
    run = {"q1": ranking("a"), "q2": ranking("x", "b", "y"), "q3": ranking("d", "e")}
    result = rankmeter.evaluate(qrels, run, ["RR", "P@2", "NumRet", "NumRel", "NumRelRet"])
    # RR: 1, 1/2, 0; P@2: 1/2, 1/2, 0
    assert result.metrics["RR"] == pytest.approx((1 + 1 / 2 + 0) / 3)
    assert result.metrics["P@2"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)
    # sums: returned 1 + 3 + 2, relevant 1 + 2 + 0, relevant returned 1 + 1 + 0
    assert result.to_dict()["metrics"] == {
        "RR": pytest.approx(0.5),
        "P@2": pytest.approx(1 / 3),
        "NumRet": 6,
        "NumRel": 3,
        "NumRelRet": 2,
    }
