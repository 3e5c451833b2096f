"""The three Cranfield runs of docs/compare.md's "All systems at once", built by the very code
the page shows (once per test session), for the tests that check the page and the statistics."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "compare.md"
SHARED_CRANFIELD = "../shared/data/cranfield"
SECTION = "## All systems at once"


def doc_blocks(kind: str) -> list[str]:
    """The fenced blocks of the section whose fence names ``kind`` (python, console)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    return re.findall(rf"^```{kind}\n(.*?)^```$", section, re.S | re.M)


@functools.cache
def cranfield_runs(cranfield: Path) -> tuple[Path, Path, Path]:
    """overlap.run, idf.run and bm25.run in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="allpairs-runs-"))
    (code,) = [block for block in doc_blocks("python") if ">>>" not in block]
    assert f'Path("{SHARED_CRANFIELD}")' in code
    code = code.replace(f'Path("{SHARED_CRANFIELD}")', f"Path({str(cranfield)!r})")
    here = Path.cwd()
    try:
        os.chdir(folder)
        exec(compile(code, str(DOC), "exec"), {"__name__": "allpairs_doc"})
    finally:
        os.chdir(here)
    return folder / "overlap.run", folder / "idf.run", folder / "bm25.run"
