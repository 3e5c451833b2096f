"""Qrels that hold only relevant judgments (issue 22, item 19): CISI, MEDLINE, many legacy and
click-derived sets. There every unjudged document is assumed not relevant and Judged@k is the
share of the top k that is relevant, so the reports say that once instead of telling every run
to "judge more", and ``check`` does not call the numbers trustworthy without the caveat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._cli_support import CLI

# Every judgment is relevant (grade 1 or 2); each run's top 10 holds 3 or 4 of them.
QRELS = "".join(f"q{q} 0 r{d} {1 + d % 2}\n" for q in range(6) for d in range(4))


def _run(name: str, hits: int) -> str:
    return "".join(
        f"q{q} Q0 {'r' if d < hits else 'x'}{d} {d + 1} {20 - d} {name}\n"
        for q in range(6)
        for d in range(10)
    )


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, Path]:
    out = {"qrels": tmp_path / "qrels.txt", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    out["qrels"].write_text(QRELS)
    out["a"].write_text(_run("a", 4))
    out["b"].write_text(_run("b", 3))
    return out


def _flat(text: str) -> str:
    return " ".join(text.split())


SAID = "the qrels hold only relevant documents (none is judged not relevant)"


def test_evaluate_says_it_once_instead_of_judge_more(cli: CLI, paths: dict[str, Path]) -> None:
    done = cli("evaluate", paths["qrels"], paths["a"], paths["b"], "-m", "P@10")
    assert done.code == 0, done.err
    text = _flat(done.out)
    assert text.count(SAID) == 1
    assert "Judged@10 measures precision" in text and "'a' 0.40, 'b' 0.30" in text
    assert "judge more" not in text and "has Judged@10" not in text
    tsv = cli("evaluate", paths["qrels"], paths["a"], paths["b"], "-m", "P@10", "-f", "tsv")
    assert tsv.err.count(SAID) == 1 and "judge more" not in tsv.err
    document = json.loads(cli("evaluate", paths["qrels"], paths["a"], "-f", "json").out)
    assert document["warnings"][0]["relevant_only"] is True


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "latex"])
def test_compare_says_it_once(cli: CLI, paths: dict[str, Path], fmt: str) -> None:
    done = cli(
        "compare", paths["qrels"], paths["a"], paths["b"], "-m", "P@10", "--resamples", "200",
        "-f", fmt,
    )  # fmt: skip
    assert done.code == 0, done.err
    text = _flat(done.out)
    assert text.count("hold only relevant documents") == 1
    assert "judge more" not in text


def test_check_does_not_trust_the_numbers_without_the_caveat(
    cli: CLI, paths: dict[str, Path]
) -> None:
    table = cli("check", paths["qrels"], paths["a"], paths["b"])
    assert table.code == 0, table.err
    text = _flat(table.out)
    assert "(numbers can be trusted)" not in text
    assert "numbers can be trusted as far as qrels of relevant documents only go" in text
    assert text.count("hold only relevant documents") == 1
    assert "is unjudged and counts as not relevant" not in text  # no per-run Judged@k warning
    document = json.loads(cli("check", paths["qrels"], paths["a"], paths["b"], "-f", "json").out)
    assert document["qrels"]["relevant_only"] is True
    kinds = [w["kind"] for r in document["runs"] for w in r["warnings"]]
    assert "judged" not in kinds


def test_one_non_relevant_judgment_keeps_the_judged_warning(
    cli: CLI, paths: dict[str, Path]
) -> None:
    paths["qrels"].write_text(QRELS + "q0 0 n0 0\n")
    done = cli("evaluate", paths["qrels"], paths["a"], paths["b"], "-m", "P@10")
    text = _flat(done.out)
    assert "hold only relevant" not in text and "run 'a' has Judged@10" in text
    check = cli("check", paths["qrels"], paths["a"])
    assert "(numbers can be trusted)" in _flat(check.out)


# -- the hostile trial of the fixes (issue 22, trial item 1, and check --rel) ----------------

#: Only negative grades: trec_eval's "pooled but not judged". No document is judged at all.
NEGATIVE = "".join(f"q{q} 0 r{d} -1\n" for q in range(6) for d in range(4))


def test_qrels_without_a_relevant_judgment_are_not_relevant_only(
    cli: CLI, paths: dict[str, Path]
) -> None:
    """Every metric is 0 under them: check says so as an error (exit 1), never "trusted" nor
    "relevant-only"; evaluate does not call them relevant-only either."""
    paths["qrels"].write_text(NEGATIVE)
    table = cli("check", paths["qrels"], paths["a"], paths["b"])
    assert table.code == 1
    text = _flat(table.out)
    assert "judge no document relevant" in text and "every metric of every run is 0" in text
    assert "trusted" not in text and "hold only relevant" not in text
    assert "numbers are meaningless: the qrels judge no document relevant)" in text
    assert "for some runs" not in text
    assert "the numbers of every run meaningless" in table.err
    document = json.loads(cli("check", paths["qrels"], paths["a"], "-f", "json").out)
    assert document["ok"] is False
    assert document["qrels"]["relevant_only"] is False and document["qrels"]["no_relevant"]
    assert [w["kind"] for w in document["warnings"] if w["fatal"]] == ["no_relevant"]
    done = cli("evaluate", paths["qrels"], paths["a"], "-m", "P@10")
    assert done.code == 0, done.err
    assert "hold only relevant" not in _flat(done.out + done.err)


def test_check_takes_rel(cli: CLI, paths: dict[str, Path]) -> None:
    """check --rel, as evaluate and compare: grade 1 is judged not relevant under --rel 2,
    so the qrels are no longer relevant-only; every grade below it, none relevant at all."""
    document = json.loads(cli("check", paths["qrels"], paths["a"], "--rel", "2", "-f", "json").out)
    assert document["qrels"]["rel"] == 2 and document["qrels"]["relevant_only"] is False
    assert "(numbers can be trusted" in _flat(
        cli("check", paths["qrels"], paths["a"], "-l", "2").out
    )
    none = cli("check", paths["qrels"], paths["a"], "--rel", "3")
    assert none.code == 1 and "no grade of 3 or more" in _flat(none.out)
