"""trec_eval's reading rules (get_qrels.c, get_trec_results.c), whole-file and streamed.

Runs: blank and whitespace-only lines are skipped; a line whose first non-blank character is
``#`` is a comment; fields after the sixth (the tag) are ignored. Qrels: a line that starts with
``#`` is a comment; a doc id may hold ``#``; a line with more than four fields is malformed. The
run is named after the tag of its first data line, however long that line is.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rankmeter.io.stream as stream
from rankmeter import FormatError, Run, evaluate
from rankmeter.io import read_qrels, read_run

TWO = {"1": {"a": 2.0, "b": 1.0}}

# name -> (run file, {query: {doc: score}}, run name)
RUNS: dict[str, tuple[bytes, dict[str, dict[str, float]], str]] = {
    "comment lines": (
        b"# written by a tool\n1 Q0 a 1 2.0 tag\n#1 Q0 z 2 9.0 other\n1 Q0 b 2 1.0 tag\n# end\n",
        TWO,
        "tag",
    ),
    "comments after blanks": (
        b"  # indented\n\t#1 Q0 z 2 9.0 other\n1 Q0 a 1 2.0 tag\n \t # x\n1 Q0 b 2 1.0 tag\n",
        TWO,
        "tag",
    ),
    "commented-out first line names nothing": (
        b"#1 Q0 z 1 9.0 commented\n1 Q0 a 1 2.0 tag\n1 Q0 b 2 1.0 tag\n",
        TWO,
        "tag",
    ),
    "blank and whitespace-only lines": (
        b"\n   \n\t\n1 Q0 a 1 2.0 tag\n \t \n\n1 Q0 b 2 1.0 tag\n  \n",
        TWO,
        "tag",
    ),
    "fields after the tag": (
        b"1 Q0 a 1 2.0 tag extra 7\n1 Q0 b 2 1.0 tag x y z\n",
        TWO,
        "tag",
    ),
    "fields after the tag on some lines": (
        b"1 Q0 a 1 2.0 tag\n1 Q0 b 2 1.0 tag # a note\n",
        TWO,
        "tag",
    ),
    "comments, crlf": (b"# c\r\n1 Q0 a 1 2.0 tag\r\n# d\r\n1 Q0 b 2 1.0 tag\r\n", TWO, "tag"),
    # trec_eval skips blanks before a line and between fields, and text after the tag.
    "runs of blanks between fields, before and after": (
        b"  1  Q0 a 1   2.0 tag \n1 Q0  b  2 1.0  tag  \n",
        TWO,
        "tag",
    ),
    "# inside ids": (
        b"1 Q0 CR#93E-1860 1 2.0 t#1\n1 Q0 b# 2 1.0 t#1\n",
        {"1": {"CR#93E-1860": 2.0, "b#": 1.0}},
        "t#1",
    ),
}

# name -> (qrels file, {query: {doc: grade}})
QRELS: dict[str, tuple[bytes, dict[str, dict[str, float]]]] = {
    "comment lines": (
        b"# judged by NIST\n1 0 a 1\n#1 0 z 3\n1 0 b 0\n# 2 0 y 1\n",
        {"1": {"a": 1, "b": 0}},
    ),
    "a # inside a doc id": (
        b"1 0 CR#93E-1860 1\n1 0 FR940104-0-00001# 0\n",
        {"1": {"CR#93E-1860": 1, "FR940104-0-00001#": 0}},
    ),
    # trec_eval takes only a # at the start of a line as a comment: after a blank it is text.
    "a # after a blank is data": (b" #q 0 a 1\n1 0 b 0\n", {"#q": {"a": 1}, "1": {"b": 0}}),
    "comments, crlf, tabs": (b"#c\r\n1\t0\ta\t1\r\n#1\t0\tz\t3\r\n", {"1": {"a": 1}}),
}


def _tabs(data: bytes) -> bytes:
    return data.replace(b" Q0 ", b"\tQ0\t").replace(b" 0 ", b"\t0\t")


TRANSFORMS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "plain": ("run.txt", lambda data: data),
    "tabs": ("run.txt", _tabs),
    "gzip": ("run.txt.gz", gzip.compress),
}


def _whole(path: Path) -> tuple[dict[str, dict[str, float]], str]:
    run = read_run(path, format="trec")
    return run.to_dict(), run.name


def _streamed(path: Path) -> tuple[dict[str, dict[str, float]], str]:
    chunks = list(stream.iter_run_chunks(path))
    assert len({chunk.name for chunk in chunks}) == 1
    return {q: docs for chunk in chunks for q, docs in chunk.to_dict().items()}, chunks[0].name


READERS = {"whole": _whole, "streamed": _streamed}


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 16 bytes: most lines are cut between two pieces."""
    monkeypatch.setattr(stream, "PIECE_BYTES", 16)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 1)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("case", list(RUNS))
