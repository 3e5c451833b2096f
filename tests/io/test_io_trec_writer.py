"""One TREC run writer: rankmeter.io formats the lines, for files and for standard output."""

from __future__ import annotations

import ast
from pathlib import Path

import rankmeter
from rankmeter import Run
from rankmeter.io import trec_run_text, write_trec_run

SRC = Path(rankmeter.__file__).parent


def test_trec_text_is_what_write_trec_run_writes(tmp_path: Path) -> None:
    run = Run.from_dict({"2": {"a b": 1.0, "c": 1.0}, "10": {"x": 0.1 + 0.2}}, name="my run")
    path = tmp_path / "out.run"
    write_trec_run(run, path)
    assert trec_run_text(run) == path.read_text(encoding="utf-8")
    assert trec_run_text(run).splitlines()[0] == "2 Q0 c 1 1.0 my_run"


def test_one_module_formats_trec_run_lines() -> None:
    """A TREC run line is written by rankmeter.io.trec alone: no other module of the package
    builds a string holding ``Q0`` (fusion once had its own copy of the writer)."""
    writers = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "io" / "trec.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and any(
                isinstance(v, ast.Constant) and " Q0 " in str(v.value) for v in node.values
            ):
                writers.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert writers == []


def test_a_run_name_is_written_byte_exact_but_for_its_whitespace(tmp_path: Path) -> None:
    """A run's tag is data, like the ids beside it: control characters are kept byte for byte
    in the file (a terminal shows them escaped: tests/cli/test_cli_terminal.py); whitespace,
    which TREC splits fields on, becomes underscores."""
    run = Run.from_dict({"1": {"d": 1.0}}, name="x\x1b]0;pwned\x07\x08\x7f\x9b y")
    path = tmp_path / "out.run"
    write_trec_run(run, path)
    text = path.read_text(encoding="utf-8")
    assert text == "1 Q0 d 1 1.0 x\x1b]0;pwned\x07\x08\x7f\x9b_y\n"
    assert trec_run_text(run) == text
