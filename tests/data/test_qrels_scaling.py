"""Qrels of one judgment per query (click labels) cost what a run of as many lines costs
(issue 22, item 17): reading them makes no Python object per query, and the warnings' natural
sort of many ids makes no sort key per id. The speed itself is measured by
``benchmarks/qrels_bench.py`` (``make bench``), not here."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import rankmeter.data.ids as ids_module
from rankmeter.data.ids import natural_key, natural_order
from rankmeter.io import read_qrels
from rankmeter.results import overlap_of

QUERIES = 50_000


@pytest.fixture(scope="module")
def click_qrels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """QUERIES lines, one judgment per query, queries shuffled."""
    rng = np.random.default_rng(17)
    path = tmp_path_factory.mktemp("scaling") / "clicks.qrels"
    queries = rng.permutation(QUERIES) + 1
    path.write_text("".join(f"{q} 0 D{q * 7} {q % 2}\n" for q in queries.tolist()))
    return path


def test_reading_qrels_makes_no_python_object_per_query(click_qrels: Path) -> None:
    gc.collect()
    before = sys.getallocatedblocks()
    qrels = read_qrels(click_qrels)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    # (one str per query would be QUERIES blocks; the ids stay in an Arrow array until asked)
    assert grown < QUERIES // 10, grown
    assert qrels.n_queries == QUERIES and len(qrels) == QUERIES
    assert qrels.query_ids[:3] == ("1", "2", "3") and qrels.query_ids[-1] == str(QUERIES)
    assert qrels.query_rows()["12345"] == 12344
    assert qrels.to_dict()["7"] == {"D49": 1}


@pytest.fixture(scope="module")
def one_result_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """QUERIES lines, one result per query, queries shuffled."""
    rng = np.random.default_rng(18)
    path = tmp_path_factory.mktemp("scaling") / "one.run"
    queries = rng.permutation(QUERIES) + 1
    path.write_text("".join(f"{q} Q0 D{q * 7} 1 {q / 7:.4f} t\n" for q in queries.tolist()))
    return path


def test_reading_a_run_makes_no_python_object_per_query(one_result_runs: Path) -> None:
    from rankmeter.io import read_run

    gc.collect()
    before = sys.getallocatedblocks()
    run = read_run(one_result_runs)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert grown < QUERIES // 10, grown
    assert run.n_queries == QUERIES and len(run) == QUERIES
    assert run.query_ids[:2] == ("1", "2") and run.ranking("12345") == ["D86415"]
    assert len(set(run.segment_ids.tolist())) == QUERIES


def test_the_examples_of_a_large_overlap_are_sorted_without_a_key_per_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judged = [f"{q}" for q in range(3 * QUERIES, 0, -1)] + ["b", "a"]
    ran = ["9999999", "b"]
    calls = 0

    def counted(qid: str) -> tuple[int, int, str]:
        nonlocal calls
        calls += 1
        return natural_key(qid)

    monkeypatch.setattr(ids_module, "natural_key", counted)
    overlap = overlap_of(judged, ran)
    assert calls <= len(ran)  # (the few ids only in the run may be sorted in Python)
    assert overlap.judged_without_results_examples == ("1", "2", "3", "4", "5")
    assert overlap.results_without_judgments_examples == ("9999999",)


@pytest.mark.parametrize("many", [False, True])
def test_natural_order_of_a_list_sorts_like_natural_key(many: bool) -> None:
    rng = np.random.default_rng(3)
    numbers = rng.permutation(5_000 if many else 300)
    ids = [f"{n:04d}" if n % 7 == 0 else str(n) for n in numbers.tolist()]
    ids += ["x", "Q1", "é", "10a", "0", "00", "1" * 25, "\ud800"]
    expect = sorted(ids, key=natural_key)
    for given_as in (ids, np.asarray(ids, dtype=object)):
        assert [ids[i] for i in natural_order(given_as)] == expect
    valid = ids[:-1]
    order = natural_order(pa.array(valid, type=pa.string()))
    assert [valid[i] for i in order] == [q for q in expect if q != "\ud800"]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_rows_of_finds_each_query_as_query_rows_does(kind: pa.DataType) -> None:
    from rankmeter.data import Qrels

    judged = ["10", "q2", "é", "2", "0010", "x y"]
    qrels = Qrels.from_columns(pa.array(judged, type=kind), ["d"] * 6, [1] * 6)
    asked = ["é", "missing", "10", "q2", "0010", "x y", "2", "1", "10", ""]
    index = qrels.query_rows()
    expect = [index.get(q, -1) for q in asked]
    assert qrels.rows_of(np.asarray(asked, dtype=object)).tolist() == expect
    assert qrels.rows_of(asked).tolist() == expect
    assert qrels.rows_of([]).tolist() == []


def test_the_join_makes_no_dict_of_every_judged_query(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankmeter import Qrels, Run, evaluate

    qrels = Qrels.from_dict({str(q): {f"d{q}": 1} for q in range(1, 2001)})
    run = Run.from_dict({"5": {"d5": 1.0, "x": 0.5}, "7": {"y": 2.0}, "9999": {"d1": 1.0}})

    def refused(self: Qrels) -> dict[str, int]:
        raise AssertionError("query_rows() built a dict of every judged query")

    monkeypatch.setattr(Qrels, "query_rows", refused)
    result = evaluate(qrels, run, "RR")
    assert result.per_query.query_ids == ("5", "7")
    assert result.metrics["RR"] == 0.5


@pytest.mark.parametrize(
    "texts", [[], ["a"], ["q1", "10", "x y", ""], ["é", "d", "日本", "a\x00b"], ["z"] * 3]
)
def test_arrow_strings_is_pa_array_without_pandas(texts: list[str]) -> None:
    from rankmeter.data.arrays import arrow_strings

    made = arrow_strings(texts)
    made.validate(full=True)
    assert made.equals(pa.array(texts, type=pa.string()))


def test_arrow_strings_refuses_a_lone_surrogate() -> None:
    from rankmeter.data.arrays import arrow_strings

    with pytest.raises(UnicodeEncodeError, match="surrogate"):
        arrow_strings(["a", "\ud800"])


@pytest.mark.parametrize("per_query", [1, 3])
def test_qrels_rows_are_in_query_then_doc_order_however_they_come(per_query: int) -> None:
    from rankmeter.data import Qrels

    rng = np.random.default_rng(per_query)
    n_queries = 3_000
    numbers = rng.choice(10 * n_queries, n_queries, replace=False)  # sparse: sorted, not placed
    queries = [str(q) for q in numbers.tolist()]
    queries[:5] = ["q-a", "007", "7b", "é", "42"]
    rows = [(q, f"d{(i * 31 + k) % 97}") for i, q in enumerate(queries) for k in range(per_query)]
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    grades = rng.integers(0, 3, len(rows)).tolist()
    qrels = Qrels.from_columns([q for q, _ in shuffled], [d for _, d in shuffled], grades)
    expect = sorted(
        zip(shuffled, grades, strict=True),
        key=lambda r: (natural_key(r[0][0]), qrels.doc_vocabulary.index(r[0][1]).as_py()),
    )
    assert [(q, d, int(g)) for q, d, g in qrels] == [(q, d, g) for (q, d), g in expect]


def test_a_duplicate_told_three_times_names_its_second_line(tmp_path: Path) -> None:
    from rankmeter.errors import FormatError

    path = tmp_path / "q.txt"
    path.write_text("2 0 b 1\n1 0 a 1\n3 0 c 0\n1 0 a 2\n1 0 a 0\n")
    with pytest.raises(FormatError, match=r":4: duplicate judgment for query '1', doc 'a' "):
        read_qrels(path)
    one_each = tmp_path / "one.txt"
    one_each.write_text("".join(f"{q} 0 d 1\n" for q in (5, 3, 9, 3)))
    with pytest.raises(FormatError, match=r":4: duplicate judgment for query '3', doc 'd' "):
        read_qrels(one_each)


@pytest.mark.parametrize(
    "ids",
    [
        ["3", "1", "2", "3", "1"],  # numbered, dense: placed by value
        ["30", "1", "900", "30"],  # sparse: hashed and sorted
        ["7", "007", "7", "0"],  # a leading zero: two ids of one number
        ["0", "10", "0", "5"],
        ["12", "x", "12", "3"],
        ["1" * 19, "5", "5"],  # beyond int64
        ["4"],
    ],
)
def test_intern_natural_codes_ids_in_natural_order(ids: list[str]) -> None:
    from rankmeter.data.ids import intern_natural
    from rankmeter.data.origin import Origin

    vocabulary = sorted(set(ids), key=natural_key)
    for given in (pa.array(ids), pa.chunked_array([ids[:1], ids[1:]])):
        codes, vocab = intern_natural(given, Origin("<t>"), "query id")
        assert vocab.to_pylist() == vocabulary
        assert codes.tolist() == [vocabulary.index(q) for q in ids]


@pytest.mark.parametrize("stream", [True, False])
def test_evaluate_counts_the_overlap_without_a_python_string_per_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """The overlap warnings' facts come from the Arrow ids (issue 22, item 17): no run id and
    no tuple of the judged ids made Python strings, chunk by chunk as whole."""
    import rankmeter.io.stream as stream_module
    from rankmeter import Qrels, Run, evaluate

    rng = np.random.default_rng(19)
    judged = rng.permutation(3000) + 1  # 1..3000, shuffled
    qrels = tmp_path / "clicks.qrels"
    qrels.write_text("".join(f"{q} 0 D{q} 1\n" for q in judged.tolist()))
    ran = [*range(3010, 5, -1), "x", "a", "0010"]  # 1-5 judged only; 3001-3010, x, a only here
    run = tmp_path / "one.run"
    run.write_text("".join(f"{q} Q0 D{q} 1 1.0 t\n" for q in ran))

    def refused(self: object) -> None:
        raise AssertionError("the query ids were made Python strings, one per query")

    segment_ids = Run.segment_ids

    def guarded(self: Run) -> object:
        if sys._getframe(1).f_globals["__name__"] == "rankmeter.io.stream":
            return segment_ids.fget(self)  # (the reader's own check that queries are grouped)
        return refused(self)

    monkeypatch.setattr(Run, "segment_ids", property(guarded))
    monkeypatch.setattr(Run, "query_ids", property(refused))
    monkeypatch.setattr(Qrels, "query_ids", property(refused))
    monkeypatch.setattr(Qrels, "segment_ids", property(refused))
    monkeypatch.setattr(stream_module, "CHUNK_ROWS", 100)  # (many chunks)
    result = evaluate(qrels, run, "RR", stream=stream)
    overlap = result.facts.overlap if result.facts else None
    assert overlap is not None and result.per_query.query_ids[:2] == ("6", "7")
    assert (overlap.judged, overlap.with_results, overlap.common) == (3000, 3008, 2995)
    assert overlap.judged_without_results == 5
    assert overlap.judged_without_results_examples == ("1", "2", "3", "4", "5")
    assert overlap.results_without_judgments == 13
    assert overlap.results_without_judgments_examples == ("0010", "3001", "3002", "3003", "3004")


def test_the_overlap_of_arrow_ids_makes_no_python_object_per_query() -> None:
    judged = pa.array([str(q) for q in range(QUERIES, 0, -1)])
    ran = pa.array([str(q) for q in range(10, QUERIES + 10)] + ["b", "a"])
    gc.collect()
    before = sys.getallocatedblocks()
    overlap = overlap_of(judged, ran)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert grown < QUERIES // 10, grown
    assert overlap.judged_without_results_examples == tuple(str(q) for q in range(1, 10)[:5])
    assert overlap.results_without_judgments == 11
    assert overlap.results_without_judgments_examples == tuple(
        str(QUERIES + q) for q in range(1, 6)
    )


def test_evaluate_makes_no_python_object_per_query(
    click_qrels: Path, one_result_runs: Path
) -> None:
    """Evaluating (the join, the metrics, the overlap facts, the per-query values) makes no
    Python object per query: the ids stay Arrow arrays until the per-query ids are read."""
    from rankmeter import evaluate
    from rankmeter.io import read_run

    qrels, run = read_qrels(click_qrels), read_run(one_result_runs)
    gc.collect()
    before = sys.getallocatedblocks()
    result = evaluate(qrels, run, ["nDCG@10", "P@10"])
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert grown < QUERIES // 10, grown
    assert result.facts is not None and result.facts.overlap.common == QUERIES
    assert len(result.per_query) == QUERIES
    assert result.per_query.worst("P@10", 2) == (("2", 0.0), ("4", 0.0))  # (grade q % 2)
    gc.collect()
    assert sys.getallocatedblocks() - before < QUERIES // 10  # (worst names two ids)
    assert result.per_query.query_ids[:3] == ("1", "2", "3")
