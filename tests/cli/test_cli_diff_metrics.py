"""`rankmeter diff` with issue 24's metrics: ERR@10, alpha_nDCG@20 on subtopic qrels,
statAP --pool, GMAP (its per-query values and Δ are logs, said in a note), IPrec@0.5, and
RBP_resid, where a fall is a gain in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankmeter.comparison import diff_runs

from ._cli_support import CLI

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n2 0 x 3\n3 0 z 1\n"
SUBTOPICS = "1 1 a 1\n1 2 a 1\n1 2 c 1\n1 1 b 0\n2 1 a 1\n2 2 x 1\n3 1 z 1\n3 2 a 1\n"
A = "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 d 3 1 A\n2 Q0 y 1 9 A\n2 Q0 a 2 8 A\n"
B = "1 Q0 c 1 3 B\n1 Q0 a 2 2 B\n2 Q0 x 1 9 B\n3 Q0 z 1 1 B\n"


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    paths = {n: tmp_path / n for n in ("qrels.txt", "sub.txt", "a.run", "b.run", "pool.jsonl")}
    for name, text in (("qrels.txt", QRELS), ("sub.txt", SUBTOPICS), ("a.run", A), ("b.run", B)):
        paths[name].write_text(text)
    item = {"query_id": "1", "runs": {"A": 1}, "best_rank": 1}
    paths["pool.jsonl"].write_text(
        json.dumps({**item, "doc_id": "a", "inclusion_probability": 0.5})
        + "\n"
        + json.dumps({**item, "doc_id": "c", "inclusion_probability": 0.25})
        + "\n"
    )
    return paths


@pytest.mark.parametrize(
    ("metric", "qrels", "extra"),
    [
        ("ERR@10", "qrels.txt", ()),
        ("IPrec@0.5", "qrels.txt", ()),
        ("GMAP", "qrels.txt", ()),
        ("statAP", "qrels.txt", ("--pool",)),
        ("alpha_nDCG@20", "sub.txt", ()),
        ("RBP_resid", "qrels.txt", ()),
    ],
)
def test_json_is_the_librarys(
    cli: CLI, data: dict[str, Path], metric: str, qrels: str, extra: tuple[str, ...]
) -> None:
    pool = data["pool.jsonl"] if extra else None
    args = ["--pool", str(pool)] if pool is not None else []
    done = cli("diff", data[qrels], data["a.run"], data["b.run"], "-m", metric, "-f", "json", *args)
    assert done.code == 0, done.err
    expected = diff_runs(
        data[qrels], data["a.run"], data["b.run"], metric=metric, inclusion=pool
    ).to_dict()
    assert json.loads(done.out) == json.loads(json.dumps(expected))
    assert {q["query"] for q in expected["queries"]} == {"1", "2", "3"}


def test_gmap_says_its_values_are_logs(cli: CLI, data: dict[str, Path]) -> None:
    done = cli("diff", data["qrels.txt"], data["a.run"], data["b.run"], "-m", "GMAP")
    assert done.code == 0, done.err
    assert "note: GMAP's per-query values are logs" in done.out
    assert "ln(B's AP / A's AP)" in done.out


def test_subtopic_qrels_are_read_for_a_diversity_metric(cli: CLI, data: dict[str, Path]) -> None:
    # the same document judged for two subtopics on two lines is no duplicate here
    done = cli("diff", data["sub.txt"], data["a.run"], data["b.run"], "-m", "alpha_nDCG@20")
    assert done.code == 0, done.err
    refused = cli("diff", data["sub.txt"], data["a.run"], data["b.run"], "-m", "nDCG@20")
    assert refused.code == 1 and "duplicate judgment" in refused.err


def test_a_fall_of_rbp_resid_is_a_gain_on_the_page(
    cli: CLI, data: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "diff.html"
    done = cli(
        "diff", data["qrels.txt"], data["a.run"], data["b.run"], "-m", "RBP_resid",
        "-f", "html", "-o", str(page),
    )  # fmt: skip
    assert done.code == 0, done.err
    sections = re.findall(
        r'<section class="query (\w+)" id="[^"]*" data-query="([^"]*)" data-text="[^"]*" '
        r'data-delta="([^"]*)"',
        page.read_text(),
    )
    assert len(sections) == 3
    for kind, query, delta in sections:
        expected = "gain" if float(delta) < 0 else "loss" if float(delta) > 0 else "tie"
        assert kind == expected, (query, delta)
    assert "gain" in [kind for kind, _, _ in sections]
    text = cli("diff", data["qrels.txt"], data["a.run"], data["b.run"], "-m", "RBP_resid")
    diff = diff_runs(data["qrels.txt"], data["a.run"], data["b.run"], metric="RBP_resid")
    assert f"gained on {diff.wins}, tied {diff.ties}, lost {diff.losses}" in text.out
    assert diff.wins == sum(q.delta < 0 for q in diff.queries) > 0
