"""Issue 14, the defects: every judged query counts in every vector command (one without
results scores 0 and is listed), settings are checked before anything is embedded, a model
that is not available offline says where it was looked for, and the outputs say what ran on
what."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankmeter import evaluate
from rankmeter.vector import embed

from ._cli_support import CLI
from .test_cli_embed import StubEncoder

DOCS = {
    "d1": "aeroelastic flutter of swept wings",
    "d2": "heat conduction in composite slabs",
    "d3": "boundary layer separation",
    "d4": "oblique shock waves over wedges",
}
# Query 3 is stopwords only (BM25 matches nothing); query 4's text is empty.
QUERIES = {"1": "flutter of wings", "2": "shock waves", "3": "Is it on?", "4": "  "}
QRELS = "query-id\tcorpus-id\tscore\n1\td1\t1\n2\td4\t2\n3\td2\t1\n4\td3\t1\n"


@pytest.fixture(autouse=True)
def stub_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(embed, "_load_folder", lambda folder: StubEncoder())
    StubEncoder.calls = 0


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "stub-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in DOCS.items())
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items())
    )
    (root / "qrels" / "test.tsv").write_text(QRELS)
    return root


@pytest.fixture
def bm25s_installed() -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")


# -- 1. a judged query without results scores 0 and is listed ----------------------------------
@pytest.mark.usefixtures("bm25s_installed")
def test_bm25_counts_a_query_it_cannot_answer_as_0(
    cli: CLI, collection: Path, tmp_path: Path
) -> None:
    run = tmp_path / "bm25.run"
    result = cli("bm25", collection, "-m", "P@1", "-m", "RR", "--run-out", run, "-f", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["n_queries"] == 4
    assert payload["unanswered"] == ["3", "4"]
    assert "scores 0" in payload["queries"] and "include-missing" in payload["queries"]
    assert payload["collection"] == str(collection)
    assert payload["model"].startswith("BM25")
    # The metrics are evaluate's with --include-missing: queries 3 and 4 count as 0.
    again = cli(
        "evaluate", collection / "qrels" / "test.tsv", run, "-m", "P@1", "-m", "RR",
        "--include-missing", "--judged-below", "0", "-f", "json",
    )  # fmt: skip
    assert json.loads(again.out)["metrics"] == payload["metrics"] == {"P@1": 0.5, "RR": 0.5}
    table = cli("bm25", collection, "-m", "P@1", "--quiet")
    assert table.code == 0, table.err
    flat = " ".join(table.out.split())
    assert "│ 4 │ 0.5000" in flat.replace("bm25 ", "")
    assert "2 of 4 judged queries got no results: each scores 0" in flat
    assert "'3', '4'" in flat


def test_embed_eval_does_not_embed_an_empty_query_and_lists_it(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    seen: list[str] = []
    original = StubEncoder.encode

    def spy(self: StubEncoder, sentences: list[str], **options: object) -> object:
        seen.extend(sentences)
        return original(self, sentences, **options)

    pytest.MonkeyPatch().setattr(StubEncoder, "encode", spy)
    try:
        result = cli(
            "embed-eval", collection, "--model", model, "-m", "RR", "-f", "json", "--no-cache",
            "--name", "stubby",
        )  # fmt: skip
    finally:
        pytest.MonkeyPatch().setattr(StubEncoder, "encode", original)
    assert result.code == 0, result.err
    assert "  " not in seen and "" not in seen
    payload = json.loads(result.out)
    assert payload["run"] == "stubby"
    assert payload["model"] == "stub-model"
    assert payload["collection"] == str(collection)
    assert payload["n_queries"] == 4
    assert payload["empty_queries"] == ["4"] and payload["unanswered"] == ["4"]
    # Query 4 scores 0 and counts: the mean is over 4 queries.
    per_query = json.loads(
        cli("embed-eval", collection, "--model", model, "-m", "RR", "-f", "json", "--per-query").out
    )["per_query"]
    assert per_query["4"] == {"RR": 0.0}
    assert payload["metrics"]["RR"] == pytest.approx(sum(v["RR"] for v in per_query.values()) / 4)
    table = cli("embed-eval", collection, "--model", model, "-m", "RR", "--quiet")
    flat = " ".join(table.out.split())
    assert "1 judged query has an empty text, not embedded: '4'" in flat
    assert "1 of 4 judged queries got no results: each scores 0" in flat


def test_two_stage_counts_judged_queries_the_retriever_missed(cli: CLI, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 y 1\nq3 0 z 1\n")
    retriever = tmp_path / "first.run"
    retriever.write_text("q1 Q0 a 1 2.0 first\nq1 Q0 b 2 1.0 first\nq2 Q0 y 1 1.0 first\n")
    reranked = tmp_path / "second.run"
    reranked.write_text("q1 Q0 b 1 2.0 second\nq1 Q0 a 2 1.0 second\nq2 Q0 y 1 1.0 second\n")
    args = ["two-stage", qrels, retriever, reranked, "--pool", "2", "-m", "P@1"]
    payload = json.loads(cli(*args, "-f", "json").out)
    assert payload["n_queries"] == 3
    assert payload["unanswered"] == ["q3"]
    # q3 was judged but not retrieved: the pool's recall is 2 of 3, not 1.
    assert payload["stages"]["retriever"]["metrics"]["R@2"] == pytest.approx(2 / 3)
    assert payload["stages"]["ceiling"]["metrics"]["P@1"] == pytest.approx(2 / 3)
    assert "scores 0" in payload["queries"]
    table = cli(*args)
    assert "1 of 3 judged queries got no results: each scores 0" in " ".join(table.out.split())


# -- 5. the outputs say what ran on what ------------------------------------------------------
def test_two_stage_per_query(cli: CLI, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 y 1\n")
    retriever = tmp_path / "first.run"
    retriever.write_text("q1 Q0 a 1 2.0 first\nq1 Q0 b 2 1.0 first\nq2 Q0 y 1 1.0 first\n")
    reranked = tmp_path / "second.run"
    reranked.write_text("q1 Q0 b 1 2.0 second\nq1 Q0 a 2 1.0 second\nq2 Q0 y 1 1.0 second\n")
    args = ["two-stage", qrels, retriever, reranked, "--pool", "2", "-m", "P@1", "--per-query"]
    payload = json.loads(cli(*args, "-f", "json").out)
    assert payload["stages"]["reranked"]["per_query"] == {
        "q1": {"R@2": 1.0, "P@1": 0.0},
        "q2": {"R@2": 1.0, "P@1": 1.0},
    }
    table = cli(*args)
    assert table.code == 0, table.err
    assert "reranked: per query" in table.out and "q2" in table.out


def test_fuse_combsum_from_the_command_line(cli: CLI, tmp_path: Path) -> None:
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("q1 Q0 x 1 3.0 a\nq1 Q0 y 2 1.0 a\n")
    b.write_text("q1 Q0 y 1 0.9 b\nq1 Q0 z 2 0.1 b\n")
    result = cli("fuse", a, b, "--method", "combsum")
    assert result.code == 0, result.err
    assert result.out.splitlines()[0].split()[2] == "y"
    zscore = cli("fuse", a, b, "--method", "combsum", "--normalisation", "zscore")
    assert zscore.code == 0, zscore.err
    same = cli("fuse", a, b, "--method", "zscore")
    assert zscore.out.replace("zscore(a+b)", "") == same.out.replace("zscore(a+b)", "")
    bad = cli("fuse", a, b, "--method", "rrf", "--normalisation", "zscore")
    assert "normalisation applies to score fusion" in bad.assert_one_error_line(2)


def test_embed_eval_json_is_evaluate_include_missing_plus_provenance(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    run = tmp_path / "stub.run"
    result = cli("embed-eval", collection, "--model", model, "-f", "json", "--run-out", run)
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    expected = evaluate(
        collection / "qrels" / "test.tsv", run, ["nDCG@10", "R@100", "RR@10"],
        include_missing=True,
    )  # fmt: skip
    assert payload["metrics"] == expected.to_dict()["metrics"]
    assert list(payload)[:4] == ["run", "model", "collection", "n_queries"]
    assert re.search(r" stub-model$", run.read_text().splitlines()[0])


# -- 2. settings are checked before anything is embedded --------------------------------------
def _model_with_dimension(root: Path, dimension: int) -> Path:
    """A sentence-transformers folder whose configuration says its dimension (as MiniLM's)."""
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"hidden_size": 999}))
    (root / "model.safetensors").write_bytes(b"weights")
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": dimension})
    )
    (root / "modules.json").write_text(
        json.dumps(
            [
                {
                    "idx": 0,
                    "name": "0",
                    "path": "",
                    "type": "sentence_transformers.models.Transformer",
                },
                {
                    "idx": 1,
                    "name": "1",
                    "path": "1_Pooling",
                    "type": "sentence_transformers.models.Pooling",
                },
            ]
        )
    )
    return root


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--backend", "annoy"], r"backend='annoy' must be one of 'faiss', 'hnswlib'"),
        (["--index", "hnsw", "--backend", "annoy"], r"backend='annoy' must be one of"),
        (["--index", "pq(m=7)"], r"m=7 in pq\(m=7,nbits=8\) must divide the dimension 384"),
        (
            ["--index", "ivf(nlist=64)"],
            r"ivf\(nlist=64,nprobe=8\) trains 64 centroids \(nlist=64\) but the corpus has only "
            r"4 vectors: lower nlist to at most 4",
        ),
        (["--index", "pq(m=8,nbits=4)"], r"trains 16 centroids \(nbits=4\) .* lower nbits to at most 2"),
    ],
)  # fmt: skip
def test_embed_eval_checks_settings_before_embedding(
    cli: CLI, collection: Path, tmp_path: Path, args: list[str], match: str
) -> None:
    model = _model_with_dimension(tmp_path / "minilm-like", 384)
    result = cli("embed-eval", collection, "--model", model, "--no-cache", *args)
    assert re.search(match, result.assert_one_error_line(2))
    assert StubEncoder.calls == 0


