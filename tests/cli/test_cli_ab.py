"""`rankmeter ab LOG`: the A/B analysis from the command line, in four formats; bad input is
one line on stderr and nothing on stdout (exit 2 for a wrong name or option, 1 for a log that
cannot be analysed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="A/B analysis needs the [online] extra (ibis-framework)")
pytest.importorskip("tea_tasting", reason="A/B analysis needs the [online] extra (tea-tasting)")

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from _ab_logs import random_log

from ._cli_support import CLI

HURTS_NEW_USERS = {
    ("control", True): 0.2,
    ("control", False): 0.2,
    ("treatment", True): 0.1,
    ("treatment", False): 0.3,
}


def _write(table: pa.Table, path: Path) -> Path:
    pq.write_table(table, path)
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ab")
    log = random_log(600, seed=11, ctr=HURTS_NEW_USERS)
    first_pages = log.filter(pc.match_substring(log["request_id"], "-r0"))
    return {
        "log": _write(log, folder / "log.parquet"),
        "pre": _write(first_pages, folder / "pre.parquet"),
        "skewed": _write(
            random_log(2000, seed=7, treatment_share=0.6, pages=1, shown=1),
            folder / "skewed.parquet",
        ),
        "one": _write(random_log(20, seed=1, treatment_share=0.0), folder / "one.parquet"),
    }


def test_ab_prints_the_metrics_table(cli: CLI, logs: dict[str, Path]) -> None:
    result = cli("ab", logs["log"])
    assert result.code == 0, result.err
    assert result.err == ""
    text = " ".join(result.out.split())
    assert text.startswith("A/B: treatment vs control")
    for metric in ("ctr", "abandonment", "success", "reformulation", "no_result", "latency"):
        assert f" {metric} " in text
    assert "p50 ms" in text and "WARNING" not in text


def test_ab_json_with_metrics_segments_and_pre(cli: CLI, logs: dict[str, Path]) -> None:
    result = cli(
        "ab", logs["log"], "-m", "ctr", "--metric", "success", "--segments",
        "is_new_user,device", "--pre", logs["pre"], "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert list(payload["metrics"]) == ["ctr", "success"]
    assert payload["settings"]["cuped"] is True
    assert all(m["cuped"] for m in payload["metrics"].values())
    worse = {(s["column"], s["value"], s["metric"]) for s in payload["segments"] if s["worse"]}
    assert ("is_new_user", "true", "ctr") in worse
    assert payload["warnings"] == []


def test_ab_writes_markdown_and_html_files(cli: CLI, logs: dict[str, Path], tmp_path: Path) -> None:
    for fmt, name in (("markdown", "ab.md"), ("html", "ab.html")):
        target = tmp_path / name
        result = cli("ab", logs["log"], "-m", "ctr", "-f", fmt, "-o", target)
        assert result.code == 0, result.err
        assert result.out == ""
        written = target.read_text(encoding="utf-8")
        assert "ctr" in written
    assert (tmp_path / "ab.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_sample_ratio_mismatch_is_loud_in_every_format(cli: CLI, logs: dict[str, Path]) -> None:
    table = cli("ab", logs["skewed"], "-m", "ctr")
    assert table.code == 0 and table.out.startswith("WARNING: SAMPLE RATIO MISMATCH")
    markdown = cli("ab", logs["skewed"], "-m", "ctr", "-f", "markdown")
    assert markdown.out.startswith("> **Warning:** SAMPLE RATIO MISMATCH")
    payload = json.loads(cli("ab", logs["skewed"], "-m", "ctr", "-f", "json").out)
    assert payload["warnings"][0].startswith("SAMPLE RATIO MISMATCH")
    html = cli("ab", logs["skewed"], "-m", "ctr", "-f", "html").out
    assert html.index('role="alert"') < html.index("<h1>")


def test_an_intended_uneven_split_is_not_a_mismatch(cli: CLI, logs: dict[str, Path]) -> None:
    # 60 % of the users in the treatment on purpose: the command line could not say so, and
    # every such test was reported as a broken split.
    payload = json.loads(cli("ab", logs["skewed"], "-m", "ctr", "-f", "json").out)
    counts = payload["sample_ratio"]
    assert payload["warnings"][0].startswith(
        f"SAMPLE RATIO MISMATCH: {counts['control_users']:,} control users vs "
        f"{counts['treatment_users']:,} treatment users"
    )
    intended = cli("ab", logs["skewed"], "-m", "ctr", "-f", "json", "--expected-ratio", "1.5")
    assert intended.code == 0, intended.err
    payload = json.loads(intended.out)
    assert payload["warnings"] == [] and payload["sample_ratio"]["expected_ratio"] == 1.5
    strict = cli("ab", logs["skewed"], "-m", "ctr", "-f", "json", "--srm-alpha", "0.5",
                 "--expected-ratio", "1.5")  # fmt: skip
    assert json.loads(strict.out)["sample_ratio"]["alpha"] == 0.5


def test_a_csv_log_is_read_too(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    pacsv.write_csv(random_log(80, seed=2), path)
    result = cli("ab", path, "-m", "ctr", "-f", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["sample_ratio"]["control_users"] == 40


# -- bad input: one line, nothing on stdout ------------------------------------------------------


def test_unknown_control_is_a_usage_error(cli: CLI, logs: dict[str, Path]) -> None:
    message = cli("ab", logs["log"], "--control", "B").assert_one_error_line(2)
    assert (
        message == "control='B' is not a variant of the log; its variants: 'control', 'treatment'"
    )


def test_unknown_metric_is_a_usage_error(cli: CLI, logs: dict[str, Path]) -> None:
    message = cli("ab", logs["log"], "-m", "ctrr").assert_one_error_line(2)
    assert message == (
        "unknown A/B metric 'ctrr'; choose from ctr, abandonment, success, reformulation, "
        "no_result, latency"
    )


def test_the_help_lists_the_declared_metrics(cli: CLI) -> None:
    """The --metric help is made from rankmeter.online.AB_METRICS, as the check of a name is."""
    import re

    from rankmeter.online import AB_METRICS

    result = cli("ab", "--help")
    assert result.code == 0
    listed = re.sub(r"[\s│]+", " ", result.out)
    assert f"Metric, repeatable: {', '.join(AB_METRICS)} (default: all)." in listed


def test_unknown_segment_column_is_a_usage_error(cli: CLI, logs: dict[str, Path]) -> None:
    message = cli("ab", logs["log"], "--segments", "country").assert_one_error_line(2)
    assert message.startswith(f"segment column 'country' is not in the log {logs['log']}")


def test_one_variant_is_a_data_error(cli: CLI, logs: dict[str, Path]) -> None:
    message = cli("ab", logs["one"]).assert_one_error_line(1)
    assert message == (
        f"{logs['one']}: an A/B analysis needs exactly two variants; the log has 1: 'control'"
    )


def test_a_bad_row_is_named_with_file_and_row(cli: CLI, tmp_path: Path) -> None:
    log = random_log(20, seed=1)
    positions = log["position"].to_pylist()
    positions[2] = 0
    path = _write(
        log.set_column(log.schema.get_field_index("position"), "position", pa.array(positions)),
        tmp_path / "bad.parquet",
    )
    message = cli("ab", path).assert_one_error_line(1)
    assert message.startswith(f"{path}:3: position 0 is below 1")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_latency_that_is_not_a_number_is_refused_in_parquet(
    cli: CLI, tmp_path: Path, value: str
) -> None:
    # A NaN latency in a Parquet log passed and the latency was reported "not tested": DuckDB
    # took the file's min/max statistics (which leave NaN out) for bounds on every value.
    log = random_log(20, seed=1)
    requests = log["request_id"].to_pylist()
    first = requests.index(requests[2])
    latencies = [
        float(value) if r == requests[2] else v
        for r, v in zip(requests, log["latency_ms"].to_pylist(), strict=True)
    ]
    path = _write(
        log.set_column(log.schema.get_field_index("latency_ms"), "latency_ms", pa.array(latencies)),
        tmp_path / "latency.parquet",
    )
    message = cli("ab", path).assert_one_error_line(1)
    assert message.startswith(f"{path}:{first + 1}: latency_ms {value} is not a finite number")


def test_a_missing_log_and_a_bad_engine(cli: CLI, tmp_path: Path, logs: dict[str, Path]) -> None:
    missing = tmp_path / "nope.parquet"
    assert cli("ab", missing).assert_one_error_line(1).startswith(f"{missing}: no such file")
    message = cli("ab", logs["log"], "--engine", "postgres").assert_one_error_line(2)
    assert "postgres" in message
    message = cli("ab", logs["log"], "--alpha", "2").assert_one_error_line(2)
    assert message == "alpha=2.0 must be a number strictly between 0 and 1 (the significance level)"


def test_several_experiments_need_experiment(cli: CLI, tmp_path: Path) -> None:
    parts = []
    for experiment, users, prefix in (("exp-a", 60, "a"), ("exp-b", 40, "b")):
        log = random_log(users, seed=len(prefix) + users)
        for column in ("user_id", "session_id", "request_id"):
            renamed = pa.array([prefix + v for v in log[column].to_pylist()])
            log = log.set_column(log.schema.get_field_index(column), column, renamed)
        parts.append(log.append_column("experiment_id", pa.array([experiment] * log.num_rows)))
    path = _write(pa.concat_tables(parts), tmp_path / "two.parquet")
    message = cli("ab", path, "-m", "ctr").assert_one_error_line(2)
    assert message == (
        f"the log {path} holds 2 experiments: 'exp-a' ({parts[0].num_rows:,} rows), 'exp-b' "
        f"({parts[1].num_rows:,} rows); choose one with --experiment ID (experiment= in Python)"
    )
    message = cli("ab", path, "--experiment", "exp-c").assert_one_error_line(2)
    assert message.startswith(f"experiment='exp-c' is not in the log {path}; its experiments: ")
    result = cli("ab", path, "-m", "ctr", "--experiment", "exp-b", "-f", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["experiment"] == "exp-b"
    users = payload["sample_ratio"]["control_users"] + payload["sample_ratio"]["treatment_users"]
    assert users == 40
