"""Runs named on the command line (issue 16, section 3): ``NAME=PATH`` for every command that
reads runs, the name shown in every output; without one, the TREC tag, else the file name
without its extension(s); a path that really contains ``=`` is read as a path; one name given
twice is one error line; evaluate's fast start reads run arguments as Typer's command does."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from rankmeter.cli import NO_FAST_START, _fast
from rankmeter.cli._runs import run_argument

from ._cli_support import CLI, NO_JUDGED_WARNING, run_process


def _named(files: dict[str, Path]) -> list[str]:
    return [f"baseline={files['a']}", f"tuned={files['b']}"]


def test_evaluate_shows_the_names_given(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("evaluate", files["qrels"], *_named(files), "-f", "json", *NO_JUDGED_WARNING)
    assert result.code == 0, result.err
    assert [r["run"] for r in json.loads(result.out)] == ["baseline", "tuned"]
    table = cli("evaluate", files["qrels"], *_named(files), *NO_JUDGED_WARNING)
    assert "baseline" in table.out and "tuned" in table.out and "bm25" not in table.out


def test_compare_shows_the_names_and_takes_one_as_baseline(
    cli: CLI, files: dict[str, Path]
) -> None:
    args = ["compare", files["qrels"], *_named(files), "--resamples", "50", *NO_JUDGED_WARNING]
    result = cli(*args, "-f", "json", "-b", "tuned")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["settings"]["baseline"] == "tuned"
    assert set(data["systems"]) == {"baseline", "tuned"}
    # The argument as written names the baseline too.
    again = cli(*args, "-f", "json", "-b", f"tuned={files['b']}")
    assert json.loads(again.out)["settings"]["baseline"] == "tuned"


def test_check_explain_power_and_pool_show_the_names(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    check = cli("check", files["qrels"], *_named(files), "-f", "json")
    assert [r["name"] for r in json.loads(check.out)["runs"]] == ["baseline", "tuned"]
    explain = cli("explain", files["qrels"], f"mine={files['a']}", "--query", "1", "-f", "json")
    assert explain.code == 0, explain.err
    assert json.loads(explain.out)["run"] == "mine"
    power = cli("power", files["qrels"], *_named(files), "-m", "AP")
    assert power.code == 0, power.err
    assert "tuned vs baseline" in power.out
    pool = tmp_path / "pool.jsonl"
    summary = cli("pool", *_named(files), "-o", pool, "--depth", "2")
    assert summary.code == 0, summary.err
    names = {name for line in pool.read_text().splitlines() for name in json.loads(line)["runs"]}
    assert names == {"baseline", "tuned"}


def test_fuse_and_two_stage_show_the_names(cli: CLI, files: dict[str, Path]) -> None:
    fused = cli("fuse", *_named(files))
    assert fused.code == 0, fused.err
    assert fused.out.splitlines()[0].endswith("rrf(baseline+tuned)")
    staged = cli("two-stage", files["qrels"], *_named(files), "--pool", "3")
    assert staged.code == 0, staged.err
    assert "baseline" in staged.out and "tuned" in staged.out


def test_the_default_name_is_the_tag_else_the_file_stem(cli: CLI, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    tagged = tmp_path / "whatever.trec.gz"
    with gzip.open(tagged, "wt") as out:
        out.write("1 Q0 a 1 1.0 bm25\n")
    untagged = tmp_path / "dense.run.csv.gz"
    with gzip.open(untagged, "wt") as out:
        out.write("query_id,doc_id,score\n1,a,1.0\n")
    result = cli("evaluate", tmp_path / "qrels.txt", tagged, untagged, "-f", "json")
    assert [r["run"] for r in json.loads(result.out)] == ["bm25", "dense"]


def test_a_path_with_an_equals_sign_is_a_path_when_the_file_exists(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    odd = tmp_path / "k=v.run"
    odd.write_text(files["a"].read_text())
    result = cli("evaluate", files["qrels"], odd, files["b"], "-f", "json", *NO_JUDGED_WARNING)
    assert result.code == 0, result.err
    assert [r["run"] for r in json.loads(result.out)] == ["bm25", "dense"]
    assert run_argument(str(odd)).name is None
    # Text before '=' holding a path separator is never a name: the whole is a (missing) path.
    assert run_argument("runs/a=b.run").name is None
    assert run_argument("a=runs/b.run").name == "a"


@pytest.mark.parametrize("command", ["evaluate", "compare", "check", "power"])
def test_a_name_given_twice_is_one_error_line(
    cli: CLI, files: dict[str, Path], command: str
) -> None:
    args = [f"x={files['a']}", f"x={files['b']}"]
    result = cli(command, files["qrels"], *args)
    line = result.assert_one_error_line(2)
    assert "two runs are named 'x'" in line and "give each run its own name" in line


def test_a_given_name_that_another_run_has_is_an_error(cli: CLI, files: dict[str, Path]) -> None:
    # b.run's tag is dense: naming a.run dense would leave two runs called dense.
    result = cli("evaluate", files["qrels"], f"dense={files['a']}", files["b"])
    assert "two runs are named 'dense'" in result.assert_one_error_line(2)


@pytest.mark.parametrize("text", ["=a.run", "name="])
def test_an_empty_name_or_path_is_an_error(cli: CLI, files: dict[str, Path], text: str) -> None:
    line = cli("evaluate", files["qrels"], text).assert_one_error_line(2)
    assert "NAME=PATH" in line


@pytest.mark.skipif(sys.platform == "win32", reason="no fast start on Windows")
@pytest.mark.parametrize(
    "runs",
    [
        ["baseline={a}", "tuned={b}"],
        ["x={a}", "x={b}"],  # one name twice: the same one error line
        ["dense={a}", "{b}"],
        ["=x.run"],
    ],
)
def test_fast_start_and_typer_read_run_names_the_same(
    files: dict[str, Path], runs: list[str]
) -> None:
    given = [r.format(a=files["a"], b=files["b"]) for r in runs]
    args = ["evaluate", str(files["qrels"]), *given, "-f", "json"]
    assert _fast.evaluate_args(args) is not None
    fast = run_process(args, env={})
    slow = run_process(args, env={NO_FAST_START: "1"})
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


def test_a_named_run_does_not_rename_the_unnamed_run_that_shares_its_tag(
    cli: CLI, files: dict[str, Path]
) -> None:
    # Only runs that share a tag *without* NAME= are told apart (docs/guide.md): the same file
    # given once plain and once as base2=... was shown as bm25#1, not by its tag bm25.
    result = cli("evaluate", files["qrels"], files["a"], f"base2={files['a']}", "-f", "json")
    assert result.code == 0, result.err
    assert [item["run"] for item in json.loads(result.out)] == ["bm25", "base2"]
