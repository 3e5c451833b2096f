"""Headless Chromium for the tests that open a page (the HTML report, the rating app).

One browser serves the whole test session (the ``browser`` fixture in tests/conftest.py);
modules that need it mark themselves with :data:`NEEDS_CHROMIUM`, so they are skipped, saying
why, where Playwright or Debian's chromium is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: Headless, and nothing that reaches for the network on its own (updates, sync, QUIC probes).
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the install
    sync_playwright = None

NEEDS_CHROMIUM = [
    pytest.mark.skipif(
        sync_playwright is None,
        reason="Playwright for Python is not installed (pip install -e '.[dev]')",
    ),
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"{CHROMIUM} is absent (apt-get install chromium chromium-driver)",
    ),
]
