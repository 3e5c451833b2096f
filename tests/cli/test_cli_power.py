"""`rankmeter power QRELS BASE NEW` (issue 13, item 1): the library's numbers for the runs'
per-query differences, in every format, on the sample files and on Cranfield; bad input is one
error line."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

import rankmeter
from rankmeter.stats import power

from ._cli_support import CLI, run_process


def _differences(qrels: Path, base: Path, new: Path, metric: str) -> np.ndarray:
    """new minus base on every judged query (a missing query scores 0), by the library."""
    results = rankmeter.evaluate(qrels, {"base": base, "new": new}, [metric], include_missing=True)
    before = dict(
        zip(results["base"].per_query.query_ids, results["base"].per_query[metric], strict=True)
    )
    after = results["new"].per_query
    return np.array([v - before[q] for q, v in zip(after.query_ids, after[metric], strict=True)])


def test_json_is_the_librarys_analysis_of_the_differences(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("power", files["qrels"], files["a"], files["b"], "-m", "P@1", "-f", "json")
    assert (result.code, result.err) == (0, ""), result.err
    payload = json.loads(result.out)
    diffs = _differences(files["qrels"], files["a"], files["b"], "P@1")
    expected = power(diffs, correction="holm", comparisons=1).to_dict()
    got = payload["metrics"]["P@1"]
    assert got["n"] == 4  # every judged query, query 3 without results from either run
    assert got == json.loads(json.dumps(expected).replace("Infinity", "null"))
    assert payload["baseline"] == "bm25" and payload["system"] == "dense"
    assert payload["sentences"]["P@1"].startswith("with 4 queries a difference of ")
    assert any("every judged query (4)" in note for note in payload["notes"])


def test_a_correction_covers_every_metric(cli: CLI, files: dict[str, Path]) -> None:
    args = ("power", files["qrels"], files["a"], files["b"], "-m", "P@1", "-m", "RR", "-f", "json")
    holm = json.loads(cli(*args).out)
    none = json.loads(cli(*args, "--correction", "none").out)
    assert holm["alpha_per_test"] == 0.025 and holm["comparisons"] == 2
    assert none["alpha_per_test"] == 0.05
    diffs = _differences(files["qrels"], files["a"], files["b"], "RR")
    expected = power(diffs, alpha=0.05, correction="bonferroni", comparisons=2)
    assert holm["metrics"]["RR"]["queries_needed"] == expected.queries_needed
    assert holm["metrics"]["RR"]["detectable_difference"] == pytest.approx(
        expected.detectable_difference
    )


def test_a_stated_effect_and_spread(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "power", files["qrels"], files["a"], files["b"], "-m", "P@1", "-f", "json",
        "--effect", "0.05", "--sd", "0.2", "--power", "0.9", "--alpha", "0.1",
    )  # fmt: skip
    got = json.loads(result.out)["metrics"]["P@1"]
    expected = power(effect=0.05, sd=0.2, n=4, alpha=0.1, power=0.9, test="t")
    assert got["source"] == "observed differences, stated effect, stated sd"
    assert got["queries_needed"] == expected.queries_needed
    assert got["power_at_n"] == pytest.approx(expected.power_at_n)


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (("--alpha", "1.5"), 2, r"alpha=1\.5 must be a number strictly between 0 and 1"),
        (("--power", "0"), 2, r"power=0\.0 must be a number strictly between 0 and 1"),
        (("--sd", "0"), 2, r"sd=0\.0 must be a number > 0"),
        (("--test", "wilcoxon"), 2, r"Invalid value for '--test'"),
        (("--correction", "sidak"), 2, r"Invalid value for '--correction'"),
        (("-m", "nDCG@x"), 2, r"nDCG@x"),
        (("--simulations", "5", "--test", "randomization"), 2, r"simulations=5 must be an"),
    ],
)
def test_bad_options_are_one_error_line(
    cli: CLI, files: dict[str, Path], extra: tuple[str, ...], code: int, message: str
) -> None:
    result = cli("power", files["qrels"], files["a"], files["b"], *extra)
    assert re.search(message, result.assert_one_error_line(code))


def test_runs_that_never_differ_are_one_error_line(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("power", files["qrels"], files["a"], files["a"], "-m", "P@1")
    assert result.assert_one_error_line(2) == (
        "the 4 differences have no spread (every one is 0.0): power is undefined; give sd= to "
        "state a spread"
    )


def test_a_missing_file_and_two_stdins_are_one_error_line(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    missing = cli("power", files["qrels"], files["a"], tmp_path / "none.run")
    assert "none.run" in missing.assert_one_error_line(1)
    twice = cli("power", files["qrels"], "-", "-")
    assert twice.assert_one_error_line(2) == "only one input can be read from stdin ('-')"


def test_the_real_command_lists_power(files: dict[str, Path]) -> None:
    result = run_process(["--help"])
    assert result.code == 0 and re.search(r"\bpower\b", result.out)
    done = run_process(["power", files["qrels"], files["a"], files["b"], "-m", "P@1"])
    assert (done.code, done.err) == (0, ""), done.err
    assert "queries needed" in done.out and "detectable" in done.out


# --- Cranfield, every format ----------------------------------------------------------------


DOC = Path(__file__).resolve().parents[2] / "docs" / "power.md"
SHARED_CRANFIELD = "../shared/data/cranfield"


def _doc_blocks(kind: str) -> list[str]:
    """The fenced blocks of docs/power.md whose fence names ``kind`` (python, console)."""
    return re.findall(rf"^```{kind}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.S | re.M)


@pytest.fixture(scope="module")
def cranfield_runs(cranfield: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The two lexical rankers of docs/power.md (query words in common; the same weighted by
    idf), built by the very code the page shows."""
    folder = tmp_path_factory.mktemp("power-runs")
    (code,) = [block for block in _doc_blocks("python") if ">>>" not in block]
    assert f'Path("{SHARED_CRANFIELD}")' in code
    code = code.replace(f'Path("{SHARED_CRANFIELD}")', f"Path({str(cranfield)!r})")
    here = Path.cwd()
    try:
        os.chdir(folder)
        exec(compile(code, str(DOC), "exec"), {"__name__": "power_doc"})
    finally:
        os.chdir(here)
    return folder / "overlap.run", folder / "idf.run"


