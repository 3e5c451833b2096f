"""Evaluate runs where they live: on Apache Spark, with the in-process metric kernels.

The runs and the qrels are Spark DataFrames (or files Spark reads: Parquet, TREC text). The
queries are hashed into buckets; each bucket's run rows and qrels rows meet in one task
(``cogroup(...).applyInArrow``), where they become the same :class:`~rankmeter.Qrels` and
:class:`~rankmeter.Run` objects ``rankmeter.evaluate`` builds and are joined and scored by the
same vectorised kernels (never one Python call per query). Only the per-query values travel
back to the driver, where the means, Judged@k and the :class:`~rankmeter.EvalResult` are
assembled as in process: per-query values in the qrels' natural query order, so the means are
the same sums in the same order.

What a task holds is one bucket: its queries' run rows and qrels rows. Size ``buckets`` so the
largest bucket fits an executor's Python worker (docs/spark.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rankmeter.engines._spark_inputs import (
    LINE,
    QRELS_COLUMNS,
    RANK,
    RUN_COLUMNS,
    cores,
    is_parquet,
    line_of,
    qrels_frame,
    run_frames,
    session_of,
    source_name,
    sources_of,
)
from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.results import EvalResult, EvalResults

if TYPE_CHECKING:
    # pyarrow has no type information here (the mypy override in pyproject.toml): its
    # tables and scalars are Any to mypy, named for the reader.
    import pyarrow as pa
    from numpy.typing import ArrayLike
    from pyspark.sql import DataFrame, SparkSession

    from rankmeter.data import Qrels, Run
    from rankmeter.engines._spark_inputs import SparkInput
    from rankmeter.metrics import Metric
    from rankmeter.results import Policies, ScoreOrder

    #: What ``metrics`` may be, as :func:`rankmeter.evaluate` takes it.
    Metrics = str | Metric | Iterable[str | Metric] | None
    #: One run, or several: a list, or a dict by name.
    SparkRuns = SparkInput | Sequence[SparkInput] | Mapping[str, SparkInput]

__all__ = [
    "LINE",
    "QRELS_COLUMNS",
    "RANK",
    "RUN_COLUMNS",
    "KeptRuns",
    "evaluate",
    "evaluate_with_rows",
]
#: The error column a task returns instead of raising: Spark would wrap a task's exception
#: in a JVM stack trace; the driver raises the task's own one-line error instead.
_ERROR = "__error__"


def evaluate(
    spark: object,
    qrels: SparkInput,
    run: SparkRuns,
    metrics: Metrics = None,
    *,
    rel: float = 1,
    include_missing: bool = False,
    judged_only: bool = False,
    ties: str = "trec_eval",
    name: str | None = None,
    buckets: int | None = None,
) -> EvalResult | EvalResults:
    """Evaluate one run, or several, on Spark: the numbers of :func:`rankmeter.evaluate`.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession, or an Ibis PySpark backend
        (``rankmeter.engines.connect("spark")``) whose session is used.
    qrels : DataFrame with columns query_id, doc_id, relevance; or a path Spark can read: a
        Parquet file or folder with those columns, or a TREC qrels text file
        (``qid iter docid grade``).
    run : DataFrame with columns query_id, doc_id, score (and ``run``, naming several runs);
        a Parquet path with those columns; a TREC run text file (``qid Q0 docid rank score
        tag``, named by its first line's tag); or a list of such (runs that share a name
        are told apart by their files, as :func:`rankmeter.evaluate` tells them apart), or a
        dict ``{name: run}``.
    metrics, rel, include_missing, judged_only
        As :func:`rankmeter.evaluate`.
    ties : {"trec_eval"}
        Equal scores ordered by doc id descending, as trec_eval. ``"input"`` (the file's
        row order) is refused: a distributed table keeps no row order.
    name : str, optional
        The name of a single run without a ``run`` column or tag.
    buckets : int, optional
        How many buckets the queries are hashed into (default: four per core of the
        session): a task evaluates one bucket.

    Returns
    -------
    EvalResult for one run (a DataFrame or path without several run names); EvalResults,
    keyed by run name, for several. Each carries its ``facts`` (query overlap with the
    qrels, written order: the data warnings), as in process; the written order is the rows'
    order in a single file or table (a folder of several files has none that Spark keeps).

    Raises
    ------
    FormatError
        A missing column, a line of a TREC file that does not parse, or what the in-process
        readers refuse in a bucket (e.g. a document twice in one query): the in-process
        error, naming the line of a TREC text file (found from Spark's row ids).
    PolicyError
        A bad policy, ``ties="input"``, or a name that a ``run`` column holds given again by
        another run.
    RankmeterError
        A run with no query in common with the qrels (without ``include_missing``): the
        in-process engine's error, naming the first query ids of both.
    """
    return _evaluate(
        spark,
        qrels,
        run,
        metrics,
        rel=rel,
        include_missing=include_missing,
        judged_only=judged_only,
        ties=ties,
        name=name,
        buckets=buckets,
    )[0]


def evaluate_with_rows(
    spark: object,
    qrels: SparkInput,
    run: SparkRuns,
    metrics: Metrics = None,
    *,
    rel: float = 1,
    include_missing: bool = False,
    judged_only: bool = False,
    ties: str = "trec_eval",
    name: str | None = None,
    buckets: int | None = None,
) -> tuple[EvalResult | EvalResults, KeptRuns]:
    """:func:`evaluate`, and the runs' rows kept on Spark (:class:`KeptRuns`): each run's query
    ids, its depth and, on demand, its rows of a few queries (``rankmeter compare --engine
    spark`` explains its worst queries from them, never reading a run whole)."""
    return _evaluate(
        spark,
        qrels,
        run,
        metrics,
        rel=rel,
        include_missing=include_missing,
        judged_only=judged_only,
        ties=ties,
        name=name,
        buckets=buckets,
    )


class KeptRuns:
    """The runs of an evaluation on Spark, left there: what the driver may ask of them.

    Attributes
    ----------
    query_ids : run name -> the ids of the queries it has results for (natural order)
    depths : run name -> the most results one of its queries has
    own_names : run name -> the run's own name (its TREC tag) before runs of a list that
        share one were told apart by their files
    """

    def __init__(
        self,
        frame: DataFrame,
        ties: str,
        query_ids: Mapping[str, tuple[str, ...]],
        depths: Mapping[str, int],
        own_names: Mapping[str, str],
    ) -> None:
        self._frame = frame
        self._ties = ties
        self.query_ids = dict(query_ids)
        self.depths = dict(depths)
        self.own_names = dict(own_names)

    def of(self, name: str, query_ids: Sequence[str]) -> Run:
        """Run ``name``'s results for these queries only, as a :class:`~rankmeter.Run` (in
        the order they were written; one other row of the run when it has none of them, as a
        Run is never empty). One Spark job filters the run; only these rows are collected."""
        import pyarrow.compute as pc
        from pyspark.sql import functions as F

        from rankmeter.io import as_run

        own = self._frame.filter(F.col("run") == F.lit(name))
        table = own.filter(F.col("query_id").isin([str(q) for q in query_ids])).toArrow()
        if table.num_rows == 0:
            table = own.limit(1).toArrow()
        if table.num_rows == 0:
            raise PolicyError(f"run {name!r} has no results")
        table = table.take(pc.sort_indices(table.column(LINE)))
        return as_run(table.select(list(RUN_COLUMNS)), name=name, ties=self._ties)


def _evaluate(
    spark: object,
    qrels: SparkInput,
    run: SparkRuns,
    metrics: Metrics,
    *,
    rel: float,
    include_missing: bool,
    judged_only: bool,
    ties: str,
    name: str | None,
    buckets: int | None,
) -> tuple[EvalResult | EvalResults, KeptRuns]:
    from rankmeter._validate import integer
    from rankmeter.evaluation import check_policies, resolve_metrics

    policies = check_policies(rel, include_missing, judged_only, ties)
    if policies.ties != "trec_eval":
        raise PolicyError(
            "ties='input' orders equal scores by the file's row order, which a distributed "
            "table does not keep: use ties='trec_eval' (doc id descending) on Spark"
        )
    measures = resolve_metrics(metrics)
    session = session_of(spark)
    if buckets is None:
        buckets = 4 * cores(session)
    buckets = integer("buckets", buckets, low=1, what="how many buckets the queries go into")
    judged = qrels_frame(session, qrels)
    runs, many, own_names = run_frames(session, run, name)
    sources = sources_of(runs)
    order = list(sources)
    frame = runs[0][0]
    for other, _, _ in runs[1:]:
        frame = frame.unionByName(other)
    per_query = _per_query(
        session, judged, frame, order, measures, policies, buckets, sources, source_name(qrels)
    )
    results = [_result(n, per_query, measures, policies, qrels, sources[n]) for n in order]
    results = _read_by_rank(frame, results, sources)
    rows = KeptRuns(
        frame,
        policies.ties,
        {n: _answered(per_query, n) for n in order},
        {n: _depth(per_query, n) for n in order},
        {n: own_names.get(n, n) for n in order},
    )
    if many or len(results) > 1:
        return EvalResults(tuple(results)), rows
    return results[0], rows


def _read_by_rank(
    frame: DataFrame, results: list[EvalResult], sources: Mapping[str, str]
) -> list[EvalResult]:
    """The results whose written order looks reversed, with the score order read from their
    file's rank column (TREC text or Parquet) on Spark, as
    :func:`rankmeter.checking.result_warnings` reads it from the file in process (a run
    written bottom-up, rank 1 last, is then fine); the file is not read on the driver."""
    import dataclasses

    wanted = {
        r.run: r
        for r in results
        if r.facts is not None
        and r.facts.written_order.reversed
        and os.path.isfile(sources[r.run])  # as result_warnings: a file, read again
    }
    if not wanted:
        return results
    orders = _score_orders(frame, list(wanted))
    return [
        r
        if r.run not in wanted or r.facts is None
        else dataclasses.replace(r, facts=dataclasses.replace(r.facts, written_order=orders[r.run]))
        for r in results
    ]


def _score_orders(frame: DataFrame, names: list[str]) -> dict[str, ScoreOrder]:
    """:func:`rankmeter.checking.score_order` of these runs, on Spark: each query's results
    along its rank column (ascending, equal ranks in file order) when every rank of the run
    is a whole number, else in file order; a query rises when three steps in four or more
    between different scores rise. One job; a row per run comes back."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from rankmeter.results import ScoreOrder

    rank = F.col(RANK)
    finite = rank.isNotNull() & ~F.isnan(rank) & (F.abs(rank) != float("inf"))
    rows = frame.filter(F.col("run").isin(names))
    flags = rows.groupBy("run").agg(
        F.bool_and(finite & (rank % 1 == 0)).alias("whole"),
        F.bool_or(finite).alias("any_finite"),
    )
    rows = rows.join(F.broadcast(flags), "run")
    along = Window.partitionBy("run", "query_id").orderBy(
        F.when(F.col("whole"), rank).asc_nulls_first(), F.col(LINE)
    )
    step = F.signum(F.col("score") - F.lag("score").over(along))
    steps = rows.select("run", "query_id", "whole", "any_finite", step.alias("step"))
    per_query = steps.groupBy("run", "query_id", "whole", "any_finite").agg(
        F.count(F.when(F.col("step") > 0, 1)).alias("up"),
        F.count(F.when(F.col("step") < 0, 1)).alias("down"),
    )
    up, down = F.col("up"), F.col("down")
    per_run = per_query.groupBy("run", "whole", "any_finite").agg(
        F.count(F.when(up + down > 0, 1)).alias("queries"),
        F.count(F.when((up > 0) & (up >= 3 * down), 1)).alias("rising"),
    )
    return {
        row["run"]: ScoreOrder(
            "rank column" if row["whole"] else "file order",
            int(row["queries"]),
            int(row["rising"]),
            rank_fractions=bool(not row["whole"] and row["any_finite"]),
        )
        for row in per_run.collect()
    }


