"""Results and the policies they carry: one Policies object, checked where it is made; run
names made unique in one place."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import PolicyError
from rankmeter.results import EvalResults, Policies, unique_names


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"rel": float("nan")},
            r"^rel=nan must be a finite number \(the minimum relevant grade\)$",
        ),
        ({"rel": "1"}, r"^rel='1' must be a finite number \(the minimum relevant grade\)$"),
        ({"rel": True}, r"^rel=True must be a finite number"),
        ({"include_missing": 1}, r"^include_missing=1 must be True or False$"),
        ({"judged_only": "yes"}, r"^judged_only='yes' must be True or False$"),
        ({"ties": "random"}, r"^ties='random' must be one of 'trec_eval', 'input'"),
    ],
)
def test_policies_check_their_values(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        Policies(**changes)


def test_policies_keep_rel_as_given_in_python_numbers() -> None:
    assert Policies(rel=np.int64(2)).rel == 2 and type(Policies(rel=np.int64(2)).rel) is int
    assert type(Policies(rel=np.float64(1.5)).rel) is float
    assert type(Policies(rel=1).rel) is int and type(Policies(rel=1.0).rel) is float


def test_one_policy_sentence() -> None:
    policies = Policies(rel=2, judged_only=True)
    assert policies.describe() == (
        "relevant: grade >= 2; ties: trec_eval; queries in both run and qrels; "
        "judged documents only"
    )
    assert Policies(include_missing=True).describe().endswith("; all judged queries")
    assert policies.describe(queries="") == (
        "relevant: grade >= 2; ties: trec_eval; judged documents only"
    )
    assert policies.describe(queries="queries: some") == (
        "relevant: grade >= 2; ties: trec_eval; queries: some; judged documents only"
    )


def test_evaluate_checks_stream() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(PolicyError, match=r"^stream='yes' must be True or False$"):
        rankmeter.evaluate(qrels, run, "AP", stream="yes")  # type: ignore[arg-type]


def test_unique_names_by_file_else_by_number() -> None:
    assert unique_names(["a", "b"], ["x", "x"]) == ["a", "b"]
    assert unique_names(["a", "a", "b"], ["1.run", "2.run", "3.run"]) == ["1.run", "2.run", "b"]
    assert unique_names(["a", "a"], ["same", "same"]) == ["a#1", "a#2"]
    assert unique_names(["a", "a"], ["<dict>", "x.run"]) == ["a#1", "a#2"]


def test_results_evaluated_one_by_one_are_named_as_evaluate_names_them() -> None:
    qrels = {"q": {"a": 1}}
    runs = [{"q": {"a": 1.0}}, {"q": {"b": 1.0}}]
    together = rankmeter.evaluate(qrels, runs, "AP")
    one_by_one = EvalResults.named(
        [rankmeter.evaluate(qrels, r, "AP") for r in runs], ["<dict>", "<dict>"]
    )
    assert list(one_by_one) == list(together) == ["run#1", "run#2"]
    assert [r.metrics["AP"] for r in one_by_one.results] == [1.0, 0.0]


def test_judged_cutoff_is_the_largest_cutoff_asked_or_10() -> None:
    from rankmeter.metrics import parse_metrics
    from rankmeter.results import judged_cutoff

    assert judged_cutoff(parse_metrics(["nDCG@10", "R@100", "AP"])) == 100
    assert judged_cutoff(parse_metrics(["P@5"])) == 5
    assert judged_cutoff(parse_metrics(["AP", "RR", "Rprec"])) == 10


def test_judged_warnings_of_several_runs() -> None:
    import pytest

    import rankmeter
    from rankmeter.errors import PolicyError

    qrels = {"q": {"a": 1, "n": 0}}  # (n: judged not relevant, so not relevant-only qrels)
    results = rankmeter.evaluate(qrels, {"x": {"q": {"a": 2.0, "z": 1.0}}, "y": {"q": {"a": 1.0}}})
    assert results["x"].judged == 0.5 and results["y"].judged == 1.0
    assert [w.run for w in results.judged_warnings()] == ["x"]
    assert results.judged_warnings(0.5) == () and results.judged_warnings(0) == ()
    warning = results["x"].judged_warning(0.6)
    assert warning is not None and warning.to_dict() == {
        "run": "x",
        "k": 100,
        "judged": 0.5,
        "threshold": 0.6,
    }
    with pytest.raises(PolicyError, match=r"judged_below=-1 must be a number from 0 to 1"):
        results.judged_warnings(-1)


def test_judged_counts_only_the_queries_a_run_answered() -> None:
    import rankmeter

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    missing = rankmeter.evaluate(qrels, run, ["P@1"], include_missing=True)
    assert missing.n_queries == 2 and missing.judged == 1.0


def test_per_query_worst_lists_the_lowest_values_first_ties_in_query_order() -> None:
    qrels = {"q4": {"a": 1}, "q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {
        "q1": {"b": 2.0, "a": 1.0},  # RR 1/2
        "q2": {"a": 1.0},  # RR 1
        "q3": {"b": 1.0},  # RR 0
        "q4": {"b": 1.0},  # RR 0, after q3 in the results' query order
    }
    per_query = rankmeter.evaluate(qrels, run, ["RR", "P@1"]).per_query
    assert per_query.worst("RR", 3) == (("q3", 0.0), ("q4", 0.0), ("q1", 0.5))
    assert per_query.worst("MRR", 10) == per_query.worst("RR", 4)  # any name; n beyond the queries
    assert [q for q, _ in per_query.worst("P@1", 2)] == ["q1", "q3"]


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_per_query_worst_checks_n(n: Any) -> None:
    per_query = rankmeter.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "RR").per_query
    with pytest.raises(PolicyError, match=r"^worst=.* must be an integer >= 1 \(how many"):
        per_query.worst("RR", n)


def test_a_result_knows_its_runs_depth_read_whole_or_streamed(tmp_path: Any) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"x": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 1.0}, "q9": {"a": 1.0, "b": 2.0}}
    result = rankmeter.evaluate(qrels, run, "RR", include_missing=True)
    assert result.depth == 3  # the deepest query the evaluation read (q9 is not judged)
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 1 t\n")
    assert rankmeter.evaluate(qrels, str(path), "RR", stream=True).depth == 2


def test_several_runs_say_how_to_take_one_run() -> None:
    """Issue 22, item 22: `results.per_query` on several runs' results says to take one by
    name (`results["bm25"].per_query`), and every run's result is there by its name."""
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    runs = {"bm25": {"q1": {"d1": 1.0}}, "dense": {"q1": {"d2": 1.0}, "q2": {"d2": 1.0}}}
    results = rankmeter.evaluate(qrels, runs, ["P@1"])
    assert results["bm25"].per_query.to_dict() == {"q1": {"P@1": 1.0}}
    for name in ("per_query", "metrics", "run", "n_queries"):
        expected = (
            f"'{name}' is one run's: these are the results of 2 runs ('bm25', 'dense'); take "
            f"one by name, e.g. results['bm25'].{name}, or loop over results.items()"
        )
        with pytest.raises(AttributeError, match=f"^{re.escape(expected)}$"):
            getattr(results, name)
    assert not hasattr(results, "per_query")
    with pytest.raises(AttributeError, match="'EvalResults' object has no attribute 'nope'"):
        results.nope  # type: ignore[attr-defined]  # noqa: B018
    assert results.measures == results["dense"].measures  # what several runs share still works
