"""One option set for the commands that read runs (issue 16, section 4): compare reads
``--run-format``/``--qrels-format`` as evaluate does; the query set the means average over is
one flag with one name on both (``--include-missing/--answered-only``, ``-c``), each command
keeping its default numbers (compare: every judged query; evaluate: the answered ones), and
every output format says which set it used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ._cli_support import CLI, NO_JUDGED_WARNING

EVERY = "every judged query"
ANSWERED = "answered"


def _command(name: str) -> Any:
    import typer

    from rankmeter.cli import app

    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


def _option(command: str, name: str) -> Any:
    return next(p for p in _command(command).params if p.name == name)


@pytest.mark.parametrize("name", ["include_missing", "run_format", "qrels_format", "judged_only"])
def test_evaluate_and_compare_declare_the_same_option(name: str) -> None:
    evaluate, compare = _option("evaluate", name), _option("compare", name)
    assert (evaluate.opts, evaluate.secondary_opts) == (compare.opts, compare.secondary_opts)
    assert evaluate.help == compare.help


def test_the_query_set_flag_has_one_name_and_the_old_spellings(
    cli: CLI, files: dict[str, Path]
) -> None:
    option = _option("compare", "include_missing")
    assert set(option.opts) | set(option.secondary_opts) == {
        "--include-missing",
        "-c",
        "--answered-only",
    }
    # Defaults unchanged: evaluate averages the answered queries, compare every judged one.
    assert _option("evaluate", "include_missing").default is False
    assert option.default is True


def _evaluate(cli: CLI, files: dict[str, Path], *flags: str) -> dict[str, Any]:
    result = cli("evaluate", files["qrels"], files["a"], "-m", "P@5", "-f", "json", *flags)
    assert result.code == 0, result.err
    payload: dict[str, Any] = json.loads(result.out)
    return payload


def _compare(cli: CLI, files: dict[str, Path], *flags: str) -> dict[str, Any]:
    args = ["compare", files["qrels"], files["a"], files["b"], "-m", "P@5", "--resamples", "20"]
    result = cli(*args, "-f", "json", *NO_JUDGED_WARNING, *flags)
    assert result.code == 0, result.err
    payload: dict[str, Any] = json.loads(result.out)
    return payload


def test_evaluate_says_its_query_set_and_keeps_its_numbers(
    cli: CLI, files: dict[str, Path]
) -> None:
    default = _evaluate(cli, files, *NO_JUDGED_WARNING)
    answered = _evaluate(cli, files, "--answered-only", *NO_JUDGED_WARNING)
    every = _evaluate(cli, files, "-c", *NO_JUDGED_WARNING)
    assert default == answered
    assert ANSWERED in default["queries"] and EVERY not in default["queries"]
    assert EVERY in every["queries"]
    assert every["metrics"] != default["metrics"]  # query 3 is judged, not answered
    several = cli("evaluate", files["qrels"], files["a"], files["b"], "-f", "json")
    assert all(ANSWERED in r["queries"] for r in json.loads(several.out))


def test_compare_says_its_query_set_and_keeps_its_numbers(cli: CLI, files: dict[str, Path]) -> None:
    default, every = _compare(cli, files), _compare(cli, files, "-c")
    answered = _compare(cli, files, "--answered-only")
    assert default == every and default["queries"].startswith(f"queries: {EVERY}")
    assert ANSWERED in answered["queries"] and answered["means"] != default["means"]


def test_compare_reads_the_run_and_qrels_formats_it_is_told(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    # CSV in files named .txt: the name does not tell the format.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("query_id,doc_id,relevance\n1,a,1\n1,b,0\n2,a,1\n")
    runs = []
    for name, scores in (("base", (1.0, 2.0)), ("new", (2.0, 1.0))):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"query_id,doc_id,score\n1,a,{scores[0]}\n1,b,{scores[1]}\n2,a,1\n")
        runs.append(path)
    result = cli(
        "compare", qrels, *runs, "-m", "P@1", "--resamples", "20", "-f", "json",
        "--qrels-format", "csv", "--run-format", "csv", *NO_JUDGED_WARNING,
    )  # fmt: skip
    assert result.code == 0, result.err
    means = {m["system"]: m["mean"] for m in json.loads(result.out)["means"]}
    assert means == {"base": 0.5, "new": 1.0}


# Every command that reads run files (audit-labels reads them as evaluate's library call does).
RUN_READERS = ["evaluate", "compare", "check", "explain", "power", "fuse", "two-stage", "pool"]


@pytest.mark.parametrize("command", RUN_READERS)
def test_every_command_that_reads_runs_takes_the_run_format(command: str) -> None:
    option = _option(command, "run_format")
    assert option.opts == _option("evaluate", "run_format").opts == ["--run-format"]
    assert option.help == _option("evaluate", "run_format").help


def test_the_run_format_is_read_as_given(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    # A CSV run in a file named .txt: without --run-format it would be read as TREC.
    runs = []
    for name, (a, b) in (("one", (2.0, 1.0)), ("two", (1.0, 2.0))):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"query_id,doc_id,score\n1,a,{a}\n1,b,{b}\n2,a,1\n2,x,{b}\n")
        runs.append(f"{name}={path}")
    power = cli("power", files["qrels"], *runs, "-m", "P(rel=2)@1", "--run-format", "csv")
    assert power.code == 0, power.err
    fused = cli("fuse", *runs, "--run-format", "csv")
    assert fused.code == 0 and fused.out.startswith("1 Q0 "), fused.err
    assert fused.out.split()[5] == "rrf(one+two)"
    staged = cli("two-stage", files["qrels"], *runs, "--run-format", "csv", "--pool", "2")
    assert staged.code == 0, staged.err
    pool = cli("pool", *runs, "--run-format", "csv", "-o", tmp_path / "pool.jsonl")
    assert pool.code == 0, pool.err
