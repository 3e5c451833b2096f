"""What `rankmeter judge export` writes, from Python: the labels table by its name's format
(report.judging.write_labels) and the warning on disputed items left out (left_out_line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter.judgments.app.store import Label
from rankmeter.report.judging import labels_csv, labels_parquet, left_out_line, write_labels

LABELS = [
    Label("q1", "d1", "ann", 2, 0.0, 1.0),
    Label("q1", "=d2", "bob", None, 0.0, 1.0),
    Label("q2", "d3", "bob", 0, 0.0, 1.0),
]


def test_the_labels_are_written_in_the_format_their_name_says(tmp_path: Path) -> None:
    write_labels(LABELS, str(tmp_path / "labels.csv"))
    assert (tmp_path / "labels.csv").read_text() == labels_csv(LABELS)
    for name in ("labels.parquet", "labels.PQ"):
        write_labels(LABELS, str(tmp_path / name))
        assert (tmp_path / name).read_bytes() == labels_parquet(LABELS)


def test_the_labels_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    write_labels(LABELS, "-")
    assert capsys.readouterr().out == labels_csv(LABELS)


def test_the_warning_on_items_left_out() -> None:
    assert left_out_line([("q1", "d1"), ("q2", "d2")], "ann") == (
        "warning: 2 disputed items have no grade from the adjudicator 'ann' and are left out "
        "of the qrels; see rankmeter judge status"
    )
