"""Streaming evaluation: chunks of whole queries give exactly the in-memory numbers."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path

import pytest

import rankmeter.io.stream as stream
from rankmeter import evaluate
from rankmeter.errors import FormatError, PolicyError

METRICS = ["nDCG@10", "P@5", "R@100", "RR", "AP", "Bpref", "R-Prec", "NumRet", "NumRelRet"]


def _write(tmp_path: Path, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(1, 41):
        docs = [f"d{i}" for i in range(60)]
        for d in rng.sample(docs, 12):
            qrels.append(f"{q} 0 {d} {rng.choice([-1, 0, 1, 2, 3])}")
        if q % 7 == 0:
            continue  # judged but never retrieved: counts with include_missing
        for rank, d in enumerate(rng.sample(docs, rng.randint(1, 40)), start=1):
            score = rng.choice([0.5, 1.0, 1.5, 2.0, 2.5])  # many ties
            run.append(f"{q} Q0 {d} {rank} {score} sys")
    run.append("999 Q0 d1 1 1.0 sys")  # a query without judgments
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 700 bytes, Arrow blocks of 512 and chunks of 50 rows: many chunks, pieces
    cut in the middle of lines, on a small file."""
    monkeypatch.setattr(stream, "PIECE_BYTES", 700)
    monkeypatch.setattr(stream, "BLOCK_SIZE", 512)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 50)


@pytest.mark.parametrize("include_missing", [False, True])
@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_streaming_equals_in_memory(
    tmp_path: Path, tiny_chunks: None, include_missing: bool, judged_only: bool, ties: str
) -> None:
    qrels, run = _write(tmp_path)
    options = {"include_missing": include_missing, "judged_only": judged_only, "ties": ties}
    whole = evaluate(qrels, run, METRICS, stream=False, **options)
    streamed = evaluate(qrels, run, METRICS, stream=True, **options)
    assert streamed.run == whole.run == "sys"
    assert streamed.per_query.query_ids == whole.per_query.query_ids
    assert streamed.to_dict(per_query=True) == whole.to_dict(per_query=True)


def test_chunks_hold_whole_queries(tmp_path: Path, tiny_chunks: None) -> None:
    _, run = _write(tmp_path)
    chunks = list(stream.iter_run_chunks(run))
    assert len(chunks) > 3
    queries = [q for chunk in chunks for q in chunk.query_ids]
    assert len(queries) == len(set(queries))


def test_gzip_streams(tmp_path: Path, tiny_chunks: None) -> None:
    qrels, run = _write(tmp_path)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    assert (
        evaluate(qrels, packed, METRICS, stream=True).metrics
        == evaluate(qrels, run, METRICS).metrics
    )


def test_ungrouped_run_is_explained(tmp_path: Path, tiny_chunks: None) -> None:
    qrels, run = _write(tmp_path)
    lines = run.read_text().splitlines()
    lines.append("1 Q0 d59 99 0.1 sys")  # query 1 again, at the end
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        FormatError,
        match=rf"run\.txt:{len(lines)}: the run is not grouped by query: query '1'.*sort -s -k1,1",
    ):
        evaluate(qrels, run, METRICS, stream=True)


def test_bad_line_is_located(tmp_path: Path, tiny_chunks: None) -> None:
    qrels, run = _write(tmp_path)
    lines = run.read_text().splitlines()
    lines[30] = "3 Q0 d1 1 high sys"
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        FormatError, match=r"run\.txt:31: score must be a number, not 'high': '3 Q0 d1 1 high sys'"
    ):
        evaluate(qrels, run, METRICS, stream=True)


def test_duplicate_in_a_chunk_names_its_line(tmp_path: Path, tiny_chunks: None) -> None:
    qrels, run = _write(tmp_path)
    lines = run.read_text().splitlines()
    lines.insert(1, lines[0].replace(" 1 ", " 2 ", 1))
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"run\.txt:2: duplicate result for query '1'"):
        evaluate(qrels, run, METRICS, stream=True)


@pytest.mark.parametrize(
    "change",
    [
        lambda text: text.replace(" ", "\t"),
        lambda text: text.replace(" ", "  \t "),
        lambda text: "# a comment\n" + text.replace(" sys\n", " sys extra fields\n"),
    ],
    ids=["tabs", "runs of blanks", "comments and fields after the tag"],
)
def test_what_trec_eval_reads_streams(
    tmp_path: Path, tiny_chunks: None, change: Callable[[str], str]
) -> None:
    # Streaming once refused tabs; trec_eval reads them, and so does every reader now.
    qrels, run = _write(tmp_path)
    expected = evaluate(qrels, run, METRICS, stream=False).to_dict(per_query=True)
    run.write_text(change(run.read_text()))
    assert evaluate(qrels, run, METRICS, stream=True).to_dict(per_query=True) == expected


def test_stream_needs_paths() -> None:
    with pytest.raises(PolicyError, match="stream=True reads run files"):
        evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P@1"], stream=True)


def test_cli_stream_matches_in_memory(tmp_path: Path, tiny_chunks: None) -> None:
    import json

    from rankmeter.cli import main

    qrels, run = _write(tmp_path)
    outputs = []
    for flag in ("--stream", "--no-stream"):
        out = tmp_path / f"out{flag}.json"
        with pytest.raises(SystemExit) as done:
            main(["evaluate", str(qrels), str(run), flag, "-q", "-f", "json", "-o", str(out)])
        assert done.value.code == 0
        outputs.append(json.loads(out.read_text()))
    assert outputs[0] == outputs[1]


def test_named_run_files_stream_under_their_names(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path)
    results = evaluate(qrels, {"bm25": run, "run": run}, ["P@5"], stream=True)
    assert list(results) == ["bm25", "run"]
    assert results["bm25"].metrics == evaluate(qrels, run, ["P@5"], stream=False).metrics


