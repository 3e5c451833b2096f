"""Shared by the rating-app tests: a small pool with its texts (hostile ones included), written
as the files `rankmeter judge serve` reads, and a filled judgments database."""

from __future__ import annotations

import json
from pathlib import Path

from rankmeter.io.pool import PoolItem
from rankmeter.judgments.app.store import Item, Store
from rankmeter.report.pool import write_pool

#: Document texts a browser would run or that would end a text area, were they not escaped.
XSS = {
    "d-script": "<script>alert(1)</script>",
    "d-img": "<img src=x onerror=alert(1)>",
    "d-area": "</textarea><b>bold</b>",
}
QUERIES = {"q1": "what is <b>bm25</b>?", "q2": "dense & sparse retrieval"}
DOCS = {
    "q1": ["d-script", "d-img", "d-area", "d4"],
    "q2": ["d5", "d6"],
}
TITLES = {"d4": "A title with \"quotes\" & 'apostrophes'", "d-img": "<i>title</i>"}


def doc_text(doc_id: str) -> str:
    return XSS.get(doc_id, f"The text of {doc_id}.\nIts second line.")


def items() -> list[Item]:
    return [
        Item(q, d, QUERIES[q], TITLES.get(d, ""), doc_text(d)) for q, docs in DOCS.items()
        for d in docs
    ]  # fmt: skip


def write_inputs(folder: Path) -> dict[str, Path]:
    """pool.jsonl, queries.tsv and corpus.jsonl in ``folder``."""
    paths = {
        "pool": folder / "pool.jsonl",
        "queries": folder / "queries.tsv",
        "corpus": folder / "corpus.jsonl",
    }
    pooled = [
        PoolItem(q, d, {"bm25": rank}, rank, 1.0)
        for q, docs in DOCS.items()
        for rank, d in enumerate(docs, 1)
    ]
    write_pool(pooled, paths["pool"])
    paths["queries"].write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    paths["corpus"].write_text(
        "".join(
            json.dumps({"_id": d, "title": TITLES.get(d, ""), "text": doc_text(d)}) + "\n"
            for docs in DOCS.values()
            for d in docs
        )
    )
    return paths


def make_store(path: Path, raters: tuple[str, ...] = ("alice", "bob"), **options: object) -> Store:
    return Store.create(path, items(), list(raters), **options)  # type: ignore[arg-type]


class Server:
    """`rankmeter judge serve` running in a subprocess on 127.0.0.1, port 0 (a free port)."""

    def __init__(self, args: list[str], n_raters: int, timeout: float = 60.0) -> None:
        import os
        import selectors
        import subprocess
        import sys
        import time

        self.args = args
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from rankmeter.cli import main; main()", "judge", "serve",
             *args, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        assert self.process.stdout is not None
        self.urls: dict[str, str] = {}
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        pending = b""  # read from the descriptor itself: a buffered readline would hide lines
        while len(self.urls) < n_raters:
            if b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                name, url = line.decode().split()
                self.urls[name] = url
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                self._fail(f"no rater links within {timeout} s")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                self._fail("the server ended")
            pending += chunk
        selector.close()

    def _fail(self, what: str) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        assert self.process.stderr is not None
        errors = self.process.stderr.read().decode()
        self._close()
        raise AssertionError(f"{what}: {errors}")

    def kill(self) -> None:
        """SIGKILL: no clean-up at all."""
        self.process.kill()
        self.process.wait(timeout=30)
        self._close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except Exception:
                self.process.kill()
                self.process.wait(timeout=30)
        self._close()

    def _close(self) -> None:
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
