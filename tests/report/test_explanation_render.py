"""rankmeter.report.explanation: an Explanation as plain text, Markdown and HTML sections."""

from __future__ import annotations

import dataclasses
import html
from types import SimpleNamespace

import rankmeter
from rankmeter.report.explanation import render_html, render_markdown, render_text


def test_text_and_markdown() -> None:
    e = rankmeter.explain_grades("3,0,2", "nDCG(gain=exp)@3")
    text = render_text(e)
    assert text.startswith("nDCG(gain=exp)@3 for the grades given = 0.9558\n\n")
    assert "rank  grade  gain  discount  contribution\n" in text
    assert "   2      0     0     1.585             0\n" in text
    assert "\nideal ordering:\n" in text
    assert text.endswith("  nDCG(gain=exp)@3 = 8.5 / 8.89 = 0.96\n")
    md = render_markdown(e)
    assert md.startswith("### `nDCG(gain=exp)@3` for the grades given = 0.9558\n")
    assert "| rank | grade | gain | discount | contribution |\n| ---: |" in md
    assert "| 2 | 0 | 0 | 1.585 | 0 |" in md
    assert "Ideal ordering:" in md
    assert "1. nDCG(gain=exp)@3 = 8.5 / 8.89 = 0.96" in md


def test_several_are_written_one_after_another() -> None:
    one = rankmeter.explain_grades("3,0,2", "nDCG@3")
    two = rankmeter.explain_grades("3,0,2", "AP")
    assert render_text([one, two]) == render_text(one) + "\n" + render_text(two)
    assert render_markdown([one, two]) == render_markdown(one) + "\n" + render_markdown(two)
    assert render_html([one, two]) == render_html(one) + render_html(two)


def test_html_escapes_everything_and_has_an_anchor() -> None:
    qrels = {"<q&1>": {"<script>": 1, "b|c": 0}}
    run = {"<q&1>": {"<script>": 2.0, "b|c": 1.0}}
    e = rankmeter.explain(qrels, run, "<q&1>", "P@2")
    page = render_html(e)
    assert page.startswith(f'<section class="rankmeter-explain" id="{e.anchor}">')
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert html.escape("'<q&1>'") in page
    assert page.rstrip().endswith("</section>")
    md = render_markdown(e)
    assert "b\\|c" in md and "\\<script\\>" in md


def test_html_marks_skipped_ranks() -> None:
    grades = ["0"] * 40
    grades[30] = "1"
    page = render_html(rankmeter.explain_grades(",".join(grades), "RR"))
    assert '<tr class="gap"><td colspan="3">&hellip;</td></tr>' in page


def test_html_ids_are_unique_in_the_output(kit: SimpleNamespace) -> None:
    """Two runs of one name explained on one query ask for one anchor: the renderer gives the
    second section an id of its own rather than writing the same id twice."""
    qrels = {"q1": {"a": 1, "b": 1}}
    first = rankmeter.explain(qrels, {"q1": {"a": 2.0, "b": 1.0}}, "q1", "RR")
    second = rankmeter.explain(qrels, {"q1": {"b": 2.0, "a": 1.0}}, "q1", "RR")
    assert first.anchor == second.anchor
    page = kit.parse(render_html([first, second, dataclasses.replace(first, value=0.25)]))
    ids = [n.attrs["id"] for n in page.find_all("section", cls="rankmeter-explain")]
    assert ids == [first.anchor, f"{first.anchor}-2", f"{first.anchor}-3"]


def test_controls_are_visible_in_every_format() -> None:
    qrels = {"q\x1b]0;x\x07": {"d\x9b2J": 1}}
    run = {"q\x1b]0;x\x07": {"d\x9b2J": 1.0}}
    e = rankmeter.explain(qrels, run, "q\x1b]0;x\x07", "P@1")
    for text in (render_text(e), render_markdown(e), render_html(e)):
        assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
        assert "\\x1b" in text and "\\x9b" in text
