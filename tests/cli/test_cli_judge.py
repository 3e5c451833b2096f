"""`rankmeter judge serve|status|export`: bad inputs as one error line, progress, and the
exported qrels and labels table (which `rankmeter agree` reads)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from rankmeter.io.pool import PoolItem
from rankmeter.judgments.app.store import Item, Store
from rankmeter.report.pool import write_pool

from ._cli_support import CLI, run_process

DOCS = {"q1": ["a", "b", "c"], "q2": ["a", "d"]}


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "pool": tmp_path / "pool.jsonl",
        "queries": tmp_path / "queries.tsv",
        "corpus": tmp_path / "corpus.jsonl",
        "db": tmp_path / "judgments.sqlite",
    }
    write_pool(
        [PoolItem(q, d, {"r": i}, i, 1.0) for q, ds in DOCS.items() for i, d in enumerate(ds, 1)],
        paths["pool"],
    )
    paths["queries"].write_text("q1\tfirst query\nq2\tsecond query\n")
    paths["corpus"].write_text(
        "".join(json.dumps({"_id": d, "text": f"text {d}"}) + "\n" for d in "abcd")
    )
    return paths


def serve_args(inputs: dict[str, Path], *extra: str) -> list[str]:
    return [
        "judge", "serve", str(inputs["pool"]), "--queries", str(inputs["queries"]),
        "--corpus", str(inputs["corpus"]), "--db", str(inputs["db"]), "--raters", "ann,bob",
        *extra,
    ]  # fmt: skip


@pytest.fixture
def judged(inputs: dict[str, Path]) -> Path:
    """A database where ann and bob both judged every item (overlap 1)."""
    items = [Item(q, d, "", "", "") for q, ds in DOCS.items() for d in ds]
    store = Store.create(inputs["db"], items, ["ann", "bob"], overlap=1.0, seed=0)
    ann = {("q1", "a"): 3, ("q1", "b"): 1, ("q1", "c"): None, ("q2", "a"): 2, ("q2", "d"): 0}
    bob = {("q1", "a"): 2, ("q1", "b"): 1, ("q1", "c"): None, ("q2", "a"): 3, ("q2", "d"): 0}
    for rater, grades in (("ann", ann), ("bob", bob)):
        for position in range(1, 6):
            found = store.assignment(rater, position)
            assert found is not None
            store.record(rater, position, grades[(found.item.query_id, found.item.doc_id)])
    return inputs["db"]


def test_a_pool_document_missing_from_the_corpus(cli: CLI, inputs: dict[str, Path]) -> None:
    inputs["corpus"].write_text("".join(json.dumps({"_id": d, "text": "t"}) + "\n" for d in "abc"))
    message = cli(*serve_args(inputs)).assert_one_error_line(1)
    assert message == (
        f"{inputs['corpus']}: document 'd' of the pool {inputs['pool']} (query 'q2') is not in "
        "the corpus"
    )
    assert not inputs["db"].exists()


def test_a_pool_query_without_text(cli: CLI, inputs: dict[str, Path]) -> None:
    inputs["queries"].write_text("q1\tfirst query\n")
    message = cli(*serve_args(inputs)).assert_one_error_line(1)
    assert message.endswith(f"query 'q2' of the pool {inputs['pool']} has no text here")


def test_serve_refuses_a_database_it_did_not_make(cli: CLI, inputs: dict[str, Path]) -> None:
    with sqlite3.connect(inputs["db"]) as db:
        db.execute("CREATE TABLE mine (x)")
    message = cli(*serve_args(inputs)).assert_one_error_line(1)
    assert message.startswith(f"{inputs['db']}: not a rankmeter judgments database")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--scale", "3"], "scale='3' must be LOW-HIGH"),
        (["--overlap", "2"], "overlap=2.0 must be a share between 0 and 1"),
        (["--guidelines", "/nonexistent/guide.md"], "/nonexistent/guide.md: cannot read"),
    ],
)
def test_serve_bad_options(
    cli: CLI, inputs: dict[str, Path], extra: list[str], message: str
) -> None:
    code = 1 if "guide.md" in message else 2  # usage (a PolicyError) or a file (FormatError)
    assert message in cli(*serve_args(inputs, *extra)).assert_one_error_line(code)


def test_status(cli: CLI, judged: Path) -> None:
    result = cli("judge", "status", "--db", str(judged))
    assert result.code == 0, result.err
    rows = [
        [cell for cell in line.split() if cell != "│"][:5]
        for line in result.out.splitlines()
        if line.startswith("│")
    ]
    assert rows == [["ann", "5", "5", "100%", "1"], ["bob", "5", "5", "100%", "1"]]


def test_status_of_a_text_file(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("not sqlite at all " * 100)
    message = cli("judge", "status", "--db", str(path)).assert_one_error_line(1)
    assert message.startswith(f"{path}: not a rankmeter judgments database")


@pytest.mark.parametrize(
    ("resolve", "expected"),
    [
        ("majority", "q1 0 a 2\nq1 0 b 1\nq2 0 a 2\nq2 0 d 0\n"),
        ("mean", "q1 0 a 3\nq1 0 b 1\nq2 0 a 3\nq2 0 d 0\n"),
    ],
)
def test_export_qrels(cli: CLI, judged: Path, tmp_path: Path, resolve: str, expected: str) -> None:
    out = tmp_path / "qrels.txt"
    result = cli("judge", "export", "--db", str(judged), "--resolve", resolve, "-o", str(out))
    assert result.code == 0, result.err
    assert out.read_text() == expected


def test_export_to_stdout(cli: CLI, judged: Path) -> None:
    result = cli("judge", "export", "--db", str(judged))
    assert result.out == "q1 0 a 2\nq1 0 b 1\nq2 0 a 2\nq2 0 d 0\n"


def test_exported_labels_are_what_agree_reads(cli: CLI, judged: Path, tmp_path: Path) -> None:
    qrels, labels = tmp_path / "qrels.txt", tmp_path / "labels.csv"
    result = cli("judge", "export", "--db", str(judged), "-o", str(qrels), "--labels", str(labels))
    assert result.code == 0, result.err
    rows = labels.read_text().splitlines()
    assert rows[0] == "query_id,doc_id,rater,label"
    assert sorted(rows[1:]) == sorted([
        "q1,a,ann,3", "q1,a,bob,2", "q1,b,ann,1", "q1,b,bob,1",
        "q2,a,ann,2", "q2,a,bob,3", "q2,d,ann,0", "q2,d,bob,0",
    ])  # fmt: skip
    agreed = cli("agree", str(labels), "--scale", "0-3", "--format", "json", "--resamples", "50")
    assert agreed.code == 0, agreed.err
    report = json.loads(agreed.out)
    assert report["raters"] == ["ann", "bob"]
    assert report["pairs"][0]["shared_items"] == 4
    assert report["pairs"][0]["raw_agreement"] == 0.5


@pytest.mark.parametrize("suffix", [".parquet", ".pq"])
def test_exported_parquet_labels_agree_as_the_csv_does(
    cli: CLI, judged: Path, tmp_path: Path, suffix: str
) -> None:
    as_csv, as_parquet = tmp_path / "labels.csv", tmp_path / f"labels{suffix}"
    for labels in (as_csv, as_parquet):
        result = cli("judge", "export", "--db", str(judged), "-o", "-", "--labels", str(labels))
        assert result.code == 0, result.err
    assert as_parquet.read_bytes()[:4] == b"PAR1"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["judgments.sqlite", "labels.csv", as_parquet.name, "pool.jsonl", "queries.tsv",
         "corpus.jsonl"]
    )  # fmt: skip
    reports = [
        cli("agree", str(path), "--scale", "0-3", "--format", "json", "--resamples", "50")
        for path in (as_csv, as_parquet)
    ]
    assert [r.code for r in reports] == [0, 0], [r.err for r in reports]
    from_csv, from_parquet = (json.loads(r.out) for r in reports)
    assert from_csv["pairs"][0]["shared_items"] == 4
    assert from_parquet.pop("source") == str(as_parquet)
    assert from_csv.pop("source") == str(as_csv)
    assert from_parquet == from_csv


def test_export_adjudicated(cli: CLI, judged: Path, tmp_path: Path) -> None:
    # ann and bob disagree on q1/a (3, 2) and q2/a (2, 3): the adjudicator's grade settles them.
    out = tmp_path / "qrels.txt"
    args = ["judge", "export", "--db", str(judged), "-o", str(out), "--resolve", "adjudicated"]
    result = cli(*args, "--adjudicator", "bob")
    assert result.code == 0, result.err
    assert out.read_text() == "q1 0 a 2\nq1 0 b 1\nq2 0 a 3\nq2 0 d 0\n"
    assert result.err == ""


def test_export_adjudicated_warns_of_disputes_left_out(cli: CLI, tmp_path: Path) -> None:
    db = tmp_path / "three.sqlite"
    items = [Item(q, d, "", "", "") for q, ds in DOCS.items() for d in ds]
    store = Store.create(db, items, ["ann", "bob", "cy"], overlap=1.0, seed=0)
    grades = {
        "ann": {("q1", "a"): 3, ("q1", "c"): 1, ("q2", "a"): 2},
        "bob": {("q1", "a"): 2, ("q1", "b"): 1, ("q1", "c"): 1, ("q2", "d"): 0},
        "cy": {("q1", "b"): 2, ("q2", "a"): 0, ("q2", "d"): 0},
    }
    for rater, given in grades.items():
        assigned = [store.assignment(rater, p) for p in range(1, len(given) + 2)]
        found = [(a.item.query_id, a.item.doc_id, a.position) for a in assigned if a is not None]
        assert {(q, d) for q, d, _ in found} == set(given)  # the split this seed makes
        for query_id, doc_id, position in found:
            store.record(rater, position, given[(query_id, doc_id)])
    out = tmp_path / "qrels.txt"
    result = cli(
        "judge", "export", "--db", str(db), "-o", str(out), "--resolve", "adjudicated",
        "--adjudicator", "cy",
    )  # fmt: skip
    assert result.code == 0, result.err
    # q1/a is disputed (3, 2) and cy has not graded it: left out, and said so.
    assert out.read_text() == "q1 0 b 2\nq1 0 c 1\nq2 0 a 0\nq2 0 d 0\n"
    assert result.err.splitlines() == [
        "warning: 1 disputed item has no grade from the adjudicator 'cy' and is left out of "
        "the qrels; see rankmeter judge status"
    ]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--resolve", "adjudicated"], "resolve 'adjudicated' needs an adjudicator"),
        (["--adjudicator", "bob"], "an adjudicator ('bob') is given but resolve is 'majority'"),
        (
            ["--resolve", "adjudicated", "--adjudicator", "cy"],
            "--adjudicator 'cy' is not a rater of this database (its raters: ann, bob)",
        ),
    ],
)
def test_export_adjudicator_usage(cli: CLI, judged: Path, extra: list[str], expected: str) -> None:
    message = cli("judge", "export", "--db", str(judged), *extra).assert_one_error_line(2)
    assert expected in message


def test_export_checks_its_outputs_first(cli: CLI, judged: Path, tmp_path: Path) -> None:
    same = tmp_path / "out.txt"
    message = cli(
        "judge", "export", "--db", str(judged), "-o", str(same), "--labels", str(same)
    ).assert_one_error_line(2)
    assert "are the same file" in message


def test_serve_an_empty_rater_name(cli: CLI, inputs: dict[str, Path]) -> None:
    args = serve_args(inputs)
    args[args.index("ann,bob")] = "ann,,bob"
    assert cli(*args).assert_one_error_line(2) == "--raters 'ann,,bob' has an empty name"


def test_serve_an_empty_pool(cli: CLI, inputs: dict[str, Path]) -> None:
    inputs["pool"].write_text("")
    message = cli(*serve_args(inputs)).assert_one_error_line(1)
    assert message == f"{inputs['pool']}: file is empty"


def test_serve_on_a_port_in_use(inputs: dict[str, Path]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_process([*serve_args(inputs), "--port", str(port)])
    message = result.assert_one_error_line(2)
    assert message.startswith(f"cannot listen on 127.0.0.1:{port}: ")


def test_serve_refuses_a_restart_with_other_options_or_texts(
    cli: CLI, inputs: dict[str, Path]
) -> None:
    """Issue 22, item 9: a restart with another --overlap, --seed or corpus kept the old
    assignments and texts in silence."""
    items = [Item(q, d, t, "", f"text {d}") for q, ds in DOCS.items() for d in ds
             for t in [{"q1": "first query", "q2": "second query"}[q]]]  # fmt: skip
    Store.create(inputs["db"], items, ["ann", "bob"], overlap=0.4, seed=7)
    before = inputs["db"].read_bytes()
    message = cli(*serve_args(inputs, "--overlap", "0.4")).assert_one_error_line(2)
    assert message == (
        f"{inputs['db']} was made with --seed 7, not 0: its items were assigned with it; give "
        "--seed 7, or a new --db"
    )
    message = cli(*serve_args(inputs, "--seed", "7")).assert_one_error_line(2)
    assert message.startswith(f"{inputs['db']} was made with --overlap 0.4, not 0.0: ")
    inputs["corpus"].write_text(
        "".join(json.dumps({"_id": d, "text": f"new text {d}"}) + "\n" for d in "abcd")
    )
    message = cli(*serve_args(inputs, "--seed", "7", "--overlap", "0.4")).assert_one_error_line(2)
    assert message == (
        f"{inputs['db']} was made from other texts: the text of document 'a' in --corpus "
        "differs from the one the raters were shown; give the same --corpus, or a new --db "
        "for the new texts"
    )
    assert inputs["db"].read_bytes() == before


def test_serve_status_and_export_refuse_a_fifo(cli: CLI, inputs: dict[str, Path]) -> None:
    """Issue 22, item 10: a FIFO as --db was an internal error (exit 70)."""
    fifo = inputs["db"].with_name("fifo.sqlite")
    os.mkfifo(fifo)
    args = serve_args(inputs)
    args[args.index(str(inputs["db"]))] = str(fifo)
    for command in (args, ["judge", "status", "--db", str(fifo)],
                    ["judge", "export", "--db", str(fifo)]):  # fmt: skip
        message = run_process(command).assert_one_error_line(1)
        assert message == (
            f"{fifo}: not a rankmeter judgments database (a FIFO): give the SQLite file that "
            "`rankmeter judge serve` made, or a new file name"
        )


def test_status_and_export_of_a_damaged_database(cli: CLI, judged: Path) -> None:
    """Issue 22, item 10: a corrupted database was an internal error (exit 70)."""
    data = bytearray(judged.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)
    judged.write_bytes(bytes(data))
    for command in ("status", "export"):
        message = cli("judge", command, "--db", str(judged)).assert_one_error_line(1)
        assert message.startswith(f"{judged}: cannot use the judgments database (SQLite says: ")


def test_status_and_export_read_a_read_only_database(
    cli: CLI, judged: Path, tmp_path: Path
) -> None:
    """Issue 22, item 10: a read-only database was "not a rankmeter judgments database"."""
    from _read_only import read_only_file

    before = judged.read_bytes()
    with read_only_file(judged):
        status = cli("judge", "status", "--db", str(judged))
        assert status.code == 0, status.err
        assert "ann" in status.out and "100%" in status.out
        exported = cli("judge", "export", "--db", str(judged))
        assert exported.code == 0, exported.err
        assert exported.out == "q1 0 a 2\nq1 0 b 1\nq2 0 a 2\nq2 0 d 0\n"
    assert judged.read_bytes() == before


HOSTILE_DOC = "d\x1b]0;PWNED\x07\x1b[2J"


def at_a_terminal(args: list[str]) -> tuple[int, bytes]:
    """Run the command with its stdout a pseudo-terminal (isatty() true); its status and output."""
    master, slave = os.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", "from rankmeter.cli import main; main()", *args],
            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(slave)
        out = bytearray()
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        return child.wait(timeout=60), bytes(out)
    finally:
        os.close(master)


def test_export_escapes_control_bytes_at_a_terminal(tmp_path: Path) -> None:
    """Issue 22, item 12: `judge export` printed a doc id's control bytes raw at a terminal (it
    set the title and cleared the screen); in a file they stay exact."""
    db = tmp_path / "j.sqlite"
    store = Store.create(db, [Item("q1", HOSTILE_DOC, "", "", "")], ["ann"])
    store.record("ann", 1, 2)
    code, out = at_a_terminal(["judge", "export", "--db", str(db)])
    assert code == 0, out
    assert b"\x1b" not in out and b"\x07" not in out
    assert out == b"q1 0 d\\x1b]0;PWNED\\x07\\x1b[2J 2\r\n"
    qrels, labels = tmp_path / "qrels.txt", tmp_path / "labels.csv"
    done = run_process(["judge", "export", "--db", db, "-o", qrels, "--labels", labels])
    assert done.code == 0, done.err
    assert qrels.read_text() == f"q1 0 {HOSTILE_DOC} 2\n"
    assert HOSTILE_DOC in labels.read_text()


FORMULAS = ['=HYPERLINK("http://evil","x")', "+1+1", "-2+3", "@SUM(A1)", "'=quoted", "''", "'plain"]


def test_exported_labels_are_safe_in_a_spreadsheet_and_read_back_exactly(
    cli: CLI, tmp_path: Path
) -> None:
    """Issue 22, item 12: the labels CSV was open to formula injection. A text cell that a
    spreadsheet reads as a formula gets a leading apostrophe; `rankmeter agree` removes it."""
    import csv

    db = tmp_path / "j.sqlite"
    items = [Item("=q1", doc, "", "", "") for doc in [*FORMULAS, "d-plain"]]
    store = Store.create(db, items, ["-ann", "@bob"], overlap=1.0, seed=0)
    for rater in ("-ann", "@bob"):
        for position in range(1, len(items) + 1):
            found = store.assignment(rater, position)
            assert found is not None
            store.record(rater, position, position % 4)
    labels = tmp_path / "labels.csv"
    result = cli("judge", "export", "--db", str(db), "-o", str(tmp_path / "q.txt"),
                 "--labels", str(labels))  # fmt: skip
    assert result.code == 0, result.err
    with labels.open(newline="") as file:
        rows = list(csv.reader(file))[1:]
    cells = [cell for row in rows for cell in row[:3]]
    assert all(cell[:1] not in "=+-@" for cell in cells), cells  # no cell starts a formula
    assert {row[0] for row in rows} == {"'=q1"}
    assert {row[2] for row in rows} == {"'-ann", "'@bob"}
    assert {row[1] for row in rows} == {
        "'=HYPERLINK(\"http://evil\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "''=quoted", "'''",
        "'plain", "d-plain",
    }  # fmt: skip
    assert {row[3] for row in rows} == {"0", "1", "2", "3"}  # numbers stay numbers
    from rankmeter.io import as_labels

    read = as_labels(str(labels), scale="0-3")
    assert set(read.raters.tolist()) == {"-ann", "@bob"}
    assert set(read.doc_ids.tolist()) == {*FORMULAS, "d-plain"}
    assert set(read.query_ids.tolist()) == {"=q1"}
    agreed = cli("agree", str(labels), "--scale", "0-3", "--format", "json", "--resamples", "20")
    assert agreed.code == 0, agreed.err
    report = json.loads(agreed.out)
    assert report["raters"] == ["-ann", "@bob"]
    assert report["pairs"][0]["shared_items"] == len(items)
    assert report["pairs"][0]["raw_agreement"] == 1.0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--scale", "0-99999999999999999999"], "must be LOW-HIGH"),
        (["--scale", "0-3000000"], "a grade must lie between -1000000 and 1000000"),
        (["--scale", "0-101"], "scale 0-101 has 102 grades: at most 101"),
        (["--scale", "\uff10-3"], "(ASCII digits)"),
        (["--port", "70000"], "--port 70000 must be a port number from 0 to 65535"),
        (["--port", "-1"], "--port -1 must be a port number from 0 to 65535"),
        (["--seed", "-1"], "seed=-1 must be an integer >= 0 (the seed of the random number"),
        (["--raters", "a b,c"], "rater name 'a b' holds whitespace or control characters"),
        (["--raters", "n\nl,b"], r"rater name 'n\nl' holds whitespace"),
        (["--raters", "\x1b]0;X\x07,b"], r"rater name '\x1b]0;X\x07' holds whitespace"),
    ],
)
def test_serve_refuses_an_option_out_of_range_before_writing(
    cli: CLI, inputs: dict[str, Path], extra: list[str], message: str
) -> None:
    """Issue 22, fix-app items 4-6 and 8: these were "internal error" (exit 70) or accepted,
    each leaving a database behind (a 0-byte one for --seed -1)."""
    result = cli(*serve_args(inputs, *extra))
    assert message in result.assert_one_error_line(2)
    assert "\x1b" not in result.err
    assert not inputs["db"].exists()
    assert list(inputs["db"].parent.glob("*.tmp")) == []


def test_serve_on_a_port_in_use_leaves_no_database(cli: CLI, inputs: dict[str, Path]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = cli(*serve_args(inputs, "--host", "127.0.0.1", "--port", str(port)))
        assert f"cannot listen on 127.0.0.1:{port}" in result.assert_one_error_line(2)
    assert not inputs["db"].exists()


def test_serve_refuses_an_empty_file_as_database(cli: CLI, inputs: dict[str, Path]) -> None:
    """An empty file is not a database `judge serve` made (e.g. one a failed run left): it was
    silently taken over."""
    inputs["db"].write_bytes(b"")
    message = cli(*serve_args(inputs)).assert_one_error_line(1)
    assert message.startswith(f"{inputs['db']}: an empty file, not a rankmeter judgments database")
    assert inputs["db"].read_bytes() == b""


def test_export_of_ids_with_whitespace_writes_the_labels(cli: CLI, tmp_path: Path) -> None:
    """Issue 22, fix-app item 7: nothing could be written, with advice to give --labels even
    when it was given, exit 2."""
    db = tmp_path / "j.sqlite"
    store = Store.create(db, [Item("q 1", "d1", "", "", "")], ["ann"])
    store.record("ann", 1, 2)
    labels, qrels = tmp_path / "labels.csv", tmp_path / "qrels.txt"
    result = cli("judge", "export", "--db", str(db), "-o", str(qrels), "--labels", str(labels))
    message = result.assert_one_error_line(1)
    assert message == (
        f"{db}: query 'q 1', doc 'd1' holds whitespace, which TREC qrels cannot hold: the labels "
        f"were written to {labels} (--labels), the qrels nowhere"
    )
    assert labels.read_text() == "query_id,doc_id,rater,label\nq 1,d1,ann,2\n"
    assert not qrels.exists()
    alone = cli("judge", "export", "--db", str(db)).assert_one_error_line(1)
    assert alone.endswith("export the labels alone as a table with --labels FILE (CSV or Parquet)")


def test_status_and_export_report_a_page_damaged_where_they_do_not_read(
    cli: CLI, judged: Path
) -> None:
    """Issue 22, fix-app minor: `judge status` printed its table, exit 0, over a database whose
    integrity check fails (a page of the raters' token index made invalid)."""
    with closing(sqlite3.connect(judged)) as db:
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_raters_2'"
        ).fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
    data = bytearray(judged.read_bytes())
    data[(root - 1) * size] = 0  # no valid page type
    judged.write_bytes(bytes(data))
    for command in ("status", "export"):
        message = cli("judge", command, "--db", str(judged)).assert_one_error_line(1)
        assert message.startswith(f"{judged}: cannot use the judgments database (SQLite says: ")
        assert "it is damaged" in message
