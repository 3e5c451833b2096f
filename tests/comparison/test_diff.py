"""diff_runs: two runs side by side (issue 24): values as evaluate gives them, the queries by
change, each document's move from A to B, the corpus read only for the shown documents."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

import rankmeter
from rankmeter.comparison import DIFF_SHAPE, RunDiff, diff_runs
from rankmeter.errors import FormatError
from rankmeter.io import as_run, read_qrels
from rankmeter.io.annotations import read_queries
from rankmeter.io.beir import Document

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

QRELS = {
    "q1": {"a": 2, "b": 1, "c": 0, "n": -1},
    "q2": {"x": 3},
    "q3": {"z": 1},
    "q4": {"a": 1},
}
# A: q1 a b c d; q2 x y; q4 (none); B: q1 d a e b; q2 y x; q3 z.  q9 is not judged.
RUN_A = {
    "q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
    "q2": {"x": 2.0, "y": 1.0},
    "q4": {"a": 1.0},
    "q9": {"a": 1.0},
}
RUN_B = {
    "q1": {"d": 4.0, "a": 3.0, "e": 2.0, "b": 1.0},
    "q2": {"y": 2.0, "x": 1.0},
    "q3": {"z": 1.0},
}


def hand_made(**options: object) -> RunDiff:
    return diff_runs(QRELS, RUN_A, RUN_B, depth=3, **options)  # type: ignore[arg-type]


def test_moves_of_a_hand_made_pair() -> None:
    q1 = hand_made(metric="P@1").query("q1")
    assert [(r.rank, r.doc, r.grade, r.other_rank, r.move, r.by) for r in q1.a] == [
        (1, "a", 2.0, 2, "down", 1),
        (2, "b", 1.0, 4, "down", 2),
        (3, "c", 0.0, None, "dropped", 0),
    ]
    assert [(r.rank, r.doc, r.grade, r.other_rank, r.move, r.by) for r in q1.b] == [
        (1, "d", None, 4, "up", 3),
        (2, "a", 2.0, 1, "down", 1),
        (3, "e", None, None, "new", 0),
    ]
    assert q1.moved == 3
    assert (q1.value_a, q1.value_b, q1.delta) == (1.0, 0.0, -1.0)
    q2 = hand_made(metric="P@1").query("q2")
    assert [(r.doc, r.move, r.by) for r in q2.b] == [("y", "up", 1), ("x", "down", 1)]


def test_a_row_at_the_same_rank_is_same() -> None:
    diff = diff_runs({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, {"q": {"a": 2.0, "c": 1.0}})
    q = diff.queries[0]
    assert [(r.doc, r.move) for r in q.a] == [("a", "same"), ("b", "dropped")]
    assert [(r.doc, r.move) for r in q.b] == [("a", "same"), ("c", "new")]
    assert q.moved == 1


def test_queries_missing_from_a_run_score_as_empty_and_unjudged_ones_are_left_out() -> None:
    diff = hand_made(metric="P@1")
    assert {q.query for q in diff.queries} == {"q1", "q2", "q3", "q4"}  # not q9
    q3, q4 = diff.query("q3"), diff.query("q4")
    assert (q3.a, q3.value_a, q3.value_b) == ((), 0.0, 1.0)
    assert (q4.b, q4.value_a, q4.value_b) == ((), 1.0, 0.0)
    assert any("not judged" in note for note in diff.notes)
    assert any("no results for 1 judged query" in note for note in diff.notes)
    with pytest.raises(KeyError):
        diff.query("q9")


def test_judged_queries_neither_run_answered_are_left_out_with_a_note() -> None:
    """The means are over the queries shown: a judged query no run answered is not among
    them, and a note says so (evaluate -c and compare would count it as 0 for both)."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    diff = diff_runs(qrels, {"q1": {"a": 1.0}}, {"q1": {"x": 1.0}}, metric="P@1")
    assert [q.query for q in diff.queries] == ["q1"]
    assert "3 judged queries that neither run answered are left out" in diff.notes
    one = diff_runs({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, {"q1": {"b": 1.0}})
    assert "1 judged query that neither run answered is left out" in one.notes


def test_queries_are_ordered_by_delta_worst_loss_first_ties_in_qrels_order() -> None:
    diff = hand_made(metric="P@1")
    assert [(q.query, q.delta) for q in diff.queries] == [
        ("q1", -1.0),
        ("q2", -1.0),
        ("q4", -1.0),
        ("q3", 1.0),
    ]
    assert (diff.wins, diff.ties, diff.losses) == (1, 0, 3)
    nDCG = hand_made()  # nDCG@10: q2 keeps x in the top 2, so it loses less than q1
    assert [q.query for q in nDCG.queries][-1] == "q3"
    assert diff.mean_a == 0.75 and diff.mean_b == 0.25


def _random_case(seed: int) -> tuple[dict, dict, dict]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels = {
        f"q{q}": {d: rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 8))}
        for q in range(25)
    }

    def run() -> dict:
        return {
            f"q{q}": {d: float(rng.randint(0, 4)) for d in rng.sample(docs, rng.randint(1, 15))}
            for q in range(28)  # q25..q27 are not judged
            if rng.random() > 0.15  # some judged queries missing
        }

    return qrels, run(), run()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("metric", ["nDCG@10", "AP", "P@5", "RR"])