def test_runs_read_as_trec_eval_reads_them(
    tmp_path: Path, case: str, reader: str, transform: str
) -> None:
    data, expected, name = RUNS[case]
    file_name, change = TRANSFORMS[transform]
    path = tmp_path / file_name
    path.write_bytes(change(data))
    assert READERS[reader](path) == (Run.from_dict(expected).to_dict(), name)


@pytest.mark.parametrize("case", list(RUNS))
def test_runs_read_as_trec_eval_reads_them_in_small_pieces(
    tmp_path: Path, tiny_pieces: None, case: str
) -> None:
    data, expected, name = RUNS[case]
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    assert _streamed(path) == (Run.from_dict(expected).to_dict(), name)


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("case", list(QRELS))
def test_qrels_read_as_trec_eval_reads_them(tmp_path: Path, case: str, gzipped: bool) -> None:
    data, expected = QRELS[case]
    path = tmp_path / ("qrels.txt.gz" if gzipped else "qrels.txt")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    assert read_qrels(path, format="trec").to_dict() == expected


@pytest.mark.parametrize("stream_it", [False, True, None])
def test_evaluation_of_commented_files(tmp_path: Path, stream_it: bool | None) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"# qrels\n1 0 a 1\n#1 0 b 1\n2 0 c 1\n")
    run = tmp_path / "run"
    run.write_bytes(b"# run\n1 Q0 b 1 3 t x\n1 Q0 a 2 2 t\n  #2 Q0 c 1 1 t\n2 Q0 d 1 1 t y\n")
    result = evaluate(qrels, run, ["P@1", "RR"], stream=stream_it)
    assert result.run == "t"
    assert result.per_query.to_dict() == {
        "1": {"P@1": 0.0, "RR": 0.5},
        "2": {"P@1": 0.0, "RR": 0.0},
    }


# (name, kind, data, message after "<path>")
STILL_REFUSED = [
    (
        "qrels with a fifth field",
        "qrels",
        b"1 0 a 1\n1 0 b 1 extra\n",
        r":2: expected 4 columns \(qid iter docid grade\) in a TREC qrels file, found 5: "
        r"'1 0 b 1 extra'",
    ),
    (
        "qrels with a comment after the grade",
        "qrels",
        b"1 0 a 1 # relevant\n",
        r":1: expected 4 columns .* found 6: '1 0 a 1 # relevant'",
    ),
    (
        "run line without a tag",
        "run",
        b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0\n",
        r":2: expected 6 columns \(qid Q0 docid rank score tag\) in a TREC run file, found 5: "
        r"'1 Q0 b 2 1.0'",
    ),
    (
        "run line with a comment in the middle",
        "run",
        b"1 Q0 a 1 # t\n",
        r":1: score must be a number, not '#': '1 Q0 a 1 # t'",
    ),
    # Arrow splits at each single space: a blank too many makes an empty field, and a line
    # one field short then has the layout's number of columns. trec_eval calls it malformed.
    (
        "run line without a tag but with a trailing blank",
        "run",
        b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 \n",
        r":2: expected 6 columns .* found 5: '1 Q0 b 2 1.0 '",
    ),
    ("run line without Q0, a double blank", "run", b"1  a 1 2.0 t\n", r":1: expected 6 .* found 5"),
    ("run line without a rank", "run", b"1 Q0 a  2.0 t\n", r":1: expected 6 .* found 5"),
    ("run line short, leading blank", "run", b" 1 Q0 a 1 2.0\n", r":1: expected 6 .* found 5"),
    ("run line short, a tab at the end", "run", b"1 Q0 a 1 2.0\t\n", r":1: expected 6 .* fo"),
    ("qrels line without iter", "qrels", b"1 0 a 1\n1  b 1\n", r":2: expected 4 .* found 3"),
    ("qrels line short, leading blank", "qrels", b" 0 a 1\n", r":1: expected 4 .* found 3"),
    ("qrels line short, trailing blank", "qrels", b"1 0 a \n", r":1: expected 4 .* found 3"),
    ("only comments", "run", b"# nothing\n\n  # here\n", r": no data lines, only comments$"),
    ("only qrels comments", "qrels", b"#1 0 a 1\n", r": no data lines, only comments$"),
    ("only blanks", "run", b"\n \t\n", r": file is empty$"),
]


