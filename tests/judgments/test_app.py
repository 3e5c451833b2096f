"""The rating app through Starlette's test client: grading, going back and changing a grade,
idempotent resubmission, one rater's token reaching only that rater's items, escaped texts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _app_support import DOCS, XSS, make_store

from rankmeter.judgments.app import create_app
from rankmeter.judgments.app.export import resolve
from rankmeter.judgments.app.store import Store
from rankmeter.report.judging import pages

pytest.importorskip("starlette", reason="the rating app needs the judge extra")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return make_store(tmp_path / "judgments.sqlite", overlap=0.5, seed=3)


@pytest.fixture
def client(store: Store) -> Iterator[Any]:
    from starlette.testclient import TestClient

    with TestClient(create_app(store.path, pages=pages()), follow_redirects=False) as c:
        yield c


def link(store: Store, rater: str) -> str:
    return f"/r/{store.raters()[rater]}"


def shown_doc(html: str) -> str:
    found = re.search(
        r'<span class="id">([^<]*)</span></h2>\n(?:<h3[^>]*>[^<]*</h3>\n)?<div class="doc-text"',
        html,
    )
    assert found, html
    return found.group(1)


def grade(client: Any, store: Store, rater: str, value: str) -> Any:
    """Grade the item the rater's link shows now; the answer is a redirect to the link."""
    page = client.get(link(store, rater))
    assert page.status_code == 200
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    assert action, page.text
    return client.post(action.group(1), data={"grade": value, "shown_at": "0"})


def test_a_page_shows_the_query_a_document_progress_and_the_scale(
    client: Any, store: Store
) -> None:
    page = client.get(link(store, "alice"))
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "0 of " in page.text and "judged" in page.text
    for g in range(4):
        assert f'name="grade" value="{g}"' in page.text
    assert 'value="x"' in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"


def test_grading_redirects_to_the_next_unjudged_item(client: Any, store: Store) -> None:
    total = store.progress()[0].assigned
    first = shown_doc(client.get(link(store, "alice")).text)
    answer = grade(client, store, "alice", "2")
    assert answer.status_code == 303 and answer.headers["location"] == link(store, "alice")
    second = shown_doc(client.get(link(store, "alice")).text)
    assert second != first
    for _ in range(total - 1):
        assert grade(client, store, "alice", "x").status_code == 303
    done = client.get(link(store, "alice"))
    assert "All done" in done.text and f"{total} of {total} judged" in done.text
    labels = [lab for lab in store.labels() if lab.rater == "alice"]
    assert len(labels) == total
    assert [lab.grade for lab in labels if lab.doc_id == first] == [2]
    assert sum(lab.grade is None for lab in labels) == total - 1


def test_back_shows_the_previous_grade_and_it_can_be_changed(client: Any, store: Store) -> None:
    grade(client, store, "bob", "1")
    grade(client, store, "bob", "3")
    now = client.get(link(store, "bob")).text
    back = re.search(r'<a href="([^"]+)" id="back"', now)
    assert back and back.group(1) == f"{link(store, 'bob')}/2"
    previous = client.get(back.group(1)).text
    assert 'class="grade current">3</button>' in previous
    assert "Your label: 3" in previous
    answer = client.post(back.group(1), data={"grade": "0", "shown_at": "0"})
    assert answer.status_code == 303
    assert 'class="grade current">0</button>' in client.get(back.group(1)).text
    grades = [lab.grade for lab in store.labels() if lab.rater == "bob"]
    assert grades == [1, 0] or sorted(grades) == [0, 1]
    assert store.progress()[1].judged == 2


def test_resubmitting_the_same_form_keeps_one_label(client: Any, store: Store) -> None:
    position_url = f"{link(store, 'alice')}/1"
    for _ in range(3):
        assert client.post(position_url, data={"grade": "2", "shown_at": "0"}).status_code == 303
    labels = [lab for lab in store.labels() if lab.rater == "alice"]
    assert len(labels) == 1 and labels[0].grade == 2


def test_a_token_reaches_only_its_own_items(client: Any, store: Store) -> None:
    alice, bob = link(store, "alice"), link(store, "bob")
    n_alice = store.progress()[0].assigned
    n_bob = store.progress()[1].assigned
    # alice's token has no position past alice's list, even where bob has one
    beyond = max(n_alice, n_bob) + 1
    assert client.get(f"{alice}/{beyond}").status_code == 404
    assert client.post(f"{alice}/{beyond}", data={"grade": "1"}).status_code == 404
    # a position in alice's list is alice's item, with alice's label, never bob's
    client.post(f"{bob}/1", data={"grade": "3", "shown_at": "0"})
    bob_doc = shown_doc(client.get(f"{bob}/1").text)
    for position in range(1, n_alice + 1):
        page = client.get(f"{alice}/{position}").text
        assert "Your label" not in page
    assert [lab.rater for lab in store.labels()] == ["bob"]
    assert bob_doc in {d for docs in DOCS.values() for d in docs}
    # a token in the form (or anywhere but the path) changes nothing
    answer = client.post(f"{alice}/1", data={"grade": "1", "token": store.raters()["bob"]})
    assert answer.status_code == 303
    assert sorted((lab.rater, lab.grade) for lab in store.labels()) == [("alice", 1), ("bob", 3)]


