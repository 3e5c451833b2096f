"""The pool file (JSON lines, one item to judge per line): written, read back, bad lines refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankmeter.errors import FormatError
from rankmeter.io import read_pool
from rankmeter.io.pool import PoolItem
from rankmeter.report.pool import pool_text, write_pool

ITEMS = (
    PoolItem("1", "d7", {"bm25": 1, "dense": 3}, 1, 1.0),
    PoolItem("1", "d2", {"dense": 2}, 2, 1.0),
    PoolItem("10", 'dé\u00e9 "x"', {"bm25": 12}, 12, 0.25),
    PoolItem("10", "d\x7f\u2028\u202e\x1b", {"bm25 \x1b[31m": 3}, 3, 0.5),
)
GOOD = {
    "query_id": "1",
    "doc_id": "d1",
    "runs": {"bm25": 1},
    "best_rank": 1,
    "inclusion_probability": 1.0,
}


def line(**changes: object) -> str:
    record = {**GOOD, **changes}
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def test_items_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    write_pool(ITEMS, path)
    assert read_pool(path) == ITEMS
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == 4
    # Strict JSON lines: ids byte-exact where JSON allows, the controls escaped (one per line).
    assert "dé" in lines[2] and "\\u007f\\u2028\\u202e\\u001b" in lines[3]
    assert json.loads(lines[0]) == {
        "query_id": "1",
        "doc_id": "d7",
        "runs": {"bm25": 1, "dense": 3},
        "best_rank": 1,
        "inclusion_probability": 1.0,
    }
    assert pool_text(ITEMS) == path.read_text(encoding="utf-8")


def test_a_gzipped_pool_with_blank_lines_and_integer_ids_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl.gz"
    text = line(query_id=7, doc_id=12) + "\n\n" + line(doc_id="d2") + "\n"
    path.write_bytes(gzip.compress(text.encode()))
    items = read_pool(path)
    assert [(i.query_id, i.doc_id) for i in items] == [("7", "12"), ("1", "d2")]
    assert items[0].to_dict()["query_id"] == "7"


def test_an_item_reads_as_a_dict_with_its_runs_frozen() -> None:
    item = ITEMS[0]
    assert item.to_dict()["runs"] == {"bm25": 1, "dense": 3}
    with pytest.raises(TypeError):
        item.runs["bm25"] = 5  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"pool\.jsonl:2: not valid JSON \(.*\): '\{not json'"),
        ("[1, 2]", r":2: each line must be a JSON object: '\[1, 2\]'"),
        (line(runs=...), r":2: missing field 'runs' \(a pool item has query_id, doc_id, runs"),
        (line(doc_id=""), r":2: doc_id must be a non-empty string or an integer, not empty"),
        (line(query_id=None), r":2: query_id must be a non-empty string or an integer, not null"),
        (line(runs=[1]), r":2: runs must be an object \{run name: rank\} with at least one"),
        (line(runs={}), r":2: runs must be an object \{run name: rank\} with at least one"),
        (line(runs={"bm25": 0}), r":2: the rank of run 'bm25' must be an integer >= 1, not 0"),
        (line(runs={"bm25": 1.5}), r":2: the rank of run 'bm25' must be an integer >= 1, not 1.5"),
        (line(runs={"bm25": 2}), r":2: best_rank 1 is not the best of the runs' ranks \(2\)"),
        (line(best_rank=True), r":2: best_rank must be an integer >= 1, not true"),
        (line(inclusion_probability=0), r":2: inclusion_probability must be a number in \(0, 1\]"),
        (line(inclusion_probability="1"), r":2: inclusion_probability must be a number in \(0, 1"),
        (line(extra=1), r":2: unknown field 'extra' \(a pool item has query_id, doc_id, runs"),
        (line(), r":2: query '1', doc 'd1' is in the pool twice \(first on line 1\)"),
    ],
)
def test_a_bad_line_is_one_error_naming_the_file_the_line_and_its_text(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_text(line() + "\n" + text + "\n")
    with pytest.raises(FormatError, match=message) as caught:
        read_pool(path)
    assert caught.value.line == 2
    assert caught.value.path == str(path)
    assert "\n" not in str(caught.value)


def test_an_empty_pool_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(FormatError, match=r"pool\.jsonl: file is empty$"):
        read_pool(path)


def test_bytes_that_are_not_utf8_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_bytes(line().encode() + b"\n" + b'{"query_id": "\xff"}\n')
    with pytest.raises(FormatError, match=r":2: not valid JSON \(not UTF-8\)"):
        read_pool(path)
