"""Differential tests against trec_eval (inside pytrec-eval-terrier), per query and on the mean.

Two pytrec_eval bugs shape the generated data (both verified): it crashes or hangs when a qrels
query has only negative grades and bpref is computed with other measures, and
``judged_docs_only_flag=True`` hangs on such queries. So every generated qrels query has at least
one grade >= 0; all-negative queries are covered by hand in test_tables.py. Scores are exactly
representable in float32, since trec_eval 9 may compare scores as 32-bit floats.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter
from rankmeter.metrics import Metric, parse_metrics

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = "1,2,3,5,10"
TREC_MEASURES = [
    f"P.{CUTOFFS}",
    f"recall.{CUTOFFS}",
    "ndcg",
    f"ndcg_cut.{CUTOFFS}",
    "recip_rank",
    "map",
    f"map_cut.{CUTOFFS}",
    "Rprec",
    "bpref",
    f"success.{CUTOFFS}",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "set_P",
    "set_recall",
]
METRICS: tuple[Metric, ...] = parse_metrics(TREC_MEASURES)

# Doc ids that sort differently as bytes and as numbers (d1 < d10 < d2 < d9), and ids that no
# qrels ever judges.
JUDGEABLE = [f"d{i}" for i in (1, 2, 3, 9, 10, 11, 20, 100)]
UNJUDGED = ["u1", "u2", "u10", "zz"]
QUERIES = ["1", "2", "10", "a", "b"]
SCORES = [0.0, 0.5, 1.0, 2.0, -1.5, 0.25]  # ties are frequent; all exact in float32
GRADES = [-1, 0, 0, 1, 1, 2, 3]


def _check_names() -> None:
    for metric in METRICS:
        assert metric.trec_name is not None, metric


_check_names()


@st.composite
def qrels_query(draw: st.DrawFn) -> dict[str, int]:
    docs = draw(st.lists(st.sampled_from(JUDGEABLE), min_size=1, max_size=6, unique=True))
    grades = [draw(st.sampled_from(GRADES)) for _ in docs]
    if all(g < 0 for g in grades):  # see the module docstring: pytrec_eval cannot take these
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
    # at least one query in both, else there is nothing to compare (rankmeter raises)
    common = draw(st.sampled_from(judged))
    ran = [*ran, common] if common not in ran else ran
    qrels = {q: draw(qrels_query()) for q in judged}
    run = {q: draw(run_query()) for q in ran}
    return qrels, run


def trec_eval(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    *,
    rel: int,
    judged_only: bool,
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(TREC_MEASURES), relevance_level=rel, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(run)  # type: ignore[no-any-return]


def expected_with_missing(
    qrels: dict[str, dict[str, int]], found: dict[str, dict[str, float]], rel: int
) -> dict[str, dict[str, float]]:
    """trec_eval -c: qrels queries missing from the run score 0, but num_rel counts them."""
    out = dict(found)
    names = {m.trec_name for m in METRICS}
    for q, judgments in qrels.items():
        if q not in out:
            row = dict.fromkeys(names, 0.0)
            row["num_rel"] = float(sum(g >= rel for g in judgments.values()))
            out[q] = row
    return out


def assert_same(
    result: rankmeter.EvalResult, expected: dict[str, dict[str, float]], context: Any
) -> None:
    got = result.per_query.to_dict()
    assert set(got) == set(expected), context
    for metric in METRICS:
        trec = metric.trec_name
        name = metric.label
        for q, row in expected.items():
            assert got[q][name] == pytest.approx(row[trec], abs=1e-9, rel=0), (
                name,
                trec,
                q,
                context,
            )
        values = [row[trec] for row in expected.values()]
        total = sum(values)
        mean = total if metric.spec.aggregate == "sum" else total / len(values)
        assert result.metrics[name] == pytest.approx(mean, abs=1e-9, rel=0), (name, context)


@settings(
    max_examples=300,
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
    expected = trec_eval(qrels, run, rel=rel, judged_only=judged_only)
    if include_missing:
        expected = expected_with_missing(qrels, expected, rel)
    result = rankmeter.evaluate(
        qrels,
        run,
        METRICS,
        rel=rel,
        judged_only=judged_only,
        include_missing=include_missing,
    )
    context = {"qrels": qrels, "run": run, "rel": rel, "J": judged_only, "c": include_missing}
    assert_same(result, expected, context)


def test_pytrec_eval_returns_exactly_the_queries_in_both() -> None:
    # The premise of the comparison above: pytrec_eval's default equals ours.
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}}
    run = {"a": {"d1": 1.0}, "c": {"d2": 1.0}}
    assert set(trec_eval(qrels, run, rel=1, judged_only=False)) == {"a"}
    assert rankmeter.evaluate(qrels, run, METRICS).per_query.query_ids == ("a",)


# --- the real Cranfield collection ------------------------------------------------------------

CRANFIELD_CUTOFFS = "1,5,10,20,100,1000"
CRANFIELD_MEASURES = [
    m.replace(CUTOFFS, CRANFIELD_CUTOFFS) if CUTOFFS in m else m for m in TREC_MEASURES
]
CRANFIELD_METRICS = parse_metrics(CRANFIELD_MEASURES)
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "has", "have", "in"}
    | {"is", "it", "of", "on", "or", "that", "the", "this", "to", "was", "what", "which", "with"}
)


def _tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if t not in _STOP and len(t) > 1}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def cranfield_data(cranfield: Path) -> dict[str, Any]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (cranfield / "qrels.trec").read_text().splitlines():
        if line.strip():
            q, _, doc, grade = line.split()
            qrels.setdefault(q, {})[doc] = int(grade)
    docs = {
        d["_id"]: _tokens(d.get("title", "") + " " + d.get("text", ""))
        for d in _read_jsonl(cranfield / "corpus.jsonl")
    }
    queries = {q["_id"]: _tokens(q["text"]) for q in _read_jsonl(cranfield / "queries.jsonl")}
    return {"qrels": qrels, "docs": docs, "queries": queries}


def _random_run(data: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Seeded: per query 150 random documents plus each judged one with probability 1/2,
    scores in steps of 1/8 (exact in float32, many ties)."""
    rng = random.Random(20240501)
    doc_ids = sorted(data["docs"])
    run: dict[str, dict[str, float]] = {}
    for q in sorted(data["queries"], key=int):
        chosen = set(rng.sample(doc_ids, 150))
        chosen |= {d for d in data["qrels"].get(q, {}) if rng.random() < 0.5}
        run[q] = {d: rng.randrange(0, 40) / 8 for d in sorted(chosen)}
    return run


