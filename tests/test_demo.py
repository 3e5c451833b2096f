"""The shipped recruiting collection and `rankmeter demo`."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import rankmeter
from rankmeter import datasets
from rankmeter.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build_recruiting_demo.py"
DEMO = datasets.recruiting()


def _qrels_rows() -> list[tuple[str, str, int]]:
    rows = []
    for line in DEMO.qrels.read_text(encoding="utf-8").splitlines():
        query_id, iteration, doc_id, grade = line.split(" ")
        assert iteration == "0"
        rows.append((query_id, doc_id, int(grade)))
    return rows


def _run_rows(name: str) -> list[tuple[str, str, int, float, str]]:
    rows = []
    for line in DEMO.runs[name].read_text(encoding="utf-8").splitlines():
        query_id, q0, doc_id, rank, score, tag = line.split(" ")
        assert q0 == "Q0"
        rows.append((query_id, doc_id, int(rank), float(score), tag))
    return rows


def _evaluate() -> rankmeter.EvalResults:
    return rankmeter.evaluate(DEMO.load_qrels(), DEMO.load_runs(), ["nDCG@10", "P@10"])


# ---------------------------------------------------------------- the files


def test_files_exist_and_stay_small() -> None:
    paths = [DEMO.qrels, DEMO.queries, DEMO.docs, *DEMO.runs.values(), DEMO.root / "README.md"]
    assert all(p.is_file() for p in paths)
    assert sum(p.stat().st_size for p in paths) < 500_000
    assert sorted(DEMO.runs) == ["keyword", "tuned"]


def test_queries_and_docs_parse() -> None:
    queries = DEMO.load_queries()
    assert 12 <= len(queries) <= 20
    assert all(text.strip() for text in queries.values())
    docs = DEMO.load_docs()
    assert 250 <= len(docs) <= 350
    lines = DEMO.docs.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(docs), "doc ids are unique"
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"doc_id", "title", "text"}
        assert record["title"] and record["title"] in record["text"]


def test_qrels_are_graded_pooled_and_point_at_real_docs() -> None:
    rows = _qrels_rows()
    docs = DEMO.load_docs()
    queries = DEMO.load_queries()
    assert {d for _, d, _ in rows} <= set(docs)
    assert {q for q, _, _ in rows} == set(queries)
    assert {g for _, _, g in rows} == {0, 1, 2, 3}
    assert len(set((q, d) for q, d, _ in rows)) == len(rows)
    per_query = Counter(q for q, _, _ in rows)
    assert all(15 <= n <= 50 for n in per_query.values()), per_query
    # Every opening has at least one good candidate, and pooling leaves retrieved docs unjudged.
    assert all(any(g >= 2 for q2, _, g in rows if q2 == q) for q in queries)
    judged = {(q, d) for q, d, _ in rows}
    for name in DEMO.runs:
        retrieved = {(q, d) for q, d, *_ in _run_rows(name)}
        assert retrieved - judged


@pytest.mark.parametrize("name", ["keyword", "tuned"])
def test_runs_have_100_ranked_results_per_query(name: str) -> None:
    rows = _run_rows(name)
    docs = DEMO.load_docs()
    by_query: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    for query_id, doc_id, rank, score, tag in rows:
        assert tag == name and doc_id in docs
        by_query[query_id].append((doc_id, rank, score))
    assert set(by_query) == set(DEMO.load_queries())
    for hits in by_query.values():
        assert [r for _, r, _ in hits] == list(range(1, 101))
        assert len({d for d, _, _ in hits}) == 100
        # The written ranks agree with trec_eval's order: score, then doc id, descending.
        assert hits == sorted(hits, key=lambda h: (h[2], h[0]), reverse=True)
    run = DEMO.load_run(name)
    assert run.name == name and len(run) == 100 * len(by_query)


def test_unknown_run_names_the_runs() -> None:
    with pytest.raises(KeyError, match="no run 'bm25'; runs: keyword, tuned"):
        DEMO.load_run("bm25")


def test_collection_is_frozen() -> None:
    with pytest.raises(AttributeError):
        DEMO.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        DEMO.runs["other"] = DEMO.qrels  # type: ignore[index]


def test_generator_reproduces_the_shipped_files(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    shipped = sorted(
        p.relative_to(DEMO.root) for p in DEMO.root.rglob("*") if p.is_file() and p.suffix != ".md"
    )
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert built == shipped
    for relative in shipped:
        assert (tmp_path / relative).read_bytes() == (DEMO.root / relative).read_bytes(), relative


# ---------------------------------------------------------------- what the demo shows


def test_tuned_beats_keyword_on_average_but_not_everywhere() -> None:
    results = _evaluate()
    keyword, tuned = results["keyword"], results["tuned"]
    assert tuned.metrics["nDCG@10"] > keyword.metrics["nDCG@10"] + 0.05
    k_values = keyword.per_query["nDCG@10"]
    t_values = tuned.per_query["nDCG@10"]
    assert keyword.per_query.query_ids == tuned.per_query.query_ids
    assert (t_values < k_values).any()


def test_some_openings_find_nothing_relevant_in_the_top_10() -> None:
    results = _evaluate()
    misses = {
        run: {q for q, row in results[run].per_query.to_dict().items() if row["P@10"] == 0}
        for run in results
    }
    assert misses["keyword"], "keyword search should fail on at least one opening"
    assert misses["keyword"] & misses["tuned"], "one opening should defeat every system"


def _ndcg_at_10(ranking: list[str], judged: dict[str, int]) -> float:
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:10]))
    ideal = sorted(judged.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def test_golden_table_values_computed_independently() -> None:
    judged: dict[str, dict[str, int]] = defaultdict(dict)
    for query_id, doc_id, grade in _qrels_rows():
        judged[query_id][doc_id] = grade
    results = _evaluate()
    for name in DEMO.runs:
        rankings: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for query_id, doc_id, _, score, _ in _run_rows(name):
            rankings[query_id].append((score, doc_id))
        ndcg, precision = [], []
        for query_id, hits in rankings.items():
            order = [d for _, d in sorted(hits, reverse=True)]
            ndcg.append(_ndcg_at_10(order, judged[query_id]))
            precision.append(sum(judged[query_id].get(d, 0) >= 1 for d in order[:10]) / 10)
        assert results[name].metrics["nDCG@10"] == pytest.approx(sum(ndcg) / len(ndcg), abs=1e-9)
        assert results[name].metrics["P@10"] == pytest.approx(
            sum(precision) / len(precision), abs=1e-9
        )


# ---------------------------------------------------------------- the command


@pytest.fixture(autouse=True)
def _in_a_fresh_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo writes its HTML report into the current folder."""
    monkeypatch.chdir(tmp_path)


