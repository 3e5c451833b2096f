"""A small good search log for the tests of rankmeter.online and `rankmeter logs`, and the
changes that make it bad."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

# A good log: four users, two per variant; request r2 is a no-result query.
GOOD: list[dict[str, Any]] = [
    # user, session, request, ts, query, count, latency, variant, doc, pos, clicked, dwell
    dict(
        u="u1",
        s="s1",
        r="r1",
        ts="2024-05-01T10:00:00Z",
        q="q1",
        n=2,
        lat=40.0,
        v="control",
        d="d1",
        p=1,
        c=1,
        dw=31000.0,
    ),
    dict(
        u="u1",
        s="s1",
        r="r1",
        ts="2024-05-01T10:00:00Z",
        q="q1",
        n=2,
        lat=40.0,
        v="control",
        d="d2",
        p=2,
        c=0,
        dw=None,
    ),
    dict(
        u="u1",
        s="s1",
        r="r2",
        ts="2024-05-01T10:01:00Z",
        q="q2",
        n=0,
        lat=12.5,
        v="control",
        d=None,
        p=None,
        c=0,
        dw=None,
    ),
    dict(
        u="u2",
        s="s2",
        r="r3",
        ts="2024-05-01T11:00:00Z",
        q="q1",
        n=1,
        lat=38.0,
        v="control",
        d="d1",
        p=1,
        c=0,
        dw=None,
    ),
    dict(
        u="u3",
        s="s3",
        r="r4",
        ts="2024-05-01T10:30:00Z",
        q="q1",
        n=2,
        lat=55.0,
        v="treatment",
        d="d3",
        p=1,
        c=0,
        dw=None,
    ),
    dict(
        u="u3",
        s="s3",
        r="r4",
        ts="2024-05-01T10:30:00Z",
        q="q1",
        n=2,
        lat=55.0,
        v="treatment",
        d="d1",
        p=2,
        c=1,
        dw=4000.0,
    ),
    dict(
        u="u4",
        s="s4",
        r="r5",
        ts="2024-05-01T12:00:00Z",
        q="q3",
        n=1,
        lat=61.0,
        v="treatment",
        d="d7",
        p=1,
        c=1,
        dw=90000.0,
    ),
]
NAMES = {
    "u": "user_id",
    "s": "session_id",
    "r": "request_id",
    "ts": "event_ts",
    "q": "query_id",
    "n": "result_count",
    "lat": "latency_ms",
    "v": "variant",
    "d": "doc_id",
    "p": "position",
    "c": "clicked",
    "dw": "dwell_ms",
}


def log_rows(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """GOOD with changes by 1-based data row: ``row3={"c": 1}``; ``row8={...}`` appends."""
    rows = [dict(r) for r in GOOD]
    for key, change in changes.items():
        index = int(key.removeprefix("row")) - 1
        if index == len(rows):
            rows.append({**rows[-1], **change})
        else:
            rows[index].update(change)
    return [{NAMES[k]: v for k, v in row.items()} for row in rows]


def arrow(rows: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> pa.Table:
    columns = [c for c in rows[0] if c not in drop]
    return pa.table({c: [row[c] for row in rows] for c in columns})


def assert_same_results(got: Any, want: Any, *, rel: float = 1e-9) -> None:
    """Equal sequences of result records (dataclasses): floats to ``rel``, everything else
    exactly. DuckDB adds a column's values in the order its threads finish, so two runs of the
    same aggregation may differ in their last digits."""
    import dataclasses

    import pytest

    assert len(got) == len(want)
    for got_one, want_one in zip(got, want, strict=True):
        got_fields, want_fields = dataclasses.asdict(got_one), dataclasses.asdict(want_one)
        assert got_fields.keys() == want_fields.keys()
        for name, value in want_fields.items():
            if isinstance(value, float):
                assert got_fields[name] == pytest.approx(value, rel=rel, abs=0), name
            else:
                assert got_fields[name] == value, name
