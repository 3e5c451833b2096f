"""ANN recall against exact neighbours: exact search, index specs, indexes, recall, inputs."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.vector import ann_recall, exact_search, make_index, parse_index_spec
from rankmeter.vector.ann import AnnRecall, IndexSpec, IndexSpecError
from rankmeter.vector.exact import score_pairs

faiss = pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
hnswlib = pytest.importorskip("hnswlib", reason="hnswlib is in the [ann] extra")

METRICS = ("ip", "l2", "cosine")


def blobs(n: int, m: int, dim: int, clusters: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Corpus and queries from the same Gaussian clusters: structured like real embeddings
    (random high-dimensional vectors are the worst case for graph indexes, and slow)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(clusters, dim))
    labels = rng.integers(clusters, size=n + m)
    points = centres[labels] + rng.normal(size=(n + m, dim))
    points = points.astype(np.float32)
    return points[:n], points[n:]


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    return blobs(5000, 200, 32, 50, seed=7)


def reference(corpus: np.ndarray, queries: np.ndarray, k: int, metric: str):
    """Brute force: every score in float64, each row sorted by score desc, then id asc."""
    x = np.asarray(corpus, dtype=np.float64)
    q = np.asarray(queries, dtype=np.float64)
    if metric == "cosine":
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    full = -((q[:, None, :] - x[None, :, :]) ** 2).sum(axis=2) if metric == "l2" else q @ x.T
    ids = np.empty((len(q), k), dtype=np.int64)
    for i, row in enumerate(full):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        ids[i] = order[:k]
    return np.take_along_axis(full, ids, axis=1), ids


# ---------------------------------------------------------------------------- exact search


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("block_bytes", [64, 1_000, 32 * 2**20])
def test_exact_search_matches_brute_force_with_ties(metric: str, block_bytes: int) -> None:
    rng = np.random.default_rng(3)
    # Small integers: many equal scores, so the tie rule (id ascending) decides the order.
    corpus = rng.integers(-2, 3, size=(120, 4)).astype(np.float32)
    corpus[np.abs(corpus).sum(axis=1) == 0] = 1.0  # no zero vectors (cosine)
    queries = rng.integers(-2, 3, size=(30, 4)).astype(np.float32)
    queries[np.abs(queries).sum(axis=1) == 0] = 1.0
    for k in (1, 7, 120):
        scores, ids = exact_search(corpus, queries, k, metric, block_bytes=block_bytes)
        want_scores, want_ids = reference(corpus, queries, k, metric)
        assert ids.dtype == np.int64 and scores.dtype == np.float64
        np.testing.assert_allclose(scores, want_scores, rtol=1e-12, atol=1e-12)
        if metric != "cosine":
            # Integer data: every score is exact, so equal scores are truly equal.
            np.testing.assert_array_equal(ids, want_ids)
        else:
            # Parallel vectors have equal cosines only up to rounding (1/√2 vs 2/√8), so which
            # of them comes first is decided by the last bit: check each id is one of the right
            # score, without repeats.
            _, all_ids = reference(corpus, queries, 120, metric)
            all_scores, _ = reference(corpus, queries, 120, metric)
            for row in range(len(queries)):
                lookup = dict(zip(all_ids[row].tolist(), all_scores[row].tolist(), strict=True))
                got = [lookup[i] for i in ids[row].tolist()]
                np.testing.assert_allclose(got, want_scores[row], rtol=1e-12, atol=1e-12)
                assert len(set(ids[row].tolist())) == k


def test_exact_search_continuous_data(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:1500], data[1][:20]
    for metric in METRICS:
        _, ids = exact_search(corpus, queries, 10, metric, block_bytes=50_000)
        np.testing.assert_array_equal(ids, reference(corpus, queries, 10, metric)[1])


def test_exact_search_pads_when_k_exceeds_corpus() -> None:
    scores, ids = exact_search([[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0]], 4, "l2")
    assert ids.tolist() == [[0, 1, -1, -1]]
    assert scores[0, :2].tolist() == [-1.0, -1.0] and math.isinf(scores[0, 3])


def test_exact_search_errors() -> None:
    with pytest.raises(PolicyError, match=r"^metric='dot' must be one of 'ip', 'l2', 'cosine'$"):
        exact_search([[1.0]], [[1.0]], 1, "dot")
    with pytest.raises(RankmeterError, match="queries have 3 dimensions but the corpus has 2"):
        exact_search([[1.0, 2.0]], [[1.0, 2.0, 3.0]], 1)
    with pytest.raises(
        PolicyError, match=r"^k=0 must be an integer >= 1 \(neighbours per query\)$"
    ):
        exact_search([[1.0]], [[1.0]], 0)
    with pytest.raises(PolicyError, match=r"^k=True must be an integer >= 1"):
        exact_search([[1.0]], [[1.0]], True)
    with pytest.raises(RankmeterError, match="corpus: row 1 is a zero vector"):
        exact_search([[1.0, 0.0], [0.0, 0.0]], [[1.0, 1.0]], 1, "cosine")
    with pytest.raises(RankmeterError, match="queries: row 0 is not finite"):
        exact_search([[1.0]], [[np.nan]], 1)


def test_score_pairs_recomputes_exact_scores(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:800], data[1][:10]
    for metric in METRICS:
        scores, ids = exact_search(corpus, queries, 5, metric)
        np.testing.assert_allclose(score_pairs(corpus, queries, ids, metric), scores, rtol=1e-9)


# ---------------------------------------------------------------------------- index specs


def test_spec_defaults_and_canonical_form() -> None:
    assert str(parse_index_spec("flat")) == "flat"
    assert str(parse_index_spec("hnsw")) == "hnsw(M=16,efConstruction=200,efSearch=64)"
    assert str(parse_index_spec(" HNSW ( m = 8 ) ")) == "hnsw(M=8,efConstruction=200,efSearch=64)"
    assert str(parse_index_spec("ivf(nlist=64)")) == "ivf(nlist=64,nprobe=8)"
    assert str(parse_index_spec("pq(m=4)")) == "pq(m=4,nbits=8)"
    spec = parse_index_spec("ivfpq(nlist=10,m=4,nprobe=3)")
    assert str(spec) == "ivfpq(nlist=10,m=4,nbits=8,nprobe=3)"
    assert parse_index_spec(str(spec)) == spec
    assert spec.search_params == {"nprobe": 3}
    assert spec.build_params == {"nlist": 10, "m": 4, "nbits": 8}
    assert isinstance(hash(spec), int)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hsnw(M=16)", r"unknown index 'hsnw' in 'hsnw\(M=16\)' \(did you mean hnsw\?\); valid"),
        ("annoy", r"unknown index 'annoy'.*valid indexes: flat, hnsw\(M,efConstruction,efSearch"),
        (
            "hnsw(ef=10)",
            r"hnsw has no parameter 'ef'.*valid parameters: M, efConstruction, efSearch",
        ),
        ("hnsw(efsearh=10)", r"no parameter 'efsearh'.*\(did you mean efSearch\?\)"),
        ("ivf(nlist=ten)", r"nlist='ten' in 'ivf\(nlist=ten\)' is not a whole number"),
        ("ivf(nprobe=0)", r"nprobe=0 in 'ivf\(nprobe=0\)' is out of range: it must be at least 1"),
        ("pq(nbits=20)", r"nbits=20 .* it must be from 1 to 16"),
        ("hnsw(M=1)", r"M=1 .* at least 2"),
        ("hnsw(M=8,m=9)", r"M is given twice in 'hnsw\(M=8,m=9\)'"),
        ("hnsw(M)", r"bad parameter 'M' in 'hnsw\(M\)': expected name=value, e.g. hnsw\(M=16,"),
        ("hnsw(M=16", r"cannot parse index spec 'hnsw\(M=16': expected NAME or NAME\(param=value"),
        ("flat(k=1)", r"flat has no parameters, got 'k' in 'flat\(k=1\)'"),
        ("", r"cannot parse index spec ''"),
    ],
)
def test_spec_errors(text: str, message: str) -> None:
    with pytest.raises(IndexSpecError, match=message):
        parse_index_spec(text)


def test_a_spec_error_is_a_usage_error() -> None:
    # A bad setting, like every PolicyError: the command line exits with 2 for it everywhere.
    from rankmeter.errors import PolicyError

    assert issubclass(IndexSpecError, PolicyError)
    with pytest.raises(PolicyError, match=r"M=0 in 'hnsw\(M=0\)' is out of range"):
        parse_index_spec("hnsw(M=0)")


def test_backend_errors(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:300], data[1][:5]
    with pytest.raises(IndexSpecError, match=r"ivf indexes need the faiss backend, not hnswlib"):
        ann_recall(corpus, queries, "ivf", backend="hnswlib")
    with pytest.raises(
        IndexSpecError, match=r"^backend='annoy' must be one of 'faiss', 'hnswlib'$"
    ):
        make_index("hnsw", 32, backend="annoy")
    with pytest.raises(
        IndexSpecError, match=r"m=5 in pq\(m=5,nbits=8\) must divide the dimension 32"
    ):
        make_index("pq(m=5)", 32)
    with pytest.raises(
        RankmeterError, match=r"needs at least 400 vectors to train \(nlist=400\), got 300"
    ):
        ann_recall(corpus, queries, "ivf(nlist=400)", k=1)
    with pytest.raises(IndexSpecError, match=r"hnsw has no parameter 'nprobe'"):
        ann_recall(corpus, queries, "hnsw", sweep={"nprobe": [1, 2]})


# ---------------------------------------------------------------------------- the Index interface


@pytest.mark.parametrize("backend", ["faiss", "hnswlib"])
def test_index_interface(backend: str, data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:500], data[1][:8]
    index = make_index("hnsw(M=8,efConstruction=64)", 32, "l2", backend)
    index.add(corpus[:300])
    index.add(corpus[300:])
    assert index.ntotal == 500 and index.nbytes > 500 * 32 * 4
    index.set(efSearch=200)
    assert index.spec.params["efSearch"] == 200
    scores, ids = index.search(queries, 5)
    assert ids.dtype == np.int64 and ids.shape == (8, 5) and scores.shape == (8, 5)
    assert (np.diff(scores, axis=1) <= 1e-6).all()  # best first, higher is better
    exact_scores, exact_ids = exact_search(corpus, queries, 5, "l2")
    np.testing.assert_array_equal(ids, exact_ids)
    np.testing.assert_allclose(scores, exact_scores, rtol=1e-4)
    with pytest.raises(IndexSpecError, match=r"M of hnsw is fixed when the index is built"):
        index.set(M=4)
    with pytest.raises(PolicyError, match=r"^k=0 must be an integer >= 1 \(results per query\)$"):
        index.search(queries, 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dim": 0}, r"^dim=0 must be an integer >= 1 \(dimensions of the vectors\)$"),
        ({"dim": True}, r"^dim=True must be an integer >= 1"),
        ({"dim": 2.0}, r"^dim=2.0 must be an integer >= 1"),
        ({"dim": 2, "threads": 0}, r"^threads=0 must be an integer >= 1 \(or None: all cores\)$"),
        ({"dim": 2, "threads": 1.5}, r"^threads=1.5 must be an integer >= 1"),
    ],
)
def test_make_index_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        make_index("flat", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["faiss", "hnswlib"])
def test_flat_index_reports_missing_results_as_minus_one(backend: str) -> None:
    index = make_index("flat", 2, "ip", backend)
    index.add(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    scores, ids = index.search([[1.0, 0.5]], 3)
    assert ids.tolist() == [[0, 1, -1]]
    assert scores[0, :2].tolist() == pytest.approx([1.0, 0.5]) and scores[0, 2] == -np.inf


# ---------------------------------------------------------------------------- recall


@pytest.mark.parametrize("metric", METRICS)
def test_flat_recall_is_exactly_one(metric: str, data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data
    result = ann_recall(corpus, queries, "flat", k=(1, 10, 100), metric=metric, threads=None)
    assert [r.recall for r in result.rows] == [1.0, 1.0, 1.0]
    assert result.memory_method == "faiss.serialize_index size"
    assert result.rows[0].nbytes >= corpus.nbytes
    flat = ann_recall(corpus, queries, "flat", k=10, metric=metric, backend="hnswlib")
    assert flat.recall(10) == 1.0


def test_ties_count_as_correct() -> None:
    # Ten copies of one vector: any of them is a right answer for recall@1.
    corpus = np.vstack([np.ones((10, 4)), np.eye(4) * 0.1]).astype(np.float32)
    queries = np.ones((3, 4), dtype=np.float32)
    assert ann_recall(corpus, queries, "flat", k=(1, 5), metric="l2").recall(1) == 1.0


def test_hnsw_recall_rises_with_ef_search(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data
    values = [1, 2, 4, 8, 32, 128]
    # A deliberately weak graph (M=4, efConstruction=8), so low efSearch visibly loses.
    result = ann_recall(
        corpus,
        queries,
        "hnsw(M=4,efConstruction=8)",
        k=(1, 10),
        metric="l2",
        sweep={"efsearch": values},
    )
    assert result.sweep == {"efSearch": tuple(values)}
    assert result.title == "hnsw(M=4,efConstruction=8,efSearch=*)"
    assert len(result.rows) == len(values) * 2
    recall10 = [r.recall for r in result.rows if r.k == 10]
    assert all(b >= a - 0.01 for a, b in itertools.pairwise(recall10)), recall10
    assert recall10[-1] > recall10[0] + 0.05, recall10
    # efSearch is a search-time parameter: the index was built once.
    assert len({(r.build_s, r.nbytes) for r in result.rows}) == 1
    assert [result.label(s) for s in result.settings] == [f"efSearch={v}" for v in values]
    good = ann_recall(corpus, queries, "hnsw(efSearch=256)", k=(1, 10, 100), metric="l2")
    assert min(r.recall for r in good.rows) > 0.9


def test_hnswlib_backend(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data
    result = ann_recall(
        corpus,
        queries,
        "hnsw(M=8,efConstruction=64)",
        k=10,
        metric="cosine",
        backend="hnswlib",
        sweep={"efSearch": [10, 200]},
        threads=None,
    )
    assert result.memory_method == "hnswlib save_index file size"
    low, high = (r.recall for r in result.rows)
    assert high > 0.9 and high >= low


def test_build_parameter_sweep_rebuilds(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:2000], data[1][:50]
    result = ann_recall(corpus, queries, "hnsw(efConstruction=32)", k=10, sweep={"M": [4, 16]})
    small, large = result.rows
    assert small.setting.startswith("hnsw(M=4,") and large.setting.startswith("hnsw(M=16,")
    assert large.nbytes > small.nbytes


def test_ivf_recall_rises_with_nprobe(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data
    result = ann_recall(
        corpus,
        queries,
        "ivf(nlist=50)",
        k=(1, 10, 100),
        sweep={"nprobe": [1, 2, 4, 50]},
        threads=1,  # FAISS's k-means on a busy 2-core machine: one thread is much faster
    )
    recall10 = [r.recall for r in result.rows if r.k == 10]
    assert recall10 == sorted(recall10) and recall10[0] < 1.0
    assert [r.recall for r in result.rows if r.setting == "ivf(nlist=50,nprobe=50)"] == [1.0] * 3


def test_pq_indexes(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:3000], data[1][:50]
    flat = ann_recall(corpus, queries, "flat", k=10, metric="l2")
    pq = ann_recall(corpus, queries, "pq(m=8,nbits=6)", k=10, metric="l2", threads=1)
    ivfpq = ann_recall(
        corpus, queries, "ivfpq(nlist=20,m=8,nbits=6,nprobe=20)", k=10, metric="l2", threads=1
    )
    for result in (pq, ivfpq):
        assert 0.1 < result.recall(10) < 1.0
        assert result.rows[0].nbytes < flat.rows[0].nbytes / 2


@pytest.mark.parametrize(
    ("backend", "spec"),
    [
        ("faiss", "hnsw(M=8,efConstruction=32,efSearch=16)"),
        ("hnswlib", "hnsw(M=8,efConstruction=32,efSearch=16)"),
        ("faiss", "ivfpq(nlist=20,m=4,nprobe=2)"),
    ],
)
def test_same_seed_same_recall(
    backend: str, spec: str, data: tuple[np.ndarray, np.ndarray]
) -> None:
    corpus, queries = data[0][:2000], data[1][:100]
    runs = [
        ann_recall(corpus, queries, spec, k=(1, 10), backend=backend, seed=3, threads=1)
        for _ in range(2)
    ]
    first, second = ([(r.setting, r.k, r.recall, r.nbytes) for r in x.rows] for x in runs)
    assert first == second


def test_result_exports(data: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = data[0][:1000], data[1][:20]
    result = ann_recall(
        corpus, queries, "ivf(nlist=10)", k=(1, 5), sweep={"nprobe": [1, 10]}, threads=1
    )
    assert isinstance(result, AnnRecall)
    document = result.to_dict()
    assert document["index"] == "ivf(nlist=10,nprobe=8)"
    assert document["k"] == [1, 5] and document["sweep"] == {"nprobe": [1, 10]}
    assert len(document["rows"]) == 4
    assert set(document["rows"][0]) == {
        "setting",
        "params",
        "k",
        "recall",
        "qps",
        "search_s",
        "build_s",
        "nbytes",
    }
    frame = result.to_pandas()
    assert list(frame.columns) == [
        "setting",
        "nlist",
        "nprobe",
        "k",
        "recall",
        "qps",
        "search_s",
        "build_s",
        "nbytes",
    ]
    assert frame["nprobe"].tolist() == [1, 1, 10, 10]
    assert result.label("ivf(nlist=10,nprobe=10)") == "nprobe=10"
    with pytest.raises(AttributeError):
        result.index = "flat"  # type: ignore[misc]
    single = ann_recall(corpus, queries, "flat", k=1)
    assert single.title == "flat" and single.label("flat") == "flat"


def test_k_larger_than_corpus(data: tuple[np.ndarray, np.ndarray]) -> None:
    with pytest.raises(RankmeterError, match=r"k=100 is more than the corpus has \(50 vectors\)"):
        ann_recall(data[0][:50], data[1][:5], "flat")
    with pytest.raises(PolicyError, match=r"^k=0 must be an integer >= 1 \(recall@k for each k\)$"):
        ann_recall(data[0][:50], data[1][:5], "flat", k=[0, 1])
    with pytest.raises(PolicyError, match=r"^k=2.5 must be an integer >= 1"):
        ann_recall(data[0][:50], data[1][:5], "flat", k=2.5)


# ---------------------------------------------------------------------------- inputs


def test_inputs_from_npy_and_parquet(tmp_path: Path, data: tuple[np.ndarray, np.ndarray]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    corpus, queries = data[0][:400], data[1][:10]
    np.save(tmp_path / "corpus.npy", corpus)
    pq.write_table(
        pa.table(
            {"id": [f"q{i}" for i in range(10)], "embedding": list(queries.astype(np.float64))}
        ),
        tmp_path / "queries.parquet",
    )
    fixed = pa.FixedSizeListArray.from_arrays(pa.array(queries.ravel()), 32)
    pq.write_table(pa.table({"v": fixed}), tmp_path / "fixed.parquet")
    pq.write_table(
        pa.table({f"d{j}": queries[:, j] for j in range(32)}), tmp_path / "columns.parquet"
    )
    expected = ann_recall(corpus, queries, "flat", k=5)
    for name in ("queries.parquet", "fixed.parquet", "columns.parquet"):
        result = ann_recall(tmp_path / "corpus.npy", tmp_path / name, "flat", k=5)
        assert result.recall(5) == expected.recall(5) == 1.0
        assert result.queries == str(tmp_path / name) and result.n_queries == 10


def test_input_errors(tmp_path: Path) -> None:
    good = np.ones((20, 4), dtype=np.float32)
    bad = good.copy()
    bad[3, 2] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    np.save(tmp_path / "empty.npy", np.empty((0, 4), dtype=np.float32))
    np.save(tmp_path / "text.npy", np.array([["a", "b"]]))
    np.save(tmp_path / "flat.npy", np.ones(4))
    np.save(tmp_path / "wide.npy", np.ones((5, 6), dtype=np.float32))
    (tmp_path / "vectors.csv").write_text("1,2\n")
    cases = [
        ("nan.npy", r"nan\.npy: row 3, dimension 2 is NaN; vectors must be finite numbers"),
        ("empty.npy", r"empty\.npy: has no vectors \(shape \(0, 4\)\)"),
        ("text.npy", r"text\.npy: expected floats, got dtype <U1"),
        ("flat.npy", r"flat\.npy: expected a 2-D array \(vectors x dimensions\), got shape \(4,\)"),
        ("wide.npy", r"wide\.npy: queries have 6 dimensions but the corpus \(.*good\.npy\) has 4"),
        (
            "vectors.csv",
            r"vectors\.csv: unknown vector file type '\.csv'; expected \.npy or \.parquet",
        ),
        ("missing.npy", r"missing\.npy: no such file"),
    ]
    np.save(tmp_path / "good.npy", good)
    for name, message in cases:
        with pytest.raises(FormatError, match=message):
            ann_recall(tmp_path / "good.npy", tmp_path / name, "flat", k=1)
    with pytest.raises(FormatError, match=r"<corpus array>: row 0, dimension 0 is infinity"):
        ann_recall(np.full((3, 2), np.inf), good[:, :2], "flat", k=1)
    with pytest.raises(FormatError, match=r"<corpus array>: expected floats, got dtype bool"):
        ann_recall(np.ones((3, 2), dtype=bool), good[:, :2], "flat", k=1)


def test_parquet_errors(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    np.save(tmp_path / "good.npy", np.ones((20, 2), dtype=np.float32))
    pq.write_table(pa.table({"v": [[1.0, 2.0], [1.0]]}), tmp_path / "ragged.parquet")
    pq.write_table(pa.table({"v": [[1.0, 2.0], None]}), tmp_path / "null.parquet")
    pq.write_table(pa.table({"a": [[1.0]], "b": [[2.0]]}), tmp_path / "two.parquet")
    pq.write_table(pa.table({"x": [1.0], "name": ["a"]}), tmp_path / "text.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    cases = [
        ("ragged.parquet", r"column 'v': row 1 has 1 values but row 0 has 2"),
        ("null.parquet", r"column 'v': row 1 has no vector \(null\)"),
        ("two.parquet", r"several list columns \(a, b\); keep only the vector column"),
        ("text.parquet", r"not numeric: name \(string\)"),
        ("broken.parquet", r"broken\.parquet: not a readable Parquet file"),
    ]
    for name, message in cases:
        with pytest.raises(FormatError, match=message):
            ann_recall(tmp_path / "good.npy", tmp_path / name, "flat", k=1)


def test_cosine_rejects_zero_vectors() -> None:
    corpus = np.array([[1.0, 0.0], [0.0, 0.0]], dtype=np.float32)
    with pytest.raises(RankmeterError, match="<corpus array>: row 1 is a zero vector"):
        ann_recall(corpus, corpus[:1], "flat", k=1, metric="cosine")


def test_spec_object_round_trip() -> None:
    spec = IndexSpec("hnsw", {"M": 8, "efConstruction": 40, "efSearch": 10})
    assert parse_index_spec(spec) is spec
    assert str(spec.replace(efsearch=20)) == "hnsw(M=8,efConstruction=40,efSearch=20)"


def test_missing_backend_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "hnswlib", None)  # as if not installed
    with pytest.raises(
        RankmeterError, match=r"needs the 'hnswlib' package: pip install 'rankmeter\[ann\]'"
    ):
        make_index("hnsw", 8, backend="hnswlib")


# -- issue 14: the tie tolerance is derived from the data's float32 error ----------------------
class _FixedIndex:
    """An index that returns the given ids, whatever it is asked (to test the recall rule)."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = np.asarray([ids], dtype=np.int64)
        self.nbytes = 0

    def add(self, vectors: object) -> None:
        pass

    def set(self, **params: int) -> None:
        pass

    def search(self, queries: object, k: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((1, k)), self.ids[:, :k]


def test_tie_tolerance_is_a_few_float32_ulps_at_the_scores_scale() -> None:
    from rankmeter.vector.ann import tie_tolerance

    unit = np.eye(384, dtype=np.float32)[:3]
    # 2 ulps at scale 1, times sqrt(384 / 8): 1.65e-6, not 4·sqrt(384)·eps32 = 9.3e-6.
    assert tie_tolerance(unit, unit[:1], "cosine")[0] == pytest.approx(2 * 2.0**-23 * math.sqrt(48))
    assert tie_tolerance(unit, unit[:1], "cosine")[0] < 2e-6
    # ip: scaled by ‖q‖·max‖x‖; l2 by (‖q‖ + max‖x‖)².
    assert tie_tolerance(4 * unit, 2 * unit[:1], "ip")[0] == pytest.approx(
        8 * tie_tolerance(unit, unit[:1], "cosine")[0]
    )
    assert tie_tolerance(unit, unit[:1], "l2")[0] == pytest.approx(
        4 * tie_tolerance(unit, unit[:1], "cosine")[0]
    )


def test_the_tolerance_covers_the_real_float32_error_of_faiss() -> None:
    from rankmeter.vector.ann import tie_tolerance

    rng = np.random.default_rng(0)
    for dim in (16, 384):
        corpus = rng.normal(size=(2000, dim)).astype(np.float32)
        queries = rng.normal(size=(50, dim)).astype(np.float32)
        for metric in ("ip", "l2"):
            index = make_index("flat", dim, metric)
            index.add(corpus)
            scores, ids = index.search(queries, 50)
            exact = score_pairs(corpus.astype(np.float64), queries.astype(np.float64), ids, metric)
            error = np.abs(scores - exact).max(axis=1)
            tolerance = tie_tolerance(corpus, queries, metric)
            # Covered, with room: each of two compared scores is off by under half of it.
            assert (2 * error < tolerance).all(), (dim, metric)
            # And not 100 times too large: the largest error is a visible share of it.
            assert error.max() > tolerance.max() / 200, (dim, metric)


@pytest.mark.parametrize(("below", "counted"), [(0.5, True), (1.5, False)])
def test_a_tie_within_the_tolerance_counts_and_one_just_outside_does_not(
    monkeypatch: pytest.MonkeyPatch, below: float, counted: bool
) -> None:
    from rankmeter.vector.ann import recall as recall_module
    from rankmeter.vector.ann import tie_tolerance

    # 8 dimensions: one accumulation step, so the tolerance at scale 1 is 2 eps32 = 2**-22;
    # the second vector's score is 1 - below * tolerance, exact in float32.
    tol = 2 * 2.0**-23
    corpus = np.zeros((3, 8), dtype=np.float32)
    corpus[0, 0] = 1.0
    corpus[1, 0] = np.float32(1.0 - below * tol)
    corpus[2, 1] = 1.0
    query = corpus[:1].copy()
    assert tie_tolerance(corpus, query, "ip")[0] == pytest.approx(tol)
    assert float(corpus[1, 0]) == 1.0 - below * tol
    monkeypatch.setattr(recall_module, "make_index", lambda *a, **o: _FixedIndex([1]))
    result = ann_recall(corpus, query, "flat", k=[1], metric="ip")
    assert result.recall(1) == (1.0 if counted else 0.0)
