"""Write a drawn evaluation query set (:class:`rankmeter.online.QuerySample`): CSV, TSV or JSON
lines, one row per query (query_id, count, stratum, and split with a holdout), and the one-line
summary a person reads on stderr.

The rows are data: ids are written byte-exact (CSV quoting where a field needs it), never
escaped for a terminal here (the CLI does that when stdout is one).
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from rankmeter.report._json import json_line

if TYPE_CHECKING:
    from rankmeter.online import QuerySample

__all__ = ["render_csv", "render_jsonl", "summary"]


def render_csv(sample: QuerySample, *, delimiter: str = ",") -> str:
    """A header and one row per drawn query (``delimiter="\\t"`` for TSV)."""
    rows = sample.rows()
    header = ["query_id", "count", "stratum"] + (["split"] if sample.splits is not None else [])
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([row[name] for name in header])
    return buffer.getvalue()


def render_jsonl(sample: QuerySample) -> str:
    """One JSON object per drawn query."""
    return "".join(json_line(row) for row in sample.rows())


def summary(sample: QuerySample) -> str:
    """``drew 200 of 5,321 queries (traffic-weighted; seed 0): head 67 (33.4% of traffic),
    ...; holdout: 40 test, 160 tuning``."""
    how = "traffic-weighted" if sample.weighting == "traffic" else "uniform"
    parts = []
    for s in sample.strata:
        share = s.traffic_share if sample.weighting == "traffic" else s.query_share
        of = "of traffic" if sample.weighting == "traffic" else "of queries"
        parts.append(f"{s.name} {s.drawn:,} ({share:.1%} {of})")
    text = (
        f"drew {sample.n:,} of {sample.population:,} queries ({how}; seed {sample.seed}): "
        + ", ".join(parts)
    )
    if sample.splits is not None:
        test = sum(s.test for s in sample.strata)
        text += f"; holdout: {test:,} test, {sample.n - test:,} tuning"
    return text
