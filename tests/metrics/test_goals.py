"""Metric advice by goal: every metric named parses back unchanged, every reason is one line."""

from __future__ import annotations

import dataclasses

import pytest

import rankmeter
from rankmeter.errors import MetricError
from rankmeter.metrics import GOALS, GoalMetric, metrics_for_goal, parse_metric
from rankmeter.metrics.goals import GOAL_NAMES, Goal, get_goal, goal_notes

VALID = "Valid goals: coverage, top-results, single-answer, candidate-pool, browsing, sampled-pool, robustness, ambiguous$"
ALL_METRICS = [(goal.name, m) for goal in GOALS.values() for m in goal.metrics]


def test_the_goals_in_order() -> None:
    assert GOAL_NAMES == (
        "coverage",
        "top-results",
        "single-answer",
        "candidate-pool",
        "browsing",
        "sampled-pool",
        "robustness",
        "ambiguous",
    )
    assert list(GOALS) == list(GOAL_NAMES)
    assert all(name == goal.name for name, goal in GOALS.items())


@pytest.mark.parametrize(
    ("goal", "item"), ALL_METRICS, ids=[f"{g}-{m.metric}" for g, m in ALL_METRICS]
)
def test_every_metric_is_canonical_and_round_trips(goal: str, item: GoalMetric) -> None:
    metric = parse_metric(item.metric)
    assert str(metric) == item.metric
    assert str(parse_metric(str(metric))) == item.metric


@pytest.mark.parametrize(
    ("goal", "item"), ALL_METRICS, ids=[f"{g}-{m.metric}" for g, m in ALL_METRICS]
)
def test_every_reason_is_one_honest_line(goal: str, item: GoalMetric) -> None:
    assert item.why.strip() == item.why and "\n" not in item.why
    assert 40 <= len(item.why) <= 160, item.why
    assert item.why.endswith((".", ")")), item.why
    assert "|" not in item.why and "[" not in item.why  # safe in Markdown tables and rich markup


@pytest.mark.parametrize("goal", GOAL_NAMES)
def test_every_goal_has_a_one_line_description_and_distinct_metrics(goal: str) -> None:
    found = GOALS[goal]
    assert "\n" not in found.description and found.description.endswith(".")
    assert 0 < len(found.description) <= 160
    names = [m.metric for m in found.metrics]
    assert names and len(set(names)) == len(names)
    assert metrics_for_goal(goal) == found.metrics


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("coverage", ["R@100", "R@1000", "AP", "IPrec@0.8"]),
        ("top-results", ["nDCG@10", "P@10"]),
        ("single-answer", ["RR@10", "Success@1", "Success@10"]),
        ("candidate-pool", ["R@100", "R@1000", "Judged@100"]),
        ("browsing", ["ERR@10", "RBP", "RBP_resid", "Compat"]),
        ("sampled-pool", ["statAP", "stat_nDCG@10", "stat_P@10", "infAP", "Bpref"]),
        ("robustness", ["GMAP", "AP"]),
        ("ambiguous", ["alpha_nDCG@20", "ERR_IA@20", "StRecall@20"]),
    ],
)
def test_the_advice(goal: str, expected: list[str]) -> None:
    assert [m.metric for m in metrics_for_goal(goal)] == expected


def test_metric_and_reason_unpack_as_a_pair() -> None:
    metric, why = metrics_for_goal("top-results")[0]
    assert metric == "nDCG@10" and "grades" in why


def test_goals_are_frozen() -> None:
    with pytest.raises(TypeError):
        GOALS["mine"] = GOALS["coverage"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        GOALS["coverage"].description = "x"  # type: ignore[misc]
    assert isinstance(GOALS["coverage"], Goal)
    assert isinstance(GOALS["coverage"].metrics, tuple)


@pytest.mark.parametrize(
    "spelling", ["top-results", "Top-Results", " top_results ", "top results", "TOP  RESULTS"]
)
def test_case_spaces_and_underscores_do_not_matter(spelling: str) -> None:
    assert get_goal(spelling) is GOALS["top-results"]


@pytest.mark.parametrize(
    ("given", "suggestion"),
    [
        ("coverge", "coverage"),
        ("tpo", "top-results"),
        ("top", "top-results"),
        ("single", "single-answer"),
        ("candidate_pol", "candidate-pool"),
        ("legal", "coverage"),  # a word only one goal's description uses
        ("recall", "coverage"),
        ("reranker", "candidate-pool"),
        ("navigational", "single-answer"),
        ("browse", "browsing"),
        ("scanning", "browsing"),
        ("sampled", "sampled-pool"),
        ("robust", "robustness"),
    ],
)
def test_unknown_goal_suggests_the_nearest(given: str, suggestion: str) -> None:
    with pytest.raises(
        MetricError, match=rf"^unknown goal '{given}'; did you mean {suggestion}\? {VALID}"
    ):
        metrics_for_goal(given)


@pytest.mark.parametrize("given", ["xyz", "search", "first"])
def test_unknown_goal_without_a_close_one_lists_the_goals(given: str) -> None:
    with pytest.raises(MetricError, match=rf"^unknown goal '{given}'\. {VALID}"):
        metrics_for_goal(given)


@pytest.mark.parametrize("given", ["", "   ", "-"])
def test_empty_goal(given: str) -> None:
    with pytest.raises(
        MetricError,
        match=r"^no goal given; choose one of coverage, top-results, single-answer, "
        r"candidate-pool, browsing, sampled-pool, robustness, ambiguous$",
    ):
        metrics_for_goal(given)


def test_a_goal_must_be_a_string() -> None:
    with pytest.raises(MetricError, match=r"^a goal must be a string, not int$"):
        metrics_for_goal(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("goal", GOAL_NAMES)
def test_every_goal_evaluates(goal: str) -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"y": 2.0, "x": 1.0}}
    names = [m.metric for m in metrics_for_goal(goal)]
    result = rankmeter.evaluate(qrels, run, names)
    assert list(result.metrics) == names
    assert all(0.0 <= value <= 1.0 for value in result.metrics.values())


