"""`rankmeter explain QRELS RUN --query Q -m statAP --pool POOL.jsonl` (issue 24): the
judgments a sample of the pool, each weighed by 1 / its inclusion probability, as
`rankmeter evaluate --pool` computes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankmeter

from ._cli_support import CLI

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n2 0 a 1\n"
RUN = "1 Q0 a 1 5 sys\n1 Q0 x 2 4 sys\n1 Q0 c 3 3 sys\n1 Q0 b 4 2 sys\n2 Q0 a 1 1 sys\n"
POOL = {"a": 0.5, "b": 0.5, "c": 0.25, "x": 0.25}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("qrels.txt", "run.txt", "pool.jsonl")}
    paths["qrels.txt"].write_text(QRELS)
    paths["run.txt"].write_text(RUN)
    paths["pool.jsonl"].write_text(
        "".join(
            json.dumps({"query_id": "1", "doc_id": d, "runs": {"sys": 1}, "best_rank": 1,
                        "inclusion_probability": p}) + "\n"
            for d, p in POOL.items()
        )
    )  # fmt: skip
    return {"qrels": paths["qrels.txt"], "run": paths["run.txt"], "pool": paths["pool.jsonl"]}


def test_explain_with_a_pool_matches_evaluate(cli: CLI, files: dict[str, Path]) -> None:
    args = ("explain", files["qrels"], files["run"], "--query", "1", "-m", "statAP")
    done = cli(*args, "-m", "stat_nDCG@10", "--pool", files["pool"], "-f", "json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    expected = rankmeter.evaluate(
        files["qrels"], files["run"], ["statAP", "stat_nDCG@10"], inclusion=files["pool"]
    ).per_query.to_dict()["1"]
    for name in ("statAP", "stat_nDCG@10"):
        assert data["metrics"][name]["value"] == pytest.approx(expected[name], abs=1e-12)
    plain = json.loads(cli(*args, "-f", "json").out)
    assert plain["metrics"]["statAP"]["value"] != data["metrics"]["statAP"]["value"]
    text = cli(*args, "--pool", files["pool"])
    assert text.code == 0 and "statAP" in text.out


def test_pool_does_not_go_with_grades(cli: CLI, files: dict[str, Path]) -> None:
    done = cli("explain", "--grades", "1,0,2", "-m", "statAP", "--pool", files["pool"])
    assert done.code == 2
    assert "--pool needs QRELS and RUN files; it does not go with --grades" in done.err
    assert "Traceback" not in done.err


def test_a_bad_pool_line_is_named(cli: CLI, files: dict[str, Path]) -> None:
    files["pool"].write_text('{"query_id": "1"}\n')
    done = cli(
        "explain", files["qrels"], files["run"], "--query", "1", "-m", "statAP",
        "--pool", files["pool"],
    )  # fmt: skip
    assert done.code == 1
    assert f"{files['pool']}:1: missing field 'doc_id'" in done.err
    assert "Traceback" not in done.err
