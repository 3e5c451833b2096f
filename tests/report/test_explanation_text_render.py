"""rankmeter.report.explanation with the documents' texts (``rankmeter explain --corpus``):
the snippet, each format's document column and missed documents, and hostile text (markup,
terminal escapes, pipes, backticks, very long text, empty titles) escaped in every format."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from rankmeter.explanation_text import ExplanationsWithText, explain_files
from rankmeter.report import render
from rankmeter.report.explanation import (
    SNIPPET,
    render_html,
    render_json,
    render_markdown,
    render_text,
    snippet,
)

HOSTILE_TITLE = "</script><script>alert(1)</script> | `tick` **bold** \x1b[31mred\x1b[0m"
LONG = "word " * 400 + "END"


def _explained(tmp_path: Path, docs: dict[str, dict[str, object]]) -> ExplanationsWithText:
    (tmp_path / "qrels").write_text("q1 0 h 2\nq1 0 l 1\nq1 0 gone 3\nq1 0 m 1\n")
    (tmp_path / "run").write_text(
        "q1 Q0 h 1 3.0 r\nq1 Q0 l 2 2.0 r\nq1 Q0 e 3 1.0 r\nq1 Q0 m 4 0.5 r\n"
    )
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, **v}) + "\n" for k, v in docs.items())
    )
    explained = explain_files(
        tmp_path / "qrels", tmp_path / "run", "q1", ["P@3"], corpus=tmp_path / "corpus.jsonl"
    )
    assert isinstance(explained, ExplanationsWithText)
    return explained


DOCS: dict[str, dict[str, object]] = {
    "h": {"title": HOSTILE_TITLE, "text": "<img src=x onerror=alert(2)>\x07 a|b `c` \x9b2J"},
    "l": {"title": "Long", "text": LONG},
    "e": {"title": "", "text": ""},
    "m": {"title": "Below", "text": "line one\nline two"},
}


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("flutter  of\n\twings", SNIPPET, "flutter of wings"),
        ("the quick brown fox", 12, "the quick…"),
        ("the quick brown fox", 19, "the quick brown fox"),
        ("supercalifragilistic", 8, "superca…"),
        ("", 10, ""),
        ("   ", 10, ""),
    ],
)
def test_snippet_collapses_whitespace_and_cuts_at_a_word(text: str, limit: int, shown: str) -> None:
    assert snippet(text, limit) == shown
    assert len(snippet(text, limit)) <= limit


def test_a_long_text_is_cut_to_the_snippet(tmp_path: Path) -> None:
    cut = snippet(LONG)
    assert cut.endswith("word…") and len(cut) <= SNIPPET and "END" not in cut


def test_markdown_escapes_every_document(tmp_path: Path) -> None:
    md = render_markdown(_explained(tmp_path, DOCS))
    assert "| rank | doc | score | grade | relevant | document |" in md
    row = next(line for line in md.splitlines() if line.startswith("| 1 | h |"))
    # Each row has exactly its 6 cells: every | of the text is escaped.
    assert len(re.findall(r"(?<!\\)\|", row)) == 7, row
    assert not re.search(r"(?<!\\)<", md)  # every < escaped: no raw HTML
    assert "\\<script\\>" in row and "\\`tick\\`" in row and "\\*\\*bold\\*\\*" in row
    assert "\x1b" not in md and "\\x1b\\[31m" in row and "\x07" not in md and "\x9b" not in md
    assert "| 3 | e | 1 | unjudged | no | *(empty)* |" in md
    long_row = next(line for line in md.splitlines() if line.startswith("| 2 | l |"))
    assert "END" not in long_row and "word…" in long_row
    # The missed: gone is not in the run (nor the corpus), m is below the cutoff.
    assert "relevant documents the run missed (P@3 reads the top 3):" in md
    assert "| 3 | gone | not in the run | *(not in the corpus)* |" in md
    assert "| 1 | m | ranked 4, below the cutoff of 3 | **Below** line one line two |" in md


def test_text_is_a_rich_table_with_control_characters_visible(tmp_path: Path) -> None:
    from rich.console import Console

    made = render_text(_explained(tmp_path, DOCS))
    with (tmp_path / "null").open("w") as sink:
        console = Console(record=True, width=200, file=sink)
        console.print(made)
    out = console.export_text()
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b[31mred\\x1b[0m" in out and "\\x07" in out
    assert "(not in the corpus)" in out and "(empty)" in out
    assert "relevant documents the run missed (P@3 reads the top 3):" in out
    assert "ranked 4, below the cutoff of 3" in out
    assert "END" not in out


def test_text_to_a_file_through_render(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    render(_explained(tmp_path, DOCS), "text", str(target))
    out = target.read_text()
    assert out.startswith("P@3 for query 'q1' in run 'r' = 0.6667\n")
    assert "\x1b" not in out and "</script><script>alert(1)</script>" in out  # plain text


def test_html_escapes_and_puts_the_whole_text_behind_details(tmp_path: Path) -> None:
    page = render_html(_explained(tmp_path, DOCS))
    assert "<script" not in page and "<img" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;\\x07" in page
    assert "\x1b" not in page and "\\x1b[31mred" in page and "\x9b" not in page
    assert '<th scope="col">document</th>' in page
    # The long text: its start in the summary, all of it behind <details>; a short one whole.
    details = re.findall(
        r"<details><summary>(.*?)</summary><div class=\"fulltext\">(.*?)</div>", page, re.S
    )
    assert len(details) == 1
    summary, whole = details[0]
    assert summary == html.escape(snippet(LONG)) and whole.endswith("END<br>")
    assert "<em>(empty)</em>" in page and "<em>(not in the corpus)</em>" in page
    # Lines of a whole text are kept; the missed table.
    assert "<h4>relevant documents the run missed (P@3 reads the top 3)</h4>" in page
    assert '<table class="explain-missed">' in page
    assert "ranked 4, below the cutoff of 3" in page


def test_json_keeps_the_text_exact(tmp_path: Path) -> None:
    data = json.loads(render_json(_explained(tmp_path, DOCS)))
    rows = data["metrics"]["P@3"]["rows"]
    assert rows[0]["title"] == HOSTILE_TITLE
    assert rows[1]["text"] == LONG
    assert data["metrics"]["P@3"]["missed"][0]["title"] is None
    assert "\x1b" not in render_json(_explained(tmp_path, DOCS)).replace("\\u001b", "")


def test_nothing_missed_is_said(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 1.0 r\n")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "title": "T", "text": "x"}\n')
    explained = explain_files(
        tmp_path / "qrels", tmp_path / "run", "q1", ["RR"], corpus=tmp_path / "corpus.jsonl"
    )
    assert "relevant documents the run missed (RR reads every rank): none" in render_markdown(
        explained
    )
    assert "<h4>relevant documents the run missed (RR reads every rank): none</h4>" in render_html(
        explained
    )


def test_a_text_that_repeats_its_title_shows_the_rest(tmp_path: Path) -> None:
    docs: dict[str, dict[str, object]] = {
        "h": {"title": "Heated  wings .", "text": "heated wings . Heated wings . flutter"},
        "l": {"title": "Wings", "text": "Wingspan of birds"},
        "e": {"title": "Same", "text": "Same"},
        "m": {"title": "Cones", "text": "Cones \n in flow"},
    }
    md = render_markdown(_explained(tmp_path, docs))
    assert "| **Heated wings .** heated wings . Heated wings . flutter |" in md  # case differs
    assert "| **Wings** Wingspan of birds |" in md  # not a word boundary: kept
    assert "| **Same** |" in md
    assert "| **Cones** in flow |" in md
    page = render_html(_explained(tmp_path, docs))
    assert "<strong>Same</strong></td>" in page


def test_an_empty_title_shows_the_text_alone(tmp_path: Path) -> None:
    docs: dict[str, dict[str, object]] = {
        "h": {"title": "", "text": "untitled text"},
        "l": {"text": "no title field"},
        "e": {"title": None, "text": None},
        "m": {"title": "Only a title"},
    }
    explained = _explained(tmp_path, docs)
    md = render_markdown(explained)
    assert "| 1 | h | 3 | 2 | yes | untitled text |" in md
    assert "| 2 | l | 2 | 1 | yes | no title field |" in md
    assert "| 3 | e | 1 | unjudged | no | *(empty)* |" in md
    assert "| 1 | m | ranked 4, below the cutoff of 3 | **Only a title** |" in md
    page = render_html(explained)
    assert '<td class="explain-doc"><span class="snippet">untitled text</span>' in page
    assert "<strong></strong>" not in page
