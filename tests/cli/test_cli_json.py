"""Every command's JSON parses with a strict parser (no NaN, Infinity or -Infinity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.vector import embed

from ._cli_support import CLI, QRELS, RUN_A, RUN_B


def strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "qrels", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    paths["qrels"].write_text(QRELS)
    paths["a"].write_text(RUN_A)
    paths["b"].write_text(RUN_B)
    one = tmp_path / "one"  # one query: no statistic can be computed
    one.write_text("1 0 x 1\n")
    paths["one"] = one
    for name, lines in (("one_a", "1 Q0 x 1 2.0 A\n"), ("one_b", "1 Q0 n 1 2.0 B\n")):
        paths[name] = tmp_path / name
        paths[name].write_text(lines)
    return paths


def commands(files: dict[str, Path]) -> list[list[Any]]:
    q, a, b = files["qrels"], files["a"], files["b"]
    return [
        ["evaluate", q, a, "-f", "json"],
        ["evaluate", q, a, b, "-f", "json", "-q", "-m", "nDCG(gain=exp)@3", "-m", "AP"],
        ["evaluate", q, a, "-f", "json", "-c", "-J"],
        ["compare", q, a, b, "-f", "json", "--per-query", "--resamples", "50"],
        ["compare", files["one"], files["one_a"], files["one_b"], "-f", "json", "-m", "RR"],
        ["explain", q, a, "--query", "1", "-f", "json"],
        ["explain", q, a, "--query", "3", "-f", "json"],  # judged, no results
        ["explain", "--grades", "-1,?,0", "-f", "json"],  # nothing relevant
        ["explain", "--grades", "3,0,2", "-m", "nDCG(gain=exp)@3", "-f", "json"],
        ["metrics", "-f", "json"],
        ["metrics", "--goal", "top-results", "-f", "json"],
        ["two-stage", q, a, b, "--pool", "2", "-m", "nDCG@2", "-f", "json"],
    ]


def test_every_json_output_is_strict_json(cli: CLI, files: dict[str, Path]) -> None:
    for command in commands(files):
        done = cli(*command)
        assert done.code == 0, (command, done.err)
        strict(done.out)


def test_an_overflowing_gain_never_reaches_the_json(cli: CLI, tmp_path: Path) -> None:
    # It used to print "nDCG(gain=exp)@10": NaN with exit 0; now it is an error, and stdout
    # stays empty (nothing that is not JSON).
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1100\n")
    run.write_text("1 Q0 a 1 1.0 r\n")
    for command in (
        ["evaluate", qrels, run, "-m", "nDCG(gain=exp)@10", "-f", "json"],
        ["explain", qrels, run, "--query", "1", "-m", "nDCG(gain=exp)@10", "-f", "json"],
        ["compare", qrels, run, run, "-m", "nDCG(gain=exp)@10", "-f", "json"],
    ):
        done = cli(*command)
        assert "grade 1100 of query '1'" in done.assert_one_error_line(1)


def test_compare_of_one_query_writes_null_for_what_cannot_be_computed(
    cli: CLI, files: dict[str, Path]
) -> None:
    done = cli("compare", files["one"], files["one_a"], files["one_b"], "-f", "json", "-m", "RR")
    (difference,) = strict(done.out)["differences"]
    for key in ("p_value", "p_corrected", "low", "high", "effect_size"):
        assert difference[key] is None, key


def test_embed_eval_json_is_strict(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Letters:
        def encode(self, texts: list[str], **_: Any) -> np.ndarray:
            return np.array([[t.count(c) for c in "abc"] for t in texts], dtype=np.float32)

    monkeypatch.setattr(embed, "_load_folder", lambda folder: Letters())
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights")
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "aaa"}\n{"_id": "d2", "text": "bbb"}\n{"_id": "d3", "text": "z"}\n'
    )
    (root / "queries.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": "2", "text": "b"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t1\n")
    done = cli("embed-eval", root, "--model", model, "--no-cache", "-f", "json", "-q", "--quiet")
    assert done.code == 0, done.err
    assert strict(done.out)["metrics"]["RR@10"] == 1.0


def test_ann_recall_json_is_strict(cli: CLI, tmp_path: Path) -> None:
    pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
    rng = np.random.default_rng(5)
    corpus, queries = tmp_path / "corpus.npy", tmp_path / "queries.npy"
    np.save(corpus, rng.normal(size=(300, 8)).astype(np.float32))
    np.save(queries, rng.normal(size=(10, 8)).astype(np.float32))
    done = cli("ann-recall", corpus, queries, "--index", "hnsw(M=8)", "-k", "5", "-f", "json")
    assert done.code == 0, done.err
    payload = strict(done.out)
    assert all(0 <= row["recall"] <= 1 for row in payload["rows"])


def test_bm25_json_is_strict(cli: CLI, tmp_path: Path) -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Flutter", "text": "wing flutter"}\n'
        '{"_id": "d2", "title": "Heat", "text": "heat transfer"}\n'
    )
    (root / "queries.jsonl").write_text('{"_id": "1", "text": "flutter"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    done = cli("bm25", root, "-f", "json", "--quiet")
    assert done.code == 0, done.err
    strict(done.out)
