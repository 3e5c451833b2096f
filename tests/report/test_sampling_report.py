"""The query-mix report and the sample writers (rankmeter.report.sampling, issue 13 item 4):
untrusted segment values and ids escaped for Markdown and the terminal, written byte-exact in
data formats; strict JSON where a number is undefined."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from rankmeter.online import QueryTraffic, query_mix, sample_queries
from rankmeter.report.sampling import (
    render_csv,
    render_jsonl,
    render_mix_json,
    render_mix_markdown,
    render_mix_table,
)

BAD = "mob<b>|x\x1b[31m"
TRAFFIC = QueryTraffic(
    ("a,1", 'b"2', "c", "d"),
    np.array([40, 30, 20, 10]),
    {"device": (BAD, BAD, "desktop", "desktop")},
)


def _terminal(renderable: object) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_mix_escapes_segment_values_and_json_is_strict() -> None:
    mix = query_mix(["a,1", "c"], TRAFFIC, stratify="device")
    markdown = render_mix_markdown(mix)
    assert "\x1b" not in markdown and "<b>" not in markdown and "\\|x" in markdown
    assert "\x1b" not in _terminal(render_mix_table(mix))
    text = render_mix_json(mix)
    data = json.loads(text)
    assert "NaN" not in text and data["strata"][0]["detectable_difference"] is None
    assert data["strata"][0]["name"] == BAD


def test_sample_rows_are_byte_exact_data() -> None:
    sample = sample_queries(TRAFFIC, 4, holdout=0.5, seed=0)
    rows = list(csv.DictReader(io.StringIO(render_csv(sample))))
    assert sorted(r["query_id"] for r in rows) == sorted(TRAFFIC.query_ids)
    assert {r["split"] for r in rows} == {"test", "tuning"}
    lines = [json.loads(line) for line in render_jsonl(sample).splitlines()]
    assert sorted(r["query_id"] for r in lines) == sorted(TRAFFIC.query_ids)


def test_the_mix_says_why_a_detectable_difference_is_missing_and_when_chi_square_is_rough() -> None:
    # One evaluation query in the 'desktop' stratum: no paired test on it ("–", said why); the
    # expected counts (1.4 and 0.6) are far below the 5 that the chi-square approximation asks.
    mix = query_mix(["a,1", "c"], TRAFFIC, stratify="device")
    for text in (render_mix_markdown(mix), _terminal(render_mix_table(mix)).replace("\n", " ")):
        assert "fewer than 2 evaluation queries" in text
    markdown = render_mix_markdown(mix)
    assert "– (detectable Δ): fewer than 2 evaluation queries in the stratum (" in markdown
    assert (
        "expected counts below 5 in 2 of 2 strata: the chi-square test's p-value is a rough "
        "approximation there" in markdown
    )
    legend = json.loads(render_mix_json(mix))["legend"]
    assert any(line.startswith("expected counts below 5") for line in legend)


def test_the_mix_says_which_evaluation_queries_no_traffic_reaches() -> None:
    traffic = QueryTraffic(("a", "b", "c"), np.array([5, 0, 0]), {"seg": (BAD, "z", "z")})
    mix = query_mix(["a", "b", "c"], traffic, stratify="seg", weighting="traffic")
    markdown = render_mix_markdown(mix)
    assert (
        "2 of the 3 evaluation queries are in strata without traffic (z): left out of the test "
        "and of the expected counts" in markdown
    )
    assert json.loads(render_mix_json(mix))["no_traffic"] == 2
