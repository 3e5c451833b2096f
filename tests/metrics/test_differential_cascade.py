"""Differential tests of the cascade measures against their references, per query and on the mean.

- ERR@k: gdeval.pl (the TREC Web track's script, as ir_measures ships it), run through perl.
  gdeval prints 5 decimals, so the 1e-9 comparisons run a copy whose only change is the
  output format (``%.17g``); one test goes through ir_measures unchanged, to 5 decimals.
  gdeval reads numeric topic ids, integer grades up to 4 and run lines with a rank and a run
  tag ("format error on line 1" otherwise): the inputs are written so.
- nERR@k: ndeval's nERR-IA@k with one intent per query (pyndeval), which is nERR on binary
  grades with max_grade=1; on graded judgments, ERR@k over gdeval's ERR@k of the ideal ranking.
- RBP and its residual: cwl-eval's RBP and residuals, and ir_measures' RBP(p, rel) (its
  cwl_eval provider; RBP(p) without rel is graded RBP there, which no provider computes).
- Compat(p): ir_measures' compat provider.

Ties: ir_measures sorts a run by score alone (stable; compat breaks ties by doc id ascending),
rankmeter as trec_eval does (score descending, then doc id descending). The references get the
run in rankmeter's order with strictly decreasing positive scores, so both read one ranking;
gdeval sorts as rankmeter does and gets the raw scores too.

Where the references differ by definition, and how the tests meet them:

- gdeval prints no line for a topic without a judgment > 0 (ERR is 0 there) nor for a judged
  topic the run lacks; rankmeter's mean counts them as trec_eval would (0; the latter only
  under include_missing), so they are expected as 0.
- cwl-eval would read a negative grade as a negative gain; rankmeter reads it as trec_eval does
  (pooled, not judged), so cwl-eval gets no judgment for it: unjudged there too.
- ir_measures scores every judged query, those the run lacks as 0 (trec_eval -c).
- ir_measures' Compat reads scores as more than an order (see
  test_compat_where_ir_measures_reads_scores_as_more_than_an_order): it gets positive scores.
  It also divides by zero on an empty ranking of a query with no relevant judgment; it gets
  such a query as missing from the run (scored 0, as rankmeter scores it).
- The -J (judged_only) cases hand the references the run without its unjudged results.
"""

from __future__ import annotations

import math
import pkgutil
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter

Qrels = dict[str, dict[str, float]]
RunDict = dict[str, dict[str, float]]

JUDGEABLE = [f"d{i}" for i in (1, 2, 3, 9, 10, 11, 20, 100)]
UNJUDGED = ["u1", "u2", "u10", "zz"]
QUERIES = ["1", "2", "10", "7"]  # gdeval reads numeric topic ids only
SCORES = [0.0, 0.5, 1.0, 2.0, -1.5, 0.25]  # ties are frequent
GRADES = [-2, -1, 0, 0, 1, 1, 2, 3, 4]

SETTINGS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def collections(draw: st.DrawFn, grades: list[float] = GRADES) -> tuple[Qrels, RunDict]:
    judged = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    ran = draw(st.lists(st.sampled_from(QUERIES), max_size=4, unique=True))
    common = draw(st.sampled_from(judged))
    ran = ran if common in ran else [*ran, common]
    qrels = {
        q: draw(st.dictionaries(st.sampled_from(JUDGEABLE), st.sampled_from(grades), min_size=1))
        for q in judged
    }
    run = {
        q: draw(
            st.dictionaries(
                st.sampled_from(JUDGEABLE + UNJUDGED), st.sampled_from(SCORES), min_size=1
            )
        )
        for q in ran
    }
    return qrels, run


def ranking(docs: dict[str, float]) -> list[str]:
    """rankmeter's (trec_eval's) order: score descending, then doc id descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def strictly(run: RunDict) -> RunDict:
    """The run in rankmeter's order, with strictly decreasing positive scores."""
    return {
        q: {d: float(len(docs) - i) for i, d in enumerate(ranking(docs))} for q, docs in run.items()
    }


def evaluate(qrels: Qrels, run: RunDict, metrics: list[str], **policy: Any) -> tuple[dict, dict]:
    result = rankmeter.evaluate(qrels, run, metrics, **policy)
    return result.per_query.to_dict(), dict(result.metrics)


def assert_close(got: dict[str, float], expected: dict[str, float], tol: float = 1e-9) -> None:
    assert got.keys() == expected.keys()
    for q in got:
        assert math.isclose(got[q], expected[q], rel_tol=0, abs_tol=tol), (q, got[q], expected[q])


def mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


# -- gdeval: ERR@k and the ideal ERR@k --------------------------------------------------------


def _gdeval_script(tmp: Path, *, exact: bool) -> Path:
    if shutil.which("perl") is None:
        pytest.skip("gdeval.pl needs perl, which is not installed")
    pytest.importorskip("ir_measures", reason="gdeval.pl ships with ir_measures")
    text = pkgutil.get_data("ir_measures", "bin/gdeval.pl")
    assert text is not None
    if exact:
        # The only change: 17 significant digits instead of 5 decimals.
        assert text.count(b'"$runid,$topicCurrent,%.5f,%.5f\\n"') == 1
        text = text.replace(b"%.5f,%.5f", b"%.17g,%.17g")
    path = tmp / ("gdeval_exact.pl" if exact else "gdeval.pl")
    path.write_bytes(text)
    return path


def gdeval(script: Path, tmp: Path, qrels: Qrels, run: RunDict, k: int) -> dict[str, float]:
    """gdeval's err@k per topic: the topics of the run that have a judgment > 0."""
    qrels_file, run_file = tmp / "qrels", tmp / "run"
    qrels_file.write_text(
        "".join(f"{q} 0 {d} {int(g)}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    run_file.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {docs[d]!r} tag\n"
            for q, docs in run.items()
            for i, d in enumerate(ranking(docs))
        )
    )
    out = subprocess.run(
        ["perl", str(script), str(qrels_file), str(run_file), str(k)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = out.splitlines()
    assert lines[0] == f"runid,topic,ndcg@{k},err@{k}"
    return {line.split(",")[1]: float(line.split(",")[3]) for line in lines[1:]}


@pytest.fixture(scope="module")
def exact_gdeval(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("gdeval")
    return _gdeval_script(tmp, exact=True), tmp


def _expected_err(found: dict[str, float], qrels: Qrels, evaluated: list[str]) -> dict[str, float]:
    """gdeval's values over rankmeter's queries: gdeval leaves out the queries without a
    judgment > 0 (ERR is 0 there) and those the run lacks (scored 0 under include_missing)."""
    out = {}
    for q in evaluated:
        if q in found:
            out[q] = found[q]
        else:
            assert not any(g > 0 for g in qrels[q].values()) or q not in found
            out[q] = 0.0
    return out


def judged_results(qrels: Qrels, run: RunDict) -> RunDict:
    """The run without its unjudged results (no judgment, or a negative grade): what trec_eval
    -J (``judged_only``) evaluates, for the references that have no such option."""
    return {
        q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0}
        for q, docs in run.items()
    }


@SETTINGS
@given(data=collections(), include_missing=st.booleans(), judged_only=st.booleans())
def test_err_matches_gdeval(
    data: tuple[Qrels, RunDict],
    include_missing: bool,
    judged_only: bool,
    exact_gdeval: tuple[Path, Path],
) -> None:
    script, tmp = exact_gdeval
    qrels, run = data
    seen = judged_results(qrels, run) if judged_only else run
    policy = {"include_missing": include_missing, "judged_only": judged_only}
    for k in (1, 3, 10, 1000):
        found = gdeval(script, tmp, qrels, seen, k)
        names = [f"ERR@{k}"] + (["ERR"] if k == 1000 else [])
        per_query, means = evaluate(qrels, run, names, **policy)
        for name in names:
            got = {q: row[name] for q, row in per_query.items()}
            expected = _expected_err(found, qrels, list(got))
            assert_close(got, expected)
            assert math.isclose(means[name], mean(expected), abs_tol=1e-9)


@SETTINGS
@given(data=collections(), include_missing=st.booleans(), judged_only=st.booleans())
def test_nerr_is_err_over_gdeval_err_of_the_ideal_ranking(
    data: tuple[Qrels, RunDict],
    include_missing: bool,
    judged_only: bool,
    exact_gdeval: tuple[Path, Path],
) -> None:
    script, tmp = exact_gdeval
    qrels, run = data
    seen = judged_results(qrels, run) if judged_only else run
    ideal = {
        q: {d: float(len(docs) - i) for i, d in enumerate(sorted(docs, key=lambda d: -docs[d]))}
        for q, docs in qrels.items()
    }
    policy = {"include_missing": include_missing, "judged_only": judged_only}
    for k in (1, 3, 10):
        err = gdeval(script, tmp, qrels, seen, k)
        best = gdeval(script, tmp, qrels, ideal, k)
        per_query, means = evaluate(qrels, run, [f"nERR@{k}"], **policy)
        got = {q: row[f"nERR@{k}"] for q, row in per_query.items()}
        expected = {q: err.get(q, 0.0) / best[q] if best.get(q) else 0.0 for q in got}
        assert_close(got, expected)
        assert math.isclose(means[f"nERR@{k}"], mean(expected), abs_tol=1e-9)


def test_err_matches_ir_measures_gdeval_to_its_five_decimals() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for ERR")
    if shutil.which("perl") is None:
        pytest.skip("ir_measures' gdeval provider needs perl")
    import random

    rng = random.Random(24)
    qrels = {str(q): {f"d{i}": rng.choice(GRADES) for i in range(12)} for q in range(1, 30)}
    for q in qrels:
        qrels[q]["d0"] = 3  # gdeval leaves out a topic without a judgment > 0
    run = {str(q): {f"d{i}": rng.choice(SCORES) for i in range(15)} for q in range(1, 30)}
    ordered = strictly(run)
    measures = [ir_measures.parse_measure(f"ERR@{k}") for k in (5, 20)]
    provider = ir_measures.gdeval
    found = {(m.measure, m.query_id): m.value for m in provider.iter_calc(measures, qrels, ordered)}
    per_query, means = evaluate(qrels, run, ["ERR@5", "ERR@20"])
    for measure in measures:
        name = str(measure)
        for q, row in per_query.items():
            assert math.isclose(row[name], found[(measure, q)], abs_tol=5e-6 + 1e-12), (name, q)
        aggregate = provider.calc_aggregate([measure], qrels, ordered)[measure]
        assert math.isclose(means[name], aggregate, abs_tol=5e-6 + 1e-12)


# -- ndeval: nERR-IA with one intent is nERR on binary grades ----------------------------------


@SETTINGS
@given(data=collections(grades=[-1, 0, 0, 1, 1, 2]))
def test_nerr_on_binary_grades_matches_ndeval(data: tuple[Qrels, RunDict]) -> None:
    pyndeval = pytest.importorskip("pyndeval", reason="the reference for nERR (ndeval)")
    qrels, run = data
    binary = {q: {d: min(g, 1) for d, g in docs.items()} for q, docs in qrels.items()}
    subtopics = [
        pyndeval.SubtopicQrel(q, "1", d, int(g))
        for q, docs in binary.items()
        for d, g in docs.items()
    ]
    ordered = strictly(run)
    scored = [pyndeval.ScoredDoc(q, d, s) for q, docs in ordered.items() for d, s in docs.items()]
    for k in (1, 2, 5, 20):
        found = pyndeval.ndeval(subtopics, scored, measures=[f"nERR-IA@{k}"])
        name = f"nERR(max_grade=1)@{k}"
        per_query, means = evaluate(binary, run, [name])
        got = {q: row[name] for q, row in per_query.items()}
        expected = {q: found[q][f"nERR-IA@{k}"] if q in found else 0.0 for q in got}
        assert_close(got, expected)
        assert math.isclose(means[name], mean(expected), abs_tol=1e-9)


# -- cwl-eval: RBP and its residual ------------------------------------------------------------


def cwl_rbp(
    qrels: Qrels, run: RunDict, p: float, rel: float, depth: int | None
) -> dict[str, tuple[float, float]]:
    """cwl-eval's RBP and residual per query (queries in both), the run cut to ``depth``.

    cwl-eval reads a gain per judged document and pads the list with unjudged ranks to its
    depth (max_n, 3000 here: p^3000 is far below 1e-9 for p <= 0.95). A negative grade is
    pooled, not judged, in rankmeter (trec_eval's meaning), so cwl-eval gets no gain for it:
    it is unjudged there too.
    """
    pytest.importorskip("cwl", reason="the reference for RBP's residual (cwl-eval)")
    import numpy as np
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import Ranking

    out = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        order = ranking(docs)[:depth]
        gains = [(float(qrels[q][d] >= rel) if qrels[q].get(d, -1) >= 0 else np.nan) for d in order]
        costs = [1.0] * len(order)
        metric = RBPCWLMetric(p)
        metric.residuals = True
        value = metric.measure(Ranking(q, gains, costs, max_n=3000))
        out[q] = (float(value), float(metric.residual_expected_utility))
    return out


@SETTINGS
@given(
    data=collections(grades=[-2, -1, 0, 0, 0.5, 1, 1, 2, 3]),
    p=st.sampled_from([0.5, 0.8, 0.95]),
    rel=st.sampled_from([1, 2, 0.5]),
    judged_only=st.booleans(),
)
def test_rbp_and_its_residual_match_cwl_eval(
    data: tuple[Qrels, RunDict], p: float, rel: float, judged_only: bool
) -> None:
    qrels, run = data
    seen = run
    if judged_only:  # trec_eval -J: the unjudged results are removed before anything else
        seen = {
            q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0}
            for q, docs in run.items()
        }
    for depth in (None, 1, 3, 10):
        at = "" if depth is None else f"@{depth}"
        names = [f"RBP(p={p},rel={rel}){at}", f"RBP_resid(p={p}){at}"]
        found = cwl_rbp(qrels, seen, p, rel, depth)
        per_query, means = evaluate(qrels, run, names, judged_only=judged_only)
        for i, name in enumerate(names):
            got = {q: row[name] for q, row in per_query.items()}
            expected = {q: pair[i] for q, pair in found.items()}
            assert_close(got, expected)
            assert math.isclose(means[name], mean(expected), abs_tol=1e-9)


def test_rbp_matches_ir_measures_cwl_eval_provider() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for RBP")
    pytest.importorskip("cwl", reason="ir_measures' RBP runs cwl-eval")
    import random

    rng = random.Random(8)
    qrels = {str(q): {f"d{i}": rng.choice(GRADES) for i in range(10)} for q in range(40)}
    run = {str(q): {f"d{i}": rng.choice(SCORES) for i in range(14)} for q in range(3, 45)}
    ordered = strictly(run)
    for p, rel in ((0.8, 1), (0.5, 2), (0.9, 3)):
        measure = ir_measures.parse_measure(f"RBP(p={p},rel={rel})")
        found = {
            m.query_id: m.value for m in ir_measures.cwl_eval.iter_calc([measure], qrels, ordered)
        }
        name = f"RBP(p={p},rel={rel})"
        # ir_measures scores every qrels query, those the run lacks as 0: include_missing.
        per_query, means = evaluate(qrels, run, [name], include_missing=True)
        assert_close({q: row[name] for q, row in per_query.items()}, found)
        assert math.isclose(means[name], mean(found), abs_tol=1e-9)


# -- ir_measures' compat provider ----------------------------------------------------------------


@SETTINGS
@given(
    data=collections(grades=[-2, -1, 0, 0, 0.5, 1, 1, 2, 3]),
    p=st.sampled_from([0.5, 0.8, 0.95, 0.99]),
    include_missing=st.booleans(),
    judged_only=st.booleans(),
)
def test_compat_matches_ir_measures(
    data: tuple[Qrels, RunDict], p: float, include_missing: bool, judged_only: bool
) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for Compat")
    qrels, run = data
    measure = ir_measures.parse_measure(f"Compat(p={p})")
    # A query left with no judged result under -J is an empty ranking: the provider divides
    # by zero there when no judgment is relevant (depth 0), so it gets the query as missing,
    # which it scores 0, as rankmeter scores an empty ranking.
    seen = judged_results(qrels, run) if judged_only else run
    ordered = strictly({q: docs for q, docs in seen.items() if docs})
    found = {m.query_id: m.value for m in ir_measures.compat.iter_calc([measure], qrels, ordered)}
    name = f"Compat(p={p})"
    policy = {"include_missing": include_missing, "judged_only": judged_only}
    per_query, means = evaluate(qrels, run, [name], **policy)
    got = {q: row[name] for q, row in per_query.items()}
    # ir_measures scores every qrels query, those the run lacks as 0 (rankmeter does under
    # include_missing, trec_eval -c).
    assert set(got) <= set(found)
    expected = {q: found[q] for q in got}
    assert_close(got, expected)
    assert math.isclose(means[name], mean(expected), abs_tol=1e-9)


def test_compat_orders_equal_grades_as_the_run_does() -> None:
    """Ties of grade: the ideal takes the run's order among them, so any order of equal grades
    is perfect, and the reference agrees."""
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for Compat")
    qrels = {"q": {"a": 2, "b": 2, "c": 2, "d": 1, "e": 1, "f": 0}}
    for order in (["c", "a", "b", "e", "d"], ["b", "c", "a", "d", "e", "f", "x"]):
        run = {"q": {doc: float(len(order) - i) for i, doc in enumerate(order)}}
        (value,) = rankmeter.evaluate(qrels, run, ["Compat"]).per_query["Compat"]
        found = list(
            ir_measures.compat.iter_calc([ir_measures.parse_measure("Compat")], qrels, run)
        )
        assert value == pytest.approx(1.0, abs=1e-12) and found[0].value == pytest.approx(value)
    run = {"q": {"d": 5.0, "a": 4.0, "b": 3.0, "c": 2.0, "e": 1.0}}
    (value,) = rankmeter.evaluate(qrels, run, ["Compat"]).per_query["Compat"]
    found = list(ir_measures.compat.iter_calc([ir_measures.parse_measure("Compat")], qrels, run))
    assert value < 1 and value == pytest.approx(found[0].value, abs=1e-12)


# -- a real collection: Cranfield (grades 0-4) and two word-overlap runs full of ties ------------


def test_on_cranfield_every_measure_matches_its_reference(
    cranfield: Path, tmp_path: Path, exact_gdeval: tuple[Path, Path]
) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for Compat")
    from rankmeter.io import read_qrels, read_run
    from tests.cli.test_cli_pool import cranfield_runs

    script, tmp = exact_gdeval
    qrels = read_qrels(cranfield / "qrels.trec").to_dict()
    for path in cranfield_runs(cranfield, tmp_path):
        run = read_run(path).to_dict()
        names = ["ERR@20", "ERR", "nERR@20", "RBP(p=0.8,rel=2)", "RBP_resid(p=0.8)", "Compat"]
        per_query, _ = evaluate(qrels, run, names)
        column = {name: {q: row[name] for q, row in per_query.items()} for name in names}
        assert len(column["ERR"]) == 225
        ideal = {
            q: {d: float(len(docs) - i) for i, d in enumerate(sorted(docs, key=lambda d: -docs[d]))}
            for q, docs in qrels.items()
        }
        err20, best20 = gdeval(script, tmp, qrels, run, 20), gdeval(script, tmp, qrels, ideal, 20)
        assert_close(column["ERR@20"], _expected_err(err20, qrels, list(column["ERR@20"])))
        whole = gdeval(script, tmp, qrels, run, 100_000)
        assert_close(column["ERR"], _expected_err(whole, qrels, list(column["ERR"])))
        nerr = {q: err20.get(q, 0.0) / best20[q] if best20.get(q) else 0.0 for q in column["ERR"]}
        assert_close(column["nERR@20"], nerr)
        found = cwl_rbp(qrels, run, 0.8, 2, None)
        assert_close(column["RBP(p=0.8,rel=2)"], {q: v for q, (v, _) in found.items()})
        assert_close(column["RBP_resid(p=0.8)"], {q: r for q, (_, r) in found.items()})
        measure = ir_measures.parse_measure("Compat")
        compat = {
            m.query_id: m.value
            for m in ir_measures.compat.iter_calc([measure], qrels, strictly(run))
        }
        assert_close(column["Compat"], compat)


def test_compat_where_ir_measures_reads_scores_as_more_than_an_order() -> None:
    """The one input the compat provider gets wrong, and why the tests hand it positive scores:
    it orders equal grades by run score with an unretrieved document scoring 0, so a retrieved
    document with a negative score goes after an unretrieved one of its grade, and the same
    ranking gets another value. rankmeter reads the ranking only (retrieved first)."""
    ir_measures = pytest.importorskip("ir_measures", reason="the reference for Compat")
    measure = ir_measures.parse_measure("Compat(p=0.5)")
    qrels = {"q": {"a": 1, "b": 1}}
    negative, positive = {"q": {"a": -1.0}}, {"q": {"a": 1.0}}
    mine = [
        rankmeter.evaluate(qrels, run, ["Compat(p=0.5)"]).per_query["Compat(p=0.5)"][0]
        for run in (negative, positive)
    ]
    theirs = [
        next(iter(ir_measures.compat.iter_calc([measure], qrels, run))).value
        for run in (negative, positive)
    ]
    # ideal a, b: overlaps 1, 1 over depths 1, 2 against 1 + 0.5 * 2/2
    assert mine == [pytest.approx((1 + 0.5 / 2) / 1.5, abs=1e-12)] * 2
    assert theirs[1] == pytest.approx(mine[1], abs=1e-12)
    # the provider's ideal b, a: overlaps 0, 1
    assert theirs[0] == pytest.approx((0.5 / 2) / 1.5, abs=1e-12)