# -- notes on the qrels and runs at hand (issue 16): graded labels, cutoffs past the runs' depth
GRADED = [0, 1, 2, 3, 1, 0]


def test_single_answer_on_graded_labels_suggests_rel_thresholds() -> None:
    (note,) = goal_notes(get_goal("single-answer"), grades=GRADED, rel=1)
    assert note.startswith(
        "the qrels are graded 0-3 and RR@10, Success@1, Success@10 count a grade-1 document "
        "(a partial match) as relevant"
    )
    assert "RR(rel=2)@10 (grade 2 or more)" in note and "RR(rel=3)@10 (grade 3 only)" in note
    assert "--rel" in note
    for suggested in ("RR(rel=2)@10", "RR(rel=3)@10"):
        assert str(parse_metric(suggested)) == suggested  # what the note says can be run


def test_coverage_on_graded_labels_suggests_rel_thresholds() -> None:
    (note,) = goal_notes(get_goal("coverage"), grades=[0, 1, 2], rel=1)
    assert "R@100, R@1000, AP, IPrec@0.8 count a grade-1 document" in note
    assert "R(rel=2)@100 (grade 2 only)" in note


@pytest.mark.parametrize(
    ("goal", "grades", "rel"),
    [
        ("single-answer", [0, 1, 1], 1),  # binary labels: nothing to choose
        ("single-answer", [0, 1, 2, 3], 2),  # --rel 2 already leaves grade 1 out
        ("top-results", [0, 1, 2, 3], 1),  # nDCG uses the grades themselves
        ("candidate-pool", [0, 1, 2, 3], 1),  # a reranker wants partial matches in its pool
    ],
)
def test_no_grade_note_where_the_grades_do_not_matter(
    goal: str, grades: list[float], rel: float
) -> None:
    assert goal_notes(get_goal(goal), grades=grades, rel=rel) == ()


def test_a_cutoff_beyond_the_runs_depth_is_noted() -> None:
    notes = goal_notes(get_goal("coverage"), grades=[0, 1], depths={"bm25": 100, "dense": 1000})
    assert notes == (
        "R@1000 reads the top 1000 but run 'bm25' has at most 100 results a query: for it "
        "R@1000 measures the top 100 only; compare runs at least 1000 deep, or use a cutoff "
        "of 100",
    )
    assert goal_notes(get_goal("coverage"), grades=[0, 1], depths={"bm25": 1000}) == ()
    shallow = goal_notes(get_goal("candidate-pool"), grades=[1], depths={"a": 50, "b": 80})
    assert [note.split(" reads")[0] for note in shallow] == ["R@100", "R@1000", "Judged@100"]
    assert shallow[0] == (
        "R@100 reads the top 100 but runs 'a' (50), 'b' (80) have fewer results a query: for "
        "them R@100 measures only as deep as they go; compare runs at least 100 deep, or use a "
        "cutoff of 50"
    )


def test_notes_name_a_metric_as_it_was_asked() -> None:
    asked = [parse_metric("recall.1000")]
    notes = goal_notes(get_goal("coverage"), grades=[1], depths={"r": 10}, measures=asked)
    assert [note.split(" reads")[0] for note in notes] == ["R@100", "recall.1000"]


def test_browsing_on_a_scale_below_errs_says_how_rarely_a_reader_stops() -> None:
    """On binary qrels ERR@10 reads grade 1 on gdeval's 0-4 scale: a relevant result stops the
    reader 1 time in 16, so ERR@10 is about a tenth of what the user model means; the goal
    says so and names the fix (MEDLINE's bm25: ERR@10 0.1192, ERR(max_grade=1)@10 much more)."""
    (note,) = goal_notes(get_goal("browsing"), grades=[0, 1])
    assert note == (
        "the qrels' grades go up to 1, but ERR@10 reads them on gdeval's 0-4 scale: a "
        "grade-1 result stops the reader with probability (2^1 - 1) / 2^4 = 0.0625 only; "
        "give the top of your scale: ERR(max_grade=1)@10"
    )
    assert goal_notes(get_goal("browsing"), grades=[0, 1, 2, 3, 4]) == ()
    assert goal_notes(get_goal("browsing"), grades=[-1, 0]) == ()  # nothing relevant: no scale
