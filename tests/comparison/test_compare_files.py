"""rankmeter.comparison.compare_files: run files compared as ``rankmeter compare`` compares
them (NAME=PATH, the baseline by name or file, progress per run, a goal's notes), and the
regression gate's decision (Comparison.gate)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import rankmeter
from rankmeter.comparison import ComparedFiles, Gate, compare_files
from rankmeter.errors import PolicyError
from rankmeter.report.comparison import gate_lines

N = 30


def _files(tmp_path: Path, *, shallow: bool = False) -> tuple[str, str, str]:
    """Qrels with one relevant document a query; ``base.run`` ranks it first everywhere,
    ``new.run`` second on every other query (tag ``sys`` in both), five results a query.
    ``shallow``: new.run keeps its top result only."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 r{i} 1\n" for i in range(N)))
    base_docs = [["r", "n", "x", "y", "z"] for _ in range(N)]
    new_docs = [["n", "r", "x", "y", "z"] if i % 2 == 0 else base_docs[i] for i in range(N)]
    if shallow:
        new_docs = [d[:1] for d in new_docs]
    paths = []
    for name, docs in (("base.run", base_docs), ("new.run", new_docs)):
        lines = [
            f"q{i} Q0 {doc}{i} {rank} {10 - rank} sys\n"
            for i, ranked in enumerate(docs)
            for rank, doc in enumerate(ranked, start=1)
        ]
        path = tmp_path / name
        path.write_text("".join(lines))
        paths.append(str(path))
    return str(qrels), paths[0], paths[1]


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


def test_named_runs_are_compared_as_compare_compares_them(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path)
    stages = _Recorded()
    done = compare_files(qrels, [f"old={base}", new], ["RR"], resamples=1000, seed=3, stages=stages)
    assert isinstance(done, ComparedFiles) and done.goal is None and done.goal_notes == ()
    # new.run keeps its tag; the run named with NAME= is the baseline, first.
    assert done.comparison.systems == ("old", "sys")
    expected = rankmeter.compare(qrels, {"old": base, "sys": new}, ["RR"], resamples=1000, seed=3)
    assert done.comparison.to_dict() == expected.to_dict()
    assert stages.totals == [4]
    assert stages.labels == [f"reading {qrels}", f"reading {base}", f"reading {new}", "comparing"]


@pytest.mark.parametrize("given", ["name", "argument", "path"])
def test_the_baseline_is_named_by_its_name_or_its_file(tmp_path: Path, given: str) -> None:
    qrels, base, new = _files(tmp_path)
    runs = [f"old={base}", f"new={new}"]
    baseline = {"name": "new", "argument": runs[1], "path": new}[given]
    done = compare_files(qrels, runs, ["RR"], baseline=baseline, resamples=1000)
    assert done.comparison.systems == ("new", "old")


def test_wrong_input_is_named_as_python_or_the_command_line_names_it(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path)
    with pytest.raises(PolicyError, match=r"^baseline='other' is neither a run name nor a run"):
        compare_files(qrels, [base, new], ["RR"], baseline="other")
    with pytest.raises(PolicyError, match=r"^--baseline 'other' is neither"):
        compare_files(qrels, [base, new], ["RR"], baseline="other", command_line=True)
    with pytest.raises(PolicyError, match=r"compare needs two runs or more .*; got 1"):
        compare_files(qrels, [base])
    with pytest.raises(PolicyError, match=r"^--engine spark reads TREC text and Parquet, not "):
        compare_files(qrels, [base, new], engine="spark", run_format="csv", command_line=True)


def test_a_goal_adds_its_metrics_and_its_notes(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path)
    done = compare_files(qrels, [base, new], goal="coverage", resamples=1000)
    assert done.goal is not None
    assert {m.metric for m in done.goal.metrics} <= set(done.comparison.metrics)
    assert any(n.startswith("R@100 reads") for n in done.goal_notes)


def test_the_gate_fails_with_its_reasons_and_passes_above_the_drop(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path)
    runs = [f"base={base}", f"new={new}"]
    result = compare_files(qrels, runs, ["RR", "P@1"], resamples=2000).comparison
    gate = result.gate()
    assert isinstance(gate, Gate) and not gate.passed
    assert gate.regressions == result.regressions() and gate.depth is None
    assert [line.split(":")[0] for line in gate_lines(gate)] == ["regression", "regression"]
    assert gate.to_dict()["passed"] is False and len(gate.to_dict()["regressions"]) == 2
    high = result.gate(0.6)  # the drops are 0.25 (RR) and 0.5 (P@1)
    assert high.passed and high.min_effect == 0.6
    assert gate_lines(high) == (
        "gate passed: no metric is significantly worse than base by more than 0.6",
    )


def test_the_gate_names_the_depth_gap_behind_a_regression(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path, shallow=True)
    runs = [f"base={base}", f"new={new}"]
    result = compare_files(qrels, runs, ["P@1", "R@5"], resamples=2000).comparison
    gate = result.gate()
    assert gate.depth is not None and gate.depth.metrics == ("R@5",)
    assert dict(gate.depth.depths) == {"base": 5, "new": 1}
    lines = {line.split(" on ")[1].split(" ")[0]: line for line in gate_lines(gate)}
    assert "the runs differ in depth" in lines["R@5"]
    assert "the runs differ in depth" not in lines["P@1"]
    # Without a metric that reads past the shallower run, no gap is named.
    plain = compare_files(qrels, runs, ["P@1"], resamples=2000).comparison.gate()
    assert plain.depth is None


def test_paths_are_runs_and_one_run_alone_is_refused(tmp_path: Path) -> None:
    qrels, base, new = _files(tmp_path)
    listed = compare_files(qrels, [base, new], ["RR"], resamples=1000)
    as_paths = compare_files(Path(qrels), [Path(base), Path(new)], ["RR"], resamples=1000)
    assert as_paths.comparison.to_dict() == listed.comparison.to_dict()
    with pytest.raises(PolicyError, match=r"compare needs two runs or more .*; got 1"):
        compare_files(qrels, base)
    with pytest.raises(PolicyError, match=r"^qrels= must be a path \(a str or os.PathLike\)"):
        compare_files(None, [base, new])  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=r"^metrics= must be a metric name or a list of them"):
        compare_files(qrels, [base, new], 5)  # type: ignore[arg-type]


@pytest.mark.parametrize("format", ["json", "markdown", "latex", "html", "table"])
def test_the_files_compared_render_as_their_comparison(
    tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rankmeter.report import render

    qrels, base, new = _files(tmp_path)
    done = compare_files(qrels, [base, new], goal="coverage", resamples=1000)
    render(done, format, str(tmp_path / "files.out"))
    err = capsys.readouterr().err
    render(done.comparison, format, str(tmp_path / "comparison.out"))
    assert (tmp_path / "files.out").read_text() == (tmp_path / "comparison.out").read_text()
    # The goal's notes go to stderr, as `rankmeter compare` writes them.
    assert err.startswith("".join(f"note: {n}\n" for n in done.goal_notes))
    assert done.goal_notes
