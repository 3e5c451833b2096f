"""Every input kind gives the same Qrels/Run content and the same evaluation numbers."""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankmeter
from rankmeter import Qrels, Run, evaluate
from rankmeter.io import as_qrels, as_run, read_qrels, read_run, write_trec_run

# "007" and "7" are different queries; ids are never read as numbers.
QRELS_ROWS: list[tuple[str, str, int]] = [
    ("007", "d1", 2),
    ("007", "d2", 0),
    ("007", "d9", 1),
    ("7", "d1", 1),
    ("7", "d3", 3),
    ("7", "010", -1),
    ("q3", "dé", 1),
    ("q3", "D-9", 2),
]
# (query, doc, score): ties within 007 and 7 exercise the doc-id tie break.
RUN_ROWS: list[tuple[str, str, float]] = [
    ("007", "d2", 3.5),
    ("007", "d1", 3.5),
    ("007", "d4", 1.25),
    ("7", "010", 0.30000000000000004),
    ("7", "d1", 0.3),
    ("7", "d3", -2.0),
    ("q3", "D-9", 1e-300),
    ("q3", "dé", 7.0),
    ("q4", "d1", 1.0),
]
TAG = "bm25"
METRICS = ["nDCG@10", "P@2", "R@100", "RR", "AP", "NumRet", "Bpref", "nDCG(gain=exp)@3"]


def qrels_lines(sep: str = " ") -> list[str]:
    return [sep.join([q, "0", d, str(g)]) for q, d, g in QRELS_ROWS]


def run_lines(sep: str = " ") -> list[str]:
    return [
        sep.join([q, "Q0", d, str(rank), repr(s), TAG])
        for rank, (q, d, s) in enumerate(RUN_ROWS, start=1)
    ]


def join(lines: list[str], eol: str = "\n", *, trailing: bool = True) -> bytes:
    return (eol.join(lines) + (eol if trailing else "")).encode("utf-8")


def qrels_table(names: tuple[str, str, str] = ("query_id", "doc_id", "relevance")) -> pa.Table:
    q, d, g = zip(*QRELS_ROWS, strict=True)
    return pa.table({names[0]: list(q), names[1]: list(d), names[2]: list(g)})


def run_table(names: tuple[str, str, str] = ("query_id", "doc_id", "score")) -> pa.Table:
    q, d, s = zip(*RUN_ROWS, strict=True)
    return pa.table({names[0]: list(q), names[1]: list(d), names[2]: list(s)})


def delimited(table: pa.Table, sep: str) -> bytes:
    lines = [sep.join(table.column_names)]
    for row in table.to_pylist():
        lines.append(sep.join(repr(v) if isinstance(v, float) else str(v) for v in row.values()))
    return join(lines)


def jsonl(table: pa.Table) -> bytes:
    return join([json.dumps(row, ensure_ascii=False) for row in table.to_pylist()])


def parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def reference_qrels() -> Qrels:
    return Qrels.from_dict({q: dict(docs) for q, docs in _group(QRELS_ROWS).items()})


def reference_run() -> Run:
    return Run.from_dict({q: dict(docs) for q, docs in _group(RUN_ROWS).items()}, name=TAG)


def _group(rows: list[Any]) -> dict[str, list[tuple[str, Any]]]:
    out: dict[str, list[tuple[str, Any]]] = {}
    for q, d, v in rows:
        out.setdefault(q, []).append((d, v))
    return out


