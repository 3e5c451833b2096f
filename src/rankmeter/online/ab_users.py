"""A search log turned into per-user metrics inside its engine (DuckDB or Spark, through
Ibis): impressions into requests (one row per results page), requests into users (the
randomisation unit), with the columns :data:`rankmeter.online.ab_metrics.PER_USER` declares;
the checks on the log an A/B analysis needs first (one experiment, one variant per user, the
segment columns) and the pre-period's per-user values for CUPED."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from rankmeter import _validate
from rankmeter.errors import FormatError, PolicyError
from rankmeter.online.ab_metrics import PER_USER, USER_COLUMNS, IbisTable
from rankmeter.online.logs import LOG_COLUMNS, read_log

__all__ = ["user_metrics"]


def _ibis() -> Any:
    try:
        import ibis  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # pragma: no cover - the extra is part of [dev]
        raise PolicyError(
            "A/B analysis needs the [online] extra: pip install 'rankmeter[online]'"
        ) from None
    return ibis


def _requests(
    log: IbisTable, segments: Sequence[str], success_dwell: float, reformulation_window: float
) -> IbisTable:
    """One row per request: its counts, latency, whether it was reformulated, its segments."""
    ibis = _ibis()
    columns = set(log.columns)
    clicked = log.clicked.cast("boolean").fill_null(False)
    if "dwell_ms" in columns:
        long_click = clicked & (log.dwell_ms.cast("float64") >= success_dwell * 1000.0)
    else:
        long_click = ibis.literal(False)
    query_parts = [log[c].cast("string") for c in ("query_id", "query_text") if c in columns]
    query = ibis.coalesce(*query_parts) if query_parts else ibis.literal("")
    requests = log.mutate(
        _query=query, _click=clicked.cast("int64"), _long=long_click.fill_null(False).cast("int64")
    )
    keys = ["user_id", "session_id", "request_id", "variant"]
    requests = requests.group_by(keys).aggregate(
        event_ts=requests.event_ts.min(),
        query=requests._query.min(),
        result_count=requests.result_count.max(),
        latency_ms=requests.latency_ms.cast("float64").max(),
        impressions=requests.doc_id.notnull().cast("int64").sum(),
        clicks=requests._click.sum(),
        long_clicks=requests._long.sum(),
        **{f"segment_{i}": requests[c].min() for i, c in enumerate(segments)},
    )
    # A request is reformulated when the next request of its session (by time, then id) asks
    # another query and starts at most `reformulation_window` seconds later.
    window = ibis.window(
        group_by=[requests.user_id, requests.session_id],
        order_by=[requests.event_ts, requests.request_id],
    )
    next_ts = requests.event_ts.lead().over(window)
    next_query = requests.query.lead().over(window)
    window_ms = round(reformulation_window * 1000)
    reformulated = (
        next_ts.notnull()
        & (next_ts <= requests.event_ts + ibis.interval(milliseconds=window_ms))
        & (next_query.fill_null("") != requests.query.fill_null(""))
    )
    return requests.mutate(reformulated=reformulated.fill_null(False).cast("int64"))


def _per_user(requests: IbisTable, keys: Sequence[str]) -> IbisTable:
    """One row per ``keys`` (a user and variant, and segments) with every declared per-user
    column (:data:`~rankmeter.online.ab_metrics.PER_USER`), in the order declared."""
    return requests.group_by(list(keys)).aggregate(
        **{column.name: column.aggregate(requests) for column in PER_USER}
    )


def user_metrics(
    log: Any,
    *,
    success_dwell: float = 30.0,
    reformulation_window: float = 60.0,
    engine: str = "duckdb",
    validate: bool = True,
) -> IbisTable:
    """The per-user table of a log, as an Ibis expression (nothing is computed yet).

    One row per ``(user_id, variant)`` with the columns of :data:`USER_COLUMNS`:
    ``impressions`` (shown results), ``clicks``, ``requests`` (results pages),
    ``result_requests`` (requests with ``result_count > 0``), ``abandoned_requests`` (of those,
    the ones without a click), ``no_result_requests`` (``result_count == 0``),
    ``reformulated_requests`` (followed in their session by a request for another query within
    ``reformulation_window`` seconds), ``latency_ms_sum`` (the requests' latencies added up),
    ``sessions`` and ``successful_sessions`` (with a click of ``dwell_ms >= success_dwell``
    seconds).

    Parameters
    ----------
    log : path, Ibis table, pyarrow Table or DataFrame
        The log (see :func:`ab`).
    success_dwell : float, default 30
        Seconds of dwell that make a click a success.
    reformulation_window : float, default 60
        Seconds within which the next request of a session counts as a reformulation.
    engine : {"duckdb", "spark"}, default "duckdb"
        Where a log given as a path or a table in memory is read.
    validate : bool, default True
        Check the log first (:func:`rankmeter.online.check_log`): its first problem is raised.

    Returns
    -------
    ibis.Table
        The per-user expression; ``.to_pyarrow()`` computes it.
    """
    success_dwell = _validate.real("success_dwell", success_dwell, low=0, what="seconds")
    reformulation_window = _validate.real(
        "reformulation_window", reformulation_window, low=0, what="seconds"
    )
    validate = _validate.boolean("validate", validate)
    table, _ = _as_table(log, engine, validate)
    return _user_table(table, (), success_dwell, reformulation_window)


def _user_table(
    table: IbisTable, segments: Sequence[str], success_dwell: float, reformulation_window: float
) -> IbisTable:
    requests = _requests(table, segments, success_dwell, reformulation_window)
    keys = ["user_id", "variant", *(f"segment_{i}" for i in range(len(segments)))]
    return _per_user(requests, keys)


def _as_table(
    log: Any,
    engine: str,
    validate: bool,
    ts_unit: str = "s",
    ordered: bool = True,
    *,
    unnamed: str = "<table>",
) -> tuple[IbisTable, str]:
    """The log as a typed Ibis table (:func:`rankmeter.online.read_log`), and how to name it
    in errors (``unnamed`` for a table in memory)."""
    _ibis()
    table = read_log(log, engine=engine, validate=validate, ts_unit=ts_unit, ordered=ordered)
    name = str(log) if isinstance(log, (str, os.PathLike)) else unnamed
    return table, name


#: How many experiment ids an error message lists before "and N more".
SHOWN_EXPERIMENTS = 5


def _one_experiment(
    table: IbisTable, experiment: str | None, where: str, *, untagged_whole: bool = False
) -> tuple[IbisTable, str | None]:
    """The rows of one experiment: ``experiment``'s when chosen, else the whole table, which
    may then hold at most one experiment id (several are never pooled silently).
    ``untagged_whole``: a table without experiment ids, or with one id that is not the chosen
    one, is used whole even when one was chosen (a pre-period logged before the experiment)."""
    counted = table.group_by("experiment_id").aggregate(rows=table.count())
    found = [
        (str(row["experiment_id"]), int(row["rows"]))
        for row in counted.to_pyarrow().to_pylist()
        if row["experiment_id"] is not None
    ]
    found.sort(key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{e!r} ({n:,} rows)" for e, n in found[:SHOWN_EXPERIMENTS])
    if len(found) > SHOWN_EXPERIMENTS:
        listed += f", and {len(found) - SHOWN_EXPERIMENTS} more"
    if experiment is None:
        if len(found) > 1:
            raise PolicyError(
                f"{where} holds {len(found)} experiments: {listed}; choose one with "
                "--experiment ID (experiment= in Python)"
            )
        return table, found[0][0] if found else None
    if experiment in {e for e, _ in found}:
        return table.filter(table.experiment_id == experiment), experiment
    if untagged_whole and len(found) <= 1:
        # A pre-period logged before the experiment: untagged, or tagged once with an id of
        # its own (rankmeter's simulator writes "<id>-pre").
        return table, None
    if not found:
        raise PolicyError(
            f"experiment={experiment!r} is not in {where}; it has no experiment_id values"
        )
    raise PolicyError(f"experiment={experiment!r} is not in {where}; its experiments: {listed}")


def _segment_columns(segments: Iterable[str] | None, table: IbisTable, name: str) -> list[str]:
    if segments is None:
        return []
    if isinstance(segments, str):
        segments = segments.split(",")
    available = [c for c in table.columns if c not in LOG_COLUMNS]
    chosen: list[str] = []
    for given in segments:
        column = str(given).strip()
        if not column:
            continue
        if column not in available:
            offer = ", ".join(available) if available else "none"
            what = (
                f"{column!r} is a column of the log schema, not a segment column"
                if column in LOG_COLUMNS
                else f"segment column {column!r} is not in the log {name}"
            )
            raise PolicyError(f"{what}; its segment columns: {offer}")
        if column not in chosen:
            chosen.append(column)
    return chosen


def _check_one_variant_per_user(users: IbisTable, name: str) -> None:
    """The user is the randomisation unit: one seen in both variants breaks the analysis."""
    per_user = users.group_by("user_id").aggregate(n=users.variant.nunique())
    both = per_user.filter(per_user.n > 1)
    found = both.limit(1).to_pyarrow().column("user_id").to_pylist()
    if found:
        raise FormatError(
            name,
            f"user {found[0]!r} is in more than one variant; the user is the randomisation "
            "unit, so each user must see one variant",
        )


def _pre_period(pre_table: IbisTable, success_dwell: float, window: float) -> IbisTable:
    """The pre-period's per-user values (``pre_<column>``, one row per user) and the user's
    last pre-period event (``pre_last_ts``), brought back as a small Arrow table and handed to
    the log's engine as an in-memory table: the pre-period may have been read on another
    connection than the log."""
    ibis = _ibis()
    users = _user_table(pre_table, (), success_dwell, window)
    per_user = users.group_by("user_id").aggregate(
        **{f"pre_{c}": users[c].sum() for c in USER_COLUMNS}
    )
    last = pre_table.group_by("user_id").aggregate(pre_last_ts=pre_table.event_ts.max())
    per_user = per_user.join(last, "user_id")
    return ibis.memtable(per_user.rename(pre_user_id="user_id").to_pyarrow())


def _check_pre_period_precedes(
    table: IbisTable, pre_users: IbisTable, name: str, pre_name: str, notes: list[str]
) -> None:
    """CUPED's covariate must come from before the treatment. A user whose pre-period runs
    past their own first request of the experiment is refused; a pre-period that runs past
    the experiment's first request only overall (users enrolled one by one, each user's
    pre-period ending before their own start) is legitimate, and noted."""
    first = table.aggregate(first_ts=table.event_ts.min()).to_pyarrow()["first_ts"][0].as_py()
    last = pre_users.aggregate(last_ts=pre_users.pre_last_ts.max()).to_pyarrow()
    pre_last = last["last_ts"][0].as_py()
    if first is None or pre_last is None or pre_last <= first:
        return
    starts = table.group_by("user_id").aggregate(first_ts=table.event_ts.min())
    joined = starts.join(pre_users, starts.user_id == pre_users.pre_user_id)
    late = joined.filter(joined.pre_last_ts > joined.first_ts).order_by("user_id").limit(1)
    found = late.select("user_id", "first_ts", "pre_last_ts").to_pyarrow().to_pylist()
    if found:
        row = found[0]
        raise FormatError(
            pre_name,
            f"user {row['user_id']!r} has pre-period events up to {row['pre_last_ts']}, after "
            f"their first request in the experiment at {row['first_ts']} ({name}); CUPED needs "
            "a covariate from before the treatment: give a pre-period that ends before the "
            "experiment starts",
        )
    notes.append(
        f"the pre-period runs to {pre_last}, after the experiment's first request at {first}, "
        "but each user's pre-period ends before that user's own first request (staggered "
        "enrolment), so CUPED's covariate still comes from before the treatment"
    )


def _with_pre(users: IbisTable, pre: IbisTable) -> IbisTable:
    """The per-user table with the pre-period's values of every column (``pre_<column>``), 0
    for users the pre-period did not see (CUPED stays unbiased: the covariate does not depend
    on the assignment)."""
    ibis = _ibis()
    joined = users.left_join(pre, users.user_id == pre.pre_user_id)
    return joined.select(
        *(users[c] for c in users.columns),
        **{f"pre_{c}": ibis.coalesce(joined[f"pre_{c}"], 0) for c in USER_COLUMNS},
    )
