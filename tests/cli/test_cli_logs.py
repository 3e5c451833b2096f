"""`rankmeter logs check`: counts and problems of a search log, in three formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from _logs_support import arrow, log_rows

from rankmeter._escape import markdown_text

from ._cli_support import CLI


@pytest.fixture
def good_log(tmp_path: Path) -> Path:
    path = tmp_path / "log.parquet"
    pq.write_table(arrow(log_rows()), path)
    return path


@pytest.fixture
def bad_log(tmp_path: Path) -> Path:
    path = tmp_path / "bad.csv"
    pacsv.write_csv(arrow(log_rows(row2={"p": 0}, row3={"c": 1})), path)
    return path


def test_check_good_log_table(cli: CLI, good_log: Path) -> None:
    result = cli("logs", "check", good_log)
    assert result.code == 0, result.err
    assert result.err == ""
    assert "7 rows, 2 variants, no problems (duckdb)" in " ".join(result.out.split())
    assert "control" in result.out and "treatment" in result.out
    assert "problems" not in result.out.split("no problems", 1)[1]


def test_check_good_log_json(cli: CLI, good_log: Path) -> None:
    result = cli("logs", "check", good_log, "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["ok"] is True and payload["rows"] == 7
    assert payload["variants"][1] == {
        "variant": "treatment",
        "users": 2,
        "sessions": 2,
        "requests": 2,
        "impressions": 3,
        "clicks": 2,
    }


def test_check_bad_log_exits_1_with_problems(cli: CLI, bad_log: Path) -> None:
    result = cli("logs", "check", bad_log, "-f", "json")
    assert result.code == 1
    problems = json.loads(result.out)["problems"]
    assert [(p["row"], p["message"].split(":")[0]) for p in problems] == [
        (3, "position 0 is below 1"),
        (4, "a click on a row without a document (request 'r2')"),
    ]
    assert result.err.count("\n") == 1
    assert result.err == (
        f"rankmeter: {bad_log}: 2 problems in the log (the first: {bad_log}:3: position 0 is "
        "below 1: positions are 1-based ranks on the results page)\n"
    )


def test_check_bad_log_markdown_to_file(cli: CLI, bad_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.md"
    result = cli("logs", "check", bad_log, "--format", "markdown", "-o", out)
    assert result.code == 1 and result.out == ""
    text = out.read_text()
    assert "| variant | users | sessions | requests | impressions | clicks |" in text
    assert f"| {markdown_text(f'{bad_log}:3')} | position 0 is below 1" in text


def test_check_escapes_names_from_the_log(cli: CLI, tmp_path: Path) -> None:
    rows = log_rows()
    for row in rows:
        if row["variant"] == "control":
            row["variant"] = "ctl|*x*\x1b[31m"
    path = tmp_path / "log.parquet"
    pq.write_table(arrow(rows), path)
    markdown = cli("logs", "check", path, "-f", "markdown").out
    assert "ctl\\|\\*x\\*" in markdown and "\x1b" not in markdown
    table = cli("logs", "check", path).out
    assert "\x1b[31m" not in table and "\\x1b" in table


def test_check_missing_columns(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    pacsv.write_csv(arrow(log_rows(), drop=("position",)), path)
    result = cli("logs", "check", path)
    assert result.code == 1
    assert "missing column position" in result.out
    assert f"(the first: {path}: missing column position:" in result.err


def test_unreadable_log_is_one_error_line(cli: CLI, tmp_path: Path) -> None:
    result = cli("logs", "check", tmp_path / "nothing.parquet")
    message = result.assert_one_error_line(1)
    assert message == f"{tmp_path / 'nothing.parquet'}: no such file: give the path of a search log"


@pytest.fixture
def collection(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"q{q} 0 d{q}-{d} {max(0, 2 - d)}\n" for q in range(8) for d in range(5))
    )
    control, treatment = tmp_path / "control.run", tmp_path / "treatment.run"
    control.write_text(
        "".join(f"q{q} Q0 d{q}-{d} {d + 1} {float(d)} bad\n" for q in range(8) for d in range(5))
    )
    treatment.write_text(
        "".join(f"q{q} Q0 d{q}-{d} {d + 1} {5.0 - d} good\n" for q in range(8) for d in range(5))
    )
    return qrels, control, treatment


def test_simulate_writes_a_valid_log_and_its_pre_period(
    cli: CLI, collection: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out, pre = tmp_path / "log.parquet", tmp_path / "pre.parquet"
    result = cli(
        "logs", "simulate", *collection, "-o", out, "--users", "300", "--seed", "5",
        "--split", "70,30", "--segment-effect", "new=0.5", "--pre-period", pre,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.err == ""
    lines = result.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"{out}: ") and "300 users" in lines[0]
    assert lines[1].startswith(f"{pre}: ")
    check = cli("logs", "check", out, "-f", "json")
    assert check.code == 0, check.out
    counts = {v["variant"]: v["users"] for v in json.loads(check.out)["variants"]}
    assert counts["control"] > counts["treatment"]
    assert cli("logs", "check", pre).code == 0
    table = pq.read_table(out)
    assert table.equals(pq.read_table(out))
    again = tmp_path / "again.parquet"
    cli("logs", "simulate", *collection, "-o", again, "--users", "300", "--seed", "5",
        "--split", "70,30", "--segment-effect", "new=0.5")  # fmt: skip
    assert pq.read_table(again).equals(table)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "-o/--output names the log file to write: its suffix gives the format"),
        (
            ("-o", "x.txt"),
            "x.txt: a log's name says its format, and its suffix '.txt' names none: end it in",
        ),
        (
            ("-o", "x.parquet", "--pre-period", "pre"),
            "pre: a log's name says its format, and it has no suffix: end it in",
        ),
        (("-o", "x.parquet", "--split", "1,2,3"), "--split '1,2,3' gives 3 values for 2"),
        (("-o", "x.parquet", "--split", "a,b"), "--split 'a,b': 'a' is not a number"),
        (
            ("-o", "x.parquet", "--split", "100,0"),
            "--split '100,0' gives treatment no users: an A/B log needs users in both variants",
        ),
        (
            ("-o", "x.parquet", "--segment-effect", "0.5"),
            "--segment-effect '0.5': give NAME=FACTOR",
        ),
        (("-o", "x.parquet", "--users", "0"), "users=0 must be an integer from 1 to 100,000,000"),
    ],
)
def test_simulate_usage_errors(
    cli: CLI,
    collection: tuple[Path, Path, Path],
    args: tuple[str, ...],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("logs", "simulate", *collection, *args)
    assert message in result.assert_one_error_line(2)
    assert not (tmp_path / "x.parquet").exists()
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_simulate_writes_the_format_its_name_says(
    cli: CLI, collection: tuple[Path, Path, Path], tmp_path: Path, suffix: str
) -> None:
    # -o x.csv wrote Parquet under the name, and `logs check x.csv` refused it ("not UTF-8").
    parquet, other = tmp_path / "log.parquet", tmp_path / f"log.{suffix}"
    pre = tmp_path / f"pre.{suffix}"
    settings = ("--users", "200", "--seed", "3")
    assert cli("logs", "simulate", *collection, "-o", parquet, *settings).code == 0
    result = cli("logs", "simulate", *collection, "-o", other, "--pre-period", pre, *settings)
    assert result.code == 0, result.err
    if suffix == "csv":
        assert other.read_text(encoding="utf-8").startswith('"event_ts","user_id"')
    else:
        first = json.loads(other.read_text(encoding="utf-8").splitlines()[0])
        assert first["event_ts"].endswith("+00:00") and first["variant"] in ("control", "treatment")
    checks = [cli("logs", "check", path, "-f", "json") for path in (parquet, other, pre)]
    assert [c.code for c in checks] == [0, 0, 0], [c.err for c in checks]
    want, got = (json.loads(c.out) for c in checks[:2])
    assert got["rows"] == want["rows"] and got["variants"] == want["variants"]


# --- how a log is read: --ts-unit and --unordered, on every command that reads a log ---------

#: The commands that read a search log's timestamps (interleave reads only the columns its
#: credit needs: no timestamps, so neither option).
LOG_READERS = [
    ("logs", "check"),
    ("ab",),
    ("online-vs-offline",),
    ("clicks", "fit"),
    ("clicks", "labels"),
]


def _commands() -> dict[tuple[str, ...], Any]:
    import typer

    from rankmeter.cli import app

    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))
        if not hasattr(command, "commands"):
            found[path] = command

    walk(typer.main.get_command(app), ())
    return found


@pytest.mark.parametrize("flag", ["--ts-unit", "--unordered"])
def test_reading_options_on_every_log_reader_declared_once(flag: str) -> None:
    declared = {}
    for path, command in _commands().items():
        for param in command.params:
            if flag in param.opts:
                declared[path] = (tuple(param.opts), param.help)
    assert sorted(declared) == sorted(LOG_READERS)
    assert len(set(declared.values())) == 1, declared


def ms_and_unsorted(table: pa.Table) -> pa.Table:
    """``table`` with event_ts as epoch milliseconds (int64) and its rows reversed, as a
    warehouse export may give it."""
    import pyarrow.compute as pc

    ts = table["event_ts"]
    if pa.types.is_string(ts.type):
        ts = pc.strptime(pc.replace_substring(ts, "Z", ""), format="%Y-%m-%dT%H:%M:%S", unit="ms")
    ms = pc.cast(ts, pa.timestamp("ms"), safe=False).cast(pa.int64())
    table = table.set_column(table.column_names.index("event_ts"), "event_ts", ms)
    return table.take(pa.array(range(table.num_rows - 1, -1, -1)))


@pytest.fixture(scope="module")
def reader_args(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], list[Any]]:
    """For each log reader: its arguments, with a log in milliseconds and unsorted."""
    pytest.importorskip("tea_tasting", reason="ab needs the [online] extra")
    from _ab_logs import random_log
    from _offline_logs import collection, log_of

    from rankmeter.clicks import simulate

    from .test_cli_clicks import _collection

    folder = tmp_path_factory.mktemp("reading")

    def save(name: str, table: pa.Table) -> Path:
        path = folder / name
        pq.write_table(ms_and_unsorted(table), path)
        return path

    qrels, control, treatment, rankings = collection(folder)
    offline = save("offline.parquet", log_of(rankings, users=200, clicks_follow=True))
    click_qrels, click_run = _collection()
    clicks = save("clicks.parquet", simulate(click_qrels, click_run, sessions=500, seed=2))
    return {
        ("logs", "check"): [save("check.parquet", arrow(log_rows()))],
        ("ab",): [save("ab.parquet", random_log(40, seed=1))],
        ("online-vs-offline",): [qrels, control, treatment, offline, "--online-metric", "ctr"],
        ("clicks", "fit"): [clicks],
        ("clicks", "labels"): [clicks, "-o", "-", "--min-impressions", "5"],
    }


@pytest.mark.parametrize("command", LOG_READERS, ids=" ".join)
def test_epoch_milliseconds_and_unsorted_rows_are_read_with_the_options(
    cli: CLI, reader_args: dict[tuple[str, ...], list[Any]], command: tuple[str, ...]
) -> None:
    args = [*command, *reader_args[command]]
    # Milliseconds read as seconds are the year 56000 or so: one line, with the way out.
    # (logs check prints its report, and the first problem as the one line on stderr)
    failed = cli(*args)
    message = failed.err if command == ("logs", "check") else failed.assert_one_error_line(1)
    assert failed.code == 1 and failed.err.count("\n") == 1
    assert "read as seconds since 1970 is in the year" in message, message
    assert "give ts_unit='ms' (--ts-unit ms)" in message
    done = cli(*args, "--ts-unit", "ms", "--unordered")
    assert done.code == 0, done.err


def test_interleave_reads_a_log_in_milliseconds_and_unsorted(cli: CLI, tmp_path: Path) -> None:
    from .test_cli_interleave import _rows

    path = tmp_path / "interleave.parquet"
    pq.write_table(ms_and_unsorted(pa.Table.from_pylist(_rows())), path)
    result = cli("interleave", path, "-f", "json")
    assert result.code == 0, result.err


def test_simulate_an_interleaved_log_for_interleave(
    cli: CLI, collection: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "interleaved.parquet"
    qrels, control, treatment = collection
    result = cli(
        "logs", "simulate", qrels, control, treatment, "-o", out, "--users", "300",
        "--interleave", "team-draft",
    )  # fmt: skip
    assert result.code == 0, result.err
    table = pq.read_table(out)
    assert set(table["variant"].to_pylist()) == {"interleaved"}
    assert set(table["interleave_team"].drop_null().to_pylist()) == {"A", "B"}
    verdict = cli("interleave", out, "-f", "json")
    assert verdict.code == 0, verdict.err
    refused = cli(
        "logs", "simulate", qrels, control, treatment, "-o", tmp_path / "x.parquet",
        "--interleave", "balanced", "--split", "70,30",
    )  # fmt: skip
    assert "split" in refused.assert_one_error_line(2)


def test_logs_check_unsorted_names_the_option(cli: CLI, tmp_path: Path) -> None:
    rows = log_rows()
    path = tmp_path / "unsorted.csv"
    pacsv.write_csv(arrow([rows[2], rows[0], rows[1], *rows[3:]]), path)
    result = cli("logs", "check", path)
    assert result.code == 1
    assert result.err.startswith(f"rankmeter: {path}: 1 problem in the log (the first: {path}:3: ")
    assert "give ordered=False (--unordered) when the rows are not in time order" in result.err
    assert cli("logs", "check", path, "--unordered").code == 0
    done = cli("logs", "check", path, "--ts-unit", "sec")
    assert done.code == 2 and "'sec' is not one of 's', 'ms', 'us', 'ns'" in done.err


@pytest.mark.spark
def test_spark_run_leaves_stderr_empty(spark_backend: Any, good_log: Path) -> None:
    # A successful `--engine spark` run printed some thirty lines of log4j and the JVM's
    # incubator warning on stderr. A process of its own: this one's Spark has started already.
    import subprocess
    import sys

    command = ["logs", "check", str(good_log), "--engine", "spark"]
    done = subprocess.run(
        [sys.executable, "-c", "from rankmeter.cli import main; main()", *command],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "no problems (spark)" in " ".join(done.stdout.split())
    assert done.stderr == ""


def test_check_says_when_the_counts_pool_several_experiments(cli: CLI, tmp_path: Path) -> None:
    # logs check said "no problems" with counts mixing two experiments, which ab then refused.
    table = arrow(log_rows())
    ids = ["e1"] * 4 + ["e2"] * (table.num_rows - 4)
    path = tmp_path / "two.parquet"
    pq.write_table(table.append_column("experiment_id", pa.array(ids)), path)
    result = cli("logs", "check", path, "-f", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["experiments"] == {"e1": 4, "e2": table.num_rows - 4}
    assert payload["note"].startswith("the log holds 2 experiments ('e1': 4 rows, 'e2': 3 rows)")
    text = cli("logs", "check", path).out
    assert "rankmeter ab analyses one (--experiment ID)" in " ".join(text.split())
    assert "Note: the log holds 2 experiments" in cli("logs", "check", path, "-f", "markdown").out
    single = tmp_path / "one.parquet"
    pq.write_table(table.append_column("experiment_id", pa.array(["e1"] * table.num_rows)), single)
    assert json.loads(cli("logs", "check", single, "-f", "json").out)["note"] is None
