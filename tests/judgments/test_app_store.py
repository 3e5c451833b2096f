"""The rating app's SQLite store: WAL mode, durable labels, one row per (item, rater), the
split of items between raters, and files that are not a judgments database refused."""

from __future__ import annotations

import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from _app_support import items, make_store
from _read_only import read_only_file

from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments.app.export import resolve
from rankmeter.judgments.app.store import Label, Store, assign, parse_scale


def test_wal_mode_and_full_sync(tmp_path: Path) -> None:
    store = make_store(tmp_path / "j.sqlite")
    assert store.journal_mode() == "wal"
    with sqlite3.connect(store.path) as db:  # WAL is a property of the file itself
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_item_is_assigned_and_the_overlap_is_shared(tmp_path: Path) -> None:
    store = make_store(tmp_path / "j.sqlite", raters=("a", "b", "c"), overlap=0.5, seed=1)
    progress = store.progress()
    n = len(items())
    assert sum(p.assigned for p in progress) == n + round(0.5 * n)
    assert max(p.assigned for p in progress) - min(p.assigned for p in progress) <= 2


def test_assign_is_seeded() -> None:
    raters = ["a", "b", "c"]
    assert assign(50, raters, overlap=0.2, seed=4) == assign(50, raters, overlap=0.2, seed=4)
    assert assign(50, raters, overlap=0.2, seed=4) != assign(50, raters, overlap=0.2, seed=5)
    pairs = assign(50, raters, overlap=0.2, seed=4)
    assert len(pairs) == 60 and len(set(pairs)) == 60
    assert {i for _, i in pairs} == set(range(50))


def test_a_label_is_one_row_per_item_and_rater(tmp_path: Path) -> None:
    store = make_store(tmp_path / "j.sqlite")
    assert store.record("alice", 1, 2, seconds=4.5)
    assert store.record("alice", 1, 2, seconds=4.5)
    assert store.record("alice", 1, None)
    (label,) = store.labels()
    assert (label.rater, label.grade) == ("alice", None)
    assert store.progress()[0].cant_judge == 1
    assert not store.record("alice", 999, 1)  # not alice's item
    with pytest.raises(PolicyError, match=r"grade=4 must be on the scale 0-3"):
        store.record("alice", 1, 4)


def test_reopening_keeps_labels_and_tokens(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    first = make_store(path)
    first.record("bob", 1, 3)
    again = make_store(path)
    assert again.raters() == first.raters()
    assert [(lab.rater, lab.grade) for lab in again.labels()] == [("bob", 3)]


def test_reopening_with_other_raters_or_pool_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    make_store(path)
    with pytest.raises(PolicyError, match=r"was made for the raters alice, bob: give the same"):
        make_store(path, raters=("alice", "carol"))
    with pytest.raises(PolicyError, match=r"holds the labels of another pool \(6 items\)"):
        Store.create(path, items()[:2], ["alice", "bob"])
    with pytest.raises(PolicyError, match=r"was made with --scale 0-3: give that scale"):
        make_store(path, scale=(1, 5))


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE things (x)")
    with pytest.raises(FormatError, match=r"other\.sqlite: not a rankmeter judgments database"):
        Store(path)
    with pytest.raises(FormatError, match=r"not a rankmeter judgments database"):
        make_store(path)
    with sqlite3.connect(path) as db:  # untouched
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("things",)]


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 20)
    with pytest.raises(FormatError, match=r"notes\.txt: not a rankmeter judgments database"):
        Store(path)
    assert path.read_text().startswith("these are my notes")


