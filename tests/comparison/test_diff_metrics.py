"""`diff_runs` takes every metric `evaluate` takes (issue 24): ERR, IPrec at a recall level,
GMAP (per-query logs, geometric means), statAP on a sampled pool, RBP_resid (lower is
better) and the diversity metrics on subtopic qrels; each query's value is evaluate's, a run
without results for a query scoring as an empty ranking (evaluate -c)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rankmeter import evaluate
from rankmeter.comparison import diff_runs

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 y -1\n2 0 a 1\n2 0 x 3\n3 0 z 1\n4 0 a 1\n"
SUBTOPICS = "1 1 a 1\n1 2 a 1\n1 2 c 1\n1 1 b 0\n2 1 a 1\n2 2 x 1\n3 1 z 1\n3 2 a 1\n"
# A answers 1 and 2, B answers 1, 2 and 3; nobody answers 4 (left out of the diff)
A = "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 d 3 1 A\n2 Q0 y 1 9 A\n2 Q0 a 2 8 A\n"
B = "1 Q0 c 1 3 B\n1 Q0 a 2 2 B\n2 Q0 x 1 9 B\n3 Q0 z 1 1 B\n"
POOL = {("1", "a"): 0.5, ("1", "c"): 0.25, ("2", "x"): 0.5}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "qrels": tmp_path / "qrels.txt",
        "subtopics": tmp_path / "subtopics.txt",
        "a": tmp_path / "a.run",
        "b": tmp_path / "b.run",
        "pool": tmp_path / "pool.jsonl",
    }
    for name, text in (("qrels", QRELS), ("subtopics", SUBTOPICS), ("a", A), ("b", B)):
        paths[name].write_text(text)
    paths["pool"].write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "runs": {"A": 1}, "best_rank": 1,
                        "inclusion_probability": p}) + "\n"
            for (q, d), p in POOL.items()
        )
    )  # fmt: skip
    return paths


CASES = [
    ("ERR@10", "qrels", None),
    ("nERR@5", "qrels", None),
    ("IPrec@0.5", "qrels", None),
    ("GMAP", "qrels", None),
    ("statAP", "qrels", "pool"),
    ("stat_nDCG@10", "qrels", "pool"),
    ("infAP", "qrels", None),
    ("RBP_resid", "qrels", None),
    ("alpha_nDCG@20", "subtopics", None),
    ("ERR_IA@10", "subtopics", None),
    ("StRecall@5", "subtopics", None),
]


@pytest.mark.parametrize(("metric", "qrels", "pool"), CASES)
def test_each_query_has_evaluates_value(
    files: dict[str, Path], metric: str, qrels: str, pool: str | None
) -> None:
    inclusion = None if pool is None else files[pool]
    diff = diff_runs(files[qrels], files["a"], files["b"], metric=metric, inclusion=inclusion)
    assert {q.query for q in diff.queries} == {"1", "2", "3"}
    for side, run in (("a", "a"), ("b", "b")):
        expected = evaluate(
            files[qrels], files[run], [metric], include_missing=True, inclusion=inclusion
        ).per_query.to_dict()
        for q in diff.queries:
            got = q.value_a if side == "a" else q.value_b
            assert got == pytest.approx(expected[q.query][metric], abs=1e-12), (side, q.query)
    for q in diff.queries:
        assert q.delta == q.value_b - q.value_a


def test_a_pool_changes_statap(files: dict[str, Path]) -> None:
    plain = diff_runs(files["qrels"], files["a"], files["b"], metric="statAP")
    sampled = diff_runs(
        files["qrels"], files["a"], files["b"], metric="statAP", inclusion=files["pool"]
    )
    assert plain.query("1").value_b != sampled.query("1").value_b


def test_gmap_is_on_the_log_scale(files: dict[str, Path]) -> None:
    diff = diff_runs(files["qrels"], files["a"], files["b"], metric="GMAP")
    assert diff.geometric
    # A has no results for query 3: ln 0.00001, as trec_eval -c gives gm_map
    assert diff.query("3").value_a == pytest.approx(math.log(1e-5))
    ap = {
        run: evaluate(files["qrels"], files[run], ["AP"], include_missing=True)
        .per_query.to_dict()
        for run in ("a", "b")
    }  # fmt: skip
    for q in diff.queries:
        ratio = max(ap["b"][q.query]["AP"], 1e-5) / max(ap["a"][q.query]["AP"], 1e-5)
        assert q.delta == pytest.approx(math.log(ratio), abs=1e-12)
    logs_a = [q.value_a for q in diff.queries]
    assert diff.mean_a == pytest.approx(math.exp(np.mean(logs_a)))  # a geometric mean
    assert diff.mean_delta == pytest.approx(math.log(diff.mean_b / diff.mean_a))
    assert any("per-query values are logs" in note for note in diff.notes)
    payload = diff.to_dict()
    assert payload["mean_delta"] == pytest.approx(diff.mean_delta)


def test_rbp_resid_lower_is_a_gain(files: dict[str, Path]) -> None:
    diff = diff_runs(files["qrels"], files["a"], files["b"], metric="RBP_resid")
    assert diff.better == "lower" and diff.to_dict()["better"] == "lower"
    # A scores 1 on query 3 (no results: all of RBP unknown); B's residual is lower there
    assert diff.query("3").value_a == 1.0 and diff.query("3").delta < 0
    gains = [-q.delta for q in diff.queries]
    assert gains == sorted(gains)  # the largest loss (rise) first
    assert diff.wins == sum(q.delta < 0 for q in diff.queries) > 0
    assert diff.losses == sum(q.delta > 0 for q in diff.queries)


def test_subtopic_qrels_with_one_subtopic_get_a_note(files: dict[str, Path]) -> None:
    diff = diff_runs(files["qrels"], files["a"], files["b"], metric="alpha_nDCG@20")
    assert any("measure no diversity here" in note for note in diff.notes)
    diverse = diff_runs(files["subtopics"], files["a"], files["b"], metric="alpha_nDCG@20")
    assert not any("measure no diversity here" in note for note in diverse.notes)


def test_compare_files_diffs_with_the_pool(files: dict[str, Path], tmp_path: Path) -> None:
    from rankmeter.comparison import compare_files

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "a", "title": "A", "text": "alpha"}) + "\n")
    done = compare_files(
        files["qrels"], [f"A={files['a']}", f"B={files['b']}"], ["statAP"],
        corpus=corpus, inclusion=files["pool"], resamples=200,
    )  # fmt: skip
    (diff,) = done.diffs
    direct = diff_runs(
        files["qrels"], files["a"], files["b"], metric="statAP", inclusion=files["pool"]
    )
    assert [(q.query, q.value_a, q.value_b) for q in diff.queries] == [
        (q.query, q.value_a, q.value_b) for q in direct.queries
    ]
