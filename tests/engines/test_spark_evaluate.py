"""Evaluation on Spark (rankmeter.engines.spark.evaluate, local[2]) gives the in-process
numbers exactly: the same per-query values in the same order, the same means, the same
Judged@k, on Cranfield and on random runs with ties, missing queries and unjudged documents.
Each Spark job costs seconds: the cases are evaluated together where they can be."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankmeter
from rankmeter.errors import FormatError, PolicyError, RankmeterError

pytestmark = pytest.mark.spark

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
METRICS = ["nDCG@10", "nDCG(gain=exp)@5", "P(rel=2)@5", "AP", "RR@10", "R@100", "bpref", "num_ret"]


def same(got: Any, expected: Any) -> None:
    assert got.run == expected.run
    assert got.per_query.query_ids == expected.per_query.query_ids
    for metric in expected.metrics:
        np.testing.assert_array_equal(got.per_query[metric], expected.per_query[metric])
        assert got.metrics[metric] == expected.metrics[metric], metric
    assert got.judged_k == expected.judged_k
    np.testing.assert_equal(got.judged, expected.judged)
    # What the data warnings read: the query overlap and the order the rows were written in.
    assert got.facts is not None and expected.facts is not None
    assert got.facts.overlap == expected.facts.overlap
    assert got.facts.written_order == expected.facts.written_order


def random_case(seed: int) -> tuple[pa.Table, dict[str, pa.Table]]:
    """Qrels over 60 queries (grades 0-3), and three runs: scores with many ties, queries
    missing from the runs, documents nobody judged, ids that sort numerically and not."""
    rng = np.random.default_rng(seed)
    queries = [str(q) for q in range(1, 51)] + [f"q{q}" for q in range(10)]
    docs = [f"d{d}" for d in range(300)]
    qrels: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "relevance": []}
    for q in queries:
        for d in rng.choice(docs, 20, replace=False):
            qrels["query_id"].append(q)
            qrels["doc_id"].append(str(d))
            qrels["relevance"].append(int(rng.integers(0, 4)))
    runs = {}
    for name in ("bm25", "dense", "hybrid"):
        run: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "score": []}
        answered = [q for q in queries if rng.random() < 0.8] + ["unjudged-query"]
        for q in answered:
            for d in rng.choice(docs, int(rng.integers(1, 60)), replace=False):
                run["query_id"].append(q)
                run["doc_id"].append(str(d))
                run["score"].append(float(rng.integers(0, 5)))  # many ties
        runs[name] = pa.table(run)
    return pa.table(qrels), runs


def test_random_runs_with_ties_and_missing_queries_equal_in_process(
    spark_backend: Any, tmp_path: Path
) -> None:
    from rankmeter.engines.spark import evaluate

    session = spark_backend._session
    qrels, runs = random_case(seed=3)
    qrels_frame = session.createDataFrame(qrels.to_pandas())
    with_names = pa.concat_tables(
        [t.append_column("run", pa.array([n] * t.num_rows)) for n, t in runs.items()]
    )
    for policies in ({"include_missing": True}, {"judged_only": True, "rel": 2}):
        got = evaluate(
            spark_backend,
            qrels_frame,
            session.createDataFrame(with_names.to_pandas()),
            METRICS,
            buckets=7,
            **policies,
        )
        expected = rankmeter.evaluate(qrels, runs, METRICS, **policies)
        assert list(got) == sorted(runs)  # one DataFrame's runs, by name
        for name in runs:
            same(got[name], expected[name])
    # Parquet paths, a dict of runs keeping its order
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    for name, table in runs.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
    got = evaluate(
        session,
        str(tmp_path / "qrels.parquet"),
        {n: str(tmp_path / f"{n}.parquet") for n in ("hybrid", "bm25")},
        METRICS,
    )
    expected = rankmeter.evaluate(qrels, {"hybrid": runs["hybrid"], "bm25": runs["bm25"]}, METRICS)
    assert list(got) == ["hybrid", "bm25"]
    for name in got:
        same(got[name], expected[name])


@pytest.mark.skipif(not CRANFIELD.is_dir(), reason="needs ../shared/data/cranfield")
def test_cranfield_trec_files_equal_in_process(spark_backend: Any, tmp_path: Path) -> None:
    from rankmeter.engines.spark import evaluate

    qrels = CRANFIELD / "qrels.trec"
    judged = sorted({line.split()[0] for line in qrels.read_text().splitlines()}, key=int)
    rng = np.random.default_rng(0)
    lines = [
        f"{q} Q0 {d} {r + 1} {rng.integers(0, 20) / 4} cran_random"
        for q in judged[:-15]
        for r, d in enumerate(rng.choice(1400, 100, replace=False) + 1)
    ]
    run = tmp_path / "random.run"
    run.write_text("\n".join(lines) + "\n")
    got = evaluate(spark_backend, str(qrels), str(run), METRICS, include_missing=True)
    same(got, rankmeter.evaluate(qrels, run, METRICS, include_missing=True))
    assert got.run == "cran_random" and got.n_queries == len(judged)


def test_bad_input_is_one_line(spark_backend: Any, tmp_path: Path) -> None:
    from rankmeter.engines.spark import evaluate

    session = spark_backend._session
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0\n")
    with pytest.raises(
        FormatError,
        match=r"^\S*bad\.run:2: expected 6 columns \(qid Q0 docid rank score tag\) in a TREC "
        r"run file, found 5: '1 Q0 b 2 1\.0'$",
    ):
        evaluate(session, str(qrels), str(bad))
    twice = tmp_path / "twice.run"
    twice.write_text("1 Q0 a 1 2.0 r\n1 Q0 a 2 1.0 r\n")
    with pytest.raises(
        FormatError, match=r"^\S*twice\.run:2: duplicate result for query '1', doc 'a'"
    ) as error:
        evaluate(session, str(qrels), str(twice))
    assert "\n" not in str(error.value) and "Traceback" not in str(error.value)
    frame = session.createDataFrame([("1", "a")], "query_id string, doc_id string")
    with pytest.raises(
        FormatError, match=r"needs the columns query_id, doc_id, score; missing score"
    ):
        evaluate(session, str(qrels), frame)
    with pytest.raises(PolicyError, match=r"ties='input'"):
        evaluate(session, str(qrels), str(twice), ties="input")
    other = tmp_path / "other.run"
    other.write_text("9 Q0 a 1 2.0 r\n")
    # The in-process engine's error (a RankmeterError, exit 1 on the command line).
    with pytest.raises(
        RankmeterError, match=r"^run 'r' \(\S*other\.run\) has no query in common .*start 9, "
    ) as refused:
        evaluate(session, str(qrels), str(other))
    assert type(refused.value) is RankmeterError
    # Files of a list that share a tag are named by their files, as in process; a name a
    # DataFrame's run column holds cannot be renamed, so a clash with it is refused.
    good = tmp_path / "good.run"
    good.write_text("1 Q0 b 1 2.0 r\n2 Q0 a 1 1.0 r\n")
    got = evaluate(session, str(qrels), [str(good), str(other)], include_missing=True)
    assert list(got) == [str(good), str(other)]
    assert list(got) == list(rankmeter.evaluate(qrels, [good, other], include_missing=True))
    named = session.createDataFrame(
        [("r", "1", "a", 1.0)], "run string, query_id string, doc_id string, score double"
    )
    with pytest.raises(PolicyError, match=r"two runs are named 'r'"):
        evaluate(session, str(qrels), [named, str(good)])


def test_bad_lines_are_the_in_process_errors(spark_backend: Any, tmp_path: Path) -> None:
    """A line of a TREC file that cannot be read is the in-process engine's one-line error,
    word for word, with its line number, however Spark splits the file; a score or grade that
    is not a number too (Spark's ANSI casts failed the job: exit 70, a Java trace)."""
    from rankmeter.engines.spark import evaluate

    session = spark_backend._session

    def same_error(qrels: Path, run: Any, expected: str) -> None:
        with pytest.raises(FormatError) as in_process:
            rankmeter.evaluate(qrels, run)
        assert re.fullmatch(expected, str(in_process.value))
        with pytest.raises(FormatError) as on_spark:
            evaluate(session, str(qrels), [str(r) for r in run] if isinstance(run, list) else run)
        assert str(on_spark.value) == str(in_process.value)

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 abc r\n")
    same_error(qrels, bad, r"\S*bad\.run:2: score must be a number, not 'abc': '1 Q0 b 2 abc r'")
    graded = tmp_path / "graded.txt"
    graded.write_text("1 0 a 1\n\n1 0 b high\n")
    good = tmp_path / "good.run"
    good.write_text("1 Q0 a 1 2.0 r\n")
    same_error(graded, good, r"\S*graded\.txt:3: grade must be a number, not 'high': '1 0 b high'")
    # Several partitions: the line is counted across them; the first bad line in the file
    # is named, whichever check it fails.
    long = tmp_path / "long.run"
    lines = [f"{q} Q0 d{d} {d} {100 - d} r\n" for q in range(1, 40) for d in range(1, 6)]
    lines[150] = "30 Q0 d1 1 high r\n"
    lines[170] = "35 Q0 d1 1\n"
    long.write_text("".join(lines))
    session.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    try:
        assert session.read.text(str(long)).rdd.getNumPartitions() > 1
        same_error(qrels, long, r"\S*long\.run:151: score must be a number, not 'high': .*")
        # A duplicate is found by a task, in its bucket: its line is found in the file.
        lines[150] = "31 Q0 d1 1 99 r\n"
        lines[170] = "34 Q0 d2 2 98 r\n"  # (34 d2 is on line 167)
        long.write_text("".join(lines))
        same_error(
            qrels,
            long,
            r"\S*long\.run:171: duplicate result for query '34', doc 'd2' \(.*\): "
            r"'34 Q0 d2 2 98 r'",
        )
    finally:
        session.conf.unset("spark.sql.files.maxPartitionBytes")
    # Several runs with a duplicate each: the first run's, as the in-process engine reads
    # them in order (the second's is on an earlier line).
    early = tmp_path / "early.run"
    early.write_text("1 Q0 a 1 2.0 e\n1 Q0 a 2 1.0 e\n")
    same_error(
        qrels,
        [long, early],
        r"\S*long\.run:171: duplicate result for query '34', doc 'd2' \(.*\): "
        r"'34 Q0 d2 2 98 r'",
    )
    assert session.read.text(str(long)).rdd.getNumPartitions() == 1  # (the default again)


def test_a_text_score_column_is_refused(spark_backend: Any, tmp_path: Path) -> None:
    """A run DataFrame whose score column holds text is refused in the in-process engine's
    words for a table (Spark's ANSI cast failed the job on a value that is not a number)."""
    from rankmeter.engines.spark import evaluate

    session = spark_backend._session
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    # A DataFrame whose score column holds text: the in-process engine's words for a table.
    frame = session.createDataFrame(
        [("1", "a", "2.0"), ("1", "b", "abc")], "query_id string, doc_id string, score string"
    )
    with pytest.raises(FormatError, match=r"^<run>: score column must be numeric, not string$"):
        evaluate(session, str(qrels), frame)
    with pytest.raises(FormatError, match=r"score column must be numeric, not (large_)?string"):
        rankmeter.evaluate(qrels, frame.toPandas())


def test_every_blank_splits_fields_as_in_process(spark_backend: Any, tmp_path: Path) -> None:
    """A form feed or vertical tab between fields splits them, as trec_eval and the
    in-process reader split them (Spark's split knew only spaces, tabs and CR: the line had
    five fields)."""
    from rankmeter.engines.spark import evaluate

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 2\n2 0 c 1\n")
    run = tmp_path / "blanks.run"
    run.write_text("1 Q0\fa 1 2.0 r\n1 Q0 b\v2 1.0 r\n2 Q0 c 1 1.0\f\vr\n")
    expected = rankmeter.evaluate(qrels, run, METRICS)
    same(evaluate(spark_backend._session, str(qrels), str(run), METRICS), expected)
    # A first line of three fields: the in-process error (reading its tag, the run's name,
    # failed the job).
    short = tmp_path / "short.run"
    short.write_text("1 Q0 b\n1 Q0 a 1 2.0 r\n")
    with pytest.raises(FormatError) as in_process:
        rankmeter.evaluate(qrels, short)
    with pytest.raises(FormatError) as on_spark:
        evaluate(spark_backend._session, str(qrels), str(short))
    assert str(on_spark.value) == str(in_process.value)
    assert re.fullmatch(
        r"\S*short\.run:1: expected 6 columns .* found 3: '1 Q0 b'", str(on_spark.value)
    )
