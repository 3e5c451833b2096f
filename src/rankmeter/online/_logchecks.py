"""The checks of a search log: one small rule object per rule (:class:`LogRule`: what it checks,
its message, its engine expression), run by :func:`find_problems`, and the result objects of
:func:`rankmeter.online.check_log` (:class:`LogCheck`, :class:`LogProblem`,
:class:`VariantCounts`).

Every rule is an Ibis expression over one relation (:func:`._logschema._combined`: the typed
columns, the columns as written, the row numbers), run in the engine (DuckDB or Spark): only
the first offending row of each rule comes back to Python. Rules of one kind (the part of the
name before ``:``) run in one query; a problem's message is filled with the values of its row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rankmeter.errors import FormatError
from rankmeter.online._logschema import (
    _FILE,
    _HIGH_SECONDS,
    _LOW_SECONDS,
    _NOT_NULL,
    _QUERY_COLUMNS,
    _REQUEST_COLUMNS,
    _ROW,
    _SECONDS_PER_YEAR,
    _TIMESTAMP_NAME,
    _TS_SECONDS,
    _TS_YEAR,
    _TYPE_NAMES,
    _UNIT_WORDS,
    LOG_COLUMNS,
    PLAUSIBLE_YEARS,
    TS_UNITS,
    _combined,
    _ibis,
    _not_finite,
    _Source,
)


@dataclass(frozen=True)
class LogProblem:
    """One problem of a log: where it first occurs and what is wrong.

    Attributes
    ----------
    file : str
        The file (or ``"<table>"`` for an in-memory table).
    row : int or None
        The first offending row: the file line for CSV and JSONL, the 1-based data row
        otherwise; None for a problem of the whole log (missing columns).
    message : str
        What is wrong and how to fix it.
    """

    file: str
    row: int | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.row is None else f"{self.file}:{self.row}"
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "row": self.row, "message": self.message}

    def error(self) -> FormatError:
        """This problem as the error :func:`read_log` raises."""
        return FormatError(self.file, self.message, line=self.row)


@dataclass(frozen=True)
class VariantCounts:
    """How much of the log one variant has."""

    variant: str
    users: int
    sessions: int
    requests: int
    impressions: int
    clicks: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "users": self.users,
            "sessions": self.sessions,
            "requests": self.requests,
            "impressions": self.impressions,
            "clicks": self.clicks,
        }


@dataclass(frozen=True)
class LogCheck:
    """What :func:`check_log` found: the per-variant counts and the problems.

    Attributes
    ----------
    source : str
        The log (a path, or ``"<table>"``).
    engine : str
        Where the checks ran (``"duckdb"`` or ``"spark"``).
    rows : int
        Rows read (0 when the columns are missing).
    variants : tuple of VariantCounts
        One per variant, by name (empty when the columns are missing).
    problems : tuple of LogProblem
        The first offending row of each problem found, in file order.
    experiments : tuple of (str, int)
        Each experiment_id of the log with its rows, most rows first (empty without ids).
        The counts per variant pool them; :func:`rankmeter.online.ab` analyses one.
    """

    source: str
    engine: str
    rows: int
    variants: tuple[VariantCounts, ...] = ()
    problems: tuple[LogProblem, ...] = field(default=())
    experiments: tuple[tuple[str, int], ...] = ()

    @property
    def note(self) -> str | None:
        """What a reader of the counts must know: several experiments pooled in them."""
        if len(self.experiments) < 2:
            return None
        listed = ", ".join(f"{e!r}: {n:,} rows" for e, n in self.experiments[:5])
        more = f", and {len(self.experiments) - 5} more" if len(self.experiments) > 5 else ""
        return (
            f"the log holds {len(self.experiments)} experiments ({listed}{more}); the counts "
            "per variant pool them, and rankmeter ab analyses one (--experiment ID)"
        )

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "engine": self.engine,
            "rows": self.rows,
            "ok": self.ok,
            "variants": [v.to_dict() for v in self.variants],
            "experiments": {e: n for e, n in self.experiments},
            "note": self.note,
            "problems": [p.to_dict() for p in self.problems],
        }


# --- the rules --------------------------------------------------------------------------------


class LogRows:
    """A log as its rules see it: the relation every rule is an expression over (``table``:
    the typed columns by their names, the columns as written as ``raw__<name>``, the row
    numbers) and what the rules and their messages ask of the log."""

    def __init__(self, source: _Source, ordered: bool = True) -> None:
        self.source = source
        self.ordered = ordered
        self.ibis = _ibis()
        self.table = _combined(source)
        self.present = frozenset(source.table.columns)
        #: The file order of the rows (a folder's rows by file, then row).
        self.order = [_FILE, _ROW] if source.has_file_column else [_ROW]
        #: For messages: the unit of epoch numbers in words, the query columns the log has.
        self.unit_words = _UNIT_WORDS[source.ts_unit]
        self.query_columns = " and ".join(c for c in _QUERY_COLUMNS if c in self.present)

    def window(self, group_by: str | list[str], *, ordered: bool = True) -> Any:
        """A window over the rows grouped by ``group_by``, in file order unless not
        ``ordered``."""
        if ordered:
            return self.ibis.window(group_by=group_by, order_by=self.order)
        return self.ibis.window(group_by=group_by)

    def first_of(self, group_by: str) -> Any:
        """Whether a row is the first, in file order, of its ``group_by`` group."""
        return self.ibis.row_number().over(self.window(group_by)) == 0

    def later_of(self, group_by: str) -> Any:
        """Whether a row comes after the first, in file order, of its ``group_by`` group."""
        return self.ibis.row_number().over(self.window(group_by)) > 0

    @property
    def has_doc(self) -> Any:
        return self.table.doc_id.notnull()

    @property
    def epoch_out(self) -> Any:
        """Whether event_ts, given as epoch numbers, is outside :data:`PLAUSIBLE_YEARS`."""
        seconds = self.table[_TS_SECONDS]
        return seconds.notnull() & ((seconds < _LOW_SECONDS) | (seconds >= _HIGH_SECONDS))


@dataclass(frozen=True)
class LogRule:
    """One rule of the log schema: what it checks, its message and its engine expression.

    Attributes
    ----------
    name : str
        ``kind:detail`` (``type:position``); the rules of one kind run in one engine query.
    checks : str
        What the rule checks.
    message : str
        The problem's message: its ``{column}`` fields are filled with the first offending
        row's values (as typed, or as written where a value is not of its type), its
        ``{log.<name>}`` fields with the log's (:class:`LogRows`: ``unit_words``,
        ``query_columns``).
    where : callable
        ``where(log)``: the Ibis boolean expression over ``log.table`` (:class:`LogRows`) that
        is true on an offending row (null is not).
    needs : tuple of str
        The columns the log must hold for the rule to apply.
    when : callable or None
        ``when(log)``: whether the rule applies to the log otherwise.
    """

    name: str
    checks: str
    message: str
    where: Callable[[LogRows], Any]
    needs: tuple[str, ...] = ()
    when: Callable[[LogRows], bool] | None = None

    @property
    def kind(self) -> str:
        """The rule's kind: the part of its name before ``:``."""
        return self.name.split(":")[0]

    def applies(self, log: LogRows) -> bool:
        """Whether the rule checks ``log``."""
        return all(c in log.present for c in self.needs) and (self.when is None or self.when(log))


