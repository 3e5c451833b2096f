"""Interleaving: two rankers' results merged into one shown list, clicks credited to each.

Two builders (in :mod:`rankmeter.online.interleaved_lists`, named here too); this module
credits the clicks of a log of their lists and tests the wins:

- **team-draft** (Radlinski, Kurup & Joachims 2008, Algorithm 1): in each round a coin decides
  which ranker picks first; each picks its highest-ranked document not shown yet, and the
  document joins that ranker's team. A click on a document is credited to its team. The list
  grows while both rankings still have a document that is not shown (and up to ``length``).
- **balanced** (Joachims 2003): one coin decides which ranking starts; the two rankings are
  then read alternately (pointers ``k_a`` and ``k_b`` that never differ by more than one), a
  document already shown being skipped, so the shown top *n* is always A's top ``k_a`` together
  with B's top ``k_b``. Its credit does not use teams: with ``d`` the lowest clicked document
  and ``k`` the smaller of its ranks in A and in B, A gets the clicks among A's top ``k`` and
  B those among B's top ``k`` (Joachims 2003; written so by Chapelle et al. 2012). The rule is
  known to be biased when one ranking is the other shifted by one (Hofmann, Whiteson &
  de Rijke 2011): prefer team-draft.

Then the test of a log of interleaved requests: per request, clicks are credited to the team
of the clicked document (``interleave_team``); the ranker with more credited clicks wins the
request, equal credit is a tie, a request without clicks says nothing. With ``unit="user"``
(the default) the requests of each user are first reduced to one vote (the ranker that won
more of that user's requests), because one user's requests are not independent: a user for
whom B works better clicks B's documents on every visit, and counting each visit as a
separate trial would overstate the evidence. Wins are tested with the two-sided exact
binomial sign test (ties left out) of :func:`scipy.stats.binomtest`, and B's share of the
decided votes gets a Wilson score interval (default: close to its nominal coverage even for
small counts or shares near 0 or 1, and not as wide as the exact one) or the Clopper-Pearson
"exact" interval (never below its nominal coverage, wider), both from scipy.

Hand-written: the one library with these methods (mpkato/interleaving) is unmaintained; the
statistics come from scipy. The builders are vectorised over requests (NumPy, one loop over
the shown positions), so a simulation interleaves millions of requests in seconds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter._validate import choice
from rankmeter.errors import FormatError, PolicyError
from rankmeter.online.interleaved_lists import (
    METHODS,
    TEAMS,
    IntArray,
    Interleaving,
    interleave,
    interleave_runs,
)

__all__ = [
    "METHODS",
    "TEAMS",
    "Interleaving",
    "InterleavingResult",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
]

UNITS = ("user", "request")
INTERVALS = ("wilson", "exact")
_TEST = "two-sided exact binomial sign test of B's wins among decided units (ties left out)"
_INTERVAL_NAMES = {"wilson": "Wilson score", "exact": "Clopper-Pearson exact"}


class _Rows:
    """Where each row of the columns read came from: the file (a folder's own file) and the
    row as :mod:`rankmeter.online.logs` numbers it (the file line for CSV and JSONL, the
    1-based data row otherwise), so that an error names what a person can open."""

    def __init__(self, name: str, lines: IntArray, files: Any = None) -> None:
        self.name = name
        self.lines = lines
        self.files = files  # pyarrow Array of file names (a folder of Parquet), or None

    def error(self, index: int, reason: str, *, text: str | None = None) -> FormatError:
        file = self.name if self.files is None else str(self.files[index].as_py())
        return FormatError(file, reason, line=int(self.lines[index]), text=text)


#: The columns each credit rule reads (docs/interleaving.md); user_id too with unit="user".
#: Team-draft credit needs no position: a position, when the log has it, is checked unique
#: within its request. Balanced credit reads the clicked documents' ranks in the runs, by
#: query, and the lowest click by position.
CREDIT_COLUMNS: dict[str, tuple[str, ...]] = {
    "team-draft": ("request_id", "clicked", "interleave_team"),
    "balanced": ("request_id", "query_id", "doc_id", "position", "clicked"),
}


def _missing_column(method: str, unit: str, column: str) -> str:
    needs = ", ".join(CREDIT_COLUMNS[method])
    per_user = ", and user_id per user" if unit == "user" else ""
    hint = " (or test per request: --unit request)" if column == "user_id" else ""
    return f"no {column} column: {method} credit needs {needs}{per_user}{hint}"


def _read_columns(
    log: Any, method: str, unit: str, engine: str, optional: Sequence[str]
) -> tuple[Any, _Rows]:
    """Only the columns the credit reads, typed as the log schema types them, rows in the
    log's order; read where :func:`rankmeter.online.read_log` reads (DuckDB or Spark), but
    without requiring or checking the rest of the A/B log schema (an interleaving log needs
    no variant, latency or timestamps)."""
    import pyarrow as pa

    # The log reader's own machinery (same package): the engine, the formats, the rows'
    # numbers and the column types are those of read_log.
    from rankmeter.online._logschema import _FILE, _ROW, LOG_COLUMNS, _type_name, _typed_column
    from rankmeter.online.logs import _read

    if not isinstance(log, (str, os.PathLike, pa.Table, pa.RecordBatch)) and not (
        hasattr(log, "to_pyarrow")
        or hasattr(log, "to_arrow")
        or type(log).__module__.startswith("pandas")
    ):
        raise PolicyError(
            f"log must be a path, a pyarrow Table, an Ibis table or a pandas/polars "
            f"DataFrame, not {type(log).__name__}"
        )
    source = _read(log, engine)
    raw = source.table
    needed = (*(("user_id",) if unit == "user" else ()), *CREDIT_COLUMNS[method])
    for column in needed:
        if column not in raw.columns:
            raise FormatError(source.name, _missing_column(method, unit, column))
    names = [*needed, *(c for c in optional if c in raw.columns and c not in needed)]
    order = [_FILE, _ROW] if source.has_file_column else [_ROW]
    typed = {name: _typed_column(raw[name], LOG_COLUMNS[name]) for name in names}
    written = {f"written__{name}": raw[name] for name in names}
    table = raw.select(*order, **typed, **written).order_by(order).to_pyarrow()
    rows = _Rows(
        source.name,
        np.asarray(table[_ROW].to_numpy(zero_copy_only=False), dtype=np.int64),
        table[_FILE].combine_chunks() if source.has_file_column else None,
    )
    for name in names:
        # A value the schema's type cannot hold (clicked 'yes', position 'two'), as read_log
        # would report it: the first such row.
        written_column = table[f"written__{name}"]
        bad = np.asarray(
            (written_column.is_valid().to_numpy(zero_copy_only=False))
            & table[name].is_null().to_numpy(zero_copy_only=False),
            dtype=bool,
        )
        if written_column.type in (pa.float32(), pa.float64()):
            bad &= ~np.isnan(written_column.to_numpy(zero_copy_only=False))
        if bad.any():
            index = int(np.flatnonzero(bad)[0])
            value = written_column[index].as_py()
            raise rows.error(index, f"{name} {value!r} is not {_type_name(LOG_COLUMNS[name])}")
    return table.select(names), rows


def _codes(column: Any) -> tuple[IntArray, Any]:
    """Each row's code (0, 1, ... in order of first appearance) and the distinct values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return np.asarray(indices, dtype=np.int64), encoded.dictionary


@dataclass(frozen=True)
class _Credit:
    request_ids: Any  # pyarrow Array, one per request in order of first row
    clicks_a: IntArray
    clicks_b: IntArray
    users: IntArray | None  # the user (code) of each request, when the log has user_id
    user_ids: Any  # pyarrow Array of the users, or None
    n_users: int


def _runs(method: str, run_a: Any, run_b: Any) -> tuple[Any, Any] | None:
    if method == "team-draft":
        if run_a is not None or run_b is not None:
            raise PolicyError(
                "run_a and run_b are for method='balanced': team-draft credit reads the log's "
                "interleave_team"
            )
        return None
    if run_a is None or run_b is None:
        raise PolicyError(
            "method='balanced' credits clicks by the ranks in the two rankings: give run_a and "
            "run_b, the runs the requests were interleaved from"
        )
    from rankmeter.io import as_run

    return as_run(run_a), as_run(run_b)


def _credit(
    log: Any, unit: str, method: str = "team-draft", runs: Any = None, engine: str = "duckdb"
) -> _Credit:
    """Per request: its id, A's and B's credited clicks and its user (when the log has
    user_id; required with ``unit="user"``)."""
    import pyarrow.compute as pc

    optional = ("position", "user_id") if unit == "request" else ("position",)
    table, rows_of = _read_columns(log, method, unit, engine, optional)
    if table["request_id"].null_count:
        row = int(np.flatnonzero(table["request_id"].is_null().to_numpy(zero_copy_only=False))[0])
        raise rows_of.error(row, "a row has no request_id")
    request, request_ids = _codes(table["request_id"])
    clicked = np.asarray(
        pc.fill_null(pc.cast(table["clicked"], "bool"), False).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    if method == "team-draft" and clicked.any():
        team_text = pc.cast(table["interleave_team"], "string")
        is_a = np.asarray(
            pc.fill_null(pc.equal(team_text, "A"), False).to_numpy(zero_copy_only=False), dtype=bool
        )
        is_b = np.asarray(
            pc.fill_null(pc.equal(team_text, "B"), False).to_numpy(zero_copy_only=False), dtype=bool
        )
        bad = np.flatnonzero(clicked & ~is_a & ~is_b)
        if len(bad):
            row = int(bad[0])
            value = team_text[row].as_py()
            if value is None:
                raise rows_of.error(
                    row,
                    "a clicked result has no interleave_team (every clicked row of an "
                    "interleaved log names the ranker, 'A' or 'B', that showed it)",
                )
            raise rows_of.error(
                row, "interleave_team must be 'A' or 'B' on a clicked row", text=value
            )
    else:
        is_a = is_b = np.zeros(len(clicked), dtype=bool)
    position = table["position"] if "position" in table.column_names else None
    rows = np.zeros(0, dtype=np.int64)
    if position is not None:
        has_position = np.asarray(position.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        rows = np.flatnonzero(has_position)
    if position is not None and len(rows):
        values = np.asarray(
            pc.fill_null(position, 0).to_numpy(zero_copy_only=False), dtype=np.int64
        )[rows]
        order = np.lexsort((rows, values, request[rows]))
        same = (np.diff(request[rows][order]) == 0) & (np.diff(values[order]) == 0)
        if same.any():
            twice = rows[order][1:][same]
            row = int(twice.min())
            raise rows_of.error(
                row,
                f"position {int(values[np.searchsorted(rows, row)])} appears twice in request "
                f"{str(request_ids[request[row]].as_py())!r} (positions are unique within a "
                "request)",
            )
    n_requests = len(request_ids)
    if method == "balanced":
        clicks_a, clicks_b = _balanced_credit(table, rows_of, request, clicked, n_requests, runs)
    else:
        clicks_a = np.bincount(request[clicked & is_a], minlength=n_requests).astype(np.int64)
        clicks_b = np.bincount(request[clicked & is_b], minlength=n_requests).astype(np.int64)
    users: IntArray | None = None
    user_ids = None
    n_users = 0
    if "user_id" in table.column_names:
        if table["user_id"].null_count:
            row = int(np.flatnonzero(table["user_id"].is_null().to_numpy(zero_copy_only=False))[0])
            raise rows_of.error(row, "a row has no user_id")
        user, user_ids = _codes(table["user_id"])
        _, first = np.unique(request, return_index=True)  # each request's first row
        users = user[first]
        differs = np.flatnonzero(user != users[request])
        if len(differs):
            row = int(differs[0])
            raise rows_of.error(
                row,
                f"request {str(request_ids[request[row]].as_py())!r} has two user_ids "
                f"({str(user_ids[users[request[row]]].as_py())!r} and "
                f"{str(user_ids[user[row]].as_py())!r}): a request is one user's results page",
            )
        n_users = len(user_ids)
    return _Credit(request_ids, clicks_a, clicks_b, users, user_ids, n_users)


def _balanced_credit(
    table: Any,
    rows_of: _Rows,
    request: IntArray,
    clicked: npt.NDArray[np.bool_],
    n_requests: int,
    runs: tuple[Any, Any],
) -> tuple[IntArray, IntArray]:
    """Joachims' rule per request: ``k`` = the smaller rank, in A and in B, of the lowest
    clicked document; A gets the clicked documents among A's top ``k``, B among B's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = np.flatnonzero(clicked)
    if not len(rows):
        return np.zeros(n_requests, dtype=np.int64), np.zeros(n_requests, dtype=np.int64)
    taken = pa.array(rows)
    shown = pa.table(
        {
            "query_id": pc.cast(table["query_id"].take(taken), pa.string()),
            "doc_id": pc.cast(table["doc_id"].take(taken), pa.string()),
            "row": pa.array(np.arange(len(rows))),
        }
    )
    never = np.iinfo(np.int64).max
    ranks = []
    for run in runs:
        ranked = run.to_arrow().select(["query_id", "doc_id", "rank"])
        joined = shown.join(ranked, ["query_id", "doc_id"], join_type="left outer")
        rank = np.full(len(rows), never, dtype=np.int64)
        found = joined.filter(pc.is_valid(joined["rank"]))
        rank[found["row"].to_numpy()] = found["rank"].to_numpy()
        ranks.append(rank)
    rank_a, rank_b = ranks
    nowhere = np.flatnonzero((rank_a == never) & (rank_b == never))
    if len(nowhere):
        row = int(rows[nowhere[0]])
        raise rows_of.error(
            row,
            f"clicked doc {shown['doc_id'][int(nowhere[0])].as_py()!r} of query "
            f"{shown['query_id'][int(nowhere[0])].as_py()!r} is in neither run: balanced credit "
            "needs the two rankings the requests were interleaved from",
        )
    position = np.asarray(
        pc.fill_null(table["position"].take(taken), 0).to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )
    owner = request[rows]
    order = np.lexsort((position, owner))  # by request, then position: the last is the lowest
    last = order[np.r_[np.diff(owner[order]) != 0, True]]
    k = np.full(n_requests, 0, dtype=np.int64)
    k[owner[last]] = np.minimum(rank_a[last], rank_b[last])
    clicks_a = np.bincount(owner[rank_a <= k[owner]], minlength=n_requests).astype(np.int64)
    clicks_b = np.bincount(owner[rank_b <= k[owner]], minlength=n_requests).astype(np.int64)
    return clicks_a, clicks_b


def interleaving_credit(
    log: Any,
    *,
    method: str = "team-draft",
    run_a: Any = None,
    run_b: Any = None,
    engine: str = "duckdb",
) -> Any:
    """Per request of an interleaved log, the clicks credited to each ranker.

    Parameters
    ----------
    log : a path (Parquet, CSV, JSONL, a folder of Parquet files), a pyarrow Table, an Ibis
        table or a pandas/polars DataFrame with the columns of :data:`CREDIT_COLUMNS`:
        request_id, clicked and interleave_team for team-draft; request_id, query_id, doc_id,
        position and clicked for balanced (user_id and position are kept and checked when
        present). Only these columns are read and checked, typed as
        :func:`rankmeter.online.read_log` types them: the rest of the A/B log schema
        (variant, timestamps, latency ...) is not needed.
    method : "team-draft" (a click counts for its document's team) or "balanced" (Joachims'
        rule, from the documents' ranks in ``run_a`` and ``run_b``)
    run_a, run_b : with ``method="balanced"``: the runs the requests were interleaved from
    engine : where the log is read: "duckdb" (the default) or "spark"

    Returns
    -------
    pyarrow.Table: request_id, user_id (when the log has it), clicks_a, clicks_b and winner
    ("A", "B", "tie", or null for a request without clicks), requests in order of first row.

    Raises
    ------
    FormatError
        naming the row: a value not of its column's type, a clicked row whose interleave_team
        is missing or not A/B, a position twice in a request, a request with two user_ids;
        or naming the file: a missing column.
    """
    import pyarrow as pa

    method = choice("method", method, METHODS)
    runs = _runs(method, run_a, run_b)
    credit = _credit(log, "request", method, runs, engine)
    clicks_a, clicks_b = credit.clicks_a, credit.clicks_b
    winner = np.where(clicks_b > clicks_a, "B", np.where(clicks_a > clicks_b, "A", "tie"))
    columns: dict[str, Any] = {"request_id": credit.request_ids}
    if credit.users is not None:
        columns["user_id"] = credit.user_ids.take(pa.array(credit.users))
    columns["clicks_a"] = pa.array(clicks_a)
    columns["clicks_b"] = pa.array(clicks_b)
    columns["winner"] = pa.array(winner, type=pa.string(), mask=clicks_a + clicks_b == 0)
    return pa.table(columns)


# -- the preference test ----------------------------------------------------------------------


@dataclass(frozen=True)
class InterleavingResult:
    """Which ranker an interleaved log prefers, and how sure that is.

    Attributes
    ----------
    unit : "user" (each user's requests reduced to one vote) or "request"
    n_requests : requests in the log; n_clicked_requests: those with a click
    n_users : users in the log (0 when the test is per request and has no user_id)
    wins_a, wins_b, ties : units won by A, by B, and tied (equal credit)
    no_click : units without a click (left out of the test)
    n : units in the test (wins and ties)
    clicks_a, clicks_b : all clicks credited to each ranker
    share_b : B's share of the decided units, wins_b / (wins_a + wins_b); NaN without any
    share_low, share_high : its interval (``interval``, at confidence 1 - alpha)
    delta : Chapelle et al.'s Δ signed for B: (wins_b + ties / 2) / n - 1/2 (> 0: B preferred)
    delta_low, delta_high : its interval: B's share's, scaled by the decided fraction
    p_value : two-sided exact binomial sign test of wins_b out of wins_a + wins_b at 1/2
    preferred : "A" or "B" when p_value < alpha, else None
    method : the credit rule: "team-draft" (by interleave_team) or "balanced" (Joachims' rule)
    """

    unit: str
    n_requests: int
    n_clicked_requests: int
    n_users: int
    wins_a: int
    wins_b: int
    ties: int
    no_click: int
    n: int
    clicks_a: int
    clicks_b: int
    share_b: float
    share_low: float
    share_high: float
    delta: float
    delta_low: float
    delta_high: float
    p_value: float
    alpha: float
    interval: str
    preferred: str | None
    method: str = "team-draft"
    test: str = _TEST

    @property
    def interval_name(self) -> str:
        return _INTERVAL_NAMES[self.interval]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "unit": self.unit,
            "requests": self.n_requests,
            "clicked_requests": self.n_clicked_requests,
            "users": self.n_users,
            "n": self.n,
            "wins": {"A": self.wins_a, "B": self.wins_b, "ties": self.ties},
            "no_click": self.no_click,
            "credited_clicks": {"A": self.clicks_a, "B": self.clicks_b},
            "share_b": self.share_b,
            "delta": self.delta,
            "interval": {
                "method": self.interval,
                "name": self.interval_name,
                "confidence": 1 - self.alpha,
                "share_b": [self.share_low, self.share_high],
                "delta": [self.delta_low, self.delta_high],
            },
            "test": self.test,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "preferred": self.preferred,
        }


def interleaving_test(
    log: Any,
    *,
    unit: str = "user",
    alpha: float = 0.05,
    interval: str = "wilson",
    method: str = "team-draft",
    run_a: Any = None,
    run_b: Any = None,
    engine: str = "duckdb",
) -> InterleavingResult:
    """Credit the clicks of an interleaved log to each ranker and test the preference.

    Per request, clicks count for the team of the clicked document (team-draft credit, from
    the ``interleave_team`` column; or balanced's rule with ``method="balanced"``); the ranker with more credited clicks wins the request.
    With ``unit="user"`` each user's requests become one vote: for the ranker that won more of
    them, a tie when both won as many. Units without a click are left out. B's wins among the
    decided units are tested against 1/2 with the exact binomial sign test
    (:func:`scipy.stats.binomtest`, two-sided), and B's share gets an interval.

    Parameters
    ----------
    log : a path (Parquet, CSV, JSONL, a folder of Parquet files), a pyarrow Table, an Ibis
        table or a pandas/polars DataFrame with the columns request_id, clicked and
        interleave_team (and user_id for ``unit="user"``); only these are read and checked
        (see :func:`interleaving_credit`)
    unit : "user" (default: a user's requests are not independent, so each user votes once;
        with one request per user it is the same as "request") or "request"
    alpha : the significance level; the intervals are at confidence ``1 - alpha``
    interval : "wilson" (default: Wilson score interval, near its nominal coverage for small
        counts) or "exact" (Clopper-Pearson, conservative)
    method, run_a, run_b, engine : the credit rule and where the log is read, as in
        :func:`interleaving_credit`

    Returns
    -------
    InterleavingResult

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = pa.table({"request_id": ["r1", "r1", "r2", "r2"], "user_id": ["u1", "u1", "u2", "u2"],
    ...                 "position": [1, 2, 1, 2], "clicked": [False, True, True, False],
    ...                 "interleave_team": ["A", "B", "B", "A"]})
    >>> result = interleaving_test(log)
    >>> result.wins_b, result.wins_a, round(result.p_value, 2)
    (2, 0, 0.5)
    """
    unit = choice("unit", unit, UNITS)
    interval = choice("interval", interval, INTERVALS)
    alpha = _validate.alpha(alpha)
    method = choice("method", method, METHODS)
    runs = _runs(method, run_a, run_b)
    credit = _credit(log, unit, method, runs, engine)
    clicks_a, clicks_b, users, n_users = (
        credit.clicks_a,
        credit.clicks_b,
        credit.users,
        credit.n_users,
    )
    n_requests = len(credit.request_ids)
    outcome = np.sign(clicks_b - clicks_a)
    clicked = clicks_a + clicks_b > 0
    if unit == "user" and users is not None:
        wins_b_per_user = np.bincount(users[clicked & (outcome > 0)], minlength=n_users)
        wins_a_per_user = np.bincount(users[clicked & (outcome < 0)], minlength=n_users)
        voted = np.bincount(users[clicked], minlength=n_users) > 0
        votes = np.sign(wins_b_per_user - wins_a_per_user)[voted]
        no_click = int((~voted).sum())
    else:
        votes = outcome[clicked]
        no_click = int((~clicked).sum())
    wins_a, wins_b = int((votes < 0).sum()), int((votes > 0).sum())
    ties = int((votes == 0).sum())
    n = wins_a + wins_b + ties
    decided = wins_a + wins_b
    nan = float("nan")
    share = low = high = p_value = nan
    if decided:
        from scipy.stats import binomtest

        tested = binomtest(wins_b, decided, 0.5, alternative="two-sided")
        p_value = float(tested.pvalue)
        bounds = tested.proportion_ci(confidence_level=1 - alpha, method=interval)
        share, low, high = wins_b / decided, float(bounds.low), float(bounds.high)
    delta = (wins_b + ties / 2) / n - 0.5 if n else nan
    scale = decided / n if n else nan
    preferred = None
    if decided and p_value < alpha and wins_a != wins_b:
        preferred = "B" if wins_b > wins_a else "A"
    return InterleavingResult(
        unit=unit,
        n_requests=n_requests,
        n_clicked_requests=int(clicked.sum()),
        n_users=n_users,
        wins_a=wins_a,
        wins_b=wins_b,
        ties=ties,
        no_click=no_click,
        n=n,
        clicks_a=int(clicks_a.sum()),
        clicks_b=int(clicks_b.sum()),
        share_b=share,
        share_low=low,
        share_high=high,
        delta=delta,
        delta_low=scale * (low - 0.5),
        delta_high=scale * (high - 0.5),
        p_value=p_value,
        alpha=alpha,
        interval=interval,
        preferred=preferred,
        method=method,
    )
