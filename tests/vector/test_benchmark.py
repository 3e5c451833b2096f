"""rankmeter.vector.benchmark: embed-eval's loop of models x collections (and BM25, hybrids)
as a Python call, with its settings, its result object and its checks before any work."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.errors import FormatError, MetricError, PolicyError
from rankmeter.vector.benchmark import BenchmarkSettings, EmbedBenchmark, embed_benchmark
from rankmeter.vector.embed import evaluate_model

needs_bm25 = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None, reason="needs rankmeter[bm25] (bm25s)"
)


class Words:
    """Bag of words hashed into 32 buckets (``shift`` rotates them: another model)."""

    def __init__(self, name: str = "words", shift: int = 0) -> None:
        self.name = name
        self.shift = shift
        self.calls = 0

    def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(sentences), 32), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                out[row, hashlib.md5(word.encode()).digest()[0] % 32] += 1.0
        return np.roll(out, self.shift, axis=1) + (0.5 if self.shift else 0.0)


def _collection(root: Path, name: str, docs: dict[str, str], queries: dict[str, str]) -> Path:
    folder = root / name
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    lines = "".join(f"{q}\td{q}\t1\n" for q in queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + lines)
    return folder


@pytest.fixture
def aero(tmp_path: Path) -> Path:
    docs = {
        "d1": "flutter of swept wings",
        "d2": "boundary layer separation on wings",
        "d3": "oblique shock waves over wedges",
        "d4": "heat transfer in hypersonic flow",
    }
    return _collection(tmp_path, "aero", docs, {"1": "wing flutter", "3": "shock waves"})


@pytest.fixture
def heat(tmp_path: Path) -> Path:
    docs = {
        "d1": "heat conduction in slabs",
        "d2": "radiative heat transfer",
        "d3": "convection in porous media",
    }
    return _collection(tmp_path, "heat", docs, {"1": "conduction", "2": "radiation heat"})


class Recorder:
    """Stages as the CLI's progress takes them: each stage's total and its labels."""

    def __init__(self) -> None:
        self.stages: list[tuple[int, list[str]]] = []

    @contextlib.contextmanager
    def __call__(self, total: int) -> Iterator[Any]:
        labels: list[str] = []
        self.stages.append((total, labels))

        class Step:
            def start(self, label: str) -> None:
                labels.append(label)

        yield Step()


def test_one_model_on_one_collection_is_evaluate_models_result(aero: Path) -> None:
    settings = BenchmarkSettings(metrics=("RR", "nDCG@10"), k=3)
    recorder = Recorder()
    bench = embed_benchmark([aero], [Words()], settings, cache=False, stages=recorder)
    assert isinstance(bench, EmbedBenchmark) and bench.single
    (result,) = bench.results
    alone = evaluate_model(aero, Words(), ["RR", "nDCG@10"], k=3, cache=False)
    assert dict(result.metrics) == dict(alone.metrics) and result.model == "words"
    (info,) = bench.infos
    assert info["dataset"] == "aero" and info["retriever"] == "embedding model"
    assert info["settings"] == settings.to_dict() and info["settings"]["metrics"] == [
        "RR",
        "nDCG@10",
    ]
    assert info["model"]["name"] == "words" and info["dimension"] == 32
    assert recorder.stages == [
        (1, ["reading the collection"]),
        (4, ["embedding corpus 0/4", "embedding queries 0/2", "searching (exact)", "evaluating"]),
    ]


@needs_bm25
def test_models_bm25_and_hybrids_on_every_collection(aero: Path, heat: Path) -> None:
    models = [Words("plain"), Words("shifted", shift=5)]
    settings = BenchmarkSettings(metrics=("nDCG@10", "RR"), k=3)
    bench = embed_benchmark(
        [aero, heat], models, settings, retrievers=["bm25", "hybrid", "bm25"], cache=False
    )
    assert not bench.single
    per_collection = ["BM25", "plain", "BM25 + plain (RRF)", "shifted", "BM25 + shifted (RRF)"]
    assert [r.model for r in bench.results] == per_collection * 2
    assert [i["dataset"] for i in bench.infos] == ["aero"] * 5 + ["heat"] * 5
    bm25 = bench.infos[0]
    assert bm25["retriever"] == "bm25" and bm25["model"]["name"] == "BM25"
    assert bm25["settings"] == {**settings.to_dict(), "k1": 1.5, "b": 0.75, "stopwords": "en"}
    assert bench.infos[2]["fusion"] == (
        "reciprocal-rank fusion (k 60) of BM25 (bm25s defaults) and plain, each run's top 3"
    )
    board = bench.leaderboard()
    assert board.metric == "nDCG@10" and len(bench.entries()) == 10
    data = bench.to_dict()
    assert data["settings"] == settings.to_dict() and len(data["runs"]) == 10
    assert data["runs"][1]["result"]["per_query"]  # every query's values, as stored
    json.dumps(data)  # plain data


@needs_bm25
def test_bm25_and_fusion_settings_are_parameters(aero: Path) -> None:
    from rankmeter.vector.bm25 import bm25_run, describe_bm25

    settings = BenchmarkSettings(
        metrics=("RR",), k=3, bm25_k1=0.9, bm25_b=0.4, bm25_stopwords=None, fusion_k=10
    )
    bench = embed_benchmark([aero], [Words()], settings, retrievers=["bm25", "hybrid"], cache=False)
    described = describe_bm25(k1=0.9, b=0.4, stopwords=None)
    bm25 = bench.infos[0]
    assert bm25["model"]["description"] == described
    assert (bm25["settings"]["k1"], bm25["settings"]["b"], bm25["settings"]["stopwords"]) == (
        0.9,
        0.4,
        None,
    )
    from rankmeter.io.beir import load_beir
    from rankmeter.vector.retrieval import evaluate_retrieval

    loaded = load_beir(aero)
    run = bm25_run(loaded, k=3, k1=0.9, b=0.4, stopwords=None)
    expected = evaluate_retrieval(loaded.qrels, run, ["RR"], model="bm25", collection="aero")
    assert dict(bench.results[0].metrics) == dict(expected.metrics)
    assert bench.infos[2]["fusion"].startswith(
        f"reciprocal-rank fusion (k 10) of BM25 ({described})"
    )


def test_settings_of_a_preset_and_what_is_given() -> None:
    from rankmeter.vector.retrieval import MTEB_METRICS

    mteb = BenchmarkSettings.of("mteb")
    assert mteb.metrics == tuple(MTEB_METRICS) and mteb.preset == "mteb"
    assert mteb.ignore_identical_ids and mteb.detailed
    assert not BenchmarkSettings.of("mteb", ignore_identical_ids=False).ignore_identical_ids
    plain = BenchmarkSettings.of(k=100)
    assert plain.metrics == ("nDCG@10", "R@100", "RR@10") and plain.k == 100
    assert not plain.detailed and not plain.ignore_identical_ids
    assert BenchmarkSettings.of(device="cpu").detailed
    assert BenchmarkSettings.of(ignore_identical_ids=False).detailed
    assert BenchmarkSettings.of(query_prefix="query: ").detailed
    with pytest.raises(PolicyError, match="preset='mteb' chooses the metrics"):
        BenchmarkSettings.of("mteb", metrics=["RR"])
    with pytest.raises(PolicyError, match="preset"):
        BenchmarkSettings.of("beir")
    with pytest.raises(MetricError):
        BenchmarkSettings(metrics=("no-such-metric",))
    assert BenchmarkSettings(metrics=("ndcg_cut_10",)).metrics == ("nDCG@10",)
    shallow = BenchmarkSettings(metrics=("nDCG@10", "R@100", "AP"), k=10)
    assert shallow.shallow() == ["R@100"]


def test_everything_is_checked_before_any_embedding(aero: Path, heat: Path) -> None:
    first, second = Words("same"), Words("same", shift=3)
    with pytest.raises(PolicyError, match="two models are named 'same'"):
        embed_benchmark([aero], [first, second], cache=False)
    folder_copy = _collection(heat.parent / "other", "aero", {"d1": "x"}, {"1": "x"})
    with pytest.raises(PolicyError, match="two collections are named 'aero'"):
        embed_benchmark([aero, folder_copy], [first], cache=False)
    not_a_folder = aero / "corpus.jsonl"
    with pytest.raises(FormatError, match="is not a folder"):
        embed_benchmark([aero, heat], [first], cache=False, results_dir=not_a_folder)
    with pytest.raises(PolicyError, match="name and run_out name one run"):
        embed_benchmark([aero, heat], [first], cache=False, name="mine")
    with pytest.raises(PolicyError, match="give a collection"):
        embed_benchmark([], [first], cache=False)
    with pytest.raises(PolicyError, match="retriever"):
        embed_benchmark([aero], [first], retrievers=["splade"], cache=False)
    assert first.calls == 0 and second.calls == 0


def test_separate_files_and_the_leaderboard_example(aero: Path, heat: Path, tmp_path: Path) -> None:
    """As docs/vector.md shows it: the benchmark, its leaderboard, its entries stored."""
    from rankmeter.report.leaderboard import save_entry
    from rankmeter.vector.leaderboard import read_leaderboard

    files = (aero / "qrels" / "test.tsv", aero / "queries.jsonl", aero / "corpus.jsonl")
    alone = embed_benchmark(files=files, models=[Words()], cache=False)
    assert alone.single and alone.results[0].n_queries == 2

    settings = BenchmarkSettings(metrics=("nDCG@10", "RR"), k=3)
    bench = embed_benchmark(
        [aero, heat], [Words("plain"), Words("shifted", shift=5)], settings, cache=False
    )
    board = bench.leaderboard()
    for entry in bench.entries():
        save_entry(entry, tmp_path / "results")
    assert read_leaderboard(tmp_path / "results").to_dict() == board.to_dict()