@dataclass(frozen=True)
class _JudgedIds:
    """What :func:`rankmeter.evaluation.no_common_queries` reads of the qrels, which stay on
    Spark: their source and query ids (natural order, as :class:`~rankmeter.Qrels` holds
    them)."""

    source: str
    query_ids: tuple[str, ...]


def _no_common_queries(
    name: str, source: str, queries: pa.Table, judged_rows: pa.Table, qrels_source: str
) -> RankmeterError:
    """The in-process engine's error for a run with no query in common with the qrels, from
    the query ids the tasks returned."""
    from rankmeter.data.ids import natural_order
    from rankmeter.evaluation import no_common_queries

    def ordered(ids: list[str]) -> tuple[str, ...]:
        return tuple(ids[i] for i in natural_order(ids))

    ran = ordered(queries.filter(queries.column(_ANSWERED)).column("query_id").to_pylist())
    judged = _JudgedIds(qrels_source, ordered(judged_rows.column("query_id").to_pylist()))
    # (a stand-in for the Qrels: the error reads their source and query ids alone)
    return no_common_queries(name, source, ran, cast("Qrels", judged))


def _own(table: pa.Table, name: str) -> pa.Table:
    """The rows of the tasks' table about run ``name``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return table.filter(pc.equal(table.column("run"), pa.scalar(name)))


def _answered(table: pa.Table, name: str) -> tuple[str, ...]:
    """The ids of the queries run ``name`` has results for, in natural order."""
    from rankmeter.data.ids import natural_order

    own = _own(table, name)
    ids = own.filter(own.column(_ANSWERED)).column("query_id").to_pylist()
    return tuple(ids[i] for i in natural_order(ids))


def _depth(table: pa.Table, name: str) -> int:
    """The most results one query of run ``name`` has."""
    import pyarrow.compute as pc

    return int(pc.max(_own(table, name).column(_DEPTH)).as_py() or 0)


def _per_query(
    session: SparkSession,
    qrels: DataFrame,
    runs: DataFrame,
    names: list[str],
    measures: tuple[Metric, ...],
    policies: Policies,
    buckets: int,
    sources: Mapping[str, str],
    qrels_source: str,
) -> pa.Table:
    """What every (run, bucket) task found (a pyarrow Table; see :class:`_BucketTask`): each
    judged query's values, each run query's id, and each bucket's written order and depth."""
    from pyspark.sql import functions as F

    labels = [m.label for m in measures]
    bucket = F.pmod(F.hash("query_id"), F.lit(buckets)).alias("bucket")
    # Every run meets every bucket of the qrels (a run without rows there still has its
    # judged queries, which score 0 under include_missing).
    judged = qrels.select("*", bucket).crossJoin(
        session.createDataFrame([(n,) for n in names], "run string")
    )
    ranked = runs.select("*", bucket)
    columns = ", ".join(f"m{i} double" for i in range(len(labels)))
    schema = (
        f"run string, query_id string, {columns}, judged double, num_ret double, "
        f"{_JUDGED} boolean, {_ANSWERED} boolean, {_WRITTEN} long, {_RISING} long, "
        f"{_DEPTH} long, {_ERROR} string"
    )
    task = _BucketTask(labels, policies)

    def evaluate_bucket(
        key: tuple[pa.Scalar, ...], run_rows: pa.Table, qrels_rows: pa.Table
    ) -> pa.Table:
        # A plain function: Spark checks the argument count of what it is given.
        return task(key, run_rows, qrels_rows)

    result = (
        ranked.groupBy("run", "bucket")
        .cogroup(judged.groupBy("run", "bucket"))
        .applyInArrow(evaluate_bucket, schema=schema)
    )
    table = result.toArrow()
    errors = table.column(_ERROR).drop_null()
    if len(errors):
        given = {f"run {name}": i for i, name in enumerate(sources)}
        first = min(errors.to_pylist(), key=lambda message: _file_order(message, given))
        raise _task_error(first, sources, qrels_source, session)
    return table


