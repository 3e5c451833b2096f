"""Small A/B logs built by hand for the A/B tests (library and CLI): one row per impression,
the columns of the online log contract."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

START = dt.datetime(2026, 1, 1)


def impressions(
    user: str,
    variant: str,
    request: str,
    *,
    clicks: Sequence[bool] = (False,),
    session: str | None = None,
    seconds: float = 0.0,
    query: str = "q",
    latency: float = 100.0,
    dwell: float | None = 40_000.0,
    **segments: Any,
) -> list[dict[str, Any]]:
    """The rows of one request: one impression per entry of ``clicks`` (no rows but one
    null row when ``clicks`` is empty: a no-result request)."""
    base = {
        "event_ts": START + dt.timedelta(seconds=seconds),
        "user_id": user,
        "session_id": session or f"{user}-s",
        "request_id": request,
        "query_id": query,
        "result_count": len(clicks),
        "latency_ms": latency,
        "variant": variant,
        **segments,
    }
    if not clicks:
        return [{**base, "doc_id": None, "position": None, "clicked": False, "dwell_ms": None}]
    return [
        {
            **base,
            "doc_id": f"d{rank}",
            "position": rank,
            "clicked": clicked,
            "dwell_ms": dwell if clicked else None,
        }
        for rank, clicked in enumerate(clicks, start=1)
    ]


def table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(list(rows))


def random_log(
    n_users: int,
    *,
    seed: int,
    treatment_share: float = 0.5,
    ctr: dict[tuple[str, bool], float] | None = None,
    variants: tuple[str, str] = ("control", "treatment"),
    pages: int = 3,
    shown: int = 5,
) -> pa.Table:
    """A random log: each user a variant (``treatment_share``), ``is_new_user`` and a device,
    ``pages`` requests of ``shown`` results (no result at all with probability 0.05), 20 or 90
    seconds apart, each for another query; a click on each result with probability
    ``ctr[(variant, is_new_user)]`` (0.2 everywhere by default)."""
    rng = np.random.default_rng(seed)
    rates = ctr or {}
    n_treatment = round(n_users * treatment_share)
    assignment = np.array([variants[1]] * n_treatment + [variants[0]] * (n_users - n_treatment))
    rng.shuffle(assignment)
    new = rng.random(n_users) < 0.4
    device = rng.choice(["mobile", "desktop"], size=n_users)
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "event_ts", "user_id", "session_id", "request_id", "query_id", "result_count",
            "latency_ms", "variant", "doc_id", "position", "clicked", "dwell_ms",
            "is_new_user", "device",
        )
    }  # fmt: skip
    for u in range(n_users):
        variant = str(assignment[u])
        rate = rates.get((variant, bool(new[u])), 0.2)
        seconds = u * 1000.0
        for r in range(pages):
            seconds += float(rng.choice([20.0, 90.0]))  # the next request: a reformulation?
            results = 0 if rng.random() < 0.05 else shown
            clicks = rng.random(shown) < rate
            dwell = rng.exponential(40_000.0, size=shown)
            latency = float(rng.gamma(4.0, 30.0 if variant == variants[0] else 28.0))
            for rank in range(max(results, 1)):
                empty = results == 0
                columns["event_ts"].append(START + dt.timedelta(seconds=seconds))
                columns["user_id"].append(f"u{u}")
                columns["session_id"].append(f"u{u}-s{r // 2}")
                columns["request_id"].append(f"u{u}-r{r}")
                columns["query_id"].append(f"q{(u + r) % 7}")
                columns["result_count"].append(results)
                columns["latency_ms"].append(latency)
                columns["variant"].append(variant)
                columns["doc_id"].append(None if empty else f"d{rank}")
                columns["position"].append(None if empty else rank + 1)
                clicked = bool(clicks[rank]) and not empty
                columns["clicked"].append(clicked)
                columns["dwell_ms"].append(float(dwell[rank]) if clicked else None)
                columns["is_new_user"].append(bool(new[u]))
                columns["device"].append(str(device[u]))
    return pa.table(columns)
