"""Run files evaluated here or on Spark, as ``rankmeter evaluate`` evaluates them.

:func:`evaluate_files` is the library side of the command: runs named as a command line
names them (``PATH`` or ``NAME=PATH``, :mod:`rankmeter.io.run_args`), a goal's metrics and
notes, and the choice of engine: ``"process"`` (the qrels read once, each run streamed or read
whole, progress per run) or ``"spark"`` (one pass on Spark, :mod:`rankmeter.engines.spark`).
:func:`spark_for` gives the Spark backend an engine choice asks for, its settings and inputs
checked first; ``rankmeter compare`` uses it too (:func:`rankmeter.comparison.compare_files`).

It lives in ``engines``, not ``evaluation``: it chooses where the work runs, and ``engines``
imports ``evaluation`` (never the other way).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    from rankmeter.io.run_args import RunArgument
    from rankmeter.metrics import Goal, Metric
    from rankmeter.results import EvalResult, EvalResults

__all__ = [
    "EVALUATION_ENGINES",
    "SPARK_FORMATS",
    "EvaluatedFiles",
    "Stages",
    "evaluate_files",
    "no_stages",
    "spark_for",
]

#: Where :func:`evaluate_files` (and ``rankmeter compare``) computes the per-query values.
EVALUATION_ENGINES = ("process", "spark")
#: The input formats Spark reads itself (:mod:`rankmeter.engines.spark`).
SPARK_FORMATS = ("trec", "parquet")

#: A source of progress: called with the number of steps of a stage, it gives a context
#: manager whose value has ``start(label)`` (``rankmeter.cli``'s progress bar is one).
Stages = Callable[[int], AbstractContextManager[Any]]


class _Silent:
    def start(self, label: str) -> None:
        """No progress shown."""


@contextmanager
def no_stages(total: int) -> Iterator[Any]:
    """:data:`Stages` that show nothing: what a function given no ``stages`` runs with.

    >>> with no_stages(2) as steps:
    ...     steps.start("reading qrels")
    """
    yield _Silent()


def _setting(name: str, value: Any = None, *, command_line: bool = False) -> str:
    """A parameter, or a parameter with its value, as a message names it: as Python does
    (``engine='spark'``) or, with ``command_line``, as the command line does (``--engine
    spark``; ``_`` in a name is ``-`` there).

    >>> _setting("engine", "spark"), _setting("run_format", "json", command_line=True)
    ("engine='spark'", '--run-format json')
    """
    if command_line:
        option = "--" + name.replace("_", "-")
        return option if value is None else f"{option} {value}"
    return name if value is None else f"{name}={value!r}"


@dataclass(frozen=True)
class EvaluatedFiles:
    """What :func:`evaluate_files` made: the runs' results and the goal's notes on the data.

    Attributes
    ----------
    results : every run's :class:`~rankmeter.results.EvalResult`, in the order given, each
        under its name (``NAME=``, else its own, told apart by their files)
    goal : the goal whose metrics were evaluated (None: none was given)
    goal_notes : the goal's notes on these qrels and runs
        (:func:`rankmeter.metrics.goals.goal_notes`), one line each; with or without a goal,
        the note that diversity metrics on qrels of one subtopic a query measure no diversity
        (:func:`rankmeter.metrics.subtopic_notes`)
    """

    results: EvalResults
    goal: Goal | None = None
    goal_notes: tuple[str, ...] = ()


def spark_for(
    engine: str,
    *,
    inputs: Sequence[str] = (),
    qrels_format: str | None = None,
    run_format: str | None = None,
    spark: Any = None,
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | Iterable[str] | None = None,
    command_line: bool = False,
) -> Any:
    """The Spark backend ``engine="spark"`` runs on, or None for ``engine="process"``.

    What Spark cannot read is refused before it starts: stdin (``"-"`` among the ``inputs``),
    and formats other than TREC text and Parquet (Spark tells them apart by the name:
    ``.parquet``, ``.pq`` or a folder). Then the Spark settings: ``spark`` (a backend or
    SparkSession to run on), ``spark_master`` and ``spark_conf`` (a mapping, or ``KEY=VALUE``
    texts) belong to ``engine="spark"`` only; without ``spark``, the process's one session is
    started with them (:func:`rankmeter.engines.connect`).

    ``command_line``: messages name the command line's options (``--engine spark``) instead
    of the parameters (``engine='spark'``).

    Raises
    ------
    PolicyError
        For an unknown engine, input Spark cannot read, or a setting of the other engine.
    """
    from rankmeter._validate import choice

    choice("engine", engine, EVALUATION_ENGINES, what="where the per-query values are computed")
    if engine == "spark":
        _check_spark_inputs(inputs, qrels_format, run_format, command_line)
    given = [("spark_master", spark_master), ("spark_conf", spark_conf), ("spark", spark)]
    if engine != "spark":
        for name, value in given:
            if value is not None and (name != "spark_conf" or value):
                raise PolicyError(
                    f"{_setting(name, command_line=command_line)} is a setting of "
                    f"{_setting('engine', 'spark', command_line=command_line)}, not of "
                    f"{_setting('engine', engine, command_line=command_line)}"
                )
        return None
    settings = _spark_settings(spark_conf, command_line)
    if spark is not None:
        return spark
    from rankmeter.engines import connect

    return connect("spark", spark_master=spark_master, spark_conf=settings or None)


def _check_spark_inputs(
    inputs: Sequence[str], qrels_format: str | None, run_format: str | None, command_line: bool
) -> None:
    engine = _setting("engine", "spark", command_line=command_line)
    if "-" in inputs:
        raise PolicyError(f"{engine} reads files (Spark reads them itself), not stdin ('-')")
    for name, given in (("qrels_format", qrels_format), ("run_format", run_format)):
        if given is not None and given not in SPARK_FORMATS:
            raise PolicyError(
                f"{engine} reads TREC text and Parquet, not "
                f"{_setting(name, given, command_line=command_line)}: convert the file, or use "
                f"{_setting('engine', 'process', command_line=command_line)}"
            )


def _spark_settings(
    given: Mapping[str, str] | Iterable[str] | None, command_line: bool
) -> dict[str, str]:
    """Spark settings from a mapping or from ``KEY=VALUE`` texts (the key stripped)."""
    if given is None:
        return {}
    if isinstance(given, Mapping):
        return dict(given)
    settings: dict[str, str] = {}
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise PolicyError(
                f"{_setting('spark_conf', command_line=command_line)} takes KEY=VALUE (e.g. "
                f"spark.sql.shuffle.partitions=64), got {item!r}"
            )
        settings[key.strip()] = value
    return settings


def evaluate_files(
    qrels: str | os.PathLike[str],
    runs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    *,
    goal: str | Goal | None = None,
    rel: float = 1,
    include_missing: bool = False,
    judged_only: bool = False,
    ties: str = "trec_eval",
    qrels_format: str | None = None,
    run_format: str | None = None,
    stream: bool | None = None,
    engine: str = "process",
    spark: Any = None,
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | Iterable[str] | None = None,
    stages: Stages | None = None,
    command_line: bool = False,
    inclusion: Any = None,
) -> EvaluatedFiles:
    """Evaluate run files against a qrels file, here or on Spark, as ``rankmeter evaluate``
    does.

    Parameters
    ----------
    qrels : path of the qrels (``"-"``: stdin, with ``engine="process"``)
    runs : the runs as a command line names them: ``PATH`` or ``NAME=PATH``
        (:func:`rankmeter.io.run_arguments`); at most one input (qrels or run) is ``"-"``
    metrics : metric names (default nDCG@10, P@10, R@100, RR, AP; with ``goal``, its metrics
        are added)
    goal : a goal (or its name, :func:`rankmeter.metrics.goals.get_goal`): its metrics are
        evaluated, and its notes on these qrels and runs given
    rel, include_missing, judged_only, ties : as :func:`rankmeter.evaluate` takes them
    qrels_format, run_format : the files' formats (None: from the names)
    stream : ``engine="process"``: TREC runs read in chunks of whole queries (None: when a
        run is grouped by query; True: always, refused for other formats; False: never)
    engine : ``"process"`` (default) or ``"spark"``: the per-query values computed on Spark
        (:func:`rankmeter.engines.spark.evaluate`), which reads the files itself (TREC text
        and Parquet); the same numbers
    spark, spark_master, spark_conf : with ``engine="spark"``, as :func:`spark_for` takes them
    stages : progress (see :data:`Stages`): a step per run in process, one on Spark; None:
        none
    command_line : messages name the command line's options (``--engine spark``) instead of
        the parameters (``engine='spark'``)
    inclusion : the inclusion probabilities of sampled judgments (a pool file's path, as
        ``--pool`` names it; see :func:`rankmeter.evaluate`), with ``engine="process"``

    Returns
    -------
    EvaluatedFiles
        The results, under the names the runs were given, and the goal's notes.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "bm25.run")
    >>> _ = open(qrels, "w").write("q1 0 d1 1\\n")
    >>> _ = open(run, "w").write("q1 Q0 d1 1 2.0 tag\\n")
    >>> done = evaluate_files(qrels, [f"mine={run}"], ["P@1"])
    >>> [(r.run, r["P@1"]) for r in done.results.results]
    [('mine', 1.0)]
    """
    from rankmeter.io.run_args import input_path, run_arguments, run_list
    from rankmeter.metrics import (
        DEFAULT_METRICS,
        parse_metrics,
        pool_notes,
        subtopic_notes,
    )
    from rankmeter.metrics.goals import get_goal, goal_notes

    qrels = input_path(qrels, "qrels")
    runs = run_list(runs)
    if not runs:
        raise PolicyError("evaluate needs one run or more (runs=); got none")
    inputs = [qrels, *runs]
    if inputs.count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    arguments = run_arguments(runs)
    chosen: Goal | None = get_goal(goal) if isinstance(goal, str) else goal
    asked = [metrics] if isinstance(metrics, str) or hasattr(metrics, "label") else metrics
    if asked is not None and not isinstance(asked, Iterable):
        raise PolicyError(
            f"metrics= must be a metric name or a list of them, got {type(metrics).__name__}"
        )
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    measures = parse_metrics([*(asked or []), *goal_metrics] or DEFAULT_METRICS)
    if engine == "spark" and stream is not None:
        raise PolicyError(
            "--stream/--no-stream are settings of --engine process"
            if command_line
            else "stream is a setting of engine='process'"
        )
    refused = spark_refusal(measures, inclusion, command_line=command_line)
    if engine == "spark" and refused:
        raise PolicyError(refused)
    backend = spark_for(
        engine,
        inputs=[qrels, *(a.path for a in arguments)],
        qrels_format=qrels_format,
        run_format=run_format,
        spark=spark,
        spark_master=spark_master,
        spark_conf=spark_conf,
        command_line=command_line,
    )
    policies = {
        "rel": rel,
        "include_missing": include_missing,
        "judged_only": judged_only,
        "ties": ties,
    }
    progress = stages or no_stages
    if backend is not None:
        results, loaded_qrels = _on_spark(backend, qrels, arguments, measures, policies, progress)
    else:
        results, loaded_qrels = _here(
            qrels,
            arguments,
            measures,
            policies,
            qrels_format,
            run_format,
            stream,
            progress,
            command_line,
            inclusion,
        )
    own = () if loaded_qrels is None else subtopic_notes(loaded_qrels, measures)
    own += () if loaded_qrels is None else pool_notes(loaded_qrels, measures)
    if chosen is None:
        return EvaluatedFiles(results, None, own)
    if loaded_qrels is None:  # on Spark: the grades are read here (qrels are small)
        from rankmeter.io import read_qrels

        loaded_qrels = read_qrels(qrels, format=qrels_format)
    depths = {r.run: r.depth for r in results.results if r.depth is not None}
    notes = goal_notes(
        chosen, grades=loaded_qrels.grades, rel=rel, depths=depths, measures=measures
    )
    return EvaluatedFiles(results, chosen, (*notes, *own))


def spark_refusal(
    metrics: Sequence[Metric], inclusion: Any, *, command_line: bool = False
) -> str | None:
    """Why these settings cannot run on Spark, or None: a pool's inclusion probabilities
    (``inclusion``, ``--pool``) and the subtopics of diversity metrics do not travel there
    yet. One wording for every caller (``evaluate_files``, ``compare_files``, ``compare``)."""
    if inclusion is not None:
        return (
            f"{'--pool' if command_line else 'inclusion'} is a setting of "
            f"{_setting('engine', 'process', command_line=command_line)}: Spark does not carry "
            "inclusion probabilities yet"
        )
    from rankmeter.metrics import reads_subtopics

    if reads_subtopics(metrics):
        return spark_subtopics(metrics, command_line)
    return None


def spark_subtopics(metrics: Sequence[Metric], command_line: bool) -> str:
    """Why diversity metrics are refused on Spark: its engine reads no subtopics yet."""
    from rankmeter.metrics.diversity import SPECS as DIVERSITY

    named = [m.label for m in metrics if m.spec in DIVERSITY]
    engine = _setting("engine", "spark", command_line=command_line)
    other = _setting("engine", "process", command_line=command_line)
    verb = "reads" if len(named) == 1 else "read"
    return (
        f"{', '.join(named)} {verb} subtopic qrels, which {engine} does not read yet; use {other}"
    )


def _on_spark(
    backend: Any,
    qrels: str,
    arguments: list[RunArgument],
    measures: Sequence[Metric],
    policies: dict[str, Any],
    stages: Stages,
) -> tuple[EvalResults, None]:
    """The runs evaluated on Spark, named as the in-process engine names them: by their own
    names (tags), told apart among those not named ``NAME=PATH``."""
    from typing import cast

    from rankmeter.engines.spark import evaluate_with_rows
    from rankmeter.results import EvalResults

    with stages(1) as steps:
        steps.start(f"evaluating {len(arguments)} run(s) on Spark")
        on_spark, kept = evaluate_with_rows(
            backend, qrels, [a.path for a in arguments], measures, **policies
        )
    own = [
        dataclasses.replace(r, run=kept.own_names[r.run])
        for r in cast(EvalResults, on_spark).results
    ]
    return _named(arguments, own), None


def _here(
    qrels: str,
    arguments: list[RunArgument],
    measures: Sequence[Metric],
    policies: dict[str, Any],
    qrels_format: str | None,
    run_format: str | None,
    stream: bool | None,
    stages: Stages,
    command_line: bool,
    inclusion: Any = None,
) -> tuple[EvalResults, Any]:
    """The in-process engine: the qrels read once, each run streamed or read whole; the
    results and the qrels."""
    from rankmeter.evaluation import evaluate
    from rankmeter.io import read_qrels, read_run, sampled_qrels
    from rankmeter.metrics import reads_subtopics

    with stages(len(arguments) + 1) as steps:
        steps.start(f"reading {qrels}")
        subtopics = reads_subtopics(measures)
        loaded_qrels = sampled_qrels(
            read_qrels(qrels, format=qrels_format, subtopics=subtopics), inclusion
        )
        evaluated = []
        for argument in arguments:
            path = argument.path
            steps.start(f"evaluating {path}")
            if run_format is None or stream:
                if stream and run_format not in (None, "trec"):
                    stream_option = "--stream" if command_line else "stream=True"
                    raise PolicyError(f"{stream_option} reads TREC run files")
                # TREC run files are streamed in chunks of whole queries unless --no-stream.
                evaluated.append(evaluate(loaded_qrels, path, measures, stream=stream, **policies))
            else:
                loaded = read_run(path, format=run_format, ties=policies["ties"])
                evaluated.append(evaluate(loaded_qrels, loaded, measures, stream=False, **policies))
        return _named(arguments, evaluated), loaded_qrels


def _named(arguments: list[RunArgument], evaluated: list[EvalResult]) -> EvalResults:
    """The evaluations as EvalResults, each under the name its argument gives (NAME=PATH), else
    its own, told apart by their files (:func:`rankmeter.io.run_names`)."""
    from rankmeter.io.run_args import run_names
    from rankmeter.results import EvalResults

    names = run_names(arguments, [r.run for r in evaluated])
    return EvalResults.named(
        [
            r if r.run == n else dataclasses.replace(r, run=n)
            for r, n in zip(evaluated, names, strict=True)
        ],
        [a.path for a in arguments],
    )
