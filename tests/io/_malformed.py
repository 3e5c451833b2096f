"""Hypothesis strategies for damaged TREC files, and a plain reference reader to judge them.

The reference reader is the file format written out as simply as possible: lines split on
``\\n``, ``\\r\\n`` or ``\\r``; fields split on ASCII whitespace; blank lines skipped; comments
as trec_eval reads them (qrels: a line starting with ``#``; runs: a line whose first non-blank
character is ``#``); a qrels line has four fields, a run line at least six (those after the tag
are ignored); the run's tag is the sixth field of its first data line; ids must be UTF-8; the
number follows the grammar ``[+-]? (digits [. digits] | . digits) ([eE] [+-]? digits)? | inf |
infinity | nan``; a run score may be infinite but not NaN; a grade must be finite; a query-doc
pair may appear once. It says either "bad" or what the file holds.
"""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import strategies as st

QUERY_IDS = ["1", "2", "007", "7", "q1", "dé", "日本", "a\u00a0b", "\u200fx", "\u202eq", "d\x00"]
DOC_IDS = [
    "d1",
    "D-9",
    "010",
    "10",
    "é",
    "\u200f",
    "x\u00a0y",
    "\U0001f600",
    "\ufeffd",
    "CR#93E-1860",
]
WEIRD_NUMBERS = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e308",
    "-1e308",
    "1e309",
    "-1e400",
    "4.9e-324",
    "1e-400",
    "-0",
    ".5",
    "1.",
    "1e",
    "abc",
    "0x10",
    "1_0",
    "+",
    "\u22121",
    "１",
    "",
]
STRAY = [
    b"\xff",
    b"\x00",
    b"\x80",
    b"\xc3",
    b"\xe2\x80",
    b"\t",
    b"\r",
    b"\n",
    b" ",
    b"\x0b",
    b"\x0c",
    b"\xc2\xa0",
    "\u200f".encode(),
    "\u202e".encode(),
    b"\x1f\x8b",
    b"\xef\xbb\xbf",
    b"{",
    b",",
]
BOM = b"\xef\xbb\xbf"

finite_scores = st.floats(allow_nan=False, allow_infinity=False).map(repr)
scores = st.one_of(finite_scores, st.sampled_from(["1", "0.5", "2", "2", "-3"]))
grades = st.sampled_from(["0", "1", "2", "3", "-1", "1.5"])


@st.composite
def mutated(draw: st.DrawFn, line: bytes, intact: int = 6) -> bytes:
    """The line, or (one time in ``intact + 8``) the line damaged in one of six ways or
    commented out (a TREC comment, which a CSV or JSON reader reads as text)."""
    choice = draw(st.integers(0, intact + 7)) - intact + 6
    if choice <= 5:
        return line
    if choice == 12:
        return b"#" + line  # as many fields as a data line: skipped, never read as data
    if choice == 13:
        return draw(st.sampled_from([b" ", b"\t", b" \t "])) + b"# " + line
    at = draw(st.integers(0, len(line)))
    if choice == 6:
        return line[:at]
    if choice == 7:
        return line[:at] + draw(st.sampled_from(STRAY)) + line[at:]
    if choice == 8:
        return draw(st.sampled_from([b"", b"  ", b" \t ", b"\x0b", b"\r"]))
    if choice == 9:
        return line[:at] + b"x" * draw(st.sampled_from([5_000, 70_000])) + line[at:]
    if choice == 10:
        return b" " + line.split(b" ", 1)[-1]  # an empty first field
    return line + b" extra"


@st.composite
def trec_file(draw: st.DrawFn, kind: str) -> bytes:
    lines = []
    for i in range(draw(st.integers(0, 10))):
        q = draw(st.sampled_from(QUERY_IDS[:4]) | st.sampled_from(QUERY_IDS))
        d = draw(st.sampled_from(DOC_IDS)) if draw(st.integers(0, 5)) == 0 else f"d{i}"
        weird = draw(st.integers(0, 24)) == 0
        if kind == "qrels":
            value = draw(st.sampled_from(WEIRD_NUMBERS) if weird else grades)
            fields = [q, "0", d, value]
        else:
            value = draw(st.sampled_from(WEIRD_NUMBERS) if weird else scores)
            fields = [q, "Q0", d, str(i + 1), value, draw(st.sampled_from(["tag", "run-1"]))]
        sep = draw(st.sampled_from([" ", " ", "\t", "  ", " \t"]))
        lines.append(draw(mutated(sep.join(fields).encode("utf-8"), intact=60)))
    eol = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    data = eol.join(lines) + draw(st.sampled_from([eol, b""]))
    if draw(st.integers(0, 9)) == 0:
        data = BOM + data
    return data