def test_a_missing_database(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"no such database: `rankmeter judge serve --db`"):
        Store(tmp_path / "absent.sqlite")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"overlap": 1.5}, r"overlap=1\.5 must be a share between 0 and 1"),
        ({"raters": ("solo",), "overlap": 0.2}, r"overlap needs two raters or more"),
        ({"raters": ("a", "a")}, r"rater 'a' is named twice"),
        ({"raters": ()}, r"no raters"),
        ({"items": []}, r"the pool is empty: there is nothing to judge"),
    ],
)
def test_bad_options(tmp_path: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        if "items" in options:
            Store.create(tmp_path / "j.sqlite", [], ["ann"])
        make_store(tmp_path / "j.sqlite", **options)  # type: ignore[arg-type]


def test_qrels_cannot_hold_ids_with_whitespace() -> None:
    from rankmeter.judgments.app.export import check_trec_ids

    labels = [Label("q 1", "d1", "ann", 2, 0.0, 1.0)]
    grades = resolve(labels)  # a grade per item, whatever its ids
    with pytest.raises(
        FormatError, match=r"^j.sqlite: query 'q 1', doc 'd1' holds whitespace, which TREC .*: do"
    ):
        check_trec_ids(grades, "j.sqlite", advice="do")


def test_resolve_names_its_choices() -> None:
    with pytest.raises(
        PolicyError, match=r"resolve='median' must be one of 'majority', 'mean', 'adjudicated'"
    ):
        resolve([], "median")


def test_seconds_spent_are_kept_and_capped(tmp_path: Path) -> None:
    store = make_store(tmp_path / "j.sqlite")
    store.record("alice", 1, 1, seconds=12.5)
    store.record("alice", 2, 1, seconds=-3)
    store.record("bob", 1, 1, seconds=1e9)
    assert sorted(lab.seconds for lab in store.labels()) == [0.0, 12.5, 3600.0]


def test_a_scale_below_zero(tmp_path: Path) -> None:
    store = make_store(tmp_path / "j.sqlite", scale=(-2, 2))
    assert store.scale == (-2, 2)
    assert store.record("alice", 1, -2)
    with pytest.raises(PolicyError, match=r"grade=3 must be on the scale -2-2"):
        store.record("alice", 1, 3)


def test_reopening_with_another_overlap_seed_or_texts_is_refused(tmp_path: Path) -> None:
    """Issue 22, item 9: a restart with another --overlap, --seed or corpus kept the old
    assignments and texts in silence; it says what differs and refuses."""
    from dataclasses import replace

    path = tmp_path / "j.sqlite"
    make_store(path, overlap=0.5, seed=3)
    before = path.read_bytes()
    with pytest.raises(
        PolicyError, match=r"was made with --overlap 0\.5, not 0\.2: .*give --overlap 0\.5"
    ):
        make_store(path, overlap=0.2, seed=3)
    with pytest.raises(
        PolicyError, match=r"was made with --seed 3, not 4: .*give --seed 3, or a new --db"
    ):
        make_store(path, overlap=0.5, seed=4)
    changed = items()
    changed[3] = replace(changed[3], doc_text="Another text of d4.")
    with pytest.raises(PolicyError, match=r"the text of document 'd4' in --corpus differs"):
        Store.create(path, changed, ["alice", "bob"], overlap=0.5, seed=3)
    changed = items()
    changed[0] = replace(changed[0], query_text="another query")
    with pytest.raises(PolicyError, match=r"the text of query 'q1' in --queries differs"):
        Store.create(path, changed, ["alice", "bob"], overlap=0.5, seed=3)
    changed = items()
    changed[3] = replace(changed[3], doc_title="Another title")
    with pytest.raises(PolicyError, match=r"the title of document 'd4' in --corpus differs"):
        Store.create(path, changed, ["alice", "bob"], overlap=0.5, seed=3)
    assert path.read_bytes() == before
    make_store(path, overlap=0.5, seed=3)  # the same inputs and options: served as before


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_a_foreign_sqlite_file_is_left_byte_for_byte(tmp_path: Path, journal: str) -> None:
    """Issue 22, item 10: a foreign SQLite file was refused but first switched to WAL."""
    path = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA journal_mode={journal}")
        db.execute("CREATE TABLE things (x)")
        db.execute("INSERT INTO things VALUES (1)")
        db.commit()
    before = _sha(path)
    listing = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(FormatError, match=r"other\.sqlite: not a rankmeter judgments database"):
        Store(path)
    with pytest.raises(FormatError, match=r"not a rankmeter judgments database"):
        make_store(path)
    assert _sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # no -wal, no -shm
    with pytest.raises(FormatError, match=r"not a rankmeter judgments database"):
        Store(path, read_only=True)
    assert _sha(path) == before


def test_a_fifo_is_refused_with_one_line(tmp_path: Path) -> None:
    """Issue 22, item 10: a FIFO as --db was an internal error."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    for make in (
        lambda: Store(path),
        lambda: make_store(path),
        lambda: Store(path, read_only=True),
    ):
        with pytest.raises(
            FormatError, match=r"pipe: not a rankmeter judgments database \(a FIFO\)"
        ):
            make()


def test_a_damaged_database_is_one_error_naming_it(tmp_path: Path) -> None:
    """Issue 22, item 10: a corrupted database was an internal error."""
    path = tmp_path / "j.sqlite"
    store = make_store(path)
    store.record("alice", 1, 2)
    data = bytearray(path.read_bytes())
    page = 4096 if len(data) > 8192 else 1024
    data[page : len(data)] = b"\xa5" * (len(data) - page)  # every page after the first
    path.write_bytes(bytes(data))
    for read_only in (False, True):
        with pytest.raises(
            FormatError,
            match=r"j\.sqlite: cannot use the judgments database \(SQLite says: .*\): is it damaged",
        ):
            Store(path, read_only=read_only).labels()


def test_a_read_only_database_is_read(tmp_path: Path) -> None:
    """Issue 22, item 10: a read-only database was 'not a rankmeter judgments database'; status
    and export read it (read-only), changing nothing."""
    path = tmp_path / "j.sqlite"
    store = make_store(path)
    store.record("alice", 1, 2)
    before = _sha(path)
    with read_only_file(path):
        with pytest.raises(OSError):
            path.open("ab").close()  # truly read-only, even for root
        reader = Store(path, read_only=True)
        assert [(lab.rater, lab.grade) for lab in reader.labels()] == [("alice", 2)]
        assert [p.judged for p in reader.progress()] == [1, 0]
        with pytest.raises(
            FormatError,
            match=r"j\.sqlite: cannot use the judgments database \(SQLite says: attempt to write a readonly database\)",
        ):
            reader.record("alice", 2, 1)
    assert _sha(path) == before


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        (
            "grade",
            "'three'",
            r"a stored grade \('three'\) is not on the scale 0-3: is it damaged\?",
        ),
        ("grade", "9", r"a stored grade \(9\) is not on the scale 0-3"),
        ("labelled_at", "'noon'", r"a stored time \('noon'\) is not a number"),
    ],
)
def test_labels_read_back_are_checked(
    tmp_path: Path, column: str, value: str, message: str
) -> None:
    """A label read back from the file is checked as if typed: an edited database is one line."""
    path = tmp_path / "j.sqlite"
    store = make_store(path)
    store.record("alice", 1, 2)
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"UPDATE labels SET {column} = {value}")
        db.commit()
    with pytest.raises(FormatError, match=rf"j\.sqlite: {message}"):
        store.labels()
    with pytest.raises(FormatError, match=rf"j\.sqlite: {message}"):
        store.assignment("alice", 1)


def test_a_scale_of_negative_grades_reads_back(tmp_path: Path) -> None:
    """Issue 22, fix-app item 3: --scale -5--1 was stored, then refused on every restart."""
    path = tmp_path / "j.sqlite"
    make_store(path, scale=parse_scale("-5--1"))
    assert Store(path).scale == (-5, -1)
    assert make_store(path, scale=(-5, -1)).scale == (-5, -1)  # a restart with the same scale


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scale": (0, 3_000_000)}, r"a grade must lie between"),
        ({"scale": (0, 101)}, r"has 102 grades: at most 101"),
        (
            {"seed": -1},
            r"seed=-1 must be an integer >= 0 \(the seed of the random number generator\)",
        ),
        ({"raters": ("a b",)}, r"rater name 'a b' holds whitespace"),
    ],
)
def test_create_refuses_before_writing(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    path = tmp_path / "j.sqlite"
    with pytest.raises(PolicyError, match=message):
        make_store(path, **options)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_create_leaves_no_file_when_filling_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankmeter.judgments.app import store as module

    def broken(*args: object, **kwargs: object) -> list[tuple[str, int]]:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(module, "assign", broken)
    with pytest.raises(RuntimeError, match="disk gone"):
        make_store(tmp_path / "j.sqlite")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["0-3", "-2-2", "-5--1", " 1-5 "])
def test_parse_scale_reads_what_the_store_writes(text: str) -> None:
    low, high = parse_scale(text)
    assert parse_scale(f"{low}-{high}") == (low, high)


@pytest.mark.parametrize("text", ["\uff10-3", "0-\u0663", "3", "3-0", "1-1", "0-3-", "a-b"])
def test_parse_scale_refuses(text: str) -> None:
    with pytest.raises(PolicyError, match=r"must be LOW-HIGH"):
        parse_scale(text)


@pytest.mark.parametrize(
    ("query", "doc", "what"),
    [("q1", "d\t1", "holds whitespace"), ("q1", "d\u20031", "holds whitespace"),
     ("", "d1", "has an empty id"), ("q1", "", "has an empty id")],
)  # fmt: skip
def test_qrels_ids_follow_the_one_trec_id_rule(query: str, doc: str, what: str) -> None:
    """The export's check is io.trec_id_writable's rule (the one every TREC writer keeps): an
    empty id is refused too, and any whitespace Python knows, not only a space."""
    from rankmeter.io import trec_id_writable
    from rankmeter.judgments.app.export import check_trec_ids

    assert not (trec_id_writable(query) and trec_id_writable(doc))
    grades = resolve([Label(query, doc, "ann", 2, 0.0, 1.0)])
    expected = f"j.sqlite: query {query!r}, doc {doc!r} {what}, which TREC qrels cannot hold: do"
    with pytest.raises(FormatError, match="^" + re.escape(expected) + "$"):
        check_trec_ids(grades, "j.sqlite", advice="do")
    check_trec_ids(resolve([Label("q1", "d1", "ann", 2, 0.0, 1.0)]), "j.sqlite", advice="do")
