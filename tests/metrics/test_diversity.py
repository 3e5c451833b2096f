"""Diversity metrics: subtopic qrels as read, the names, the other metrics beside them, the note
on ordinary qrels, explanations and the command line (the numbers themselves are checked
against ndeval in test_differential_diversity.py and by hand in test_tables.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import FormatError, MetricError
from rankmeter.explanation import Explanations, explain, explain_grades
from rankmeter.io import read_qrels
from rankmeter.metrics import parse_metric, reads_subtopics, subtopic_notes

# Query 1: a relevant to subtopics 1 and 2, b to 2, c to 3 (grade 2), d judged not relevant.
DIVERSE = "1 1 a 1\n1 2 a 1\n1 2 b 1\n1 3 c 2\n1 1 d 0\n2 0 x 1\n2 0 y 0\n"
RUN = "1 Q0 a 1 4 r\n1 Q0 u 2 3 r\n1 Q0 b 3 2 r\n1 Q0 c 4 1 r\n2 Q0 y 1 2 r\n2 Q0 x 2 1 r\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(DIVERSE, encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    return qrels, run


# -- reading -----------------------------------------------------------------------------------


def test_subtopic_qrels_keep_every_subtopic_and_the_largest_grade(files: tuple[Path, Path]) -> None:
    qrels = read_qrels(files[0], subtopics=True)
    assert qrels.to_dict() == {"1": {"a": 1, "b": 1, "c": 2, "d": 0}, "2": {"x": 1, "y": 0}}
    sub = qrels.subtopics
    assert sub.given and len(sub) == 7
    per_row = [sub.names(sub.codes[sub.offsets[r] : sub.offsets[r + 1]]) for r in range(len(qrels))]
    assert per_row == [["1", "2"], ["2"], ["3"], ["1"], ["0"], ["0"]]
    assert sub.grades.tolist() == [1, 1, 1, 2, 0, 1, 0]


def test_grade_is_the_largest_over_the_subtopics_negative_ones_included(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1 1 a -1\n1 2 a 2\n1 1 b -1\n1 2 b 0\n1 1 c -1\n", encoding="utf-8")
    assert read_qrels(path, subtopics=True).to_dict() == {"1": {"a": 2, "b": 0, "c": -1}}


def test_without_a_diversity_metric_a_doc_judged_twice_is_still_an_error(
    files: tuple[Path, Path],
) -> None:
    with pytest.raises(
        FormatError, match=r"qrels.txt:2: duplicate judgment for query '1', doc 'a'"
    ):
        read_qrels(files[0])
    with pytest.raises(FormatError, match="duplicate judgment"):
        rankmeter.evaluate(files[0], files[1], ["nDCG@10"])


def test_a_subtopic_judged_twice_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1 1 a 1\n1 2 a 1\n1 1 a 0\n", encoding="utf-8")
    with pytest.raises(
        FormatError, match=r"q.txt:3: duplicate judgment for query '1', subtopic '1', doc 'a'"
    ):
        read_qrels(path, subtopics=True)


def test_ordinary_qrels_have_one_subtopic_a_judgment() -> None:
    qrels = rankmeter.Qrels.from_dict({"q": {"a": 1, "b": 0}})
    assert not qrels.subtopics.given
    assert qrels.subtopics.offsets.tolist() == [0, 1, 2]
    assert qrels.subtopics.grades.tolist() == qrels.grades.tolist()


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("alpha_nDCG@20", "alpha_nDCG@20"),
        ("alpha-nDCG@20", "alpha_nDCG@20"),
        ("α-nDCG@20", "alpha_nDCG@20"),
        ("alpha_nDCG(alpha=0.5)@20", "alpha_nDCG@20"),
        ("alpha_nDCG(alpha=0.3)@10", "alpha_nDCG(alpha=0.3)@10"),
        ("ERR_IA@20", "ERR_IA@20"),
        ("ERR-IA@20", "ERR_IA@20"),
        ("nERR-IA@5", "nERR_IA@5"),
        ("StRecall@20", "StRecall@20"),
        ("S-recall@20", "StRecall@20"),
        ("S_recall@10", "StRecall@10"),
        ("subtopic_recall@10", "StRecall@10"),
        ("strec@5", "StRecall@5"),
        ("StRecall(rel=2)@5", "StRecall(rel=2)@5"),
    ],
)
def test_names(name: str, canonical: str) -> None:
    metric = parse_metric(name)
    assert str(metric) == canonical and metric.label == name
    assert reads_subtopics(name)


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("alpha_nDCG", r"alpha_nDCG needs a cutoff, e.g. alpha_nDCG@10"),
        ("S-recall", r"StRecall needs a cutoff"),
        ("alpha_nDCG(alpha=1.5)@5", r"alpha=1.5 must be a number from 0 to 1"),
        ("ERR_IA(alpha=0.3)@5", r"ERR_IA has no parameter 'alpha'"),
    ],
)
def test_bad_names(name: str, error: str) -> None:
    with pytest.raises(MetricError, match=error):
        parse_metric(name)


def test_reads_subtopics_only_for_diversity_metrics() -> None:
    assert not reads_subtopics(["nDCG@10", "P@5"])
    assert not reads_subtopics(None)
    assert not reads_subtopics(["no such metric"])  # refused later, where it is parsed
    assert reads_subtopics([parse_metric("P@5"), parse_metric("ERR_IA@10")])


# -- evaluate ----------------------------------------------------------------------------------


def test_other_metrics_give_the_numbers_of_one_line_per_query_doc(files: tuple[Path, Path]) -> None:
    others = ["nDCG@10", "P@3", "AP", "RR", "R@100", "Bpref"]
    both = rankmeter.evaluate(files[0], files[1], [*others, "alpha_nDCG@10", "StRecall@3"])
    collapsed = {"1": {"a": 1, "b": 1, "c": 2, "d": 0}, "2": {"x": 1, "y": 0}}
    alone = rankmeter.evaluate(collapsed, files[1], others)
    for name in others:
        assert both.metrics[name] == alone.metrics[name], name
        assert np.array_equal(both.per_query[name], alone.per_query[name]), name


def test_values_by_hand(files: tuple[Path, Path]) -> None:
    values = rankmeter.evaluate(
        files[0], files[1], ["alpha_nDCG@4", "ERR_IA@4", "nERR_IA@4", "StRecall@1", "StRecall@4"]
    ).per_query.to_dict()["1"]
    # Ranks: a (subtopics 1, 2: gain 2), u (unjudged), b (2, covered once: 0.5), c (3: 1).
    # N = 3. The greedy ideal: a (2), c (1), b (0.5), then d (0).
    dcg = 2 + 0.5 / np.log2(4) + 1 / np.log2(5)
    ideal = 2 + 1 / np.log2(3) + 0.5 / np.log2(4)
    assert values["alpha_nDCG@4"] == pytest.approx(dcg / ideal, abs=1e-12)
    err = 2 / 1 + 0.5 / 3 + 1 / 4
    norm = 3 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4)
    assert values["ERR_IA@4"] == pytest.approx(err / norm, abs=1e-12)
    assert values["nERR_IA@4"] == pytest.approx(err / (2 + 1 / 2 + 0.5 / 3), abs=1e-12)
    assert values["StRecall@1"] == pytest.approx(2 / 3)
    assert values["StRecall@4"] == 1.0


def test_a_qrels_object_read_without_subtopics_is_one_subtopic_a_query() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    values = rankmeter.evaluate(qrels, run, ["alpha_nDCG@3", "StRecall@1"]).metrics
    assert values["alpha_nDCG@3"] == pytest.approx(1.0) and values["StRecall@1"] == 1.0


def test_the_note_on_ordinary_qrels(tmp_path: Path, files: tuple[Path, Path]) -> None:
    ordinary = tmp_path / "ordinary.txt"
    ordinary.write_text("1 0 a 1\n1 0 b 0\n2 0 x 1\n", encoding="utf-8")
    loaded = read_qrels(ordinary, subtopics=True)
    (note,) = subtopic_notes(loaded, ["P@5", "alpha-nDCG@20", "S-recall@20"])
    assert note.startswith("alpha-nDCG@20, S-recall@20 read each query's subtopics")
    assert "every query of these qrels has one subtopic" in note
    assert subtopic_notes(loaded, ["P@5"]) == ()
    assert subtopic_notes(read_qrels(files[0], subtopics=True), ["alpha_nDCG@20"]) == ()

    from rankmeter.engines import evaluate_files

    done = evaluate_files(str(ordinary), [str(files[1])], ["alpha_nDCG@20"])
    assert done.goal_notes == subtopic_notes(loaded, ["alpha_nDCG@20"])
    assert evaluate_files(str(files[0]), [str(files[1])], ["alpha_nDCG@20"]).goal_notes == ()


# -- explanations ------------------------------------------------------------------------------


def test_explain_shows_subtopics_gains_and_the_greedy_ideal(files: tuple[Path, Path]) -> None:
    e = explain(files[0], files[1], "1", "alpha_nDCG@4")
    evaluated = rankmeter.evaluate(files[0], files[1], ["alpha_nDCG@4"]).per_query.to_dict()
    assert e.value == evaluated["1"]["alpha_nDCG@4"]
    rows = {row["doc"]: row for row in e.rows}
    assert rows["a"]["subtopics"] == "1, 2" and rows["a"]["gain"] == 2
    assert rows["b"]["subtopics"] == "2 (x0.5)" and rows["b"]["gain"] == 0.5
    assert rows["c"]["subtopics"] == "3"
    assert [r["doc"] for r in e.ideal_rows] == ["a", "c", "b"]
    assert [r["gain"] for r in e.ideal_rows] == [2, 1, 0.5]
    assert e.steps[0] == "the query has 3 subtopics with a relevant judged document"
    assert e.steps[-1].startswith("alpha_nDCG@4 = ") and e.steps[-1].endswith("= 0.93")


@pytest.mark.parametrize("metric", ["ERR_IA@4", "nERR_IA@4", "StRecall@4", "alpha_nDCG@2"])
def test_every_diversity_explanation_ends_in_its_value(
    files: tuple[Path, Path], metric: str
) -> None:
    explained = Explanations.for_query(read_qrels(files[0], subtopics=True), files[1], "1", metric)
    (e,) = explained
    evaluated = rankmeter.evaluate(files[0], files[1], [metric]).per_query.to_dict()
    assert e.value == evaluated["1"][metric]
    assert e.steps[-1].startswith(f"{metric} = ")
    assert "subtopics" in e.columns


@pytest.mark.parametrize("metric", ["alpha_nDCG@3", "ERR_IA@3", "nERR_IA@3", "StRecall@3"])
def test_explain_grades(metric: str) -> None:
    e = explain_grades("3,0,2", metric)
    assert (
        e.value
        == rankmeter.evaluate(
            {"q": {"a": 3, "b": 0, "c": 2}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, [metric]
        ).metrics[metric]
    )
    assert "is not a diversity number here" in e.steps[0]


# -- the command line --------------------------------------------------------------------------


def _rankmeter(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rankmeter", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_evaluate_compare_and_explain(files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, run = files
    done = _rankmeter("evaluate", qrels, run, "-m", "alpha-nDCG@4", "-m", "P@3", "-f", "json", "--per-query")  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    expected = rankmeter.evaluate(qrels, run, ["alpha-nDCG@4", "P@3"]).metrics
    assert payload["metrics"]["alpha-nDCG@4"] == pytest.approx(expected["alpha-nDCG@4"])

    other = tmp_path / "other.txt"
    other.write_text("1 Q0 c 1 4 s\n1 Q0 a 2 3 s\n2 Q0 x 1 2 s\n", encoding="utf-8")
    compared = _rankmeter("compare", qrels, run, other, "-m", "ERR_IA@4", "-m", "StRecall@2")
    assert compared.returncode == 0, compared.stderr
    assert "ERR_IA@4" in compared.stdout and "StRecall@2" in compared.stdout

    explained = _rankmeter("explain", qrels, run, "--query", "1", "-m", "alpha_nDCG@4")
    assert explained.returncode == 0, explained.stderr
    assert "ideal ordering (ndeval's greedy" in explained.stdout

    ordinary = tmp_path / "ordinary.txt"
    ordinary.write_text("1 0 a 1\n1 0 b 0\n", encoding="utf-8")
    noted = _rankmeter("evaluate", ordinary, run, "-m", "alpha_nDCG@4")
    assert noted.returncode == 0, noted.stderr
    assert "every query of these qrels has one subtopic" in " ".join(noted.stdout.split())


# -- the compact join (evaluate's) and the full one (explain's) give the same numbers ----------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("judged_only", [False, True])
def test_compact_and_full_joins_agree_on_subtopic_qrels(
    tmp_path: Path, seed: int, judged_only: bool
) -> None:
    import random

    from rankmeter.io import as_run
    from rankmeter.metrics import join

    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(15)]
    judged = {  # (query, subtopic, doc) -> grade: each triple once
        (q, s, d): rng.choice([-1, 0, 1, 1, 2])
        for q in ("1", "2", "3")
        for d in rng.sample(docs, 8)
        for s in rng.sample("0123", rng.randint(1, 3))
    }
    path = tmp_path / "q.txt"
    path.write_text("".join(f"{q} {s} {d} {g}\n" for (q, s, d), g in judged.items()))
    qrels = read_qrels(path, subtopics=True)
    results = {q: {d: rng.choice([0.0, 1.0, 2.0]) for d in rng.sample([*docs, "u1"], 10)} for q in ("1", "2", "4")}  # fmt: skip
    run = as_run(results)
    names = ["alpha_nDCG@5", "alpha_nDCG(alpha=0.25)@20", "ERR_IA@3", "nERR_IA@10", "StRecall@5"]
    metrics = [parse_metric(m) for m in names]
    metrics.append(rankmeter.Metric(parse_metric("ERR_IA@5").spec))  # by hand: no cutoff
    for include_missing in (False, True):
        policy = {"include_missing": include_missing, "judged_only": judged_only}
        full = join(qrels, run, **policy)
        compact = join(qrels, run, compact=True, **policy)
        for metric in metrics:
            assert np.array_equal(metric.compute(full), metric.compute(compact)), metric


# -- tables: a subtopic (or iteration) column ----------------------------------------------------


def test_a_csv_with_a_subtopic_column_is_read_as_the_trec_file(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    csv = tmp_path / "qrels.csv"
    rows = [line.split() for line in DIVERSE.splitlines()]
    csv.write_text(
        "query_id,subtopic,doc_id,relevance\n" + "".join(",".join(r) + "\n" for r in rows),
        encoding="utf-8",
    )
    names = ["alpha_nDCG@4", "ERR_IA@4", "StRecall@2", "nDCG@4"]
    from_csv = rankmeter.evaluate(csv, files[1], names).per_query.to_dict()
    assert from_csv == rankmeter.evaluate(files[0], files[1], names).per_query.to_dict()
    # without a diversity metric the column is not read: a doc judged twice is an error
    with pytest.raises(FormatError, match="duplicate judgment"):
        rankmeter.evaluate(csv, files[1], ["nDCG@4"])


def test_a_dataframe_with_ir_measures_iteration_column() -> None:
    pd = pytest.importorskip("pandas", reason="DataFrame input")
    frame = pd.DataFrame(
        {"query_id": ["1", "1", "1"], "iteration": [1, 2, 2], "doc_id": ["a", "a", "b"],
         "relevance": [1, 1, 1]}
    )  # fmt: skip
    run = {"1": {"b": 2.0, "a": 1.0}}
    values = rankmeter.evaluate(frame, run, ["alpha_nDCG@2", "StRecall@1"]).metrics
    # b (subtopic 2) then a (1 and 2, 2 seen once): 1 + 1.5/log2(3); ideal a (2), b (0.5)
    assert values["alpha_nDCG@2"] == pytest.approx((1 + 1.5 / np.log2(3)) / (2 + 0.5 / np.log2(3)))
    assert values["StRecall@1"] == 0.5


def test_spark_is_refused_before_it_starts(files: tuple[Path, Path]) -> None:
    from rankmeter.comparison import compare_files
    from rankmeter.engines import evaluate_files
    from rankmeter.errors import PolicyError

    qrels, run = (str(f) for f in files)
    with pytest.raises(
        PolicyError,
        match=r"^alpha_nDCG@5 reads subtopic qrels, which engine='spark' does not read yet; "
        r"use engine='process'$",
    ):
        evaluate_files(qrels, [run], ["P@5", "alpha_nDCG@5"], engine="spark")
    with pytest.raises(PolicyError, match=r"^ERR_IA@5, S-recall@5 read subtopic qrels"):
        compare_files(qrels, [run, run], ["ERR_IA@5", "S-recall@5"], engine="spark")
    done = _rankmeter("evaluate", qrels, run, "-m", "StRecall@5", "--engine", "spark")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "StRecall@5 reads subtopic qrels, which --engine spark does not read yet; "
        "use --engine process"
    )
