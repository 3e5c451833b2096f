"""rankmeter.explanation_text: explanations of a query of files with the documents' texts
(``rankmeter explain --corpus``): the texts of the ranked documents, the relevant documents
each metric misses, the JSON, and the files' errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter import FormatError, PolicyError
from rankmeter.explanation import Explanations
from rankmeter.explanation_text import ExplanationsWithText, MissedDocument, explain_files
from rankmeter.io.beir import Document

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 d 2\nq1 0 e 1\nq1 0 f 3\nq2 0 a 1\n"
# q1's ranking: a (rel 2), x (unjudged), c (1), b (0), e (1, rank 5); d and f are not in it.
RUN = (
    "q1 Q0 a 1 5.0 sys\nq1 Q0 x 2 4.0 sys\nq1 Q0 c 3 3.0 sys\nq1 Q0 b 4 2.0 sys\n"
    "q1 Q0 e 5 1.0 sys\nq2 Q0 a 1 1.0 sys\n"
)
DOCS = {
    "a": {"title": "Wings", "text": "flutter of wings"},
    "b": {"title": "Shells", "text": "buckling of shells"},
    "c": {"title": "", "text": "heat conduction in slabs"},
    "e": {"title": "Panels", "text": None},
    "f": {"title": "Best", "text": "the best document"},
    "x": {"title": "Unjudged", "text": "never judged"},
    "z": {"title": "Other", "text": "not asked for"},
}  # d is not in the corpus


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "qrels": tmp_path / "qrels.txt",
        "run": tmp_path / "run.txt",
        "corpus": tmp_path / "corpus.jsonl",
        "queries": tmp_path / "queries.tsv",
    }
    paths["qrels"].write_text(QRELS)
    paths["run"].write_text(RUN)
    paths["corpus"].write_text("".join(json.dumps({"_id": k, **v}) + "\n" for k, v in DOCS.items()))
    paths["queries"].write_text("q1\twing flutter\nq2\theat\n")
    return paths


def _explain(files: dict[str, Path], metrics: object, **options: object) -> ExplanationsWithText:
    explained = explain_files(
        files["qrels"], files["run"], "q1", metrics, corpus=files["corpus"], **options
    )
    assert isinstance(explained, ExplanationsWithText)
    return explained


def test_the_ranked_documents_have_their_texts(files: dict[str, Path]) -> None:
    explained = _explain(files, ["P@3"], queries=files["queries"])
    assert explained.query_text == "wing flutter"
    assert explained.corpus == str(files["corpus"])
    assert explained.document("a") == Document("Wings", "flutter of wings")
    assert explained.document("e") == Document("Panels", "")  # null text: empty
    assert explained.document("d") is None  # judged relevant, not in the corpus
    assert explained.document(None) is None
    # Only the query's ranked and judged-relevant documents are read: not z, not b (grade 0,
    # below the top 3).
    assert set(explained.documents) == {"a", "x", "c", "e", "f"}


def test_missed_documents_not_in_the_run_and_below_the_cutoff(files: dict[str, Path]) -> None:
    explained = _explain(files, ["P@3", "AP", "P(rel=2)@10", "R-Prec"])
    p3, ap, p_rel2, rprec = explained.missed
    # Best grade first, equal grades in doc id order; e is ranked 5, below P@3's cutoff.
    assert [(m.doc, m.grade, m.rank, m.where) for m in p3] == [
        ("f", 3, None, "not in the run"),
        ("d", 2, None, "not in the run"),
        ("e", 1, 5, "ranked 5, below the cutoff of 3"),
    ]
    assert p3[0].document == Document("Best", "the best document")
    assert p3[1].document is None
    # AP reads every rank: only what the run lacks.
    assert [m.doc for m in ap] == ["f", "d"]
    # A metric's own rel: grade 1 is not relevant to P(rel=2).
    assert [m.doc for m in p_rel2] == ["f", "d"]
    # R-Prec reads the top R = 5 (five judged relevant): e at rank 5 is seen.
    assert explained[3].cutoff == 5
    assert [m.doc for m in rprec] == ["f", "d"]


def test_the_evaluations_rel_and_judged_only(files: dict[str, Path]) -> None:
    strict = _explain(files, ["AP"], rel=2)
    assert [m.doc for m in strict.missed[0]] == ["f", "d"]
    # -J: x (unjudged) is removed, so e is at rank 4 and inside P@4's top 4.
    assert [m.doc for m in _explain(files, ["P@4"]).missed[0]] == ["f", "d", "e"]
    assert [m.doc for m in _explain(files, ["P@4"], judged_only=True).missed[0]] == ["f", "d"]
    below = _explain(files, ["P@3"], judged_only=True).missed[0]
    assert [(m.doc, m.rank) for m in below] == [("f", None), ("d", None), ("e", 4)]


def test_the_json_keeps_every_field_and_adds_the_texts(files: dict[str, Path]) -> None:
    metrics = ["nDCG@3", "P@3"]
    plain = Explanations.for_files(str(files["qrels"]), str(files["run"]), "q1", metrics)
    texts = _explain(files, metrics).to_dict()
    base = plain.to_dict()
    assert texts["corpus"] == str(files["corpus"])
    assert {k: v for k, v in texts.items() if k not in ("metrics", "corpus")} == {
        k: v for k, v in base.items() if k != "metrics"
    }
    for name, entry in base["metrics"].items():
        got = texts["metrics"][name]
        assert {k: v for k, v in got.items() if k not in ("rows", "missed")} == {
            k: v for k, v in entry.items() if k != "rows"
        }
        assert [
            {k: v for k, v in r.items() if k not in ("title", "text")} for r in got["rows"]
        ] == entry["rows"]
    first = texts["metrics"]["P@3"]["rows"][0]
    assert (first["rank"], first["doc"], first["grade"]) == (1, "a", 2)
    assert (first["title"], first["text"]) == ("Wings", "flutter of wings")
    assert texts["metrics"]["P@3"]["missed"] == [
        {
            "doc": "f",
            "grade": 3,
            "rank": None,
            "where": "not in the run",
            "title": "Best",
            "text": "the best document",
        },
        {
            "doc": "d",
            "grade": 2,
            "rank": None,
            "where": "not in the run",
            "title": None,
            "text": None,
        },
        {
            "doc": "e",
            "grade": 1,
            "rank": 5,
            "where": "ranked 5, below the cutoff of 3",
            "title": "Panels",
            "text": "",
        },
    ]
    json.dumps(texts, allow_nan=False)  # JSON-ready


def test_without_a_corpus_it_is_for_files(files: dict[str, Path]) -> None:
    got = explain_files(files["qrels"], files["run"], "q1", ["AP"], queries=files["queries"])
    want = Explanations.for_files(
        str(files["qrels"]), str(files["run"]), "q1", ["AP"], queries=str(files["queries"])
    )
    assert type(got) is Explanations
    assert got == want


def test_a_query_the_run_lacks_misses_every_relevant_document(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    files["qrels"].write_text(QRELS + "q3 0 f 1\nq3 0 b 0\n")
    explained = explain_files(files["qrels"], files["run"], "q3", ["P@5"], corpus=files["corpus"])
    assert isinstance(explained, ExplanationsWithText)
    assert not explained[0].evaluated
    assert explained.missed == (
        (MissedDocument("f", 1, None, 5, Document("Best", "the best document")),),
    )


def test_a_query_without_judgments_misses_nothing(files: dict[str, Path]) -> None:
    files["run"].write_text(RUN + "q9 Q0 z 1 1.0 sys\n")
    explained = explain_files(files["qrels"], files["run"], "q9", ["P@5"], corpus=files["corpus"])
    assert isinstance(explained, ExplanationsWithText)
    assert explained.missed == ((),)
    assert explained.document("z") == Document("Other", "not asked for")


def test_a_bad_corpus_line_is_one_error_naming_the_file_and_line(files: dict[str, Path]) -> None:
    files["corpus"].write_bytes(b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": 3}\n')
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: text must be a string, not a number"):
        _explain(files, ["P@3"])
    files["corpus"].write_bytes(b'{"_id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(FormatError, match=r"corpus.jsonl:1: not valid JSON \(not UTF-8\)"):
        _explain(files, ["P@3"])
    with pytest.raises(FormatError, match=r"nothere.jsonl: no such file"):
        explain_files(
            files["qrels"],
            files["run"],
            "q1",
            "P@3",
            corpus=files["corpus"].parent / "nothere.jsonl",
        )


def test_an_unknown_query_fails_before_the_corpus_is_read(files: dict[str, Path]) -> None:
    files["corpus"].write_text("not json\n")
    with pytest.raises(ValueError, match=r"query 'q7' is in neither the qrels"):
        explain_files(files["qrels"], files["run"], "q7", "P@3", corpus=files["corpus"])


def test_one_input_from_stdin_at_most(files: dict[str, Path]) -> None:
    with pytest.raises(PolicyError, match=r"only one input can be read from stdin"):
        explain_files(files["qrels"], "-", "q1", "P@3", corpus="-")
    with pytest.raises(PolicyError, match=r"corpus"):
        explain_files(files["qrels"], files["run"], "q1", "P@3", corpus=3)  # type: ignore[arg-type]


def test_made_without_a_corpus_it_has_no_texts_and_misses_nothing() -> None:
    qrels = {"q1": {"a": 1, "c": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8}}
    made = ExplanationsWithText.for_query(qrels, run, "q1", ["AP", "P@2"])
    assert made.missed == ((), ()) and made.document("a") is None
    assert [m["missed"] for m in made.to_dict()["metrics"].values()] == [[], []]
    with pytest.raises(PolicyError, match=r"missed= needs one tuple per explanation: 2, not 1"):
        ExplanationsWithText(made.explanations, missed=((),))


def _pool(path: Path, probabilities: dict[str, float]) -> Path:
    """A pool file of q1's documents with these inclusion probabilities."""
    item = {"query_id": "q1", "runs": {"sys": 1}, "best_rank": 1}
    lines = [
        json.dumps({**item, "doc_id": d, "inclusion_probability": p})
        for d, p in probabilities.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_pool_weighs_the_sampled_judgments(files: dict[str, Path], tmp_path: Path) -> None:
    from rankmeter import evaluate
    from rankmeter.explanation import explain
    from rankmeter.io import read_qrels, sampled_qrels

    pool = _pool(tmp_path / "pool.jsonl", {"a": 0.5, "c": 0.25, "x": 0.5, "f": 1.0})
    metrics = ["statAP", "stat_P@5", "AP"]
    plain = explain_files(files["qrels"], files["run"], "q1", metrics)
    sampled = explain_files(files["qrels"], files["run"], "q1", metrics, pool=pool)
    assert type(sampled) is Explanations
    expected = evaluate(files["qrels"], files["run"], metrics, inclusion=pool)
    row = expected.per_query.to_dict()["q1"]
    for e in sampled:
        assert e.value == pytest.approx(row[e.metric], abs=1e-12)
    by_hand = explain(sampled_qrels(read_qrels(files["qrels"]), pool), files["run"], "q1", "statAP")
    assert sampled[0].value == by_hand.value and sampled[0].rows == by_hand.rows
    assert sampled[0].value != plain[0].value  # the probabilities changed statAP
    assert sampled[2].value == plain[2].value  # and not AP
    with_text = explain_files(
        files["qrels"], files["run"], "q1", ["statAP"], pool=pool, corpus=files["corpus"]
    )
    assert isinstance(with_text, ExplanationsWithText)
    assert with_text[0].value == sampled[0].value


def test_a_pool_of_other_queries_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    from rankmeter import RankmeterError

    pool = tmp_path / "pool.jsonl"
    pool.write_text(
        json.dumps({"query_id": "q9", "doc_id": "a", "runs": {"sys": 1}, "best_rank": 1,
                    "inclusion_probability": 0.5}) + "\n"
    )  # fmt: skip
    with pytest.raises(RankmeterError, match="pool"):
        explain_files(files["qrels"], files["run"], "q1", ["statAP"], pool=pool)


@pytest.mark.parametrize(
    "metric", ["ERR@10", "nERR@5", "IPrec@0.5", "GMAP", "RBP_resid", "infAP", "Compat"]
)
def test_every_metric_with_a_corpus_is_evaluates(files: dict[str, Path], metric: str) -> None:
    from rankmeter import evaluate

    explained = _explain(files, [metric])
    expected = evaluate(files["qrels"], files["run"], [metric]).per_query.to_dict()["q1"]
    assert explained[0].value == pytest.approx(expected[metric], abs=1e-12)
    assert explained.documents["a"].title == "Wings"


def test_a_diversity_metric_with_a_corpus_reads_the_subtopics(
    files: dict[str, Path], tmp_path: Path
) -> None:
    from rankmeter import evaluate

    # a judged for two subtopics on two lines; f for one, and missed by the run
    subtopics = tmp_path / "subtopics.txt"
    subtopics.write_text("q1 1 a 1\nq1 2 a 1\nq1 2 c 1\nq1 1 b 0\nq1 3 f 1\n")
    explained = explain_files(
        subtopics, files["run"], "q1", ["alpha_nDCG@20"], corpus=files["corpus"]
    )
    assert isinstance(explained, ExplanationsWithText)
    expected = evaluate(subtopics, files["run"], ["alpha_nDCG@20"]).per_query.to_dict()["q1"]
    assert explained[0].value == pytest.approx(expected["alpha_nDCG@20"], abs=1e-12)
    (missed,) = explained.missed
    assert [m.doc for m in missed] == ["f"]