#: The columns a task adds beside the values: whether the row's query is judged (in the qrels)
#: and answered (in the run); and on one row per task without a query id, the task's written
#: order (queries, rising: :meth:`Run.written_order <rankmeter.data.Run.written_order>`) and
#: depth (the most results of one query).
_JUDGED, _ANSWERED = "__judged__", "__answered__"
_WRITTEN, _RISING, _DEPTH = "__written__", "__rising__", "__depth__"


class _BucketTask:
    """What a task runs on one (run, bucket): the in-process join and kernels, and what
    :class:`~rankmeter.results.RunFacts` needs of the bucket. Picklable (it travels to the
    executors); metrics are re-parsed there from their labels.

    Every judged query of the bucket is scored (as under ``include_missing``: a query the
    run lacks scores 0); the driver keeps the answered ones unless ``include_missing``. The
    values of a query do not depend on which others are scored with it."""

    def __init__(self, labels: list[str], policies: Policies) -> None:
        import dataclasses

        self.labels = labels
        self.policies = dataclasses.replace(policies, include_missing=True)

    def __call__(
        self, key: tuple[pa.Scalar, ...], run_rows: pa.Table, qrels_rows: pa.Table
    ) -> pa.Table:
        try:
            return self._evaluate(key[0].as_py(), run_rows, qrels_rows)
        except RankmeterError as error:
            return self._error(f"{type(error).__name__}\t{error}")

    def _table(self, n: int, given: Mapping[str, ArrayLike]) -> pa.Table:
        """``n`` rows: the columns ``given``, nulls in the others."""
        import pyarrow as pa

        types = {
            "run": pa.string(),
            "query_id": pa.string(),
            **{f"m{i}": pa.float64() for i in range(len(self.labels))},
            "judged": pa.float64(),
            "num_ret": pa.float64(),
            _JUDGED: pa.bool_(),
            _ANSWERED: pa.bool_(),
            _WRITTEN: pa.int64(),
            _RISING: pa.int64(),
            _DEPTH: pa.int64(),
            _ERROR: pa.string(),
        }
        return pa.table(
            {
                name: pa.array(given[name], kind) if name in given else pa.nulls(n, kind)
                for name, kind in types.items()
            }
        )

    def _error(self, message: str) -> pa.Table:
        return self._table(1, {_ERROR: [message]})

    def _read_error(self, side: str, error: FormatError, rows: pa.Table) -> pa.Table:
        """A reader's error on ``rows`` (in their file order): its reason, the id of the row
        it names (:data:`LINE`) and the value it shows (JSON), for :func:`_message_parts`."""
        import json

        at = "" if error.line is None else str(rows.column(LINE)[error.line - 1].as_py())
        return self._error(f"FormatError\t{side}\t{error.reason}\t{at}\t{json.dumps(error.text)}")

    def _evaluate(self, name: str, run_rows: pa.Table, qrels_rows: pa.Table) -> pa.Table:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from rankmeter.evaluation import per_query_values
        from rankmeter.io import as_qrels, as_run
        from rankmeter.metrics import parse_metrics
        from rankmeter.results import WRITTEN_DEPTH

        run = None
        if run_rows.num_rows:
            # In the order they were written: the run's input order is its file's again.
            rows = run_rows.take(pc.sort_indices(run_rows.column(LINE)))
            try:
                run = as_run(rows.select(list(RUN_COLUMNS)), name=name, ties=self.policies.ties)
            except FormatError as error:  # (with the row's id in the file, if it names one)
                return self._read_error(f"run {name}", error, rows)
        ran = [] if run is None else [str(q) for q in run.query_ids]
        written, rising = (0, 0) if run is None else run.written_order(WRITTEN_DEPTH)
        depth = int(np.diff(run.offsets).max(initial=0)) if run is not None else 0
        parts = [
            self._table(
                1,
                {"run": [name], _WRITTEN: [written], _RISING: [rising], _DEPTH: [depth]},
            )
        ]
        judged_ids: list[str] = []
        if qrels_rows.num_rows:
            rows = qrels_rows.take(pc.sort_indices(qrels_rows.column(LINE)))
            try:
                qrels = as_qrels(rows.select(list(QRELS_COLUMNS)))
            except FormatError as error:
                return self._read_error("qrels", error, rows)
            # The in-process per-query work, on this bucket: the join, the kernels.
            values = per_query_values(
                qrels, [] if run is None else [run], parse_metrics(self.labels), self.policies
            )
            judged_ids = [str(q) for q in qrels.segment_ids[values.rows]]
            answered = set(ran)
            n = len(judged_ids)
            columns: dict[str, ArrayLike] = {
                "run": [name] * n,
                "query_id": judged_ids,
                "judged": values.judged,
                "num_ret": values.num_ret,
                _JUDGED: [True] * n,
                _ANSWERED: [q in answered for q in judged_ids],
            }
            for i, label in enumerate(self.labels):
                columns[f"m{i}"] = values.values[label]
            parts.append(self._table(n, columns))
        known = set(judged_ids)
        only_run = [q for q in ran if q not in known]
        parts.append(
            self._table(
                len(only_run),
                {
                    "run": [name] * len(only_run),
                    "query_id": only_run,
                    _JUDGED: [False] * len(only_run),
                    _ANSWERED: [True] * len(only_run),
                },
            )
        )
        return pa.concat_tables(parts)


