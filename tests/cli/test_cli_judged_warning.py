"""Unjudged documents surface everywhere (issue 11, item 5): a run whose Judged@k is below
``--judged-below`` (default 0.9) gets a warning naming the run and k in every report of
``evaluate`` and ``compare``; as data in JSON; on stderr for the data formats (tsv, trec)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankmeter
from rankmeter import evaluate
from rankmeter._escape import markdown_text

from ._cli_support import CLI

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 d 1\nq2 0 e 0\n"
# "holes" puts unjudged documents (x, y, z) in its top 10: Judged@10 = (2/4 + 1/3) / 2.
HOLES = (
    "q1 Q0 a 1 9 holes\nq1 Q0 x 2 8 holes\nq1 Q0 b 3 7 holes\nq1 Q0 y 4 6 holes\n"
    "q2 Q0 d 1 9 holes\nq2 Q0 z 2 8 holes\nq2 Q0 w 3 7 holes\n"
)
# "judged" retrieves judged documents only: Judged@10 = 1.
JUDGED = "q1 Q0 c 1 9 judged\nq1 Q0 a 2 8 judged\nq2 Q0 e 1 9 judged\nq2 Q0 d 2 8 judged\n"
HOLES_JUDGED = (2 / 4 + 1 / 3) / 2


def hostile(name: str) -> str:
    return HOLES.replace(" holes\n", f" {name}\n")


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, Path]:
    out = {"qrels": tmp_path / "qrels.txt", "holes": tmp_path / "holes.run"}
    out["judged"] = tmp_path / "judged.run"
    out["qrels"].write_text(QRELS)
    out["holes"].write_text(HOLES)
    out["judged"].write_text(JUDGED)
    return out


def one_line(text: str) -> str:
    """Text with every run of whitespace as one space (rich wraps long lines)."""
    return " ".join(text.split())


def judged_lines(err: str) -> list[str]:
    """stderr less the depth warning: "holes" (4 results a query) and "judged" (2) differ in
    depth too, which evaluate of several runs says (test_cli_depth.py)."""
    return [line for line in err.splitlines() if "runs differ in depth" not in line]


def expected_warning(run: str = "holes", k: int = 10) -> str:
    return (
        f"warning: run '{run}' has Judged@{k} = 0.42 (below 0.90): 58% of its top {k} is "
        f"unjudged and counts as not relevant; judge more (rankmeter pool RUN --depth {k} "
        "--qrels QRELS) or use --judged-only / Bpref"
    )


def test_the_numbers_are_evaluate_s_judged_at_k(paths: dict[str, Path]) -> None:
    asked = evaluate(paths["qrels"], paths["holes"], ["Judged@10"])
    result = evaluate(paths["qrels"], paths["holes"], ["nDCG@10", "AP"])
    assert result.judged == pytest.approx(HOLES_JUDGED)
    assert result.judged == asked.metrics["Judged@10"] and result.judged_k == 10
    assert list(result.metrics) == ["nDCG@10", "AP"]  # no column the user did not ask for
    # The largest cutoff asked for is the k; the streamed reading gives the same.
    deep = evaluate(paths["qrels"], paths["holes"], ["P@3", "R@5"], stream=True)
    assert deep.judged_k == 5
    assert deep.judged == evaluate(paths["qrels"], paths["holes"], "Judged@5").metrics["Judged@5"]
    assert evaluate(paths["qrels"], paths["judged"], ["AP"]).judged == 1.0


def test_evaluate_table_warns_about_the_run_with_holes_only(
    cli: CLI, paths: dict[str, Path]
) -> None:
    result = cli("evaluate", paths["qrels"], paths["holes"], paths["judged"], "-m", "nDCG@10")
    assert result.code == 0, result.err
    text = one_line(result.out)
    assert expected_warning() in text
    assert "run 'judged' has" not in text
    assert judged_lines(result.err) == []


def test_evaluate_without_holes_prints_what_it_printed(cli: CLI, paths: dict[str, Path]) -> None:
    result = cli("evaluate", paths["qrels"], paths["judged"], "-m", "nDCG@10")
    assert result.code == 0 and "warning" not in result.out and result.err == ""
    as_json = cli("evaluate", paths["qrels"], paths["judged"], "-m", "nDCG@10", "-f", "json")
    assert list(json.loads(as_json.out)) == ["metrics", "queries"]  # (issue 16: "queries")


def test_evaluate_json_carries_the_warning_as_data(cli: CLI, paths: dict[str, Path]) -> None:
    single = cli("evaluate", paths["qrels"], paths["holes"], "-m", "P@5", "-f", "json")
    payload = json.loads(single.out, parse_constant=pytest.fail)  # strict: no NaN
    assert payload["warnings"] == [
        {"run": "holes", "k": 5, "judged": pytest.approx(HOLES_JUDGED), "threshold": 0.9}
    ]
    several = cli(
        "evaluate", paths["qrels"], paths["holes"], paths["judged"], "-m", "P@5", "-f", "json"
    )
    runs = json.loads(several.out, parse_constant=pytest.fail)
    assert [r["run"] for r in runs] == ["holes", "judged"]
    assert runs[0]["warnings"][0]["run"] == "holes" and "warnings" not in runs[1]
    assert single.err == "" and judged_lines(several.err) == []


@pytest.mark.parametrize("fmt", ["tsv", "trec"])
def test_data_formats_stay_data_and_warn_on_stderr(
    cli: CLI, paths: dict[str, Path], fmt: str
) -> None:
    warned = cli("evaluate", paths["qrels"], paths["holes"], paths["judged"], "-f", fmt)
    quiet = cli("evaluate", paths["qrels"], paths["holes"], paths["judged"], "-f", fmt, "--quiet")
    assert warned.code == quiet.code == 0
    assert warned.out == quiet.out and "warning" not in warned.out
    # Default metrics: R@100 is the largest cutoff.
    assert judged_lines(warned.err) == [expected_warning(k=100)]
    assert quiet.err == ""


def test_the_threshold_and_zero_to_disable(cli: CLI, paths: dict[str, Path]) -> None:
    args = ("evaluate", paths["qrels"], paths["holes"], "-m", "P@10")
    assert "warning" in cli(*args, "--judged-below", "0.5").out
    assert "warning" not in cli(*args, "--judged-below", "0.4").out
    assert "warning" not in cli(*args, "--judged-below", "0").out
    assert "warning" not in cli(*args, "--judged-only").out  # -J: every document left is judged
    assert "warning" not in cli(*args, "-m", "Bpref", "--judged-below", "0").out


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan"])
@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_bad_threshold_is_one_line(
    cli: CLI, paths: dict[str, Path], command: str, value: str
) -> None:
    result = cli(command, paths["qrels"], paths["holes"], paths["judged"], "--judged-below", value)
    line = result.assert_one_error_line(2)
    assert "judged_below=" in line and "from 0 to 1" in line


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "latex"])
def test_compare_warns_in_every_human_format(cli: CLI, paths: dict[str, Path], fmt: str) -> None:
    args = ("compare", paths["qrels"], paths["judged"], paths["holes"], "-m", "nDCG@10")
    result = cli(*args, "-f", fmt, "--resamples", "200")
    assert result.code == 0, result.err
    text = one_line(result.out.replace("&#x27;", "'"))
    if fmt == "latex":
        assert "Warning: run 'holes' has Judged@10 = 0.42 (below 0.90): 58\\% of" in text
        assert "-{}-judged-only / Bpref." in text
    else:
        assert expected_warning() in text
    assert "run 'judged' has" not in text
    quiet = cli(*args, "-f", fmt, "--resamples", "200", "--judged-below", "0")
    assert "arning: run '" not in quiet.out  # (not the runs' depth warning: 2 against 4)


def test_compare_json_warnings_and_the_comparison_attribute(
    cli: CLI, paths: dict[str, Path]
) -> None:
    args = ("compare", paths["qrels"], paths["judged"], paths["holes"], "-m", "AP")
    result = cli(*args, "-f", "json", "--resamples", "200")
    payload = json.loads(result.out, parse_constant=pytest.fail)
    assert payload["warnings"] == [
        {"run": "holes", "k": 10, "judged": pytest.approx(HOLES_JUDGED), "threshold": 0.9}
    ]
    none = cli(*args, "-f", "json", "--resamples", "200", "--judged-below", "0")
    assert "warnings" not in json.loads(none.out)
    comparison = rankmeter.compare(paths["qrels"], [paths["judged"], paths["holes"]], ["AP"])
    assert dict(comparison.judged) == {
        "judged": 1.0,
        "holes": evaluate(paths["qrels"], paths["holes"], "Judged@10").metrics["Judged@10"],
    }
    assert [w.run for w in comparison.judged_warnings()] == ["holes"]
    assert comparison.judged_warnings(0) == ()


def test_a_hostile_run_name_is_escaped_in_every_format(
    cli: CLI, paths: dict[str, Path], tmp_path: Path
) -> None:
    name = "<b>x|*_\\`&\x1b[2J"
    bad = tmp_path / "bad.run"
    bad.write_text(hostile(name))
    table = cli("evaluate", paths["qrels"], bad, "-m", "P@10")
    assert "\x1b" not in table.out and "run '<b>x|*_\\`&\\x1b[2J'" in one_line(table.out)
    tsv = cli("evaluate", paths["qrels"], bad, "-m", "P@10", "-f", "tsv")
    assert "\x1b" not in tsv.err and "\\x1b[2J" in tsv.err
    as_json = cli("evaluate", paths["qrels"], bad, "-m", "P@10", "-f", "json", "-o", tmp_path / "o")
    assert as_json.code == 0 and as_json.out == ""
    assert json.loads((tmp_path / "o").read_text())["warnings"][0]["run"] == name
    args = ("compare", paths["qrels"], paths["judged"], bad, "-m", "P@10", "--resamples", "200")
    markdown = cli(*args, "-f", "markdown").out
    warning = next(line for line in markdown.splitlines() if "Judged@10" in line)
    assert warning.startswith("> " + markdown_text(f"warning: run '{name}' has Judged@10"))
    assert "\x1b" not in warning
    html = cli(*args, "-f", "html", "-o", tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert html.code == 0 and "<b>x" not in page and "&lt;b&gt;x" in page
    latex = cli(*args, "-f", "latex").out
    warning = next(line for line in latex.splitlines() if "Judged@10" in line)
    assert "\\textbackslash" in warning and "\\&" in warning and "\x1b" not in warning
