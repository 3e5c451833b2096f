"""The rating app end to end: `rankmeter judge serve` in a subprocess on 127.0.0.1, a rater in
headless Chromium (Playwright) grading with the keyboard, going back and changing a grade;
then `rankmeter judge export` gives the qrels those keys made.

Needs Debian's ``chromium`` and Playwright for Python (the ``dev`` extra), as the HTML report's
browser tests; without them these tests skip, saying which is absent.
``RANKMETER_UPDATE_SCREENSHOT=1`` rewrites docs/images/judge-rater.png.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _app_support import Server, write_inputs
from _browser import NEEDS_CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "images" / "judge-rater.png"

pytestmark = NEEDS_CHROMIUM


def export(db: Path, out: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "from rankmeter.cli import main; main()", "judge", "export",
         "--db", str(db), "-o", str(out)],
        capture_output=True, timeout=60, check=False, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_a_rater_grades_with_the_keyboard_goes_back_and_changes_a_grade(
    browser: Any, tmp_path: Path
) -> None:
    inputs = write_inputs(tmp_path)
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# How to grade\n\n3: the document answers the query.\n2: it helps.\n"
        "1: on the topic, no answer.\n0: off the topic.\n"
    )
    db = tmp_path / "judgments.sqlite"
    args = [str(inputs["pool"]), "--queries", str(inputs["queries"]), "--corpus",
            str(inputs["corpus"]), "--db", str(db), "--raters", "alice", "--guidelines",
            str(guide)]  # fmt: skip
    requests: list[str] = []
    errors: list[str] = []
    with Server(args, n_raters=1) as server:
        url = server.urls["alice"]
        assert url.startswith("http://127.0.0.1:")
        origin = url.split("/r/")[0]
        context = browser.new_context(viewport={"width": 1000, "height": 760})
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
        try:
            page.goto(url, wait_until="load")
            assert page.locator("#progress").inner_text() == "0 of 6 judged"
            assert page.locator("#guidelines").get_attribute("open") is not None
            # the first document is a <script> payload: shown as text, not run
            assert page.locator("#doc-text").inner_text() == "<script>alert(1)</script>"
            if os.environ.get("RANKMETER_UPDATE_SCREENSHOT"):
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOT), full_page=True)
            shown = []
            for key in ("3", "1", "2"):
                shown.append(page.locator("#doc-text").inner_text())
                with page.expect_navigation():
                    page.keyboard.press(key)
            assert page.locator("#progress").inner_text() == "3 of 6 judged"
            assert page.locator("#doc-text").inner_text() == "The text of d4.\n\nIts second line."
            with page.expect_navigation():
                page.keyboard.press("b")  # back to the third item, graded 2
            assert page.locator("#doc-text").inner_text() == shown[2]
            assert page.locator("button.grade.current").inner_text() == "2"
            with page.expect_navigation():
                page.keyboard.press("0")  # changed: 2 -> 0
            assert page.locator("#progress").inner_text() == "3 of 6 judged"
            with page.expect_navigation():
                page.keyboard.press("x")  # the fourth item: can't judge
            assert page.locator("#progress").inner_text() == "4 of 6 judged"
        finally:
            context.close()
    assert errors == []
    assert all(r.startswith(origin) for r in requests), requests
    qrels = export(db, tmp_path / "qrels.txt")
    # the keys gave d-script 3, d-img 1, d-area 2 then 0, d4 "can't judge" (left out)
    assert qrels == "q1 0 d-area 0\nq1 0 d-img 1\nq1 0 d-script 3\n"


def serve_args(tmp_path: Path, scale: str) -> tuple[list[str], Path]:
    inputs = write_inputs(tmp_path)
    db = tmp_path / f"judgments{scale}.sqlite"
    args = [str(inputs["pool"]), "--queries", str(inputs["queries"]), "--corpus",
            str(inputs["corpus"]), "--db", str(db), "--raters", "alice", "--scale", scale]  # fmt: skip
    return args, db


def test_grades_of_several_characters_are_typed_and_a_quick_second_key_grades_nothing(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 22, items 7 and 8: with --scale 0-10, "1" then "0" stored 0 (the first key sent 1,
    the second overwrote it); a quick second key graded the current item again. Now a grade
    is typed whole (Enter, or a moment without a key, sends one that another grade begins
    with), what is typed is shown, and one page sends one grade."""
    args, db = serve_args(tmp_path, "0-10")
    errors: list[str] = []
    with Server(args, n_raters=1) as server:
        context = browser.new_context(viewport={"width": 1000, "height": 760})
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            page.goto(server.urls["alice"], wait_until="load")
            assert page.locator("button.grade", has_text="10").count() == 1
            with page.expect_navigation():  # item 1: 1 then 0, as fast as keys go: 10
                page.keyboard.press("1")
                page.keyboard.press("0")
            assert page.locator("#progress").inner_text() == "1 of 6 judged"
            page.keyboard.press("1")  # item 2: 1 begins 10, so it waits; Enter sends it
            assert page.locator("#typed").inner_text() == "Typed: 1 (Enter sends it)"
            shot = os.environ.get("RANKMETER_SCREENSHOT_TO")
            if shot:
                page.screenshot(path=shot, full_page=True)
            with page.expect_navigation():
                page.keyboard.press("Enter")
            with page.expect_navigation():  # item 3: 1 and no more keys: sent after a moment
                page.keyboard.press("1")
            assert page.locator("#progress").inner_text() == "3 of 6 judged"
            page.keyboard.press("1")
            page.keyboard.press("1")  # 11 is no grade: said, and nothing sent
            assert page.locator("#typed").inner_text() == (
                "11 is not a grade of this scale (0 to 10)."
            )
            with page.expect_navigation():  # item 4: two keys in one go, before any answer
                page.evaluate(
                    """() => {
                        for (const key of ["2", "3"]) {
                            document.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
                        }
                    }"""
                )
            assert page.locator("#progress").inner_text() == "4 of 6 judged"
            assert page.locator("#typed").inner_text() == ""
        finally:
            context.close()
    assert errors == []
    # items in alice's order: d-script 10, d-img 1 (Enter), d-area 1 (the pause), d4 2, not 3
    assert export(db, tmp_path / "qrels.txt") == (
        "q1 0 d-area 1\nq1 0 d-img 1\nq1 0 d-script 10\nq1 0 d4 2\n"
    )


