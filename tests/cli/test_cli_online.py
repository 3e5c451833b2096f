"""`rankmeter online-vs-offline QRELS CONTROL_RUN TREATMENT_RUN LOG`: both sides in JSON and
Markdown; a wrong name is one line on stderr and nothing on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="online-vs-offline needs the [online] extra (ibis-framework)")
pytest.importorskip("tea_tasting", reason="online-vs-offline needs the [online] extra")

import pyarrow as pa
import pyarrow.parquet as pq
from _offline_logs import collection, log_of

from ._cli_support import CLI


@pytest.fixture(scope="module")
def args(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("online-cli")
    qrels, control, treatment, rankings = collection(folder)
    pq.write_table(log_of(rankings, users=300, clicks_follow=True), folder / "log.parquet")
    return [qrels, control, treatment, folder / "log.parquet"]


def test_json_and_markdown(args: list[Path], cli: CLI) -> None:
    done = cli("online-vs-offline", *args, "--online-metric", "ctr", "-f", "json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["agreements"][0]["verdict"] == "agree"
    assert data["offline"][0]["metric"] == "nDCG@10"
    assert data["settings"]["users"] == 300
    done = cli("online-vs-offline", *args, "-f", "markdown", "--online-metric", "ctr")
    assert done.code == 0, done.err
    assert "| nDCG@10 | ctr | better | better | agree |" in done.out


def test_a_wrong_name_is_one_line(args: list[Path], cli: CLI) -> None:
    error = cli("online-vs-offline", *args, "--online-metric", "ctrr").assert_one_error_line(2)
    assert "unknown A/B metric 'ctrr'" in error
    error = cli("online-vs-offline", *args, "-m", "nDGC@10").assert_one_error_line(2)
    assert "nDGC@10" in error


def test_a_partial_overlap_is_a_warning_in_every_format(
    args: list[Path], cli: CLI, tmp_path: Path
) -> None:
    import pyarrow.compute as pc

    qrels, control, treatment, log = args
    table = pq.read_table(log)
    partial = tmp_path / "partial.parquet"
    pq.write_table(table.filter(pc.is_in(table["query_id"], pa.array(["q1", "q2"]))), partial)
    warning = "the log and the offline comparison share 2 queries"
    for output_format in ("table", "json", "markdown"):
        done = cli(
            "online-vs-offline", qrels, control, treatment, partial,
            "--online-metric", "ctr", "-f", output_format,
        )  # fmt: skip
        assert done.code == 0, done.err
        assert warning in " ".join(done.out.split()), output_format
    data = json.loads(cli("online-vs-offline", *args, "--online-metric", "ctr", "-f", "json").out)
    assert data["warnings"] == []


def test_no_shared_query_is_one_line(args: list[Path], cli: CLI, tmp_path: Path) -> None:
    qrels, control, treatment, log = args
    table = pq.read_table(log)
    other = tmp_path / "other.parquet"
    names = pa.array(["web-" + q for q in table["query_id"].to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("query_id"), "query_id", names), other)  # fmt: skip
    error = cli("online-vs-offline", qrels, control, treatment, other).assert_one_error_line(2)
    assert error.startswith("none of the log's 30 queries (e.g. 'web-q0', 'web-q1', 'web-q10')")