# name -> (file name, bytes)
QRELS_FILES: dict[str, tuple[str, bytes]] = {
    "space": ("qrels.txt", join(qrels_lines())),
    "tab": ("qrels.txt", join(qrels_lines("\t"))),
    "multiple spaces": ("qrels", join([" " + line.replace(" ", "   ") for line in qrels_lines()])),
    "crlf": ("qrels.txt", join(qrels_lines(), "\r\n")),
    "no trailing newline": ("qrels.txt", join(qrels_lines(), trailing=False)),
    "bom": ("qrels.txt", b"\xef\xbb\xbf" + join(qrels_lines())),
    "blank lines": ("qrels.txt", join(["", *qrels_lines()[:3], "   ", *qrels_lines()[3:], ""])),
    "gzip": ("qrels.txt.gz", gzip.compress(join(qrels_lines()))),
    "gzip without suffix": ("qrels.txt", gzip.compress(join(qrels_lines("\t"), "\r\n"))),
    "csv": ("qrels.csv", delimited(qrels_table(), ",")),
    "csv aliases": ("qrels.csv", delimited(qrels_table(("qid", "docid", "rel")), ",")),
    "csv crlf bom": (
        "qrels.csv",
        b"\xef\xbb\xbf" + delimited(qrels_table(), ",").replace(b"\n", b"\r\n"),
    ),
    "csv spaces after commas": ("qrels.csv", delimited(qrels_table(), ", ")),
    "csv gzip": ("qrels.csv.gz", gzip.compress(delimited(qrels_table(), ","))),
    "tsv": ("qrels.tsv", delimited(qrels_table(), "\t")),
    "beir tsv": ("test.tsv", delimited(qrels_table(("query-id", "corpus-id", "score")), "\t")),
    "beir tsv sniffed": ("qrels", delimited(qrels_table(("query-id", "corpus-id", "score")), "\t")),
    "jsonl": ("qrels.jsonl", jsonl(qrels_table())),
    "jsonl aliases": ("qrels.jsonl", jsonl(qrels_table(("qid", "docid", "grade")))),
    "jsonl sniffed": ("qrels", jsonl(qrels_table())),
    "parquet": ("qrels.parquet", parquet(qrels_table())),
    "parquet sniffed": ("qrels.bin", parquet(qrels_table())),
}

RUN_FILES: dict[str, tuple[str, bytes]] = {
    "space": ("run.txt", join(run_lines())),
    "tab": ("run.txt", join(run_lines("\t"))),
    "multiple spaces": ("run", join([line.replace(" ", "  ") + "  " for line in run_lines()])),
    "crlf": ("run.txt", join(run_lines(), "\r\n")),
    "no trailing newline": ("run.txt", join(run_lines(), trailing=False)),
    "bom": ("run.txt", b"\xef\xbb\xbf" + join(run_lines())),
    "gzip": ("run.txt.gz", gzip.compress(join(run_lines()))),
    "csv": ("run.csv", delimited(run_table(), ",")),
    "csv aliases": ("run.csv", delimited(run_table(("qid", "docid", "score")), ",")),
    "tsv": ("run.tsv", delimited(run_table(("query-id", "corpus-id", "score")), "\t")),
    "jsonl": ("run.jsonl", jsonl(run_table())),
    "parquet": ("run.parquet", parquet(run_table())),
}


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def content(loaded: Qrels | Run) -> list[tuple[str, str, float]]:
    return sorted(loaded)


@pytest.mark.parametrize("kind", list(QRELS_FILES))
def test_qrels_files_load_the_same(tmp_path: Path, kind: str) -> None:
    name, data = QRELS_FILES[kind]
    qrels = read_qrels(write(tmp_path, name, data))
    assert content(qrels) == content(reference_qrels())
    assert qrels.to_dict() == reference_qrels().to_dict()
    assert set(qrels.query_ids) == {"007", "7", "q3"}


@pytest.mark.parametrize("kind", list(RUN_FILES))
def test_run_files_load_the_same(tmp_path: Path, kind: str) -> None:
    name, data = RUN_FILES[kind]
    run = read_run(write(tmp_path, name, data))
    reference = reference_run()
    assert content(run) == content(reference)
    for q in reference.query_ids:
        assert run.ranking(q) == reference.ranking(q)


@pytest.mark.parametrize("qrels_kind", list(QRELS_FILES))
@pytest.mark.parametrize("run_kind", ["space", "tab", "csv", "parquet"])
def test_every_file_kind_gives_the_same_numbers(
    tmp_path: Path, qrels_kind: str, run_kind: str
) -> None:
    expected = evaluate(reference_qrels(), reference_run(), METRICS)
    q_name, q_data = QRELS_FILES[qrels_kind]
    r_name, r_data = RUN_FILES[run_kind]
    result = evaluate(write(tmp_path, q_name, q_data), write(tmp_path, r_name, r_data), METRICS)
    assert dict(result.metrics) == dict(expected.metrics)
    assert result.per_query.to_dict() == expected.per_query.to_dict()


