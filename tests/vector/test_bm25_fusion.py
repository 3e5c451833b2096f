"""BM25 (bm25s) and fusion: hand-computed fusion tables, ties, weights, missing documents, and
BM25 on Cranfield against a random run."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter import PolicyError, RankmeterError, Run, evaluate
from rankmeter.vector.fusion import fuse

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 5.0, "y": 4.0}}
B = {"q1": {"b": 0.9, "d": 0.5}}


def runs() -> list[Run]:
    return [Run.from_dict(A, name="A"), Run.from_dict(B, name="B")]


def scores(run: Run, query: str) -> dict[str, float]:
    return run.to_dict()[query]


# -- fusion: hand-computed tables -----------------------------------------------------------------
Z_A = 1 / math.sqrt(2 / 3)  # A's q1 scores 3, 2, 1: mean 2, population std sqrt(2/3)

TABLES: list[tuple[str, dict[str, Any], dict[str, float]]] = [
    # RRF, k = 60: a is 1st in A; b is 2nd in A and 1st in B; c 3rd in A; d 2nd in B.
    ("rrf", {}, {"b": 1 / 62 + 1 / 61, "a": 1 / 61, "d": 1 / 62, "c": 1 / 63}),
    ("rrf", {"k": 0}, {"b": 1 / 2 + 1, "a": 1.0, "d": 1 / 2, "c": 1 / 3}),
    ("rrf", {"weights": [2, 1]}, {"b": 2 / 62 + 1 / 61, "a": 2 / 61, "c": 2 / 63, "d": 1 / 62}),
    # min-max: A -> a 1, b 0.5, c 0; B -> b 1, d 0. c and d tie at 0: doc id descending.
    ("minmax", {}, {"b": 1.5, "a": 1.0, "d": 0.0, "c": 0.0}),
    ("minmax", {"weights": [0.7, 0.3]}, {"a": 0.7, "b": 0.65, "d": 0.0, "c": 0.0}),
    ("combsum", {}, {"b": 1.5, "a": 1.0, "d": 0.0, "c": 0.0}),
    # z-score: A -> a +Z_A, b 0, c -Z_A; B (0.9, 0.5: mean 0.7, std 0.2) -> b +1, d -1.
    ("zscore", {}, {"a": Z_A, "b": 1.0, "d": -1.0, "c": -Z_A}),
    ("combsum", {"normalisation": "zscore"}, {"a": Z_A, "b": 1.0, "d": -1.0, "c": -Z_A}),
]


@pytest.mark.parametrize(("method", "options", "expected"), TABLES)
def test_fusion_tables(method: str, options: dict[str, Any], expected: dict[str, float]) -> None:
    fused = fuse(runs(), method, **options)
    assert fused.ranking("q1") == list(expected)
    got = scores(fused, "q1")
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_a_query_missing_from_one_run_keeps_the_other_runs_order() -> None:
    fused = fuse(runs(), "rrf")
    assert fused.ranking("q2") == ["x", "y"]
    assert scores(fused, "q2") == pytest.approx({"x": 1 / 61, "y": 1 / 62})
    z = fuse(runs(), "zscore")
    assert scores(z, "q2") == pytest.approx({"x": 1.0, "y": -1.0})


def test_default_name_and_explicit_name() -> None:
    assert fuse(runs(), "rrf").name == "rrf(A+B)"
    assert fuse(runs(), "minmax").name == "minmax(A+B)"
    assert fuse(runs(), "rrf", name="hybrid").name == "hybrid"


def test_all_equal_scores_normalise_to_one_or_zero() -> None:
    flat = Run.from_dict({"q": {"a": 2.0, "b": 2.0}}, name="flat")
    other = Run.from_dict({"q": {"a": 1.0}}, name="other")
    assert scores(fuse([flat, other], "minmax"), "q") == {"a": 2.0, "b": 1.0}
    assert scores(fuse([flat, other], "zscore"), "q") == {"b": 0.0, "a": 0.0}


def random_run(seed: int, n_queries: int = 20, n_docs: int = 50, ties: bool = True) -> Run:
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    for q in range(n_queries):
        docs = rng.choice(n_docs * 2, size=n_docs, replace=False)
        values = rng.integers(0, 10, size=n_docs) if ties else rng.random(n_docs)
        qs += [f"q{q}"] * n_docs
        ds += [f"d{d}" for d in docs]
        ss += [float(v) for v in values]
    return Run.from_columns(qs, ds, ss, name=f"r{seed}")


@pytest.mark.parametrize("method", ["rrf", "minmax", "zscore"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fusing_a_run_with_itself_keeps_its_order(method: str, seed: int) -> None:
    run = random_run(seed)
    fused = fuse([run, run], method)
    for q in run.query_ids:
        assert fused.ranking(q) == run.ranking(q)


def test_fusion_is_independent_of_the_order_of_the_runs() -> None:
    one, two = random_run(3, ties=False), random_run(4, ties=False)
    for method in ("rrf", "minmax", "zscore"):
        left, right = fuse([one, two], method), fuse([two, one], method)
        for q in left.query_ids:
            assert left.ranking(q) == right.ranking(q)


def test_rrf_matches_a_plain_python_reference() -> None:
    one, two, three = random_run(5), random_run(6, ties=False), random_run(7)
    fused = fuse([one, two, three], "rrf", k=10, weights=[1, 0.5, 2], depth=30)
    expected: dict[str, dict[str, float]] = {}
    for run, weight in ((one, 1.0), (two, 0.5), (three, 2.0)):
        for q in run.query_ids:
            for rank, doc in enumerate(run.ranking(q)[:30], start=1):
                bucket = expected.setdefault(q, {})
                bucket[doc] = bucket.get(doc, 0.0) + weight / (10 + rank)
    got = fused.to_dict()
    for q, docs in expected.items():
        # score descending, equal scores by doc id descending (trec_eval's order)
        by_doc = sorted(docs.items(), key=lambda kv: kv[0], reverse=True)
        top = sorted(by_doc, key=lambda kv: -kv[1])[:30]
        assert list(got[q]) == [d for d, _ in top]
        assert got[q] == pytest.approx(dict(top), rel=1e-12)


def test_depth_limits_what_is_read_and_what_is_kept() -> None:
    fused = fuse(runs(), "rrf", depth=2)
    # A's c (3rd) is not read; b, a and d remain, and only the top 2 are kept.
    assert fused.ranking("q1") == ["b", "a"]
    assert scores(fused, "q1") == pytest.approx({"b": 1 / 62 + 1 / 61, "a": 1 / 61})


@pytest.mark.parametrize("name", ["rrf(a+b)", "my hybrid run"])
def test_fused_run_text_is_what_the_trec_writer_writes(tmp_path: Path, name: str) -> None:
    """`fuse` to stdout prints rankmeter.io's TREC text: byte-equal to the file
    io.write_trec_run writes, through the one formatter (vector.fusion has none of its own)."""
    from rankmeter.io import trec_run_text, write_trec_run
    from rankmeter.vector import fusion

    assert not hasattr(fusion, "trec_run_text")

    run = Run.from_dict(
        {"10": {"d1": 0.1 + 0.2, "d2": 1e-300, "d3": -0.0}, "9": {"x": 3.0, "é": 3.0}}, name=name
    )
    path = tmp_path / "written.run"
    write_trec_run(run, path)
    assert trec_run_text(run) == path.read_text(encoding="utf-8")


def test_fusion_accepts_run_files_and_dicts(tmp_path: Path) -> None:
    from rankmeter.io import write_trec_run

    path = tmp_path / "a.run"
    write_trec_run(Run.from_dict(A, name="A"), path)
    fused = fuse([path, B], "rrf")
    assert fused.ranking("q1") == ["b", "a", "d", "c"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: fuse(runs(), "borda"),
            r"^method='borda' must be one of 'rrf', 'combsum', 'minmax', 'zscore'$",
        ),
        (lambda: fuse(runs()[:1], "rrf"), "fusion needs two runs or more; got 1"),
        (lambda: fuse(runs(), "rrf", weights=[1]), "1 weights given for 2 runs"),
        (lambda: fuse(runs(), "rrf", weights=[1, -1]), r"^weights\[1\]=-1 must be a number >= 0$"),
        (lambda: fuse(runs(), "rrf", weights=[0, 0]), "all weights are 0"),
        (
            lambda: fuse(runs(), "rrf", k=-1),
            r"^k=-1 must be a number >= 0 \(RRF's rank constant\)$",
        ),
        (lambda: fuse(runs(), "rrf", k=math.nan), "k=nan must be a finite number >= 0"),
        (
            lambda: fuse(runs(), "rrf", depth=0),
            r"^depth=0 must be an integer >= 1 \(results read from each run per query\)$",
        ),
        (lambda: fuse(runs(), "rrf", normalisation="zscore"), "not to method='rrf'"),
        (lambda: fuse(runs(), "minmax", normalisation="zscore"), "contradicts"),
        (
            lambda: fuse(runs(), "combsum", normalisation="l2"),
            r"^normalisation='l2' must be one of 'minmax', 'zscore'$",
        ),
    ],
)
def test_bad_fusion_arguments(call: Any, match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        call()


def test_infinite_scores_cannot_be_normalised_but_rrf_reads_ranks() -> None:
    inf = Run.from_dict({"q1": {"a": math.inf, "b": 1.0}}, name="inf")
    with pytest.raises(RankmeterError, match=r"run 'inf' \(<dict>\) has infinite scores"):
        fuse([inf, runs()[1]], "minmax")
    assert fuse([inf, runs()[1]], "rrf").ranking("q1") == ["b", "a", "d"]


def test_huge_scores_normalise_as_small_ones_do() -> None:
    # Normalising is scale-free; the spread and the squares of scores near 1e308 overflowed
    # (z-scores silently 0, RuntimeWarnings, inf).
    import warnings

    scores = {"a": 1.0, "b": 0.0, "c": -1.7}
    small = [Run.from_dict({"q1": scores}, name="s"), runs()[1]]
    big = [Run.from_dict({"q1": {d: v * 1e308 for d, v in scores.items()}}, name="s"), runs()[1]]
    for method in ("zscore", "minmax"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fused = fuse(big, method)
        expected = fuse(small, method)
        assert fused.ranking("q1") == expected.ranking("q1")
        np.testing.assert_allclose(
            fused.to_arrow().column("score"), expected.to_arrow().column("score"), rtol=1e-12
        )


@pytest.mark.parametrize("method", ["zscore", "minmax", "rrf"])
def test_fused_scores_beyond_the_largest_float_are_an_error(method: str) -> None:
    a = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, name="a")
    b = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, name="b")
    with pytest.raises(
        RankmeterError,
        match=r"^the fused scores of query 'q1' add up beyond the largest float \(about "
        r"1\.8e308\): use smaller weights$",
    ):
        fuse([a, b], method, weights=[1e308, 1e308], k=0)


# -- BM25 -------------------------------------------------------------------------------------
CORPUS = {
    "d1": "Wing flutter at supersonic speeds.",
    "d2": "Boundary layer transition on a flat plate.",
    "d3": "Flutter of panels and wings.",
    "d4": "Flutter of panels and wings.",  # the same text as d3: an exact tie
    "d5": "Heat transfer in hypersonic flow.",
}


@pytest.fixture(scope="module")
def bm25s_installed() -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")


@pytest.mark.usefixtures("bm25s_installed")
class TestBM25:
    def test_small_corpus_ranking_ties_and_no_zero_scores(self) -> None:
        from rankmeter.vector import bm25_run

        run = bm25_run(CORPUS, {"q1": "panels flutter", "q2": "hypersonic heat"})
        assert isinstance(run, Run) and run.name == "bm25"
        # d3 and d4 tie (same text): doc id descending, as trec_eval; d1 matches one term.
        assert run.ranking("q1") == ["d4", "d3", "d1"]
        assert run.ranking("q2") == ["d5"]  # documents sharing no term are left out
        q1 = run.to_dict()["q1"]
        assert q1["d4"] == q1["d3"] > q1["d1"] > 0

    def test_ties_at_the_cutoff_keep_what_trec_eval_order_puts_first(self) -> None:
        from rankmeter.vector import bm25_run

        run = bm25_run(CORPUS, {"q1": "panels flutter"}, k=1)
        assert run.ranking("q1") == ["d4"]
        twice = bm25_run(CORPUS, {"q1": "panels flutter"}, k=2)
        assert twice.ranking("q1") == ["d4", "d3"]

    def test_stopwords_and_a_stemmer_function(self) -> None:
        from rankmeter.vector import bm25_run

        plain = bm25_run(CORPUS, {"q": "wings"})
        assert plain.ranking("q") == ["d4", "d3"]
        stemmed = bm25_run(
            CORPUS, {"q": "wings"}, stemmer=lambda words: [w.removesuffix("s") for w in words]
        )
        assert set(stemmed.ranking("q")) == {"d1", "d3", "d4"}
        with pytest.raises(RankmeterError, match="no query shares a term"):
            bm25_run(CORPUS, {"q": "the and of"})
        kept = bm25_run(CORPUS, {"q": "the and of"}, stopwords=None)
        assert set(kept.ranking("q")) == {"d3", "d4"}  # their "and" and "of"

    def test_stemmer_by_language_name(self) -> None:
        from rankmeter.vector import bm25_run

        try:
            import Stemmer  # noqa: F401
        except ImportError:
            with pytest.raises(RankmeterError, match="needs the PyStemmer package"):
                bm25_run(CORPUS, {"q": "wings"}, stemmer="english")
        else:
            run = bm25_run(CORPUS, {"q": "wings"}, stemmer="english")
            assert set(run.ranking("q")) == {"d1", "d3", "d4"}

    def test_documents_as_records(self) -> None:
        from rankmeter.io.beir import Document
        from rankmeter.vector import bm25_run

        corpus = {"a": Document("Flutter", "of wings"), "b": {"title": "Heat", "text": "flow"}}
        run = bm25_run(corpus, {"q1": "flutter", "q2": "heat flow"})
        assert run.ranking("q1") == ["a"] and run.ranking("q2") == ["b"]

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"k": 0}, r"^k=0 must be an integer >= 1 \(results per query\)$"),
            ({"b": 1.5}, r"^b=1.5 must be a number from 0 to 1 \(document-length normalisation\)$"),
            ({"k1": -1.0}, r"^k1=-1.0 must be a number >= 0 \(term-frequency saturation\)$"),
            ({"stemmer": 3}, "stemmer=3 must be a language name"),
        ],
    )
    def test_bad_parameters(self, kwargs: dict[str, Any], match: str) -> None:
        from rankmeter.vector import bm25_run

        with pytest.raises(PolicyError, match=match):
            bm25_run(CORPUS, {"q": "flutter"}, **kwargs)

    def test_bad_inputs(self) -> None:
        from rankmeter.vector import bm25_run

        with pytest.raises(PolicyError, match="queries are needed with a corpus dict"):
            bm25_run(CORPUS)
        with pytest.raises(PolicyError, match="expected a collection"):
            bm25_run(["a text"], {"q": "text"})
        with pytest.raises(PolicyError, match="the corpus is empty"):
            bm25_run({}, {"q": "text"})
        with pytest.raises(PolicyError, match="a document must be a string"):
            bm25_run({"d": 3}, {"q": "text"})


def test_bm25_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from rankmeter.vector import bm25_run

    monkeypatch.setitem(sys.modules, "bm25s", None)  # makes `import bm25s` fail
    with pytest.raises(
        RankmeterError, match=r"needs the 'bm25s' package: pip install 'rankmeter\[bm25\]'"
    ):
        bm25_run(CORPUS, {"q": "flutter"})


# -- BM25 on Cranfield ----------------------------------------------------------------------
METRICS = ["nDCG@10", "R@100", "RR@10"]


@pytest.fixture(scope="module")
def cranfield_bm25(cranfield: Path, bm25s_installed: None) -> tuple[Any, Run]:
    from rankmeter.io.beir import load_beir
    from rankmeter.vector import bm25_run

    collection = load_beir(cranfield)
    return collection, bm25_run(collection)


def random_baseline(collection: Any, seed: int = 0, k: int = 1000) -> Run:
    rng = np.random.default_rng(seed)
    docs = np.array(list(collection.corpus), dtype=object)
    qs, ds, ss = [], [], []
    for q in collection.queries:
        picked = rng.choice(len(docs), size=k, replace=False)
        qs += [q] * k
        ds += docs[picked].tolist()
        ss += list(range(k, 0, -1))
    return Run.from_columns(qs, ds, ss, name="random")


def test_bm25_on_cranfield_is_far_above_a_random_run(cranfield_bm25: tuple[Any, Run]) -> None:
    collection, run = cranfield_bm25
    assert run.n_queries == 225
    assert max(len(run.ranking(q)) for q in run.query_ids) == 1000
    result = evaluate(collection.qrels, run, METRICS)
    chance = evaluate(collection.qrels, random_baseline(collection), METRICS)
    # Measured with bm25s defaults (k1 1.5, b 0.75, English stopwords, no stemming), not
    # tuned on these judgments: nDCG@10 0.352, R@100 0.709, RR@10 0.508.
    assert result.metrics["nDCG@10"] > 0.30
    assert result.metrics["R@100"] > 0.65
    assert result.metrics["RR@10"] > 0.45
    for name in METRICS:
        assert result.metrics[name] > 5 * chance.metrics[name], name


def test_bm25_is_deterministic(cranfield_bm25: tuple[Any, Run]) -> None:
    from rankmeter.vector import bm25_run

    collection, run = cranfield_bm25
    again = bm25_run(collection)
    assert again.to_dict() == run.to_dict()


def test_hybrid_of_two_bm25_runs(cranfield_bm25: tuple[Any, Run]) -> None:
    from rankmeter import compare
    from rankmeter.vector import bm25_run

    collection, run = cranfield_bm25
    other = bm25_run(collection, k1=0.9, b=0.4, name="bm25-anserini")
    hybrid = fuse([run, other], "rrf", name="hybrid")
    assert hybrid.n_queries == 225
    results = evaluate(collection.qrels, [run, other, hybrid], METRICS)
    for r in results.values():
        assert r.metrics["nDCG@10"] > 0.30
    comparison = compare(collection.qrels, [run, other, hybrid], ["nDCG@10"], seed=1)
    # The comparison covers the three runs on every judged query, and its numbers are the
    # evaluation's: the same means, the hybrid's difference from the baseline (the first run).
    assert comparison.systems == ("bm25", "bm25-anserini", "hybrid")
    assert comparison.n_queries == 225
    for r in results.values():
        assert comparison.mean(r.run, "nDCG@10").mean == pytest.approx(r.metrics["nDCG@10"])
    gain = comparison.difference("hybrid", "nDCG@10")
    assert gain.baseline == "bm25" and gain.n == 225
    assert gain.difference == pytest.approx(
        results["hybrid"].metrics["nDCG@10"] - results["bm25"].metrics["nDCG@10"]
    )
    assert gain.wins + gain.ties + gain.losses == 225
    assert gain.low <= gain.difference <= gain.high
    assert 0 < gain.p_value <= 1
