"""`rankmeter judge serve|status|export`: bad inputs as one error line, progress, and the
exported qrels and labels table (which `rankmeter agree` reads)."""

from __future__ import annotations

import json
import sqlite3
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
