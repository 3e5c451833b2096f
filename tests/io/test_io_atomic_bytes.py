"""atomic_write_bytes: a binary file (Parquet) written as atomic_write writes text: exact
bytes, no temporary file left, a refused target left untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankmeter.errors import FormatError
from rankmeter.io import atomic_write_bytes

DATA = b"PAR1\x00\xff\r\n\x80not utf-8\n"


def test_the_bytes_arrive_exactly_and_nothing_else_is_left(tmp_path: Path) -> None:
    target = tmp_path / "labels.parquet"
    target.write_bytes(b"older contents")
    atomic_write_bytes(target, DATA)
    assert target.read_bytes() == DATA
    assert os.listdir(tmp_path) == ["labels.parquet"]


def test_a_read_only_target_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "labels.parquet"
    target.write_bytes(b"keep me")
    target.chmod(0o444)
    with pytest.raises(FormatError, match=r"labels\.parquet: is read-only \(mode 0444\)"):
        atomic_write_bytes(target, DATA)
    assert target.read_bytes() == b"keep me"
    assert os.listdir(tmp_path) == ["labels.parquet"]


def test_a_missing_directory_names_the_path(tmp_path: Path) -> None:
    target = tmp_path / "absent" / "labels.parquet"
    with pytest.raises(FormatError, match=r"absent/labels\.parquet: cannot write"):
        atomic_write_bytes(target, DATA)
