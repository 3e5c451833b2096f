"""A registry-driven invariance suite: every spec in SPECS is checked, so a new metric is too.

Generic properties (range, integral counts, aggregation, order of the input, renaming ids,
result shape, immutability) run over every spec as it is. Properties that hold only for some
metrics (value on a perfect ranking, monotone in k, the whole list as a cutoff at infinity) are
declared per metric in ``FACTS``; a test fails until a new metric declares its facts.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter
from rankmeter import Qrels, Run
from rankmeter.metrics import SPECS, Metric, MetricSpec

Qrel = dict[str, dict[str, float]]
RunDict = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Shape:
    """What a perfect ranking (judged docs by grade descending, then unjudged docs) looks like."""

    relevant: int  # R: judgments with grade >= rel
    judged: int  # J: judgments with grade >= 0
    returned: int  # n: results in the ranking
    has_gain: bool  # some judgment has a grade > 0
    cutoff: int | None


def _frac(num: float, den: float) -> float:
    return num / den if den else 0.0


def _perfect_infap(relevant: int) -> float:
    """infAP of R relevant results on top: every one judged, nothing unjudged above."""
    eps = 0.00001
    terms = [1.0] + [
        1 / k + ((k - 1) / k) * ((k - 1) / (k - 1)) * ((k - 1 + eps) / (k - 1 + 2 * eps))
        for k in range(2, relevant + 1)
    ]
    return _frac(sum(terms), relevant) if relevant else 0.0


def _upto(shape: Shape, count: int) -> int:
    return count if shape.cutoff is None else min(count, shape.cutoff)


@dataclass(frozen=True)
class Facts:
    #: values always in [0, 1] (mean-aggregated metrics that are not bounded say so)
    bounded: bool
    #: non-decreasing in the cutoff k
    monotone: bool
    #: value at a cutoff beyond the list and the judgments equals the value without a cutoff
    cutoff_at_infinity_is_whole_list: bool
    #: the value on a perfect ranking, or None where there is no closed form
    perfect: Callable[[Shape], float] | None


FACTS: dict[str, Facts] = {
    "P": Facts(
        bounded=True,
        monotone=False,  # P@1 = 1, P@2 = 1/2 when only the first is relevant
        cutoff_at_infinity_is_whole_list=False,  # P@k divides by k
        perfect=lambda s: _frac(_upto(s, s.relevant), s.cutoff or s.returned),
    ),
    "R": Facts(True, True, True, lambda s: _frac(_upto(s, s.relevant), s.relevant)),
    "nDCG": Facts(True, False, True, lambda s: 1.0 if s.has_gain else 0.0),
    "DCG": Facts(False, True, True, None),
    "RR": Facts(True, True, True, lambda s: 1.0 if s.relevant else 0.0),
    "AP": Facts(True, True, True, lambda s: _frac(_upto(s, s.relevant), s.relevant)),
    "R-Prec": Facts(True, False, False, lambda s: 1.0 if s.relevant else 0.0),
    "Bpref": Facts(True, False, False, lambda s: 1.0 if s.relevant else 0.0),
    "Success": Facts(True, True, True, lambda s: 1.0 if s.relevant else 0.0),
    "Judged": Facts(
        True,
        False,  # judged, unjudged: Judged@1 = 1, Judged@2 = 1/2
        True,  # Judged@k divides by min(k, returned)
        lambda s: _frac(_upto(s, s.judged), _upto(s, s.returned)),
    ),
    "NumRet": Facts(False, False, False, lambda s: float(s.returned)),
    "NumRel": Facts(False, False, False, lambda s: float(s.relevant)),
    "NumRelRet": Facts(False, True, True, lambda s: float(_upto(s, s.relevant))),
    "ERR": Facts(True, True, True, None),  # depends on the grades themselves
    "nERR": Facts(True, False, True, lambda s: 1.0 if s.has_gain else 0.0),
    "RBP": Facts(True, True, True, lambda s: 1.0 - 0.8 ** _upto(s, s.relevant)),
    # p^min(J, n, k) on a perfect ranking, but 1 (not 0) for an empty one: no rule here
    "RBP_resid": Facts(True, False, True, None),
    "Compat": Facts(True, False, False, lambda s: 1.0 if s.has_gain else 0.0),
    # Estimates from a sample may exceed 1 (a sampled document stands for 1/pi of them), so
    # they are not bounded; judged in full (as here) each is its twin: AP, nDCG, P.
    "statAP": Facts(False, True, True, lambda s: _frac(_upto(s, s.relevant), s.relevant)),
    "stat_nDCG": Facts(False, False, True, lambda s: 1.0 if s.has_gain else 0.0),
    "stat_P": Facts(
        False, False, False, lambda s: _frac(_upto(s, s.relevant), s.cutoff or s.returned)
    ),
    "infAP": Facts(True, False, False, lambda s: _perfect_infap(s.relevant)),
    "IPrec": Facts(True, False, False, lambda s: 1.0 if s.relevant else 0.0),
    "AP_11pt": Facts(True, False, False, lambda s: 1.0 if s.relevant else 0.0),
    # log(max(AP, 0.00001)) per query: in [log 0.00001, 0], not [0, 1]
    "GMAP": Facts(False, False, False, lambda s: 0.0 if s.relevant else math.log(0.00001)),
    # Diversity metrics on ordinary qrels (one subtopic a query): the greedy ideal is the
    # best ordering there; on subtopic qrels it may not be, so alpha_nDCG and nERR_IA are not
    # declared bounded.
    "alpha_nDCG": Facts(False, False, True, lambda s: 1.0 if s.relevant else 0.0),
    "ERR_IA": Facts(True, False, True, lambda s: _err_ia_perfect(s)),
    "nERR_IA": Facts(False, False, True, lambda s: 1.0 if s.relevant else 0.0),
    "StRecall": Facts(True, True, True, lambda s: 1.0 if s.relevant else 0.0),
}


def _err_ia_perfect(s: Shape) -> float:
    """ERR-IA (ndeval) of one subtopic whose R relevant documents come first: 0.5^(i-1)/i at
    ranks i <= R over the same at every rank to k."""
    k = s.cutoff or 1
    terms = [0.5**i / (i + 1) for i in range(k)]
    return sum(terms[: min(s.relevant, k)]) / sum(terms)


CUTOFFS = (1, 2, 3, 5, 10)
RECALL_LEVELS = (0, 0.1, 0.25, 0.5, 0.75, 1)


def variants(spec: MetricSpec) -> list[Metric]:
    """The spec without a cutoff (where allowed) and at a few cutoffs (where allowed)."""
    if spec.cutoff_kind == "recall level":  # @ is a recall level, not a rank
        return [Metric(spec, None, (("recall", r),)) for r in RECALL_LEVELS]
    out = [] if spec.cutoff == "required" else [Metric(spec)]
    if spec.cutoff != "none":
        out += [Metric(spec, k) for k in CUTOFFS]
    for p in spec.params:
        out += [Metric(spec, None, ((p.name, c),)) for c in p.choices if c != p.default]
    return out


ALL = tuple(m for spec in SPECS for m in variants(spec))


def test_every_spec_declares_its_facts() -> None:
    assert set(FACTS) == {spec.name for spec in SPECS}


def test_counts_and_sums_agree_in_the_specs() -> None:
    for spec in SPECS:
        assert spec.aggregate in ("mean", "sum", "geometric")
        if spec.aggregate == "geometric":  # log values: at most log 1 = 0
            assert spec.high == 0.0 and spec.low < 0 and not spec.integer
        if spec.aggregate == "sum":
            assert spec.integer, spec.name
            assert not FACTS[spec.name].bounded


def test_each_spec_knows_its_range() -> None:
    # The range a spec declares (read where stored values come back: the leaderboard) is the
    # one the range test below checks on random data.
    for spec in SPECS:
        if spec.aggregate == "geometric":
            continue  # checked above: [low, 0]
        assert spec.low == 0.0, spec.name
        assert spec.high == (1.0 if FACTS[spec.name].bounded else None), spec.name


# --- random collections -------------------------------------------------------------------------

DOCS = ["d1", "d2", "d3", "d9", "d10", "d11", "d20", "D5", "é", "a"]
UNJUDGED = ["u1", "u2", "u10"]
QUERIES = ["1", "2", "10", "x"]
GRADES = [-2, -1, 0, 0, 0.5, 1, 1, 1.5, 2, 3]
SCORES = [0.0, 0.5, 1.0, 2.0, -1.0, 3.25]


@st.composite
def collections(draw: st.DrawFn) -> tuple[Qrel, RunDict]:
    judged = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    ran = draw(st.lists(st.sampled_from(QUERIES), max_size=4, unique=True))
    common = draw(st.sampled_from(judged))
    ran = ran if common in ran else [*ran, common]
    qrels = {
        q: draw(
            st.dictionaries(st.sampled_from(DOCS), st.sampled_from(GRADES), min_size=1, max_size=7)
        )
        for q in judged
    }
    run = {
        q: draw(
            st.dictionaries(
                st.sampled_from(DOCS + UNJUDGED), st.sampled_from(SCORES), min_size=1, max_size=12
            )
        )
        for q in ran
    }
    return qrels, run


policies = st.fixed_dictionaries(
    {
        "rel": st.sampled_from([1, 2, 0.5]),
        "include_missing": st.booleans(),
        "judged_only": st.booleans(),
    }
)

SETTINGS = settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def evaluate(qrels: Any, run: Any, **kw: Any) -> rankmeter.EvalResult:
    return rankmeter.evaluate(qrels, run, ALL, **kw)


@SETTINGS
@given(data=collections(), policy=policies)
def test_range_integrality_and_aggregation(data: tuple[Qrel, RunDict], policy: dict) -> None:
    qrels, run = data
    result = evaluate(qrels, run, **policy)
    ideal = evaluate(qrels, _perfect(qrels, run), **policy)
    for metric in ALL:
        values = result.per_query[metric]
        assert np.all(np.isfinite(values)), metric
        assert np.all(values >= metric.spec.low), metric
        if metric.spec.high is not None:
            assert np.all(values <= metric.spec.high), metric
        elif metric.spec.name == "DCG":
            # no ranking gains more than the ideal one over the same judgments
            assert np.all(values <= ideal.per_query[metric] + 1e-12), metric
        if metric.spec.integer:
            assert np.array_equal(values, np.round(values)), metric
        mean = result.metrics[str(metric)]
        if metric.spec.aggregate == "sum":
            assert mean == values.sum(), metric
        elif metric.spec.aggregate == "geometric":
            assert mean == pytest.approx(math.exp(values.mean()) if len(values) else 0.0), metric
        else:
            assert mean == pytest.approx(values.mean(), abs=1e-12), metric


def _perfect(qrels: Qrel, run: RunDict) -> RunDict:
    """For each query of ``run``: its judged docs by grade descending, then unjudged docs."""
    out: RunDict = {}
    for q, docs in run.items():
        judged = sorted(
            ((g, d) for d, g in qrels.get(q, {}).items() if g >= 0), key=lambda x: -x[0]
        )
        order = [d for _, d in judged] + [u for u in UNJUDGED if u in docs or not judged]
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


@SETTINGS
@given(data=collections(), policy=policies)
def test_perfect_ranking(data: tuple[Qrel, RunDict], policy: dict) -> None:
    qrels, run = data
    perfect = _perfect(qrels, run)
    result = evaluate(qrels, perfect, **policy)
    values = result.per_query.to_dict()
    rel = policy["rel"]
    for q in result.per_query.query_ids:
        grades = [g for g in qrels[q].values() if g >= 0]
        ranking = perfect.get(q, {})
        n_judged_returned = sum(1 for d in ranking if d in qrels[q] and qrels[q][d] >= 0)
        returned = n_judged_returned if policy["judged_only"] else len(ranking)
        for metric in ALL:
            rule = FACTS[metric.spec.name].perfect
            if rule is None:
                continue
            shape = Shape(
                relevant=sum(g >= rel for g in grades),
                judged=n_judged_returned,
                returned=returned,
                has_gain=any(g > 0 for g in grades),
                cutoff=metric.cutoff,
            )
            if q not in perfect:  # include_missing: an empty ranking
                shape = dataclasses.replace(shape, returned=0, judged=0)
                # an empty ranking has the lowest value (0; GMAP's log 0.00001)
                expected = rule(shape) if metric.spec.name == "NumRel" else metric.spec.low
            else:
                expected = rule(shape)
            assert values[q][str(metric)] == pytest.approx(expected, abs=1e-12), (metric, q)


def test_perfect_ranking_of_a_graded_query_by_hand() -> None:
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "u": 0.5}}
    values = rankmeter.evaluate(qrels, run, ALL).per_query.to_dict()["q"]
    for name in ("nDCG", "nDCG@3", "AP", "RR", "R-Prec", "Bpref", "Success@1", "R"):
        assert values[name] == 1.0, name
    assert values["P"] == 3 / 5
    assert values["Judged"] == 4 / 5


@SETTINGS
@given(data=collections(), policy=policies)
def test_monotone_in_the_cutoff(data: tuple[Qrel, RunDict], policy: dict) -> None:
    qrels, run = data
    for spec in SPECS:
        if spec.cutoff == "none" or not FACTS[spec.name].monotone:
            continue
        metrics = [Metric(spec, k) for k in range(1, 15)]
        result = rankmeter.evaluate(qrels, run, metrics, **policy)
        table = np.stack([result.per_query[m] for m in metrics])
        assert np.all(np.diff(table, axis=0) >= -1e-12), spec.name


@SETTINGS
@given(data=collections(), policy=policies)
def test_cutoff_beyond_everything_is_the_whole_list(
    data: tuple[Qrel, RunDict], policy: dict
) -> None:
    qrels, run = data
    beyond = len(DOCS) + len(UNJUDGED) + 1
    specs = [
        s
        for s in SPECS
        if s.cutoff == "optional" and FACTS[s.name].cutoff_at_infinity_is_whole_list
    ]
    metrics = [m for s in specs for m in (Metric(s), Metric(s, beyond))]
    result = rankmeter.evaluate(qrels, run, metrics, **policy)
    for spec in specs:
        whole = result.per_query[Metric(spec)]
        assert np.allclose(whole, result.per_query[Metric(spec, beyond)], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "name",
    [s.name for s in SPECS if s.cutoff != "none" and not FACTS[s.name].monotone],
)
def test_non_monotone_metrics_have_a_counterexample(name: str) -> None:
    # Ranking: r (grade 2), n (grade 0, judged), u (unjudged), r2 (grade 1). R = 2.
    qrels = {"q": {"r": 2, "n": 0, "r2": 1, "z": 3}}
    run = {"q": {"r": 4.0, "n": 3.0, "u": 2.0, "r2": 1.0}}
    metrics = [f"{name}@{k}" for k in (1, 2, 3, 4)]
    values = list(rankmeter.evaluate(qrels, run, metrics).per_query.to_dict()["q"].values())
    assert any(b < a for a, b in itertools.pairwise(values)), values


# --- input order, ids and result shape --------------------------------------------------------


def _columns(table: dict[str, dict[str, float]]) -> list[tuple[str, str, float]]:
    return [(q, d, v) for q, docs in table.items() for d, v in docs.items()]


@SETTINGS
@given(data=collections(), policy=policies, seed=st.integers(0, 2**32 - 1))
def test_order_of_input_lines_does_not_matter(
    data: tuple[Qrel, RunDict], policy: dict, seed: int
) -> None:
    qrels, run = data
    before = evaluate(qrels, run, **policy)
    rng = random.Random(seed)
    q_rows, r_rows = _columns(qrels), _columns(run)
    rng.shuffle(q_rows)
    rng.shuffle(r_rows)
    shuffled_qrels = Qrels.from_columns(*zip(*q_rows, strict=True))
    shuffled_run = Run.from_columns(*zip(*r_rows, strict=True))
    after = evaluate(shuffled_qrels, shuffled_run, **policy)
    assert after.per_query.to_dict() == before.per_query.to_dict()
    assert dict(after.metrics) == pytest.approx(dict(before.metrics), abs=1e-12)


@SETTINGS
@given(data=collections(), policy=policies)
def test_renaming_ids_keeping_the_tie_order_does_not_matter(
    data: tuple[Qrel, RunDict], policy: dict
) -> None:
    qrels, run = data
    docs = sorted(
        {d for table in (qrels, run) for docs in table.values() for d in docs},
        key=lambda d: d.encode(),
    )
    # New ids in the same byte order; queries renamed freely.
    doc_name = {d: f"doc-{i:03d}" for i, d in enumerate(docs)}
    query_name = {q: f"topic {q}!" for q in QUERIES}

    def rename(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        return {query_name[q]: {doc_name[d]: v for d, v in ds.items()} for q, ds in table.items()}

    before = evaluate(qrels, run, **policy).per_query.to_dict()
    after = evaluate(rename(qrels), rename(run), **policy).per_query.to_dict()
    assert after == {query_name[q]: row for q, row in before.items()}


@SETTINGS
@given(data=collections(), policy=policies)
def test_every_metric_is_keyed_by_the_same_queries(
    data: tuple[Qrel, RunDict], policy: dict
) -> None:
    qrels, run = data
    together = evaluate(qrels, run, **policy)
    rows = together.per_query.to_dict()
    names = [str(m) for m in ALL]
    assert list(together.metrics) == names
    for row in rows.values():
        assert list(row) == names
    expected_queries = set(qrels) if policy["include_missing"] else set(qrels) & set(run)
    assert set(together.per_query.query_ids) == expected_queries
    for metric in ALL:  # evaluated alone: same queries, same values
        alone = rankmeter.evaluate(qrels, run, metric, **policy)
        assert alone.per_query.query_ids == together.per_query.query_ids
        assert np.array_equal(alone.per_query[metric], together.per_query[metric])


@SETTINGS
@given(data=collections(), policy=policies)
def test_evaluate_never_mutates_the_callers_dicts(data: tuple[Qrel, RunDict], policy: dict) -> None:
    qrels, run = data
    qrels_before, run_before = copy.deepcopy(qrels), copy.deepcopy(run)
    evaluate(qrels, run, **policy)
    rankmeter.evaluate(qrels, {"a": run, "b": run}, ["nDCG@10", "AP"], **policy)
    assert qrels == qrels_before
    assert run == run_before
    assert [list(d) for d in qrels.values()] == [list(d) for d in qrels_before.values()]
    assert [list(d) for d in run.values()] == [list(d) for d in run_before.values()]


def test_several_runs_equal_separate_evaluations() -> None:
    qrels = {"q": {"a": 1, "b": 2}, "p": {"c": 1}}
    runs = {"one": {"q": {"a": 1.0, "b": 0.5}}, "two": {"q": {"b": 1.0}, "p": {"c": 0.1}}}
    together = rankmeter.evaluate(qrels, runs, ALL)
    for name, run in runs.items():
        alone = rankmeter.evaluate(qrels, run, ALL)
        assert together[name].per_query.to_dict() == alone.per_query.to_dict()
        assert dict(together[name].metrics) == dict(alone.metrics)


def test_results_are_frozen() -> None:
    result = rankmeter.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ALL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.metrics = {}  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.run = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.policies.rel = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.per_query.query_ids = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.metrics["AP"] = 0.5  # type: ignore[index]
    with pytest.raises(TypeError):
        result.per_query.values["AP"] = np.zeros(1)  # type: ignore[index]
    column = result.per_query["AP"]
    with pytest.raises(ValueError, match="read-only"):
        column[0] = 0.5
    # exports are copies: changing them changes nothing inside
    exported = result.per_query.to_dict()
    exported["q"]["AP"] = -1.0
    assert result.per_query.to_dict()["q"]["AP"] == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.measures[0].spec.name = "X"  # type: ignore[misc]


@SETTINGS
@given(data=collections(), policy=policies)
def test_compact_join_gives_every_metric_the_same_numbers(
    data: tuple[Qrel, RunDict], policy: dict
) -> None:
    """evaluate joins compactly (judged results only, with their ranks and each query's
    number of results): every metric, at every cutoff, must give bit for bit the numbers of
    the full join (every result), and so must every curve of compute_at."""
    from rankmeter.metrics import join

    qrels, run = data
    loaded_qrels, loaded_run = Qrels.from_dict(qrels), Run.from_dict(run)
    full = join(loaded_qrels, loaded_run, **policy)
    compact = join(loaded_qrels, loaded_run, compact=True, **policy)
    # With judged_only (-J) the full join already holds only the judged results, ranked
    # among themselves: the compact join is that same join.
    assert compact.compact is not policy["judged_only"] and not full.compact
    assert compact.n_queries == full.n_queries
    assert np.array_equal(compact.num_ret, full.num_ret)
    assert np.array_equal(compact.qrels_rows, full.qrels_rows)
    assert len(compact.positions) == int(full.judged.sum())
    for metric in ALL:
        assert np.array_equal(metric.compute(compact), metric.compute(full)), metric
        if metric.spec.cutoff != "none":
            assert np.array_equal(
                metric.compute_at(compact, CUTOFFS), metric.compute_at(full, CUTOFFS)
            ), metric


def test_join_when_every_doc_id_hashes_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal hashes (here all of them) must never pair a result with another doc's judgment:
    the judged pairs are then found another way, and every metric is as before."""
    from rankmeter.data import hashing
    from rankmeter.data import run as run_module

    qrels = {"1": {"d1": 2, "d2": 0, "d3": 1}, "2": {"d1": 1, "x": 3}}
    run = {"1": {"d3": 3.0, "d9": 2.0, "d1": 1.0, "x": 0.5}, "2": {"d2": 1.0, "x": 0.0}}
    expected = evaluate(qrels, run).to_dict(per_query=True)

    def constant(strings: Any, *, chunk: int = 0) -> np.ndarray:
        return np.zeros(len(strings), dtype=np.uint64)

    monkeypatch.setattr(hashing, "string_hashes", constant)
    monkeypatch.setattr(run_module, "string_hashes", constant)
    assert not Qrels.from_dict(qrels).pair_lookup().exact
    assert evaluate(qrels, run).to_dict(per_query=True) == expected
