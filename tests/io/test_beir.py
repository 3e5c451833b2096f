"""BEIR-layout collections: what is loaded, and every error naming the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter import FormatError
from rankmeter.io.beir import BeirCollection, Document, load_beir


def _write(
    root: Path,
    corpus: str | bytes | None = None,
    queries: str | bytes | None = None,
    qrels: str | None = None,
    split: str = "test",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    docs = [
        {"_id": "d1", "title": "Wings", "text": "flutter of wings"},
        {"_id": "0012", "title": "", "text": "heat conduction"},
        {"_id": "d3", "title": "Shells", "text": ""},
        {"_id": 4, "text": "numeric id, no title"},
    ]
    default_corpus = "".join(json.dumps(d) + "\n" for d in docs)
    default_queries = (
        '{"_id": "q1", "text": "wing flutter"}\n'
        '{"_id": "007", "text": "heat"}\n'
        '{"_id": "q3", "text": "not judged"}\n'
    )
    for name, value, default in (
        ("corpus.jsonl", corpus, default_corpus),
        ("queries.jsonl", queries, default_queries),
    ):
        data = default if value is None else value
        path = root / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    (root / "qrels").mkdir(exist_ok=True)
    text = "query-id\tcorpus-id\tscore\nq1\td1\t2\n007\t0012\t1\nq1\t4\t0\n"
    (root / "qrels" / f"{split}.tsv").write_text(text if qrels is None else qrels)
    return root


def test_loads_documents_queries_and_judgments(tmp_path: Path) -> None:
    loaded = load_beir(_write(tmp_path / "c"))
    assert isinstance(loaded, BeirCollection)
    assert list(loaded.corpus) == ["d1", "0012", "d3", "4"]  # file order, ids as written
    assert loaded.corpus["d1"] == Document("Wings", "flutter of wings")
    assert loaded.corpus["4"].title == ""
    # Only judged queries, in file order; "007" stays a string.
    assert dict(loaded.queries) == {"q1": "wing flutter", "007": "heat"}
    assert loaded.qrels.to_dict() == {"q1": {"d1": 2, "4": 0}, "007": {"0012": 1}}
    assert loaded.split == "test"
    assert (
        repr(loaded) == f"BeirCollection({str(tmp_path / 'c')!r}, 4 docs, 2 queries, split 'test')"
    )


def test_the_loaded_collection_cannot_be_changed(tmp_path: Path) -> None:
    loaded = load_beir(_write(tmp_path / "c"))
    with pytest.raises(TypeError):
        loaded.corpus["new"] = Document("", "")  # type: ignore[index]
    with pytest.raises(AttributeError):
        loaded.split = "dev"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("title", "text", "content"),
    [("T", "body", "T body"), ("", "body", "body"), ("T", "", "T"), ("", "", "")],
)
def test_document_content_joins_title_and_text(title: str, text: str, content: str) -> None:
    assert Document(title, text).content == content


def test_another_split(tmp_path: Path) -> None:
    root = _write(tmp_path / "c", split="dev", qrels="query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    loaded = load_beir(root, split="dev")
    assert dict(loaded.queries) == {"q3": "not judged"}
    with pytest.raises(
        FormatError, match=r"test.tsv: missing: no qrels for split 'test'; splits here: dev"
    ):
        load_beir(root)


def test_blank_lines_and_a_byte_order_mark_are_fine(tmp_path: Path) -> None:
    corpus = b'\xef\xbb\xbf{"_id": "d1", "text": "a"}\n\n{"_id": "0012", "text": "b"}\n  \n{"_id": "4"}\n'
    loaded = load_beir(_write(tmp_path / "c", corpus=corpus))
    assert list(loaded.corpus) == ["d1", "0012", "4"]
    assert loaded.corpus["4"] == Document("", "")


@pytest.mark.parametrize(
    ("file", "content", "match"),
    [
        ("corpus", b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": \n', r"corpus.jsonl:2: not valid JSON \(Expecting value\)"),
        ("corpus", b'{"_id": "d1"}\n[1, 2]\n', r"corpus.jsonl:2: each line must be an object with an \"_id\": '\[1, 2\]'"),
        ("corpus", b'{"title": "no id"}\n', r"corpus.jsonl:1: each line must be an object with an \"_id\""),
        ("corpus", b'{"_id": ""}\n', r"corpus.jsonl:1: empty _id"),
        ("corpus", b'{"_id": "d1"}\n{"_id": "d1"}\n', r"corpus.jsonl:2: _id 'd1' appears twice"),
        ("corpus", b'{"_id": "d1", "text": "\xff"}\n', r"corpus.jsonl:1: not valid JSON \(not UTF-8\)"),
        ("corpus", b"\n\n", r"corpus.jsonl: empty: no records"),
        ("queries", b'{"_id": "q1", "text": "x"}\n', r"queries.jsonl: 1 judged queries have no text, e.g. '007' \(judged in test.tsv\)"),
        ("corpus", b'{"_id": "d1"}\n{"_id": "4"}\n', r"corpus.jsonl: 1 judged documents are not in the corpus, e.g. '0012'"),
    ],
)  # fmt: skip
def test_errors_name_the_file_and_line(
    tmp_path: Path, file: str, content: bytes, match: str
) -> None:
    root = _write(tmp_path / "c", **{file: content})  # type: ignore[arg-type]
    with pytest.raises(FormatError, match=match):
        load_beir(root)


def test_missing_parts_are_named(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"absent: not a folder; a BEIR collection is a folder"):
        load_beir(tmp_path / "absent")
    root = _write(tmp_path / "c")
    (root / "queries.jsonl").unlink()
    with pytest.raises(FormatError, match=r"queries.jsonl: missing: a BEIR collection needs it"):
        load_beir(root)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "corpus.jsonl").write_text('{"_id": "d"}\n')
    (bare / "queries.jsonl").write_text('{"_id": "q"}\n')
    with pytest.raises(FormatError, match=r"test.tsv: missing: no qrels for split 'test'$"):
        load_beir(bare)


def test_a_bad_qrels_line_is_named(tmp_path: Path) -> None:
    root = _write(tmp_path / "c", qrels="query-id\tcorpus-id\tscore\nq1\td1\tvery\n")
    with pytest.raises(FormatError, match=r"test.tsv"):
        load_beir(root)


def test_cranfield(cranfield: Path) -> None:
    loaded = load_beir(cranfield)
    assert len(loaded.corpus) == 1400
    assert len(loaded.queries) == 225
    assert len(loaded.qrels) == 1837
    assert loaded.corpus["471"] == Document("", "")  # empty in the original, kept
    assert loaded.queries["1"].startswith("what similarity laws must be obeyed")
    assert loaded.qrels.to_dict()["1"]["184"] == 3


CORPUS_ERRORS = [
    (b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": \n', r"corpus.jsonl:2: not valid JSON"),
    (b'{"_id": "d1"}\n[1, 2]\n', r"corpus.jsonl:2: each line must be an object with an \"_id\""),
    (b'{"_id": ""}\n', r"corpus.jsonl:1: empty _id"),
    (b'{"_id": "d1"}\n{"_id": "d1"}\n', r"corpus.jsonl:2: _id 'd1' appears twice"),
    (b'{"_id": "d1", "title": 3}\n', r"corpus.jsonl:1: title must be a string, not a number"),
    (b"\n\n", r"corpus.jsonl: empty: no records"),
    (b'{"_id": "d1", "text": "a \\udfff"}\n', r"corpus.jsonl:1: text holds a lone surrogate"),
    (b'{"_id": "d1", "title": "\\ud83d"}\n', r"corpus.jsonl:1: title holds a lone surrogate"),
    (b'{"_id": "d\\ud800"}\n', r"corpus.jsonl:1: _id holds a lone surrogate"),
]


def test_a_surrogate_pair_is_its_character(tmp_path: Path) -> None:
    from rankmeter.io import read_corpus

    root = _write(tmp_path / "c", corpus=b'{"_id": "e", "title": "\\ud83d\\ude00 ok"}\n')
    assert read_corpus(root / "corpus.jsonl") == {"e": Document("\U0001f600 ok", "")}


def test_read_corpus_reads_documents_in_file_order(tmp_path: Path) -> None:
    from rankmeter.io import read_corpus

    root = _write(tmp_path / "c")
    corpus = read_corpus(root / "corpus.jsonl")
    assert corpus == dict(load_beir(root).corpus)
    assert list(corpus) == ["d1", "0012", "d3", "4"]
    assert corpus["4"] == Document("", "numeric id, no title")


@pytest.mark.parametrize(("content", "match"), CORPUS_ERRORS)
def test_read_corpus_words_errors_as_load_beir(tmp_path: Path, content: bytes, match: str) -> None:
    from rankmeter.io import read_corpus

    root = _write(tmp_path / "c", corpus=content)
    with pytest.raises(FormatError, match=match) as read:
        read_corpus(root / "corpus.jsonl")
    with pytest.raises(FormatError) as loaded:
        load_beir(root)
    assert str(read.value) == str(loaded.value)


def test_read_corpus_names_a_missing_file(tmp_path: Path) -> None:
    from rankmeter.io import read_corpus

    with pytest.raises(FormatError, match=r"nothere.jsonl: no such file$"):
        read_corpus(tmp_path / "nothere.jsonl")
    with pytest.raises(FormatError, match=r": is a directory, expected a file$"):
        read_corpus(tmp_path)


# -- read_documents: only the documents asked for, in one streaming pass -----------------------


def test_read_documents_keeps_only_the_ids_asked_for(tmp_path: Path) -> None:
    from rankmeter.io.beir import read_documents

    path = _write(tmp_path / "c") / "corpus.jsonl"
    found = read_documents(path, ["4", "d1", "nowhere"])
    assert found == {
        "d1": Document("Wings", "flutter of wings"),
        "4": Document("", "numeric id, no title"),
    }
    assert list(found) == ["d1", "4"]  # file order; an id not in the corpus is left out
    assert read_documents(path, []) == {}
    assert read_documents(path, "d3") == {"d3": Document("Shells", "")}  # one id as a str
    assert read_documents(path, iter(["0012"])) == {"0012": Document("", "heat conduction")}


def test_read_documents_reads_gzip_and_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip
    import io
    import sys

    from rankmeter.io.beir import read_documents

    data = (_write(tmp_path / "c") / "corpus.jsonl").read_bytes()
    packed = tmp_path / "corpus.jsonl.gz"
    packed.write_bytes(gzip.compress(data))
    assert read_documents(packed, ["d3"]) == {"d3": Document("Shells", "")}
    stdin = io.TextIOWrapper(io.BytesIO(data))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert read_documents("-", ["0012"]) == {"0012": Document("", "heat conduction")}


def test_read_documents_takes_a_beir_folder(tmp_path: Path) -> None:
    """A collection's folder is its corpus (corpus.jsonl, or corpus.jsonl.gz); a folder with
    neither is named as such, not as 'a directory, expected a file'."""
    import gzip

    from rankmeter.io.beir import read_documents

    folder = _write(tmp_path / "c")
    assert read_documents(folder, ["d3"]) == {"d3": Document("Shells", "")}
    packed = tmp_path / "packed"
    packed.mkdir()
    (packed / "corpus.jsonl.gz").write_bytes(gzip.compress((folder / "corpus.jsonl").read_bytes()))
    assert read_documents(packed, ["d3"]) == {"d3": Document("Shells", "")}
    (tmp_path / "bare").mkdir()
    with pytest.raises(FormatError) as raised:
        read_documents(tmp_path / "bare", ["d3"])
    assert str(raised.value) == (
        f"{tmp_path / 'bare'}: a folder without corpus.jsonl or corpus.jsonl.gz; give the corpus "
        "file or a BEIR collection's folder"
    )


@pytest.mark.parametrize(("content", "match"), CORPUS_ERRORS)
def test_read_documents_words_errors_as_read_corpus(
    tmp_path: Path, content: bytes, match: str
) -> None:
    from rankmeter.io import read_corpus
    from rankmeter.io.beir import read_documents

    path = _write(tmp_path / "c", corpus=content) / "corpus.jsonl"
    with pytest.raises(FormatError, match=match) as read:
        read_documents(path, ["d1", "d2"])
    with pytest.raises(FormatError) as whole:
        read_corpus(path)
    assert str(read.value) == str(whole.value)


def test_read_documents_checks_lines_it_does_not_keep(tmp_path: Path) -> None:
    from rankmeter.io.beir import read_documents

    corpus = b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "\xff"}\n'
    path = _write(tmp_path / "c", corpus=corpus) / "corpus.jsonl"
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: not valid JSON \(not UTF-8\)"):
        read_documents(path, ["d1"])
    # A repeated id not asked for is not kept, so it is not compared; one asked for is an error.
    path.write_bytes(b'{"_id": "d1"}\n{"_id": "d2"}\n{"_id": "d2"}\n{"_id": "d1"}\n')
    assert read_documents(path, ["d3"]) == {}
    with pytest.raises(FormatError, match=r"corpus.jsonl:4: _id 'd1' appears twice"):
        read_documents(path, ["d1"])


def test_read_documents_holds_the_documents_asked_for_not_the_corpus(tmp_path: Path) -> None:
    import tracemalloc

    from rankmeter.io.beir import read_documents

    path = tmp_path / "big.jsonl"
    text = "lorem ipsum dolor sit amet " * 40  # about 1 kB a document
    with path.open("w", encoding="utf-8") as out:
        for i in range(20_000):  # about 21 MB
            out.write(json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": text}) + "\n")
    tracemalloc.start()
    try:
        found = read_documents(path, ["d5", "d19999"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(found) == ["d19999", "d5"]
    assert peak < 8_000_000, peak  # blocks of 1 MiB and two documents, not 21 MB of corpus


def test_read_documents_cranfield(cranfield: Path) -> None:
    from rankmeter.io.beir import read_documents

    found = read_documents(cranfield / "corpus.jsonl", ["184", "471", "99999"])
    assert sorted(found) == ["184", "471"]
    assert found["471"] == Document("", "")
    assert found["184"] == load_beir(cranfield).corpus["184"]
