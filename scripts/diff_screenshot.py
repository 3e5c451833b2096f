"""Take the picture of ``rankmeter diff`` in docs/compare.md: two BM25 runs on Cranfield.

Run A is BM25 as ``rankmeter bm25`` runs it (k1 1.5, b 0.75, no stemming); run B is BM25 with
k1 0.6, b 0.3 and an English stemmer. The page is opened in headless Chromium with the filter
box set to "membrane", and the top of the page down to the end of the first query's rankings
is saved::

    python scripts/diff_screenshot.py                       # ../shared/data/cranfield
    python scripts/diff_screenshot.py --data DIR --out PNG  # another copy, another picture

Needs Playwright for Python and /usr/bin/chromium (as the browser tests do), bm25s and
PyStemmer (the ``vector`` extra).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cranfield"
OUT = ROOT / "docs" / "images" / "diff-cranfield.png"
CHROMIUM = "/usr/bin/chromium"
WIDTH = 1300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="Cranfield in BEIR layout")
    parser.add_argument("--out", type=Path, default=OUT, help="the PNG to write")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from rankmeter.comparison import diff_runs
    from rankmeter.io.beir import load_beir
    from rankmeter.report.diff import render_diff_html
    from rankmeter.vector.bm25 import bm25_run

    collection = load_beir(args.data)
    run_a = bm25_run(collection, k=100, name="bm25")
    run_b = bm25_run(collection, k=100, k1=0.6, b=0.3, stemmer="english", name="bm25-stemmed")
    diff = diff_runs(
        collection.qrels,
        run_a,
        run_b,
        metric="nDCG@10",
        corpus=args.data / "corpus.jsonl",
        queries=dict(collection.queries),
    )
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "diff.html"
        page_path.write_text(render_diff_html(diff), encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(page_path.as_uri(), wait_until="load")
            page.fill("#filter-text", "membrane")
            bottom = page.evaluate(
                "() => document.querySelector('section.query:not([hidden])')"
                ".getBoundingClientRect().bottom + window.scrollY"
            )
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(
                path=str(args.out),
                full_page=True,
                clip={"x": 0, "y": 0, "width": WIDTH, "height": int(bottom) + 8},
            )
            browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
