"""The rating app as a real server (`rankmeter judge serve` on 127.0.0.1, a free port) under
load: concurrent raters lose no label and duplicate none; a server killed with SIGKILL in the
middle of the load and started again has every label it acknowledged.

The issue's full load by default: 20 raters x 200 submissions, each sent twice (8,000 posts;
both tests together about 33 s on two shared cores), every request with a timeout;
``RANKMETER_JUDGE_LOAD=N`` gives each rater N items instead (10 for a quick run).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from _app_support import Server

from rankmeter.io.pool import PoolItem
from rankmeter.judgments.app.store import Store
from rankmeter.report.pool import write_pool

httpx = pytest.importorskip("httpx", reason="the load test talks HTTP through httpx")

N_RATERS = 20
PER_RATER = int(os.environ.get("RANKMETER_JUDGE_LOAD", "200"))
RATERS = [f"r{i:02d}" for i in range(N_RATERS)]


def write_inputs(folder: Path) -> list[str]:
    docs = [(f"q{i % 10}", f"d{i:03d}") for i in range(N_RATERS * PER_RATER)]
    write_pool([PoolItem(q, d, {"bm25": 1}, 1, 1.0) for q, d in docs], folder / "pool.jsonl")
    (folder / "queries.tsv").write_text("".join(f"q{i}\tquery {i}\n" for i in range(10)))
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "text": f"text of {d}"}) + "\n" for _, d in docs)
    )
    return [
        str(folder / "pool.jsonl"), "--queries", str(folder / "queries.tsv"), "--corpus",
        str(folder / "corpus.jsonl"), "--db", str(folder / "judgments.sqlite"), "--raters",
        ",".join(RATERS),
    ]  # fmt: skip


def grade_of(rater: str, position: int) -> int:
    """One grade per (rater, item), so that a label is either there and right or missing."""
    return (int(rater[1:]) + position) % 4


class Raters:
    """Threads, one per rater, posting grades; ``acknowledged`` holds what the server answered
    with its redirect (the label is stored)."""

    def __init__(self, urls: dict[str, str], twice: bool) -> None:
        self.acknowledged: set[tuple[str, int, int]] = set()
        self.failures: list[str] = []
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self.rate, args=(name, url, twice), daemon=True)
            for name, url in urls.items()
        ]

    def rate(self, rater: str, url: str, twice: bool) -> None:
        with httpx.Client(timeout=20.0, follow_redirects=False) as client:
            for position in range(1, PER_RATER + 1):
                grade = grade_of(rater, position)
                for _ in range(2 if twice else 1):
                    try:
                        answer = client.post(
                            f"{url}/{position}", data={"grade": str(grade), "version": "0"}
                        )
                    except httpx.HTTPError as exc:  # the server was killed
                        with self.lock:
                            self.failures.append(f"{rater}: {type(exc).__name__}")
                        return
                    if answer.status_code != 303:
                        with self.lock:
                            self.failures.append(f"{rater}: HTTP {answer.status_code}")
                        return
                    with self.lock:
                        self.acknowledged.add((rater, position, grade))

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=120)
            assert not thread.is_alive()


def stored(db: Path) -> list[tuple[str, int, int]]:
    store = Store(db)
    positions = {
        (rater, store.assignment(rater, n).item.doc_id): n  # type: ignore[union-attr]
        for rater in RATERS
        for n in range(1, PER_RATER + 1)
    }
    return [
        (label.rater, positions[(label.rater, label.doc_id)], label.grade)  # type: ignore[misc]
        for label in store.labels()
    ]


def test_concurrent_raters_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    args = write_inputs(tmp_path)
    with Server(args, n_raters=N_RATERS) as server:
        raters = Raters(server.urls, twice=True)
        raters.start()
        raters.join()
    assert raters.failures == []
    labels = stored(tmp_path / "judgments.sqlite")
    assert len(labels) == len(set(labels)) == N_RATERS * PER_RATER
    assert set(labels) == raters.acknowledged


def test_every_acknowledged_label_survives_sigkill(tmp_path: Path) -> None:
    args = write_inputs(tmp_path)
    server = Server(args, n_raters=N_RATERS)
    try:
        raters = Raters(server.urls, twice=False)
        raters.start()
        deadline = threading.Event()
        while not deadline.wait(0.02):  # kill once about a third is acknowledged
            with raters.lock:
                if len(raters.acknowledged) >= N_RATERS * PER_RATER // 3:
                    break
        server.kill()
        raters.join()
    finally:
        server.stop()
    acknowledged = raters.acknowledged
    assert 0 < len(acknowledged) < N_RATERS * PER_RATER, len(acknowledged)
    with Server(args, n_raters=N_RATERS) as again:  # the same database, the same links
        tokens = {name: url.split("/r/")[1] for name, url in server.urls.items()}
        assert {name: url.split("/r/")[1] for name, url in again.urls.items()} == tokens
        labels = set(stored(tmp_path / "judgments.sqlite"))
        assert acknowledged <= labels
        # and the restarted server takes the rest
        rest = Raters(again.urls, twice=False)
        rest.start()
        rest.join()
        assert rest.failures == []
    labels_after = stored(tmp_path / "judgments.sqlite")
    assert len(labels_after) == len(set(labels_after)) == N_RATERS * PER_RATER
