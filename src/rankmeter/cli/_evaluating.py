"""The work of ``rankmeter evaluate``, without Typer: the command (:mod:`rankmeter.cli.evaluate`)
and its fast start (:mod:`rankmeter.cli._fast`) both run :func:`evaluate_files` with the values
their parsers read; the library evaluates (:func:`rankmeter.engines.evaluate_files`), the
report renders."""

from __future__ import annotations

from rankmeter.cli._warnings import print_data_warnings
from rankmeter.report import Steps

#: The output formats of ``--format``.
OUTPUT_FORMATS = ("table", "json", "tsv", "trec")
#: The choices of ``--engine`` (evaluate's and compare's).
EVAL_ENGINES = ("process", "spark")


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
    pool: str | None = None,
) -> None:
    """Evaluate run files against a qrels file and write the results (see ``rankmeter
    evaluate --help`` for what each value means)."""
    from rankmeter.engines import evaluate_files as evaluate_runs
    from rankmeter.report import render
    from rankmeter.results import check_judged_below, check_worst

    judged_below = check_judged_below(judged_below)
    worst = None if worst is None else check_worst(worst)
    done = evaluate_runs(
        qrels,
        runs,
        metric,
        goal=goal,
        rel=rel,
        include_missing=include_missing,
        judged_only=judged_only,
        ties=ties,
        qrels_format=qrels_format,
        run_format=run_format,
        stream=stream,
        engine=engine,
        spark_master=spark_master,
        spark_conf=spark_conf,
        stages=lambda total: Steps(total=total, enabled=False if quiet else None),
        command_line=True,
        inclusion=pool,
    )
    # Data formats stay data: the goal's notes and the warnings go to stderr, unless quiet.
    render(
        done.results,
        output_format,
        output,
        quiet=quiet,
        per_query=per_query,
        single=len(runs) == 1,
        goal=done.goal,
        goal_notes=done.goal_notes,
        judged_below=judged_below,
        worst=worst,
    )
    print_data_warnings(done.results, quiet=quiet, run_format=run_format)
