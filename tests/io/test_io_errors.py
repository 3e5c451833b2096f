"""Every reader error names the file, the line and the offending text."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from _malformed import MALFORMED

import rankmeter
from rankmeter import FormatError, Qrels, Run, evaluate
from rankmeter.io import as_qrels, as_run, read_qrels, read_run, write_trec_run
from rankmeter.io.annotations import read_queries, read_segments
from rankmeter.io.beir import load_beir
from rankmeter.io.stream import iter_run_chunks

# (id, "qrels" | "run", file name, bytes, regex the message must match after "<path>")
FILE_ERRORS = [
    (
        "run duplicate doc",
        "run",
        "run.txt",
        b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.5 t\nq1 Q0 d1 3 1.0 t\n",
        r":3: duplicate result for query 'q1', doc 'd1' .*remove the repeated line.*: 'q1 Q0 d1 3 1.0 t'",
    ),
    (
        "run duplicate doc, exact reader",
        "run",
        "run.txt",
        b"q1\tQ0\td1\t1\t2.0\tt\nq2 Q0 d1 1 1 t\nq1  Q0 d1 3 1.0 t\n",
        r":3: duplicate result for query 'q1', doc 'd1'.*: 'q1  Q0 d1 3 1.0 t'",
    ),
    (
        "qrels duplicate doc",
        "qrels",
        "qrels.txt",
        b"1 0 a 1\n1 0 b 0\n2 0 a 1\n1 0 a 2\n",
        r":4: duplicate judgment for query '1', doc 'a' .*: '1 0 a 2'",
    ),
    (
        "qrels too few columns",
        "qrels",
        "qrels.txt",
        b"1 0 a 1\n1 0 b\n",
        r":2: expected 4 columns \(qid iter docid grade\) in a TREC qrels file, found 3: '1 0 b'",
    ),
    (
        # Fields after the tag are ignored, as trec_eval does; one missing is an error.
        "run too few columns",
        "run",
        "run.txt",
        b"1 Q0 a 1 2.0 t extra\n1 Q0 b 2 1.0\n",
        r":2: expected 6 columns \(qid Q0 docid rank score tag\) in a TREC run file, found 5: "
        r"'1 Q0 b 2 1.0'",
    ),
    (
        "qrels too many columns",
        "qrels",
        "qrels.txt",
        b"# a comment\n1 0 a 1\n1 0 b 1 extra\n",
        r":3: expected 4 columns \(qid iter docid grade\) in a TREC qrels file, found 5: "
        r"'1 0 b 1 extra'",
    ),
    (
        "run given as qrels",
        "qrels",
        "qrels.txt",
        b"1 Q0 a 1 2.0 t\n",
        r":1: expected 4 columns .* found 6",
    ),
    (
        "non-numeric score",
        "run",
        "run.txt",
        b"1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n",
        r":2: score must be a number, not 'high': '1 Q0 b 2 high t'",
    ),
    (
        "non-numeric grade",
        "qrels",
        "qrels.txt",
        b"1 0 a 1\r\n1 0 b yes\r\n",
        r":2: grade must be a number, not 'yes': '1 0 b yes'",
    ),
    (
        "hexadecimal score",
        "run",
        "run.txt",
        b"1 Q0 a 1 0x1p3 t\n",
        r":1: score must be a number, not '0x1p3'",
    ),
    (
        "NaN score",
        "run",
        "run.txt",
        b"1 Q0 a 1 2.0 t\n1 Q0 b 2 NaN t\n",
        r":2: score must be a number \(NaN is not allowed\): '1 Q0 b 2 NaN t'",
    ),
    (
        "inf grade",
        "qrels",
        "qrels.txt",
        b"1 0 a 1\n1 0 b inf\n",
        r":2: relevance grade must be a finite number: '1 0 b inf'",
    ),
    (
        "grade overflowing to inf",
        "qrels",
        "qrels.txt",
        b"1 0 a 1e309\n",
        r":1: relevance grade must be a finite number: '1 0 a 1e309'",
    ),
    ("empty file", "qrels", "qrels.txt", b"", r": file is empty$"),
    ("blank file", "run", "run.txt", b" \r\n\t\n\n", r": file is empty$"),
    ("empty gzip", "run", "run.txt.gz", gzip.compress(b""), r": file is empty$"),
    (
        "invalid UTF-8 doc id",
        "qrels",
        "qrels.txt",
        b"1 0 a 1\n1 0 b\xff\xfe 1\n",
        ":2: docid is not valid UTF-8: '1 0 b\ufffd\ufffd 1'",
    ),
    (
        "damaged gzip",
        "qrels",
        "qrels.txt.gz",
        gzip.compress(b"1 0 a 1\n" * 200)[:25],
        r": damaged gzip data",
    ),
    (
        "CSV without a relevance column",
        "qrels",
        "qrels.csv",
        b"query_id,doc_id\n1,a\n",
        r": no relevance column: found columns \['query_id', 'doc_id'\], expected one of "
        r"\['relevance',",
    ),
    (
        "CSV without a score column",
        "run",
        "run.csv",
        b"qid,docid,rank\n1,a,1\n",
        r": no score column: found columns \['qid', 'docid', 'rank'\]",
    ),
    (
        "CSV bad number",
        "qrels",
        "qrels.csv",
        b"query_id,doc_id,relevance\n1,a,1\n\n1,b,high\n",
        r":4: column 'relevance' must hold numbers: '1,b,high'",
    ),
    (
        "CSV missing number",
        "run",
        "run.csv",
        b"query_id,doc_id,score\n1,a,1\n1,b,\n",
        r":3: column 'score' must hold numbers: '1,b,'",
    ),
    (
        "CSV NaN score",
        "run",
        "run.csv",
        b"query_id,doc_id,score\n1,a,1\n1,b,nan\n",
        r":3: score must be a number \(NaN is not allowed\): '1,b,nan'",
    ),
    (
        "CSV wrong field count",
        "qrels",
        "qrels.csv",
        b"query_id,doc_id,relevance\n1,a,1\n1,b,1,9\n",
        r":3: expected 3 CSV fields as in the header, found 4: '1,b,1,9'",
    ),
    (
        "TSV empty id",
        "qrels",
        "qrels.tsv",
        b"query-id\tcorpus-id\tscore\n1\ta\t1\n\tb\t1\n",
        r":3: missing query id: '\\tb\\t1'",
    ),
    (
        "CSV header only",
        "qrels",
        "qrels.csv",
        b"query_id,doc_id,relevance\r\n",
        r": no judgments: qrels must hold at least one line",
    ),
    (
        "CSV repeated header name",
        "run",
        "run.csv",
        b"qid,qid,score\n1,2,3\n",
        r":1: CSV header has empty or repeated names: 'qid,qid,score'",
    ),
    (
        "CSV qrels without a header",
        "qrels",
        "qrels.csv",
        b"q1,d1,1\nq1,d2,0\n",
        r":1: the first line looks like data, not a header: start the file with the header "
        r"line query_id,doc_id,relevance: 'q1,d1,1'",
    ),
    (
        "CSV run without a header, TREC's six columns",
        "run",
        "run.csv",
        b"q1,Q0,d1,1,2.0,bm25\nq1,Q0,d2,2,1.0,bm25\n",
        r":1: the first line looks like data, not a header: start the file with the header "
        r"line query_id,Q0,doc_id,rank,score,run: 'q1,Q0,d1,1,2.0,bm25'",
    ),
    (
        "CSV qrels without a header, TREC's four columns (a repeated value)",
        "qrels",
        "qrels.csv",
        b"1,0,d1,0\n",
        r":1: the first line looks like data, not a header: start the file with the header "
        r"line query_id,iteration,doc_id,relevance: '1,0,d1,0'",
    ),
    (
        "TSV run without a header",
        "run",
        "run.tsv",
        b"q1\td1\t2.5\n",
        r":1: the first line looks like data, not a header: start the file with the header "
        r"line query_id, doc_id, score \(separated by tabs\): '.*'",
    ),
    (
        "CSV duplicate",
        "run",
        "run.csv",
        b"qid,docid,score\n1,a,1\n1,a,2\n",
        r":3: duplicate result for query '1', doc 'a'.*: '1,a,2'",
    ),
    (
        "bad JSONL line",
        "qrels",
        "qrels.jsonl",
        b'{"query_id": "1", "doc_id": "a", "relevance": 1}\n\n{"query_id": "1", "doc_id": \n',
        r":3: not valid JSON \(Expecting value\): '\{\"query_id\": \"1\", \"doc_id\": '",
    ),
    (
        "JSONL line not an object",
        "run",
        "run.jsonl",
        b'{"qid": "1", "docid": "a", "score": 1}\n[1, "a", 2]\n',
        r":2: expected a JSON object per line: '\[1, \"a\", 2\]'",
    ),
    (
        "JSONL missing key",
        "run",
        "run.jsonl",
        b'{"qid": "1", "docid": "a", "score": 1}\n{"qid": "1", "docid": "b"}\n',
        r":2: missing key 'score'",
    ),
    (
        "JSONL boolean grade",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "1", "docid": "a", "rel": 1}\n{"qid": "1", "docid": "b", "rel": true}\n',
        r":2: key 'rel' must be a string or a number, not true",
    ),
    (
        "JSONL NaN grade",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "1", "docid": "a", "rel": NaN}\n',
        r":1: relevance grade must be a finite number",
    ),
    (
        "JSONL integer grade beyond a double",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "1", "docid": "a", "rel": 1' + b"0" * 400 + b"}\n",
        r":1: key 'rel' holds a number too large for a double",
    ),
    ("not Parquet", "run", "run.parquet", b"PAR1 but not really", r": not a readable Parquet file"),
]


@pytest.mark.parametrize(
    ("kind", "name", "data", "pattern"),
    [case[1:] for case in FILE_ERRORS],
    ids=[case[0] for case in FILE_ERRORS],
)
def test_file_errors_name_path_line_and_text(
    tmp_path: Path, kind: str, name: str, data: bytes, pattern: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    reader = read_qrels if kind == "qrels" else read_run
    with pytest.raises(FormatError, match="^" + _re_path(path) + pattern) as caught:
        reader(path)
    error = caught.value
    assert isinstance(error, rankmeter.RankmeterError)
    assert isinstance(error, ValueError)
    assert error.path == str(path)
    assert "\n" not in str(error)
    if error.line is not None:
        assert str(error).startswith(f"{path}:{error.line}: ")
        assert error.text is not None


def _read_malformed(reader: str, path: Path) -> object:
    if reader == "beir":
        folder = path.parent.parent if path.parent.name == "qrels" else path.parent
        good = {
            "corpus.jsonl": b'{"_id": "d1", "text": "x"}\n',
            "queries.jsonl": b'{"_id": "1", "text": "q"}\n',
            "qrels/test.tsv": b"query-id\tcorpus-id\tscore\n1\td1\t1\n",
        }
        for name, data in good.items():
            (folder / name).parent.mkdir(exist_ok=True)
            if not (folder / name).exists():
                (folder / name).write_bytes(data)
        return load_beir(folder)
    readers = {
        "run": read_run,
        "qrels": read_qrels,
        "queries": read_queries,
        "segments": read_segments,
        "stream": lambda p: list(iter_run_chunks(p)),
    }
    return readers[reader](path)


@pytest.mark.parametrize(
    ("reader", "name", "data", "pattern", "line", "text"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_every_reader_names_the_line_and_its_text(
    tmp_path: Path, reader: str, name: str, data: bytes, pattern: str, line: int, text: str
) -> None:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    with pytest.raises(FormatError, match="^" + _re_path(path) + f":{line}: " + pattern) as caught:
        _read_malformed(reader, path)
    error = caught.value
    assert (error.path, error.line, error.text) == (str(path), line, text)
    assert "\n" not in str(error)


def _re_path(path: Path) -> str:
    import re

    return re.escape(str(path))


def test_errors_are_found_through_the_api_as_well(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(b"1 0 a 1\n")
    run = tmp_path / "r.txt"
    run.write_bytes(b"1 Q0 a 1 x t\n")
    with pytest.raises(FormatError, match=r"r\.txt:1: score must be a number, not 'x'"):
        evaluate(qrels, run)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"nope\.txt: no such file$"):
        read_qrels(tmp_path / "nope.txt")
    with pytest.raises(FormatError, match=r": is a directory, expected a file$"):
        read_run(tmp_path)


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(b"1 0 a 1\n")
    with pytest.raises(FormatError, match=r"q\.txt: unknown format 'xml'; use one of trec, csv"):
        read_qrels(path, format="xml")


def test_unknown_tie_policy(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(b"1 Q0 a 1 1 t\n")
    with pytest.raises(
        rankmeter.PolicyError,
        match=r"^ties='random' must be one of 'trec_eval', 'input' \(how equal",
    ):
        read_run(path, ties="random")


def test_no_common_queries() -> None:
    with pytest.raises(rankmeter.RankmeterError, match=r"has no query in common with the qrels"):
        evaluate({"1": {"a": 1}}, {"2": {"a": 1.0}})


# -- in-memory inputs -----------------------------------------------------------------------------
def test_dict_errors() -> None:
    with pytest.raises(FormatError, match=r"<dict>: query '1', doc 'a': missing relevance grade"):
        Qrels.from_dict({"1": {"a": None}})  # type: ignore[dict-item]
    with pytest.raises(
        FormatError, match=r"doc 'a': relevance grade must be a number, not a boolean"
    ):
        Qrels.from_dict({"1": {"a": True}})
    with pytest.raises(FormatError, match=r"doc 'b': score is too large for a double"):
        Run.from_dict({"1": {"a": 1.0, "b": 10**400}})
    with pytest.raises(FormatError, match=r"score must be a number \(NaN is not allowed\)"):
        Run.from_dict({"1": {"a": float("nan")}})
    with pytest.raises(
        FormatError, match=r"<dict>: query '1': expected a dict \{doc: score\}, got list"
    ):
        Run.from_dict({"1": ["a", "b"]})  # type: ignore[dict-item]
    with pytest.raises(FormatError, match=r"<dict>: no results: a run must hold at least one line"):
        Run.from_dict({"1": {}})
    with pytest.raises(FormatError, match=r"doc id is not valid Unicode \(it holds a lone surr"):
        Run.from_dict({"1": {"ok": 1.0, "\udcff": 2.0}})
    with pytest.raises(FormatError, match=r"query id must be a string or an integer, not float"):
        Qrels.from_dict({1.5: {"a": 1}})  # type: ignore[dict-item]


def test_table_errors() -> None:
    with pytest.raises(FormatError, match=r"<pandas DataFrame>: cannot convert to columns"):
        as_qrels(pd.DataFrame([["1", "a", 1]], columns=["qid", "qid", "rel"]))
    repeated = pa.Table.from_arrays(
        [pa.array(["1"]), pa.array(["2"]), pa.array(["a"]), pa.array([1.0])],
        names=["qid", "qid", "docid", "score"],
    )
    with pytest.raises(FormatError, match=r"<arrow table>: column 'qid' appears more than once"):
        as_run(repeated)
    with pytest.raises(FormatError, match=r"<pandas DataFrame>:2: missing query id"):
        as_qrels(pd.DataFrame({"qid": ["1", None], "docid": ["a", "b"], "rel": [1, 0]}))
    with pytest.raises(FormatError, match=r"score column must be numeric, not string"):
        as_run(pa.table({"qid": ["1"], "docid": ["a"], "score": ["high"]}))
    with pytest.raises(FormatError, match=r"<qrels>: cannot use a int as qrels"):
        evaluate(3, {"1": {"a": 1.0}})


def test_writing_to_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    run = Run.from_dict({"1": {"a": 1.0}})
    with pytest.raises(FormatError, match=r"missing/out\.run: cannot write: No such file"):
        write_trec_run(run, tmp_path / "missing" / "out.run")
    with pytest.raises(FormatError, match=r": is a directory; give a file name"):
        write_trec_run(run, tmp_path)
    assert os.listdir(tmp_path) == []


def test_metric_errors_through_the_api() -> None:
    judged, ranked = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    with pytest.raises(
        rankmeter.MetricError, match=r"unknown metric 'nDGC@10'; did you mean nDCG@10\?"
    ):
        evaluate(judged, ranked, ["nDGC@10"])
    with pytest.raises(
        rankmeter.MetricError, match=r"'P@0': the cutoff must be a positive integer"
    ):
        evaluate(judged, ranked, ["P@0"])


def test_an_integer_beyond_64_bits_in_a_dataframe_is_named() -> None:
    # Found by test_io_robustness's fuzzing: Arrow raised a bare OverflowError.
    frame = pd.DataFrame({"query_id": ["1"], "doc_id": ["d0"], "score": [1.0]})
    frame["query_id"] = pd.Series([[2**63]], dtype=object)
    with pytest.raises(FormatError, match=r"^<pandas DataFrame>: cannot convert to columns: "):
        as_run(frame)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "queries.tsv",
            b'query_id\ttext\nq01\t"senior" engineer wanted\n',
            "senior engineer wanted",
        ),
        ("queries.csv", b'query_id,text\nq01,"senior" engineer wanted\n', "senior engineer wanted"),
        ("queries.tsv", b'query_id\ttext\nq01\twhat does "mmr" mean\n', 'what does "mmr" mean'),
    ],
)
def test_text_after_a_closing_quote_is_read_as_every_csv_reader_reads_it(
    tmp_path: Path, name: str, content: bytes, expected: str
) -> None:
    # Only a quote that never closes is refused (it would swallow the lines after it); a value
    # that goes on after its closing quote was read this way before issue 9 and still is.
    from rankmeter.io.annotations import read_queries

    path = tmp_path / name
    path.write_bytes(content)
    assert read_queries(path) == {"q01": expected}


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("qrels", "query_id\tdoc_id\trelevance\nq1\td1\t1\nq2\td2\t2\n"),
        ("run", "query_id\tdoc_id\tscore\nq1\td1\t2.0\nq2\td2\t1.5\n"),
    ],
)
def test_tab_separated_file_named_csv_is_read_as_tsv(tmp_path: Path, kind: str, text: str) -> None:
    named_csv = tmp_path / f"{kind}.csv"
    named_csv.write_text(text)
    named_tsv = tmp_path / f"{kind}.tsv"
    named_tsv.write_text(text)
    reader = read_qrels if kind == "qrels" else read_run
    assert reader(named_csv).to_dict() == reader(named_tsv).to_dict()


def test_a_csv_whose_header_holds_commas_and_tabs_stays_csv(tmp_path: Path) -> None:
    # A tab inside a CSV name is odd but not a sign of TSV when commas separate the names.
    path = tmp_path / "run.csv"
    path.write_text("query_id,doc_id,score\tx\nq1,d1,2\n")
    with pytest.raises(FormatError, match="no score column"):
        read_run(path)
