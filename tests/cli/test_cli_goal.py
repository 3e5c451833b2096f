"""`rankmeter metrics --goal` and `rankmeter evaluate --goal`: metrics picked by goal, with why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter import evaluate
from rankmeter.metrics import GOALS, parse_metrics
from rankmeter.metrics.goals import GOAL_NAMES

from ._cli_support import CLI, NO_JUDGED_WARNING, evaluate_json

LISTED = "coverage, top-results, single-answer, candidate-pool, browsing, sampled-pool, robustness, ambiguous"


def only_notes(err: str) -> bool:
    """Stderr of a goal on the sample files: nothing but the goal's notes (its sample runs are
    four results deep and its grades go to 3)."""
    return all(line.startswith("note: ") for line in err.splitlines())


def flat(text: str) -> str:
    """Table text with the borders and line breaks taken out, to look for whole sentences."""
    for border in "│┃|":
        text = text.replace(border, " ")
    return " ".join(text.split())


@pytest.mark.parametrize("goal", GOAL_NAMES)
def test_metrics_goal_json(cli: CLI, goal: str) -> None:
    result = cli("metrics", "--goal", goal, "--format", "json")
    assert result.code == 0 and result.err == ""
    assert json.loads(result.out) == {
        "goal": goal,
        "description": GOALS[goal].description,
        "metrics": [{"metric": m.metric, "why": m.why} for m in GOALS[goal].metrics],
    }


@pytest.mark.parametrize("goal", GOAL_NAMES)
def test_metrics_goal_table_has_the_description_and_every_reason(cli: CLI, goal: str) -> None:
    result = cli("metrics", "--goal", goal)
    assert result.code == 0 and result.err == ""
    assert f"goal: {goal}" in result.out
    text = flat(result.out)
    assert text.startswith(GOALS[goal].description)
    for m in GOALS[goal].metrics:
        assert m.metric in text
        # rich wraps the reason inside its cell; the first words are on the metric's line
        first_line = next(line for line in result.out.splitlines() if f" {m.metric} " in line)
        assert " ".join(m.why.split()[:3]) in first_line


def test_metrics_goal_table_does_not_list_the_other_metrics(cli: CLI) -> None:
    out = cli("metrics", "--goal", "top-results").out
    assert "nDCG@10" in out and "P@10" in out
    assert "Bpref" not in out and "formula" not in out


def test_metrics_goal_markdown(cli: CLI) -> None:
    result = cli("metrics", "--goal", "single-answer", "-f", "markdown")
    assert result.code == 0 and result.err == ""
    goal = GOALS["single-answer"]
    assert result.out.splitlines() == [
        "## Goal: single-answer",
        "",
        goal.description,
        "",
        "| metric | why |",
        "| --- | --- |",
        *(f"| `{m.metric}` | {m.why} |" for m in goal.metrics),
    ]


def test_metrics_goal_spelling_is_forgiving(cli: CLI) -> None:
    payload = json.loads(cli("metrics", "--goal", "Candidate_Pool", "-f", "json").out)
    assert payload["goal"] == "candidate-pool"


def test_metrics_without_goal_is_unchanged(cli: CLI) -> None:
    payload = json.loads(cli("metrics", "-f", "json").out)
    assert isinstance(payload, list) and payload[0]["name"] == "P"


def test_metrics_help_names_the_goals(cli: CLI) -> None:
    text = flat(cli("metrics", "--help").out)
    assert all(name in text for name in GOAL_NAMES)


@pytest.mark.parametrize("args", [["--goal"], ["-f", "json", "--goal"]])
def test_metrics_goal_without_a_value(cli: CLI, args: list[str]) -> None:
    message = cli("metrics", *args).assert_one_error_line(2)
    assert message == f"--goal needs a value; choose one of {LISTED}"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("bogus", f"unknown goal 'bogus'. Valid goals: {LISTED}"),
        ("coverge", f"unknown goal 'coverge'; did you mean coverage? Valid goals: {LISTED}"),
        ("", f"no goal given; choose one of {LISTED}"),
    ],
)
def test_metrics_bad_goal(cli: CLI, given: str, expected: str) -> None:
    for fmt in ("table", "json"):
        assert cli("metrics", "--goal", given, "-f", fmt).assert_one_error_line(2) == expected


@pytest.mark.parametrize("goal", GOAL_NAMES)
def test_evaluate_goal_computes_the_goals_metrics(
    cli: CLI, files: dict[str, Path], goal: str
) -> None:
    result = cli(
        "evaluate", files["qrels"], files["a"], "--goal", goal, "-f", "json", *NO_JUDGED_WARNING
    )
    assert result.code == 0 and only_notes(result.err)
    names = [m.metric for m in GOALS[goal].metrics]
    payload = evaluate_json(result.out)
    assert list(payload) == ["metrics"]
    assert payload["metrics"] == dict(evaluate(files["qrels"], files["a"], names).metrics)
    assert list(payload["metrics"]) == names


def test_evaluate_m_metrics_come_first_without_duplicates(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate", files["qrels"], files["a"], "-m", "AP", "-m", "MRR@10",
        "--goal", "single-answer", "-f", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert list(json.loads(result.out)["metrics"]) == ["AP", "MRR@10", "Success@1", "Success@10"]


def test_evaluate_goal_table_ends_with_the_reasons(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("evaluate", files["qrels"], files["a"], files["b"], "--goal", "top-results")
    # The sample runs differ in depth (4 results a query against 2): that is all stderr says.
    assert result.code == 0
    assert result.err.startswith("rankmeter: warning: runs differ in depth"), result.err
    assert result.err.count("\n") == 1, result.err
    goal = GOALS["top-results"]
    text = flat(result.out)
    assert text.index("relevant: grade >= 1") < text.index(f"Goal top-results: {goal.description}")
    for m in goal.metrics:
        assert f"{m.metric} {m.why}" in text
    # The reasons end the table's text, before the notes on these (shallow) runs.
    assert text.split(" note: ")[0].endswith(goal.metrics[-1].why)
    assert text.index(goal.metrics[-1].why) < text.index("note: nDCG@10 reads the top 10")


def test_evaluate_goal_table_to_a_file_has_the_reasons(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "table.txt"
    result = cli("evaluate", files["qrels"], files["a"], "--goal", "coverage", "-o", out)
    assert result.code == 0 and result.out == "" and result.err == ""
    text = flat(out.read_text(encoding="utf-8"))
    assert all(f"{m.metric} {m.why}" in text for m in GOALS["coverage"].metrics)


@pytest.mark.parametrize("fmt", ["json", "tsv", "trec"])
def test_evaluate_goal_keeps_data_formats_data_only(
    cli: CLI, files: dict[str, Path], fmt: str
) -> None:
    with_goal = cli(
        "evaluate", files["qrels"], files["a"], "--goal", "coverage", "-f", fmt, *NO_JUDGED_WARNING
    )
    names = [m.metric for m in GOALS["coverage"].metrics]
    metrics = (a for n in names for a in ("-m", n))
    plain = cli("evaluate", files["qrels"], files["a"], *metrics, "-f", fmt, *NO_JUDGED_WARNING)
    assert with_goal.code == 0 and only_notes(with_goal.err)
    assert with_goal.out == plain.out
    assert "Goal" not in with_goal.out


def test_evaluate_without_goal_uses_the_defaults(cli: CLI, files: dict[str, Path]) -> None:
    payload = json.loads(cli("evaluate", files["qrels"], files["a"], "-f", "json").out)
    assert list(payload["metrics"]) == [
        str(m) for m in parse_metrics(["nDCG@10", "P@10", "R@100", "RR", "AP"])
    ]


def test_evaluate_goal_without_a_value(cli: CLI, files: dict[str, Path]) -> None:
    message = cli("evaluate", files["qrels"], files["a"], "--goal").assert_one_error_line(2)
    assert message == f"--goal needs a value; choose one of {LISTED}"


def test_evaluate_bad_goal_is_a_usage_error_before_reading(cli: CLI, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.txt"
    message = cli("evaluate", missing, missing, "--goal", "top").assert_one_error_line(2)
    assert message == f"unknown goal 'top'; did you mean top-results? Valid goals: {LISTED}"


def test_evaluate_help_names_the_goals(cli: CLI) -> None:
    text = flat(cli("evaluate", "--help").out)
    assert "--goal" in text and all(name in text for name in GOAL_NAMES)


# -- issue 16: notes on graded labels and shallow runs; one goal only
GRADED_QRELS = "1 0 a 3\n1 0 b 1\n2 0 c 2\n2 0 d 1\n2 0 f 0\n3 0 e 3\n"
SHALLOW_RUN = "1 Q0 b 1 3 tag\n1 Q0 a 2 2 tag\n2 Q0 d 1 1 tag\n3 Q0 e 1 1 tag\n"
GRADE_NOTE = (
    "note: the qrels are graded 0-3 and RR@10, Success@1, Success@10 count a grade-1 "
    "document (a partial match) as relevant; to count only better ones, give rel= from the "
    "scale: RR(rel=2)@10 (grade 2 or more), RR(rel=3)@10 (grade 3 only), or --rel for every "
    "metric"
)


@pytest.fixture
def graded(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "graded.qrels", "run": tmp_path / "shallow.run"}
    paths["qrels"].write_text(GRADED_QRELS)
    paths["run"].write_text(SHALLOW_RUN)
    return paths


def test_evaluate_single_answer_on_graded_labels_notes_the_rel_thresholds(
    cli: CLI, graded: dict[str, Path]
) -> None:
    result = cli("evaluate", graded["qrels"], graded["run"], "--goal", "single-answer")
    assert result.code == 0 and result.err == ""
    assert GRADE_NOTE in flat(result.out)
    json_result = cli(
        "evaluate", graded["qrels"], graded["run"], "--goal", "single answer", "-f", "json"
    )
    assert json_result.code == 0
    json.loads(json_result.out)  # the data stays data; the note goes to stderr
    assert GRADE_NOTE + "\n" in json_result.err
    quiet = cli(
        "evaluate", graded["qrels"], graded["run"], "--goal", "single-answer", "-f", "tsv",
        "--quiet",
    )  # fmt: skip
    assert quiet.code == 0 and quiet.err == ""
    without = cli("evaluate", graded["qrels"], graded["run"], "--goal", "single-answer", "-l", "2")
    assert "note: the qrels are graded" not in flat(without.out)  # --rel 2: no partial matches


def test_evaluate_coverage_notes_a_cutoff_beyond_the_runs_depth(
    cli: CLI, graded: dict[str, Path]
) -> None:
    result = cli("evaluate", graded["qrels"], graded["run"], "--goal", "coverage", "-f", "tsv")
    assert result.code == 0
    notes = [line for line in result.err.splitlines() if line.startswith("note: ")]
    assert [n.split(" reads")[0] for n in notes[1:]] == ["note: R@100", "note: R@1000"]
    assert "run 'tag' has at most 2 results a query" in notes[1]


def test_compare_goal_notes_go_to_stderr(cli: CLI, graded: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.run"
    other.write_text(SHALLOW_RUN.replace("tag", "other").replace(" 3 other", " 0.5 other"))
    result = cli(
        "compare", graded["qrels"], graded["run"], other, "--goal", "single-answer",
        "-f", "json", "--resamples", "100",
    )  # fmt: skip
    assert result.code == 0, result.err
    json.loads(result.out)
    assert GRADE_NOTE + "\n" in result.err


@pytest.mark.parametrize("command", ["evaluate", "compare", "metrics"])
def test_two_goals_are_refused_not_collapsed(
    cli: CLI, files: dict[str, Path], command: str
) -> None:
    inputs = {"evaluate": [files["qrels"], files["a"]], "metrics": []}
    args = inputs.get(command, [files["qrels"], files["a"], files["b"]])
    result = cli(command, *args, "--goal", "coverage", "--goal=single-answer")
    message = result.assert_one_error_line(code=2)
    assert message == (
        "--goal given 2 times (coverage, single-answer): give one goal, and add any other "
        "metrics with -m"
    )
