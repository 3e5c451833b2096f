"""Through the Python API, bad input raises a RankmeterError and nothing else (issue item 7)."""

from __future__ import annotations

import gzip
import io
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _malformed import (
    METRICS,
    STRAY,
    Bad,
    assert_one_line,
    expected_evaluation,
    mutated,
    reference_read,
    same,
    trec_file,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter.io.stream as stream
from rankmeter import Qrels, RankmeterError, Run, evaluate
from rankmeter.io import as_run, read_qrels, read_run

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-api")


@SETTINGS
@given(data=trec_file("qrels"))
def test_trec_qrels_read_as_the_reference_or_fail_cleanly(workdir: Path, data: bytes) -> None:
    path = workdir / "qrels.trec"
    path.write_bytes(data)
    try:
        expected, _ = reference_read(data, "qrels")
    except Bad:
        expected = None
    try:
        got = read_qrels(path, format="trec")
    except RankmeterError as error:
        assert expected is None, error
        assert_one_line(str(error))
        return
    assert expected is not None
    assert sorted(got) == sorted((q, d, g) for q, docs in expected.items() for d, g in docs.items())


@SETTINGS
@given(data=trec_file("run"))
def test_trec_runs_read_as_the_reference_or_fail_cleanly(workdir: Path, data: bytes) -> None:
    path = workdir / "run.trec"
    path.write_bytes(data)
    try:
        expected, tag = reference_read(data, "run")
    except Bad:
        expected = None
    try:
        got = read_run(path, format="trec")
    except RankmeterError as error:
        assert expected is None, error
        assert_one_line(str(error))
        return
    assert expected is not None
    assert got.name == tag
    assert got.to_dict() == Run.from_dict(expected).to_dict()


@SETTINGS
@given(data=trec_file("run"))
def test_streamed_runs_read_as_the_reference_or_fail_cleanly(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    monkeypatch.setattr(stream, "PIECE_BYTES", 64)  # pieces cut in the middle of lines
    monkeypatch.setattr(stream, "CHUNK_ROWS", 3)
    path = workdir / "streamed.trec"
    path.write_bytes(data)
    try:
        expected, tag = reference_read(data, "run")
    except Bad:
        expected = None
    try:
        chunks = list(stream.iter_run_chunks(path))
    except RankmeterError as error:
        assert_one_line(str(error))
        # Streaming also refuses a run whose queries are not grouped (and says so).
        assert expected is None or "not grouped by query" in str(error), error
        return
    assert expected is not None
    assert {chunk.name for chunk in chunks} == {tag}
    got = {q: docs for chunk in chunks for q, docs in chunk.to_dict().items()}
    assert got == Run.from_dict(expected).to_dict()


@SETTINGS
@given(qrels_data=trec_file("qrels"), run_data=trec_file("run"))
def test_evaluate_on_damaged_files_gives_the_reference_or_one_error_line(
    workdir: Path, qrels_data: bytes, run_data: bytes
) -> None:
    qrels_path = workdir / "q.txt"
    run_path = workdir / "r.txt.gz"
    qrels_path.write_bytes(qrels_data)
    run_path.write_bytes(gzip.compress(run_data))
    expected = expected_evaluation(qrels_data, run_data, METRICS, per_query=True)
    try:
        result = evaluate(qrels_path, run_path, METRICS)
    except RankmeterError as error:
        assert expected is None, error
        assert_one_line(str(error))
        return
    assert expected is not None
    assert same(json.loads(json.dumps(result.to_dict(per_query=True))), expected)
    for value in result.metrics.values():
        assert not math.isnan(value)


# -- tables --------------------------------------------------------------------------------------
cells = st.one_of(
    st.sampled_from(["1", "007", "d1", "", " ", "nan", "inf", "1e308", "-1e308", "x", '"', "a,b"]),
    st.text(max_size=6),
)


@st.composite
def delimited_file(draw: st.DrawFn, sep: str) -> bytes:
    header = draw(
        st.sampled_from(
            [
                ["query_id", "doc_id", "relevance"],
                ["query-id", "corpus-id", "score"],
                ["qid", "docid", "score", "run"],
                ["qid", "docid"],
                ["qid", "qid", "score"],
            ]
        )
    )
    lines = [sep.join(header).encode()]
    for _ in range(draw(st.integers(0, 6))):
        row = sep.join(draw(cells) for _ in range(draw(st.integers(1, 5))))
        lines.append(draw(mutated(row.encode("utf-8", errors="surrogatepass"))))
    return b"\n".join(lines) + b"\n"


@st.composite
def jsonl_file(draw: st.DrawFn) -> bytes:
    values = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(),
        st.text(max_size=4),
        st.lists(st.integers(), max_size=2),
    )
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        keys = draw(st.sampled_from([["qid", "docid", "score"], ["query_id", "doc_id"], ["qid"]]))
        row = {k: draw(values) for k in keys}
        line = json.dumps(row).encode()
        lines.append(draw(mutated(line)))
    return b"\n".join(lines)


@SETTINGS
@given(
    fmt_and_data=st.one_of(
        st.tuples(st.just("csv"), delimited_file(",")),
        st.tuples(st.just("tsv"), delimited_file("\t")),
        st.tuples(st.just("jsonl"), jsonl_file()),
    ),
    as_run=st.booleans(),
)
def test_tables_raise_only_rankmeter_errors(
    workdir: Path, fmt_and_data: tuple[str, bytes], as_run: bool
) -> None:
    fmt, data = fmt_and_data
    path = workdir / f"table.{fmt}"
    path.write_bytes(data)
    try:
        loaded: Any = read_run(path) if as_run else read_qrels(path)
    except RankmeterError as error:
        assert_one_line(str(error))
        return
    assert len(loaded) > 0


@SETTINGS
@given(data=st.binary(max_size=200), stray=st.sampled_from(STRAY))
def test_parquet_garbage_raises_a_rankmeter_error(workdir: Path, data: bytes, stray: bytes) -> None:
    sink = io.BytesIO()
    pq.write_table(pa.table({"qid": ["1"], "docid": ["a"], "score": [1.0]}), sink)
    good = sink.getvalue()
    path = workdir / "table.parquet"
    path.write_bytes(good[: len(data) % len(good)] + stray + data)
    with pytest.raises(RankmeterError):
        read_run(path)


python_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.complex_numbers(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
python_keys = st.one_of(
    st.text(max_size=5),
    st.integers(),
    st.floats(),
    st.none(),
    st.booleans(),
    st.binary(),
    st.sampled_from(["\ud800", "a\udcff", "\x00", "", " "]),
)


@SETTINGS
@given(
    judged=st.dictionaries(
        python_keys, st.dictionaries(python_keys, python_values) | python_values
    ),
    as_run=st.booleans(),
)
def test_dicts_raise_only_rankmeter_errors(judged: dict[Any, Any], as_run: bool) -> None:
    try:
        loaded: Any = Run.from_dict(judged) if as_run else Qrels.from_dict(judged)
    except RankmeterError:
        return
    assert len(loaded) > 0


@SETTINGS
@given(
    column=st.lists(python_values, min_size=1, max_size=4),
    target=st.sampled_from(["query_id", "doc_id", "score"]),
)
def test_dataframes_raise_only_rankmeter_errors(column: list[Any], target: str) -> None:
    frame = pd.DataFrame(
        {"query_id": ["1"] * len(column), "doc_id": [f"d{i}" for i in range(len(column))]}
    )
    frame["score"] = 1.0
    frame[target] = pd.Series(column, dtype=object)
    try:
        as_run(frame)
    except RankmeterError:
        return


def test_the_shared_checks_are_not_blind() -> None:
    """The checks every fuzz test of damaged files uses (tests/io/_malformed.py) can fail."""
    assert_one_line("q.txt:2: grade must be a number, not 'x': '1 0 a x'")
    for message in ("", "two\nlines", "two\rlines", "two\u2028lines", "  "):
        with pytest.raises(AssertionError):
            assert_one_line(message)
    good_qrels, good_run = b"1 0 a 1\n", b"1 Q0 a 1 2.5 tag\n"
    assert expected_evaluation(good_qrels, good_run, ["P@5"]) == {"metrics": {"P@5": 0.2}}
    assert expected_evaluation(b"1 0 a x\n", good_run, ["P@5"]) is None
    assert expected_evaluation(good_qrels, b"2 Q0 a 1 2.5 tag\n", ["P@5"]) is None
    # TREC to the reference reader, JSON lines to format detection: refused.
    assert expected_evaluation(b"{1 0 a 1\n", b"{1 Q0 a 1 2.5 tag\n", ["P@5"]) is None
