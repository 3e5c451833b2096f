"""Reading a click log: the checks of bad input (one line naming the source and the row) and
the request-by-position layout the click models read."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from rankmeter.clicks import click_log, fit, labels, split_log
from rankmeter.errors import FormatError, PolicyError


def table(**changes: Any) -> pa.Table:
    columns: dict[str, Any] = {
        "request_id": ["r1", "r1", "r2", "r2"],
        "query_id": ["q", "q", "q", "q"],
        "doc_id": ["a", "b", "b", "a"],
        "position": [1, 2, 1, 2],
        "clicked": [True, False, False, True],
    }
    columns.update(changes)
    return pa.table({k: v for k, v in columns.items() if v is not None})


def test_the_layout_puts_each_request_on_a_row_and_each_position_in_a_column() -> None:
    log = click_log(table())
    assert log.n_sessions == 2 and log.depth == 2 and log.n_pairs == 2
    assert log.query_ids.to_pylist() == ["q", "q"]
    assert log.doc_ids.to_pylist() == ["a", "b"]
    assert log.pairs.tolist() == [[0, 1], [1, 0]]
    assert log.clicks.tolist() == [[True, False], [False, True]]
    assert log.request_ids.to_pylist() == ["r1", "r2"]


def test_a_no_result_request_is_skipped_and_query_text_stands_in_for_query_id() -> None:
    log = click_log(
        pa.table(
            {
                "request_id": ["r1", "r2", "r2"],
                "query_text": ["nothing", "q", "q"],
                "doc_id": [None, "a", "b"],
                "position": pa.array([None, 2, 1], type=pa.int64()),
                "clicked": [0, 1, 0],
            }
        )
    )
    assert log.n_sessions == 1
    assert log.pairs.tolist() == [[1, 0]]
    assert log.clicks.tolist() == [[False, True]]


def test_pandas_frames_are_read_too() -> None:
    pandas = pytest.importorskip("pandas")
    assert click_log(pandas.DataFrame(table().to_pydict())).n_sessions == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"position": None}, "log.parquet: missing column 'position': a click log needs"),
        ({"query_id": None}, "log.parquet: missing column 'query_id': a click log needs"),
        (
            {"position": [1, 0, 1, 2]},
            "log.parquet:2: position 0 is not a rank: positions start at 1",
        ),
        (
            {"position": [1, 2, 2, 2]},
            "log.parquet:4: position 2 appears twice in request 'r2' (positions are unique",
        ),
        (
            {"doc_id": ["a", None, "b", "a"], "position": pa.array([1, None, 1, 2])},
            "log.parquet:2: a click without an impression: clicked is true on a row with no doc_id",
        ),
        (
            {"position": pa.array([1, None, 1, 2])},
            "log.parquet:2: position is null: an impression needs both a doc_id and a position",
        ),
        ({"clicked": [True, None, False, True]}, "log.parquet:2: clicked is null"),
        (
            {"position": [1, 2, 1, 200_000_000]},
            "log.parquet:4: position 200000000 makes a 2 x 200,000,000 request-by-position matrix",
        ),
    ],
)
def test_bad_rows_are_one_line_errors_naming_source_and_row(
    changes: dict[str, Any], message: str
) -> None:
    if "click without" in message:
        changes = {**changes, "clicked": [True, True, False, True]}
    with pytest.raises(FormatError, match=re.escape(message)) as caught:
        click_log(table(**changes), source="log.parquet")
    assert "\n" not in str(caught.value)


def test_fit_and_labels_refuse_bad_logs_too() -> None:
    bad = table(position=[1, 2, 2, 2])
    with pytest.raises(FormatError, match=r"^<log>:4: position 2 appears twice"):
        fit(bad)
    with pytest.raises(FormatError, match=r"^<log>:4: position 2 appears twice"):
        labels(bad)


def test_something_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(FormatError, match=r"cannot read a click log from dict: give a pyarrow"):
        click_log({"request_id": ["r1"]})


def test_split_is_by_request_and_seeded() -> None:
    n = 50
    log = pa.table(
        {
            "request_id": np.repeat([f"r{i}" for i in range(n)], 2).tolist(),
            "query_id": ["q"] * (2 * n),
            "doc_id": ["a", "b"] * n,
            "position": [1, 2] * n,
            "clicked": [True, False] * n,
        }
    )
    train, test = split_log(log, 0.2, seed=3)
    assert (train.n_sessions, test.n_sessions) == (40, 10)
    assert not set(train.request_ids.to_pylist()) & set(test.request_ids.to_pylist())
    again, _ = split_log(log, 0.2, seed=3)
    assert again.request_ids.to_pylist() == train.request_ids.to_pylist()
    with pytest.raises(PolicyError, match=r"held_out=1.5 must be a number strictly between 0"):
        split_log(log, 1.5)
