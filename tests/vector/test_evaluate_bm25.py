"""evaluate_bm25: `rankmeter bm25` as a Python call (a BEIR folder read, BM25's run written
where asked, every judged query evaluated, a progress label per stage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter.io import read_run
from rankmeter.io.beir import load_beir
from rankmeter.vector.bm25 import bm25_run, describe_bm25, evaluate_bm25
from rankmeter.vector.retrieval import evaluate_retrieval

pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")


def tiny_beir(root: Path) -> Path:
    corpus = {
        "d1": ("Flutter", "wing flutter at supersonic speeds"),
        "d2": ("Boundary layers", "transition on a flat plate"),
        "d3": ("Heat", "heat transfer in hypersonic flow"),
    }
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in corpus.items()
        )
    )
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "wing flutter"}\n{"_id": "2", "text": "the of"}\n'
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n2\td3\t1\n")
    return root


def test_the_run_is_written_and_evaluated_on_every_judged_query(tmp_path: Path) -> None:
    folder = tiny_beir(tmp_path / "beir")
    stages: list[str] = []
    result = evaluate_bm25(
        folder, ["P@1", "RR"], k=2, k1=1.2, name="lex", run_out=tmp_path / "bm25.run",
        progress=stages.append,
    )  # fmt: skip
    assert stages == [f"reading {folder}", "retrieving", "evaluating"]
    loaded = load_beir(folder)
    run = bm25_run(loaded, k=2, k1=1.2, name="lex")
    assert read_run(tmp_path / "bm25.run").to_dict() == run.to_dict()
    expected = evaluate_retrieval(
        loaded.qrels, run, ["P@1", "RR"], model=describe_bm25(k1=1.2), collection=str(folder)
    )
    assert result.to_dict(per_query=True) == expected.to_dict(per_query=True)
    assert result.unanswered == ("2",)  # stopwords only: no document matches


def test_default_metrics_and_no_file_written(tmp_path: Path) -> None:
    folder = tiny_beir(tmp_path / "beir")
    result = evaluate_bm25(str(folder))
    assert list(result.metrics) == ["nDCG@10", "P@10", "R@100", "RR", "AP"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beir"]
