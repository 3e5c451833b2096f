"""The work of ``rankmeter evaluate``, without Typer: the command (:mod:`rankmeter.cli.evaluate`)
and its fast start (:mod:`rankmeter.cli._fast`) both run :func:`evaluate_files` with the values
their parsers read."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from rankmeter.cli._runs import run_arguments, run_names
from rankmeter.cli._warnings import print_data_warnings
from rankmeter.report import Steps

#: The output formats of ``--format``.
OUTPUT_FORMATS = ("table", "json", "tsv", "trec")
#: The choices of ``--engine`` (evaluate's and compare's).
EVAL_ENGINES = ("process", "spark")
#: The input formats Spark reads itself (rankmeter.engines.spark).
SPARK_FORMATS = ("trec", "parquet")


def spark_backend(engine: str, master: str | None, conf: list[str] | None) -> Any:
    """The Spark backend ``--engine spark`` runs on (started once per process, shared), or
    None for the in-process engine; ``--spark-master`` and ``--spark-conf`` are checked first."""
    from rankmeter.errors import PolicyError

    if engine != "spark":
        if master is not None or conf:
            option = "--spark-master" if master is not None else "--spark-conf"
            raise PolicyError(f"{option} is a setting of --engine spark, not of --engine {engine}")
        return None
    settings: dict[str, str] = {}
    for item in conf or []:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise PolicyError(
                f"--spark-conf takes KEY=VALUE (e.g. spark.sql.shuffle.partitions=64), got {item!r}"
            )
        settings[key.strip()] = value
    from rankmeter.engines import connect

    return connect("spark", spark_master=master, spark_conf=settings or None)


def check_spark_inputs(
    inputs: list[str], qrels_format: str | None = None, run_format: str | None = None
) -> None:
    """What Spark cannot read is refused before it starts: stdin, and formats other than TREC
    text and Parquet (which Spark tells apart by the name: .parquet, .pq or a folder)."""
    from rankmeter.errors import PolicyError

    if "-" in inputs:
        raise PolicyError("--engine spark reads files (Spark reads them itself), not stdin ('-')")
    for option, given in (("--qrels-format", qrels_format), ("--run-format", run_format)):
        if given is not None and given not in SPARK_FORMATS:
            raise PolicyError(
                f"--engine spark reads TREC text and Parquet, not {option} {given}: convert the "
                "file, or use --engine process"
            )


def spark_for(
    engine: str,
    master: str | None,
    conf: list[str] | None,
    inputs: list[str],
    qrels_format: str | None = None,
    run_format: str | None = None,
) -> Any:
    """:func:`spark_backend` for a command that reads ``inputs`` (checked first: Spark reads
    files, not stdin, in the formats it reads)."""
    if engine == "spark":
        check_spark_inputs(inputs, qrels_format, run_format)
    return spark_backend(engine, master, conf)


def evaluate_files(
    qrels: str,
    runs: list[str],
    *,
    metric: list[str] | None,
    goal: str | None,
    rel: float,
    include_missing: bool,
    judged_only: bool,
    per_query: bool,
    output_format: str,
    ties: str,
    qrels_format: str | None,
    run_format: str | None,
    output: str | None,
    stream: bool | None,
    quiet: bool,
    judged_below: float = 0.9,
    engine: str = "process",
    spark_master: str | None = None,
    spark_conf: list[str] | None = None,
    worst: int | None = None,
) -> None:
    """Evaluate run files against a qrels file and write the results (see ``rankmeter
    evaluate --help`` for what each value means)."""
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_qrels
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.metrics.goals import get_goal, goal_notes
    from rankmeter.results import EvalResults, check_judged_below, check_worst

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    judged_below = check_judged_below(judged_below)
    worst = None if worst is None else check_worst(worst)
    arguments = run_arguments(runs)
    chosen = get_goal(goal) if goal is not None else None
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    measures = parse_metrics([*(metric or []), *goal_metrics] or DEFAULT_METRICS)
    if engine == "spark":
        if stream is not None:
            raise PolicyError("--stream/--no-stream are settings of --engine process")
        check_spark_inputs([qrels, *(a.path for a in arguments)], qrels_format, run_format)
    backend = spark_backend(engine, spark_master, spark_conf)
    if backend is not None:
        from rankmeter.engines.spark import evaluate_with_rows

        with Steps(total=1, enabled=False if quiet else None) as steps:
            steps.start(f"evaluating {len(runs)} run(s) on Spark")
            on_spark, kept = evaluate_with_rows(
                backend,
                qrels,
                [a.path for a in arguments],
                measures,
                rel=rel,
                include_missing=include_missing,
                judged_only=judged_only,
                ties=ties,
            )
        # A list of runs gives EvalResults, named as the in-process engine names them: by
        # their own names (tags), told apart among those not named NAME=PATH.
        own = [
            dataclasses.replace(r, run=kept.own_names[r.run])
            for r in cast(EvalResults, on_spark).results
        ]
        results = _named(arguments, own)
        loaded_qrels = None
    else:
        results, loaded_qrels = _evaluate_here(
            qrels,
            arguments,
            measures,
            rel,
            include_missing,
            judged_only,
            ties,
            qrels_format,
            run_format,
            stream,
            quiet,
        )
    notes: tuple[str, ...] = ()
    if chosen is not None:
        if loaded_qrels is None:  # on Spark: the grades are read here (qrels are small)
            loaded_qrels = read_qrels(qrels, format=qrels_format)
        depths = {r.run: r.depth for r in results.results if r.depth is not None}
        notes = goal_notes(
            chosen, grades=loaded_qrels.grades, rel=rel, depths=depths, measures=measures
        )
    _write(
        results, runs, per_query, output_format, output, judged_below, chosen, quiet, notes, worst
    )
    print_data_warnings(results, quiet=quiet, run_format=run_format)


def _evaluate_here(
    qrels: str,
    arguments: Any,
    measures: Any,
    rel: float,
    include_missing: bool,
    judged_only: bool,
    ties: str,
    qrels_format: str | None,
    run_format: str | None,
    stream: bool | None,
    quiet: bool,
) -> tuple[Any, Any]:
    """The in-process engine: the qrels read once, each run streamed or read whole; the
    results and the qrels."""
    from rankmeter.errors import PolicyError
    from rankmeter.evaluation import evaluate as run_evaluation
    from rankmeter.io import read_qrels, read_run

    with Steps(total=len(arguments) + 1, enabled=False if quiet else None) as steps:
        steps.start(f"reading {qrels}")
        loaded_qrels = read_qrels(qrels, format=qrels_format)

        def run_with(runs_: Any, streaming: bool | None) -> Any:
            return run_evaluation(
                loaded_qrels,
                runs_,
                measures,
                rel=rel,
                include_missing=include_missing,
                judged_only=judged_only,
                ties=ties,
                stream=streaming,
            )

        evaluated = []
        for argument in arguments:
            path = argument.path
            steps.start(f"evaluating {path}")
            if run_format is None or stream:
                if stream and run_format not in (None, "trec"):
                    raise PolicyError("--stream reads TREC run files")
                # TREC run files are streamed in chunks of whole queries unless --no-stream.
                evaluated.append(run_with(path, stream))
            else:
                loaded = read_run(path, format=run_format, ties=ties)
                evaluated.append(run_with(loaded, False))
        return _named(arguments, evaluated), loaded_qrels


def _named(arguments: Any, evaluated: list[Any]) -> Any:
    """The evaluations as EvalResults, each under the name its argument gives (NAME=PATH), else
    its own, told apart by their files (cli._runs)."""

    from rankmeter.results import EvalResults

    names = run_names(arguments, [r.run for r in evaluated])
    return EvalResults.named(
        [
            r if r.run == n else dataclasses.replace(r, run=n)
            for r, n in zip(evaluated, names, strict=True)
        ],
        [a.path for a in arguments],
    )


def _write(
    results: Any,
    runs: list[str],
    per_query: bool,
    output_format: str,
    output: str | None,
    judged_below: float,
    chosen: Any,
    quiet: bool,
    notes: tuple[str, ...],
    worst: int | None,
) -> None:
    """The results in ``output_format``, to ``output`` (stdout when None); ``notes``: the
    goal's notes on the data."""
    from rankmeter.report import render

    # Data formats stay data: the goal's notes and the warnings go to stderr, unless quiet.
    render(
        results,
        output_format,
        output,
        quiet=quiet,
        per_query=per_query,
        single=len(runs) == 1,
        goal=chosen,
        goal_notes=notes,
        judged_below=judged_below,
        worst=worst,
    )
