"""Labelers (issue 11, item 4: any Python callable): label_pool over a pool, its texts and a
scale; load_labeler by name; every error message; the TREC qrels writer they feed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from rankmeter.data import Qrels
from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.io import read_qrels, trec_qrels_text, write_trec_qrels
from rankmeter.io.pool import PoolItem
from rankmeter.judgments import Labeler, label_pool, load_labeler
from rankmeter.report.pool import write_pool

POOL = (
    PoolItem("q1", "d1", {"bm25": 1}, 1, 1.0),
    PoolItem("q1", "d2", {"bm25": 2}, 2, 1.0),
    PoolItem("q2", "d2", {"bm25": 1}, 1, 1.0),
)
QUERIES = {"q1": "wing flutter", "q2": "heat transfer"}
CORPUS = {"d1": "flutter of a swept wing", "d2": "heat transfer in a boundary layer"}


def overlap(query: str, doc: str) -> int:
    return min(3, len(set(query.split()) & set(doc.split())))


def test_every_item_is_graded_by_the_callable() -> None:
    asked: list[tuple[str, str]] = []

    def recording(query: str, doc: str) -> int:
        asked.append((query, doc))
        return overlap(query, doc)

    qrels = label_pool(POOL, QUERIES, CORPUS, recording)
    assert qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 2}}
    assert asked == [(QUERIES[i.query_id], CORPUS[i.doc_id]) for i in POOL]


def test_a_labeler_is_any_callable_object() -> None:
    class Constant:
        def __call__(self, query_text: str, doc_text: str) -> int:
            return 1

    labeler: Labeler = Constant()
    assert label_pool(POOL, QUERIES, CORPUS, labeler).to_dict() == {
        "q1": {"d1": 1, "d2": 1},
        "q2": {"d2": 1},
    }
    # Whole floats and NumPy integers are grades too.
    import numpy as np

    assert label_pool(POOL, QUERIES, CORPUS, lambda q, d: np.int64(2)).to_dict()["q2"] == {"d2": 2}
    assert label_pool(POOL, QUERIES, CORPUS, lambda q, d: 3.0).to_dict()["q1"]["d1"] == 3


def test_files_are_read_as_the_pool_and_beir_give_them(tmp_path: Path) -> None:
    pool_path = tmp_path / "pool.jsonl"
    write_pool(POOL, pool_path)
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items())
    )
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"_id": "d1", "title": "Wing", "text": "flutter of a swept wing"})
        + "\n"
        + json.dumps({"_id": "d2", "text": "heat transfer"})
        + "\n"
    )
    seen: dict[str, str] = {}

    def remember(query: str, doc: str) -> int:
        seen[doc] = query
        return 0

    qrels = label_pool(pool_path, queries, corpus, remember, scale=(0, 1))
    # BEIR's title and text reach the labeler together, as retrievers read them.
    assert seen == {
        "Wing flutter of a swept wing": "wing flutter",
        "heat transfer": "heat transfer",
    }
    assert len(qrels) == 3 and qrels.source == os.fspath(pool_path)
    # Query texts as qid<TAB>text work too.
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("q1\twing flutter\nq2\theat transfer\n")
    assert len(label_pool(pool_path, tsv, corpus, overlap)) == 3


def test_a_missing_query_text_names_the_query_and_the_file(tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\twing flutter\n")
    with pytest.raises(
        FormatError, match=r"queries\.tsv: query 'q2' of the pool <pool> has no text"
    ):
        label_pool(POOL, queries, CORPUS, overlap)


def test_a_missing_document_names_it_before_any_labelling() -> None:
    calls: list[str] = []

    def counting(query: str, doc: str) -> int:
        calls.append(doc)
        return 0

    with pytest.raises(
        FormatError,
        match=r"<corpus>: doc 'd2' \(query 'q1'\) of the pool <pool> is not in the corpus",
    ):
        label_pool(POOL, QUERIES, {"d1": "x"}, counting)
    assert calls == []


@pytest.mark.parametrize(
    ("item", "shown"),
    [
        (PoolItem("q1", "a b", {"r": 1}, 1, 1.0), "doc id 'a b' (query 'q1')"),
        (PoolItem("q1", "d\u20281", {"r": 1}, 1, 1.0), r"doc id 'd\u20281' (query 'q1')"),
        (PoolItem("q 1", "d1", {"r": 1}, 1, 1.0), "query id 'q 1' (query 'q 1')"),
    ],
)
def test_an_id_qrels_cannot_hold_is_refused_before_any_labelling(
    item: PoolItem, shown: str
) -> None:
    """Issue 22 (label trial), item 5: not after the labeler (a paid model) has been asked."""
    calls: list[str] = []

    def counting(query: str, doc: str) -> int:
        calls.append(doc)
        return 0

    texts = {item.doc_id: "x", "d1": "y"}
    with pytest.raises(FormatError, match=r"^pool\.jsonl: " + re.escape(shown)) as caught:
        label_pool([item], {item.query_id: "q", "q1": "q"}, texts, counting, source="pool.jsonl")
    assert "cannot be written as TREC qrels: ids must be non-empty and hold no whitespace" in str(
        caught.value
    )
    assert calls == []


@pytest.mark.parametrize("grade", [4, -1, 1.5, "2", None, True, float("nan")])
def test_a_grade_off_the_scale_names_the_item(grade: Any) -> None:
    with pytest.raises(
        FormatError,
        match=r"gave query 'q1', doc 'd1' the grade .*, not a whole number on the scale 0-3",
    ):
        label_pool(POOL, QUERIES, CORPUS, lambda q, d: grade)


def test_a_labeler_that_raises_is_one_message_naming_the_item() -> None:
    def broken(query: str, doc: str) -> int:
        raise KeyError("no model")

    with pytest.raises(
        RankmeterError,
        match=r"labeler .*broken failed on query 'q1', doc 'd1': KeyError: 'no model'",
    ):
        label_pool(POOL, QUERIES, CORPUS, broken)


def test_bad_arguments() -> None:
    with pytest.raises(PolicyError, match=r"labeler must be a callable .* not int"):
        label_pool(POOL, QUERIES, CORPUS, 3)  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=r"scale='x' must be LOW-HIGH"):
        label_pool(POOL, QUERIES, CORPUS, overlap, scale="x")
    with pytest.raises(PolicyError, match="scale=None: give the grades"):
        label_pool(POOL, QUERIES, CORPUS, overlap, scale=None)
    with pytest.raises(
        PolicyError, match=r"queries must be a path or a dict \{id: text\}, not list"
    ):
        label_pool(POOL, ["q1"], CORPUS, overlap)


def test_load_labeler_finds_module_function_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_grades_mod.py").write_text(
        "class Rules:\n    @staticmethod\n    def grade(q, d):\n        return 2\nvalue = 3\n"
    )
    monkeypatch.chdir(tmp_path)
    assert load_labeler("my_grades_mod:Rules.grade")("a", "b") == 2
    with pytest.raises(
        PolicyError, match=r"--labeler 'my_grades_mod:value' is a int, not a callable"
    ):
        load_labeler("my_grades_mod:value")
    with pytest.raises(PolicyError, match=r"module 'my_grades_mod' has no 'nothing'"):
        load_labeler("my_grades_mod:nothing")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("grade", r"--labeler 'grade' must be module:function"),
        (":grade", r"--labeler ':grade' must be module:function"),
        ("mod:", r"--labeler 'mod:' must be module:function"),
        ("no_such_module_xyz:f", r"cannot import 'no_such_module_xyz'"),
    ],
)
def test_load_labeler_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        load_labeler(spec)


def test_trec_qrels_round_trip_and_ids_trec_cannot_hold(tmp_path: Path) -> None:
    qrels = label_pool(POOL, QUERIES, CORPUS, overlap)
    path = tmp_path / "model.qrels"
    write_trec_qrels(qrels, path)
    assert read_qrels(path).to_dict() == qrels.to_dict()
    assert trec_qrels_text(qrels).splitlines()[0] == "q1 0 d1 2"
    spaced = Qrels.from_columns(["q 1"], ["d1"], [2])
    path.write_text("kept\n")
    with pytest.raises(PolicyError, match=r"query id 'q 1' cannot be written as TREC qrels"):
        write_trec_qrels(spaced, path)
    assert path.read_text() == "kept\n"


def test_progress_is_called_before_each_item_and_source_names_the_pool() -> None:
    seen: list[str] = []
    label_pool(POOL, QUERIES, CORPUS, overlap, progress=seen.append)
    assert seen == ["labelling query q1", "labelling query q1", "labelling query q2"]
    with pytest.raises(FormatError, match=r"^pool\.jsonl: labeler .* gave query 'q1'"):
        label_pool(POOL, QUERIES, CORPUS, lambda q, d: 9, source="pool.jsonl")
