"""read_documents: only the documents asked for, in one streaming pass, every line checked."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankmeter.errors import FormatError
from rankmeter.io.beir import Document, read_corpus, read_documents


def corpus(tmp_path: Path, lines: list[str], name: str = "corpus.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_only_the_ids_asked_for_in_file_order(tmp_path: Path) -> None:
    records = [{"_id": str(i), "title": f"t{i}", "text": f"x{i}"} for i in range(50)]
    records.append({"_id": 7_000, "text": None})
    path = corpus(tmp_path, [json.dumps(r) for r in records])
    found = read_documents(path, ["30", "2", "nowhere", "7000"])
    assert list(found) == ["2", "30", "7000"]
    assert found["30"] == Document("t30", "x30")
    assert found["7000"] == Document("", "")
    whole = read_corpus(path)
    assert all(whole[k] == v for k, v in found.items())
    assert read_documents(path, "2") == {"2": Document("t2", "x2")}
    assert read_documents(path, []) == {}


def test_gzip_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"_id": "a", "text": "A"}\n\n{"_id": "b", "text": "B"}\n'))
    assert read_documents(path, {"b"}) == {"b": Document("", "B")}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"corpus.jsonl:2: not valid JSON"),
        ('{"title": "no id"}', r'corpus.jsonl:2: each line must be an object with an "_id"'),
        ('{"_id": "x", "title": 3}', r"corpus.jsonl:2: title must be a string"),
        ('{"_id": ""}', r"corpus.jsonl:2: empty _id"),
    ],
)
def test_every_line_is_checked(tmp_path: Path, line: str, message: str) -> None:
    path = corpus(tmp_path, ['{"_id": "a"}', line])
    with pytest.raises(FormatError, match=message):
        read_documents(path, ["a"])


def test_an_id_asked_for_twice_in_the_file_is_an_error(tmp_path: Path) -> None:
    path = corpus(tmp_path, ['{"_id": "a"}', '{"_id": "b"}', '{"_id": "b"}', '{"_id": "a"}'])
    with pytest.raises(FormatError, match=r"corpus.jsonl:4: _id 'a' appears twice"):
        read_documents(path, ["a"])
    assert read_documents(path, ["zzz"]) == {}  # b twice is not checked: b is not kept
