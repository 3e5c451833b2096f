"""The fast start of ``rankmeter evaluate`` (rankmeter.cli._fast): it reads plain command lines
without Typer, exactly as Typer reads them, and leaves every other line to Typer."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rankmeter.cli import NO_FAST_START, _fast

from ._cli_support import CLI, Result, without_sample_warnings


def _evaluate_command() -> Any:
    import typer

    from rankmeter.cli import app

    return typer.main.get_command(app).commands["evaluate"]  # type: ignore[attr-defined]


def _choices(param: Any) -> tuple[str, ...]:
    """The values a choice option takes (Click's Choice; Typer >= 0.2x keeps the enum in its
    type descriptor and builds the Choice only when it is asked for)."""
    kind = getattr(param, "type", None)
    if kind is not None and hasattr(kind, "choices"):
        return tuple(str(choice) for choice in kind.choices)
    return tuple(member.value for member in param.type_descriptor.annotation)


def test_the_fast_options_are_the_commands_own() -> None:
    """Every option the fast start reads is the command's, with the same meaning; the options
    it leaves to Typer are named here, so a new option of the command is a decision."""
    options = [p for p in _evaluate_command().params if p.param_type_name == "option"]
    params = {flag: p for p in options for flag in (*p.opts, *p.secondary_opts)}
    for flag, name in _fast.VALUED.items():
        param = params[flag]
        assert param.name == name and not param.is_flag, flag
        assert param.multiple == (name in _fast.REPEATED), flag
    for flag, (name, value) in _fast.FLAGS.items():
        param = params[flag]
        assert param.name == name and param.is_flag, flag
        assert (flag in param.secondary_opts) == (value is False), flag
    for name, choices in _fast.CHOICES.items():
        param = next(p for p in params.values() if p.name == name)
        assert _choices(param) == choices, name
    left_to_typer = {"--goal", "--qrels-format", "--run-format", "-h", "--help"}
    assert set(params) - set(_fast.VALUED) - set(_fast.FLAGS) == left_to_typer - {"-h", "--help"}
    assert _fast.evaluate_args(["evaluate", "q", "r", "-h"]) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "q", "r"],
        ["evaluate"],
        ["evaluate", "q"],  # one input: Typer says a run is missing
        ["evaluate", "q", "r", "--goal", "first-page"],
        ["evaluate", "q", "r", "--qrels-format", "trec"],
        ["evaluate", "q", "r", "-cq"],  # a bundle of short flags
        ["evaluate", "q", "r", "-mAP"],  # a value glued to a short option
        ["evaluate", "q", "r", "-m"],  # no value
        ["evaluate", "q", "r", "-m", "-x"],  # a value that looks like an option
        ["evaluate", "q", "r", "--", "s"],
        ["evaluate", "q", "r", "-f", "json", "-f", "tsv"],
        ["evaluate", "q", "r", "-f", "JSON"],
        ["evaluate", "q", "r", "--ties", "random"],
        ["evaluate", "q", "r", "--rel", "1e3"],
        ["evaluate", "q", "r", "--rel", "two"],
        ["evaluate", "q", "r", "-l=2"],
        ["evaluate", "q", "r", "--quiet=yes"],
        ["evaluate", "q", "r", "--worst", "two"],
        ["evaluate", "q", "r", "--worst", "+2"],  # Click's int() reads it; Typer decides
        ["evaluate", "q", "r", "--worst", "1", "--worst", "2"],
        ["evaluate", "q", "r", "--unknown"],
    ],
)
def test_other_command_lines_are_left_to_typer(argv: list[str]) -> None:
    assert _fast.evaluate_args(argv) is None


def test_plain_command_lines_are_read() -> None:
    values = _fast.evaluate_args(
        ["evaluate", "q", "-m", "AP", "r1", "--metric=P@5", "r2", "-c", "-J"]
    )
    assert values is not None
    assert values["qrels"] == "q" and values["runs"] == ["r1", "r2"]
    assert values["metric"] == ["AP", "P@5"]
    assert values["include_missing"] and values["judged_only"] and not values["per_query"]
    values = _fast.evaluate_args(["evaluate", "-", "r", "--rel", "2.0"])
    assert values is not None and values["rel"] == 2 and isinstance(values["rel"], int)
    assert values["qrels"] == "-"
    values = _fast.evaluate_args(["evaluate", "q", "r", "--rel=0.5", "-o", "-", "--no-stream"])
    assert values is not None and values["rel"] == 0.5 and values["output"] == "-"
    assert values["stream"] is False
    values = _fast.evaluate_args(["evaluate", "q", "r", "--worst", "3"])
    assert values is not None and values["worst"] == 3
    assert _fast.evaluate_args(["evaluate", "q", "r"])["worst"] is None  # type: ignore[index]


def _run(args: list[str], fast: bool) -> Result:
    from ._cli_support import run_process

    env = {} if fast else {NO_FAST_START: "1"}
    return run_process(args, env=env)


LINES: list[list[str]] = [
    [],
    ["-f", "json"],
    ["-m", "nDCG@10", "-m", "RR@10", "-f", "json", "-q"],
    ["-f", "tsv", "-q", "-c"],
    ["-f", "trec", "-J", "--rel", "2"],
    ["--metric=AP", "--format=json", "-l", "0.5", "--ties", "input"],
    ["--stream", "-f", "json", "--quiet"],
    ["--no-stream", "-f", "tsv", "--include-missing", "--judged-only", "--per-query"],
    ["-m", "P@x", "-f", "json"],  # a bad metric: exit 2
    ["-m", "AP", "-f", "json", "MISSING"],  # a missing run: exit 1
    ["-f", "json", "-o", "NO_DIR/out.json"],  # an output that cannot be written: before any work
    ["--engine", "process", "-f", "json"],
    ["--spark-master", "local[4]"],  # a Spark setting without --engine spark: exit 2
    ["--engine=spark", "--spark-conf", "no-value", "--spark-conf", "a=b"],  # before Spark starts
    ["--worst", "2"],
    ["--worst=1", "-f", "json", "-m", "RR"],
    ["--worst", "2", "-f", "tsv"],
    ["--worst", "1", "-f", "trec", "-q"],
    ["--worst", "0", "-f", "json"],  # checked after reading: exit 2 on both
]


@pytest.mark.skipif(sys.platform == "win32", reason="no fast start on Windows")
@pytest.mark.parametrize("line", LINES, ids=[" ".join(x) or "defaults" for x in LINES])
def test_fast_start_and_typer_give_the_same(
    files: dict[str, Path], tmp_path: Path, line: list[str]
) -> None:
    args = ["evaluate", str(files["qrels"]), str(files["a"]), str(files["b"])]
    args += [str(tmp_path / "missing.run") if a == "MISSING" else a for a in line]
    args = [a.replace("NO_DIR", str(tmp_path / "no-such-dir")) for a in args]
    assert _fast.evaluate_args(args) is not None
    fast, slow = _run(args, fast=True), _run(args, fast=False)
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


@pytest.mark.skipif(sys.platform == "win32", reason="no fast start on Windows")
def test_fast_start_writes_the_output_file_as_typer(files: dict[str, Path], tmp_path: Path) -> None:
    outputs = []
    for fast in (True, False):
        out = tmp_path / f"out-{fast}.json"
        args = ["evaluate", str(files["qrels"]), str(files["a"]), "-f", "json", "-o", str(out)]
        assert _run(args, fast=fast) == Result(0, "", "")
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and '"metrics"' in outputs[0]


def test_fast_start_loads_no_typer(files: dict[str, Path], cli: CLI) -> None:
    """The point of it: a plain evaluate imports neither Typer, nor pydantic, nor Rich."""
    import subprocess

    code = (
        "import sys; from rankmeter.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in ('typer', 'pydantic', 'rich', 'click') if m in sys.modules)\n"
        "print(loaded, file=sys.stderr)"
    )
    args = ["evaluate", str(files["qrels"]), str(files["a"]), "-f", "json"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != NO_FAST_START},
        check=True,
    )
    assert without_sample_warnings(done.stderr).strip() == "[]", done.stderr
    assert '"metrics"' in done.stdout
