"""Explanations.for_files: one query explained from files as `rankmeter explain QRELS RUN
--query Q` reads them (NAME=PATH, formats, stdin, the query's text from a queries file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter.errors import PolicyError
from rankmeter.explanation import Explanations

QRELS = "q1 0 a 1\nq1 0 c 2\nq2 0 x 1\n"
RUN = "q1 Q0 a 1 0.9 sys\nq1 Q0 b 2 0.8 sys\nq1 Q0 c 3 0.8 sys\nq2 Q0 x 1 0.5 sys\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "sys.run").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "sys.run")


def test_files_explain_as_the_loaded_data_does(files: tuple[str, str]) -> None:
    qrels, run = files
    explained = Explanations.for_files(qrels, f"mine={run}", "q1", ["AP", "P@2"], rel=1)
    same = Explanations.for_query(QRELS_DICT, RUN_DICT, "q1", ["AP", "P@2"])
    assert [e.shown_value for e in explained] == [e.shown_value for e in same]
    assert explained.run == "mine" and same.run == "run"


def test_policies_formats_and_the_query_text(files: tuple[str, str], tmp_path: Path) -> None:
    qrels, run = files
    (tmp_path / "queries.tsv").write_text("q1\twing flutter\n")
    explained = Explanations.for_files(
        qrels, run, "q1", ["P@3"], queries=str(tmp_path / "queries.tsv"), rel=2,
        qrels_format="trec", run_format="trec", ties="input",
    )  # fmt: skip
    (one,) = explained
    assert one.shown_value == "0.3333" and explained.query_text == "wing flutter"
    assert explained.policies["rel"] == 2 and explained.policies["ties"] == "input"
    none = Explanations.for_files(qrels, run, "q2", ["P@1"], queries=str(tmp_path / "queries.tsv"))
    assert none.query_text is None


def test_one_file_from_stdin_at_most(files: tuple[str, str]) -> None:
    with pytest.raises(PolicyError, match=r"only one input can be read from stdin \('-'\)"):
        Explanations.for_files("-", "-", "q1")


QRELS_DICT = {"q1": {"a": 1, "c": 2}, "q2": {"x": 1}}
RUN_DICT = {"q1": {"a": 0.9, "b": 0.8, "c": 0.8}, "q2": {"x": 0.5}}


def test_path_objects_are_paths(files: tuple[str, str]) -> None:
    qrels, run = files
    explained = Explanations.for_files(Path(qrels), Path(run), "q1", ["AP"])
    same = Explanations.for_files(qrels, run, "q1", ["AP"])
    assert [e.shown_value for e in explained] == [e.shown_value for e in same]
    assert explained.run == same.run
