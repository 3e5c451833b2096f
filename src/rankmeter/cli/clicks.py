"""`rankmeter clicks fit|labels`: click models fitted to a search log (position bias per rank,
held-out log-likelihood and perplexity), and clicks into graded TREC qrels."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    Engine,
    EngineOption,
    OutputOption,
    TsUnit,
    TsUnitOption,
    UnorderedOption,
    check_output,
    emit,
    keep_inputs,
)

clicks_app = typer.Typer(
    name="clicks",
    help="Click models on a search log: position bias, and clicks into graded qrels.",
    no_args_is_help=True,
)


class Model(str, Enum):
    pbm = "pbm"
    cascade = "cascade"
    dbn = "dbn"
    ubm = "ubm"


class FitFormat(str, Enum):
    table = "table"
    json = "json"


class Estimator(str, Enum):
    snips = "snips"
    ips = "ips"


LogArgument = Annotated[
    str,
    typer.Argument(
        help="The search log: one row per impression (Parquet, CSV or JSONL; a folder of "
        "Parquet files), with request_id, query_id, doc_id, position, clicked."
    ),
]
ModelOption = Annotated[
    Model,
    typer.Option("--model", help="The click model: pbm, cascade, dbn or ubm."),
]
SeedOption = Annotated[int, typer.Option(help="Seeds EM's starting values and the split.")]


@clicks_app.command("fit", no_args_is_help=True)
def fit_command(
    log: LogArgument,
    model: ModelOption = Model.pbm,
    held_out: Annotated[
        float,
        typer.Option(
            help="Share of requests held out to measure log-likelihood and perplexity "
            "(0: fit on every request, measure nothing)."
        ),
    ] = 0.2,
    max_iter: Annotated[int, typer.Option(help="EM iterations at most.")] = 200,
    tol: Annotated[
        float, typer.Option(help="EM stops when the log-likelihood per request moves less.")
    ] = 1e-7,
    gamma: Annotated[
        float | None,
        typer.Option(help="DBN only: fix the probability of going on (fitted when not given)."),
    ] = None,
    seed: SeedOption = 0,
    engine: EngineOption = Engine.duckdb,
    ts_unit: TsUnitOption = TsUnit.s,
    unordered: UnorderedOption = False,
    output_format: Annotated[
        FitFormat, typer.Option("--format", "-f", help="Output format.")
    ] = FitFormat.table,
    output: OutputOption = None,
) -> None:
    """Fit a click model: position bias per rank, EM's figures, held-out perplexity.

    Propensities are normalised to rank 1. With --held-out (a seeded split by request), the
    held-out requests' log-likelihood and perplexity per rank measure the fit.
    """
    keep_inputs(output, {"LOG": log})
    from rankmeter.online import fit_click_model
    from rankmeter.report import render

    fitted, evaluation = fit_click_model(
        log, model.value, held_out=held_out, max_iter=max_iter, tol=tol, gamma=gamma,
        seed=seed, engine=engine.value, ts_unit=ts_unit.value, ordered=not unordered,
    )  # fmt: skip
    render(fitted, output_format.value, output, held_out=evaluation)


LabelsOutputOption = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Write the qrels here (TREC: query 0 doc grade; atomically); - for stdout.",
        callback=check_output,
    ),
]


@clicks_app.command("labels", no_args_is_help=True)
def labels_command(
    log: LogArgument,
    output: LabelsOutputOption,
    model: ModelOption = Model.pbm,
    estimator: Annotated[
        Estimator,
        typer.Option(help="snips (clicks over expected clicks) or ips (inverse propensity)."),
    ] = Estimator.snips,
    clip: Annotated[
        float, typer.Option(help="Propensities below this count as this (caps the weights).")
    ] = 0.05,
    min_impressions: Annotated[
        int, typer.Option(help="Pairs shown fewer times are left out (unjudged).")
    ] = 20,
    grades: Annotated[
        str,
        typer.Option(
            help="Increasing thresholds of the debiased estimate, one per grade above 0: "
            "0.1,0.3,0.6 makes grades 0-3."
        ),
    ] = "0.1,0.3,0.6",
    seed: Annotated[int, typer.Option(help="Seeds EM's starting values.")] = 0,
    engine: EngineOption = Engine.duckdb,
    ts_unit: TsUnitOption = TsUnit.s,
    unordered: UnorderedOption = False,
) -> None:
    """Clicks into graded TREC qrels, corrected for position bias.

    Each (query, doc) pair's click-through is corrected by the fitted model's propensities
    (IPS or SNIPS, clipped) and cut at --grades.

    Clicks reward what was already ranked high: use click labels alongside judged sets, not
    instead of them. The summary goes to stdout (to stderr with -o -).
    """
    keep_inputs(output, {"LOG": log})
    from rankmeter.io import trec_qrels_text
    from rankmeter.online import click_labels
    from rankmeter.report import clicks as report
    from rankmeter.report import terminal_safe, visible

    labelled = click_labels(
        log, model.value, estimator=estimator.value, clip=clip,
        min_impressions=min_impressions, grades=grades, seed=seed, engine=engine.value,
        ts_unit=ts_unit.value, ordered=not unordered,
    )  # fmt: skip
    qrels = labelled.qrels
    lines = report.labels_lines(
        qrels,
        pairs=labelled.n_pairs,
        sessions=labelled.n_sessions,
        model=model.value,
        min_impressions=min_impressions,
    )
    summary = "".join(visible(line) + "\n" for line in lines)
    # The qrels are data: byte-exact in a file or a pipe, their ids escaped at a terminal.
    emit(terminal_safe(trec_qrels_text(qrels), output), output)
    if output == "-":
        sys.stderr.write(summary)
    else:
        emit(summary, None)


def register(app: typer.Typer) -> None:
    app.add_typer(clicks_app)
