"""Run files fused and two-stage pipelines evaluated from files, as the command line does it,
from Python (rankmeter.vector.fuse_runs, rankmeter.vector.two_stage_runs), and the fused run
rendered as TREC text with its lines for a person on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter import PolicyError, Run
from rankmeter.io import as_qrels, read_run, trec_run_text, write_trec_qrels, write_trec_run
from rankmeter.report import render
from rankmeter.vector import FusedRun, TwoStage, fuse, fuse_runs, two_stage, two_stage_runs

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 2.0, "y": 1.0, "z": 0.5}}
B = {"q1": {"c": 0.9, "a": 0.8}, "q2": {"y": 0.7, "x": 0.1}}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    write_trec_run(Run.from_dict(A, name="lexical"), a)
    write_trec_run(Run.from_dict(B, name="dense"), b)
    return str(a), str(b)


def test_fused_files_are_fuse_of_the_runs_read(files: tuple[str, str]) -> None:
    result = fuse_runs(list(files), "minmax", weights="0.7,0.3", depth=2)
    assert isinstance(result, FusedRun)
    expected = fuse([read_run(p) for p in files], "minmax", weights=[0.7, 0.3], depth=2)
    assert result.run.to_dict() == expected.to_dict()
    assert (result.method, result.runs, result.depth_gap) == ("minmax", 2, None)
    assert result.to_dict()["name"] == "minmax(lexical+dense)"


def test_names_and_depths(files: tuple[str, str]) -> None:
    result = fuse_runs([f"bm 25={files[0]}", f"dense={files[1]}"], name="my hybrid")
    assert result.run.name == "my hybrid" and result.tag == "my_hybrid"
    assert result.depth_gap is not None
    assert result.depth_gap.depths == (("bm 25", 3), ("dense", 2))


def test_fuse_runs_refuses_before_reading(files: tuple[str, str]) -> None:
    with pytest.raises(PolicyError, match="only one input can be read from stdin"):
        fuse_runs(["-", "-"])
    with pytest.raises(PolicyError, match="fuse needs two runs or more; got 1"):
        fuse_runs([files[0]])
    with pytest.raises(PolicyError, match=r"^weights: item 2 is empty"):
        fuse_runs(list(files), weights="1,")
    with pytest.raises(PolicyError, match=r"^--weights: item 2 is empty"):
        fuse_runs(list(files), weights="1,", names={"weights": "--weights"})


def test_the_fused_run_renders_as_trec_with_its_notes(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = fuse_runs(list(files), name="h")
    render(result, "trec", None)
    out, err = capsys.readouterr()
    assert out == trec_run_text(result.run)
    assert out.splitlines()[0] == f"q1 Q0 a 1 {1 / 61 + 1 / 62!r} h"
    assert err.startswith("rankmeter: warning: fusing runs of different depths")
    target = tmp_path / "h.run"
    render(result, "trec", str(target), path=str(target))
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[1] == (
        f"rankmeter: wrote the fused run 'h' to {target}: 2 queries, 6 results (rrf of 2 runs)"
    )
    assert read_run(target).to_dict() == result.run.to_dict()


def test_two_stage_from_files(files: tuple[str, str], tmp_path: Path) -> None:
    qrels = {"q1": {"c": 2, "a": 1}, "q2": {"y": 1}}
    write_trec_qrels(as_qrels(qrels), tmp_path / "q.txt")
    result = two_stage_runs(str(tmp_path / "q.txt"), *files, pool=2)
    assert isinstance(result, TwoStage)
    expected = two_stage(qrels, read_run(files[0]), read_run(files[1]), pool=2)
    assert result.to_dict() == expected.to_dict()
    assert list(result.stages["reranked"].metrics) == ["R@2", "nDCG@10"]
    with pytest.raises(PolicyError, match="only one input can be read from stdin"):
        two_stage_runs("-", "-", files[1])


def test_path_objects_are_runs_and_one_run_alone_is_refused(files: tuple[str, str]) -> None:
    as_paths = fuse_runs([Path(p) for p in files], "minmax")
    assert as_paths.run.to_dict() == fuse_runs(list(files), "minmax").run.to_dict()
    with pytest.raises(PolicyError, match="fuse needs two runs or more; got 1"):
        fuse_runs(files[0])
