"""Shared fixtures: the Cranfield collection in ../shared (skipped, saying why, where absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRANFIELD = ROOT.parent / "shared" / "data" / "cranfield"


@pytest.fixture(scope="session")
def cranfield() -> Path:
    """Path to the Cranfield collection in BEIR layout (qrels.trec, qrels/test.tsv, ...)."""
    if not (CRANFIELD / "qrels.trec").is_file():
        pytest.skip(f"Cranfield collection not found at {CRANFIELD} (it lives in ../shared/data)")
    return CRANFIELD


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for every test that opens a page (tests/_browser.py); modules
    that use it carry ``pytestmark = NEEDS_CHROMIUM``."""
    from _browser import ARGS, CHROMIUM, sync_playwright

    assert sync_playwright is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def chat_server() -> Iterator[Any]:
    """A local OpenAI-compatible chat-completions server (tests/_chat_server.py)."""
    from _chat_server import serve

    yield from serve()


@pytest.fixture(scope="session")
def spark_backend() -> Any:
    """The test run's one Ibis backend on a local[2] Spark session (rankmeter.engines.connect
    reuses it process-wide; a session takes seconds to start). Skips, saying why, without
    PySpark or Java."""
    import shutil

    pytest.importorskip("pyspark", reason="Spark tests need the [spark] extra (pyspark)")
    import os

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java 17 (.ci/run installs it)")
    from rankmeter.engines import connect

    return connect("spark")