def test_a_dimension_known_only_by_embedding_is_checked_before_the_corpus(
    cli: CLI, collection: Path, model: Path
) -> None:
    # The stub's folder does not say its dimension (64): the queries are embedded first, then
    # the index is checked, before the corpus.
    args = ["--no-cache", "--index", "pq(m=7,nbits=2)"]
    result = cli("embed-eval", collection, "--model", model, *args)
    assert "m=7 in pq(m=7,nbits=2) must divide the dimension 64" in result.assert_one_error_line(2)
    assert StubEncoder.calls == 1


def test_ann_recall_checks_a_collection_before_embedding_it(
    cli: CLI, collection: Path, tmp_path: Path
) -> None:
    model = _model_with_dimension(tmp_path / "minilm-like", 384)
    cases = [
        (["--index", "pq(m=7)"], "m=7 in pq(m=7,nbits=8) must divide the dimension 384"),
        (["--index", "ivf", "--sweep", "nlist=2,8"], "trains 8 centroids (nlist=8) but the corpus"),
        (["--index", "flat", "-k", "5"], "k=5 is more than the corpus has (4 documents in"),
    ]
    for args, message in cases:
        result = cli("ann-recall", collection, "--model", model, *args)
        assert message in result.assert_one_error_line(2)
    assert StubEncoder.calls == 0


