"""One parser of ``--scale`` (rankmeter.data.labels.parse_scale: ASCII digits, at most 18 a
number) behind agree, label, audit-labels and judge serve: a huge digit string or digits of
another script get the scale's one usage line, not Python's int() error or a silent grade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter.data.labels import MAX_SCALE_DIGITS, parse_scale
from rankmeter.errors import PolicyError

from ._cli_support import CLI

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

#: Thousands of digits (int() refuses past 4,300), one digit past the limit, Arabic-Indic and
#: fullwidth digits (which \d and int() read as 3 and 0).
BAD_SCALES = [
    "0-" + "9" * 5000,
    "0-" + "9" * (MAX_SCALE_DIGITS + 1),
    "0-\u0663",
    "\uff10-3",
]


def _inputs(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "labels": tmp_path / "labels.csv",
        "qrels": tmp_path / "human.qrels",
        "pool": tmp_path / "pool.jsonl",
        "queries": tmp_path / "queries.jsonl",
        "corpus": tmp_path / "corpus.jsonl",
    }
    paths["labels"].write_text("query_id,doc_id,rater,label\n1,d1,ann,1\n1,d1,bob,1\n")
    paths["qrels"].write_text("q1 0 d1 1\nq1 0 d2 0\n")
    paths["pool"].write_text(
        json.dumps({"query_id": "q1", "doc_id": "d1", "runs": {"r": 1}, "best_rank": 1,
                    "inclusion_probability": 1.0}) + "\n"
    )  # fmt: skip
    paths["queries"].write_text(json.dumps({"_id": "q1", "text": "wing"}) + "\n")
    paths["corpus"].write_text(json.dumps({"_id": "d1", "title": "", "text": "wing"}) + "\n")
    (tmp_path / "scale_labeler_mod.py").write_text("def grade(query, doc):\n    return 1\n")
    return paths


def _commands(paths: dict[str, Path], out: Path) -> dict[str, list[str | Path]]:
    return {
        "agree": ["agree", paths["labels"]],
        "label": [
            "label", "--pool", paths["pool"], "--queries", paths["queries"],
            "--corpus", paths["corpus"], "--labeler", "scale_labeler_mod:grade", "-o", out,
        ],
        "audit-labels": ["audit-labels", "--human", paths["qrels"], "--model", paths["qrels"]],
    }  # fmt: skip


@pytest.mark.parametrize("command", ["agree", "label", "audit-labels"])
@pytest.mark.parametrize("scale", BAD_SCALES, ids=["5000-digits", "19-digits", "arabic", "wide"])
def test_a_scale_past_the_parser_is_one_usage_line(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, scale: str
) -> None:
    monkeypatch.chdir(tmp_path)
    paths = _inputs(tmp_path)
    out = tmp_path / "model.qrels"
    done = cli(*_commands(paths, out)[command], "--scale", scale)
    error = done.assert_one_error_line(2)
    assert (
        "must be LOW-HIGH, two whole numbers (ASCII digits) with LOW < HIGH, each of at most "
        "18 digits, such as '0-3'"
    ) in error
    assert not out.exists()


def test_the_parser_reads_every_scale_it_writes() -> None:
    top = 10**MAX_SCALE_DIGITS - 1
    assert parse_scale(f"-{top}-{top}") == (-top, top)
    assert parse_scale(" -5 - -1 ") == (-5, -1)
    assert parse_scale((0, 3)) == (0, 3)
    with pytest.raises(PolicyError, match="must be LOW-HIGH"):
        parse_scale((0, top + 1))
