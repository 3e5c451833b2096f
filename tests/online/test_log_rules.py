"""The log checks as rule objects (rankmeter.online._logchecks): each says what it checks, its
message and its engine expression, and marks exactly the rows it is about."""

from __future__ import annotations

import string
from typing import Any

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

from _logs_support import arrow, log_rows

from rankmeter.online._logchecks import RULES, LogRows
from rankmeter.online._logschema import _ROW, LOG_COLUMNS
from rankmeter.online.logs import _read

#: Fields a message may take from the offending row besides the log's columns.
ROW_EXTRAS = {"ts_year", "ts_written", "ts_hint"}


def rows_of(log: Any) -> LogRows:
    return LogRows(_read(log, "duckdb"))


def marked(log: LogRows) -> dict[str, list[int]]:
    """Each applying rule's offending rows (1-based), in one query."""
    rules = [rule for rule in RULES if rule.applies(log)]
    flags = log.table.mutate(
        **{f"rule{i}": rule.where(log).fill_null(False) for i, rule in enumerate(rules)}
    ).to_pyarrow()
    numbers = flags.column(_ROW).to_pylist()
    found = {}
    for i, rule in enumerate(rules):
        hits = flags.column(f"rule{i}").to_pylist()
        found[rule.name] = sorted(n for n, hit in zip(numbers, hits, strict=True) if hit)
    return found


def test_every_rule_says_what_it_checks_and_names_known_fields() -> None:
    log = rows_of(arrow(log_rows()))
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        assert rule.checks and rule.message, rule.name
        for _, field, _, _ in string.Formatter().parse(rule.message):
            if field is None:
                continue
            root, _, attribute = field.partition(".")
            if root == "log":
                assert isinstance(getattr(log, attribute), str), (rule.name, field)
            else:
                assert root in LOG_COLUMNS or root in ROW_EXTRAS, (rule.name, field)


def test_a_good_log_breaks_no_rule() -> None:
    log = rows_of(arrow(log_rows()))
    found = marked(log)
    assert "time:backwards" in found
    assert {name: hits for name, hits in found.items() if hits} == {}


@pytest.mark.parametrize(
    ("changes", "rule", "rows"),
    [
        ({"row3": {"p": 0, "d": "d9", "n": 1}}, "position:below1", [3]),
        ({"row2": {"p": 1}}, "position:repeated", [2]),
        ({"row2": {"q": "q9"}}, "request:query_id", [2]),
        ({"row1": {"dw": -1.0}}, "negative:dwell_ms", [1]),
        ({"row2": {"dw": 5.0}}, "dwell:not-clicked", [2]),
        ({"row3": {"c": 1}}, "click:no-impression", [3]),
        ({"row1": {"u": None}}, "empty:user_id", [1]),
    ],
)
def test_a_rule_marks_the_rows_it_is_about(
    changes: dict[str, dict[str, Any]], rule: str, rows: list[int]
) -> None:
    assert marked(rows_of(arrow(log_rows(**changes))))[rule] == rows


def test_rules_apply_to_the_log_they_fit() -> None:
    table = arrow(log_rows())
    by_name = {rule.name: rule for rule in RULES}
    ordered, unordered = LogRows(_read(table, "duckdb")), LogRows(_read(table, "duckdb"), False)
    assert by_name["time:backwards"].applies(ordered)
    assert not by_name["time:backwards"].applies(unordered)
    without = LogRows(_read(table.drop_columns(["dwell_ms"]), "duckdb"))
    assert by_name["type:dwell_ms"].applies(ordered)
    assert not by_name["type:dwell_ms"].applies(without)
    assert by_name["finite:dwell_ms"].applies(without)  # typed: an absent column is all null
