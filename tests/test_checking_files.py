"""check_files: `rankmeter check QRELS RUN...` from Python (NAME=PATH, runs sharing a name told
apart, stdin at most once), and the line the command fails with (report.checking.failed_line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter.checking import check, check_files
from rankmeter.errors import PolicyError
from rankmeter.report.checking import failed_line

QRELS = "q1 0 a 1\nq2 0 b 1\n"
GOOD = "q1 Q0 a 1 2.0 sys\nq2 Q0 b 1 2.0 sys\n"
RISING = "q1 Q0 a 1 1.0 sys\nq1 Q0 x 2 2.0 sys\nq1 Q0 y 3 3.0 sys\nq2 Q0 b 1 1.0 sys\n"


def _write(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text)
    return str(folder / name)


def test_runs_are_named_as_the_command_names_them(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", QRELS)
    (tmp_path / "x").mkdir()
    first, second = _write(tmp_path, "a.run", GOOD), _write(tmp_path / "x", "a.run", GOOD)
    result = check_files(qrels, [f"mine={first}", second], k=1)
    plain = check(qrels, [first, second], k=1)
    assert [r.name for r in plain.runs] == [first, second]
    assert [r.name for r in result.runs] == ["mine", second]
    assert result.to_dict()["runs"][0] == {**plain.to_dict()["runs"][0], "name": "mine"}
    assert result.to_dict()["runs"][1] == plain.to_dict()["runs"][1]


def test_names_and_stdin_are_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"only one input can be read from stdin \('-'\)"):
        check_files("-", ["-"])
    with pytest.raises(PolicyError, match="two runs are named 'a'"):
        check_files("qrels", ["a=x.run", "a=y.run"])


def test_the_failure_line_names_whose_numbers_are_meaningless(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", QRELS)
    result = check_files(qrels, [f"bad={_write(tmp_path, 'r.run', RISING)}"], k=3)
    assert not result.ok
    assert failed_line(result) == (
        "rankmeter: check failed: 1 error makes the numbers of 'bad' meaningless "
        f"(the first: score order in {tmp_path / 'r.run'})"
    )
    good = _write(tmp_path, "good.run", GOOD)
    nothing = check_files(_write(tmp_path, "none.txt", "q1 0 a 0\n"), [good], k=1)
    assert "the numbers of every run meaningless" in failed_line(nothing)


def test_path_objects_and_one_run_given_alone(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", QRELS)
    run = _write(tmp_path, "a.run", GOOD)
    listed = check_files(qrels, [run], k=1)
    assert check_files(Path(qrels), [Path(run)], k=1).to_dict() == listed.to_dict()
    assert check_files(qrels, run, k=1).to_dict() == listed.to_dict()
