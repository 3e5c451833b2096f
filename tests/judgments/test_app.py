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


def form_of(html: str) -> tuple[str, dict[str, str]]:
    """Where a page's form posts, and its hidden fields."""
    action = re.search(r'<form method="post" action="([^"]+)"', html)
    assert action, html
    return action.group(1), dict(
        re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', html)
    )


def grade(client: Any, store: Store, rater: str, value: str) -> Any:
    """Grade the item the rater's link shows now; the answer is a redirect to the link."""
    page = client.get(link(store, rater))
    assert page.status_code == 200
    action, hidden = form_of(page.text)
    return client.post(action, data={**hidden, "grade": value})


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
    _, hidden = form_of(previous)
    assert float(hidden["version"]) > 0  # the page names the label it replaces
    answer = client.post(back.group(1), data={**hidden, "grade": "0"})
    assert answer.status_code == 303
    assert 'class="grade current">0</button>' in client.get(back.group(1)).text
    grades = [lab.grade for lab in store.labels() if lab.rater == "bob"]
    assert grades == [1, 0] or sorted(grades) == [0, 1]
    assert store.progress()[1].judged == 2


def test_resubmitting_the_same_form_keeps_one_label(client: Any, store: Store) -> None:
    position_url = f"{link(store, 'alice')}/1"
    for _ in range(3):
        assert client.post(position_url, data={"grade": "2", "version": "0"}).status_code == 303
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
    client.post(f"{bob}/1", data={"grade": "3", "version": "0"})
    bob_doc = shown_doc(client.get(f"{bob}/1").text)
    for position in range(1, n_alice + 1):
        page = client.get(f"{alice}/{position}").text
        assert "Your label" not in page
    assert [lab.rater for lab in store.labels()] == ["bob"]
    assert bob_doc in {d for docs in DOCS.values() for d in docs}
    # a token in the form (or anywhere but the path) changes nothing
    answer = client.post(
        f"{alice}/1", data={"grade": "1", "version": "0", "token": store.raters()["bob"]}
    )
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
        client.post(f"{link(store, 'alice')}/{position}", data={"grade": "3", "version": "0"})
    for position in range(1, store.progress()[1].assigned + 1):
        client.post(f"{link(store, 'bob')}/{position}", data={"grade": "0", "version": "0"})
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
        answer = client.post(
            f"{link(store, 'bob')}/{bob[doc]}", data={"grade": "3", "version": "0"}
        )
        assert answer.status_code == 303
    for doc in shared:
        page = client.get(f"{link(store, 'alice')}/{alice[doc]}").text
        assert "Not judged yet." in page and "current" not in page
    assert client.get(link(store, "alice")).text.count("0 of ") == 1


def test_the_seconds_spent_are_measured_by_the_server(store: Store) -> None:
    """Issue 22, item 6: ``shown_at=0`` from the browser recorded an hour; the server's own clock
    counts now, from its showing of the page to the post, whatever the form says."""
    from starlette.testclient import TestClient

    now = [1000.0]
    app = create_app(store.path, pages=pages(), clock=lambda: now[0])
    with TestClient(app, follow_redirects=False) as client:
        alice = link(store, "alice")
        assert client.get(f"{alice}/1").status_code == 200  # shown at 1000 s
        assert client.get(f"{alice}/2").status_code == 200
        now[0] += 30.0
        sent = {"grade": "1", "version": "0"}
        assert client.post(f"{alice}/1", data={**sent, "shown_at": "0"}).status_code == 303
        now[0] += 12.5
        assert client.post(f"{alice}/2", data={**sent, "shown_at": "nan"}).status_code == 303
        # posted without the page being shown by this server (a restart): no time counted
        assert client.post(f"{alice}/3", data={**sent, "shown_at": "-1e9"}).status_code == 303
    spent = [lab.seconds for lab in sorted(store.labels(), key=lambda lab: lab.doc_id)]
    by_position = {
        n: next(
            lab.seconds
            for lab in store.labels()
            if lab.doc_id == store.assignment("alice", n).item.doc_id  # type: ignore[union-attr]
            and lab.rater == "alice"
        )
        for n in (1, 2, 3)
    }
    assert len(spent) == 3
    assert by_position == {1: 30.0, 2: 42.5, 3: 0.0}


@pytest.mark.parametrize(
    "value", ["³", "٣", "２", "--1", "+1", " 1", "1 ", "1\n", "0x1", "1_0", "9" * 5000, "nan"]
)
def test_a_grade_that_is_not_an_ascii_whole_number_is_a_400_page(
    client: Any, store: Store, value: str
) -> None:
    """Issue 22, item 5: Unicode digits and ``--1`` answered 500 with a traceback."""
    answer = client.post(f"{link(store, 'alice')}/1", data={"grade": value, "version": "0"})
    assert answer.status_code == 400
    assert "not on the scale 0-3" in answer.text and "Traceback" not in answer.text
    assert store.labels() == []


