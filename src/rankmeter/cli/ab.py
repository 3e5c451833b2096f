"""`rankmeter ab LOG`: the A/B analysis of a search log: per-user metrics computed in the
engine, tea-tasting's statistics, the sample-ratio check first, segments that got worse."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    Engine,
    EngineOption,
    ExperimentOption,
    OutputOption,
    TsUnit,
    TsUnitOption,
    UnorderedOption,
    keep_inputs,
)
from rankmeter.online import AB_METRICS


class ABFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


def ab(
    log: Annotated[
        str,
        typer.Argument(
            help="The log: one row per impression (Parquet, CSV, JSONL, or a folder of "
            "Parquet files)."
        ),
    ],
    experiment: ExperimentOption = None,
    control: Annotated[
        str | None,
        typer.Option(
            help="The control variant (default: 'control' if present, else the first name)."
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help=f"Metric, repeatable: {', '.join(AB_METRICS)} (default: all).",
        ),
    ] = None,
    segments: Annotated[
        str | None,
        typer.Option(
            help="Segment columns, comma-separated (e.g. device,is_new_user): every metric per "
            "segment value, corrected across them; significantly worse ones are flagged."
        ),
    ] = None,
    pre: Annotated[
        str | None,
        typer.Option(help="The pre-period log of the same users: CUPED on every metric."),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    correction: Annotated[
        str,
        typer.Option(help="Across metrics and segments: holm, bonferroni, bh, none."),
    ] = "holm",
    power: Annotated[
        float, typer.Option(help="Power at which the minimum detectable effect is given.")
    ] = 0.8,
    success_dwell: Annotated[
        float, typer.Option(help="Seconds of dwell that make a click a success.")
    ] = 30.0,
    reformulation_window: Annotated[
        float,
        typer.Option(help="Seconds within which another query counts as a reformulation."),
    ] = 60.0,
    expected_ratio: Annotated[
        float,
        typer.Option(
            help="Treatment users / control users that the assignment intended (0.4286 for a "
            "70/30 split): the sample-ratio check tests against it."
        ),
    ] = 1.0,
    srm_alpha: Annotated[
        float, typer.Option(help="The sample-ratio check fails below this p-value.")
    ] = 0.001,
    engine: EngineOption = Engine.duckdb,
    ts_unit: TsUnitOption = TsUnit.s,
    unordered: UnorderedOption = False,
    output_format: Annotated[
        ABFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ABFormat.table,
    output: OutputOption = None,
) -> None:
    """Analyse an A/B test from its search log: for each metric both means, the absolute and
    relative difference with intervals, the p-value (delta method, tea-tasting), the minimum
    detectable effect; the sample-ratio check first; CUPED with --pre; per-segment effects."""
    keep_inputs(output, {"LOG": log, "--segments": segments, "--pre": pre})
    from rankmeter.online import ab as analyse
    from rankmeter.report import render

    result = analyse(
        log,
        experiment=experiment,
        control=control,
        metrics=metric or None,
        segments=segments.split(",") if segments else None,
        pre=pre,
        alpha=alpha,
        correction=correction,
        power=power,
        success_dwell=success_dwell,
        reformulation_window=reformulation_window,
        srm_alpha=srm_alpha,
        expected_ratio=expected_ratio,
        engine=engine.value,
        ts_unit=ts_unit.value,
        ordered=not unordered,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command("ab", no_args_is_help=True)(ab)
