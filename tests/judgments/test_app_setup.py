"""rankmeter.judgments.app.setup: what `judge serve` and `judge export` do before serving and
writing, as Python calls (the pool's items with their texts, the session started, the labels
resolved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _app_support import items, make_store, write_inputs

from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments.app.setup import (
    export_labels,
    listen,
    pool_items,
    rater_url,
    read_guidelines,
    start_session,
)
from rankmeter.report.judging import pages


def test_pool_items_carry_the_queries_and_documents_texts(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    assert pool_items(paths["pool"], paths["queries"], paths["corpus"]) == items()


def test_a_document_missing_from_the_corpus_names_the_corpus(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    lines = paths["corpus"].read_text().splitlines(keepends=True)
    paths["corpus"].write_text("".join(line for line in lines if '"d5"' not in line))
    with pytest.raises(FormatError, match=r"document .d5. of the pool .* is not in the corpus"):
        pool_items(paths["pool"], paths["queries"], paths["corpus"])


def test_guidelines_that_cannot_be_read_are_a_format_error(tmp_path: Path) -> None:
    (tmp_path / "g.md").write_bytes(b"\xff\xfe bad")
    with pytest.raises(FormatError, match="cannot read the guidelines"):
        read_guidelines(tmp_path / "g.md")
    (tmp_path / "ok.md").write_text("Grade 3: perfect.")
    assert read_guidelines(tmp_path / "ok.md") == "Grade 3: perfect."


def test_rater_urls_put_ipv6_addresses_in_brackets() -> None:
    assert rater_url("127.0.0.1", 80, "t") == "http://127.0.0.1:80/r/t"
    assert rater_url("::1", 80, "t") == "http://[::1]:80/r/t"


def test_a_port_in_use_is_a_policy_error() -> None:
    taken = listen("127.0.0.1", 0)
    try:
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(PolicyError, match=f"cannot listen on 127.0.0.1:{port}"):
            listen("127.0.0.1", port)
    finally:
        taken.close()


def test_a_session_fills_the_database_and_listens(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    (tmp_path / "g.md").write_text("Be kind.")
    db = tmp_path / "j.db"
    session = start_session(
        paths["pool"], paths["queries"], paths["corpus"], db, ["ann", "bob"], pages=pages(),
        guidelines=tmp_path / "g.md", port=0,
    )  # fmt: skip
    try:
        assert session.port == session.listener.getsockname()[1] != 0
        tokens = session.store.raters()
        assert session.links == {
            name: f"http://127.0.0.1:{session.port}/r/{token}" for name, token in tokens.items()
        }
        assert session.store.guidelines == "Be kind."
    finally:
        session.listener.close()


def test_a_refused_option_leaves_no_database(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    db = tmp_path / "j.db"
    inputs = (paths["pool"], paths["queries"], paths["corpus"], db)
    with pytest.raises(PolicyError, match="has an empty name"):
        start_session(*inputs, "ann,,bob", pages=pages(), port=0)
    with pytest.raises(PolicyError, match="must be a positive number of seconds"):
        start_session(*inputs, "ann", pages=pages(), port=0, request_timeout=0)
    with pytest.raises(PolicyError, match="must be a port number"):
        start_session(*inputs, "ann", pages=pages(), port=70000)
    assert not db.exists()


def test_export_resolves_and_lists_what_the_adjudicator_left(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    store = make_store(db, ("ann", "bob", "cy"), overlap=1.0)
    held: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for rater in ("ann", "bob", "cy"):
        position = 1
        while (found := store.assignment(rater, position)) is not None:
            held.setdefault((found.item.query_id, found.item.doc_id), []).append((rater, position))
            position += 1
    shared, holders = next((item, who) for item, who in held.items() if len(who) >= 2)
    for (rater, position), grade in zip(holders, (3, 1), strict=False):
        store.record(rater, position, grade)
    other = next(r for r in ("ann", "bob", "cy") if r not in {holders[0][0], holders[1][0]})
    exported = export_labels(db, "majority")
    assert [(r.query_id, r.doc_id, r.grade) for r in exported.grades] == [(*shared, 1)]
    assert len(exported.labels) == 2 and exported.left_out == []
    settled = export_labels(db, "adjudicated", adjudicator=other)
    assert settled.grades == [] and settled.left_out == [shared]
    with pytest.raises(PolicyError, match="--adjudicator 'dan' is not a rater"):
        export_labels(db, "adjudicated", adjudicator="dan")