def _type_rule(name: str, kind: str) -> LogRule:
    def where(log: LogRows) -> Any:
        written = log.table[f"raw__{name}"]
        bad = written.notnull() & log.table[name].isnull()
        if written.type().is_floating():
            bad = bad & ~written.isnan()
        if name == "event_ts":  # epoch numbers too far out: the range check names them
            bad = bad & log.table[_TS_SECONDS].isnull()
        return bad

    type_name = _TYPE_NAMES.get(kind) or _TIMESTAMP_NAME.format(units="{log.unit_words}")
    return LogRule(
        f"type:{name}",
        f"the values written in {name} are of its type ({kind})",
        f"{name} {{{name}!r}} is not {type_name}",
        where,
        needs=(name,),
    )


def _empty_rule(name: str) -> LogRule:
    return LogRule(
        f"empty:{name}",
        f"{name} has a value on every row",
        f"{name} is empty: every row needs one (it repeats on each impression row of a request)",
        lambda log: _is_empty(log.table[f"raw__{name}"]),
        needs=(name,),
    )


def _request_rule(name: str) -> LogRule:
    def where(log: LogRows) -> Any:
        table = log.table
        previous = table[name].lag().over(log.window("request_id"))
        return (
            ~log.first_of("request_id")
            & ~table[name].identical_to(previous)
            & table.request_id.notnull()
        )

    return LogRule(
        f"request:{name}",
        f"{name} is the same on every row of a request",
        f"{name} {{{name}!r}} differs from an earlier row of request {{request_id!r}}: "
        "request-level columns repeat unchanged on every impression row of a request",
        where,
        needs=(name,),
    )