def test_negative_grades_are_typed(browser: Any, tmp_path: Path) -> None:
    """Issue 22, item 8: negative grades could not be typed."""
    args, db = serve_args(tmp_path, "-2-2")
    with Server(args, n_raters=1) as server:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            page.goto(server.urls["alice"], wait_until="load")
            for keys in (["-", "1"], ["-", "2"], ["2"], ["0"]):
                with page.expect_navigation():
                    for key in keys:
                        page.keyboard.press(key)
            assert page.locator("#progress").inner_text() == "4 of 6 judged"
        finally:
            context.close()
    assert export(db, tmp_path / "qrels.txt") == (
        "q1 0 d-area 2\nq1 0 d-img -2\nq1 0 d-script -1\nq1 0 d4 0\n"
    )


def test_a_second_minus_is_said_and_escape_clears_a_message(browser: Any, tmp_path: Path) -> None:
    """Issue 22, fix-app minor: `--` typed quickly sent -1 (the second `-` silently dropped),
    and Escape left an old error message on screen."""
    args, _ = serve_args(tmp_path, "-2-2")
    with Server(args, n_raters=1) as server:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            page.goto(server.urls["alice"], wait_until="load")
            for key in ("-", "-"):  # then a 1 was sent as -1
                page.keyboard.press(key)
            assert (
                page.locator("#typed").inner_text() == "-- is not a grade of this scale (-2 to 2)."
            )
            page.wait_for_timeout(1500)  # longer than the wait before a typed grade is sent
            assert page.locator("#progress").inner_text() == "0 of 6 judged"
            page.keyboard.press("Escape")
            assert page.locator("#typed").inner_text() == ""
        finally:
            context.close()
