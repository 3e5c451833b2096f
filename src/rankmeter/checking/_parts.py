"""The parts of :func:`~rankmeter.checking.check`: the runs as given, one run's findings (query
overlap, duplicates, ties and each metric's range across tie orders, Judged@k, depth) and the
qrels' summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.checking._records import Duplicates, QrelsSummary, RunCheck, TieRange, Ties
from rankmeter.checking._score_order import _query_codes, score_order
from rankmeter.data import Qrels, Run
from rankmeter.errors import PolicyError
from rankmeter.io.rows import RunRows
from rankmeter.results import EXAMPLES, Overlap, depth_of, no_relevant, overlap_of, relevant_only


def _named_runs(runs: Any) -> list[tuple[str | None, Any]]:
    """``(name or None, run)`` for one run, a list of runs or ``{name: run}``."""
    if isinstance(runs, (list, tuple)):
        if not runs:
            raise PolicyError("no runs given")
        return [(None, r) for r in runs]
    if isinstance(runs, Mapping) and runs:
        first = next(iter(runs.values()))
        inner = next(iter(first.values()), None) if isinstance(first, Mapping) else None
        if not isinstance(first, Mapping) or isinstance(inner, Mapping):
            return [(str(name), r) for name, r in runs.items()]
    return [(None, runs)]


def _check_run(
    qrels: Qrels, rows: RunRows, k: int, measures: Sequence[Any], rel: float = 1
) -> RunCheck:
    codes, query_ids = _query_codes(rows)
    overlap = _overlap(qrels, query_ids)
    duplicates, kept = _duplicates(rows)
    run = rows.to_run(kept)
    order = score_order(rows, codes) if rows.written else None
    ties = judged = None
    if not overlap.empty:
        ties, judged = _ties(qrels, run, k, measures, rel)
    return RunCheck(
        run.name,
        rows.source,
        len(rows),
        overlap,
        order,
        duplicates,
        ties,
        judged,
        k,
        depth_of(run.offsets),
    )


def _overlap(qrels: Qrels, run_queries: Iterable[str]) -> Overlap:
    return overlap_of(qrels.query_ids, run_queries)


def _duplicates(rows: RunRows) -> tuple[Duplicates, npt.NDArray[np.int64] | None]:
    """Every repeated (query, doc) pair, and the rows to keep (the first of each pair; None:
    all of them)."""
    import pyarrow as pa

    from rankmeter.data.arrays import numpy_of

    n = len(rows)
    if not isinstance(rows.query_ids, (pa.Array, pa.ChunkedArray)):
        return Duplicates(0, 0, ()), None  # a dict or a Run holds each pair once
    table = pa.table(
        {"q": rows.query_ids, "d": rows.doc_ids, "row": pa.array(np.arange(n, dtype=np.int64))}
    )
    groups = table.group_by(["q", "d"]).aggregate([("row", "min"), ("row", "count")])
    if groups.num_rows == n:
        return Duplicates(0, 0, ()), None
    first = numpy_of(groups.column("row_min")).astype(np.int64)
    count = numpy_of(groups.column("row_count")).astype(np.int64)
    repeated = np.flatnonzero(count > 1)
    shown = repeated[np.argsort(first[repeated], kind="stable")][:EXAMPLES]
    queries = groups.column("q").take(pa.array(shown)).to_pylist()
    docs = groups.column("d").take(pa.array(shown)).to_pylist()
    examples = tuple(
        (str(q), str(d), int(c)) for q, d, c in zip(queries, docs, count[shown], strict=True)
    )
    found = Duplicates(int(n - groups.num_rows), len(repeated), examples)
    return found, np.sort(first)


def _ties(
    qrels: Qrels, run: Run, k: int, measures: Sequence[Any], rel: float = 1
) -> tuple[Ties, float]:
    """The run's ties in the top k over the queries in common with the qrels, each metric's
    range across tie orders, and the run's Judged@k."""
    from rankmeter.evaluation import evaluate
    from rankmeter.metrics import parse_metric

    judged = set(qrels.query_ids)
    common = run.subset(q for q in run.query_ids if q in judged)
    positions, tied = _tied_positions(common, k)
    judged_metric = parse_metric(f"Judged@{k}")
    asked = [m for m in measures if m != judged_metric]
    as_ranked = evaluate(qrels, common, [*asked, judged_metric], rel=rel)
    ranges: tuple[TieRange, ...] = ()
    if asked:
        best = evaluate(qrels, _reordered(qrels, common, best=True), asked, ties="input", rel=rel)
        worst = evaluate(qrels, _reordered(qrels, common, best=False), asked, ties="input", rel=rel)
        ranges = tuple(
            TieRange(
                m.label,
                float(as_ranked.metrics[m.label]),
                float(best.metrics[m.label]),
                float(worst.metrics[m.label]),
            )
            for m in asked
        )
    return Ties(k, positions, tied, ranges), float(as_ranked.metrics[judged_metric.label])


def _tied_positions(run: Run, k: int) -> tuple[int, int]:
    """Top-k positions, and those whose score another result of its query shares."""
    offsets, scores = run.offsets, run.scores
    n = len(scores)
    segment = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    rank = np.arange(n) - offsets[segment]
    equal_next = (scores[1:] == scores[:-1]) & (segment[1:] == segment[:-1])
    tied = np.zeros(n, dtype=bool)
    tied[:-1] |= equal_next
    tied[1:] |= equal_next
    top = rank < k
    return int(top.sum()), int((tied & top).sum())


def _reordered(qrels: Qrels, run: Run, *, best: bool) -> Run:
    """The run with each group of equal scores ordered by grade (descending for ``best``,
    else ascending; unjudged as 0), for the "input" tie policy to keep."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    table = run.to_arrow()
    n = table.num_rows
    table = table.append_column("row", pa.array(np.arange(n, dtype=np.int64)))
    joined = table.join(
        qrels.to_arrow(), ["query_id", "doc_id"], ["query_id", "doc_id"], join_type="left outer"
    )
    rows = numpy_of(joined.column("row")).astype(np.int64)
    grades = np.zeros(n, dtype=np.float64)
    grades[rows] = numpy_of(joined.column("relevance").cast(pa.float64()), fill=0.0)
    scores = numpy_of(table.column("score"))
    queries = numpy_of(pc.dictionary_encode(table.column("query_id")).combine_chunks().indices)
    keys = grades if not best else -grades
    # The rows are in rank order: query, score descending; within a score, the grade decides.
    order = np.lexsort((np.arange(n), keys, -scores, queries))
    pick = pa.array(order)
    return Run.from_columns(
        table.column("query_id").take(pick),
        table.column("doc_id").take(pick),
        table.column("score").take(pick),
        name=run.name,
        ties="input",
        origin=run.source,
    )


def _qrels_summary(qrels: Qrels, rel: float = 1) -> QrelsSummary:
    grades, counts = np.unique(np.asarray(qrels.grades, dtype=np.float64), return_counts=True)
    return QrelsSummary(
        qrels.source,
        qrels.n_queries,
        len(qrels),
        tuple((float(g), int(c)) for g, c in zip(grades, counts, strict=True)),
        relevant_only(qrels.grades, rel),
        no_relevant(qrels.grades, rel),
        rel,
    )