@pytest.mark.parametrize("block", range(2))
def test_the_docs_worked_example_is_what_the_command_prints(
    cli: CLI,
    cranfield: Path,
    cranfield_runs: tuple[Path, Path],
    block: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    console = _doc_blocks("console")
    assert len(console) == 2
    command, _, shown = console[block].partition("\n")
    assert command.startswith("$ rankmeter power ")
    args = shlex.split(command[len("$ rankmeter ") :].replace(SHARED_CRANFIELD, str(cranfield)))
    monkeypatch.chdir(cranfield_runs[0].parent)
    result = cli(*args)
    assert (result.code, result.err) == (0, ""), result.err
    assert result.out == shown


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_cranfield_in_every_format(
    cli: CLI, cranfield: Path, cranfield_runs: tuple[Path, Path], fmt: str, tmp_path: Path
) -> None:
    qrels = cranfield / "qrels.trec"
    out = tmp_path / f"power.{fmt}"
    result = cli(
        "power", qrels, *cranfield_runs, "-m", "nDCG@10", "-m", "P@10", "-f", fmt, "-o", out
    )
    assert (result.code, result.out, result.err) == (0, "", ""), result.err
    text = out.read_text(encoding="utf-8")
    diffs = _differences(qrels, *cranfield_runs, "nDCG@10")
    expected = power(diffs, correction="holm", comparisons=2)
    assert expected.n == 225
    sentence = (
        f"with 225 queries a difference of {expected.detectable_difference:.3f} nDCG@10 is "
        "detectable at 80% power"
    )
    if fmt == "json":
        payload = json.loads(text)
        assert payload["metrics"]["nDCG@10"]["queries_needed"] == expected.queries_needed
        assert payload["sentences"]["nDCG@10"] == sentence
        assert payload["alpha_per_test"] == 0.025
    else:
        assert sentence in text
        assert f"{expected.queries_needed:,}" in text
        assert f"{expected.detectable_difference:.4f}" in text
        assert "idf vs overlap: paired t-test, alpha 0.05 (Holm correction over 2 metrics" in text
        assert "queries needed: the fewest queries" in text


def test_cranfield_randomization_by_simulation(
    cli: CLI, cranfield: Path, cranfield_runs: tuple[Path, Path]
) -> None:
    qrels = cranfield / "qrels.trec"
    args = ("power", qrels, *cranfield_runs, "-m", "P@10", "-f", "json", "--test")
    simulated = json.loads(
        cli(*args, "randomization", "--simulations", "200", "--resamples", "400").out
    )["metrics"]["P@10"]
    analytic = json.loads(cli(*args, "t").out)["metrics"]["P@10"]
    assert simulated["simulations"] == 200 and simulated["resamples"] == 400
    assert simulated["monte_carlo_error"] == pytest.approx(math.sqrt(0.8 * 0.2 / 200))
    assert simulated["detectable_difference"] == pytest.approx(
        analytic["detectable_difference"], rel=0.15
    )
    diffs = _differences(qrels, *cranfield_runs, "P@10")
    again = power(diffs, test="randomization", simulations=200, resamples=400, correction="holm")
    assert simulated["queries_needed"] == again.queries_needed


def test_too_many_resamples_are_told_powers_default(cli: CLI, files: dict[str, Path]) -> None:
    # issue 23's trial: the cost sentence said compare's default (10,000) and its resolution
    args = ("--test", "randomization", "--resamples", "99999999999")
    result = cli("power", files["qrels"], files["a"], files["b"], *args)
    assert result.assert_one_error_line(2) == (
        "resamples=99999999999 must be an integer from 1 to 10,000,000 (sign flips per simulated "
        "test): the time grows with resamples times queries (about 1 s per million resamples and "
        "100 queries); 1,000 (the default) already resolves p-values to 0.001"
    )