# -- 5. ann-recall: the collection named in JSON, a piped table in 80 columns -----------------
def test_ann_recall_json_names_the_collection_it_embedded(
    cli: CLI, collection: Path, model: Path
) -> None:
    pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
    result = cli("ann-recall", collection, "--model", model, "-i", "flat", "-k", "1", "-f", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["corpus"] == f"{collection} (documents, embedded by {model})"
    assert payload["queries"] == f"{collection} (queries, embedded by {model})"
    assert "<corpus array>" not in result.out


@pytest.mark.parametrize("sweep", [[], ["--sweep", "efSearch=4,16,64", "--sweep", "M=8,16"]])
def test_a_piped_ann_recall_table_fits_80_columns(tmp_path: Path, sweep: list[str]) -> None:
    import numpy as np

    from ._cli_support import run_process

    pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
    rng = np.random.default_rng(0)
    np.save(tmp_path / "c.npy", rng.normal(size=(300, 8)).astype("float32"))
    np.save(tmp_path / "q.npy", rng.normal(size=(10, 8)).astype("float32"))
    done = run_process(
        ["ann-recall", tmp_path / "c.npy", tmp_path / "q.npy", "-k", "10", *sweep],
        env={"COLUMNS": "", "TERM": "dumb"},
    )
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    # The notes wrap at the terminal's width, not at the (narrow) table's.
    assert max(len(line) for line in lines) > 60
    assert "on 300 corpus vectors x 8 dimensions, 10 queries;" in " ".join(done.out.split())
    assert "0.0" in done.out or "1.0000" in done.out


def test_faiss_hnsw_fills_k_results_when_efsearch_is_below_k() -> None:
    """docs/vector.md said FAISS HNSW returns fewer than k results when efSearch < k; with
    faiss 1.15 it fills all k places (only a tiny efSearch, 1 to 4, leaves some empty)."""
    import numpy as np

    from rankmeter.vector import make_index

    pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
    rng = np.random.default_rng(0)
    index = make_index("hnsw(M=16,efSearch=16)", 32, "l2")
    index.add(rng.normal(size=(2000, 32)).astype("float32"))
    _, ids = index.search(rng.normal(size=(200, 32)).astype("float32"), 100)
    assert (ids >= 0).all()
    docs = " ".join((Path(__file__).parents[2] / "docs" / "vector.md").read_text().split())
    assert "returns fewer than k results when `efSearch < k`" not in docs


def test_ann_results_of_one_collection_accumulate_whatever_path_named_it(
    cli: CLI, collection: Path, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dataset of a results file is its collection's name: given as a relative path it
    # was another dataset than the same folder given absolutely (or from another directory),
    # so the two runs did not accumulate on one chart.
    pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
    results = tmp_path / "results"
    monkeypatch.chdir(tmp_path)
    first = cli("ann-recall", "tiny", "--model", model, "-i", "flat", "-k", "1",
                "--results-dir", results)  # fmt: skip
    assert first.code == 0, first.err
    second = cli("ann-recall", collection, "--model", model, "-i", "flat", "-i", "hnsw(M=4)",
                 "-k", "1", "--results-dir", results)  # fmt: skip
    assert second.code == 0, second.err
    read = cli("ann-results", results, "-f", "json")
    assert read.code == 0, read.err
    document = json.loads(read.out)
    assert document["corpus"] == f"{collection} (documents, embedded by {model})"
    assert len(document["points"]) == 2
