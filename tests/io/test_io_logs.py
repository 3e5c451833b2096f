"""rankmeter.io.logs: search-log files found by name, CSV and JSONL read into Arrow with each
row's file line, every bad line named by path, line and text, and the log writer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankmeter.errors import FormatError, PolicyError
from rankmeter.io.logs import (
    LOG_SUFFIXES,
    log_files,
    log_format,
    log_read_error,
    read_log_text,
    write_log_file,
)


def test_log_files_by_suffix_and_folder(tmp_path: Path) -> None:
    for suffix, kind in LOG_SUFFIXES.items():
        path = tmp_path / f"log{suffix.upper()}"
        path.write_bytes(b"")
        files = log_files(path)
        assert (files.name, files.kind, files.files, files.is_folder) == (
            str(path),
            kind,
            (path,),
            False,
        )
    folder = tmp_path / "parts"
    folder.mkdir()
    for name in ("b.parquet", "a.pq", "notes.txt"):
        (folder / name).write_bytes(b"")
    files = log_files(folder)
    assert (files.kind, files.is_folder) == ("parquet", True)
    assert [p.name for p in files.files] == ["a.pq", "b.parquet"]


def test_log_files_refuses_what_is_no_log(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"nothing\.csv: no such file: give the path"):
        log_files(tmp_path / "nothing.csv")
    (tmp_path / "log.txt").write_text("x")
    with pytest.raises(FormatError, match=r"cannot tell the log's format from the suffix '\.txt'"):
        log_files(tmp_path / "log.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match=r"empty: the folder holds no \.parquet files"):
        log_files(tmp_path / "empty")


def test_log_format_names_the_writable_formats() -> None:
    assert [log_format(f"x{s}") for s in (".parquet", ".CSV", ".ndjson")] == [
        "parquet",
        "csv",
        "jsonl",
    ]
    with pytest.raises(PolicyError, match=r"x: a log's name says its format, and it has no suffix"):
        log_format("x")


def test_csv_keeps_text_columns_and_counts_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text('user_id,note,n\n007,plain,1\n\n008,"two\nlines",2\n009,,nan\n')
    table, lines = read_log_text(path, "csv", ["user_id"])
    assert table.column("user_id").to_pylist() == ["007", "008", "009"]
    assert table.column("note").to_pylist() == ["plain", "two\nlines", None]
    assert str(table.column("n").to_pylist()[2]) == "nan"  # "nan" is a value, not missing
    assert lines.dtype == "int64"
    assert lines.tolist() == [2, 4, 6]


def test_jsonl_lines_skip_blank_lines_and_texts_are_made_text(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    rows = [{"user_id": 7, "position": 1}, {"user_id": 8, "position": 2}]
    path.write_text("\n" + json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    table, lines = read_log_text(path, "jsonl", ["user_id"])
    assert table.column("user_id").to_pylist() == ["7", "8"]
    assert table.column("position").type == pa.int64()
    assert lines.tolist() == [2, 4]


def test_jsonl_mixed_types_become_text_at_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"position": 1}\n\n{"position": "x"}\n{"position": [2]}\n')
    table, lines = read_log_text(path, "jsonl", [])
    assert table.column("position").to_pylist() == ["1", "x", "[2]"]
    assert lines.tolist() == [1, 3, 4]


@pytest.mark.parametrize(
    ("kind", "data", "line", "reason", "text"),
    [
        ("jsonl", b'{"a": 1}\n{"a": 2,,}\n', 2, "not a JSON object: Expecting", '{"a": 2,,}'),
        ("jsonl", b'{"a": 1}\n[1, 2]\n', 2, "not a JSON object: each line holds one", "[1, 2]"),
        ("jsonl", b'{"a": "x"}\n{"a": "caf\xe9"}\n', 2, "not UTF-8 text (byte 0xe9)", '{"a": "caf'),
        ("csv", b"a,b\n1,2\n3,caf\xe9\n", 3, "not UTF-8 text (byte 0xe9)", "3,caf"),
        (
            "csv",
            b'a,b\n1,2\n"x\ny",3\n3,4,5\n',
            5,
            "expected 2 CSV fields as in the header",
            "3,4,5",
        ),
        ("csv", b"a,b\r\n1\r\n", 2, "expected 2 CSV fields as in the header, found 1", "1"),
    ],
)
def test_a_bad_line_is_named_by_path_line_and_text(
    kind: str, data: bytes, line: int, reason: str, text: str, tmp_path: Path
) -> None:
    path = tmp_path / f"log.{kind}"
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        read_log_text(path, kind, [])
    error = caught.value
    assert (error.path, error.line) == (str(path), line)
    assert error.reason.startswith(reason)
    assert error.text is not None and error.text.startswith(text)
    assert str(error).startswith(f"{path}:{line}: {reason}")


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_an_empty_file_has_no_columns_in_either_format(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"log.{kind}"
    path.write_bytes(b"\n\n")
    table, lines = read_log_text(path, kind, ["user_id"])
    assert (table.num_columns, table.num_rows, lines.tolist()) == (0, 0, [])


def test_unreadable_files_have_one_wording() -> None:
    assert str(log_read_error("x.pq", "parquet", OSError("bad\n  magic"))) == (
        "x.pq: cannot read it as Parquet: bad magic"
    )
    assert str(log_read_error("x.jsonl", "jsonl", ValueError("no"))) == (
        "x.jsonl: cannot read it as JSONL: no"
    )


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_written_log_reads_back(suffix: str, tmp_path: Path) -> None:
    table = pa.table({"user_id": ["u1", "u2"], "position": [1, 2], "dwell_ms": [None, 2.5]})
    path = tmp_path / f"log{suffix}"
    write_log_file(table, path)
    if suffix == ".parquet":
        back = pq.read_table(path)
    else:
        back, lines = read_log_text(path, log_format(path), ["user_id"])
        assert lines.tolist() == ([2, 3] if suffix == ".csv" else [1, 2])
    assert back.to_pylist() == table.to_pylist()


def test_writing_refuses_a_name_without_a_format(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=re.escape("its suffix '.txt' names none")):
        write_log_file(pa.table({"a": [1]}), tmp_path / "log.txt")
    assert not (tmp_path / "log.txt").exists()
