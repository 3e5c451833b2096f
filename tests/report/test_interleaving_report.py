"""The interleaving renderers (report/interleaving.py): a verdict line, a table of counts and
statistics, undefined statistics as – and null."""

from __future__ import annotations

import io
import json

import pyarrow as pa
from rich.console import Console

from rankmeter.online import interleaving_test
from rankmeter.report.interleaving import render_json, render_markdown, render_table


def _log(outcomes: list[tuple[bool, bool]]) -> pa.Table:
    """One request per user; each (A's document clicked, B's document clicked)."""
    rows = []
    for i, clicks in enumerate(outcomes):
        for position, (team, clicked) in enumerate(zip("AB", clicks, strict=True), start=1):
            rows.append(
                {
                    "request_id": f"r{i}",
                    "user_id": f"u{i}",
                    "position": position,
                    "clicked": clicked,
                    "interleave_team": team,
                }
            )
    return pa.Table.from_pylist(rows)


def _text(renderable: object) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_significant_preference() -> None:
    result = interleaving_test(_log([(False, True)] * 9 + [(True, True)]))
    text = _text(render_table(result))
    assert "ranker B preferred (p = 0.0039, alpha 0.05)" in text
    assert "won by B (users)" in text and "Wilson score, 95%" in text
    markdown = render_markdown(result)
    assert "| won by B (users) | 9 |  |" in markdown
    assert "| Δ: (B wins + ties/2)/n - 1/2 | +0.450 | \\[+0.181, +0.450\\] |" in markdown
    assert json.loads(render_json(result))["preferred"] == "B"


def test_nothing_clicked_is_said_and_undefined_is_null() -> None:
    result = interleaving_test(_log([(False, False)] * 3), unit="request")
    assert "no clicked request: nothing to credit" in _text(render_table(result))
    markdown = render_markdown(result)
    assert "| p-value | – |  |" in markdown
    document = json.loads(render_json(result), parse_constant=lambda name: name)
    assert document["p_value"] is None and document["interval"]["share_b"] == [None, None]


def test_a_tiny_p_and_big_counts_read_as_the_ab_report_writes_them() -> None:
    # p was printed "0.0000" and counts without separators ("1200 requests").
    result = interleaving_test(_log([(False, True)] * 1_100 + [(True, False)] * 100))
    text = _text(render_table(result))
    assert "ranker B preferred (p <0.0001, alpha 0.05)" in text
    assert "1,200 requests (1,200 with a click), 1,200 users" in text
    assert "| won by B (users) | 1,100 |  |" in render_markdown(result)
    assert json.loads(render_json(result))["p_value"] < 1e-100