@pytest.mark.parametrize("position", [2**63 - 1, 2**63, 2**64, 10**30])
def test_a_huge_position_is_a_404_page(client: Any, store: Store, position: int) -> None:
    """Issue 22, item 5: a position of 2^63 or more answered 500 (GET and POST)."""
    alice = link(store, "alice")
    for answer in (
        client.get(f"{alice}/{position}"),
        client.post(f"{alice}/{position}", data={"grade": "1", "version": "0"}),
    ):
        assert answer.status_code == 404
        assert "no such page" in answer.text and "Traceback" not in answer.text
    assert store.labels() == []


def test_a_second_post_from_the_same_page_grades_nothing(client: Any, store: Store) -> None:
    """Issue 22, item 7: a second key before the next page came graded the same item again (2
    became 3). A post names its item and the label its page showed; a second one is refused."""
    alice = link(store, "alice")
    action, hidden = form_of(client.get(alice).text)
    assert action == f"{alice}/1" and hidden["version"] == "0.0"
    first = client.post(action, data={**hidden, "grade": "2"})
    second = client.post(action, data={**hidden, "grade": "3"})  # the same page's form
    assert first.status_code == second.status_code == 303
    assert second.headers["location"] == alice  # on to the next item, nothing written
    assert [(lab.rater, lab.grade) for lab in store.labels()] == [("alice", 2)]
    assert store.next_unjudged("alice") == 2
    # a changed label is still a change, made from the page that shows the label
    action, hidden = form_of(client.get(f"{alice}/1").text)
    assert client.post(action, data={**hidden, "grade": "0"}).status_code == 303
    assert client.post(action, data={**hidden, "grade": "1"}).status_code == 303  # stale
    assert [(lab.rater, lab.grade) for lab in store.labels()] == [("alice", 0)]


@pytest.mark.parametrize("version", [None, "", "nan", "inf", "١", "-1", "1e5"])
def test_a_post_that_does_not_name_the_label_it_replaces_is_a_400_page(
    client: Any, store: Store, version: str | None
) -> None:
    data = {"grade": "1"} if version is None else {"grade": "1", "version": version}
    answer = client.post(f"{link(store, 'alice')}/1", data=data)
    assert answer.status_code == 400 and "reload the page" in answer.text
    assert store.labels() == []


@pytest.mark.parametrize(("scale", "given"), [((0, 10), "10"), ((-2, 2), "-1"), ((-2, 2), "-2")])
def test_grades_of_several_characters(tmp_path: Path, scale: tuple[int, int], given: str) -> None:
    """Issue 22, item 8: grade 10 of --scale 0-10 was stored 0; negative grades neither."""
    from starlette.testclient import TestClient

    store = make_store(tmp_path / "wide.sqlite", scale=scale)
    with TestClient(create_app(store.path, pages=pages()), follow_redirects=False) as client:
        page = client.get(link(store, "alice")).text
        assert f'value="{given}" data-grade="{given}" class="grade">{given}</button>' in page
        assert f'accesskey="{given}"' not in page  # an access key is one character
        action, hidden = form_of(page)
        assert client.post(action, data={**hidden, "grade": given}).status_code == 303
    assert [lab.grade for lab in store.labels()] == [int(given)]


def test_an_unexpected_error_is_a_page_without_a_traceback(store: Store) -> None:
    from starlette.testclient import TestClient

    class Broken(type(pages())):  # type: ignore[misc]
        def item(self, view: Any) -> str:
            raise RuntimeError("secret detail")

    app = create_app(store.path, pages=Broken())
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get(link(store, "alice"))
    assert answer.status_code == 500
    assert "internal error: this is a bug in rankmeter" in answer.text
    assert "Traceback" not in answer.text and "secret detail" not in answer.text


@pytest.mark.parametrize("value", ["-0", "01", "00", "+1"])
def test_a_grade_not_written_as_the_scale_writes_it_is_refused(
    client: Any, store: Store, value: str
) -> None:
    """Issue 22, fix-app minor: -0 and 01 were stored as 0 and 1."""
    answer = client.post(f"{link(store, 'alice')}/1", data={"grade": value, "version": "0.0"})
    assert answer.status_code == 400
    assert store.labels() == []


def test_a_form_with_two_grades_is_refused(client: Any, store: Store) -> None:
    """Issue 22, fix-app minor: grade=1&grade=2 was stored (one of them)."""
    answer = client.post(
        f"{link(store, 'alice')}/1",
        content=b"grade=1&grade=2&version=0.0",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 400
    assert "twice" in answer.text
    assert store.labels() == []
