"""The notes on a pool given with --pool (inclusion=): it changes nothing when no sampled-
judgment metric is asked, and a pool of which fewer than half the items are judged in the
qrels is probably not the pool these judgments were made from. Every command that takes
--pool says so, once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import rankmeter
from rankmeter.comparison import compare_files
from rankmeter.engines import evaluate_files
from rankmeter.io import sampled_qrels
from rankmeter.metrics import pool_notes

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq1 0 d 2\nq2 0 e 1\nq2 0 f 0\n"
RUN = "q1 Q0 a 1 4 r\nq1 Q0 b 2 3 r\nq1 Q0 c 3 2 r\nq1 Q0 x 4 1 r\nq2 Q0 f 1 2 r\nq2 Q0 e 2 1 r\n"
OWN = [("q1", "b", 0.5), ("q1", "c", 0.5), ("q2", "e", 0.25), ("q2", "zz", 0.25)]
# 3 of its 7 items judged (b, c, e): fewer than half
OTHER = [*OWN, ("q1", "y1", 0.5), ("q1", "y2", 0.5), ("q2", "y3", 0.5), ("q9", "y4", 0.5)]
UNUSED = (
    "the pool is read by statAP, stat_nDCG and stat_P only (their inclusion probabilities); "
    "none was asked, so it changes nothing"
)


def _pool(path: Path, items: list[tuple[str, str, float]]) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "query_id": q,
                    "doc_id": d,
                    "runs": {"r": 1},
                    "best_rank": 1,
                    "inclusion_probability": p,
                }
            )
            + "\n"
            for q, d, p in items
        )
    )
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "b.run").write_text(RUN.replace(" r\n", " s\n").replace("x 4", "d 4"))
    return {
        "qrels": tmp_path / "qrels",
        "a": tmp_path / "a.run",
        "b": tmp_path / "b.run",
        "own": _pool(tmp_path / "own.jsonl", OWN),
        "other": _pool(tmp_path / "other.jsonl", OTHER),
    }


def _cli(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    from rankmeter.cli import main

    capsys.readouterr()
    try:
        main([os.fspath(a) for a in args])
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _mismatch(qrels: Path) -> str:
    return (
        f"3 of the pool's 7 items are judged in {qrels}: is this the pool these judgments were "
        "made from, and is its sample judged?"
    )


def test_pool_notes_of_the_library(files: dict[str, Path]) -> None:
    from rankmeter.io import read_qrels

    qrels = read_qrels(files["qrels"])
    assert pool_notes(qrels, ["AP"]) == ()  # no pool: nothing to say
    own = sampled_qrels(qrels, files["own"])
    assert own.pool_coverage == (3, 4)  # q9 is no query of these qrels: not counted
    assert pool_notes(own, ["AP", "infAP"]) == (UNUSED,)
    assert pool_notes(own, ["AP", "statAP"]) == ()
    other = sampled_qrels(qrels, files["other"])
    assert other.pool_coverage == (3, 7)
    assert pool_notes(other, "stat_P@2") == (_mismatch(files["qrels"]),)
    assert pool_notes(other, ["nDCG@10"]) == (UNUSED,)  # one note: the pool is not read at all
    assert sampled_qrels(qrels, {("q1", "b"): 0.5, ("q1", "zz"): 0.5}).pool_coverage == (1, 2)
    assert other.with_inclusion(None).pool_coverage is None


def test_evaluate_and_compare_files_carry_the_notes(files: dict[str, Path]) -> None:
    done = evaluate_files(files["qrels"], [files["a"]], ["AP", "infAP"], inclusion=files["own"])
    assert done.goal_notes == (UNUSED,)
    done = evaluate_files(files["qrels"], [files["a"]], "statAP", inclusion=files["other"])
    assert done.goal_notes == (_mismatch(files["qrels"]),)
    assert evaluate_files(files["qrels"], [files["a"]], "statAP",
                          inclusion=files["own"]).goal_notes == ()  # fmt: skip
    # compare says it in the comparison's notes (rankmeter.compare's too), under its tables
    compared = compare_files(files["qrels"], [files["a"], files["b"]], ["AP"],
                             inclusion=files["own"], resamples=100)  # fmt: skip
    assert compared.goal_notes == () and compared.comparison.notes.count(UNUSED) == 1
    compared = compare_files(files["qrels"], [files["a"], files["b"]], ["statAP"],
                             inclusion=files["other"], resamples=100)  # fmt: skip
    assert compared.comparison.notes.count(_mismatch(files["qrels"])) == 1
    direct = rankmeter.compare(files["qrels"], {"a": files["a"], "b": files["b"]}, "AP",
                               inclusion=files["own"], resamples=100)  # fmt: skip
    assert direct.notes.count(UNUSED) == 1


@pytest.mark.parametrize("fast", [True, False], ids=["fast-start", "typer"])
def test_evaluate_notes_on_stderr(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], fast: bool
) -> None:
    extra = [] if fast else ["--per-query"]
    for output in ("table", "json"):
        code, out, err = _cli(capsys, "evaluate", files["qrels"], files["a"], "--pool",
                              files["own"], "-m", "AP", "-m", "infAP", "-f", output, *extra)  # fmt: skip
        assert code == 0 and "AP" in out
        told = " ".join((out + err).split())  # a table's notes are wrapped under it
        assert told.count("none was asked, so it changes nothing") == 1
        if output == "json":  # data stays data: the note on stderr
            assert f"note: {UNUSED}\n" in err
    code, out, err = _cli(capsys, "evaluate", files["qrels"], files["a"], "--pool",
                          files["other"], "-m", "statAP", "-f", "json", *extra)  # fmt: skip
    assert code == 0 and f"note: {_mismatch(files['qrels'])}\n" in err
    code, out, err = _cli(capsys, "evaluate", files["qrels"], files["a"], "--pool",
                          files["own"], "-m", "statAP", "-f", "json", *extra)  # fmt: skip
    assert code == 0 and "pool" not in err


def test_compare_notes_in_every_format(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    for output in ("json", "markdown", "table", "latex"):
        code, out, err = _cli(capsys, "compare", files["qrels"], files["a"], files["b"],
                              "--pool", files["own"], "-m", "AP", "-f", output,
                              "--resamples", "100")  # fmt: skip
        told = " ".join(out.split())  # a table's notes are wrapped
        assert code == 0 and told.count("none was asked, so it changes nothing") == 1, output
        assert "changes nothing" not in err
    code, out, err = _cli(capsys, "compare", files["qrels"], files["a"], files["b"], "--pool",
                          files["other"], "-m", "statAP", "-f", "json", "--resamples", "100")  # fmt: skip
    assert code == 0 and json.loads(out)["notes"].count(_mismatch(files["qrels"])) == 1


def test_diff_and_explain_say_it_in_their_notes(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    code, out, _ = _cli(capsys, "diff", files["qrels"], files["a"], files["b"], "--pool",
                        files["own"], "-m", "AP", "-f", "json")  # fmt: skip
    assert code == 0 and json.loads(out)["notes"].count(UNUSED) == 1
    code, out, _ = _cli(capsys, "diff", files["qrels"], files["a"], files["b"], "--pool",
                        files["other"], "-m", "statAP", "-f", "json")  # fmt: skip
    assert code == 0 and json.loads(out)["notes"].count(_mismatch(files["qrels"])) == 1
    code, out, _ = _cli(capsys, "explain", files["qrels"], files["a"], "--query", "q1",
                        "--pool", files["own"], "-m", "AP", "-m", "P@2", "-f", "json")  # fmt: skip
    assert code == 0
    notes = [n for e in json.loads(out)["metrics"].values() for n in e["notes"]]
    assert notes.count(UNUSED) == 1  # told once, not once a metric
    code, out, _ = _cli(capsys, "explain", files["qrels"], files["a"], "--query", "q1",
                        "--pool", files["own"], "-m", "statAP", "-f", "json")  # fmt: skip
    assert code == 0 and UNUSED not in out and "is this the pool" not in out


def test_a_cranfield_pool_on_medline_qrels_is_told(cranfield: Path, tmp_path: Path) -> None:
    """The trial's case: a pool of Cranfield's judged pairs read with MEDLINE's qrels (the same
    query ids, other documents) is accepted, with a note; with Cranfield's own, no note."""
    import re

    medline = cranfield.parent / "medline" / "qrels.trec"
    if not medline.is_file():
        pytest.skip(
            f"MEDLINE collection not found at {medline.parent} (it lives in ../shared/data)"
        )
    pairs = [line.split() for line in (cranfield / "qrels.trec").read_text().splitlines()]
    pool = _pool(tmp_path / "cranfield.jsonl", [(q, d, 0.5) for q, _, d, _ in pairs])
    run = tmp_path / "run"
    run.write_text("".join(f"{q} Q0 {d} 1 1 r\n" for q, _, d, _ in pairs[:200]))
    done = evaluate_files(medline, [run], "statAP", inclusion=pool)
    (note,) = done.goal_notes
    found = re.fullmatch(
        r"([\d,]+) of the pool's ([\d,]+) items are judged in (.*): is this the pool these "
        r"judgments were made from, and is its sample judged\?",
        note,
    )
    assert found is not None, note
    judged, items = (int(found[i].replace(",", "")) for i in (1, 2))
    assert 2 * judged < items and found[3] == str(medline)
    assert (
        evaluate_files(cranfield / "qrels.trec", [run], "statAP", inclusion=pool).goal_notes == ()
    )