@pytest.mark.parametrize(
    "path", ["/r/not-a-token", "/r/not-a-token/1", "/r/", "/nothing", "/r/%3Cscript%3E"]
)
def test_a_bad_token_is_a_404_page(client: Any, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 404
    assert "Traceback" not in page.text and "<script>" not in page.text


def test_a_bad_token_cannot_write(client: Any, store: Store) -> None:
    assert client.post("/r/not-a-token/1", data={"grade": "1"}).status_code == 404
    assert store.labels() == []


@pytest.mark.parametrize("value", ["7", "-1", "", "one", "1.5"])
def test_a_grade_off_the_scale_is_refused(client: Any, store: Store, value: str) -> None:
    answer = client.post(f"{link(store, 'alice')}/1", data={"grade": value})
    assert answer.status_code == 400
    assert "not on the scale 0-3" in answer.text
    assert store.labels() == []


def test_hostile_texts_are_shown_as_text(client: Any, store: Store) -> None:
    seen: dict[str, str] = {}
    for rater in ("alice", "bob"):
        total = next(p.assigned for p in store.progress() if p.rater == rater)
        for position in range(1, total + 1):
            page = client.get(f"{link(store, rater)}/{position}").text
            seen[shown_doc(page)] = page
    for doc_id, payload in XSS.items():
        page = seen[doc_id]
        assert payload not in page
        escaped = payload.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped in page
    assert "<i>title</i>" not in seen["d-img"] and "&lt;i&gt;title&lt;/i&gt;" in seen["d-img"]
    assert "what is <b>bm25</b>?" not in seen["d-script"]
    assert "what is &lt;b&gt;bm25&lt;/b&gt;?" in seen["d-script"]
    for page in seen.values():  # the one script is the app's own
        assert page.count("<script") == 1 and '<script src="/static/judge.js" defer>' in page


def test_guidelines_are_shown_as_text(client: Any, store: Store) -> None:
    store.set_guidelines("# Grades\n3: <b>perfect</b>\n<script>alert(1)</script>")
    page = client.get(link(store, "alice")).text
    assert "# Grades" in page and "3: &lt;b&gt;perfect&lt;/b&gt;" in page
    assert "<script>alert" not in page


def test_stylesheet_and_script_are_served(client: Any) -> None:
    css = client.get("/static/judge.css")
    js = client.get("/static/judge.js")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert js.status_code == 200 and "keydown" in js.text


def test_export_resolves_the_labels(client: Any, store: Store) -> None:
    for position in range(1, store.progress()[0].assigned + 1):
        client.post(f"{link(store, 'alice')}/{position}", data={"grade": "3"})
    for position in range(1, store.progress()[1].assigned + 1):
        client.post(f"{link(store, 'bob')}/{position}", data={"grade": "0"})
    labels = store.labels()
    by_item: dict[tuple[str, str], list[int]] = {}
    for lab in labels:
        assert lab.grade is not None
        by_item.setdefault((lab.query_id, lab.doc_id), []).append(lab.grade)
    majority = {(r.query_id, r.doc_id): r.grade for r in resolve(labels, "majority")}
    mean = {(r.query_id, r.doc_id): r.grade for r in resolve(labels, "mean")}
    assert set(majority) == set(by_item) == {(q, d) for q, docs in DOCS.items() for d in docs}
    assert any(len(given) == 2 for given in by_item.values())  # the overlap
    for key, given in by_item.items():
        if len(given) == 2:  # 3 against 0: the lower wins a tie; the mean 1.5 rounds up
            assert (majority[key], mean[key]) == (0, 2)
        else:
            assert majority[key] == mean[key] == given[0]


def test_a_rater_never_sees_another_raters_label_of_a_shared_item(
    client: Any, store: Store
) -> None:
    def positions(rater: str) -> dict[str, int]:
        total = next(p.assigned for p in store.progress() if p.rater == rater)
        return {
            shown_doc(client.get(f"{link(store, rater)}/{n}").text): n for n in range(1, total + 1)
        }

    alice, bob = positions("alice"), positions("bob")
    shared = sorted(set(alice) & set(bob))
    assert shared  # overlap 0.5: some items are judged twice
    for doc in shared:
        assert client.post(f"{link(store, 'bob')}/{bob[doc]}", data={"grade": "3"}).status_code
    for doc in shared:
        page = client.get(f"{link(store, 'alice')}/{alice[doc]}").text
        assert "Not judged yet." in page and "current" not in page
    assert client.get(link(store, "alice")).text.count("0 of ") == 1


def test_the_seconds_spent_come_from_the_page(client: Any, store: Store) -> None:
    import time

    client.post(f"{link(store, 'alice')}/1", data={"grade": "1", "shown_at": str(time.time() - 30)})
    client.post(f"{link(store, 'alice')}/2", data={"grade": "1", "shown_at": "garbage"})
    spent = sorted(lab.seconds for lab in store.labels())
    assert spent[0] == 0.0 and 29 < spent[1] < 60
