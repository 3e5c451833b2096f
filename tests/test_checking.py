"""rankmeter.checking (issue 16, section 1): each case that evaluates silently is found."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rankmeter import evaluate
from rankmeter.checking import TIE_SPREAD, check, data_warnings, score_order
from rankmeter.errors import FormatError, PolicyError
from rankmeter.io import as_run, read_run
from rankmeter.io.rows import read_run_rows

QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 0}}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def _trec(results: dict[str, list[tuple[str, float]]], *, swap: bool = False) -> list[str]:
    """TREC lines, each query's results in the order given, ranked 1, 2, ... as written;
    ``swap`` writes the score in the rank column and the rank in the score column."""
    lines = []
    for q, docs in results.items():
        for rank, (doc, score) in enumerate(docs, start=1):
            first, second = (score, rank) if swap else (rank, score)
            lines.append(f"{q} Q0 {doc} {first} {second} sys\n")
    return lines


GOOD = {"q1": [("a", 3.25), ("b", 2.5), ("c", 1.75)], "q2": [("d", 0.75), ("e", 0.5)]}


def test_a_clean_run_has_no_finding(tmp_path: Path) -> None:
    result = check(QRELS, [_write(tmp_path / "good.run", _trec(GOOD))], k=3)
    assert result.ok and result.warnings == ()
    run = result.runs[0]
    assert run.overlap.common == 2 and not run.overlap.partial
    assert run.order is not None and run.order.by == "rank column" and run.order.rising == 0
    assert run.duplicates.lines == 0 and run.judged == 1.0
    json.dumps(result.to_dict(), allow_nan=False)


# -- query overlap -------------------------------------------------------------------------


def test_a_partial_overlap_warns_with_examples() -> None:
    run = {"q1": {"a": 1.0}, "q9": {"a": 1.0}, "q10": {"b": 1.0}}
    result = check(QRELS, run)
    overlap = result.runs[0].overlap
    assert (overlap.common, overlap.judged_without_results, overlap.results_without_judgments) == (
        1,
        1,
        2,
    )
    assert overlap.judged_without_results_examples == ("q2",)
    assert overlap.results_without_judgments_examples == ("q10", "q9")  # natural order
    assert [(w.kind, w.fatal) for w in result.warnings] == [("partial_overlap", False)]
    assert result.ok


def test_no_overlap_is_fatal() -> None:
    result = check(QRELS, {"x1": {"a": 1.0}})
    assert not result.ok
    assert [w.kind for w in result.warnings if w.fatal] == ["no_overlap"]
    assert result.runs[0].ties is None and result.runs[0].judged is None


def test_cranfield_with_ir_datasets_query_ids(cranfield: Path, tmp_path: Path) -> None:
    """The issue's case: ir_datasets numbers Cranfield's queries by their .I labels, the qrels
    by position: 73 of the 225 run queries have no judgments, and evaluate says nothing."""
    mapping = {
        row["query-id"]: row["original-I-id"].lstrip("0")
        for row in csv.DictReader((cranfield / "query_id_map.tsv").open(), delimiter="\t")
    }
    judged: dict[str, list[str]] = {}
    for line in (cranfield / "qrels.trec").read_text().splitlines():
        q, _, doc, _ = line.split()
        judged.setdefault(q, []).append(doc)
    lines = [
        f"{mapping[q]} Q0 {doc} {rank} {10.0 - rank / 10} sys\n"
        for q, docs in judged.items()
        for rank, doc in enumerate(docs[:10], start=1)
    ]
    run = _write(tmp_path / "irds.run", lines)
    overlap = check(cranfield / "qrels.trec", [run]).runs[0].overlap
    assert (overlap.judged, overlap.with_results, overlap.common) == (225, 225, 152)
    assert overlap.results_without_judgments == 73 == overlap.judged_without_results
    assert overlap.results_without_judgments_examples[0] == "226"
    warnings = data_warnings(cranfield / "qrels.trec", [run])
    assert [w.kind for w in warnings] == ["partial_overlap"]
    assert evaluate(cranfield / "qrels.trec", run).per_query.query_ids.__len__() == 152


# -- score order -----------------------------------------------------------------------------


def test_swapped_rank_and_score_columns_are_fatal(tmp_path: Path) -> None:
    run = _write(tmp_path / "swapped.run", _trec(GOOD, swap=True))
    result = check(QRELS, [run])
    order = result.runs[0].order
    assert order is not None and order.reversed and order.rank_fractions
    assert order.by == "file order" and (order.rising, order.queries) == (2, 2)
    assert [w.kind for w in result.warnings if w.fatal] == ["score_order"]
    assert [w.kind for w in data_warnings(QRELS, [run])] == ["score_order"]


def test_lower_is_better_scores_are_fatal(tmp_path: Path) -> None:
    """Distances: rank 1 has the lowest score."""
    rising = {q: [(d, 10.0 - s) for d, s in docs] for q, docs in GOOD.items()}
    order = check(QRELS, [_write(tmp_path / "dist.run", _trec(rising))]).runs[0].order
    assert order is not None and order.reversed and not order.rank_fractions
    assert order.by == "rank column"


def test_a_run_written_bottom_up_is_not_reversed(tmp_path: Path) -> None:
    """The rank column, not the line order, is the written ranking when it holds ranks."""
    lines = _trec(GOOD)
    run = _write(tmp_path / "reversed_lines.run", lines[::-1])
    assert check(QRELS, [run]).ok


def test_score_order_counts_queries_whose_scores_move() -> None:
    rows = read_run_rows({"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 1.0, "d": 2.0}})
    order = score_order(rows)
    assert (order.queries, order.rising, order.reversed) == (1, 1, True)


def test_a_run_object_has_no_written_order() -> None:
    result = check(QRELS, as_run({"q1": {"a": 1.0, "b": 2.0}}))
    assert result.runs[0].order is None
    assert [w.kind for w in data_warnings(QRELS, as_run({"q1": {"a": 1.0}}))] == ["partial_overlap"]


# -- duplicates ------------------------------------------------------------------------------


def test_every_duplicate_is_counted(tmp_path: Path) -> None:
    """The reader stops at the first repeated pair; check counts them all."""
    lines = [f"q1 Q0 d{i} {i + 1} {1000 - i} sys\n" for i in range(2000)]
    repeated = [*lines[:1125], lines[3]]  # d3: three times
    run = _write(tmp_path / "dups.run", lines + repeated)
    with pytest.raises(FormatError, match="duplicate result for query 'q1'"):
        read_run(run)
    found = check(QRELS, [run]).runs[0]
    assert (found.duplicates.lines, found.duplicates.pairs) == (1126, 1125)
    assert found.duplicates.examples[2:4] == (("q1", "d2", 2), ("q1", "d3", 3))
    assert found.rows == 3126 and not found.ok


def test_duplicates_in_a_table_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text("query_id,doc_id,score\nq1,a,1\nq1,a,2\nq2,d,1\n")
    found = check(QRELS, [path]).runs[0]
    assert found.duplicates.lines == 1 and found.order is not None


# -- ties --------------------------------------------------------------------------------------


def test_ties_show_the_metric_best_and_worst_case() -> None:
    """Three results tied: trec_eval puts c, b, a (doc id descending); the relevant a can be
    first (RR 1) or last (RR 1/3)."""
    # (n: a non-relevant judgment, so that the qrels are not relevant-only: see item 19)
    qrels = {"q1": {"a": 1, "n": 0}}
    result = check(qrels, {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}, k=3, metrics=["RR"])
    ties = result.runs[0].ties
    assert ties is not None and (ties.positions, ties.tied, ties.share) == (3, 3, 1.0)
    [rr] = ties.ranges
    assert (rr.metric, rr.value, rr.best, rr.worst) == ("RR", pytest.approx(1 / 3), 1.0, 1 / 3)
    assert rr.spread >= TIE_SPREAD and [w.kind for w in result.warnings] == ["ties", "judged"]


def test_tie_ranges_are_evaluate_on_reordered_runs() -> None:
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 2.0}, "q2": {"d": 1.0, "e": 1.0}}
    ties = check(QRELS, run, k=2, metrics=["nDCG@2", "P@1"]).runs[0].ties
    assert ties is not None
    best = evaluate(QRELS, {"q1": {"c": 3, "a": 2, "b": 1}, "q2": {"d": 2, "e": 1}}, ["nDCG@2"])
    worst = evaluate(QRELS, {"q1": {"c": 3, "b": 2, "a": 1}, "q2": {"e": 2, "d": 1}}, ["nDCG@2"])
    ndcg = ties.ranges[0]
    assert ndcg.best == best.metrics["nDCG@2"] and ndcg.worst == worst.metrics["nDCG@2"]
    assert ndcg.value == evaluate(QRELS, run, ["nDCG@2"]).metrics["nDCG@2"]
    # Top 2 positions: q1 (c, then b/a tied with the one below the cutoff), q2 (d, e tied).
    assert (ties.positions, ties.tied) == (4, 3)


def test_no_ties_no_spread(tmp_path: Path) -> None:
    ties = check(QRELS, [_write(tmp_path / "r.run", _trec(GOOD))]).runs[0].ties
    assert ties is not None and ties.tied == 0 and ties.ranges[0].spread == 0


# -- judged@k and grades ------------------------------------------------------------------------


def test_judged_at_k_and_grades() -> None:
    result = check(QRELS, {"q1": {"a": 3.0, "x": 2.0, "y": 1.0}, "q2": {"d": 1.0}}, k=3)
    assert result.runs[0].judged == pytest.approx((1 / 3 + 1) / 2)
    assert [w.kind for w in result.warnings] == ["judged"]
    assert result.qrels.grades == ((0.0, 2), (1.0, 2), (2.0, 1))
    assert result.qrels.to_dict()["grades"][0] == {"grade": 0, "count": 2}


def test_runs_that_share_a_tag_are_told_apart(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.run", _trec(GOOD))
    b = _write(tmp_path / "b.run", _trec(GOOD))
    assert [r.name for r in check(QRELS, [a, b]).runs] == [str(a), str(b)]


# -- bad input -------------------------------------------------------------------------------


def test_bad_k() -> None:
    with pytest.raises(PolicyError, match=r"^k=0 must be an integer >= 1"):
        check(QRELS, {"q1": {"a": 1.0}}, k=0)


def test_a_bad_run_line_names_the_line(tmp_path: Path) -> None:
    run = _write(tmp_path / "bad.run", ["q1 Q0 a 1 1.5 sys\n", "q1 Q0 b 2 high sys\n"])
    with pytest.raises(FormatError, match=r"bad\.run:2: score must be a number, not 'high'"):
        check(QRELS, [run])


def test_no_runs() -> None:
    with pytest.raises(PolicyError, match="no runs given"):
        check(QRELS, [])
