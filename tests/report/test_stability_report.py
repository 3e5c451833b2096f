"""The stability report (rankmeter.report.stability, issue 13 item 3): the section "How much can
this query set be trusted?" says the same numbers in the terminal table, Markdown, strict JSON
and HTML; untrusted run names and metric labels are escaped; undefined numbers are explained."""

from __future__ import annotations

import io
import json

import pytest

from rankmeter.comparison import QueryStability, stability
from rankmeter.report.stability import (
    TITLE,
    render_html,
    render_json,
    render_markdown,
    render_table,
)

BAD = "dense <b>|x`*y*`\x1b[31m"
QRELS = {f"q{i}": {"a": 1, "b": 1} for i in range(20)}
GOOD = {f"q{i}": {"a": 2.0, "b": 1.5, "x": 1.0} for i in range(20)}
MIXED = {f"q{i}": ({"a": 2.0, "x": 1.0} if i % 2 else {"x": 2.0, "a": 1.0}) for i in range(20)}
# The same as MIXED on every other query, swapped on the rest: equal means on RR.
SWAPPED = {f"q{i}": ({"x": 2.0, "a": 1.0} if i % 2 else {"a": 2.0, "x": 1.0}) for i in range(20)}


@pytest.fixture(scope="module")
def result() -> QueryStability:
    return stability(
        QRELS, {"mixed": MIXED, BAD: GOOD}, ["RR", "P@1"], resamples=200, splits=100, seed=1
    )


def _terminal(renderable: object) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=220, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_every_format_carries_the_title_the_settings_and_the_numbers(
    result: QueryStability,
) -> None:
    pair = result["RR"].pairs[0]
    assert (pair.first, pair.kept) == (BAD, 1.0)
    data = json.loads(render_json(result))
    assert data["title"] == TITLE
    assert data["by_metric"]["RR"]["pairs"][0]["kept"] == 1.0
    assert data["by_metric"]["RR"]["order"] == [BAD, "mixed"]
    assert data["n"] == 20 and data["policies"]["include_missing"] is True
    settings = "20 queries, 2 systems; 200 bootstrap resamples, 100 splits into halves of 10"
    for text in (_terminal(render_table(result)), render_markdown(result), render_html(result)):
        assert TITLE in text
        assert settings in text
        assert "100.0%" in text  # kept, same order and halves agree
        assert "+0.5000" in text  # RR: 1 against 0.5
        assert "tau-b" in text and "halves agree" in text
        assert "every judged query (20)" in text


def test_untrusted_names_are_escaped_in_every_format(result: QueryStability) -> None:
    markdown = render_markdown(result)
    assert "\x1b" not in markdown and "<b>" not in markdown and "\\|x" in markdown
    html = render_html(result)
    assert "\x1b" not in html and "<b>|" not in html and "&lt;b&gt;|x" in html
    assert "\x1b" not in _terminal(render_table(result))
    text = render_json(result)
    assert json.loads(text)["systems"][1] == BAD  # data stays byte-exact in JSON


def test_the_markdown_is_a_section() -> None:
    two = stability(QRELS, {"mixed": MIXED, "good": GOOD}, ["RR"], resamples=100, splits=100)
    assert render_markdown(two).startswith(f"## {TITLE}\n\n20 queries, 2 systems;")


def test_a_tie_on_all_queries_is_said_and_undefined_tau_is_null() -> None:
    tied = stability(QRELS, {"mixed": MIXED, "swapped": SWAPPED}, ["RR"], resamples=100, splits=100)
    assert tied["RR"].pairs[0].full_tie
    text = render_json(tied)
    data = json.loads(text)  # strict: NaN is null
    assert "NaN" not in text
    assert data["by_metric"]["RR"]["tau_mean"] is None
    assert data["by_metric"]["RR"]["tau_undefined"] == 100
    markdown = render_markdown(tied)
    assert "| RR | mixed = swapped | 0 | – |" in markdown
    assert "a = b: tied on all queries, no order to keep" in markdown
    assert "τ is undefined where every system ties (resamples left out of τ: RR 100)" in markdown


def test_the_legend_of_a_tie_says_what_its_row_shows() -> None:
    # The row of a pair tied on all queries shows kept and turned as "–" and the tied share;
    # the legend once said "kept is then the tied share", which its row does not show.
    tied = stability(QRELS, {"mixed": MIXED, "swapped": SWAPPED}, ["RR"], resamples=100, splits=100)
    markdown = render_markdown(tied)
    assert "kept is then the tied share" not in markdown
    assert (
        "a = b: tied on all queries, no order to keep: kept and turned are –, and tied is the "
        "share of resamples in which the pair stays tied" in markdown
    )
