"""`rankmeter all-pairs QRELS RUN RUN RUN` (issue 13, "All systems at once"): the library's
numbers in every format, names escaped, the matrix plot and the letters in the HTML page, bad
input in one error line, and docs/compare.md's worked example on Cranfield."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from rankmeter.comparison import compare_all

from ._cli_support import CLI, run_process

RUN_C = "1 Q0 c 1 3.0 sparse\n1 Q0 a 2 2.0 sparse\n2 Q0 a 1 9.0 sparse\n3 Q0 z 1 1.0 sparse\n"


def _besides_depth(err: str) -> str:
    """stderr without the warning that the sample runs differ in depth (bm25 4 results a
    query, dense and sparse 2: RR reads past rank 2; tests/cli/test_cli_depth.py tests it)."""
    return "".join(
        line for line in err.splitlines(keepends=True) if "runs differ in depth" not in line
    )


@pytest.fixture
def three(files: dict[str, Path], tmp_path: Path) -> list[Path]:
    c = tmp_path / "c.run"
    c.write_text(RUN_C)
    return [files["a"], files["b"], c]


def test_json_is_the_librarys_comparison(
    cli: CLI, files: dict[str, Path], three: list[Path]
) -> None:
    result = cli("all-pairs", files["qrels"], *three, "-m", "P@1", "-m", "RR", "-f", "json")
    assert (result.code, _besides_depth(result.err)) == (0, ""), result.err
    payload = json.loads(result.out)
    expected = compare_all(files["qrels"], three, ["P@1", "RR"])
    assert payload["systems"] == ["bm25", "dense", "sparse"] and payload["n_queries"] == 4
    assert payload["filled"] == {"bm25": 1, "dense": 1, "sparse": 1}
    for label in ("P@1", "RR"):
        got = payload["analyses"][label]
        want = expected.analysis(label).to_dict()
        assert got["means"] == want["means"] and got["letters"] == want["letters"]
        assert [p["p_value"] for p in got["pairs"]] == [p["p_value"] for p in want["pairs"]]
        assert got["anova"]["df_residual"] == 6  # (4 - 1) * (3 - 1)
    assert payload["settings"]["method"] == "tukey"
    assert any(line.startswith("queries: every judged query (4)") for line in payload["notes"])


def test_per_query_values_in_json(cli: CLI, files: dict[str, Path], three: list[Path]) -> None:
    result = cli("all-pairs", files["qrels"], *three, "-m", "P@1", "-f", "json", "--per-query")
    payload = json.loads(result.out)
    assert payload["query_ids"] == ["1", "2", "3", "007"]
    assert set(payload["per_query"]["P@1"]) == {"bm25", "dense", "sparse"}


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "html", "json"])
def test_every_format_says_the_method_and_the_letters(
    cli: CLI, files: dict[str, Path], three: list[Path], fmt: str, tmp_path: Path
) -> None:
    out = tmp_path / f"pairs.{fmt}"
    result = cli(
        "all-pairs", files["qrels"], *three, "-m", "RR", "--method", "randomised-tukey",
        "--resamples", "200", "-f", fmt, "-o", out,
    )  # fmt: skip
    assert (result.code, result.out, _besides_depth(result.err)) == (0, "", ""), result.err
    text = out.read_text(encoding="utf-8")
    assert "randomised Tukey HSD (Carterette 2012; 200 permutations, seed 0)" in text
    letters = compare_all(
        files["qrels"], three, "RR", method="randomised-tukey", resamples=200
    ).analysis("RR")
    assert "sparse" in text and "two-way anova" in text.lower()
    if fmt == "latex":
        assert f"$^{{\\mathrm{{{letters.letters[0]}}}}}$" in text
    elif fmt != "json":
        assert "share a letter are not significantly different" in text


def test_the_html_page_has_the_matrix_and_escapes_names(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    runs = []
    for name in ("<b>bold</b>", "plain", "x&y"):
        path = tmp_path / f"{len(runs)}.run"
        path.write_text(
            f"1 Q0 a 1 {len(runs) + 1}.0 {name}\n1 Q0 c 2 2.5 {name}\n2 Q0 x 1 1.0 {name}\n"
        )
        runs.append(path)
    out = tmp_path / "pairs.html"
    result = cli("all-pairs", files["qrels"], *runs, "-m", "RR", "-f", "html", "-o", out)
    assert (result.code, _besides_depth(result.err)) == (0, ""), result.err
    page = out.read_text(encoding="utf-8")
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "x&amp;y" in page and "x&y" not in page
    (svg,) = re.findall(r'<svg [^>]*data-plot="matrix".*?</svg>', page, re.S)
    assert svg.count('<g class="cell">') == 9  # 3 x 3 systems
    assert 'id="pairs-plot"' in svg and "<title" in svg
    assert page.count("<section") == 2  # one metric, and how to read it


def test_markdown_escapes_names(cli: CLI, files: dict[str, Path], tmp_path: Path) -> None:
    runs = []
    for name in ("a|b", "*star*", "plain"):
        path = tmp_path / f"{len(runs)}.run"
        path.write_text(f"1 Q0 a 1 {len(runs) + 1}.0 {name}\n2 Q0 x 1 1.0 {name}\n")
        runs.append(path)
    result = cli("all-pairs", files["qrels"], *runs, "-m", "RR", "-f", "markdown")
    assert result.code == 0, result.err
    assert "a\\|b" in result.out and "\\*star\\*" in result.out


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        ((), 2, r"all-pairs needs 3 runs or more; got 2 \(compare two runs with compare\)"),
        (
            ("c", "--method", "anova"),
            2,
            r"Invalid value for '--method':.*'anova' is not one of 'tukey', 'randomised-tukey'",
        ),
        (
            ("c", "--resamples", "5"),
            2,
            r"resamples=5 must be an integer from 20 to 10,000,000 \(random permutations; fewer "
            r"cannot give a p-value below 0.05\)",
        ),
        (("c", "--alpha", "2"), 2, r"alpha=2(\.0)? must be"),
    ],
)
def test_bad_input_is_one_error_line(
    cli: CLI, files: dict[str, Path], three: list[Path], extra: tuple[str, ...], code: int,
    message: str,
) -> None:  # fmt: skip
    runs = [files["a"], files["b"]]
    args = [str(three[2]) if e == "c" else e for e in extra]
    result = cli("all-pairs", files["qrels"], *runs, *args)
    assert re.search(message, result.assert_one_error_line(code)), result.err


def test_a_missing_run_and_two_stdins_are_one_error_line(
    cli: CLI, files: dict[str, Path], three: list[Path], tmp_path: Path
) -> None:
    missing = cli("all-pairs", files["qrels"], *three[:2], tmp_path / "none.run")
    assert "none.run" in missing.assert_one_error_line(1)
    twice = cli("all-pairs", files["qrels"], "-", "-", three[2])
    assert twice.assert_one_error_line(2) == "only one input can be read from stdin ('-')"


def test_the_real_command_lists_all_pairs(files: dict[str, Path], three: list[Path]) -> None:
    result = run_process(["--help"])
    assert result.code == 0 and re.search(r"\ball-pairs\b", result.out)
    done = run_process(["all-pairs", files["qrels"], *three, "-m", "P@1"])
    assert (done.code, _besides_depth(done.err)) == (0, ""), done.err
    assert "every pair" in done.out and "group" in done.out


# --- Cranfield: docs/compare.md's worked example ---------------------------------------------


@pytest.mark.parametrize("block", range(2))
def test_the_docs_worked_example_is_what_the_command_prints(
    cli: CLI, cranfield: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _allpairs_docs import SHARED_CRANFIELD, cranfield_runs, doc_blocks

    runs = cranfield_runs(cranfield)
    console = doc_blocks("console")
    assert len(console) == 2
    command, _, shown = console[block].partition("\n")
    assert command.startswith("$ rankmeter all-pairs ")
    args = shlex.split(command[len("$ rankmeter ") :].replace(SHARED_CRANFIELD, str(cranfield)))
    monkeypatch.chdir(runs[0].parent)
    result = cli(*args)
    assert (result.code, _besides_depth(result.err)) == (0, ""), result.err
    assert result.out == shown
