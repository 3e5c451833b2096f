"""`rankmeter online-vs-offline QRELS CONTROL_RUN TREATMENT_RUN LOG`: both sides in JSON and
Markdown; a wrong name is one line on stderr and nothing on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="online-vs-offline needs the [online] extra (ibis-framework)")
pytest.importorskip("tea_tasting", reason="online-vs-offline needs the [online] extra")

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