def _position_repeated(log: LogRows) -> Any:
    table = log.table
    again = log.ibis.row_number().over(log.window(["request_id", "position"])) > 0
    return (table.position.notnull() & table.request_id.notnull()) & again


def _position_start(log: LogRows) -> Any:
    table = log.table
    lowest = table.position.min().over(log.window("request_id", ordered=False))
    return table.request_id.notnull() & (lowest > 1) & log.first_of("request_id")


def _one_user(log: LogRows) -> Any:
    table = log.table
    by_variant = log.window("variant", ordered=False)
    return (
        table.variant.notnull()
        & table.user_id.notnull()
        & (table.user_id.min().over(by_variant) == table.user_id.max().over(by_variant))
    )


def _two_variants(log: LogRows) -> Any:
    table = log.table
    by_user = log.window("user_id")
    return (
        table.user_id.notnull()
        & table.variant.notnull()
        & log.later_of("user_id")
        & ~table.variant.identical_to(table.variant.lag().over(by_user))
    )


def _timestamp_out(log: LogRows) -> Any:
    low, high = PLAUSIBLE_YEARS
    table = log.table
    return (
        ~log.epoch_out.fill_null(False)
        & table.event_ts.notnull()
        & ((table[_TS_YEAR] < low) | (table[_TS_YEAR] >= high))
    )


def _backwards(log: LogRows) -> Any:
    table = log.table
    earlier = table.event_ts.lag().over(log.window("session_id"))
    return table.session_id.notnull() & (table.event_ts < earlier)


_LOW, _HIGH = PLAUSIBLE_YEARS

