"""Fixtures for the CLI tests: run `rankmeter` in-process, write the sample files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankmeter.cli import main

from ._cli_support import CLI, QRELS, RUN_A, RUN_B, Result, without_sample_warnings


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CLI:
    """Run ``rankmeter ARGS`` in-process, returning exit code, stdout and stderr."""

    def invoke(*args: str | os.PathLike[str]) -> Result:
        capsys.readouterr()
        try:
            main([os.fspath(a) for a in args])
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        else:
            code = 0
        captured = capsys.readouterr()
        err = captured.err
        return Result(code, captured.out, without_sample_warnings(err), err)

    return invoke


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "qrels.txt", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    paths["qrels"].write_text(QRELS)
    paths["a"].write_text(RUN_A)
    paths["b"].write_bytes(RUN_B.encode())
    return paths
