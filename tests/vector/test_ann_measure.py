"""rankmeter ann-recall from Python (rankmeter.vector.ann.measure_indexes): one index or
several, specs and sweeps as typed, and every error naming the parameter it is about, as the
caller names it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rankmeter.vector.ann import AnnBenchmark, AnnRecall, IndexSpecError, measure_indexes

pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")


@pytest.fixture
def vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(200, 8)).astype("float32"), rng.normal(size=(5, 8)).astype("float32")


def test_one_index_with_a_sweep_as_typed(vectors: tuple[np.ndarray, np.ndarray]) -> None:
    result = measure_indexes(*vectors, ["flat"], k=[1, 5], sweep=None)
    assert isinstance(result, AnnRecall)
    assert result.recall(5) == 1.0
    swept = measure_indexes(*vectors, ["hnsw(M=8)"], k=[5], sweep=["efSearch=8,16"])
    assert isinstance(swept, AnnRecall)
    assert len(swept.settings) == 2


def test_several_indexes_or_a_results_folder_give_the_benchmark(
    vectors: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    several = measure_indexes(*vectors, ["flat", "hnsw(M=8)"], k=[5])
    assert isinstance(several, AnnBenchmark)
    assert several.indexes == ("flat", "hnsw(M=8,efConstruction=200,efSearch=64)")
    one = measure_indexes(*vectors, ["flat"], k=[5], results_dir=tmp_path / "new")
    assert isinstance(one, AnnBenchmark)
    assert not (tmp_path / "new").exists()  # the caller writes the results


@pytest.mark.parametrize(
    ("given", "option", "message"),
    [
        ({"indexes": ["hnsw(M=0)"]}, "--index", "M=0 in 'hnsw(M=0)' is out of range"),
        ({"indexes": ["ivf"], "backend": "hnswlib"}, "--backend", "need the faiss backend"),
        ({"sweep": ["efSearch=8,,16"]}, "--sweep", "item 2 is empty"),
        ({"sweep": ["nprobe=4"]}, "--sweep", "nprobe"),
        ({"indexes": ["flat", "flat"]}, "--index", "given twice"),
        ({"indexes": ["flat", "hnsw"], "sweep": ["efSearch=0"]}, "--sweep", "efSearch=0"),
        ({"indexes": ["pq(m=3)"]}, "--index", "must divide the dimension 8"),
    ],
)
def test_each_error_names_its_option(
    vectors: tuple[np.ndarray, np.ndarray], given: dict, option: str, message: str
) -> None:
    names = {"indexes": "--index", "backend": "--backend", "sweep": "--sweep"}
    with pytest.raises(IndexSpecError, match=re.escape(message)) as caught:
        measure_indexes(*vectors, **given, names=names)
    assert caught.value.option == option


def test_vector_files_and_folders_are_named_as_the_caller_names_them(tmp_path: Path) -> None:
    np.save(tmp_path / "c.npy", np.ones((4, 2), dtype="float32"))
    corpus = str(tmp_path / "c.npy")
    with pytest.raises(IndexSpecError, match="give queries vectors beside the corpus") as caught:
        measure_indexes(corpus)
    assert caught.value.option == "queries"
    cli = {"queries": "QUERIES", "corpus": "CORPUS", "model": "--model"}
    with pytest.raises(IndexSpecError, match=r"^--model embeds a collection folder; CORPUS is"):
        measure_indexes(corpus, corpus, model="m", names=cli)
    with pytest.raises(IndexSpecError, match=r"without QUERIES$") as caught:
        measure_indexes(str(tmp_path), corpus, names=cli)
    assert caught.value.option == "QUERIES"
    (tmp_path / "file").write_text("")
    with pytest.raises(IndexSpecError, match="is not a folder") as caught:
        measure_indexes(corpus, corpus, results_dir=tmp_path / "file")
    assert caught.value.option == "results_dir"
