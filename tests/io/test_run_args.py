"""rankmeter.io.run_args: runs named as the command line names them (NAME=PATH, else the
run's tag, runs sharing one told apart by their files), read from Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter.data import Run
from rankmeter.errors import PolicyError
from rankmeter.io import write_trec_run
from rankmeter.io.run_args import read_one_run, read_run_list, read_runs, run_arguments


def _write(path: Path, name: str) -> Path:
    write_trec_run(Run.from_dict({"q1": {"a": 2.0, "b": 1.0}}, name=name), path)
    return path


def test_runs_are_keyed_by_the_name_given_else_their_own(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.run", "bm25")
    second = _write(tmp_path / "b.run", "dense")
    runs = read_runs([f"base={first}", str(second)])
    assert list(runs) == ["base", "dense"]
    assert [r.name for r in runs.values()] == ["base", "dense"]
    assert read_one_run(f"tuned={second}").name == "tuned"


def test_runs_sharing_a_tag_are_told_apart_unless_merged(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = _write(tmp_path / "one" / "r.run", "same")
    second = _write(tmp_path / "two" / "r.run", "same")
    named = read_runs([str(first), str(second)])
    assert len(set(named)) == 2
    merged = read_run_list([str(first), str(second)], distinct=False)
    assert [r.name for r in merged] == ["same", "same"]


def test_a_name_given_twice_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="two runs are named 'x'"):
        run_arguments(["x=a.run", "x=b.run"])


def test_a_path_object_is_a_path_and_one_text_is_one_run(tmp_path: Path) -> None:
    odd = tmp_path / "x=a.run"  # a Path is never NAME=PATH, even with an '=' in its name
    _write(odd, "bm25")
    assert [a.name for a in run_arguments([odd])] == [None]
    assert read_one_run(odd).name == "bm25"
    second = _write(tmp_path / "b.run", "dense")
    assert list(read_runs([odd, f"tuned={second}"])) == ["bm25", "tuned"]
    assert [a.path for a in run_arguments(str(second))] == [str(second)]
    assert [a.path for a in run_arguments(second)] == [str(second)]


@pytest.mark.parametrize("runs", [None, 5, [5], {"a": "a.run"}, b"a.run"])
def test_runs_of_another_kind_are_refused_naming_the_parameter(runs: object) -> None:
    with pytest.raises(PolicyError, match=r"runs= must be a run \(PATH or NAME=PATH\)"):
        run_arguments(runs)  # type: ignore[arg-type]
