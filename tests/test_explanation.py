"""rankmeter.explain / explain_grades: the value is evaluate's, the table and steps are right."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from math import log2
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter
from rankmeter import Explanation, Metric, PolicyError, Qrels, RankmeterError, Run
from rankmeter.errors import MetricError
from rankmeter.explanation import Explanations
from rankmeter.metrics import SPECS, MetricSpec
from rankmeter.report.explanation import render_text

# --- every metric of the registry ------------------------------------------------------------


def variants(spec: MetricSpec) -> list[Metric]:
    """The spec without a cutoff (where allowed), at a few cutoffs, and with each parameter."""
    if spec.cutoff_kind == "recall level":  # IPrec@0.5: always at a recall level
        levels = [Metric(spec, None, (("recall", r),)) for r in (0, 0.5, 1)]
        return [*levels, Metric(spec, None, (("recall", 0.5), ("rel", 2)))]
    out = [] if spec.cutoff == "required" else [Metric(spec)]
    if spec.cutoff != "none":
        out += [Metric(spec, k) for k in (1, 3, 10)]
    for p in spec.params:
        if p.kind == "choice":
            out += [Metric(spec, 5, ((p.name, c),)) for c in p.choices if c != p.default]
        elif p.name == "rel":
            out.append(Metric(spec, None, (("rel", 2),)))
    return out


ALL = tuple(m for spec in SPECS for m in variants(spec))


def test_every_metric_in_the_registry_has_an_explain_hook() -> None:
    for spec in SPECS:
        assert spec.explain is not None, spec.name
        assert spec.uses and spec.uses[0] == "grade", spec.name


def random_collection(seed: int) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Graded and negative judgments, unjudged results, many tied scores, queries judged but
    without results and results without judgments."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)] + ["D5", "é", "a"]
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("1", "2", "3", "10", "x", "only-judged"):
        judged = rng.sample(docs, rng.randrange(1, 12))
        qrels[q] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3, 0.5]) for d in judged}
    for q in ("1", "2", "3", "10", "x", "only-run"):
        chosen = rng.sample(docs, rng.randrange(1, 25)) + [f"u{i}" for i in range(rng.randrange(4))]
        run[q] = {d: rng.randrange(0, 8) / 4 for d in chosen}
    return qrels, run


POLICIES = [
    {"rel": 1, "judged_only": False, "ties": "trec_eval"},
    {"rel": 2, "judged_only": False, "ties": "input"},
    {"rel": 1, "judged_only": True, "ties": "trec_eval"},
    {"rel": 0.5, "judged_only": True, "ties": "input"},
]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_value_is_exactly_evaluates_for_every_metric(seed: int, policy: dict[str, Any]) -> None:
    qrels_dict, run_dict = random_collection(seed)
    qrels = Qrels.from_dict(qrels_dict)
    run = Run.from_dict(run_dict, ties=policy["ties"])
    result = rankmeter.evaluate(qrels, run, ALL, **policy)
    assert set(result.per_query.query_ids) == {"1", "2", "3", "10", "x"}
    for m in ALL:
        values = result.per_query[m]
        for q, expected in zip(result.per_query.query_ids, values.tolist(), strict=True):
            e = rankmeter.explain(qrels, run, q, m, **policy)
            assert e.value == expected, (q, str(m), e.value, expected)
            assert e.evaluated
            assert e.metric == str(m)
            assert all(tuple(row) == e.columns for row in e.rows)


def test_value_from_files_is_evaluates_streamed_value(tmp_path: Any) -> None:
    # evaluate streams TREC run files chunk by chunk; explain reads them whole.
    qrels_dict, run_dict = random_collection(7)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels_dict.items() for d, g in docs.items()),
        encoding="utf-8",
    )
    run = tmp_path / "run.txt"
    lines = [
        f"{q} Q0 {d} {i + 1} {score} sys\n"
        for q, docs in run_dict.items()
        for i, (d, score) in enumerate(docs.items())
    ]
    run.write_text("".join(lines), encoding="utf-8")
    for judged_only in (False, True):
        result = rankmeter.evaluate(qrels, run, ALL, judged_only=judged_only, stream=True)
        for m in ALL:
            for q, expected in zip(result.per_query.query_ids, result.per_query[m], strict=True):
                e = rankmeter.explain(qrels, run, q, m, judged_only=judged_only)
                assert e.value == expected, (q, str(m))


@pytest.mark.parametrize("seed", [4, 5])
def test_a_judged_query_without_results_is_what_include_missing_gives(seed: int) -> None:
    qrels, run = random_collection(seed)
    result = rankmeter.evaluate(qrels, run, ALL, include_missing=True)
    row = result.per_query.query_ids.index("only-judged")
    for m in ALL:
        e = rankmeter.explain(qrels, run, "only-judged", m)
        assert e.value == result.per_query[m][row]
        assert not e.evaluated
        assert e.rows == ()
        assert "has no results for query 'only-judged'" in e.notes[0]
        assert "include_missing=True (trec_eval -c)" in e.notes[0]


def test_a_query_without_judgments_scores_as_all_unjudged() -> None:
    qrels, run = random_collection(6)
    n = len(run["only-run"])
    for m in ALL:
        e = rankmeter.explain(qrels, run, "only-run", m)
        assert not e.evaluated
        assert "the qrels have no judgments for query 'only-run'" in e.notes[0]
        # every rank unjudged: all of RBP's weight is residual; GMAP: log 0.00001
        expected = {"NumRet": float(n), "RBP_resid": 1.0}.get(m.spec.name, m.spec.low)
        assert e.value == expected, str(m)
        assert all(row["grade"] is None for row in e.rows)
    # -J drops every result: nothing is left
    assert rankmeter.explain(qrels, run, "only-run", "NumRet", judged_only=True).value == 0.0


grades_token = st.one_of(st.sampled_from([-1, 0, 0, 1, 2, 3]), st.none())


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    grades=st.lists(grades_token, min_size=1, max_size=12),
    extra=st.lists(st.sampled_from([0, 1, 2, 3]), max_size=5),
    rel=st.sampled_from([1, 2]),
)
def test_grades_by_hand_give_evaluates_value(
    grades: list[int | None], extra: list[int], rel: int
) -> None:
    # The same ranking as files: doc r<i> at rank i, judged as given; x<j> judged, not retrieved.
    qrels = {"q": {f"r{i}": g for i, g in enumerate(grades) if g is not None}}
    qrels["q"] |= {f"x{j}": g for j, g in enumerate(extra)}
    run = {"q": {f"r{i}": 100.0 - i for i in range(len(grades))}}
    judgments = [g for g in grades if g is not None and g >= 0] + extra
    if not qrels["q"]:
        qrels["q"] = {"never-retrieved": -1}
    result = rankmeter.evaluate(qrels, run, ALL, rel=rel).per_query.to_dict()["q"]
    for m in ALL:
        e = rankmeter.explain_grades(grades, m, judgments=judgments, rel=rel)
        assert e.value == result[str(m)], str(m)


# --- the lesson's worked examples ------------------------------------------------------------


def test_the_lesson_ndcg_example() -> None:
    e = rankmeter.explain_grades("3,0,2", "nDCG(gain=exp)@3")
    assert e.metric == "nDCG(gain=exp)@3"
    assert e.query is None
    assert e.value == pytest.approx(8.5 / (7 + 3 / log2(3)), abs=1e-15)
    assert round(e.value, 3) == 0.956
    assert e.columns == ("rank", "grade", "gain", "discount", "contribution")
    assert [(r["rank"], r["grade"], r["gain"]) for r in e.rows] == [(1, 3, 7), (2, 0, 0), (3, 2, 3)]
    assert [round(r["discount"], 3) for r in e.rows] == [1, 1.585, 2]
    assert [r["contribution"] for r in e.rows] == pytest.approx([7, 0, 1.5])
    assert [(r["rank"], r["grade"], r["gain"]) for r in e.ideal_rows] == [(1, 3, 7), (2, 2, 3)]
    assert "DCG@3 = 7/1 + 0/1.585 + 3/2 = 8.5" in e.steps
    assert "ideal ordering (the query's judgments, best first): grades 3, 2, 0" in e.steps
    assert "ideal DCG@3 = 7/1 + 3/1.585 + 0/2 = 8.89" in e.steps
    assert e.steps[-1] == "nDCG(gain=exp)@3 = 8.5 / 8.89 = 0.96"
    assert e.title == "nDCG(gain=exp)@3 for the grades given = 0.9558"


def test_the_lesson_dcg_with_linear_gain_is_4() -> None:
    e = rankmeter.explain_grades([3, 0, 2], "nDCG@3")
    assert "DCG@3 = 3/1 + 0/1.585 + 2/2 = 4.0" in e.steps
    assert e.steps[0].startswith("gain = grade (gain=linear, as trec_eval)")
    dcg = rankmeter.explain_grades([3, 0, 2], "DCG@3")
    assert dcg.value == 4.0
    assert dcg.ideal_rows == ()
    assert dcg.steps[-1] == "DCG@3 = 3/1 + 0/1.585 + 2/2 = 4.0"


def test_judgments_give_the_ideal_ordering_and_fill_in_missing_grades() -> None:
    e = rankmeter.explain_grades("3,0,2", "nDCG@3", judgments="3,2,2,1")
    idcg = 3 + 2 / log2(3) + 2 / 2
    assert e.value == pytest.approx(4.0 / idcg, abs=1e-15)
    assert "ideal DCG@3 = 3/1 + 2/1.585 + 2/2 = 5.26" in e.steps
    assert e.steps[-1] == "nDCG@3 = 4.0 / 5.26 = 0.76"
    # The ranked 0 is not among the judgments given: it is counted as judged anyway.
    assert e.notes == (
        "the judgments given lack grades the ranking has: 0; those results are counted as "
        "judged too",
    )
    recall = rankmeter.explain_grades("3,0,2", "R@3", judgments="3,2,2,1")
    assert recall.value == 0.5
    assert recall.steps == (
        "R@3 = 2 relevant in the top 3 / 4 relevant judged = 0.5",
        "2 relevant documents not in the top 3",
    )


LESSON = "1,0,1,0,0,0,0,0,0,1"


def test_hand_checked_ap() -> None:
    # Relevant at ranks 1, 3, 10: (1/1 + 2/3 + 3/10) / 3 = 0.6556
    e = rankmeter.explain_grades(LESSON, "AP")
    assert e.value == pytest.approx((1 + 2 / 3 + 3 / 10) / 3, abs=1e-15)
    assert e.steps == ("AP = (1/1 + 2/3 + 3/10) / 3 relevant judged = 1.967 / 3 = 0.66",)
    assert e.columns == ("rank", "grade", "relevant", "relevant_so_far", "precision")
    assert [r["relevant_so_far"] for r in e.rows] == [1, 1, 2, 2, 2, 2, 2, 2, 2, 3]
    precisions = [r["precision"] for r in e.rows]
    assert precisions[0] == 1 and precisions[2] == pytest.approx(2 / 3) and precisions[9] == 0.3
    assert precisions.count(None) == 7
    # A fourth relevant document that was not retrieved halves nothing but the divisor grows.
    four = rankmeter.explain_grades(LESSON, "AP", judgments="1,1,1,1")
    assert four.value == pytest.approx((1 + 2 / 3 + 3 / 10) / 4, abs=1e-15)
    assert four.steps[-1] == "1 relevant document not retrieved adds 0 but counts in the divisor"
    cut = rankmeter.explain_grades(LESSON, "AP@5")
    assert cut.steps == ("AP@5 = (1/1 + 2/3) / 3 relevant judged = 1.667 / 3 = 0.56",
                         "1 relevant document not retrieved in the top 5 adds 0 but counts in "
                         "the divisor")  # fmt: skip


def test_hand_checked_rr_and_precision() -> None:
    assert rankmeter.explain_grades(LESSON, "RR").steps == (
        "first relevant result at rank 1: RR = 1/1 = 1.0",
    )
    third = rankmeter.explain_grades("0,?,1,1", "RR")
    assert third.value == pytest.approx(1 / 3)
    assert third.steps == ("first relevant result at rank 3: RR = 1/3 = 0.33",)
    assert [r["grade"] for r in third.rows] == [0, None, 1, 1]
    none = rankmeter.explain_grades("0,0,1", "RR@2")
    assert none.value == 0
    assert none.steps == ("no relevant result in the top 2 (of 3 results returned): RR@2 = 0",)
    p = rankmeter.explain_grades(LESSON, "P@10")
    assert p.value == 0.3
    assert p.steps == ("P@10 = 3 relevant in the top 10 / 10 = 0.3",)
    short = rankmeter.explain_grades("1,0", "P@5")
    assert (
        short.steps[-1] == "only 2 results were returned; P@k still divides by k (trec_eval's P.k)"
    )


@pytest.mark.parametrize(
    ("metric", "grades", "judgments", "steps"),
    [
        ("R-Prec", "1,0,1,1", "1,1,1,0", (
            "R = 3 relevant judged (grade >= 1), so R-Prec looks at the top 3",
            "R-Prec = 2 relevant in the top 3 / 3 = 0.67",
        )),
        ("Bpref", "1,0,?,1,0", "1,1,1,0,0", (
            "R = 3 relevant judged (grade >= 1), N = 2 judged non-relevant; unjudged results "
            "are skipped",
            "each relevant result adds 1 - min(non-relevant above it, R) / min(N, R)",
            "Bpref = (1 + (1 - 1/2)) / 3 = 1.5 / 3 = 0.5",
        )),
        ("Success@2", "0,1", None, ("a relevant result at rank 2 is in the top 2: Success@2 = 1",)),
        ("Judged@3", "1,?,0,?", None, (
            "Judged@3 = 2 judged in the top 3 / min(3, 4 returned) = 2/3 = 0.67",
        )),
        ("NumRet", "1,?,0", None, ("NumRet = 3 results returned = 3",)),
        ("NumRel", "2,0", "2,2,1,0", (
            "NumRel = 3 of the query's 4 judgments have grade >= 1 (retrieved or not) = 3",
        )),
        ("NumRelRet@2", "1,0,1", None, ("NumRelRet@2 = relevant results in the top 2 = 1",)),
        ("P(rel=2)", "2,1,3,0", None, ("P(rel=2) = 2 relevant / 4 results returned = 0.5",)),
    ],
)  # fmt: skip
def test_steps_of_the_other_metrics(
    metric: str, grades: str, judgments: str | None, steps: tuple[str, ...]
) -> None:
    e = rankmeter.explain_grades(grades, metric, judgments=judgments)
    assert e.steps == steps


def test_bpref_table_shows_judged_and_what_each_relevant_result_adds() -> None:
    e = rankmeter.explain_grades("1,0,?,1,0", "Bpref", judgments="1,1,1,0,0")
    assert e.columns == ("rank", "grade", "judged", "relevant", "nonrel_above", "contribution")
    assert [r["judged"] for r in e.rows] == [True, True, False, True, True]
    assert [r["nonrel_above"] for r in e.rows] == [0, 0, 1, 1, 1]
    assert [r["contribution"] for r in e.rows] == [1, None, None, 0.5, None]


def test_a_query_without_relevant_judgments_says_why_it_is_0() -> None:
    assert rankmeter.explain_grades("0,0", "nDCG@2").steps[-1] == (
        "no judgment has a positive grade, so the ideal DCG@2 is 0: nDCG@2 = 0"
    )
    for metric in ("AP", "R", "R-Prec"):
        e = rankmeter.explain_grades("0,0", metric)
        assert e.value == 0
        assert "the query has no relevant judgments (grade >= 1)" in e.steps[0]


# --- what is shown -----------------------------------------------------------------------------


def test_long_rankings_show_the_top_and_every_contributing_rank() -> None:
    grades = ["0"] * 200
    grades[2] = grades[149] = "1"
    e = rankmeter.explain_grades(",".join(grades), "AP")
    assert [r["rank"] for r in e.rows] == [*range(1, 11), 150]
    assert e.notes == (
        "ranks 11-149: 139 results not shown: none of them changes the value",
        "ranks 151-200: 50 more results not shown: none of them changes the value",
    )
    text = render_text(e)
    assert re.search(r"^\s+10\s.*\n\s*\.\.\.\n\s+150\s", text, re.M)


def test_a_single_skipped_rank_is_shown_and_many_gaps_are_one_note() -> None:
    grades = ["0"] * 60
    for rank in (12, 20, 30, 40, 50):
        grades[rank - 1] = "1"
    e = rankmeter.explain_grades(",".join(grades), "AP")
    assert [r["rank"] for r in e.rows] == [*range(1, 13), 20, 30, 40, 50]
    assert e.notes[0] == (
        "34 results in 4 stretches between the ranks shown are not shown: none of them "
        "changes the value"
    )
    assert e.notes[1].startswith("ranks 51-60: 10 more results")


def test_a_cutoff_shows_the_top_k_and_says_how_many_were_cut_off() -> None:
    e = rankmeter.explain_grades(",".join(["1"] * 25), "P@5")
    assert [r["rank"] for r in e.rows] == [1, 2, 3, 4, 5]
    assert e.notes == ("20 more results below rank 5 are cut off: P@5 looks at the top 5 only",)
    big = rankmeter.explain_grades("0,1,0,0,0,0,0,0,0,0,0,0,0,0,0", "nDCG@100")
    assert [r["rank"] for r in big.rows] == list(range(1, 11))
    assert big.notes == ("ranks 11-15: 5 more results not shown: none of them changes the value",)


def test_long_dcg_sums_leave_out_zero_gains() -> None:
    grades = ["0"] * 30
    grades[0] = grades[20] = "2"
    e = rankmeter.explain_grades(",".join(grades), "DCG")
    assert e.steps[-1] == f"DCG = 2/1 + 2/4.459 = {round(2 + 2 / log2(22), 2)}"


# --- files -------------------------------------------------------------------------------------

QRELS = {"1": {"a": 2, "b": 1, "c": 0, "e": 1, "y": -1}, "2": {"x": 3}}
RUN = {"1": {"a": 3.0, "b": 2.0, "d": 2.0, "c": 0.5, "y": 0.25}, "2": {"x": 1.0}}


def test_files_show_docs_scores_grades_and_ties() -> None:
    e = rankmeter.explain(QRELS, RUN, "1", "nDCG@10")
    assert e.columns == ("rank", "doc", "score", "grade", "gain", "discount", "contribution")
    assert [(r["doc"], r["score"], r["grade"]) for r in e.rows] == [
        ("a", 3.0, 2),
        ("d", 2.0, None),
        ("b", 2.0, 1),
        ("c", 0.5, 0),
        ("y", 0.25, -1),
    ]
    assert e.query == "1" and e.run == "run" and e.evaluated
    assert e.policies == {"rel": 1, "judged_only": False, "ties": "trec_eval"}
    assert e.notes == (
        "results with equal scores (ranks 2, 3) are ordered by doc id, descending, as "
        "trec_eval does (ties=trec_eval)",
    )
    text = render_text(e)
    assert "unjudged" in text and "-1 (unjudged)" in text
    by_input = rankmeter.explain(QRELS, RUN, "1", "nDCG@10", ties="input")
    assert [r["doc"] for r in by_input.rows][:3] == ["a", "b", "d"]
    assert "in the order they were given (ties=input)" in by_input.notes[0]


def test_judged_only_drops_unjudged_results_and_says_so() -> None:
    e = rankmeter.explain(QRELS, RUN, "1", "P@3", judged_only=True)
    assert [r["doc"] for r in e.rows] == ["a", "b", "c"]
    assert e.value == 2 / 3
    assert e.notes[0] == (
        "judged_only (-J): 2 unjudged results were removed before scoring; ranks count after "
        "the removal"
    )


def test_paths_and_loaded_inputs_work_alike(tmp_path: Any) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    run = tmp_path / "run.txt"
    run.write_text("".join(
        f"{q} Q0 {d} {i + 1} {s} sys\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items())
    ))  # fmt: skip
    from_paths = rankmeter.explain(qrels, str(run), "1", "AP")
    from_dicts = rankmeter.explain(QRELS, RUN, "1", "AP")
    assert from_paths.value == from_dicts.value
    assert from_paths.rows == from_dicts.rows
    assert from_paths.run == "sys"


# --- renderers ---------------------------------------------------------------------------------


def test_to_dict_is_json_ready_and_complete() -> None:
    e = rankmeter.explain(QRELS, RUN, "1", "nDCG@3")
    data = json.loads(json.dumps(e.to_dict()))
    assert data["metric"] == "nDCG@3" and data["query"] == "1" and data["value"] == e.value
    assert data["columns"] == list(e.columns)
    assert data["rows"][0] == {"rank": 1, "doc": "a", "score": 3.0, "grade": 2, "gain": 2,
                               "discount": 1, "contribution": 2}  # fmt: skip
    assert data["ideal_columns"] == ["rank", "doc", "grade", "gain", "discount", "contribution"]
    assert len(data["ideal_rows"]) == 3
    assert data["steps"] == list(e.steps)
    assert data["anchor"] == "explain-run-1-nDCG-3"


def test_anchors_are_slugs_kept_apart_by_a_hash() -> None:
    e = rankmeter.explain({"<q&1>": {"a": 1}}, {"<q&1>": {"a": 1.0}}, "<q&1>", "P@2")
    assert re.fullmatch(r"explain-run-q-1-[0-9a-f]{8}-P-2", e.anchor)
    # Ids that differ only in characters the slug drops still get different anchors.
    other = rankmeter.explain({"q 1": {"a": 1}}, {"q 1": {"a": 1.0}}, "q 1", "P@2")
    assert other.anchor != e.anchor
    assert rankmeter.explain_grades("1", "RR").anchor == "explain-grades-RR"


def test_explanations_are_frozen() -> None:
    e = rankmeter.explain_grades("1", "RR")
    assert isinstance(e, Explanation)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.value = 0.0  # type: ignore[misc]


def test_importing_the_module_keeps_the_function() -> None:
    import rankmeter.explanation

    assert rankmeter.explain is rankmeter.explanation.explain
    assert callable(rankmeter.explain_grades)
    assert {"explain", "explain_grades", "Explanation"} <= set(rankmeter.__all__)


# --- errors ------------------------------------------------------------------------------------


def test_unknown_query_names_the_nearest_ids() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q10": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q11": {"a": 1.0}}
    with pytest.raises(
        RankmeterError,
        match=r"^query 'q12' is in neither the qrels \(<dict>\) nor the run 'run' \(<dict>\); "
        r"nearest known ids: 'q2', 'q1', 'q11'$",
    ):
        rankmeter.explain(qrels, run, "q12", "AP")
    numbers = {"7": {"a": 1}, "300": {"a": 1}, "12": {"a": 1}}
    with pytest.raises(RankmeterError, match=r"nearest known ids: '12', '7', '300'$"):
        rankmeter.explain(numbers, {"7": {"a": 1.0}}, "19", "AP")


@pytest.mark.parametrize(
    ("grades", "message"),
    [
        ("3,x,2", r"^grades: item 2, 'x', is not a grade; give numbers separated by commas, "
                  r"e\.g\. 3,0,2 \(\? for an unjudged result\)$"),
        ("", r"^grades: none given"),
        ("  ", r"^grades: none given"),
        ("1,inf", r"^grades: item 2, 'inf', is not a finite grade"),
        ("1,-Infinity", r"^grades: item 2, '-Infinity', is not a finite grade"),
        ("nan,1", r"^grades: item 1, 'nan', is not a finite grade"),
        ("1,2,1e400", r"^grades: item 3, '1e400', is not a finite grade"),
        ([1, "two"], r"^grades: item 2, 'two', is not a grade"),
        ([1, float("nan")], r"^grades: item 2, nan, is not a finite grade"),
        ([True], r"^grades: item 1, True, is not a grade"),
        (3, r"^grades: expected text like '3,0,2' or a list of numbers, not 3$"),
        # An empty item is a typo, never dropped: 3,,2 is not the list 3, 2.
        ("3,,2", r"^grades: item 2 is empty in '3,,2'; give numbers separated by commas"),
        ("3, ,2", r"^grades: item 2 is empty in '3, ,2'"),
        (",3", r"^grades: item 1 is empty in ',3'"),
        ("3,0,", r"^grades: item 3 is empty in '3,0,'"),
        (",", r"^grades: item 1 is empty in ','"),
        ("3 0,,2", r"^grades: item 3 is empty in '3 0,,2'"),
        ([1, ""], r"^grades: item 2 is empty"),
        # Numbers as written by hand, not whatever Python's float() takes.
        ("1_000", r"^grades: item 1, '1_000', is not a grade"),
        ("3,\uff12", r"^grades: item 2, '\uff12', is not a grade"),
        ("0x1", r"^grades: item 1, '0x1', is not a grade"),
    ],
)  # fmt: skip
def test_bad_grades_name_the_bad_token(grades: Any, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        rankmeter.explain_grades(grades, "AP")


@pytest.mark.parametrize(
    ("text", "grades"),
    [
        ("3,0,2", [3.0, 0.0, 2.0]),
        (" 3, 0 ,? , -1 ", [3.0, 0.0, None, -1.0]),
        ("3 0 2", [3.0, 0.0, 2.0]),
        ("+1,.5,2.,1e1,-0", [1.0, 0.5, 2.0, 10.0, 0.0]),
    ],
)
def test_grades_as_written_by_hand(text: str, grades: list[float | None]) -> None:
    assert rankmeter.explanation.parse_grades(text) == grades


def test_bad_judgments_metric_and_policies() -> None:
    with pytest.raises(PolicyError, match=r"^judgments: item 2, '\?', is not a grade here"):
        rankmeter.explain_grades("1", "AP", judgments="1,?")
    with pytest.raises(MetricError, match=r"unknown metric 'ndgc@10'; did you mean nDCG@10\?"):
        rankmeter.explain_grades("1", "ndgc@10")
    with pytest.raises(PolicyError, match=r"^rel='2' must be a finite number"):
        rankmeter.explain_grades("1", "AP", rel="2")  # type: ignore[arg-type]
    with pytest.raises(
        PolicyError,
        match=r"^ties='random' must be one of 'trec_eval', 'input' \(how equal scores are ordered\)$",
    ):
        rankmeter.explain(QRELS, RUN, "1", "AP", ties="random")
    with pytest.raises(PolicyError, match=r"^judged_only=1 must be True or False$"):
        rankmeter.explain(QRELS, RUN, "1", "AP", judged_only=1)  # type: ignore[arg-type]
    with pytest.raises(
        PolicyError, match=r"^query=None must be a string or an integer \(the query id\)$"
    ):
        rankmeter.explain(QRELS, RUN, None, "AP")  # type: ignore[arg-type]


# -- several metrics for one query: Explanations -------------------------------------------------


def test_explanations_of_a_query_are_each_metric_explained(tmp_path: Any) -> None:
    from rankmeter.explanation import Explanations

    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("".join(f"1 0 {d} {g}\n" for d, g in QRELS["1"].items()))
    run.write_text("".join(f"1 Q0 {d} 0 {s} sys\n" for d, s in RUN["1"].items()))
    metrics = ["nDCG@3", "AP", "MRR", "P(rel=2)@2"]
    explained = Explanations.for_query(qrels, run, "1", metrics, rel=1, judged_only=True)
    one_by_one = [rankmeter.explain(qrels, run, "1", m, judged_only=True) for m in metrics]
    assert list(explained) == one_by_one and len(explained) == 4
    assert explained[1].metric == "AP" and explained.run == "sys" and explained.query == "1"
    document = explained.to_dict()
    assert list(document) == ["query", "run", "policies", "metrics"]
    assert document["policies"] == {"rel": 1, "judged_only": True, "ties": "trec_eval"}
    assert document["metrics"]["MRR"] == one_by_one[2].to_dict()


def test_explanations_of_grades_and_the_default_metrics() -> None:
    from rankmeter.explanation import Explanations

    explained = Explanations.for_grades("3,0,?,-1", judgments="3,2")
    assert [e.metric for e in explained] == ["nDCG@10", "P@10", "R@100", "RR", "AP"]
    assert explained[-1] == rankmeter.explain_grades("3,0,?,-1", "AP", judgments="3,2")
    document = explained.to_dict()
    assert list(document) == ["query", "run", "grades", "policies", "metrics"]
    assert document["grades"] == [3, 0, None, -1] and document["query"] is None
    assert [e.metric for e in Explanations.for_grades([1, 0], "RR")] == ["RR"]


# --- issue 16: the ideal ordering names its documents; the query's text -------------------------


def test_the_ideal_ordering_names_the_judged_documents_best_first() -> None:
    qrels = {"q1": {"a": 1, "b": 3, "c": 2, "d": 0, "e": 2}}
    run = {"q1": {"a": 0.9, "d": 0.8}}
    e = rankmeter.explain(qrels, run, "q1", "nDCG@10")
    assert e.ideal_columns[:3] == ("rank", "doc", "grade")
    # Equal grades in doc id order: c before e.
    assert [(r["doc"], r["grade"]) for r in e.ideal_rows] == [
        ("b", 3),
        ("c", 2),
        ("e", 2),
        ("a", 1),
    ]
    by_hand = rankmeter.explain_grades("3,0,2", "nDCG@3")
    assert "doc" not in by_hand.ideal_columns  # no documents to name


def test_the_query_text_goes_with_every_explanation() -> None:
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 0.9}}
    explained = Explanations.for_query(qrels, run, "q1", ["RR", "P@1"], query_text="what is bm25")
    assert [e.query_text for e in explained] == ["what is bm25", "what is bm25"]
    assert explained.to_dict()["query_text"] == "what is bm25"
    assert explained[0].to_dict()["query_text"] == "what is bm25"
    plain = Explanations.for_query(qrels, run, "q1", ["RR"])
    assert "query_text" not in plain.to_dict() and plain[0].query_text is None