_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)


class Bad(Exception):
    """The reference reader refuses the file."""


def reference_read(data: bytes, kind: str) -> tuple[dict[str, dict[str, float]], str | None]:
    """``({query: {doc: value}}, run tag)`` or :class:`Bad`."""
    if data.startswith(b"\x1f\x8b"):
        raise Bad("gzip")
    if data.startswith(BOM):
        data = data[len(BOM) :]
    width = 4 if kind == "qrels" else 6
    value_at = 3 if kind == "qrels" else 4
    out: dict[str, dict[str, float]] = {}
    tag = None
    for line in data.splitlines():
        fields = line.split()
        if not fields:
            continue
        if line.startswith(b"#") or (kind == "run" and fields[0].startswith(b"#")):
            continue  # a comment
        if len(fields) < width or (kind == "qrels" and len(fields) > width):
            raise Bad("columns")
        token = fields[value_at].decode("ascii", errors="replace")
        if not _NUMBER.fullmatch(token):
            raise Bad("number")
        try:
            q = fields[0].decode("utf-8")
            d = fields[2].decode("utf-8")
            if kind == "run":
                # The tag only names the run (trec_eval ignores it): bytes that are not UTF-8
                # show as U+FFFD, as rankmeter.io.trec.run_tag reads it, never an error.
                this_tag = fields[5].decode("utf-8", errors="replace")
                tag = this_tag if tag is None else tag
        except UnicodeDecodeError:
            raise Bad("utf-8") from None
        value = float(token)
        if math.isnan(value) or (kind == "qrels" and math.isinf(value)):
            raise Bad("value")
        if d in out.setdefault(q, {}):
            raise Bad("duplicate")
        out[q][d] = value
    if not out:
        raise Bad("empty")
    return out, tag


# -- one set of checks for every fuzz test of damaged files (the readers, evaluate, the CLI) ------

#: The metrics every fuzz test evaluates: sums, means, cutoffs, the ideal ranking, Bpref.
METRICS = ["P@5", "nDCG@10", "AP", "RR", "NumRet", "Bpref", "R@100"]


def assert_one_line(message: str) -> None:
    """An error is one clear line: something is said, and no line break of any kind (a file's
    text quoted in it shows its controls as visible escapes)."""
    assert message.strip(), "an empty error message"
    assert len(message.splitlines()) == 1, message


def expected_evaluation(
    qrels_data: bytes, run_data: bytes, metrics: list[str], *, per_query: bool = False
) -> dict[str, Any] | None:
    """What evaluating the two files must give, as JSON carries it (``EvalResult.to_dict``):
    the reference reader's reading evaluated from plain dicts; None where the files must be
    refused (damaged, read as JSON lines by format detection, or without a common query)."""
    import json

    from rankmeter import Qrels, Run, evaluate

    try:
        judged, _ = reference_read(qrels_data, "qrels")
        results, tag = reference_read(run_data, "run")
    except Bad:
        return None
    if sniffed_as_json(qrels_data) or sniffed_as_json(run_data):
        return None
    if not set(judged) & set(results):
        return None
    result = evaluate(Qrels.from_dict(judged), Run.from_dict(results, name=tag or "run"), metrics)
    payload: dict[str, Any] = json.loads(json.dumps(result.to_dict(per_query=per_query)))
    return payload


def sniffed_as_json(data: bytes) -> bool:
    """Format detection reads a first line starting with ``{`` as JSON lines (documented);
    blank lines and TREC comments before it do not count."""
    data = data.removeprefix(BOM)
    lines = data[:65536].splitlines()
    first = next((x.strip() for x in lines if x.strip() and not x.strip().startswith(b"#")), b"")
    return first.startswith(b"{")