def test_demo_command_prints_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo"])
    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    results = rankmeter.evaluate(
        DEMO.load_qrels(), DEMO.load_runs(), ["nDCG@10", "P@10", "R@100", "RR", "AP"]
    )
    for heading in (
        "1. Each system",
        "2. The 5 worst openings for the best system, tuned",
        "3. Openings with no relevant profile in the top 10",
        "4. Did tuned beat keyword? Paired over the same 17 openings",
        "5. Where to go next",
    ):
        assert heading in out
    for name, result in results.items():
        row = next(line for line in out.splitlines() if line.startswith(f"│ {name} "))
        for value in result.metrics.values():
            assert f"{value:.4f}" in row
    queries = DEMO.load_queries()
    misses = [q for q, row in results["keyword"].per_query.to_dict().items() if row["P@10"] == 0]
    assert f"    {misses[0]}  {queries[misses[0]]}" in out
    assert "rankmeter evaluate" in out and "rankmeter metrics" in out
    assert "rankmeter compare" in out and "rankmeter explain" in out
    comparison = rankmeter.compare(
        DEMO.load_qrels(), DEMO.load_runs(), ["nDCG@10", "P@10", "R@100", "RR", "AP"], seed=0
    )
    d = comparison.difference("tuned", "nDCG@10")
    assert f"{d.difference:+.4f}" in out and "Significant after the correction" in out
    page = Path("rankmeter-demo-report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "HTML report with plots" in out
    assert str(DEMO.qrels) in out and str(DEMO.runs["tuned"]) in out
    # Commands are printed whole, never wrapped, so they can be copied.
    assert any(
        line.strip().startswith("rankmeter evaluate") and line.strip().endswith("--per-query")
        for line in out.splitlines()
    )


def test_demo_command_worst_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--worst", "2"])
    assert exit_info.value.code == 0
    assert "2. The 2 worst openings" in capsys.readouterr().out


def test_demo_runs_as_a_program(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from rankmeter.cli import main; main(['demo', '--report', ''])"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Where to go next" in done.stdout
    assert list(tmp_path.iterdir()) == []  # --report '' writes nothing


def test_demo_report_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--report", str(tmp_path / "r.html")])
    assert "Where to go next" in capsys.readouterr().out
    assert (tmp_path / "r.html").read_text().count("<svg") >= 5


@pytest.mark.skipif(
    importlib.util.find_spec("tea_tasting") is None, reason="the online demo needs [online]"
)
def test_online_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "online", "--report", str(tmp_path / "ab.html")])
    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    for heading in (
        "1. The log (rankmeter logs check LOG)",
        "2. Did it win online, for whom?",
        "3. Did the A/B test confirm the judged queries?",
    ):
        assert heading in out
    assert "keyword (the control) and tuned" in out
    assert "simulated log: 203,940 rows, 2 variants, no problems" in out
    # The planted regression: the tuned ranker makes new users click 40 % less.
    flagged = next(line for line in out.splitlines() if line.startswith("Flagged:"))
    assert "is_new_user=true (ctr)" in flagged and "is_new_user=false" not in flagged
    assert "online metrics: 3 agree" in out
    assert (tmp_path / "ab.html").read_text().startswith("<!DOCTYPE html>")