def test_values_are_what_evaluate_gives_with_missing_queries_as_empty(
    seed: int, metric: str
) -> None:
    qrels, run_a, run_b = _random_case(seed)
    diff = diff_runs(qrels, run_a, run_b, metric=metric, depth=4)
    for side, run in (("a", run_a), ("b", run_b)):
        result = rankmeter.evaluate(qrels, run, [metric], include_missing=True)
        expected = dict(zip(result.per_query.query_ids, result.per_query[metric], strict=True))
        for q in diff.queries:
            got = q.value_a if side == "a" else q.value_b
            assert got == pytest.approx(expected[q.query], abs=1e-12)
    answered = (set(run_a) | set(run_b)) & set(qrels)
    assert {q.query for q in diff.queries} == answered
    deltas = [q.delta for q in diff.queries]
    assert deltas == sorted(deltas)
    for q in diff.queries:
        assert q.delta == q.value_b - q.value_a
        ranked_a = as_run(run_a).ranking(q.query) if q.query in run_a else []
        assert [r.doc for r in q.a] == ranked_a[:4]
        for row in q.b:
            rank_in_a = ranked_a.index(row.doc) + 1 if row.doc in ranked_a else None
            assert row.other_rank == rank_in_a
            if rank_in_a is None:
                assert (row.move, row.by) == ("new", 0)
            else:
                assert row.by == abs(rank_in_a - row.rank)
            assert row.grade == (qrels[q.query].get(row.doc))


def test_two_runs_of_one_name_are_told_apart(tmp_path: Path) -> None:
    run = tmp_path / "same.run"
    run.write_text("q1 Q0 a 1 1.0 tag\n")
    diff = diff_runs({"q1": {"a": 1}}, run, run)
    assert (diff.run_a, diff.run_b) != (diff.run_a, diff.run_a)
    named = diff_runs({"q1": {"a": 1}}, f"old={run}", f"new={run}")
    assert (named.run_a, named.run_b) == ("old", "new")


def test_corpus_gives_only_the_shown_documents(tmp_path: Path) -> None:
    folder = tmp_path / "collection"
    folder.mkdir()
    lines = [{"_id": d, "title": f"T {d}", "text": f"text of {d}"} for d in "abcdexyz"]
    lines.append({"_id": "unshown", "title": "", "text": "never read into the diff"})
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    diff = hand_made(corpus=folder)
    shown = {r.doc for q in diff.queries for r in (*q.a, *q.b)}
    assert set(diff.documents) == shown
    assert diff.documents["a"] == Document("T a", "text of a")
    from_file = hand_made(corpus=folder / "corpus.jsonl")
    assert dict(from_file.documents) == dict(diff.documents)
    partial = hand_made(
        corpus={"a": "only a", "b": Document("B", "bee"), "c": {"title": "C", "text": None}}
    )
    assert dict(partial.documents) == {
        "a": Document("", "only a"),
        "b": Document("B", "bee"),
        "c": Document("C", ""),
    }
    assert any(
        f"{len(shown) - 3} shown documents are not in the corpus" in n for n in partial.notes
    )


def test_query_texts() -> None:
    diff = hand_made(queries={"q1": "first </script>", "q2": "second"})
    assert diff.query("q1").text == "first </script>"
    assert diff.query("q3").text is None


