"""`rankmeter audit-labels` end to end on files (issue 11, item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rankmeter.judgments import audit_labels
from rankmeter.report.audit import render_json

from ._cli_support import CLI

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

HUMAN = "".join(f"q{q} 0 d{d} {(q + d) % 4}\n" for q in range(12) for d in range(6))
# The model inverts every grade.
MODEL = "".join(f"q{q} 0 d{d} {3 - (q + d) % 4}\n" for q in range(12) for d in range(6))


def _run(name: str, sign: int) -> str:
    return "".join(
        f"q{q} Q0 d{d} {d + 1} {sign * ((q + d) % 4) + d / 100} {name}\n"
        for q in range(12)
        for d in range(6)
    )


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, Path]:
    out = {
        "human": tmp_path / "human.qrels",
        "model": tmp_path / "model.qrels",
        "good": tmp_path / "good.run",
        "bad": tmp_path / "bad.run",
    }
    out["human"].write_text(HUMAN)
    out["model"].write_text(MODEL)
    out["good"].write_text(_run("good", 1))
    out["bad"].write_text(_run("bad", -1))
    return out


def test_json_equals_the_library(cli: CLI, paths: dict[str, Path]) -> None:
    args = ["--human", paths["human"], "--model", paths["model"], paths["good"], paths["bad"]]
    done = cli("audit-labels", *args, "-m", "nDCG@10", "--resamples", "500", "--format", "json")
    assert done.code == 0, done.err
    document = _strict(done.out)
    expected = audit_labels(
        paths["human"], paths["model"], [paths["good"], paths["bad"]], metrics=["nDCG@10"],
        resamples=500,
    )  # fmt: skip
    assert done.out == render_json(expected)
    assert document["orderings"][0]["flips"] == [["good", "bad"]]
    assert document["orderings"][0]["kendall_tau"] == -1.0
    assert [c["change"] for c in document["significance"]["changes"]] == ["reverses"]


def test_table_and_markdown(cli: CLI, paths: dict[str, Path], tmp_path: Path) -> None:
    args = ["--human", paths["human"], "--model", paths["model"], paths["good"], paths["bad"]]
    table = cli("audit-labels", *args, "-m", "P@3", "--resamples", "200")
    assert table.code == 0, table.err
    assert "Kendall τ" in table.out and "good / bad" in table.out and "reverses" in table.out
    assert "72 items labelled by both" in table.out
    out = tmp_path / "audit.md"
    markdown = cli("audit-labels", *args, "-m", "P@3", "--resamples", "200", "-f", "markdown",
                   "-o", out)  # fmt: skip
    assert markdown.code == 0 and markdown.out == ""
    text = out.read_text()
    assert "| P@3 | good \\> bad | bad \\> good | -1.000 | good / bad |" in text


def test_without_runs_only_agreement_and_leniency(cli: CLI, paths: dict[str, Path]) -> None:
    done = cli("audit-labels", "--human", paths["human"], "--model", paths["model"], "-f", "json")
    assert done.code == 0, done.err
    document = _strict(done.out)
    assert document["orderings"] == [] and document["systems"] == []
    assert document["shared_items"] == 72
    table = cli("audit-labels", "--human", paths["human"], "--model", paths["model"])
    assert "leniency: model − human" in table.out and "system order" not in table.out


def test_a_hostile_run_name_is_escaped(cli: CLI, paths: dict[str, Path], tmp_path: Path) -> None:
    hostile = "<b>x</b>\x1b]0;pwned\x07|y"
    run = tmp_path / "hostile.jsonl"
    run.write_text(
        "".join(
            json.dumps(
                {"query_id": f"q{q}", "doc_id": f"d{d}", "score": float(6 - d), "run": hostile}
            )
            + "\n"
            for q in range(12)
            for d in range(6)
        )
    )
    args = ["--human", paths["human"], "--model", paths["model"], paths["good"], run, "-m", "P@3"]
    table = cli("audit-labels", *args, "--resamples", "100")
    assert table.code == 0, table.err
    assert "\x1b" not in table.out and "\x07" not in table.out
    assert "\\x1b]0;p" in table.out  # visible (the table may wrap the name)
    markdown = cli("audit-labels", *args, "--resamples", "100", "-f", "markdown")
    assert "<b>" not in markdown.out and "\x1b" not in markdown.out
    assert "\\<b\\>" in markdown.out and "\\|y" in markdown.out
    document = _strict(cli("audit-labels", *args, "--resamples", "100", "-f", "json").out)
    assert document["systems"][1] == hostile


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--alpha", "2"], 2, "alpha=2.0 must be a number strictly between 0 and 1"),
        (["--test", "z"], 2, "test='z' must be one of"),
        (["--correction", "q"], 2, "correction='q' must be one of"),
        (["-m", "nDGC@10"], 2, "nDGC@10"),
        (["--seed", "-3"], 2, "seed=-3 must be an integer >= 0"),
        (["--scale", "0-1"], 1, "is outside the scale 0-1"),
    ],
)
def test_errors_are_one_line(
    cli: CLI, paths: dict[str, Path], extra: list[str], code: int, message: str
) -> None:
    done = cli("audit-labels", "--human", paths["human"], "--model", paths["model"], *extra)
    assert message in done.assert_one_error_line(code)


def test_data_errors_are_one_line(cli: CLI, paths: dict[str, Path], tmp_path: Path) -> None:
    one = cli("audit-labels", "--human", paths["human"], "--model", paths["model"], paths["good"])
    assert "needs two runs or more; got 1" in one.assert_one_error_line(2)
    other = tmp_path / "other.qrels"
    other.write_text("z 0 d1 1\n")
    disjoint = cli("audit-labels", "--human", paths["human"], "--model", other)
    assert "labels no (query, doc) item that" in disjoint.assert_one_error_line(1)
    missing = cli("audit-labels", "--human", tmp_path / "nope.qrels", "--model", other)
    assert "nope.qrels" in missing.assert_one_error_line(1)
    stdin = cli("audit-labels", "--human", "-", "--model", "-")
    assert "only one input can be read from stdin" in stdin.assert_one_error_line(2)
    no_model = cli("audit-labels", "--human", paths["human"])
    assert "--model" in no_model.assert_one_error_line(2)


def test_kappa_of_constant_human_grades_is_undefined_in_every_format(
    cli: CLI, tmp_path: Path
) -> None:
    # Issue 22, item 19: relevant-only human qrels (every grade 1) against a model that grades
    # 0 or 1. p_o = p_e whatever the model says, so statsmodels' kappa is 0.000: undefined.
    human = tmp_path / "human.qrels"
    model = tmp_path / "model.qrels"
    human.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(6) for d in range(4)))
    model.write_text("".join(f"q{q} 0 d{d} {(q + d) % 2}\n" for q in range(6) for d in range(4)))
    args = ["--human", human, "--model", model]
    document = _strict(cli("audit-labels", *args, "-f", "json").out)
    pair = document["agreement"]
    assert pair["cohen_kappa"] is None
    assert pair["weighted_kappa_linear"] is None and pair["weighted_kappa_quadratic"] is None
    assert any("'human' gave label 1 only" in n for n in document["notes"])
    table = cli("audit-labels", *args)
    assert table.code == 0, table.err
    assert "0.000" not in table.out.split("raw agreement")[1].split("leniency")[0]
    assert "Cohen's kappa" in table.out and "undefined" in table.out
    markdown = cli("audit-labels", *args, "-f", "markdown")
    assert "| Cohen's kappa | undefined |" in markdown.out


@pytest.mark.parametrize("with_runs", [True, False])
@pytest.mark.parametrize("count", ["1", "19", "99999999999"])
def test_resamples_have_one_low_whatever_the_count(
    cli: CLI, paths: dict[str, Path], count: str, with_runs: bool
) -> None:
    # issue 23's trial: 1 and 19 were refused "from 20", 99999999999 "from 1" (and without runs
    # 1 and 19 were taken); now one check, compare's, names the true low
    runs = [paths["good"], paths["bad"]] if with_runs else []
    args = ["--human", paths["human"], "--model", paths["model"], *runs, "--resamples", count]
    message = cli("audit-labels", *args).assert_one_error_line(2)
    assert message.startswith(
        f"resamples={count} must be an integer from 20 to 10,000,000 (randomizations and "
        "bootstrap resamples; fewer cannot give a p-value below 0.05)"
    )
