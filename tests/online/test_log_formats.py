"""One fault, one message in every log format: rankmeter.online.read_log and check_log over
files that io.logs reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

from rankmeter.errors import FormatError
from rankmeter.online import check_log, read_log


def test_an_empty_csv_is_checked_as_an_empty_jsonl(tmp_path: Path) -> None:
    found = []
    for kind in ("csv", "jsonl"):
        path = tmp_path / f"log.{kind}"
        path.write_text("")
        check = check_log(path)
        assert (check.rows, check.variants, [p.row for p in check.problems]) == (0, (), [None])
        found.append(check.problems[0].message)
        with pytest.raises(FormatError, match=re.escape(f"{path}: missing columns event_ts, ")):
            read_log(path)
    assert found[0] == found[1]
    assert found[0].startswith("missing columns event_ts, user_id, session_id, request_id")


def test_a_csv_row_of_the_wrong_width_is_named_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("event_ts,user_id\n2024-05-01T10:00:00Z,u1\n2024-05-01T10:01:00Z,u2,x\n")
    want = f"{path}:3: expected 2 CSV fields as in the header, found 3: '2024-05-01T10:01:00Z,u2,x'"
    for call in (read_log, check_log):
        with pytest.raises(FormatError) as caught:
            call(path)
        assert str(caught.value) == want
