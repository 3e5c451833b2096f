"""Differential tests of infAP, gm_map, iprec_at_recall and 11pt_avg against trec_eval (inside
pytrec-eval-terrier; ir_measures' infAP and IPrec are pytrec_eval too), per query and on the
mean, on random collections: ties in scores, grades 0..4, negative grades (-1 and -2: pooled but
not judged), unjudged (unpooled) results, queries in the run but not the qrels and the reverse,
``judged_only`` (-J) and ``include_missing`` (-c, where trec_eval's means are worked out here
as trec_eval works them out: pytrec_eval has no -c).

Inputs the reference gets wrong, left out narrowly (both verified by hand, see the tests at the
end): a qrels query with only negative grades makes pytrec_eval give NaN for iprec_at_recall
and 11pt_avg (and it cannot take such queries with bpref, see test_differential.py), so every
generated query has a grade >= 0; and under -J a query with no judged result has no ranks at
all, where trec_eval's iprec_at_recall divides 0 by 0 (NaN); rankmeter gives 0 there.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter
from rankmeter.metrics import parse_metrics

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is the reference")

#: Recall levels beyond trec_eval's 11 (sorted: trec_eval walks them in order); 0.31 * 10 + 0.9
#: is 4.0, where trec_eval 10's rounding would ask for 3.
LEVELS = "0.05,0.15,0.25,0.31,0.35,0.45,0.51,0.66,0.75,0.99"
#: What trec_eval is asked for; rankmeter is asked for the same names.
TREC_MEASURES = ["infAP", "iprec_at_recall", "11pt_avg", "gm_map"]
ASKED = [*TREC_MEASURES, f"iprec_at_recall.{LEVELS}"]
METRICS = parse_metrics(ASKED)

JUDGEABLE = [f"d{i}" for i in (1, 2, 3, 9, 10, 11, 20, 100)]
UNJUDGED = ["u1", "u2", "u10", "zz"]
QUERIES = ["1", "2", "10", "a", "b"]
SCORES = [0.0, 0.5, 1.0, 2.0, -1.5, 0.25]  # ties are frequent; all exact in float32
GRADES = [-2, -1, -1, 0, 0, 1, 1, 2, 3, 4]


@st.composite
def qrels_query(draw: st.DrawFn) -> dict[str, int]:
    docs = draw(st.lists(st.sampled_from(JUDGEABLE), min_size=1, max_size=7, unique=True))
    grades = [draw(st.sampled_from(GRADES)) for _ in docs]
    if all(g < 0 for g in grades):  # see the module docstring
        grades[0] = draw(st.sampled_from([0, 1, 2]))
    return dict(zip(docs, grades, strict=True))


@st.composite
def run_query(draw: st.DrawFn) -> dict[str, float]:
    docs = draw(
        st.lists(st.sampled_from(JUDGEABLE + UNJUDGED), min_size=1, max_size=12, unique=True)
    )
    return {doc: draw(st.sampled_from(SCORES)) for doc in docs}


@st.composite
def collections(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    judged = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    ran = draw(st.lists(st.sampled_from(QUERIES), min_size=0, max_size=4, unique=True))
    common = draw(st.sampled_from(judged))
    ran = [*ran, common] if common not in ran else ran
    return {q: draw(qrels_query()) for q in judged}, {q: draw(run_query()) for q in ran}


def reference(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    *,
    rel: int,
    judged_only: bool,
    include_missing: bool,
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """trec_eval's per-query values (keyed by rankmeter's labels) and its means."""
    found: dict[str, dict[str, float]] = {}
    for measures in (set(TREC_MEASURES), {f"iprec_at_recall.{LEVELS}"}):
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, measures, relevance_level=rel, judged_docs_only_flag=judged_only
        )
        for q, row in evaluator.evaluate(run).items():
            found.setdefault(q, {}).update(row)
    per_query = {}
    for q, row in found.items():
        nothing_ranked = judged_only and not any(qrels[q].get(d, -1) >= 0 for d in run[q])
        per_query[q] = {m.label: _value(row[str(m.trec_name)], nothing_ranked) for m in METRICS}
    if include_missing:  # trec_eval -c: a judged query missing from the run scores 0
        for q in qrels:
            per_query.setdefault(q, {m.label: _missing(m.label) for m in METRICS})
    means = {m.label: _mean(m.label, [row[m.label] for row in per_query.values()]) for m in METRICS}
    return per_query, means


def _value(value: float, nothing_ranked: bool) -> float:
    """trec_eval's value; under -J, a query left without results divides 0 by 0 in
    iprec_at_recall and 11pt_avg (NaN), where rankmeter gives 0 (see the module docstring)."""
    return 0.0 if nothing_ranked and math.isnan(value) else value


def _missing(label: str) -> float:
    # trec_eval -c: 0 for a query missing from the run, log(0.00001) for gm_map (meas_avg.c)
    return math.log(0.00001) if label == "gm_map" else 0.0


def _mean(label: str, values: list[float]) -> float:
    """trec_eval's average: gm_map's per-query values are logs, averaged and exponentiated."""
    mean = math.fsum(values) / len(values)
    return math.exp(mean) if label == "gm_map" else mean


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    data=collections(),
    rel=st.sampled_from([1, 2]),
    judged_only=st.booleans(),
    include_missing=st.booleans(),
)
def test_random_collections_match_trec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
    rel: int,
    judged_only: bool,
    include_missing: bool,
) -> None:
    qrels, run = data
    policy: dict[str, Any] = {"rel": rel, "judged_only": judged_only}
    expected, means = reference(qrels, run, include_missing=include_missing, **policy)
    result = rankmeter.evaluate(qrels, run, METRICS, include_missing=include_missing, **policy)
    got = result.per_query.to_dict()
    context = {"qrels": qrels, "run": run, **policy, "c": include_missing}
    assert set(got) == set(expected), context
    for q, row in expected.items():
        for label, value in row.items():
            assert got[q][label] == pytest.approx(value, abs=1e-9, rel=0), (label, q, context)
    for label, mean in means.items():
        assert result.metrics[label] == pytest.approx(mean, abs=1e-9, rel=0), (label, context)


def test_ir_measures_names_the_same_infap() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures names the measures")
    qrels = {"q": {"a": 1, "b": 0, "c": -1, "d": 2}}
    run = {"q": {"a": 3.0, "x": 2.0, "c": 1.5, "b": 1.0, "d": 0.5}}
    qrels_rows = [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    (theirs,) = ir_measures.calc_aggregate([ir_measures.infAP], qrels_rows, run_rows).values()
    ours = rankmeter.evaluate(qrels, run, "infAP").metrics["infAP"]
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_every_negative_grade_is_pooled_but_not_judged() -> None:
    # trec_eval reads any negative grade as "in the pool, not judged" (form_res_rels.c); a
    # document missing from the qrels is unpooled. -1 and -2 give one value; unpooled another.
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    values = {
        grade: rankmeter.evaluate({"q": {"a": 1, "x": grade, "b": 1}}, run, "infAP").metrics[
            "infAP"
        ]
        for grade in (-1, -2)
    }
    unpooled = rankmeter.evaluate({"q": {"a": 1, "b": 1}}, run, "infAP").metrics["infAP"]
    assert values[-1] == values[-2] != unpooled
    for grade in (-1, -2):
        evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1, "x": grade, "b": 1}}, {"infAP"})
        assert evaluator.evaluate(run)["q"]["infAP"] == pytest.approx(values[grade], abs=1e-12)
    assert pytrec_eval.RelevanceEvaluator({"q": {"a": 1, "b": 1}}, {"infAP"}).evaluate(run)["q"][
        "infAP"
    ] == pytest.approx(unpooled, abs=1e-12)


def test_a_recall_level_asks_for_floor_of_level_times_r_plus_0_9() -> None:
    # R = 10; relevant results at ranks 1, 3, 4, 8, 12, 14. Level 0.31 asks for
    # floor(3.1 + 0.9) = 4 relevant (trec_eval 10's rounding would ask for 3): the best
    # precision from the 4th down is max(4/8, 5/12, 6/14) = 0.5.
    qrels = {"q": {f"r{i}": 1 for i in range(10)}}
    order = ["r0", "n1", "r1", "r2", "n2", "n3", "n4", "r3", "n5", "n6", "n7", "r4", "n8", "r5"]
    run = {"q": {doc: 100.0 - i for i, doc in enumerate(order)}}
    names = "iprec_at_recall.0.05,0.25,0.31,0.45,0.51"
    ours = rankmeter.evaluate(qrels, run, names).per_query.to_dict()["q"]
    assert ours == {
        "iprec_at_recall.0.05": 1.0,
        "iprec_at_recall.0.25": 0.75,
        "iprec_at_recall.0.31": 0.5,
        "iprec_at_recall.0.45": 6 / 14,
        "iprec_at_recall.0.51": 6 / 14,
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {names}).evaluate(run)["q"]
    assert {f"iprec_at_recall.{k[16:].rstrip('0')}": v for k, v in theirs.items()} == ours


def test_ir_measures_iprec_is_the_same_metric() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures names the measures")
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 2, "e": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "c": 1.5, "b": 1.0, "d": 0.5}}
    qrels_rows = [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    for level in (0.0, 0.25, 0.5, 0.75, 1.0):
        measure = ir_measures.parse_measure(f"IPrec@{level}")
        (theirs,) = ir_measures.calc_aggregate([measure], qrels_rows, run_rows).values()
        ours = rankmeter.evaluate(qrels, run, f"IPrec@{level}").metrics[f"IPrec@{level}"]
        assert ours == pytest.approx(theirs, abs=1e-12), level


# --- the real Cranfield collection, its judgments thinned as a sampled pool would be ----------


def test_cranfield_with_a_sampled_pool_matches_trec_eval(cranfield: Any) -> None:
    """Cranfield's qrels with every third judgment turned into -1 (pooled, not sampled), a
    run of 150 random documents plus half the judged ones per query (scores in steps of 1/8:
    many ties), at rel 1 and 2: every query and the means, to 1e-9."""
    import random

    rng = random.Random(20241207)
    qrels: dict[str, dict[str, int]] = {}
    for line in (cranfield / "qrels.trec").read_text().splitlines():
        if line.strip():
            q, _, doc, grade = line.split()
            qrels.setdefault(q, {})[doc] = int(grade) if rng.random() > 1 / 3 else -1
    for judgments in qrels.values():  # pytrec_eval cannot take an all-negative query
        if all(g < 0 for g in judgments.values()):
            judgments[next(iter(judgments))] = 0
    docs = sorted({d for judgments in qrels.values() for d in judgments})
    docs += [f"unjudged{i}" for i in range(400)]
    run = {}
    for q in sorted(qrels, key=int):
        chosen = set(rng.sample(docs, 150)) | {d for d in qrels[q] if rng.random() < 0.5}
        run[q] = {d: rng.randrange(0, 40) / 8 for d in sorted(chosen)}
    for rel in (1, 2):
        expected, means = reference(qrels, run, rel=rel, judged_only=False, include_missing=False)
        result = rankmeter.evaluate(qrels, run, METRICS, rel=rel)
        got = result.per_query.to_dict()
        assert set(got) == set(expected) and len(got) > 200
        mismatches = [
            (label, q, got[q][label], value)
            for q, row in expected.items()
            for label, value in row.items()
            if abs(got[q][label] - value) > 1e-9
        ]
        assert not mismatches, mismatches[:10]
        for label, mean in means.items():
            assert result.metrics[label] == pytest.approx(mean, abs=1e-9, rel=0), (label, rel)
