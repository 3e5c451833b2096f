"""Issue 16, section 1: evaluate and compare warn about the data from what their own pass saw
(RunFacts), without reading a run a second time (but to confirm a run that looks upside down)."""

from __future__ import annotations

from pathlib import Path

from rankmeter import compare, evaluate
from rankmeter.checking import result_warnings
from rankmeter.data import Run
from rankmeter.evaluation import evaluate as evaluate_fn
from rankmeter.io.stream import iter_run_chunks
from rankmeter.report.checking import warning_line

QRELS = {f"q{i}": {"a": 2, "b": 1, "c": 0} for i in range(1, 5)}


def _trec(path: Path, queries: list[str], *, swap: bool = False, bottom_up: bool = False) -> Path:
    """Three results per query, written rank 1 first (``bottom_up``: rank 3 first, with the
    right ranks and scores); ``swap`` writes the score in the rank column and the rank in
    the score column."""
    lines = []
    for q in queries:
        rows = [("a", 1, 3.5), ("b", 2, 2.5), ("c", 3, 1.5)]
        for doc, rank, score in reversed(rows) if bottom_up else rows:
            first, second = (score, rank) if swap else (rank, score)
            lines.append(f"{q} Q0 {doc} {first} {second} sys\n")
    path.write_text("".join(lines))
    return path


ALL = ["q1", "q2", "q3", "q4"]


def test_written_order_counts_queries_given_lowest_score_first() -> None:
    run = Run.from_dict(
        {
            "up": {"a": 1.0, "b": 2.0, "c": 3.0},
            "down": {"a": 3.0, "b": 2.0, "c": 1.0},
            "flat": {"a": 1.0, "b": 1.0},
            "one": {"a": 1.0},
        }
    )
    assert run.written_order(10) == (2, 1)
    # Only the top `depth` results are looked at: below them this query rises.
    # Rising takes three steps in four or more: one forward step against three backward ones.
    deep = Run.from_dict({"q": {"a": 9.0, "b": 1.0, "c": 2.0, "d": 3.0, "e": 4.0}})
    assert deep.written_order(2) == (1, 0)
    assert deep.written_order(4) == (1, 0)  # 1 forward, 2 backward
    assert deep.written_order(5) == (1, 1)  # 1 forward, 3 backward


def test_a_clean_run_has_no_warning(tmp_path: Path) -> None:
    result = evaluate(QRELS, _trec(tmp_path / "good.run", ALL), "P@1")
    assert result.facts is not None
    assert result.facts.written_order.rising == 0 and not result.facts.overlap.partial
    assert result_warnings(result) == ()


def test_a_partial_overlap_is_seen_by_evaluate_and_compare(tmp_path: Path) -> None:
    run = _trec(tmp_path / "part.run", ["q1", "q2", "q9"])
    [found] = result_warnings(evaluate(QRELS, run, "P@1"))
    assert found.kind == "partial_overlap" and not found.fatal and found.source == str(run)
    assert (found.detail.judged_without_results, found.detail.results_without_judgments) == (2, 1)
    assert "only the queries in both are evaluated" in warning_line(found)
    good = _trec(tmp_path / "good.run", ALL)
    compared = compare(QRELS, {"good": good, "part": run}, "P@1")
    [seen] = result_warnings(compared)
    assert seen.run == "part" and seen.missing_scored
    assert "judged queries without results score 0" in warning_line(seen)


def test_swapped_columns_warn_confirmed_by_the_rank_column(tmp_path: Path) -> None:
    swapped = _trec(tmp_path / "swapped.run", ALL, swap=True)
    result = evaluate(QRELS, swapped, "P@1")
    assert result.facts is not None and result.facts.written_order.reversed
    [found] = result_warnings(result)
    # Read again as `rankmeter check` reads it: the rank column holds fractions, so the
    # file's lines give the order, and the columns look swapped.
    assert found.kind == "score_order" and found.detail.by == "file order"
    assert found.detail.rank_fractions
    assert warning_line(found).startswith("warning: run 'sys'")


def test_a_run_written_bottom_up_is_fine_by_its_rank_column(tmp_path: Path) -> None:
    bottom_up = _trec(tmp_path / "bottom.run", ALL, bottom_up=True)
    result = evaluate(QRELS, bottom_up, "P@1")
    assert result.facts is not None and result.facts.written_order.reversed  # by the lines
    assert result_warnings(result) == ()  # the rank column says it is fine


def test_a_run_that_cannot_be_read_again_is_judged_by_its_written_order() -> None:
    rising = {q: {"c": 1.5, "b": 2.5, "a": 3.5} for q in ALL}
    [found] = result_warnings(evaluate(QRELS, rising, "P@1"))
    assert found.kind == "score_order" and found.detail.by == "written order"
    assert "lower scores seem to mean better" in warning_line(found)


def test_streamed_chunks_add_up_to_the_whole_run(tmp_path: Path) -> None:
    path = _trec(tmp_path / "mixed.run", ALL, swap=True)
    whole = evaluate_fn(QRELS, path, "P@1", stream=False).facts
    streamed = evaluate_fn(QRELS, path, "P@1", stream=True).facts
    assert whole is not None and streamed is not None
    assert streamed.written_order == whole.written_order and streamed.overlap == whole.overlap
    # ... and the file really came in several chunks.
    assert len(list(iter_run_chunks(path, chunk_rows=3))) > 1


def test_a_run_written_in_no_order_is_not_upside_down(tmp_path: Path) -> None:
    """A shuffled file (every rank 0, lines in no order) is a valid TREC run: about half its
    queries have more rising steps than falling ones, which must not make it reversed, for
    the evaluation's written order nor for check's rule."""
    import numpy as np

    from rankmeter.checking import check

    rng = np.random.default_rng(5)
    qrels = {f"q{i}": {"d0": 1} for i in range(60)}
    lines = [
        f"q{i} Q0 d{j} 0 {score:.6f} shuffled\n"
        for i in range(60)
        for j, score in enumerate(rng.normal(size=10))
    ]
    path = tmp_path / "shuffled.run"
    path.write_text("".join(lines))
    result = evaluate(qrels, path, "P@1")
    assert result.facts is not None and not result.facts.written_order.reversed
    assert result.facts.written_order.rising < 6  # 3 in 4 steps rising is rare by chance
    assert result_warnings(result) == ()
    assert check(qrels, path).runs[0].order is not None
    assert not check(qrels, path).runs[0].order.reversed


def test_a_run_with_no_query_in_common_is_a_warning_where_missing_queries_score_0(
    tmp_path: Path,
) -> None:
    # Every judged query is compared by default (issue 13): a run whose ids are of another
    # scheme is no longer refused there, it scores 0 everywhere. It once did so in silence.
    alien = _trec(tmp_path / "alien.run", ["x1", "x2", "x3", "x4"])
    good = _trec(tmp_path / "good.run", ALL)
    compared = compare(QRELS, {"good": good, "alien": alien}, "P@1")
    [seen] = result_warnings(compared)
    assert (seen.run, seen.kind, seen.fatal, seen.missing_scored) == (
        "alien",
        "no_overlap",
        False,
        True,
    )
    line = warning_line(seen)
    assert line.startswith(f"warning: run 'alien' ({alien}) has no query in common with the qrels")
    assert "(ids from another scheme?)" in line
    assert "it scores 0 on every judged query" in line
    [again] = result_warnings(evaluate(QRELS, alien, "P@1", include_missing=True))
    assert again.kind == "no_overlap"
