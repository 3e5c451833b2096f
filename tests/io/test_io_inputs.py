"""Inputs that are not regular files: FIFOs, pipes as /dev/fd/N, /dev/null; gzip streamed.

Each is read once, as a stream (issue 9, items 3.10 and 3.11). Every read runs in a thread with
a time limit, so a reader that hangs (opening a FIFO twice waits for a second writer forever)
fails the test instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import rankmeter.io.stream as stream
from rankmeter import FormatError, evaluate
from rankmeter.io import read_qrels, read_run
from rankmeter.io._source import Source
from rankmeter.io.annotations import read_queries, read_segments

QRELS = b"1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN = b"# a comment\n1 Q0 b 1 2.0 tag\n1 Q0 a 2 1.0 tag\n2 Q0 c 1 1.0 tag\n"
LIMIT = 30.0  # seconds; a read that takes longer is taken to hang


def within_limit(work: Callable[[], Any]) -> Any:
    """``work()`` in a thread; fails the test if it does not finish within LIMIT seconds."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(LIMIT)
    if worker.is_alive():
        pytest.fail(f"the read hangs (no answer in {LIMIT:.0f} s)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@contextlib.contextmanager
def fifo(folder: Path, data: bytes, name: str = "input.fifo") -> Iterator[Path]:
    """A FIFO that a thread fills with ``data`` once, when a reader opens it."""
    path = folder / name
    os.mkfifo(path)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as target:
            target.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        if writer.is_alive():  # nobody opened it: let the writer go
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(5)


@contextlib.contextmanager
def dev_fd(data: bytes) -> Iterator[str]:
    """A pipe seen as /dev/fd/N, as bash's process substitution <(...) hands it over."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write_end, "wb") as target:
            target.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield f"/dev/fd/{read_end}"
    finally:
        os.close(read_end)
        writer.join(5)


Opener = Callable[..., contextlib.AbstractContextManager[Any]]
KINDS: dict[str, Opener] = {
    "fifo": lambda tmp, data, name="input.fifo": fifo(tmp, data, name),
    "fifo of gzip": lambda tmp, data, name="input.fifo": fifo(tmp, gzip.compress(data), name),
    "/dev/fd pipe": lambda tmp, data, name="": dev_fd(data),
    "/dev/fd pipe of gzip": lambda tmp, data, name="": dev_fd(gzip.compress(data)),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_runs_and_qrels_from_pipes(tmp_path: Path, kind: str) -> None:
    with KINDS[kind](tmp_path, RUN) as path:
        run = within_limit(lambda: read_run(path))
    with KINDS[kind](tmp_path, QRELS, "qrels.fifo") as path:
        qrels = within_limit(lambda: read_qrels(path))
    assert run.name == "tag"
    assert run.to_dict() == {"1": {"b": 2.0, "a": 1.0}, "2": {"c": 1.0}}
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}, "2": {"c": 1}}


@pytest.mark.parametrize("stream_it", [None, True, False])
@pytest.mark.parametrize("kind", list(KINDS))
def test_evaluate_reads_a_pipe_once(tmp_path: Path, kind: str, stream_it: bool | None) -> None:
    (tmp_path / "qrels").write_bytes(QRELS)
    with KINDS[kind](tmp_path, RUN) as path:
        result = within_limit(
            lambda: evaluate(tmp_path / "qrels", path, ["P@1", "RR"], stream=stream_it)
        )
    assert result.run == "tag"
    assert result.metrics["RR"] == 0.75


def test_a_fifo_streams_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "PIECE_BYTES", 40)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 1)
    lines = b"".join(b"%d Q0 d%d %d 1.0 fifo\n" % (q, d, d) for q in range(50) for d in range(4))
    with fifo(tmp_path, b"# generated\n" + lines) as path:
        chunks = within_limit(lambda: list(stream.iter_run_chunks(path)))
    assert len(chunks) > 10
    assert {chunk.name for chunk in chunks} == {"fifo"}
    assert sum(len(chunk) for chunk in chunks) == 200


def test_a_streamed_fifo_names_the_bad_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The FIFO cannot be read again to find the line: the piece that held it tells.
    monkeypatch.setattr(stream, "PIECE_BYTES", 40)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 1)
    lines = [b"%d Q0 d%d %d 1.0 fifo" % (q, d, d) for q in range(20) for d in range(3)]
    lines[31] = lines[30]  # a duplicate result, found when the chunk's Run is built
    lines[45] = b"15 Q0 d0 1 high fifo"
    duplicate = r"input\.fifo:32: duplicate result .*'10 Q0 d0 0"
    with (
        fifo(tmp_path, b"\n".join(lines) + b"\n") as path,
        pytest.raises(FormatError, match=duplicate),
    ):
        within_limit(lambda: list(stream.iter_run_chunks(path)))
    del lines[31]
    word = r"bad\.fifo:45: score must be a number, not 'high'"
    with (
        fifo(tmp_path, b"\n".join(lines) + b"\n", "bad.fifo") as path,
        pytest.raises(FormatError, match=word),
    ):
        within_limit(lambda: list(stream.iter_run_chunks(path)))


@pytest.mark.parametrize("kind", ["fifo", "/dev/fd pipe"])
def test_queries_and_segments_from_pipes(tmp_path: Path, kind: str) -> None:
    # They were read twice: the second read found the pipe drained ("file is empty").
    with KINDS[kind](tmp_path, b"1\tfirst query\n2\tsecond\n") as path:
        queries = within_limit(lambda: read_queries(path))
    with KINDS[kind](tmp_path, b"query_id,user\n1,new\n2,old\n", "segments.fifo") as path:
        segments = within_limit(lambda: read_segments(path))
    assert queries == {"1": "first query", "2": "second"}
    assert segments == {"user": {"1": "new", "2": "old"}}


READERS: dict[str, Callable[[str], Any]] = {
    "read_run": read_run,
    "read_qrels": read_qrels,
    "read_queries": read_queries,
    "read_segments": read_segments,
    "iter_run_chunks": lambda path: list(stream.iter_run_chunks(path)),
    "evaluate": lambda path: evaluate({"1": {"a": 1}}, path, ["P@1"]),
    "evaluate, streamed": lambda path: evaluate({"1": {"a": 1}}, path, ["P@1"], stream=True),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_dev_null_is_an_empty_file(reader: str) -> None:
    # It was mapped into memory (OSError: [Errno 22]) or read as "no queries".
    with pytest.raises(FormatError, match=r"^/dev/null: (file is empty|no queries in the file)"):
        within_limit(lambda: READERS[reader]("/dev/null"))


@pytest.mark.parametrize("reader", ["read_run", "iter_run_chunks", "read_queries"])
def test_an_empty_pipe_is_an_empty_file(tmp_path: Path, reader: str) -> None:
    empty = r"input\.fifo: (file is empty|no queries)"
    with fifo(tmp_path, b"") as path, pytest.raises(FormatError, match=empty):
        within_limit(lambda: READERS[reader](str(path)))


# -- gzip is decompressed as it is read (issue 9, item 3.11) ---------------------------------------
@pytest.fixture(scope="module")
def big_gzip_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gzip run of about 25 MB decompressed (a few MB on disk)."""
    lines = b"".join(
        b"%d Q0 doc%d %d %d.5 gz\n" % (q, d, d, 1000 - d) for q in range(800) for d in range(1000)
    )
    path = tmp_path_factory.mktemp("gzip") / "run.gz"
    path.write_bytes(gzip.compress(lines, compresslevel=1))
    assert len(lines) > 20 << 20
    return path


def _peak_python_bytes(work: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_looking_at_a_gzip_file_decompresses_only_its_start(big_gzip_run: Path) -> None:
    def look() -> None:
        source = Source(big_gzip_run)
        assert source.detect_format(None) == "trec"
        assert source.head().startswith(b"0 Q0 doc0 0 1000.5 gz\n")
        assert source.first_line(bool) == b"0 Q0 doc0 0 1000.5 gz"

    assert _peak_python_bytes(look) < 4 << 20


def test_streaming_a_gzip_file_never_holds_it_whole(
    big_gzip_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "PIECE_BYTES", 1 << 20)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 20_000)
    rows = [0]

    def read() -> None:
        for chunk in stream.iter_run_chunks(big_gzip_run):
            rows[0] += len(chunk)

    # Python's share of the memory (the pieces; Arrow's buffers are not traced): a few pieces.
    assert _peak_python_bytes(read) < 12 << 20
    assert rows[0] == 800_000


CORPUS = b'{"_id": "d1", "title": "wings", "text": "flutter"}\n{"_id": "d2", "text": "heat"}\n'


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_corpus_from_a_pipe(tmp_path: Path, kind: str) -> None:
    # read_corpus refused anything but a regular file ("no such file"), so embed-eval could not
    # take --corpus <(zcat corpus.jsonl.gz); gzip was not read at all.
    from rankmeter.io import read_corpus

    with KINDS[kind](tmp_path, CORPUS) as path:
        corpus = within_limit(lambda: read_corpus(path))
    assert {k: (d.title, d.text) for k, d in corpus.items()} == {
        "d1": ("wings", "flutter"),
        "d2": ("", "heat"),
    }


@pytest.mark.parametrize("kind", ["fifo", "/dev/fd pipe"])
def test_a_collection_from_pipes(tmp_path: Path, kind: str) -> None:
    from rankmeter.vector.embed import collection_from_files

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    with (
        KINDS[kind](tmp_path, CORPUS, "corpus.fifo") as corpus,
        KINDS["fifo"](tmp_path, b"q1\tflutter of wings\n", "queries.fifo") as queries,
    ):
        loaded = within_limit(lambda: collection_from_files(qrels, queries, corpus))
    assert dict(loaded.queries) == {"q1": "flutter of wings"}
    assert set(loaded.corpus) == {"d1", "d2"}
