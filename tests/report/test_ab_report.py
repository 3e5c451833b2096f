"""The A/B renderers (rankmeter.report.ab): a failed sample-ratio check leads every format,
untrusted variant names and segment values are escaped per format, undefined statistics are
``–`` in tables and ``null`` in strict JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("ibis")
pytest.importorskip("tea_tasting")

from _ab_logs import random_log
from rich.console import Console

from rankmeter.online import ab
from rankmeter.report.ab import render_html, render_json, render_markdown, render_table

HOSTILE_CONTROL = "<b>ctl|x</b>"
HOSTILE_TREATMENT = "tr\x1b[31m[red]"


@pytest.fixture(scope="module")
def skewed() -> Any:
    """A 60/40 split whose variant names and a segment value are hostile."""
    log = random_log(1000, seed=4, treatment_share=0.6, variants=(HOSTILE_CONTROL,
                                                                   HOSTILE_TREATMENT))  # fmt: skip
    import pyarrow as pa
    import pyarrow.compute as pc

    device = pc.replace_substring(log["device"], "mobile", "<i>mob|ile</i>\x07")
    log = log.set_column(log.schema.get_field_index("device"), "device", device)
    assert isinstance(log, pa.Table)
    return ab(log, control=HOSTILE_CONTROL, segments=["device"], metrics=["ctr", "no_result"])


def _terminal(result: Any) -> str:
    console = Console(width=250, record=True, force_terminal=False, color_system=None)
    console.print(render_table(result))
    return console.export_text()


def test_the_sample_ratio_warning_comes_first_in_every_format(skewed: Any) -> None:
    assert skewed.srm.failed
    assert _terminal(skewed).startswith("WARNING: SAMPLE RATIO MISMATCH")
    assert render_markdown(skewed).startswith("> **Warning:** SAMPLE RATIO MISMATCH")
    payload = json.loads(render_json(skewed))
    assert next(iter(payload)) == "warnings"
    assert payload["warnings"][0].startswith("SAMPLE RATIO MISMATCH")
    page = render_html(skewed)
    assert page.index('role="alert"') < page.index("<h1>")
    assert "Warning: SAMPLE RATIO MISMATCH" in page


def test_no_warning_without_a_mismatch() -> None:
    result = ab(random_log(200, seed=4), metrics=["ctr"])
    assert "WARNING" not in _terminal(result)
    assert "Warning" not in render_markdown(result)
    assert json.loads(render_json(result))["warnings"] == []
    assert 'role="alert"' not in render_html(result)


def test_untrusted_names_are_escaped_per_format(skewed: Any) -> None:
    page = render_html(skewed)
    assert "<b>ctl" not in page and "<i>mob" not in page
    assert "&lt;b&gt;ctl|x&lt;/b&gt;" in page and "&lt;i&gt;mob|ile&lt;/i&gt;\\x07" in page
    markdown = render_markdown(skewed)
    assert "mob\\|ile" in markdown and "\x07" not in markdown and "\x1b" not in markdown
    text = _terminal(skewed)
    assert "\x1b" not in text and "tr\\x1b[31m[red]" in text  # rich markup is not read
    payload = json.loads(render_json(skewed))
    assert payload["control"] == HOSTILE_CONTROL and payload["treatment"] == HOSTILE_TREATMENT
    assert {s["value"] for s in payload["segments"]} == {"desktop", "<i>mob|ile</i>\x07"}


def test_undefined_statistics_are_dashes_and_null() -> None:
    # Every request of this log has results: the no-result rate is 0 in both variants.
    log = random_log(60, seed=1)
    import pyarrow.compute as pc

    log = log.filter(pc.greater(log["result_count"], 0))
    result = ab(log, metrics=["ctr", "no_result"])
    payload = json.loads(render_json(result))  # strict JSON: no NaN slipped through
    no_result = payload["metrics"]["no_result"]
    assert no_result["pvalue"] is None and no_result["relative"] is None
    row = next(line for line in _terminal(result).splitlines() if "no_result" in line)
    assert "–" in row


@pytest.fixture(scope="module")
def cuped() -> Any:
    """A CUPED analysis (the pre-period: each user's first page, a week earlier) with
    segments: the widest tables the page has."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc

    log = random_log(300, seed=3)
    pre = log.filter(pc.match_substring(log["request_id"], "-r0"))
    earlier = pc.subtract(pre["event_ts"], pa.scalar(dt.timedelta(days=7)))
    pre = pre.set_column(pre.schema.get_field_index("event_ts"), "event_ts", earlier)
    return ab(log, pre=pre, segments=["device", "is_new_user"])


def test_cuped_shows_the_raw_means_in_every_format(cuped: Any) -> None:
    ctr = cuped.metrics[0]
    assert ctr.cuped and ctr.control_raw != ctr.control
    raw, adjusted = f"{ctr.control_raw:.4f}", f"{ctr.control:.4f}"
    legend = "the difference, its interval, the relative difference, the p-values and the MDE "
    legend += "are CUPED-adjusted"

    text = _terminal(cuped)
    assert "control (raw)" in text and "control (CUPED)" in text
    row = next(line for line in text.splitlines() if line.startswith("│ ctr "))
    assert row.index(raw) < row.index(adjusted)
    assert legend in " ".join(text.split())

    markdown = render_markdown(cuped)
    header = next(line for line in markdown.splitlines() if line.startswith("| metric"))
    assert "| control (raw) | treatment (raw) | control (CUPED) | treatment (CUPED) |" in header
    assert raw in next(line for line in markdown.splitlines() if line.startswith("| ctr"))
    assert legend in markdown

    payload = json.loads(render_json(cuped))
    assert payload["metrics"]["ctr"]["control_raw"] == ctr.control_raw
    assert payload["metrics"]["ctr"]["control"] == ctr.control

    page = render_html(cuped)
    assert f'{adjusted}<br><span class="ci">raw {raw}</span>' in page
    assert "CUPED; raw" in page and legend in page


def test_without_cuped_the_means_are_shown_once(skewed: Any) -> None:
    assert "(raw)" not in _terminal(skewed) and "(raw)" not in render_markdown(skewed)
    assert "raw " not in render_html(skewed).split('id="metrics"')[1].split("</table>")[0]


def test_a_missing_segment_value_is_its_own_level_in_every_format() -> None:
    import pyarrow as pa

    log = random_log(300, seed=8)
    users, devices = log["user_id"].to_pylist(), log["device"].to_pylist()
    device = [None if int(u[1:]) % 4 == 0 else d for u, d in zip(users, devices, strict=True)]
    log = log.set_column(log.schema.get_field_index("device"), "device", pa.array(device))
    result = ab(log, metrics=["ctr"], segments=["device"])
    assert any(line.startswith("│ device=(missing) ") for line in _terminal(result).splitlines())
    assert "| device=(missing) | ctr |" in render_markdown(result)
    assert '<th scope="row">device=(missing)<br>' in render_html(result)
    missing = [s for s in json.loads(render_json(result))["segments"] if s["missing"]]
    assert len(missing) == 1 and missing[0]["value"] is None and missing[0]["column"] == "device"
