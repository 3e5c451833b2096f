"""Differential tests of the diversity metrics against ndeval (pyndeval, and ir_measures' pyndeval
provider), per query and on the mean, on random subtopic qrels and runs.

The collections have ties in scores, grades 0..4 and negative ones, documents judged for
several subtopics, unjudged documents, queries in the run but not the qrels and the other way
round, and doc ids whose byte order is not their numeric order (d10 < d9: ndeval breaks equal
gains in its greedy ideal by strcmp).

What the references are given, and why:

- the run's order: rankmeter ranks ties by its ``ties`` policy (trec_eval's: score descending,
  then doc id descending); pyndeval sorts by score, then doc id ascending. Each reference gets
  rankmeter's order as distinct scores, so both rank the same list (the tie policy is tested
  for every metric elsewhere);
- ERR-IA@1: ndeval leaves it undivided (its normalisation loop starts at rank 2), so its
  ERR-IA@1 is rankmeter's times N, the query's subtopics with a relevant judged document; the
  test checks exactly that rather than leaving k = 1 out;
- cutoffs up to 20: pyndeval's ndeval computes to rank 20 only.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import rankmeter

pyndeval = pytest.importorskip("pyndeval", reason="the diversity reference (pip install pyndeval)")

JUDGEABLE = ["d1", "d2", "d3", "d9", "d10", "d11", "d20", "D5", "é", "a"]
UNJUDGED = ["u1", "u2", "u10"]
QUERIES = ["1", "2", "10", "a", "b"]
SUBTOPICS = ["0", "1", "2", "3", "10"]
GRADES = [-1, 0, 0, 1, 1, 1, 2, 3, 4]
SCORES = [0.0, 0.5, 1.0, 2.0, -1.5]  # ties are frequent
CUTOFFS = (1, 2, 3, 5, 10, 20)
NAMES = {  # rankmeter's name -> ndeval's
    "alpha_nDCG": "alpha-nDCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "StRecall": "strec",
}

Lines = list[tuple[str, str, str, int]]


def _collection(rng: random.Random) -> tuple[Lines, dict[str, dict[str, float]]]:
    judged = rng.sample(QUERIES, rng.randint(1, 4))
    ran = rng.sample(QUERIES, rng.randint(0, 4))
    if not set(judged) & set(ran):
        ran.append(judged[0])
    lines: Lines = []
    for q in judged:
        subtopics = rng.sample(SUBTOPICS, rng.randint(1, 4))
        for doc in rng.sample(JUDGEABLE, rng.randint(1, 8)):
            for s in rng.sample(subtopics, rng.randint(1, len(subtopics))):
                lines.append((q, s, doc, rng.choice(GRADES)))
    rng.shuffle(lines)
    run = {
        q: {d: rng.choice(SCORES) for d in rng.sample(JUDGEABLE + UNJUDGED, rng.randint(1, 13))}
        for q in ran
    }
    return lines, run


def _write(lines: Lines, path: Path) -> Path:
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in lines), encoding="utf-8")
    return path


def _ranked(run: dict[str, dict[str, float]]) -> list[tuple[str, str, float]]:
    """The run in rankmeter's order (trec_eval ties: score, then doc id descending), as
    distinct scores every reference ranks the same way."""
    out = []
    for q, docs in run.items():
        order = sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)
        out += [(q, d, float(len(order) - i)) for i, d in enumerate(order)]
    return out


def _subtopics(lines: Lines, rel: float) -> dict[str, int]:
    """N per query: subtopics with a judgment of grade >= rel."""
    found: dict[str, set[str]] = {}
    for q, s, _, g in lines:
        if g >= rel and g >= 0:
            found.setdefault(q, set()).add(s)
    return {q: len(found.get(q, ())) for q, _, _, _ in lines}


def _reference(
    lines: Lines, ranked: list[tuple[str, str, float]], names: list[str], rel: int, alpha: float
) -> dict[str, dict[str, float]]:
    evaluator = pyndeval.RelevanceEvaluator(lines, names, relevance_level=rel, alpha=alpha)
    return evaluator.evaluate(ranked)  # type: ignore[no-any-return]


def _check(
    tmp_path: Path, lines: Lines, run: dict[str, dict[str, float]], rel: int, alpha: float
) -> None:
    qrels = _write(lines, tmp_path / "qrels.txt")
    ours = [f"alpha_nDCG(alpha={alpha})@{k}" for k in CUTOFFS]
    ours += [f"{name}@{k}" for name in ("ERR_IA", "nERR_IA", "StRecall") for k in CUTOFFS]
    theirs = [f"alpha-nDCG@{k}" for k in CUTOFFS]
    theirs += [f"{NAMES[name]}@{k}" for name in ("ERR_IA", "nERR_IA", "StRecall") for k in CUTOFFS]
    result = rankmeter.evaluate(qrels, run, ours, rel=rel)
    # ERR-IA ignores alpha in ir_measures (always 0.5): its own reference call
    expected = _reference(lines, _ranked(run), theirs, rel, alpha)
    err = _reference(lines, _ranked(run), [f"ERR-IA@{k}" for k in CUTOFFS], rel, 0.5)
    err_n = _reference(lines, _ranked(run), [f"nERR-IA@{k}" for k in CUTOFFS], rel, 0.5)
    n = _subtopics(lines, rel)
    got = result.per_query.to_dict()
    assert sorted(got) == sorted(expected)
    for q, values in expected.items():
        for mine, name in zip(ours, theirs, strict=True):
            want = values[name]
            if name.startswith("ERR-IA"):
                want = err[q][name]
                if name == "ERR-IA@1" and n[q]:
                    want /= n[q]  # ndeval leaves ERR-IA@1 undivided (see the docstring)
            elif name.startswith("nERR-IA"):
                want = err_n[q][name]
            assert got[q][mine] == pytest.approx(want, abs=1e-9), (q, mine, lines, run)
    for mine in ours:
        values = [got[q][mine] for q in expected]
        assert result.metrics[mine] == pytest.approx(sum(values) / len(values), abs=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_against_ndeval(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines, run = _collection(rng)
    _check(tmp_path, lines, run, rel=rng.choice([1, 1, 2]), alpha=rng.choice([0.5, 0.25, 1.0]))


def test_against_ndeval_on_many_subtopics_and_deep_runs(tmp_path: Path) -> None:
    rng = random.Random(2024)
    for i in range(15):
        q = str(i)
        lines: Lines = [
            (q, str(rng.randint(0, 11)), f"d{rng.randint(0, 60)}", rng.choice(GRADES))
            for _ in range(120)
        ]
        lines = list({(a, s, d): (a, s, d, g) for a, s, d, g in lines}.values())
        run = {q: {f"d{j}": rng.choice(SCORES) for j in rng.sample(range(80), 40)}}
        _check(tmp_path, lines, run, rel=1, alpha=0.5)


def test_queries_missing_from_the_run_score_zero_under_include_missing(tmp_path: Path) -> None:
    rng = random.Random(7)
    for _ in range(10):
        lines, run = _collection(rng)
        qrels = _write(lines, tmp_path / "qrels.txt")
        metrics = ["alpha_nDCG@10", "ERR_IA@10", "nERR_IA@10", "StRecall@10"]
        names = ["alpha-nDCG@10", "ERR-IA@10", "nERR-IA@10", "strec@10"]
        expected = _reference(lines, _ranked(run), names, 1, 0.5)
        result = rankmeter.evaluate(qrels, run, metrics, include_missing=True)
        judged = {q for q, _, _, _ in lines}
        assert set(result.per_query.to_dict()) == judged
        for mine, name in zip(metrics, names, strict=True):
            total = sum(values[name] for values in expected.values())
            assert result.metrics[mine] == pytest.approx(total / len(judged), abs=1e-9)


def test_judged_only_is_ndeval_on_the_run_without_unjudged_documents(tmp_path: Path) -> None:
    rng = random.Random(11)
    for _ in range(10):
        lines, run = _collection(rng)
        qrels = _write(lines, tmp_path / "qrels.txt")
        best: dict[tuple[str, str], int] = {}
        for q, _, d, g in lines:
            best[q, d] = max(g, best.get((q, d), g))
        # trec_eval -J: documents without a judgment of grade >= 0 are removed first
        kept = {q: {d: s for d, s in docs.items() if best.get((q, d), -1) >= 0} for q, docs in run.items()}  # fmt: skip
        kept = {q: docs for q, docs in kept.items() if docs}
        metrics = ["alpha_nDCG@5", "nERR_IA@5", "StRecall@5"]
        names = ["alpha-nDCG@5", "nERR-IA@5", "strec@5"]
        expected = _reference(lines, _ranked(kept), names, 1, 0.5)
        got = rankmeter.evaluate(qrels, run, metrics, judged_only=True).per_query.to_dict()
        for q, values in expected.items():
            for mine, name in zip(metrics, names, strict=True):
                assert got[q][mine] == pytest.approx(values[name], abs=1e-9), (q, mine)


def test_against_ir_measures(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures' pyndeval provider")
    rng = random.Random(3)
    measures = [
        ir_measures.parse_measure(m)
        for m in ("alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "StRecall@20", "alpha_nDCG@5")
    ]
    ours = ["alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "StRecall@20", "alpha_nDCG@5"]
    for _ in range(10):
        lines, run = _collection(rng)
        qrels = _write(lines, tmp_path / "qrels.txt")
        scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in _ranked(run)]
        judged = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in lines]
        expected: dict[str, dict[Any, float]] = {}
        provider = ir_measures.providers.registry["pyndeval"]
        for m in provider.iter_calc(measures, judged, scored):
            expected.setdefault(m.query_id, {})[m.measure] = m.value
        # ir_measures also scores the judged queries the run lacks, as 0 (trec_eval -c)
        result = rankmeter.evaluate(qrels, run, ours, include_missing=True)
        got = result.per_query.to_dict()
        assert sorted(got) == sorted(expected)
        for q, values in expected.items():
            for mine, measure in zip(ours, measures, strict=True):
                assert got[q][mine] == pytest.approx(values[measure], abs=1e-9), (q, mine)