IN_MEMORY_QRELS: dict[str, Callable[[], Qrels]] = {
    "dict": lambda: Qrels.from_dict(
        {
            "007": {"d1": 2, "d2": 0, "d9": 1},
            "7": {"d1": 1, "d3": 3, "010": -1},
            "q3": {"dé": 1, "D-9": 2},
        }
    ),
    "arrow": lambda: as_qrels(qrels_table()),
    "arrow chunked": lambda: as_qrels(
        pa.concat_tables([qrels_table().slice(0, 3), qrels_table().slice(3)])
    ),
    "arrow large_string": lambda: as_qrels(
        qrels_table().cast(
            pa.schema(
                [
                    ("query_id", pa.large_string()),
                    ("doc_id", pa.large_string()),
                    ("relevance", pa.int8()),
                ]
            )
        )
    ),
    "pandas": lambda: as_qrels(qrels_table().to_pandas()),
    "pandas aliases": lambda: as_qrels(qrels_table(("qid", "docid", "label")).to_pandas()),
    "polars": lambda: as_qrels(pl.from_arrow(qrels_table())),
    "rankmeter.as_qrels(dataframe)": lambda: rankmeter.as_qrels(qrels_table().to_pandas()),
}

IN_MEMORY_RUNS: dict[str, Callable[[], Run]] = {
    "dict": lambda: Run.from_dict(
        {q: dict(docs) for q, docs in _group(RUN_ROWS).items()}, name=TAG
    ),
    "arrow": lambda: as_run(run_table(), name=TAG),
    "pandas": lambda: as_run(run_table().to_pandas(), name=TAG),
    "polars": lambda: as_run(pl.from_arrow(run_table()), name=TAG),
    "rankmeter.as_run(polars)": lambda: rankmeter.as_run(pl.from_arrow(run_table()), name=TAG),
}


@pytest.mark.parametrize("kind", list(IN_MEMORY_QRELS))
def test_in_memory_qrels_load_the_same(kind: str) -> None:
    qrels = IN_MEMORY_QRELS[kind]()
    assert content(qrels) == content(reference_qrels())
    result = evaluate(qrels, reference_run(), METRICS)
    expected = evaluate(reference_qrels(), reference_run(), METRICS)
    assert result.per_query.to_dict() == expected.per_query.to_dict()


@pytest.mark.parametrize("kind", list(IN_MEMORY_RUNS))
def test_in_memory_runs_load_the_same(kind: str) -> None:
    run = IN_MEMORY_RUNS[kind]()
    assert run.name == TAG
    assert content(run) == content(reference_run())
    result = evaluate(reference_qrels(), run, METRICS)
    expected = evaluate(reference_qrels(), reference_run(), METRICS)
    assert result.per_query.to_dict() == expected.per_query.to_dict()


def test_integer_ids_stay_strings_in_every_kind(tmp_path: Path) -> None:
    frame = pd.DataFrame({"query_id": ["007", "7"], "doc_id": ["01", "1"], "score": [1.0, 2.0]})
    inputs: list[Any] = [
        as_run(frame),
        as_run(pl.from_pandas(frame)),
        read_run(write(tmp_path, "r.csv", b"query_id,doc_id,score\n007,01,1\n7,1,2\n")),
        read_run(write(tmp_path, "r.tsv", b"qid\tdocid\tscore\n007\t01\t1\n7\t1\t2\n")),
        read_run(write(tmp_path, "r.txt", b"007 Q0 01 1 1 t\n7 Q0 1 1 2 t\n")),
        read_run(
            write(
                tmp_path,
                "r.jsonl",
                b'{"qid":"007","docid":"01","score":1}\n{"qid":"7","docid":"1","score":2}\n',
            )
        ),
    ]
    for run in inputs:
        assert run.to_dict() == {"007": {"01": 1.0}, "7": {"1": 2.0}}, run


def test_json_integer_ids_become_strings(tmp_path: Path) -> None:
    path = write(tmp_path, "q.jsonl", b'{"query_id": 7, "doc_id": 12, "relevance": 1}\n')
    assert read_qrels(path).to_dict() == {"7": {"12": 1}}


