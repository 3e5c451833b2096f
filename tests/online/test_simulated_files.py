"""rankmeter.online.simulate_log_files: `rankmeter logs simulate -o FILE --pre-period FILE` as a
Python call (both names checked before any work, each log in the format its name says), and
the line `rankmeter logs check` fails with (report.logs.problems_line)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

from rankmeter.errors import PolicyError
from rankmeter.online import check_log, log_counts, read_log, simulate_log_files, simulate_logs
from rankmeter.report.logs import problems_line

QRELS = {f"q{q}": {f"d{q}-{d}": (3 - d) if d < 4 else 0 for d in range(10)} for q in range(10)}
GOOD_RUN = {f"q{q}": {f"d{q}-{d}": 10.0 - d for d in range(10)} for q in range(10)}
BAD_RUN = {f"q{q}": {f"d{q}-{d}": float(d) for d in range(10)} for q in range(10)}


def test_the_logs_written_are_simulate_logs(tmp_path: Path) -> None:
    out, pre = tmp_path / "log.parquet", tmp_path / "pre.csv"
    written = simulate_log_files(
        QRELS, BAD_RUN, GOOD_RUN, out, pre_period=str(pre), users=80, seed=2, split="60,40"
    )
    simulated = simulate_logs(
        QRELS, BAD_RUN, GOOD_RUN, users=80, seed=2, split="60,40", pre_period=True
    )
    assert written == [
        (str(out), log_counts(simulated.log)),
        (str(pre), log_counts(simulated.pre)),
    ]
    assert check_log(str(out)).ok and check_log(str(pre)).ok
    assert read_log(str(out)).count().to_pyarrow().as_py() == simulated.log.num_rows
    alone = simulate_log_files(QRELS, BAD_RUN, GOOD_RUN, tmp_path / "a.jsonl", users=20)
    assert [path for path, _ in alone] == [str(tmp_path / "a.jsonl")]


@pytest.mark.parametrize("names", [("log.txt", None), ("log.parquet", "pre.txt")])
def test_both_names_are_checked_before_any_work(
    tmp_path: Path, names: tuple[str, str | None]
) -> None:
    output, pre = names
    with pytest.raises(PolicyError, match=r"(pre|log)\.txt"):
        simulate_log_files(
            QRELS, "no such run", GOOD_RUN, tmp_path / output,
            pre_period=None if pre is None else str(tmp_path / pre),
        )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_the_line_a_failed_check_ends_with(tmp_path: Path) -> None:
    log = tmp_path / "bad.csv"
    log.write_text("user_id,request_id\nu1,r1\n")
    result = check_log(str(log))
    assert not result.ok
    count = len(result.problems)
    assert problems_line(str(log), result) == (
        f"rankmeter: {log}: {count} problem{'s' if count > 1 else ''} in the log "
        f"(the first: {result.problems[0]})"
    )


def test_one_file_for_both_logs_is_refused_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    with pytest.raises(PolicyError, match="are the same file"):
        simulate_log_files(QRELS, BAD_RUN, GOOD_RUN, out, pre_period=str(out), users=20)
    assert list(tmp_path.iterdir()) == []
