"""`rankmeter evaluate --worst N`: each metric's N worst queries, in every output format, as
the library's PerQuery.worst lists them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rankmeter

from ._cli_support import CLI, NO_JUDGED_WARNING

METRICS = ("-m", "RR", "-m", "P@2")


def _worst(files: dict[str, Path], run: str, n: int) -> dict[str, tuple[tuple[str, float], ...]]:
    result = rankmeter.evaluate(files["qrels"], files[run], ["RR", "P@2"])
    return {m: result.per_query.worst(m, n) for m in ("RR", "P@2")}


def test_json_lists_each_metrics_worst_queries(cli: CLI, files: dict[str, Path]) -> None:
    args = ("evaluate", files["qrels"], files["a"], files["b"], *METRICS, "-f", "json")
    result = cli(*args, "--worst", "2", *NO_JUDGED_WARNING)
    # The sample runs differ in depth (4 and 2 results a query): evaluate says so, nothing else.
    assert result.code == 0
    assert [line for line in result.err.splitlines() if "differ in depth" not in line] == []
    payload = json.loads(result.out)
    for record, run in zip(payload, ("a", "b"), strict=True):
        expected = _worst(files, run, 2)
        assert record["worst"] == {
            m: [{"query": q, "value": v} for q, v in pairs] for m, pairs in expected.items()
        }
        assert len(record["worst"]["RR"]) == 2
    plain = json.loads(cli(*args, *NO_JUDGED_WARNING).out)
    assert all("worst" not in record for record in plain)  # unchanged without --worst


def test_trec_lines_of_each_metrics_worst_queries(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate", files["qrels"], files["a"], *METRICS, "-f", "trec", "--worst", "1",
        *NO_JUDGED_WARNING,
    )  # fmt: skip
    assert result.code == 0, result.err
    lines = [line.split("\t") for line in result.out.splitlines()]
    per_query = [(name.strip(), q) for name, q, _ in lines if q != "all"]
    expected = _worst(files, "a", 1)
    assert per_query == [("recip_rank", expected["RR"][0][0]), ("P_2", expected["P@2"][0][0])]


def test_tsv_rows_of_the_worst_queries_then_all(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate", files["qrels"], files["a"], *METRICS, "-f", "tsv", "--worst", "1",
        *NO_JUDGED_WARNING,
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = [line.split("\t") for line in result.out.splitlines()]
    assert rows[0] == ["run", "query_id", "RR", "P@2"]
    expected = _worst(files, "a", 1)
    wanted = list(dict.fromkeys(pairs[0][0] for pairs in expected.values()))
    assert [row[1] for row in rows[1:]] == [*wanted, "all"]


def test_table_shows_a_worst_table_per_run(cli: CLI, files: dict[str, Path]) -> None:
    result = cli(
        "evaluate", files["qrels"], files["a"], *METRICS, "--worst", "2", *NO_JUDGED_WARNING
    )
    assert result.code == 0, result.err
    assert "bm25: the 2 worst queries per metric" in result.out
    worst_rr = _worst(files, "a", 2)["RR"]
    block = result.out.split("worst queries per metric", 1)[1]
    for query, _ in worst_rr:
        assert query in block


@pytest.mark.parametrize("value", ["0", "-3"])
def test_worst_must_be_positive(cli: CLI, files: dict[str, Path], value: str) -> None:
    result = cli("evaluate", files["qrels"], files["a"], f"--worst={value}")
    message = result.assert_one_error_line(code=2)
    assert re.fullmatch(rf"worst={value} must be an integer >= 1 \(how many .*\)", message)
