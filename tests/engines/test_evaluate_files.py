"""rankmeter.engines.evaluate_files: run files evaluated as ``rankmeter evaluate`` evaluates
them (NAME=PATH, progress per run, a goal's notes, the engine chosen), from Python."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import rankmeter
from rankmeter.engines import EvaluatedFiles, evaluate_files, spark_for
from rankmeter.errors import PolicyError

QRELS = "".join(f"q{i} 0 d{i} 1\nq{i} 0 e{i} 0\n" for i in range(4))


def _files(tmp_path: Path) -> tuple[str, str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    good = tmp_path / "good.run"
    good.write_text("".join(f"q{i} Q0 d{i} 1 2.0 tag\nq{i} Q0 e{i} 2 1.0 tag\n" for i in range(4)))
    poor = tmp_path / "poor.run"
    poor.write_text("".join(f"q{i} Q0 e{i} 1 2.0 tag\nq{i} Q0 d{i} 2 1.0 tag\n" for i in range(4)))
    return str(qrels), str(good), str(poor)


class _Recorded:
    def __init__(self) -> None:
        self.totals: list[int] = []
        self.labels: list[str] = []

    @contextmanager
    def __call__(self, total: int) -> Iterator[Any]:
        self.totals.append(total)
        yield self

    def start(self, label: str) -> None:
        self.labels.append(label)


def test_runs_are_named_and_scored_as_evaluate_scores_them(tmp_path: Path) -> None:
    qrels, good, poor = _files(tmp_path)
    done = evaluate_files(qrels, [f"mine={good}", poor], ["P@1", "RR"])
    assert isinstance(done, EvaluatedFiles) and done.goal is None and done.goal_notes == ()
    # Both runs carry the tag "tag": the one not named NAME=PATH keeps it.
    assert [r.run for r in done.results.results] == ["mine", "tag"]
    expected = rankmeter.evaluate(qrels, [good, poor], ["P@1", "RR"])
    for got, want in zip(done.results.results, expected.results, strict=True):
        assert (got["P@1"], got["RR"]) == (want["P@1"], want["RR"])
    assert done.results.results[0]["P@1"] == 1.0 and done.results.results[1]["P@1"] == 0.0


def test_runs_read_whole_give_the_streamed_numbers(tmp_path: Path) -> None:
    qrels, good, poor = _files(tmp_path)
    streamed = evaluate_files(qrels, [good, poor], ["AP"], stream=True)
    whole = evaluate_files(qrels, [good, poor], ["AP"], run_format="trec")
    assert [r["AP"] for r in streamed.results.results] == [r["AP"] for r in whole.results.results]


def test_progress_is_a_step_per_run(tmp_path: Path) -> None:
    qrels, good, poor = _files(tmp_path)
    stages = _Recorded()
    evaluate_files(qrels, [good, poor], ["P@1"], stages=stages)
    assert stages.totals == [3]
    assert stages.labels == [f"reading {qrels}", f"evaluating {good}", f"evaluating {poor}"]


def test_a_goal_adds_its_metrics_and_its_notes(tmp_path: Path) -> None:
    qrels, good, _ = _files(tmp_path)
    done = evaluate_files(qrels, [good], goal="coverage")
    assert done.goal is not None and done.goal.name == "coverage"
    labels = [m.label for m in done.results.results[0].measures]
    assert {m.metric for m in done.goal.metrics} <= set(labels)
    # The run has two results a query: a recall at 100 reads past it.
    assert any(n.startswith("R@100 reads") and "at most 2 results" in n for n in done.goal_notes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"engine": "spark", "qrels": "-"}, "engine='spark' reads files (Spark reads them itself)"),
        (
            {"engine": "spark", "run_format": "json"},
            "engine='spark' reads TREC text and Parquet, not run_format='json': convert the "
            "file, or use engine='process'",
        ),
        ({"spark_master": "local[1]"}, "spark_master is a setting of engine='spark', not of "),
        ({"spark_conf": ["a=b"]}, "spark_conf is a setting of engine='spark'"),
        ({"engine": "spark", "stream": True}, "stream is a setting of engine='process'"),
        ({"engine": "duckdb"}, "engine='duckdb' must be one of 'process', 'spark'"),
        ({"stream": True, "run_format": "csv"}, "stream=True reads TREC run files"),
    ],
)
def test_wrong_settings_are_named_as_python_names_them(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    qrels, good, _ = _files(tmp_path)
    given = {"qrels": qrels, **kwargs}
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate_files(given.pop("qrels"), [good], ["P@1"], **given)


def test_messages_name_the_options_on_the_command_line(tmp_path: Path) -> None:
    qrels, good, _ = _files(tmp_path)
    with pytest.raises(PolicyError, match=r"^--spark-master is a setting of --engine spark, not"):
        evaluate_files(qrels, [good], spark_master="local[1]", command_line=True)
    with pytest.raises(PolicyError, match=r"^--stream/--no-stream are settings of --engine proc"):
        evaluate_files(qrels, [good], engine="spark", stream=False, command_line=True)
    with pytest.raises(PolicyError, match="only one input can be read from stdin"):
        evaluate_files("-", ["-"])


def test_spark_conf_takes_key_value_texts_before_spark_starts() -> None:
    with pytest.raises(PolicyError, match=r"^spark_conf takes KEY=VALUE .*got 'partitions'"):
        spark_for("spark", spark_conf=["partitions"])
    with pytest.raises(PolicyError, match=r"^--spark-conf takes KEY=VALUE"):
        spark_for("spark", spark_conf=["=4"], command_line=True)
    assert spark_for("process") is None
    given = object()
    assert spark_for("spark", spark=given) is given


def test_paths_and_one_run_given_alone_are_runs(tmp_path: Path) -> None:
    qrels, good, poor = _files(tmp_path)
    listed = evaluate_files(qrels, [good, poor], ["P@1"])
    as_paths = evaluate_files(Path(qrels), [Path(good), Path(poor)], ["P@1"])
    assert as_paths.results.to_dict() == listed.results.to_dict()
    alone = evaluate_files(qrels, good, "P@1")
    assert [r.run for r in alone.results.results] == ["tag"]
    assert alone.results.results[0]["P@1"] == 1.0
    assert evaluate_files(qrels, Path(good), "P@1").results.to_dict() == alone.results.to_dict()


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((None,), {}, r"^runs= must be a run \(PATH or NAME=PATH\) or a list of runs, got None"),
        (([],), {}, r"^evaluate needs one run or more \(runs=\); got none"),
        (([5],), {}, r"^runs= must be a run .*got an item of type int"),
        (("RUN", 5), {}, r"^metrics= must be a metric name or a list of them, got int"),
    ],
)
def test_wrong_runs_and_metrics_are_named(
    tmp_path: Path, args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    qrels, good, _ = _files(tmp_path)
    given = tuple(good if a == "RUN" else a for a in args)
    with pytest.raises(PolicyError, match=message):
        evaluate_files(qrels, *given, **kwargs)
    with pytest.raises(
        PolicyError, match=r"^qrels= must be a path \(a str or os.PathLike\), got int"
    ):
        evaluate_files(123, [good])  # type: ignore[arg-type]


@pytest.mark.parametrize("format", ["json", "tsv", "trec", "table"])
def test_the_files_evaluated_render_as_evaluate_renders_them(
    tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rankmeter.report import render

    qrels, good, _ = _files(tmp_path)
    done = evaluate_files(qrels, [good], goal="coverage")
    render(done, format, str(tmp_path / "files.out"), per_query=True)
    files_err = capsys.readouterr().err
    render(
        done.results, format, str(tmp_path / "results.out"), per_query=True, single=True,
        goal=done.goal, goal_notes=done.goal_notes,
    )  # fmt: skip
    assert capsys.readouterr().err == files_err
    assert (tmp_path / "files.out").read_text() == (tmp_path / "results.out").read_text()
    assert "R@100 reads" in files_err + (tmp_path / "files.out").read_text()
