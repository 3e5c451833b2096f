"""rankmeter.io.check_outputs: every output of one piece of work checked before it starts, each
as check_target checks it and no two of them one file (the check behind every command's -o,
--run-out and --report)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rankmeter.errors import FormatError, PolicyError
from rankmeter.io import check_outputs


def test_distinct_writable_outputs_pass_and_nothing_is_created(tmp_path: Path) -> None:
    outputs = [("-o", tmp_path / "a.json"), ("--report", str(tmp_path / "b.html"))]
    check_outputs(outputs)
    check_outputs([])
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_cannot_be_written_is_the_write_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "out.json"
    with pytest.raises(FormatError, match="cannot write") as caught:
        check_outputs([("-o", tmp_path / "fine.json"), ("--run-out", missing)])
    assert caught.value.path == str(missing)
    with pytest.raises(FormatError, match="directory"):
        check_outputs([("-o", tmp_path)])


def test_two_names_of_one_file_are_refused_naming_both(tmp_path: Path) -> None:
    first = tmp_path / "out.json"
    other = tmp_path / "sub" / ".." / "out.json"
    (tmp_path / "sub").mkdir()
    with pytest.raises(PolicyError) as caught:
        check_outputs([("-o", str(first)), ("--report", str(other))])
    assert str(caught.value) == (
        f"-o {first} and --report {other} are the same file: give each output its own"
    )
    first.write_text("")
    os.link(first, tmp_path / "hard.json")  # one file under two names
    with pytest.raises(PolicyError, match=r"^--run-out .* and -o .* are the same file"):
        check_outputs([("--run-out", first), ("-o", tmp_path / "hard.json")])


def test_the_first_pair_found_is_the_one_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with pytest.raises(
        PolicyError, match=f"^-o {re.escape(str(a))} and --two {re.escape(str(a))} are"
    ):
        check_outputs([("-o", a), ("--one", b), ("--two", a), ("--three", b)])