def _overlap_run(data: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Term overlap: the number of distinct query terms in the document (integer: huge ties)."""
    run: dict[str, dict[str, float]] = {}
    for q, terms in data["queries"].items():
        scores = {d: float(len(terms & tokens)) for d, tokens in data["docs"].items()}
        run[q] = {d: s for d, s in scores.items() if s >= 2}
    return run


@pytest.mark.parametrize("make_run", [_random_run, _overlap_run], ids=["random", "overlap"])
@pytest.mark.parametrize("rel", [1, 2])
def test_cranfield_matches_trec_eval(
    cranfield_data: dict[str, Any], make_run: Any, rel: int
) -> None:
    qrels = cranfield_data["qrels"]
    run = make_run(cranfield_data)
    assert len(run) == 225
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(CRANFIELD_MEASURES), relevance_level=rel)
    expected = evaluator.evaluate(run)
    assert len(expected) == 225
    result = rankmeter.evaluate(qrels, run, CRANFIELD_METRICS, rel=rel)
    got = result.per_query.to_dict()
    assert set(got) == set(expected)
    mismatches = []
    for metric in CRANFIELD_METRICS:
        name, trec = metric.label, metric.trec_name
        for q, row in expected.items():
            if abs(got[q][name] - row[trec]) > 1e-9:
                mismatches.append((name, q, got[q][name], row[trec]))
        values = [row[trec] for row in expected.values()]
        mean = sum(values) if metric.spec.aggregate == "sum" else sum(values) / len(values)
        assert result.metrics[name] == pytest.approx(mean, abs=1e-9, rel=0), name
    assert not mismatches, mismatches[:10]


def test_cranfield_from_the_trec_file_matches_the_dict(
    cranfield: Path, cranfield_data: Any
) -> None:
    # The file reader and the dict reader give the same evaluation.
    run = _overlap_run(cranfield_data)
    from_dict = rankmeter.evaluate(cranfield_data["qrels"], run, CRANFIELD_METRICS)
    from_file = rankmeter.evaluate(cranfield / "qrels.trec", run, CRANFIELD_METRICS)
    assert from_file.per_query.to_dict() == from_dict.per_query.to_dict()
