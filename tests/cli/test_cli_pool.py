"""`rankmeter pool`: the pool to -o, the summary (Judged@k now -> after) to stdout."""

from __future__ import annotations

import json
import os
import re
import statistics
from pathlib import Path

import pytest

from rankmeter import Run, evaluate
from rankmeter.io import read_pool, read_qrels, write_trec_run
from rankmeter.judgments import pool

from ._cli_support import CLI, run_process


def test_pool_writes_the_file_and_prints_judged_now_and_after(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "pool.jsonl"
    result = cli(
        "pool", files["a"], files["b"], "--depth", "2", "--qrels", files["qrels"], "-o", out
    )
    assert result.code == 0, result.err
    items = read_pool(out)
    expected = pool([files["a"], files["b"]], depth=2, qrels=files["qrels"])
    assert items == expected.items and len(items) > 0
    text = " ".join(result.out.split())
    assert f"{len(items)} items to judge in {len(expected.queries)} queries" in text
    for name, coverage in expected.judged.items():
        assert name in text
        assert f"{coverage.now:.4f}" in text and f"{coverage.after:.4f}" in text
    assert "Judged@2 now" in text and "not sampled" in text
    assert result.err == ""


def test_the_json_summary_is_the_pool_s_dict_without_items(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "pool.jsonl"
    result = cli(
        "pool", files["a"], files["b"], "--depth", "4",
        "--max-per-query", "2", "--seed", "4", "-o", out, "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    expected = pool([files["a"], files["b"]], depth=4, max_per_query=2, seed=4)
    assert summary == json.loads(json.dumps(expected.to_dict(items=False)))
    assert summary["sampled"] and summary["items_per_query"]["max"] == 2
    assert [i.to_dict() for i in read_pool(out)] == [i.to_dict() for i in expected]


def test_with_o_dash_the_pool_goes_to_stdout_and_the_summary_to_stderr(
    files: dict[str, Path],
) -> None:
    result = run_process(["pool", files["a"], files["b"], "--depth", "1", "-o", "-"])
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert [json.loads(line)["doc_id"] for line in lines] == [
        i.doc_id for i in pool([files["a"], files["b"]], depth=1)
    ]
    assert "items to judge" in result.err


def test_queries_qrels_pools_only_the_judged_queries(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "pool.jsonl"
    result = cli("pool", files["a"], "--qrels", files["qrels"], "--queries", "qrels", "-o", out)
    assert result.code == 0, result.err
    assert {i.query_id for i in read_pool(out)} <= set(read_qrels(files["qrels"]).query_ids)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--depth", "0"], 2, r"^depth=0 must be an integer >= 1"),
        (["--max-per-query", "0"], 2, r"^max_per_query=0 must be an integer >= 1"),
        (["--seed", "-3"], 2, r"^seed=-3 must be an integer >= 0"),
        (["--queries", "qrels"], 2, r"^queries='qrels' needs qrels"),
        (["--qrels", "missing.txt"], 1, r"missing\.txt"),
    ],
)
def test_bad_options_are_one_error_line(
    cli: CLI, files: dict[str, Path], tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    out = tmp_path / "pool.jsonl"
    result = cli("pool", files["a"], *args, "-o", out)
    assert re.search(message, result.assert_one_error_line(code))
    assert not out.exists()


def test_o_is_required(cli: CLI, files: dict[str, Path]) -> None:
    result = cli("pool", files["a"])
    assert "Missing option '--output' / '-o'" in result.assert_one_error_line(2)


def test_the_output_is_checked_before_the_runs_are_read(cli: CLI, tmp_path: Path) -> None:
    # The run does not exist: a read would fail on it; the output's error comes first.
    result = cli("pool", tmp_path / "nope.run", "-o", tmp_path / "no" / "dir" / "pool.jsonl")
    message = result.assert_one_error_line(1)
    assert "no" in message and "nope.run" not in message


def test_a_bad_run_file_is_one_error_line_naming_it(cli: CLI, tmp_path: Path) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 notanumber tag\n")
    result = cli("pool", bad, "-o", tmp_path / "pool.jsonl")
    assert "bad.run:1" in result.assert_one_error_line(1)


def test_an_existing_pool_file_is_replaced_whole(
    cli: CLI, files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "pool.jsonl"
    out.write_text("old\n" * 1000)
    os.chmod(out, 0o640)
    assert cli("pool", files["a"], "-o", out).code == 0
    assert "old" not in out.read_text() and (os.stat(out).st_mode & 0o777) == 0o640


# -- real data --------------------------------------------------------------------------------
def cranfield_runs(cranfield: Path, folder: Path) -> tuple[Path, Path]:
    """Two cheap, deterministic runs over Cranfield: word overlap with the query (raw and
    length-normalised); no extra package needed."""
    corpus = {}
    for line in (cranfield / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        corpus[doc["_id"]] = set(f"{doc['title']} {doc['text']}".lower().split())
    queries = {}
    for line in (cranfield / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        query = json.loads(line)
        queries[query["_id"]] = set(query["text"].lower().split()) - {"the", "of", "a", "in"}
    overlap: dict[str, dict[str, float]] = {}
    dice: dict[str, dict[str, float]] = {}
    for q, words in queries.items():
        scores = {d: len(words & terms) for d, terms in corpus.items()}
        top = sorted(scores, key=lambda d: -scores[d])[:100]
        overlap[q] = {d: float(scores[d]) for d in top}
        dice[q] = {d: 2 * scores[d] / (len(words) + len(corpus[d]) + 1) for d in top}
    paths = folder / "overlap.run", folder / "dice.run"
    write_trec_run(Run.from_dict(overlap, name="overlap"), paths[0])
    write_trec_run(Run.from_dict(dice, name="dice"), paths[1])
    return paths


def test_on_cranfield_judged_at_20_reaches_one_after_pooling(
    cli: CLI, cranfield: Path, tmp_path: Path
) -> None:
    runs = cranfield_runs(cranfield, tmp_path)
    qrels = cranfield / "qrels" / "test.tsv"
    out = tmp_path / "pool.jsonl"
    result = cli("pool", *runs, "--depth", "20", "--qrels", qrels, "-o", out, "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    items = read_pool(out)
    judged = read_qrels(qrels)
    assert summary["n_queries"] == 225 and summary["n_items"] == len(items)
    # Nothing pooled is judged already; everything unjudged in a top 20 is pooled.
    judged_pairs = {(q, d) for q, d, _ in judged}
    assert not {(i.query_id, i.doc_id) for i in items} & judged_pairs
    extended = {q: dict(docs) for q, docs in judged.to_dict().items()}
    for item in items:
        extended.setdefault(item.query_id, {})[item.doc_id] = 0
    for path, name in zip(runs, ("overlap", "dice"), strict=True):
        coverage = summary["judged"][name]
        assert coverage["after"] == 1.0
        assert coverage["now"] == pytest.approx(evaluate(judged, path, ["Judged@20"])["Judged@20"])
        assert coverage["after"] == evaluate(extended, path, ["Judged@20"])["Judged@20"]
        assert coverage["now"] < 0.5  # Cranfield judges a few documents per query
    per_query = [sum(1 for i in items if i.query_id == q) for q in judged.query_ids]
    assert summary["items_per_query"] == {
        "min": min(per_query),
        "median": statistics.median(per_query),
        "max": max(per_query),
    }
    assert 20 <= summary["items_per_query"]["max"] <= 40
