"""What a comparison's reports explain (issue 13, defects 1 and 5): a legend that starts with a
word, says which correction (or none) the mark means, why a "–" stands where a number would,
which queries were compared, and how many each system left without results; in every format."""

from __future__ import annotations

import html
import json
import re

import pytest

import rankmeter
from rankmeter.report import comparison as report
from rankmeter.report.html import render_html

# q3 has no relevant document; 'flat' gains exactly 1 on P@1 on every answered query (no
# spread); the baseline finds nothing relevant at rank 1 (its P@1 mean is 0); 'flat' left q4
# unanswered.
QRELS = {f"q{i}": {"a": 1, "b": 0} for i in range(1, 5)} | {"q3": {"b": 0}}
RUNS = {
    "base": {f"q{i}": {"b": 2.0, "a": 1.0} for i in range(1, 5)},
    "flat": {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(1, 4)},
}


@pytest.fixture(scope="module")
def shown() -> rankmeter.Comparison:
    return rankmeter.compare(QRELS, RUNS, ["P@1", "nDCG@10"], resamples=100)


def everything(comparison: rankmeter.Comparison) -> dict[str, str]:
    from rich.console import Console

    console = Console(width=400, record=True, color_system=None)
    console.print(report.render_table(comparison))
    # Each text as a reader sees it: Markdown and LaTeX escapes and HTML entities undone.
    return {
        "table": console.export_text(),
        "markdown": re.sub(r"\\(.)", r"\1", report.render_markdown(comparison)),
        "latex": re.sub(r"\\([_%&#$])", r"\1", report.render_latex(comparison)),
        "html": html.unescape(render_html(comparison)),
        "json": report.render_json(comparison),
    }


def test_the_markdown_legend_is_not_a_bullet(shown: rankmeter.Comparison) -> None:
    lines = report.render_markdown(shown).splitlines()
    (legend,) = [line for line in lines if "W/T/L = " in line]
    assert legend.startswith("Legend: \\* = significant at alpha 0.05 after the Holm correction")


def test_no_correction_is_not_called_a_correction() -> None:
    plain = rankmeter.compare(QRELS, RUNS, ["P@1", "nDCG@10"], resamples=100, correction="none")
    for fmt, text in everything(plain).items():
        if fmt == "json":
            continue
        assert "after the correction" not in text, fmt
        assert "after the none" not in text and "after the no correction" not in text, fmt
    assert "* = p below alpha 0.05 (no correction for the 2 comparisons)" in report.legend(plain)


def test_every_dash_says_why(shown: rankmeter.Comparison) -> None:
    d = shown.difference("flat", "P@1")
    assert d.effect_size == float("inf") or d.relative != d.relative  # the cases are there
    for fmt, text in everything(shown).items():
        if fmt == "json":
            continue
        assert "– in rel.: the baseline's mean is 0" in text, fmt
        assert "1 of the 4 compared queries has no relevant document" in text, fmt


def test_an_infinite_effect_size_says_why() -> None:
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(4)}
    base = {f"q{i}": {"b": 2.0, "a": 1.0} for i in range(4)}
    better = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(4)}
    flat = rankmeter.compare(qrels, {"base": base, "better": better}, ["P@1"], resamples=100)
    assert flat.difference("better", "P@1").effect_size == float("inf")
    for fmt, text in everything(flat).items():
        if fmt != "json":
            assert "– in d_z: the difference is the same on every query" in text, fmt


def test_queries_scored_zero_are_counted_in_every_format(shown: rankmeter.Comparison) -> None:
    assert dict(shown.filled) == {"base": 0, "flat": 1}
    for fmt, text in everything(shown).items():
        if fmt == "json":
            payload = json.loads(text)
            assert payload["filled"] == {"base": 0, "flat": 1}
            assert payload["settings"]["policies"]["include_missing"] is True
        else:
            assert "Queries without results, each scored 0, of the 4 queries: base 0, flat 1" in (
                text
            ), fmt
            assert "every judged query (trec_eval -c" in text, fmt


def test_cautions_are_warnings_in_every_format(shown: rankmeter.Comparison) -> None:
    """Four queries: too few for the intervals, and the exact test's smallest p (2/16) cannot
    reach alpha after Holm over 2 comparisons."""
    assert len(shown.cautions) == 2
    for fmt, text in everything(shown).items():
        if fmt == "json":
            assert json.loads(text)["cautions"] == list(shown.cautions)
            continue
        warning = "Warning: " if fmt == "latex" else "warning: "
        assert warning + "only 4 queries: bootstrap intervals are too narrow" in text, fmt
        assert "the exact paired randomization test can give is 2/16 = 0.125" in text, fmt
