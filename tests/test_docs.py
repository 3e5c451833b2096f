"""The docs stay true: the metric reference is regenerated from the specs."""

from __future__ import annotations

from pathlib import Path

from rankmeter.metrics.docs import metric_rows
from rankmeter.report.metrics import render_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_metric_reference_is_up_to_date() -> None:
    expected = render_markdown(metric_rows())
    actual = (DOCS / "metrics.md").read_text(encoding="utf-8")
    assert actual == expected, (
        "docs/metrics.md is stale; regenerate with `rankmeter metrics --format markdown "
        "> docs/metrics.md`"
    )


def test_every_metric_is_documented() -> None:
    from rankmeter.metrics import SPECS

    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    for spec in SPECS:
        assert f"## {spec.name}" in text