def _message_parts(message: str) -> tuple[str, str, str, str, str | None]:
    """A task's error message (``_BucketTask._error``) as ``(kind, side, reason, at, text)``:
    a reader's error is ``FormatError<TAB>side<TAB>reason<TAB>row<TAB>value``, side ``qrels``
    or ``run NAME``, row the id of the row it names or empty, value the one it shows (JSON,
    null for none); any other error ``Kind<TAB>text`` (its text as the reason, the rest
    empty)."""
    import json

    kind, _, text = message.partition("\t")
    if kind != "FormatError":
        return kind, "", text, "", None
    side, _, rest = text.partition("\t")
    reason, at, shown = rest.rsplit("\t", 2)
    value = json.loads(shown)
    return kind, side, reason, at, None if value is None else str(value)


def _file_order(message: str, given: Mapping[str, int]) -> tuple[int, int]:
    """Tasks' errors in the order the in-process engine meets them: the qrels', then each
    run's in the order given, each run's by the row it names (the first in the file first)."""
    kind, side, _, at, _ = _message_parts(message)
    if kind != "FormatError":
        return (len(given) + 1, 0)
    return (0 if side == "qrels" else 1 + given.get(side, len(given)), int(at or 0))


def _task_error(
    message: str,
    sources: Mapping[str, str],
    qrels_source: str,
    session: SparkSession | None = None,
) -> RankmeterError:
    """A task's error as the driver raises it. A reader's error is worded as the in-process
    one; where it names a row of qrels or a run read from a file, that row is named as the
    in-process reader names it (a bucket's own row numbers are not the file's): a TREC text
    file's line number and text, found in the file; a Parquet file's 1-based row and the
    value the reader showed. Other inputs (DataFrames, folders) are named without a row."""
    kind, side, reason, at, value = _message_parts(message)
    if kind == "FormatError":
        source = qrels_source if side == "qrels" else sources.get(side.removeprefix("run "), side)
        if at.isdigit() and os.path.isfile(source):
            if is_parquet(source):
                return FormatError(source, reason, line=int(at) + 1, text=value)
            if session is not None:
                line, shown = line_of(session, source, int(at))
                return FormatError(source, reason, line=line, text=shown)
        return FormatError(source, reason)
    return PolicyError(reason) if kind == "PolicyError" else RankmeterError(reason)