#: Every rule, in the order problems on one row are listed.
RULES: tuple[LogRule, ...] = (
    *(_type_rule(name, kind) for name, kind in LOG_COLUMNS.items()),
    *(_empty_rule(name) for name in _NOT_NULL),
    LogRule(
        "empty:query",
        "a row has a query_id or a query_text",
        "{log.query_columns} empty: a request needs the query it ran",
        lambda log: log.ibis.and_(
            *(log.table[c].isnull() for c in _QUERY_COLUMNS if c in log.present)
        ),
    ),
    *(_request_rule(name) for name in _REQUEST_COLUMNS),
    LogRule(
        "position:below1",
        "positions are 1 or more",
        "position {position!r} is below 1: positions are 1-based ranks on the results page",
        lambda log: log.table.position < 1,
    ),
    LogRule(
        "position:repeated",
        "no position repeats within a request",
        "position {position!r} is repeated within request {request_id!r}: each shown "
        "result has its own position",
        _position_repeated,
    ),
    LogRule(
        "position:start",
        "a request's positions start at 1",
        "request {request_id!r} starts at position {position!r}: positions start at 1",
        _position_start,
    ),
    LogRule(
        "doc:no-position",
        "a row with a document has a position",
        "doc_id {doc_id!r} has no position: give each shown result its 1-based rank",
        lambda log: log.has_doc & log.table.position.isnull(),
    ),
    LogRule(
        "doc:no-doc",
        "a row with a position has a document",
        "position {position!r} has no doc_id: a row is one shown result (only a "
        "no-result request's row has neither)",
        lambda log: ~log.has_doc & log.table.position.notnull(),
    ),
    LogRule(
        "doc:missing",
        "a row without a document belongs to a no-result request",
        "doc_id is empty but result_count is {result_count!r}: only a no-result request "
        "(result_count 0) has a row without a document",
        lambda log: ~log.has_doc & (log.table.result_count > 0),
    ),
    LogRule(
        "noresult:doc",
        "a no-result request's row shows no document",
        "result_count is 0 but the row shows doc_id {doc_id!r}: a no-result request has "
        "one row with doc_id and position empty",
        lambda log: log.has_doc & (log.table.result_count == 0),
    ),
    LogRule(
        "noresult:rows",
        "a no-result request has one row",
        "no-result request {request_id!r} has more than one row: it is exactly one row "
        "with doc_id and position empty",
        lambda log: (
            (log.table.result_count == 0)
            & log.later_of("request_id")
            & log.table.request_id.notnull()
        ),
    ),
    LogRule(
        "click:no-impression",
        "a clicked row shows a document",
        "a click on a row without a document (request {request_id!r}): a click needs an "
        "impression, and a no-result request has none",
        lambda log: log.table.clicked & ~log.has_doc,
    ),
    LogRule(
        "negative:result_count",
        "result counts are 0 or more",
        "result_count {result_count!r} is negative: it counts the results (0 for none)",
        lambda log: log.table.result_count < 0,
    ),
    LogRule(
        "finite:latency_ms",
        "latencies are finite numbers",
        "latency_ms {latency_ms!r} is not a finite number: it is a duration in milliseconds",
        lambda log: _not_finite(log.table.latency_ms),
    ),
    LogRule(
        "finite:dwell_ms",
        "dwell times are finite numbers",
        "dwell_ms {dwell_ms!r} is not a finite number: it is a duration in milliseconds "
        "(leave it empty when there was no click)",
        lambda log: _not_finite(log.table.dwell_ms),
    ),
    LogRule(
        "negative:latency_ms",
        "latencies are 0 or more",
        "latency_ms {latency_ms!r} is negative: it is a duration in milliseconds",
        lambda log: log.table.latency_ms < 0,
    ),
    LogRule(
        "negative:dwell_ms",
        "dwell times are 0 or more",
        "dwell_ms {dwell_ms!r} is negative: it is a duration in milliseconds",
        lambda log: log.table.dwell_ms < 0,
    ),
    LogRule(
        "dwell:not-clicked",
        "only a clicked row has a dwell time",
        "dwell_ms {dwell_ms!r} on a row that was not clicked: dwell is the time on a "
        "clicked document (leave it empty otherwise)",
        lambda log: (log.table.dwell_ms > 0) & ~log.table.clicked,
    ),
    LogRule(
        "interleave_team",
        "interleave_team is A or B",
        "interleave_team {interleave_team!r} is not A or B: it names the ranker that "
        "contributed the shown document",
        lambda log: (
            log.table.interleave_team.notnull() & ~log.table.interleave_team.isin(["A", "B"])
        ),
    ),
    LogRule(
        "variant:one-user",
        "each variant is seen for more than one user",
        "variant {variant!r} is seen for one user only ({user_id!r}): an A/B arm needs "
        "many users (is the label misspelt?)",
        _one_user,
    ),
    LogRule(
        "user:two-variants",
        "each user stays in one variant",
        "user {user_id!r} is in variant {variant!r} here and in another on an earlier "
        "row: users are the randomisation unit, each stays in one variant",
        _two_variants,
    ),
    # Timestamps a person could have logged: epoch numbers in another unit than ts_unit, or a
    # clock that was never set, land decades or millennia away.
    LogRule(
        "range:epoch",
        f"event_ts given as epoch numbers falls in the years {_LOW}-{_HIGH}",
        f"event_ts {{ts_written}} read as {{log.unit_words}} since 1970 is in the year "
        f"{{ts_year}}, outside {_LOW}-{_HIGH}: {{ts_hint}}",
        lambda log: log.epoch_out,
    ),
    LogRule(
        "range:timestamp",
        f"event_ts falls in the years {_LOW}-{_HIGH}",
        f"event_ts is in the year {{ts_year}}, outside {_LOW}-{_HIGH}: a clock that was not "
        "set, or epoch numbers stored as a timestamp in the wrong unit",
        _timestamp_out,
    ),
    LogRule(
        "time:backwards",
        "a session's rows are in time order (for a log read as ordered)",
        "event_ts {event_ts} is earlier than the row before it in session "
        "{session_id!r}: a session's requests are logged in time order; give "
        "ordered=False (--unordered) when the rows are not in time order",
        _backwards,
        when=lambda log: log.ordered and log.source.has_order,
    ),
)


