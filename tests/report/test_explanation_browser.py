"""`rankmeter explain --corpus -f html` in a real headless Chromium: documents whose text is
markup run nothing, show as the text they are, and the whole text of a long document opens
from its <details>.

The sections are loaded as they are written, in a bare page without the report's
Content-Security-Policy (they are pasted into other pages), so escaping alone must hold.
Needs Chromium and Playwright (tests/_browser.py); skips, saying which is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _browser import NEEDS_CHROMIUM

from rankmeter.explanation_text import explain_files
from rankmeter.report.explanation import render_html, snippet

pytestmark = NEEDS_CHROMIUM

TITLE = '</td></table><script>window.pwned = "title"</script><b>bold</b>'
TEXT = "<img src=x onerror=\"window.pwned='img'\"> <svg onload=alert(1)> " + "long words " * 60
LAST = "the last words"


def _page(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text("q1 0 h 1\nq1 0 gone 2\n")
    (tmp_path / "run").write_text("q1 Q0 h 1 1.0 r\nq1 Q0 o 2 0.5 r\n")
    docs = {
        "h": {"title": TITLE, "text": TEXT + "\n" + LAST},
        "o": {"title": "Other", "text": "short"},
    }
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, **v}) + "\n" for k, v in docs.items())
    )
    explained = explain_files(
        tmp_path / "qrels", tmp_path / "run", "q1", ["P@2"], corpus=tmp_path / "corpus.jsonl"
    )
    path = tmp_path / "explain.html"
    path.write_text(
        '<!doctype html><html><head><meta charset="utf-8"></head><body>\n'
        + render_html(explained)
        + "</body></html>\n",
        encoding="utf-8",
    )
    return path


def test_document_text_runs_nothing_and_expands(browser: Any, tmp_path: Path) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        requests: list[str] = []
        dialogs: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: errors.append(str(error)))
        context.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith("file:") else route.abort()
            ),
        )
        page.goto(_page(tmp_path).as_uri(), wait_until="load")
        page.wait_for_timeout(200)
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert dialogs == [] and errors == []
        assert [u for u in requests if not u.startswith("file:")] == []
        counts = page.evaluate(
            "['script', 'img', 'svg', 'b'].map(t => document.querySelectorAll(t).length)"
        )
        assert counts == [0, 0, 0, 0]
        # One section, its two tables whole: the title did not close the table.
        assert page.evaluate("document.querySelectorAll('table').length") == 2
        cell = page.locator("table.explain-ranks td.explain-doc").first
        assert cell.locator("strong").text_content() == snippet(TITLE, 80)
        # The long text: its start shown, the whole text hidden until the summary is clicked.
        details = cell.locator("details")
        whole = details.locator("div.fulltext")
        assert details.locator("summary").text_content() == snippet(TEXT + " " + LAST)
        assert not whole.is_visible()
        details.locator("summary").click()
        assert details.evaluate("d => d.open") is True
        assert whole.is_visible()
        assert whole.inner_text().rstrip().endswith(LAST)
        assert "<img src=x onerror" in whole.inner_text()
        # A short text is shown whole, without <details>.
        other = page.locator("table.explain-ranks td.explain-doc").nth(1)
        assert other.locator("details").count() == 0
        assert other.inner_text() == "Other short"
        # The document the corpus lacks, among the missed.
        assert "(not in the corpus)" in page.locator("table.explain-missed").inner_text()
    finally:
        context.close()
