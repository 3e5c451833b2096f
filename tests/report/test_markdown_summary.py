"""compare's Markdown as a pull-request comment (issue 16, item 3): a one-line verdict first,
then the table, then the details in ``<details>`` blocks; valid GitHub Markdown.

Parsed with markdown-it-py (CommonMark with raw HTML, GFM tables on, as GitHub reads it): the
tables are tables, the verdict is one paragraph, every ``<details>`` block is raw HTML closed
by its own ``</details>``, and names stay text.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

import rankmeter
from rankmeter.comparison import Comparison
from rankmeter.report.comparison import render_markdown, verdict

N = 40
SHARP = "tuned <b>x</b> | *y*"


def _runs(
    better: range, worse: range, metric_free: bool = False
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """One relevant document per query; the baseline ranks it second; the new run ranks it
    first on ``better`` queries, third on ``worse`` ones and second elsewhere."""
    qrels = {f"q{i}": {"r": 1} for i in range(N)}
    base = {f"q{i}": {"a": 3.0, "r": 2.0, "b": 1.0} for i in range(N)}
    new: dict[str, dict[str, float]] = {}
    for i in range(N):
        if i in better:
            new[f"q{i}"] = {"r": 3.0, "a": 2.0, "b": 1.0}
        elif i in worse:
            new[f"q{i}"] = {"a": 3.0, "b": 2.0, "r": 1.0}
        else:
            new[f"q{i}"] = dict(base[f"q{i}"])
    return qrels, base, new


def _compare(better: range, worse: range, metrics: list[str], **kwargs: Any) -> Comparison:
    qrels, base, new = _runs(better, worse)
    runs = {"keyword": base, SHARP: new}
    return rankmeter.compare(qrels, runs, metrics, resamples=2000, **kwargs)


def parse(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown)


def test_the_verdict_of_a_win() -> None:
    result = _compare(range(0, N, 2), range(0), ["RR"])
    d = result.difference(SHARP, "RR")
    assert verdict(result) == (
        f"{SHARP} beats keyword on RR: +0.250 [{d.low:+.3f}, {d.high:+.3f}], Holm p "
        f"{d.p_corrected:.4f}."
    )


def test_the_verdict_of_a_loss_and_of_no_difference() -> None:
    worse = _compare(range(0), range(0, N, 2), ["RR"])
    assert verdict(worse).startswith(f"{SHARP} is worse than keyword on RR: -0.083 [")
    same = _compare(range(0, 2), range(2, 4), ["RR"], correction="none")
    text = verdict(same)
    assert text.startswith(f"{SHARP} shows no significant difference from keyword on RR: +0.017")
    assert ", p " in text and "Holm" not in text  # no correction: a plain p


def test_the_verdict_of_several_metrics() -> None:
    # Better on RR (first place on half the queries), P@1 too; no change on P@3.
    result = _compare(range(0, N, 2), range(0), ["RR", "P@1", "P@3"])
    text = verdict(result)
    assert text.startswith(f"{SHARP} beats keyword on RR (+0.250 [")
    assert " and P@1 (+0.500 [" in text
    assert text.endswith("and shows no significant difference on P@3.")


def test_the_verdict_of_several_systems_and_segments() -> None:
    # Better on 7 head queries, worse on every tail one: overall about even.
    qrels, base, new = _runs(range(0, 7), range(20, N))
    _, _, same = _runs(range(0), range(0))
    segments = {"freq": {f"q{i}": "head" if i < 20 else "tail" for i in range(N)}}
    result = rankmeter.compare(
        qrels,
        {"keyword": base, "mixed": new, "copy": same},
        ["RR"],
        resamples=2000,
        segments=segments,
        min_segment=10,
    )
    text = verdict(result)
    clauses = text.split("; ")
    assert clauses[0].startswith("mixed shows no significant difference from keyword on RR: ")
    assert clauses[1].startswith("copy shows no significant difference from keyword on RR: +0.000")
    assert clauses[2] == "1 segment got worse: freq=tail (mixed on RR)."
    calm = _compare(range(0, N, 2), range(0), ["RR"], segments=segments, min_segment=10)
    assert verdict(calm).endswith("; no segment got worse.")


def test_the_summary_leads_with_the_verdict_then_the_table() -> None:
    result = _compare(range(0, N, 2), range(0), ["RR", "P@1"], queries={"q1": "<i>x</i>"})
    markdown = render_markdown(result)
    assert not markdown.startswith("#") and "# Comparison" not in markdown
    assert "system(s)" not in markdown
    tokens = parse(markdown)
    # One paragraph: the verdict, bold label first, the names as text.
    assert [t.type for t in tokens[:3]] == ["paragraph_open", "inline", "paragraph_close"]
    inline = tokens[1]
    assert inline.content.startswith("**Verdict:** ")
    assert "\n" not in inline.content
    text = "".join(c.content for c in inline.children or [] if c.type == "text")
    assert text == "Verdict: " + verdict(result)
    # Then the table against the baseline, before any details.
    first_table = next(i for i, t in enumerate(tokens) if t.type == "table_open")
    first_html = next(i for i, t in enumerate(tokens) if t.type == "html_block")
    assert first_table < first_html
    header = [t.content for t in tokens[first_table:] if t.type == "inline"][:3]
    assert header == ["system", "metric", "Δ"]


def _details(tokens: list[Token]) -> list[str]:
    """The summaries of the details blocks, after checking that each is raw HTML at the top
    level, opened with its summary and closed by its own ``</details>``."""
    summaries = []
    depth = 0
    for token in tokens:
        if token.type != "html_block":
            assert "<details" not in token.content and "</details" not in token.content
            continue
        assert token.level == 0
        block = token.content.strip()
        if block.startswith("<details>"):
            assert depth == 0, "a details block opened inside another"
            assert block.count("<summary>") == 1 and block.endswith("</summary>"), block
            summaries.append(block.removeprefix("<details>").strip())
            depth += 1
        else:
            assert block == "</details>", block
            depth -= 1
            assert depth == 0
    assert depth == 0, "a details block left open"
    return summaries


def test_details_are_closed_html_blocks_and_tables_are_tables() -> None:
    segments = {"freq": {f"q{i}": "head" if i < 20 else "tail" for i in range(N)}}
    result = _compare(range(0, 20), range(20, N), ["RR", "P@1"], segments=segments, min_segment=5)
    tokens = parse(render_markdown(result))
    assert _details(tokens) == [
        "<summary>Means over 40 queries, how the numbers were made, notes</summary>",
        "<summary>Failures: the queries each system lost most on, or answered badly</summary>",
        "<summary>Segments: 1 got worse</summary>",
    ]
    # Three tables: against the baseline, the means, the segments; each row as wide as its head.
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]
    assert len(tables) == 3
    for start in tables:
        end = next(i for i in range(start, len(tokens)) if tokens[i].type == "table_close")
        widths = set()
        cells = 0
        for t in tokens[start:end]:
            if t.type == "tr_open":
                cells = 0
            elif t.type in ("th_open", "td_open"):
                cells += 1
            elif t.type == "tr_close":
                widths.add(cells)
        assert len(widths) == 1, widths
    # The failures' fence sits inside its details block.
    fence = next(i for i, t in enumerate(tokens) if t.type == "fence")
    blocks = [i for i, t in enumerate(tokens) if t.type == "html_block"]
    assert blocks[2] < fence < blocks[3]


def test_hostile_names_are_escaped_everywhere(kit: SimpleNamespace) -> None:
    comparison = kit.synthetic()
    markdown = render_markdown(comparison)
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    assert "<script" not in html and "<b>" not in html and "<base>" not in html
    found = {node.tag for node in kit.parse(html).iter()}
    assert found <= {
        "#document", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "pre", "code",
        "blockquote", "details", "summary",
    }, found  # fmt: skip
    text = kit.parse(html).text
    for name in kit.HOSTILE:
        assert name in text, name
    assert verdict(comparison) in " ".join(text.split())


@pytest.mark.parametrize("systems", [1, 2])
def test_no_plural_in_parentheses(systems: int) -> None:
    qrels, base, new = _runs(range(0, N, 2), range(0))
    runs = {"keyword": base, "a": new, "b": new}
    chosen = dict(list(runs.items())[: systems + 1])
    markdown = render_markdown(rankmeter.compare(qrels, chosen, ["RR"], resamples=200))
    assert "(s)" not in markdown


def test_the_segment_table_aligns_names_left_and_numbers_right() -> None:
    # As the terminal table: segment, metric and system are names, n and the rest numbers
    # (the Markdown table aligned n left and metric and system right).
    segments = {"freq": {f"q{i}": "head" if i < 20 else "tail" for i in range(N)}}
    result = _compare(range(0, 20), range(20, N), ["RR"], segments=segments, min_segment=5)
    tokens = parse(render_markdown(result))
    start = [i for i, t in enumerate(tokens) if t.type == "table_open"][-1]
    heads = [i for i in range(start, len(tokens)) if tokens[i].type == "th_open"]
    names = ["".join(c.content for c in tokens[i + 1].children or []) for i in heads]
    assert names[:4] == ["segment", "n", "metric", "system"]
    right = {
        n for i, n in zip(heads, names, strict=True) if "right" in str(tokens[i].attrGet("style"))
    }
    assert right == {"n", "baseline", "system mean", "Δ [CI]", "p (corr.)", "flag"}
