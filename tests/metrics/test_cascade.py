"""ERR, nERR, RBP with its residual and Compat as a user meets them: explanations rank by rank,
the grade scale, the batch a query is evaluated in, and the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankmeter
from rankmeter.cli import main
from rankmeter.errors import MetricError
from rankmeter.metrics.err import exclusive_cumprod

QRELS = {"q": {"d1": 2, "d2": 0, "d3": 4, "d5": -1, "d7": 1}}
RUN = {"q": {"d1": 5.0, "d2": 4.0, "d9": 3.0, "d3": 2.0, "d5": 1.0}}


def test_the_segmented_product_is_each_groups_own() -> None:
    values = np.array([0.5, 0.25, 2.0, 3.0, 0.1, 0.9, 0.9, 0.9])
    groups = np.array([0, 0, 0, 1, 2, 2, 2, 2])
    expected = [1, 0.5, 0.125, 1, 1, 0.1, 0.09, 0.081]
    assert np.allclose(exclusive_cumprod(values, groups), expected, rtol=0, atol=1e-15)
    assert len(exclusive_cumprod(np.zeros(0), np.zeros(0, dtype=np.int64))) == 0


@pytest.mark.parametrize("metric", ["ERR@10", "nERR@10", "RBP(p=0.5)", "RBP_resid", "Compat"])
def test_a_query_is_worth_the_same_alone_and_among_others(metric: str) -> None:
    """ERR's products and Compat's sums are per query: evaluating a query alone or with
    others gives the same bits."""
    many = dict(QRELS, a={"x": 3, "y": 1}, b={"z": 2})
    runs = dict(RUN, a={f"u{i}": float(i) for i in range(40)} | {"x": 0.5, "y": 9.0}, b={"z": 1})
    alone = rankmeter.evaluate(QRELS, RUN, [metric]).per_query.to_dict()["q"][metric]
    together = rankmeter.evaluate(many, runs, [metric]).per_query.to_dict()["q"][metric]
    assert alone == together


def test_err_explained_rank_by_rank() -> None:
    e = rankmeter.explain(QRELS, RUN, "q", "ERR@10")
    assert e.value == pytest.approx(3 / 16 + (13 / 16) * (15 / 16) / 4, abs=1e-12)
    assert e.columns == ("rank", "doc", "score", "grade", "stop", "reach", "contribution")
    rows = {row["doc"]: row for row in e.rows}
    assert rows["d1"]["stop"] == 3 / 16 and rows["d1"]["reach"] == 1
    assert rows["d3"]["stop"] == 15 / 16 and rows["d3"]["reach"] == 13 / 16
    assert rows["d9"]["stop"] == 0 and rows["d5"]["stop"] == 0  # unjudged, pooled
    assert sum(row["contribution"] for row in e.rows) == pytest.approx(e.value, abs=1e-12)
    assert e.steps[-1].startswith("ERR@10 = 0.188*1/1 + 0.938*0.812/4 = 0.38")


def test_nerr_explained_with_its_ideal_ordering() -> None:
    e = rankmeter.explain(QRELS, RUN, "q", "nERR@10")
    assert [row["grade"] for row in e.ideal_rows] == [4, 2, 1]
    ideal = 15 / 16 + (1 / 16) * (3 / 16) / 2 + (1 / 16) * (13 / 16) * (1 / 16) / 3
    assert e.steps[-1] == f"nERR@10 = 0.38 / {round(ideal, 2)} = {round(e.value, 2)}"
    err = 3 / 16 + (13 / 16) * (15 / 16) / 4
    assert e.value == pytest.approx(err / ideal, abs=1e-12)


def test_rbp_explained_with_the_weights_and_the_residual() -> None:
    e = rankmeter.explain(QRELS, RUN, "q", "RBP(p=0.5)")
    weights = [row["weight"] for row in e.rows]
    assert weights == [0.5, 0.25, 0.125, 0.0625, 0.03125]
    assert [row["residual"] for row in e.rows] == [None, None, 0.125, None, 0.03125]
    assert e.value == 0.5 + 0.0625
    assert "2 unjudged ranks weigh 0.16" in e.steps[2] and "p^5 = 0.031" in e.steps[2]
    assert e.steps[-1].endswith("RBP would be at most 0.56 + 0.19 = 0.75")
    resid = rankmeter.explain(QRELS, RUN, "q", "RBP_resid(p=0.5)")
    assert resid.value == 0.125 + 0.03125 + 0.5**5
    assert resid.steps[-1] == "RBP_resid(p=0.5) = 0.19"


def test_compat_explained_with_the_ideal_ranks_and_overlaps() -> None:
    e = rankmeter.explain(QRELS, RUN, "q", "Compat(p=0.5)")
    assert [row["ideal_rank"] for row in e.rows] == [2, None, None, 1, None]
    assert [row["overlap"] for row in e.rows] == [0, 1, 1, 2, 2]
    # depth max(5 results, 3 ideal) = 5
    score = 0.5 / 2 + 0.25 / 3 + 0.125 * 2 / 4 + 0.0625 * 2 / 5
    best = 1 + 0.5 + 0.25 + 0.125 * 3 / 4 + 0.0625 * 3 / 5
    assert e.value == pytest.approx(score / best, abs=1e-12)
    assert e.steps[-1] == f"Compat(p=0.5) = {round(score, 2)} / {round(best, 2)} = 0.22"


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        ("ERR@3", 7 / 16),
        ("nERR", None),
        ("RBP(p=0.5,rel=2)@3", 0.5),
        ("RBP_resid(p=0.5)", 0.5 * 0.5**2 + 0.5**5),
        ("Compat", None),
    ],
)
def test_explained_from_grades_alone(metric: str, value: float | None) -> None:
    e = rankmeter.explain_grades("3,0,?,2,1", metric)
    assert e.steps and e.rows
    if value is not None:
        assert e.value == pytest.approx(value, abs=1e-12)
    # the same ranking as a run gives the same number
    qrels = {"q": {"a": 3, "b": 0, "d": 2, "e": 1}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    (from_run,) = rankmeter.evaluate(qrels, run, [metric]).per_query[metric]
    assert e.value == pytest.approx(from_run, abs=1e-12)


def test_a_grade_above_the_scale_is_an_error_that_names_it() -> None:
    qrels = {"q1": {"a": 5, "b": 1}}
    with pytest.raises(
        MetricError,
        match=r"^ERR@10: a judgment of grade 5 \(of query 'q1'\) is above max_grade=4 "
        r"\(ERR's scale; gdeval's is 0-4\): give the top grade of your scale, e\.g\. "
        r"ERR\(max_grade=5\)@10$",
    ):
        rankmeter.evaluate(qrels, {"q1": {"b": 1.0}}, ["ERR@10"])
    # with the scale given, the grade is read on it
    values = rankmeter.evaluate(qrels, {"q1": {"a": 1.0}}, ["ERR(max_grade=5)"]).per_query
    assert values["ERR(max_grade=5)"][0] == 31 / 32
    with pytest.raises(MetricError, match=r"a judgment of grade 2.5 \(in the grades given\)"):
        rankmeter.explain_grades("2.5,1", "nERR(max_grade=2)")


def test_the_suggested_scale_holds_every_grade_and_is_one_err_takes() -> None:
    """The fix a grade above the scale suggests must work: the top grade of all the
    judgments (not the first one above), and no max_grade beyond what ERR takes (1000)."""
    qrels = {"q1": {"a": 5, "b": 1}, "q2": {"c": 7.5}}
    with pytest.raises(MetricError, match=r"grade 7\.5 \(of query 'q2'\).*ERR\(max_grade=8\)@10$"):
        rankmeter.evaluate(qrels, {"q1": {"b": 1.0}, "q2": {"c": 1.0}}, ["ERR@10"])
    values = rankmeter.evaluate(
        qrels, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, ["ERR(max_grade=8)@10"]
    )
    assert values["ERR(max_grade=8)@10"] > 0
    for grade in (1001, 1e300):
        with pytest.raises(MetricError) as caught:
            rankmeter.evaluate({"q": {"a": grade}}, {"q": {"a": 1.0}}, ["nERR@5"])
        message = str(caught.value)
        assert "max_grade=" not in message.split("e.g.")[-1] or "e.g." not in message
        assert "at most 1000" in message and "rescale" in message


def test_rbp_is_binary_at_the_evaluations_rel() -> None:
    run = {"q": {"d3": 3.0, "d1": 2.0, "d7": 1.0}}
    for rel, expected in ((1, 0.2 * (1 + 0.8 + 0.64)), (2, 0.2 * (1 + 0.8)), (4, 0.2)):
        (value,) = rankmeter.evaluate(QRELS, run, ["RBP"], rel=rel).per_query["RBP"]
        assert value == pytest.approx(expected, abs=1e-12)


def test_the_residual_of_an_empty_ranking_is_one() -> None:
    qrels = {"q": {"a": 1}, "r": {"b": 1}}
    result = rankmeter.evaluate(qrels, {"q": {"a": 1.0}}, ["RBP_resid"], include_missing=True)
    assert result.per_query.to_dict()["r"]["RBP_resid"] == 1.0
    assert result.per_query.to_dict()["q"]["RBP_resid"] == pytest.approx(0.8, abs=1e-15)


def _run(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def _files(tmp_path: Path) -> tuple[str, str]:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in QRELS["q"].items()))
    run.write_text(
        "".join(f"q Q0 {d} {i + 1} {s} r\n" for i, (d, s) in enumerate(RUN["q"].items()))
    )
    return str(qrels), str(run)


def test_the_command_line_evaluates_and_explains_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = _files(tmp_path)
    names = ["ERR@10", "nERR@10", "RBP(p=0.8,rel=2)", "rbp_resid", "Compat(p=0.95)"]
    args = [a for name in names for a in ("-m", name)]
    assert _run(["evaluate", qrels, run, *args, "--per-query", "-f", "tsv"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split("\t")
    assert all(name in header for name in names), header
    assert _run(["explain", qrels, run, "--query", "q", "-m", "RBP_resid(p=0.5)"]) == 0
    out = capsys.readouterr().out
    assert "RBP_resid(p=0.5) for query 'q' in run 'r' = 0.1875" in out
    assert "residual" in out


def test_the_command_line_refuses_a_grade_above_the_scale_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = _files(tmp_path)
    assert _run(["evaluate", qrels, run, "-m", "ERR(max_grade=3)@5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "ERR(max_grade=3)@5: a judgment of grade 4 (of query 'q') is above max_grade=3" in err


def test_compare_reads_them_as_evaluate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = {"q": {"d3": 3.0, "d1": 2.0, "d7": 1.0}}
    names = ["ERR@10", "nERR@10", "RBP(p=0.8,rel=2)", "RBP_resid", "Compat"]
    comparison = rankmeter.compare(QRELS, {"a": RUN, "b": other}, names, resamples=200)
    for name in names:
        for run, ranking in (("a", RUN), ("b", other)):
            (value,) = rankmeter.evaluate(QRELS, ranking, [name]).per_query[name]
            assert comparison.mean(run, name).mean == pytest.approx(value, abs=1e-12)
    qrels, run = _files(tmp_path)
    second = tmp_path / "other"
    second.write_text("q Q0 d3 1 3 b\nq Q0 d1 2 2 b\nq Q0 d7 3 1 b\n")
    args = [a for name in names for a in ("-m", name)]
    assert _run(["compare", qrels, run, str(second), *args, "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in names)


def test_a_long_ideal_ordering_is_listed_in_part_and_says_so() -> None:
    qrels = {"q": {f"d{i}": (i % 4) + 1 for i in range(30)}}
    run = {"q": {f"d{i}": float(i) for i in range(30)}}
    e = rankmeter.explain(qrels, run, "q", "nERR@25")
    assert len(e.ideal_rows) == 20
    assert e.steps[-1] == "the ideal ordering lists its first 20 of 25 ranks that can stop the user"