@pytest.mark.parametrize(
    ("kind", "data", "pattern"),
    [case[1:] for case in STILL_REFUSED],
    ids=[case[0] for case in STILL_REFUSED],
)
def test_what_trec_eval_refuses_is_still_refused(
    tmp_path: Path, kind: str, data: bytes, pattern: str
) -> None:
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(data)
    readers: list[Callable[[Path], Any]] = (
        [read_qrels] if kind == "qrels" else [read_run, lambda p: list(stream.iter_run_chunks(p))]
    )
    for reader in readers:
        with pytest.raises(FormatError, match=_at(path) + pattern):
            reader(path)


def _at(path: Path) -> str:
    import re

    return "^" + re.escape(str(path))


# -- the run's name: the tag of the first data line, however long (issue 9, item 3.6) ---------
LONG = "d" * 70_000  # a doc id past 64 KiB


@pytest.mark.parametrize(
    "first",
    [
        f"1 Q0 {LONG} 1 2.0 longtag\n",  # the first line is longer than 64 KiB
        f"# {'x' * 70_000} other\n1 Q0 {LONG} 1 2.0 longtag\n",  # so is a comment before it
        f"{' ' * 70_000}\n1 Q0 {LONG} 1 2.0 longtag\n",  # and a blank line
    ],
    ids=["long first line", "long comment first", "long blank line first"],
)
@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("gzipped", [False, True])
def test_the_run_is_named_after_its_first_tag_however_long_the_line(
    tmp_path: Path, first: str, reader: str, gzipped: bool
) -> None:
    data = (first + "1 Q0 b 2 1.0 longtag\n").encode()
    path = tmp_path / ("run.gz" if gzipped else "run")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    scores, name = READERS[reader](path)
    assert name == "longtag"
    assert scores == {"1": {LONG: 2.0, "b": 1.0}}


# -- where Arrow's single-space split would hide a missing field (loose_blanks) ---------------
def test_loose_blanks_are_found_anywhere_even_across_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rankmeter.io._source as source

    monkeypatch.setattr(source, "_SCAN", 7)  # blocks of 7 bytes: pairs fall across them
    line = b"1 Q0 d 1 2.0 t\n"
    tidy = line * 5
    assert not source.loose_blanks(tidy)
    assert not source.loose_blanks(tidy.replace(b"\n", b"\r\n"))  # CR LF is not a blank pair
    assert not source.loose_blanks(source._BOM + tidy)
    assert not source.loose_blanks(b"") and not source.loose_blanks(source._BOM)
    for at in range(len(tidy)):
        if tidy[at : at + 1] == b" ":
            doubled = tidy[:at] + b" " + tidy[at:]
            assert source.loose_blanks(doubled), at
    for loose in (b" " + tidy, source._BOM + b" " + tidy, tidy + b" ", tidy[:-1] + b" \n"):
        assert source.loose_blanks(loose), loose
    assert source.loose_blanks(tidy + b" 1 Q0 d 1 2.0 t\n")  # a blank after a line break
    assert source.loose_blanks(tidy.replace(b"\n", b" \r\n", 1))