def same(a: Any, b: Any) -> bool:
    """Equality of JSON-like values where NaN equals NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b) and type(a) is type(b)


# -- a table of malformed files, every reader ---------------------------------------------------
# (id, reader, file name, bytes, regex for the message after "<path>:<line>: ", the line, the
# offending text). Readers: run, qrels, queries, segments, stream (iter_run_chunks), and beir
# (the file is the folder's corpus.jsonl, queries.jsonl or qrels/test.tsv; the others are good).
# Found by trying to break each reader as a hostile user would (issue 9, item 3.14).
MALFORMED: list[tuple[str, str, str, bytes, str, int, str]] = [
    # CSV and TSV: quotes
    ("csv unbalanced quote", "run", "run.csv", b'query_id,doc_id,score\n1,d1,1.0\n1,"d2,0.5\n2,d3,0.1\n',
     r"unbalanced quote: a quoted CSV value must end on its own line", 3, '1,"d2,0.5'),
    ("csv unbalanced quote, last line", "run", "run.csv", b'query_id,doc_id,score\n1,d1,1.0\n1,d2,"0.5\n',
     r"unbalanced quote", 3, '1,d2,"0.5'),
    ("csv unbalanced quote, no line end", "qrels", "qrels.csv", b'query_id,doc_id,relevance\n1,d1,1\n"1,d2,1',
     r"unbalanced quote", 3, '"1,d2,1'),
    ("csv value over two lines", "run", "run.csv", b'query_id,doc_id,score\n1,d1,1.0\n1,"d\n2",0.5\n',
     r"unbalanced quote", 3, '1,"d'),
    ("csv unbalanced quote, crlf, after a blank line", "run", "run.csv",
     b'query_id,doc_id,score\r\n\r\n1,d1,1.0\r\n1,"d2,0.5\r\n', r"unbalanced quote", 4, '1,"d2,0.5'),
    ("csv fields counted with quotes", "run", "run.csv", b'query_id,doc_id,score\n1,"a,b",1.0\n1,d2\n',
     r"expected 3 CSV fields as in the header, found 2", 3, "1,d2"),
    ("csv score not a number", "run", "run.csv", b'query_id,doc_id,score\n1,d1,1.0\n\n1,d2,high\n',
     r"column 'score' must hold numbers", 4, "1,d2,high"),
    ("csv bad UTF-8", "qrels", "qrels.csv", b"query_id,doc_id,relevance\n1,d\xff,1\n",
     r"not valid UTF-8", 2, "1,d\ufffd,1"),
    ("tsv unbalanced quote", "qrels", "qrels.tsv", b'query-id\tcorpus-id\tscore\n1\td1\t1\n1\t"d2\t1\n',
     r"unbalanced quote: a quoted TSV value must end on its own line", 3, '1\t"d2\t1'),
    ("tsv too many fields", "run", "run.tsv", b"query_id\tdoc_id\tscore\n1\td1\t1.0\t7\n",
     r"expected 3 TSV fields as in the header, found 4", 2, "1\td1\t1.0\t7"),
    ("tsv with spaces", "run", "run.tsv", b"query_id\tdoc_id\tscore\n1 d1 1.0\n",
     r"expected 3 TSV fields as in the header, found 1", 2, "1 d1 1.0"),
    # JSON lines
    ("jsonl string score", "run", "run.jsonl",
     b'{"qid": "1", "docid": "d1", "score": 1.0}\n\n{"qid": "1", "docid": "d2", "score": "high"}\n',
     r"key 'score' must be a number, not 'high'", 3, '{"qid": "1", "docid": "d2", "score": "high"}'),
    ("jsonl null score", "run", "run.jsonl",
     b'{"qid": "1", "docid": "d1", "score": 1.0}\n{"qid": "1", "docid": "d2", "score": null}\n',
     r"key 'score' must be a string or a number, not null", 2, '{"qid": "1", "docid": "d2", "score": null}'),
    ("jsonl array id", "qrels", "qrels.jsonl", b'{"qid": ["1"], "docid": "d1", "rel": 1}\n',
     r"key 'qid' must be a string or a number, not an array", 1, '{"qid": ["1"], "docid": "d1", "rel": 1}'),
    ("jsonl cut short", "run", "run.jsonl", b'{"qid": "1", "docid": "d1", "score": 1.0}\n{"qid": "1", "docid"\n',
     r"not valid JSON \(Expecting ':' delimiter\)", 2, '{"qid": "1", "docid"'),
    ("jsonl bad UTF-8", "run", "run.jsonl", b'{"qid": "1", "docid": "d\xff", "score": 1.0}\n',
     r"not valid JSON", 1, '{"qid": "1", "docid": "d\ufffd", "score": 1.0}'),
    ("jsonl missing key", "run", "run.jsonl", b'{"qid": "1", "docid": "a", "score": 1}\n{"qid": "1", "score": 2}\n',
     r"missing key 'docid'", 2, '{"qid": "1", "score": 2}'),
    # queries
    ("queries jsonl null id", "queries", "queries.jsonl", b'{"_id": "1", "text": "a"}\n{"_id": null, "text": "b"}\n',
     r"the query id \('_id'\) must be a string or an integer, not null", 2, '{"_id": null, "text": "b"}'),
    ("queries jsonl text not a string", "queries", "queries.jsonl", b'{"_id": "1", "text": ["a"]}\n',
     r"the query text \('text'\) must be a string, not an array", 1, '{"_id": "1", "text": ["a"]}'),
    ("queries jsonl bad UTF-8", "queries", "queries.jsonl", b'{"_id": "1", "text": "a"}\n{"_id": "2", "text": "\xff"}\n',
     r"not valid JSON \(not UTF-8\)", 2, '{"_id": "2", "text": "\ufffd"}'),
    ("queries tsv no tab", "queries", "queries.tsv", b"1\tfirst\n2 second\n",
     r"expected 'query id<TAB>text'", 2, "2 second"),
    ("queries table, quote", "queries", "queries.tsv", b'query_id\ttext\n1\tfirst\n2\t"second\n',
     r"unbalanced quote", 3, '2\t"second'),
    ("queries csv, quote", "queries", "queries.csv", b'query_id,text\n1,first\n"2,second\n',
     r"unbalanced quote", 3, '"2,second'),
    # segments
    ("segments field starting with a quote", "segments", "segments.csv",
     b'query_id,user\n1,new\n2,"old\n3,new\n', r"unbalanced quote", 3, '2,"old'),
    ("segments id starting with a quote", "segments", "segments.tsv",
     b'query_id\tuser\n1\tnew\n"2\told\n', r"unbalanced quote", 3, '"2\told'),
    ("segments too few fields", "segments", "segments.csv", b"query_id,user,freq\n1,new,tail\n2,old\n",
     r"expected 3 CSV fields as in the header, found 2", 3, "2,old"),
    ("segments jsonl array", "segments", "segments.jsonl",
     b'{"query_id": "1", "user": "new"}\n{"query_id": "2", "user": ["old"]}\n',
     r"key 'user' must be a string or a number, not an array", 2, '{"query_id": "2", "user": ["old"]}'),
    ("segments bad UTF-8", "segments", "segments.csv", b"query_id,user\n1,new\n2,\xffold\n",
     r"not valid UTF-8", 3, "2,\ufffdold"),
    # BEIR
    ("beir corpus null _id", "beir", "corpus.jsonl", b'{"_id": "d1", "text": "x"}\n{"_id": null, "text": "y"}\n',
     r"_id must be a string or an integer, not null", 2, '{"_id": null, "text": "y"}'),
    ("beir corpus text not a string", "beir", "corpus.jsonl", b'{"_id": "d1", "text": ["x"]}\n',
     r"text must be a string, not an array", 1, '{"_id": "d1", "text": ["x"]}'),
    ("beir queries object _id", "beir", "queries.jsonl", b'{"_id": "1", "text": "q"}\n{"_id": {"a": 1}, "text": "r"}\n',
     r"_id must be a string or an integer, not an object", 2, '{"_id": {"a": 1}, "text": "r"}'),
    ("beir qrels quote", "beir", "qrels/test.tsv", b'query-id\tcorpus-id\tscore\n1\t"d1\t1\n',
     r"unbalanced quote", 2, '1\t"d1\t1'),
    # TREC, whole and streamed
    ("trec run without a tag", "run", "run.txt", b"# c\n1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5\n",
     r"expected 6 columns \(qid Q0 docid rank score tag\) in a TREC run file, found 5", 3, "1 Q0 d2 2 0.5"),
    ("trec run without a tag, streamed", "stream", "run.txt", b"# c\n1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5\n",
     r"expected 6 columns", 3, "1 Q0 d2 2 0.5"),
    ("trec score a word, streamed", "stream", "run.txt", b"1 Q0 d1 1 1.0 t x\n1\tQ0 d2 2 high t\n",
     r"score must be a number, not 'high'", 2, "1\tQ0 d2 2 high t"),
    ("trec qrels with five fields", "qrels", "qrels.txt", b"#c\n1 0 d1 1\n1 0 d2 1 x\n",
     r"expected 4 columns \(qid iter docid grade\) in a TREC qrels file, found 5", 3, "1 0 d2 1 x"),
]  # fmt: skip
