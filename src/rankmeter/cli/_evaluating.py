"""The work of ``rankmeter evaluate``, without Typer: the command (:mod:`rankmeter.cli.evaluate`)
and its fast start (:mod:`rankmeter.cli._fast`) both run :func:`evaluate_files` with the values
their parsers read."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from rankmeter.cli._output import emit, render_rich
from rankmeter.cli._progress import Steps
from rankmeter.cli._runs import run_arguments, run_names

#: The output formats of ``--format``.
OUTPUT_FORMATS = ("table", "json", "tsv", "trec")


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
) -> None:
    """Evaluate run files against a qrels file and write the results (see ``rankmeter
    evaluate --help`` for what each value means)."""
    from rankmeter.errors import PolicyError
    from rankmeter.evaluation import evaluate as run_evaluation
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.metrics.goals import get_goal
    from rankmeter.report import terminal_safe
    from rankmeter.report.evaluation import (
        judged_warnings,
        render_json,
        render_table,
        render_trec,
        render_tsv,
    )
    from rankmeter.results import EvalResults, check_judged_below

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    judged_below = check_judged_below(judged_below)
    arguments = run_arguments(runs)
    chosen = get_goal(goal) if goal is not None else None
    goal_metrics = [m.metric for m in chosen.metrics] if chosen else []
    measures = parse_metrics([*(metric or []), *goal_metrics] or DEFAULT_METRICS)
    with Steps(total=len(runs) + 1, enabled=False if quiet else None) as steps:
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
        names = run_names(arguments, [r.run for r in evaluated])
        results = EvalResults.named(
            [
                r if r.run == n else dataclasses.replace(r, run=n)
                for r, n in zip(evaluated, names, strict=True)
            ],
            [a.path for a in arguments],
        )
    listed = list(results.results)
    if output_format == "json":
        json = render_json(
            listed, per_query=per_query, single=len(runs) == 1, judged_below=judged_below
        )
        emit(terminal_safe(json, output), output)
    elif output_format in ("tsv", "trec"):
        render = render_tsv if output_format == "tsv" else render_trec
        emit(terminal_safe(render(listed, per_query=per_query), output), output)
        if not quiet:
            # Data formats stay data: the warnings go to stderr, one line per run.
            from rankmeter.report import visible
            from rankmeter.report.judged import warning_lines

            for line in warning_lines(judged_warnings(listed, judged_below)):
                print(visible(line), file=sys.stderr)
    else:
        table = render_table(listed, per_query=per_query, goal=chosen, judged_below=judged_below)
        render_rich(table, output)
