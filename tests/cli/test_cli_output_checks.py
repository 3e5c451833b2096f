"""Outputs are checked before the work: every target a command will write (-o, --run-out,
--report) with the rules of the final write, and two outputs of one command never name the same
file (the second would replace the first: `bm25 --run-out same.txt -o same.txt` lost the run).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rankmeter.errors import FormatError
from rankmeter.io._atomic import atomic_write
from rankmeter.vector import embed

from ._cli_support import CLI
from .test_cli_bm25 import tiny_beir
from .test_cli_embed import StubEncoder

AS_ROOT = os.geteuid() == 0


@pytest.fixture
def stub_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A model folder that loads as the stub encoder; loads are counted."""
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(embed, "_load_folder", lambda folder: StubEncoder())
    StubEncoder.calls = 0
    folder = tmp_path / "stub-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


# -- two outputs, one file ----------------------------------------------------------------------
@pytest.mark.parametrize("alias", ["same", "symlink", "hard link", "dot path"])
def test_bm25_refuses_one_file_for_the_run_and_the_output(
    cli: CLI, tmp_path: Path, alias: str
) -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")
    collection = tiny_beir(tmp_path / "beir")
    target = tmp_path / "same.txt"
    target.write_text("keep me\n")
    other = {
        "same": target,
        "symlink": tmp_path / "link.txt",
        "hard link": tmp_path / "hard.txt",
        "dot path": tmp_path / "." / "sub" / ".." / "same.txt",
    }[alias]
    (tmp_path / "sub").mkdir()
    if alias == "symlink":
        other.symlink_to(target)
    elif alias == "hard link":
        os.link(target, other)
    result = cli("bm25", collection, "--run-out", target, "-o", other, "-f", "json")
    message = result.assert_one_error_line(2)
    assert message == (
        f"--run-out {target} and --output {other} are the same file: give each output its own"
    )
    assert target.read_text() == "keep me\n"


def test_embed_eval_refuses_one_file_for_the_run_and_the_output_before_embedding(
    cli: CLI, tmp_path: Path, stub_model: Path
) -> None:
    collection = tiny_beir(tmp_path / "beir")
    out = tmp_path / "out.txt"
    result = cli("embed-eval", collection, "--model", stub_model, "--run-out", out, "-o", out)
    assert "are the same file" in result.assert_one_error_line(2)
    assert StubEncoder.calls == 0 and not out.exists()


def test_different_outputs_are_written(cli: CLI, tmp_path: Path) -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")
    collection = tiny_beir(tmp_path / "beir")
    run, out = tmp_path / "run.txt", tmp_path / "out.json"
    result = cli("bm25", collection, "--run-out", run, "-o", out, "-f", "json")
    assert result.code == 0, result.err
    assert run.read_text().startswith("1 Q0 ") and "metrics" in json.loads(out.read_text())


# -- checked before the work ------------------------------------------------------------------
def test_a_bad_output_is_found_before_the_inputs_are_read(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    # The qrels file does not exist either: the output's error comes first, as nothing was read.
    target = tmp_path / "absent-dir" / "out.json"
    result = cli("evaluate", tmp_path / "no-qrels", files["a"], "-o", target)
    assert result.assert_one_error_line(1) == f"{target}: cannot write: No such file or directory"


def test_a_read_only_output_is_refused_before_embedding(
    cli: CLI, tmp_path: Path, stub_model: Path
) -> None:
    collection = tiny_beir(tmp_path / "beir")
    locked = tmp_path / "locked.txt"
    locked.write_text("keep me\n")
    locked.chmod(0o444)
    for option in ("-o", "--run-out"):
        result = cli("embed-eval", collection, "--model", stub_model, option, locked)
        assert result.assert_one_error_line(1).startswith(f"{locked}: is read-only (mode 0444)")
    assert StubEncoder.calls == 0
    assert locked.read_text() == "keep me\n"


def test_the_demo_report_is_checked_first(cli: CLI, tmp_path: Path) -> None:
    target = tmp_path / "absent-dir" / "report.html"
    result = cli("demo", "--report", target)
    assert result.assert_one_error_line(1) == f"{target}: cannot write: No such file or directory"


@pytest.mark.parametrize("command", ["evaluate", "compare", "explain", "fuse", "two-stage"])
def test_an_empty_file_name_is_named(cli: CLI, files: dict[str, Path], command: str) -> None:
    q, a, b = files["qrels"], files["a"], files["b"]
    args = {
        "evaluate": ["evaluate", q, a],
        "compare": ["compare", q, a, b],
        "explain": ["explain", q, a, "--query", "1"],
        "fuse": ["fuse", a, b],
        "two-stage": ["two-stage", q, a, b],
    }[command]
    result = cli(*args, "-o", "")
    assert result.assert_one_error_line(1) == "'': empty file name; give a file to write to"


# -- the rules themselves -----------------------------------------------------------------------
def test_check_target_applies_the_rules_of_the_write(tmp_path: Path) -> None:
    from rankmeter.io._atomic import check_target

    check_target(tmp_path / "new.txt")  # a new file in a directory that exists
    check_target(os.devnull)
    (tmp_path / "file.txt").write_text("x")
    check_target(tmp_path / "file.txt")
    for target, reason in [
        ("", r"^'': empty file name; give a file to write to$"),
        (tmp_path, r"is a directory; give a file name to write to$"),
        (tmp_path / "absent" / "x", r"cannot write: No such file or directory$"),
        (tmp_path / "file.txt" / "x", r"cannot write: Not a directory$"),
    ]:
        with pytest.raises(FormatError, match=reason):
            check_target(target)
        with pytest.raises(FormatError, match=reason), atomic_write(target) as handle:
            handle.write("never")
    assert not (tmp_path / "new.txt").exists()


@pytest.mark.skipif(not AS_ROOT, reason="the group-writable case matters as root")
@pytest.mark.parametrize("mode", [0o464, 0o466, 0o444, 0o044], ids=oct)
def test_a_file_its_owner_cannot_write_is_read_only_even_for_root(
    tmp_path: Path, mode: int
) -> None:
    # 0464: the owner may not write, the group may; root passes os.access and replaced it.
    from rankmeter.io._atomic import check_target

    target = tmp_path / "guarded.txt"
    target.write_text("keep me\n")
    target.chmod(mode)
    for check in (check_target, lambda t: atomic_write(t).__enter__()):
        with pytest.raises(FormatError, match=rf"is read-only \(mode {mode:04o}\)"):
            check(target)
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == mode
