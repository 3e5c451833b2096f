"""`rankmeter stability QRELS RUN RUN [RUN ...]` (issue 13, item 3): the library's numbers in
every format, written atomically with -o; the same seed the same output; bad input is one error
line; the docs' worked example on Cranfield is what the command prints."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from rankmeter.comparison import stability
from rankmeter.report.stability import TITLE

from ._cli_support import CLI, run_process


def test_json_is_the_librarys_result(cli: CLI, files: dict[str, Path]) -> None:
    args = ("stability", files["qrels"], files["a"], files["b"], "-m", "P@1", "-m", "RR")
    result = cli(*args, "--resamples", "200", "--splits", "150", "--seed", "3", "-f", "json")
    assert (result.code, result.err) == (0, ""), result.err
    payload = json.loads(result.out)
    expected = stability(
        files["qrels"],
        [files["a"], files["b"]],
        ["P@1", "RR"],
        resamples=200,
        splits=150,
        seed=3,
    )
    assert payload["title"] == TITLE
    assert payload["n"] == 4  # every judged query, query 3 without results from either run
    assert payload["by_metric"] == json.loads(
        json.dumps(expected.to_dict()["by_metric"]).replace("NaN", "null")
    )
    assert payload["filled"] == {"bm25": 1, "dense": 1}


def test_the_same_seed_gives_the_same_output(cli: CLI, files: dict[str, Path]) -> None:
    args = ("stability", files["qrels"], files["a"], files["b"], "-m", "RR", "-f", "json")
    first, again = cli(*args, "--seed", "5"), cli(*args, "--seed", "5")
    other = cli(*args, "--seed", "6")
    assert first.out == again.out
    assert json.loads(first.out)["by_metric"]["RR"]["seed"] == 5
    assert first.out != other.out


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html"])
def test_every_format_is_written_to_a_file(
    cli: CLI, files: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / f"stability.{fmt}"
    result = cli(
        "stability", files["qrels"], files["a"], files["b"], "-m", "RR", "-f", fmt, "-o", out
    )
    assert (result.code, result.out, result.err) == (0, "", ""), result.err
    text = out.read_text(encoding="utf-8")
    assert TITLE in text.replace("\\", "")
    assert "dense" in text and "bm25" in text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (("--resamples", "10"), 2, r"resamples=10 must be an integer from 100 to 10,000,000"),
        (("--splits", "99"), 2, r"splits=99 must be an integer from 100 to 10,000,000"),
        (("--seed", "-1"), 2, r"seed=-1 must be an integer >= 0"),
        (("-m", "nDCG@x"), 2, r"nDCG@x"),
    ],
)
def test_bad_options_are_one_error_line(
    cli: CLI, files: dict[str, Path], extra: tuple[str, ...], code: int, message: str
) -> None:
    result = cli("stability", files["qrels"], files["a"], files["b"], *extra)
    assert re.search(message, result.assert_one_error_line(code))


def test_bad_inputs_are_one_error_line(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    one = cli("stability", files["qrels"], files["a"])
    assert one.assert_one_error_line(2) == "stability needs two runs or more; got 1"
    missing = cli("stability", files["qrels"], files["a"], tmp_path / "none.run")
    assert "none.run" in missing.assert_one_error_line(1)
    twice = cli("stability", files["qrels"], "-", "-")
    assert twice.assert_one_error_line(2) == "only one input can be read from stdin ('-')"
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 notanumber x\n")
    broken = cli("stability", files["qrels"], files["a"], bad)
    line = broken.assert_one_error_line(1)
    assert line.endswith(
        "bad.run:1: score must be a number, not 'notanumber': '1 Q0 a 1 notanumber x'"
    )


def test_the_real_command_lists_stability(files: dict[str, Path]) -> None:
    result = run_process(["--help"])
    assert result.code == 0 and re.search(r"\bstability\b", result.out)
    done = run_process(["stability", files["qrels"], files["a"], files["b"], "-m", "P@1"])
    assert (done.code, done.err) == (0, ""), done.err
    assert TITLE in done.out and "halves agree" in done.out


# --- Cranfield: the docs' worked example --------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "query-set.md"
SHARED_CRANFIELD = "../shared/data/cranfield"


def _doc_blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.S | re.M)


@pytest.fixture(scope="module")
def cranfield_runs(cranfield: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three lexical rankers of docs/query-set.md and its traffic table, built by the very
    code the page shows."""
    folder = tmp_path_factory.mktemp("stability-runs")
    (code,) = [block for block in _doc_blocks("python") if ">>>" not in block]
    assert f'Path("{SHARED_CRANFIELD}")' in code
    code = code.replace(f'Path("{SHARED_CRANFIELD}")', f"Path({str(cranfield)!r})")
    here = Path.cwd()
    try:
        os.chdir(folder)
        exec(compile(code, str(DOC), "exec"), {"__name__": "query_set_doc"})
    finally:
        os.chdir(here)
    return folder


def test_the_docs_worked_examples_are_what_the_commands_print(
    cli: CLI, cranfield: Path, cranfield_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every console block of docs/query-set.md, in order (sample-queries writes the eval.csv
    that a later query-mix reads): stdout and stderr together are what the page shows."""
    blocks = [b for b in _doc_blocks("console") if b.startswith("$ rankmeter ")]
    commands = [b.partition("\n")[0].split()[2] for b in blocks]
    assert commands == ["stability", "sample-queries", "query-mix", "query-mix", "query-mix"]
    monkeypatch.chdir(cranfield_runs)
    for block in blocks:
        command, _, shown = block.partition("\n")
        args = shlex.split(command[len("$ rankmeter ") :].replace(SHARED_CRANFIELD, str(cranfield)))
        result = cli(*args)
        assert result.code == 0, result.err
        assert result.out + result.err == shown, command


def test_too_many_resamples_are_told_stabilitys_default(cli: CLI, files: dict[str, Path]) -> None:
    # issue 23's trial: the cost sentence said compare's default (10,000) and p-values, which
    # stability neither has nor computes
    result = cli("stability", files["qrels"], files["a"], files["b"], "--resamples", "99999999999")
    assert result.assert_one_error_line(2) == (
        "resamples=99999999999 must be an integer from 100 to 10,000,000 (bootstrap resamples of "
        "the queries): the time grows with resamples times queries (about 1 s per million "
        "resamples and 100 queries); the default is 1,000"
    )