def test_run_name_comes_from_the_tag_then_a_column_then_the_file_name(tmp_path: Path) -> None:
    assert read_run(write(tmp_path, "a.txt", b"1 Q0 d 1 2 my-tag\r\n")).name == "my-tag"
    assert read_run(write(tmp_path, "b.txt", b"1 Q0 d 1 2 x\n"), name="given").name == "given"
    named = b"query_id,doc_id,score,run\n1,d,2,splade\n"
    assert read_run(write(tmp_path, "c.csv", named)).name == "splade"
    assert read_run(write(tmp_path, "bm25.run.csv", b"qid,docid,score\n1,d,2\n")).name == "bm25"
    assert (
        read_run(
            write(tmp_path, "dense.tsv.gz", gzip.compress(b"qid\tdocid\tscore\n1\td\t2\n"))
        ).name
        == "dense"
    )


def test_stdin_is_read_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    data = gzip.compress(join(run_lines("\t"), "\r\n"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = read_run("-")
    assert content(run) == content(reference_run())
    assert run.source == "<stdin>"


def test_format_can_be_forced(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.csv", join(qrels_lines()))
    assert content(read_qrels(path, format="trec")) == content(reference_qrels())
    path = write(tmp_path, "qrels.txt", delimited(qrels_table(), "\t"))
    assert content(read_qrels(path, format="TSV")) == content(reference_qrels())


def test_written_runs_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "out.run"
    write_trec_run(reference_run(), path)
    again = read_run(path)
    assert again.name == TAG
    assert content(again) == content(reference_run())
    assert [p.name for p in tmp_path.iterdir()] == ["out.run"]


def test_fast_and_exact_readers_agree_on_ids(tmp_path: Path) -> None:
    # A tab inside the line used to end up inside a doc id on the fast (single-space) path, while
    # the exact reader split on it: the same line meant different things depending on the rest.
    alone = write(tmp_path, "a.txt", b"1 0 d1\t 1\n")
    assert read_qrels(alone).to_dict() == {"1": {"d1": 1}}
    rest_fast = write(tmp_path, "b.txt", b"1 0 d\x0b2 1\n")
    with pytest.raises(rankmeter.FormatError, match=r"b\.txt:1: expected 4 columns"):
        read_qrels(rest_fast)


finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(scores=st.lists(finite, min_size=1, max_size=30))
def test_scores_round_trip_exactly_on_both_paths(tmp_path: Path, scores: list[float]) -> None:
    lines = [f"q Q0 d{i} {i} {s!r} t" for i, s in enumerate(scores)]
    fast = read_run(write(tmp_path, "fast.txt", join(lines)))
    exact = read_run(write(tmp_path, "exact.txt", join([*lines, "q\tQ0\tlast\t0\t0\tt"])))
    got_fast = fast.to_dict()["q"]
    got_exact = exact.to_dict()["q"]
    for i, s in enumerate(scores):
        assert got_fast[f"d{i}"] == s
        assert got_exact[f"d{i}"] == s


def test_cranfield_trec_and_beir_layouts_load_the_same(cranfield: Path) -> None:
    trec = read_qrels(cranfield / "qrels.trec")
    beir = read_qrels(cranfield / "qrels" / "test.tsv")
    assert (trec.n_queries, len(trec)) == (225, 1837)
    assert content(trec) == content(beir)
    assert trec.to_dict() == beir.to_dict()
    # A run that ranks each query's judged docs by doc id, scored the same from both qrels.
    run = Run.from_dict(
        {q: {d: float(i) for i, d in enumerate(sorted(docs))} for q, docs in trec.to_dict().items()}
    )
    a = evaluate(trec, run, METRICS)
    b = evaluate(beir, run, METRICS)
    assert dict(a.metrics) == dict(b.metrics)
    assert a.n_queries == 225


def test_cranfield_grades(cranfield: Path) -> None:
    grades = [g for _, _, g in read_qrels(cranfield / "qrels" / "test.tsv")]
    assert {g: grades.count(g) for g in set(grades)} == {0: 225, 1: 363, 2: 734, 3: 387, 4: 128}
