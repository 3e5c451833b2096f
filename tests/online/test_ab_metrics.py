"""The A/B metrics' declarations (rankmeter.online.ab_metrics): one row per metric, read by the
analysis, the command line and the renderers; docs/ab.md's table of metrics follows them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankmeter.errors import MetricError
from rankmeter.online import AB_METRICS
from rankmeter.online.ab_metrics import PER_USER, USER_COLUMNS, metric_names
from rankmeter.online.logs import LOG_COLUMNS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_docs_table_of_metrics_is_the_declarations() -> None:
    text = (DOCS / "ab.md").read_text(encoding="utf-8")
    start = text.index("| metric | numerator / denominator (per user) | better |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, definition, better = (cell.strip() for cell in line.strip("|").split(" | "))
        rows.append((name.strip("`"), definition, better))
    declared = [
        (m.name, m.definition, "higher" if m.higher_is_better else "lower")
        for m in AB_METRICS.values()
    ]
    assert rows == declared


def test_every_metric_divides_declared_per_user_columns_of_the_log() -> None:
    assert len(set(USER_COLUMNS)) == len(USER_COLUMNS) == len(PER_USER)
    for metric in AB_METRICS.values():
        numerator, denominator = metric.columns
        assert (numerator.name, denominator.name) == (metric.numerator, metric.denominator)
        assert metric.reads and set(metric.reads) <= set(LOG_COLUMNS)
    assert AB_METRICS["success"].reads == ("session_id", "clicked", "dwell_ms")
    assert AB_METRICS["latency"].digits == 1 and AB_METRICS["ctr"].digits == 4


def test_metric_names_are_read_case_blind_once_each_in_order() -> None:
    assert metric_names(None) == list(AB_METRICS)
    assert metric_names("CTR") == ["ctr"]
    assert metric_names(["latency", "No-Result", "latency"]) == ["latency", "no_result"]
    with pytest.raises(MetricError, match=r"unknown A/B metric 'dwell'; choose from ctr, "):
        metric_names(["dwell"])
    with pytest.raises(MetricError, match="no A/B metric given"):
        metric_names([])


def test_only_the_columns_that_read_dwell_depend_on_it() -> None:
    """A per-user column that does not declare ``dwell_ms`` among what it reads is the same
    whether the log has dwell times or not; one that declares it changes."""
    pytest.importorskip("ibis")
    import pyarrow as pa
    from _ab_logs import random_log

    from rankmeter.online import user_metrics

    log = random_log(60, seed=3)
    without = log.set_column(
        log.schema.get_field_index("dwell_ms"),
        "dwell_ms",
        pa.nulls(log.num_rows, pa.float64()),
    )

    def per_user(table: pa.Table) -> dict[str, list[object]]:
        users = user_metrics(table).to_pyarrow().sort_by("user_id")
        return {c: users.column(c).to_pylist() for c in USER_COLUMNS}

    before, after = per_user(log), per_user(without)
    for column in PER_USER:
        # latency_ms_sum is a float sum, added in whatever order DuckDB's threads finish
        # (docs/ab.md): equal to about 12 digits, not to the last bit.
        same = np.allclose(before[column.name], after[column.name], rtol=1e-12, atol=0)
        assert same != ("dwell_ms" in column.reads), column.name