def _result(
    name: str,
    table: pa.Table,
    measures: tuple[Metric, ...],
    policies: Policies,
    qrels: object,
    source: str,
) -> EvalResult:
    """One run's EvalResult from what the tasks found: queries in natural order, as the
    in-process join orders them; its facts (query overlap, written order) as in process."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.ids import natural_order
    from rankmeter.results import PerQuery, RunFacts, judged_cutoff, judged_mean

    own = table.filter(pc.equal(table.column("run"), pa.scalar(name)))
    buckets = own.filter(pc.is_null(own.column("query_id")))
    queries = own.filter(pc.is_valid(own.column("query_id")))
    judged_rows = queries.filter(queries.column(_JUDGED))
    answered = judged_rows.filter(judged_rows.column(_ANSWERED))
    rows = judged_rows if policies.include_missing else answered
    if rows.num_rows == 0:
        raise _no_common_queries(name, source, queries, judged_rows, source_name(qrels))
    written = (
        int(pc.sum(buckets.column(_WRITTEN)).as_py() or 0),
        int(pc.sum(buckets.column(_RISING)).as_py() or 0),
    )
    ran = queries.filter(queries.column(_ANSWERED)).column("query_id").to_pylist()
    facts = RunFacts.of(source, judged_rows.column("query_id").to_pylist(), ran, written)
    ids = np.asarray(rows.column("query_id").to_pylist(), dtype=object)
    order = natural_order(ids)
    values = {
        m.label: np.asarray(rows.column(f"m{i}"), dtype=np.float64)[order]
        for i, m in enumerate(measures)
    }
    means = {m.label: m.aggregate(values[m.label]) for m in measures}
    per_query = PerQuery(tuple(str(q) for q in ids[order]), measures, values)
    num_ret = np.asarray(rows.column("num_ret"), dtype=np.float64)[order]
    judged = judged_mean(np.asarray(rows.column("judged"), dtype=np.float64)[order], num_ret)
    depth = int(np.nanmax(num_ret)) if len(num_ret) else 0
    return EvalResult(
        name,
        means,
        per_query,
        policies,
        measures,
        judged,
        judged_cutoff(measures),
        depth,
        facts=facts,
    )