@pytest.mark.parametrize("bad", ["score", "duplicate"])
@pytest.mark.parametrize("gzipped", [False, True])
def test_late_bad_line_is_numbered_across_mixed_line_breaks(
    tmp_path: Path, tiny_chunks: None, bad: str, gzipped: bool
) -> None:
    """A plain file's pieces are counted only when an error needs a line number (a gzip
    file's as they are read): after a byte order mark, \\r\\n, lone \\r, blank lines, comments
    and tabs in earlier pieces, both name the same line."""
    qrels, run = _write(tmp_path)
    lines = run.read_bytes().splitlines()
    at = len(lines) - 5
    if bad == "score":
        lines[at] = b"3 Q0 d1 1 high sys"
        message = r"score must be a number, not 'high': '3 Q0 d1 1 high sys'"
    else:
        lines[at] = lines[at - 1].replace(b" Q0 ", b" Q0 ", 1)
        message = "duplicate result for query"
    breaks = [b"\r\n", b"\r", b"\n", b"\n\n", b"\n# a comment\n"]
    data = bytearray(b"\xef\xbb\xbf")
    number = 1
    for i, line in enumerate(lines):
        if i == 40:
            line = line.replace(b" ", b"\t")  # a piece with tabs: read again by the exact path
        data += line
        if i == at:
            wanted = number
        cut = breaks[i % len(breaks)]
        data += cut
        number += cut.count(b"\n") + cut.count(b"\r") - cut.count(b"\r\n")
    path = tmp_path / ("run.txt.gz" if gzipped else "run.txt")
    path.write_bytes(gzip.compress(bytes(data)) if gzipped else bytes(data))
    with pytest.raises(FormatError, match=rf"run\.txt(\.gz)?:{wanted}: {message}"):
        evaluate(qrels, path, METRICS, stream=True)


def test_a_query_that_comes_back_is_said_before_a_duplicate_in_its_chunk(
    tmp_path: Path, tiny_chunks: None
) -> None:
    """The last chunk repeats an earlier query and also holds a duplicate result: the run not
    being grouped is what the user must fix first, so that is the error."""
    qrels, run = _write(tmp_path)
    lines = run.read_text().splitlines()
    lines += ["1 Q0 d59 99 0.1 sys", "1 Q0 d59 100 0.1 sys"]  # query 1 again, doc twice
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"the run is not grouped by query: query '1'"):
        evaluate(qrels, run, METRICS, stream=True)


def test_a_query_longer_than_many_chunks_streams_whole(tmp_path: Path, tiny_chunks: None) -> None:
    """The end of a chunk is found from the end of what was read: a query of 5,000 results
    (chunks of 50 rows) is kept whole, and gives the in-memory numbers."""
    qrels, run = _write(tmp_path)
    long_query = [f"77 Q0 d{i} {i + 1} {5000 - i} sys" for i in range(5000)]
    lines = run.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("10 "))  # between queries
    run.write_text("\n".join(lines[:at] + long_query + lines[at:]) + "\n")
    with open(qrels, "a") as out:
        out.write("77 0 d4999 1\n77 0 d10 2\n")
    whole = evaluate(qrels, run, METRICS, stream=False)
    streamed = evaluate(qrels, run, METRICS, stream=True)
    assert streamed.to_dict(per_query=True) == whole.to_dict(per_query=True)
    assert streamed.per_query.to_dict()["77"]["NumRet"] == 5000


def test_a_run_is_read_as_soon_as_its_chunks_are_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading starts when the iterator is made (evaluate reads the qrels meanwhile), and
    closing an iterator never read from stops its threads."""
    import threading

    _, run = _write(tmp_path)
    started = threading.Event()
    original = stream._parse_pieces

    def parse(source: object) -> object:
        started.set()
        return original(source)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "_parse_pieces", parse)
    before = set(threading.enumerate())
    chunks = stream.iter_run_chunks(run)
    assert started.wait(5), "the run was not read before its first chunk was asked for"
    # The reader's own threads (by object: another test's, or pytest's, are not counted).
    ours = [
        t
        for t in threading.enumerate()
        if t not in before and t.name in ("rankmeter-chunks", "rankmeter-parse")
    ]
    assert sorted(t.name for t in ours) == ["rankmeter-chunks", "rankmeter-parse"]
    chunks.close()  # type: ignore[attr-defined]
    assert [t.name for t in ours if t.is_alive()] == []
    assert sum(len(c) for c in stream.iter_run_chunks(run)) == len(run.read_text().splitlines())


def test_the_reading_threads_start_after_arrow_is_imported(tmp_path: Path) -> None:
    # Seen under load: a parsing thread importing pyarrow while the caller's thread imported it
    # too (reading the qrels) got "cannot import name 'BuildInfo' from partially initialized
    # module 'pyarrow.lib'". In a fresh process, what each reading thread could find imported
    # when it started:
    import json
    import subprocess
    import sys

    qrels, run = _write(tmp_path)
    script = f"""
import json, sys, threading
seen = {{}}
start = threading.Thread.start
def recording_start(self):
    wanted = ("pyarrow", "pyarrow.lib", "pyarrow.csv", "pyarrow._compute", "mmap")
    seen[self.name] = [m for m in wanted if m not in sys.modules]
    start(self)
threading.Thread.start = recording_start
import rankmeter
rankmeter.evaluate({str(qrels)!r}, {str(run)!r}, ["nDCG@10"], stream=True)
print(json.dumps(seen))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {"rankmeter-chunks", "rankmeter-parse"} <= set(seen), seen
    missing = {name: m for name, m in seen.items() if name.startswith("rankmeter-") and m}
    assert missing == {}, "modules a reading thread would import itself"