def test_to_dict_is_the_documented_shape() -> None:
    diff = hand_made(metric="P@1", queries={"q1": "one"}, corpus={"a": "text"})
    payload = diff.to_dict()
    assert list(payload) == [
        "shape",
        "metric",
        "better",
        "depth",
        "run_a",
        "run_b",
        "n_queries",
        "mean_a",
        "mean_b",
        "mean_delta",
        "wins",
        "ties",
        "losses",
        "notes",
        "queries",
    ]
    assert payload["shape"] == DIFF_SHAPE == "rankmeter.diff/1"
    first = payload["queries"][0]
    assert list(first) == ["query", "text", "a", "b", "delta", "ranking_a", "ranking_b"]
    assert first["ranking_b"][0] == {
        "rank": 1,
        "doc": "d",
        "grade": None,
        "other_rank": 4,
        "move": "up",
        "by": 3,
    }
    text = json.dumps(payload, allow_nan=False)
    assert "text" not in json.dumps([q["ranking_a"] for q in payload["queries"]])
    assert json.loads(text) == payload


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"depth": 0}, "depth=0 must be an integer >= 1"),
        ({"metric": ["AP"]}, "metric= must be one metric name"),
        ({"metric": "nope@3"}, "unknown metric"),
        ({"corpus": 3}, "corpus must be a path"),
        ({"queries": 3}, "queries must be a path"),
        ({"ties": "random"}, "ties"),
        ({"run_a": "-", "run_b": "-"}, r"only one input can be read from stdin"),
        ({"run_a": "-", "corpus": "-"}, r"only one input can be read from stdin"),
        ({"run_b": "-", "queries": "-"}, r"only one input can be read from stdin"),
    ],
)
def test_bad_settings_are_one_clear_error(options: dict, message: str) -> None:
    runs = {"run_a": RUN_A, "run_b": RUN_B}
    runs.update({k: options.pop(k) for k in ("run_a", "run_b") if k in options})
    with pytest.raises(rankmeter.RankmeterError, match=message):
        diff_runs(QRELS, runs["run_a"], runs["run_b"], **options)  # type: ignore[arg-type]


def test_a_bad_corpus_line_is_named(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b", "text": ["no"]}\n')
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: text must be a string"):
        hand_made(corpus=corpus)


def test_cranfield() -> None:
    root = DATA / "cranfield"
    if not (root / "corpus.jsonl").is_file():
        pytest.skip(f"the Cranfield collection is absent ({root})")
    qrels = read_qrels(root / "qrels" / "test.tsv")
    queries = read_queries(root / "queries.jsonl")
    ids = sorted(queries)[:40]
    rng = random.Random(3)
    run_a = {
        q: {str(d): float(100 - i) for i, d in enumerate(rng.sample(range(1, 1401), 30))}
        for q in ids
    }
    run_b = {q: dict(list(run_a[q].items())[::-1]) for q in ids}
    run_b = {q: {d: -s for d, s in r.items()} for q, r in run_b.items()}
    diff = diff_runs(qrels, run_a, run_b, corpus=root, queries=root / "queries.jsonl")
    assert len(diff.queries) == len([q for q in ids if q in set(qrels.query_ids)])
    assert all(d in diff.documents for q in diff.queries for d in (r.doc for r in q.a))
    assert all(q.text == queries[q.query] for q in diff.queries)
    assert not any(math.isnan(q.delta) for q in diff.queries)


def test_compare_files_with_a_corpus_diffs_each_system_against_the_baseline(
    tmp_path: Path,
) -> None:
    from rankmeter.comparison import compare_files

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(6)))
    for name, shift in (("a", 0), ("b", 1), ("c", 2)):
        (tmp_path / f"{name}.run").write_text(
            "".join(
                f"q{i} Q0 d{(i + shift) % 6} 1 2.0 {name}\nq{i} Q0 x{i} 2 1.0 {name}\n"
                for i in range(6)
            )
        )
    corpus = {f"d{i}": f"text {i}" for i in range(6)}
    runs = [f"{n}={tmp_path / n}.run" for n in "abc"]
    done = compare_files(qrels, runs, ["P@1"], corpus=corpus, resamples=100, baseline="b")
    assert [(d.run_a, d.run_b) for d in done.diffs] == [("b", "a"), ("b", "c")]
    assert all(d.metric == "P@1" for d in done.diffs)
    assert done.diffs[0].query("q0").delta == 1.0  # a has d0 first for q0, b has d1
    assert [(r.doc, r.move) for r in done.diffs[0].query("q0").b] == [("d0", "new"), ("x0", "same")]
    assert all(set(d.documents) <= set(corpus) and d.documents for d in done.diffs)
    assert compare_files(qrels, runs, ["P@1"], resamples=100).diffs == ()