def _is_empty(column: Any) -> Any:
    """Whether ``column`` holds no value (SQL NULL). Ibis on PySpark counts a float's NaN as
    null in ``isnull()``; a NaN is a value, reported as not a finite number, not as empty."""
    if column.type().is_floating():
        return column.isnull() & ~column.isnan().fill_null(False)
    return column.isnull()


def _epoch_hint(value: Any, ts_unit: str) -> tuple[int | None, str]:
    """The year that epoch number ``value`` (in ``ts_unit``) gives, and which unit to give
    instead."""
    try:
        seconds = float(value) / TS_UNITS[ts_unit]
    except (TypeError, ValueError):
        return None, "give the unit of the epoch numbers"
    year = int(1970 + seconds // _SECONDS_PER_YEAR)
    for unit, per_second in TS_UNITS.items():
        if unit != ts_unit and _LOW_SECONDS <= float(value) / per_second < _HIGH_SECONDS:
            return year, (
                f"it looks like {_UNIT_WORDS[unit]}; give ts_unit={unit!r} (--ts-unit {unit})"
            )
    return year, "give the unit of the epoch numbers: ts_unit (--ts-unit) s, ms, us or ns"


# --- running them -----------------------------------------------------------------------------


def find_problems(source: _Source, ordered: bool = True) -> list[LogProblem]:
    """The first offending row of every rule of :data:`RULES` that applies to ``source``, in
    file order (file, row, then the rules' order)."""
    log = LogRows(source, ordered)
    ibis = log.ibis
    typed = log.table
    rules = [rule for rule in RULES if rule.applies(log)]
    # One query per kind of rule (the rules over one window share it): measured faster on
    # DuckDB than one query holding every window (check_log on 4.6 million rows: 24 s against
    # 43 s; read_log's validation 15 s against 42 s).
    kinds: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        kinds.setdefault(rule.kind, []).append(i)
    found: list[dict[str, Any]] = []
    for members in kinds.values():
        marked = typed.mutate(
            **{f"__check{i}": rules[i].where(log).fill_null(False) for i in members}
        )
        firsts = {
            f"__first{i}": ibis.ifelse(
                marked[f"__check{i}"], marked[_ROW], ibis.null("int64")
            ).min()
            for i in members
        }
        if source.has_file_column:
            found += marked.group_by(_FILE).aggregate(**firsts).to_pyarrow().to_pylist()
        else:
            found += [
                {**row, _FILE: source.name}
                for row in marked.aggregate(**firsts).to_pyarrow().to_pylist()
            ]
    places: dict[int, tuple[str, int]] = {}
    for group in found:
        for i in range(len(rules)):
            row = group.get(f"__first{i}")
            if row is None:
                continue
            place = (str(group[_FILE]), int(row))
            if i not in places or place < places[i]:
                places[i] = place
    if not places:
        return []
    values = _rows(source, typed, set(places.values()))
    problems = []
    for i, place in places.items():
        message = _fill(rules[i].message, values.get(place, {}), log)
        problems.append((place, i, LogProblem(place[0], place[1], message)))
    problems.sort(key=lambda item: (item[0], item[1]))
    return [problem for _, _, problem in problems]


def _rows(
    source: _Source, typed: Any, places: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], dict[str, Any]]:
    """The values of the rows at ``places`` (one query), as typed or else as written."""
    ibis = _ibis()
    # Python's datetime holds the years 1 to 9999: a timestamp beyond is shown by its year.
    both = typed.mutate(
        **{
            name: ibis.ifelse(typed[_TS_YEAR].between(1, 9999), typed[name], None)
            for name in ("event_ts", "raw__event_ts")
            if name in typed.columns and typed[name].type().is_timestamp()
        }
    )
    # Spark's rows come back through pandas, where NaN becomes null: which values were NaN
    # is asked of the engine, so that a NaN is shown as nan on every engine.
    floats = [name for name, kind in LOG_COLUMNS.items() if kind == "float64"]
    both = both.mutate(**{f"__nan_{name}": both[name].isnan().fill_null(False) for name in floats})
    wanted = []
    for file, row in places:
        hit = both[_ROW] == row
        if source.has_file_column:
            hit = hit & (both[_FILE] == file)
        wanted.append(hit)
    rows = both.filter(ibis.or_(*wanted)).to_pyarrow().to_pylist()
    result: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        file = str(row[_FILE]) if source.has_file_column else source.name
        values = {name: row[name] for name in LOG_COLUMNS}
        for name in floats:
            if row[f"__nan_{name}"]:
                values[name] = float("nan")
        for name in LOG_COLUMNS:
            # A value that failed its type is shown as it was written.
            if values[name] is None and row.get(f"raw__{name}") is not None:
                values[name] = row[f"raw__{name}"]
        values["ts_year"] = row[_TS_YEAR]
        if row[_TS_SECONDS] is not None:  # epoch numbers: shown as written, and their year
            values["ts_written"] = row.get("raw__event_ts")
            values["ts_year"], values["ts_hint"] = _epoch_hint(row["raw__event_ts"], source.ts_unit)
        result[(file, int(row[_ROW]))] = values
    return result


