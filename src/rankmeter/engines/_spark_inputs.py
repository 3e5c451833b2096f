"""The inputs of an evaluation on Spark as DataFrames: qrels and runs given as DataFrames,
Parquet or TREC text read by Spark, each row numbered by its place in its file or table
(:data:`LINE`) so that an error names the row the in-process reader would name; a bad line of
a TREC text file is found in one pass and worded as the in-process reader words it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from rankmeter.errors import FormatError, PolicyError

if TYPE_CHECKING:
    from typing import TypeAlias

    from pyspark.sql import Column, DataFrame, SparkSession

    #: A table Spark evaluates: a DataFrame, or a path Spark reads (Parquet, TREC text).
    SparkInput: TypeAlias = DataFrame | str | os.PathLike[str]
    #: One run given: its DataFrame (run, query_id, doc_id, score, LINE, RANK), its one name
    #: (None: its run column names several) and how errors name it (its file).
    RunFrame: TypeAlias = tuple[DataFrame, str | None, str]

#: The columns of a run and of qrels given as DataFrames (a run may add ``run``: its name).
RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")

#: The column holding each run row's place in its file (or table): what the written order of
#: :class:`~rankmeter.results.RunFacts` is read by.
LINE = "line"

#: The rank column of a run file (NaN or null where not a number; null without one), for the
#: score order by the rank column (:func:`rankmeter.checking.score_order`).
RANK = "rank"


def cores(session: SparkSession) -> int:
    """The session's default parallelism; on Spark Connect (no SparkContext on the client),
    its shuffle partitions setting."""
    try:
        return max(1, int(session.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect raises its own not-implemented error here
        return max(1, int(session.conf.get("spark.sql.shuffle.partitions", "200") or 200) // 4)


def session_of(spark: object) -> SparkSession:
    """The SparkSession of ``spark`` (a session, or an Ibis PySpark backend)."""
    session = getattr(spark, "_session", spark)
    if not (hasattr(session, "createDataFrame") and hasattr(session, "read")):
        raise PolicyError(
            f"spark must be a SparkSession or rankmeter.engines.connect('spark'), not "
            f"{type(spark).__name__}"
        )
    return cast("SparkSession", session)


def is_frame(value: object) -> TypeGuard[DataFrame]:
    """Whether ``value`` is a Spark DataFrame (classic or Spark Connect)."""
    return hasattr(value, "sparkSession") and hasattr(value, "columns")


def _require(frame: DataFrame, columns: Sequence[str], what: str, source: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise FormatError(
            source,
            f"{what} needs the columns {', '.join(columns)}; missing {', '.join(missing)} "
            f"(it has {', '.join(frame.columns) or 'none'})",
        )


def _require_numeric(frame: DataFrame, column: str, source: str) -> None:
    """A table's column of numbers, as the in-process engine requires it (text is refused
    there whatever it holds; cast here, text that is not a number would fail the job)."""
    kind = dict(frame.dtypes)[column]
    numeric = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")
    if not kind.startswith(numeric):
        shown = "string" if kind == "string" else kind
        raise FormatError(source, f"{column} column must be numeric, not {shown}")


def _fields(session: SparkSession, path: str) -> DataFrame:
    """A text file's data lines split on whitespace, with their order in the file (and
    each one as written, ``value``, for an error)."""
    from pyspark.sql import functions as F

    text = session.read.text(path)
    text = text.withColumn("__line__", F.monotonically_increasing_id())
    # Fields are split at any run of blanks, as trec_eval and the in-process reader split
    # them (form feeds and vertical tabs too); F.get below reads a missing field as null
    # (indexing would fail the job under ANSI SQL, before the check that names the line).
    trimmed = F.trim(F.regexp_replace("value", r"\s+", " "))
    lines = text.select(trimmed.alias("line"), "__line__", "value")
    lines = lines.filter((F.col("line") != "") & ~F.col("line").startswith("#"))
    return lines.select("line", "__line__", "value", F.split("line", " ").alias("f"))


#: monotonically_increasing_id: the partition in the upper 31 bits, the row within it below.
_ROW_BITS = 33


def _first_bad(
    lines: DataFrame, path: str, checks: Sequence[tuple[Column, str]], kind: str, **also: Column
) -> dict[str, Any]:  # Any: a pyspark Row's values are untyped (pyspark.sql.types.Row)
    """One pass over the lines: the first line (in file order) failing any check raises the
    in-process reader's error for it (its line number, its wording); ``also``: more
    aggregates (e.g. the first line's tag), returned by name."""
    from pyspark.sql import functions as F

    bad = F.lit(False)
    for check, _ in checks:
        bad = bad | F.coalesce(check, F.lit(False))
    row = lines.agg(
        F.min_by(F.when(bad, F.col("value")), F.when(bad, F.col("__line__"))).alias("text"),
        F.min(F.when(bad, F.col("__line__"))).alias("at"),
        *(value.alias(name) for name, value in also.items()),
    ).collect()[0]
    text, at = row["text"], row["at"]
    if text is not None:
        raise _line_error(lines, path, text, at, kind, checks)
    return {name: row[name] for name in also}


def line_of(session: SparkSession, path: str, at: int) -> tuple[int, str]:
    """The number and text of the line of the text file ``path`` whose row id (as
    :func:`_fields` numbers them) is ``at``: the lines of the partitions before its own are
    counted (two small jobs, run only for an error)."""
    from pyspark.sql import functions as F

    text = session.read.text(path).withColumn("__line__", F.monotonically_increasing_id())
    partition = at >> _ROW_BITS
    before = text.filter(F.col("__line__") < (partition << _ROW_BITS)).count()
    row = text.filter(F.col("__line__") == at).select("value").first()
    return before + (at & ((1 << _ROW_BITS) - 1)) + 1, "" if row is None else row["value"]


def _line_error(
    lines: DataFrame, path: str, text: str, at: int, kind: str, checks: Sequence[tuple[Column, str]]
) -> FormatError:
    """The error for the bad line ``text`` (row id ``at``): the in-process reader's, with the
    line's number in the file (the lines of the partitions before its own, counted)."""
    from rankmeter.io.trec import QRELS_LAYOUT, RUN_LAYOUT, parse_lines

    line = line_of(lines.sparkSession, path, at)[0] if os.path.isfile(path) else None
    layout = RUN_LAYOUT if kind == "run" else QRELS_LAYOUT
    try:
        parse_lines([(line or 0, text.encode("utf-8"))], path, layout)
    except FormatError as error:
        if line is not None:
            return error
        return FormatError(path, error.reason, text=text)
    # (a line the in-process reader takes, and Spark's checks do not)
    reason = next(r for _, r in checks)
    shown = text if len(text) <= 80 else text[:77] + "..."
    return FormatError(path, f"{reason}: {shown!r}", line=line)


def qrels_frame(session: SparkSession, qrels: object, source: str = "<qrels>") -> DataFrame:
    """The qrels as a DataFrame of query_id, doc_id, relevance and each row's place in its
    file or table (:data:`LINE`), for the errors that name a row."""
    from pyspark.sql import functions as F

    if is_frame(qrels):
        _require(qrels, QRELS_COLUMNS, "qrels", source)
        return qrels.select(
            F.col("query_id").cast("string").alias("query_id"),
            F.col("doc_id").cast("string").alias("doc_id"),
            F.col("relevance").alias("relevance"),
            _row_of(qrels, source).alias(LINE),
        )
    path = _path(qrels, "qrels")
    if is_parquet(path):
        return qrels_frame(session, session.read.parquet(path), path)
    lines = _fields(session, path)
    # try_cast: a field that is not a number is null (and named below); Spark's ANSI cast
    # would fail the job instead, with a Java trace.
    grade = F.get("f", 3).try_cast("long")
    fields = "a qrels line has 4 fields (query, iteration, document, grade)"
    not_integer = "the grade (4th field) is not an integer"
    _first_bad(
        lines,
        path,
        [(F.size("f") != 4, fields), ((F.size("f") == 4) & grade.isNull(), not_integer)],
        "qrels",
    )
    return lines.select(
        F.get("f", 0).alias("query_id"),
        F.get("f", 2).alias("doc_id"),
        grade.alias("relevance"),
        F.col("__line__").alias(LINE),
    )


def _row_of(frame: DataFrame, source: str) -> Column:
    """Each row's place: in a Parquet file read from ``source``, its 0-based row there
    (Spark's ``_metadata.row_index``), so that an error names the row the in-process reader
    names; elsewhere (a DataFrame, a folder of files) the order Spark reads the rows in."""
    from pyspark.sql import functions as F

    if os.path.isfile(source) and is_parquet(source):
        return F.col("_metadata.row_index")
    return F.monotonically_increasing_id()


def _path(value: object, what: str) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise PolicyError(
        f"{what} must be a Spark DataFrame or a path Spark can read (Parquet, TREC text), "
        f"not {type(value).__name__}"
    )


def is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq")) or os.path.isdir(path)


def run_frames(
    session: SparkSession, run: object, name: str | None
) -> tuple[list[RunFrame], bool, dict[str, str]]:
    """Each run as a DataFrame with run, query_id, doc_id, score, with how errors name it
    (its file); whether several were given (a list or a dict); and the names that telling
    runs of a list apart changed (new name -> the run's own, e.g. its tag)."""
    if isinstance(run, Mapping):
        if name is not None:
            raise PolicyError("name names a single run; a dict of runs is named by its keys")
        return (
            [
                (*_run_frame(session, r, str(n), keep_names=False), source_name(r))
                for n, r in run.items()
            ],
            True,
            {},
        )
    if isinstance(run, (list, tuple)):
        if name is not None:
            raise PolicyError("name names a single run; give a dict {name: run} for several")
        given = [(*_run_frame(session, r, None, keep_names=True), source_name(r)) for r in run]
        apart = _named_apart(given)
        own = {
            str(new): str(old)
            for (_, old, _), (_, new, _) in zip(given, apart, strict=True)
            if old is not None and new is not None and new != old
        }
        return apart, True, own
    return [(*_run_frame(session, run, name, keep_names=True), source_name(run))], False, {}


def _run_frame(
    session: SparkSession, run: object, name: str | None, *, keep_names: bool, source: str = "<run>"
) -> tuple[DataFrame, str | None]:
    """The run as a DataFrame, and its one name when it has one (None: its ``run`` column
    names several). ``source``: how errors name a DataFrame (a Parquet file's path)."""
    from pyspark.sql import functions as F

    if is_frame(run):
        _require(run, RUN_COLUMNS, "a run", source)
        _require_numeric(run, "score", source)
        several = keep_names and name is None and "run" in run.columns
        label = F.col("run").cast("string") if several else F.lit(name or "run")
        frame = run.select(
            label.alias("run"),
            F.col("query_id").cast("string").alias("query_id"),
            F.col("doc_id").cast("string").alias("doc_id"),
            F.col("score").cast("double").alias("score"),
            # The rows' order as given (a single file's or table's: Spark numbers the
            # partitions in the order it reads them), for the written order (RunFacts).
            _row_of(run, source).alias(LINE),
            _rank_column(run.columns).alias(RANK),
        )
        return frame, None if several else (name or "run")
    path = _path(run, "run")
    if is_parquet(path):
        from rankmeter.io.tables import default_run_name

        frame = session.read.parquet(path)
        if name is None and "run" not in frame.columns:
            name = default_run_name(path)
        return _run_frame(session, frame, name, keep_names=keep_names, source=path)
    lines = _fields(session, path)
    score = F.get("f", 4).try_cast("double")  # (null where not a number: see qrels_frame)
    fields = "a run line has 6 fields (query, Q0, document, rank, score, tag)"
    not_number = "the score (5th field) is not a number"
    first = _first_bad(
        lines,
        path,
        [(F.size("f") < 6, fields), ((F.size("f") >= 6) & score.isNull(), not_number)],
        "run",
        tag=F.min_by(F.get("f", 5), F.col("__line__")),
    )
    if name is None:
        name = first["tag"] or "run"
    frame = lines.select(
        F.lit(name).alias("run"),
        F.get("f", 0).alias("query_id"),
        F.get("f", 2).alias("doc_id"),
        score.alias("score"),
        F.col("__line__").alias(LINE),
        F.get("f", 3).try_cast("double").alias(RANK),
    )
    return frame, name


def _rank_column(columns: Sequence[str]) -> Column:
    """A table's rank column (named as the in-process readers find it: ``rank`` or
    ``position``, any case) as numbers, null where not one; all null without one."""
    from pyspark.sql import functions as F

    from rankmeter.io.rows import RANK_COLUMNS

    lowered = {c.strip().lower(): c for c in columns}
    for alias in RANK_COLUMNS:
        if alias in lowered:
            return F.col(f"`{lowered[alias]}`").try_cast("double")
    return F.lit(None).cast("double")


def _named_apart(
    runs: list[RunFrame],
) -> list[RunFrame]:
    """Runs of a list that share a name (their TREC tag) told apart as the in-process engine
    tells them apart (:func:`rankmeter.data.run.unique_names`: by their files); a run whose
    ``run`` column names several keeps its names (a clash is then refused by :func:`sources_of`)."""
    from pyspark.sql import functions as F

    from rankmeter.data.run import unique_names

    known = [name for _, name, _ in runs]
    if any(name is None for name in known):
        return runs
    names = unique_names([str(n) for n in known], [source for _, _, source in runs])
    return [
        (frame if new == old else frame.withColumn("run", F.lit(new)), new, source)
        for (frame, old, source), new in zip(runs, names, strict=True)
    ]


def sources_of(runs: Iterable[RunFrame]) -> dict[str, str]:
    """``"run NAME"`` -> how errors name that run, for the run names in the order given (a
    frame's own names sorted); two runs given apart must not share a name (their rows would
    merge)."""
    names: dict[str, str] = {}
    for frame, known, source in runs:
        if known is not None:
            own = [known]
        else:  # a job: the names a run column holds
            own = [r["run"] for r in frame.select("run").distinct().orderBy("run").collect()]
        for name in own:
            if name in names:
                raise PolicyError(
                    f"two runs are named {name!r}: their rows would be evaluated as one run; "
                    "name them apart with a dict {name: run}"
                )
            names[name] = source
    return names


def source_name(value: object) -> str:
    """How errors name an input: its path, else ``<DataFrame>``."""
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else "<DataFrame>"