class _Shown(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return None


def _fill(template: str, values: Mapping[str, Any], log: LogRows) -> str:
    """``template`` with the row's ``values`` (and the ``log``'s, as ``{log.<name>}``)."""
    shown = _Shown(log=log)
    for name, value in values.items():
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        shown[name] = value
    return template.format_map(shown)


def count_log(typed: Any) -> tuple[int, tuple[VariantCounts, ...], tuple[tuple[str, int], ...]]:
    """The rows of a typed log (:func:`._logschema._typed`), its counts per variant (by name)
    and its experiment ids with their rows (most rows first): three engine queries."""
    counts = (
        typed.filter(typed.variant.notnull())
        .group_by("variant")
        .aggregate(
            users=typed.user_id.nunique(),
            sessions=typed.session_id.nunique(),
            requests=typed.request_id.nunique(),
            impressions=typed.doc_id.notnull().cast("int64").sum(),
            clicks=typed.clicked.cast("int64").sum(),
        )
        .order_by("variant")
        .to_pyarrow()
        .to_pylist()
    )
    rows = int(typed.count().to_pyarrow().as_py())
    tagged = typed.filter(typed.experiment_id.notnull())
    by_experiment = (
        tagged.group_by("experiment_id").aggregate(rows=tagged.count()).to_pyarrow().to_pylist()
    )
    experiments = sorted(
        ((str(e["experiment_id"]), int(e["rows"])) for e in by_experiment),
        key=lambda item: (-item[1], item[0]),
    )
    variants = tuple(
        VariantCounts(
            variant=str(c["variant"]),
            users=int(c["users"]),
            sessions=int(c["sessions"]),
            requests=int(c["requests"]),
            impressions=int(c["impressions"] or 0),
            clicks=int(c["clicks"] or 0),
        )
        for c in counts
    )
    return rows, variants, tuple(experiments)
