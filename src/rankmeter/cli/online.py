"""`rankmeter online-vs-offline QRELS CONTROL_RUN TREATMENT_RUN LOG`: the offline comparison
of two rankers beside their A/B test, and whether the two agree in sign and significance."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    Engine,
    EngineOption,
    ExperimentOption,
    MetricOption,
    OutputOption,
    TsUnit,
    TsUnitOption,
    UnorderedOption,
    keep_inputs,
)
from rankmeter.online import AB_METRICS


class OnlineOfflineFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def online_vs_offline(
    qrels: Annotated[str, typer.Argument(help="The judgments (TREC qrels or a table).")],
    control_run: Annotated[str, typer.Argument(help="The control variant's run.")],
    treatment_run: Annotated[str, typer.Argument(help="The treatment variant's run.")],
    log: Annotated[
        str,
        typer.Argument(help="The A/B log: one row per impression (Parquet, CSV, JSONL)."),
    ],
    metric: MetricOption = None,
    online_metric: Annotated[
        list[str] | None,
        typer.Option(
            "--online-metric",
            help=f"Online metric, repeatable: {', '.join(AB_METRICS)} (default: the first four).",
        ),
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(help="The log's control variant (default: 'control', else the first)."),
    ] = None,
    pre: Annotated[
        str | None, typer.Option(help="The pre-period log: CUPED on the online side.")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level, both sides.")] = 0.05,
    correction: Annotated[
        str, typer.Option(help="Per side, across its metrics: holm, bonferroni, bh, none.")
    ] = "holm",
    test: Annotated[
        str, typer.Option(help="Offline paired test: randomization, t, bootstrap, ...")
    ] = "randomization",
    resamples: Annotated[int, typer.Option(help="Offline randomizations/resamples.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed of the offline test.")] = 0,
    experiment: ExperimentOption = None,
    engine: EngineOption = Engine.duckdb,
    ts_unit: TsUnitOption = TsUnit.s,
    unordered: UnorderedOption = False,
    output_format: Annotated[
        OnlineOfflineFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OnlineOfflineFormat.table,
    output: OutputOption = None,
) -> None:
    """Did the A/B test confirm the offline winner? The offline difference of two rankers on
    the judged queries beside their online differences in the A/B log, and for each online
    metric whether it agrees with the first offline metric (-m; default nDCG@10) in sign and
    significance."""
    keep_inputs(
        output,
        {
            "QRELS": qrels,
            "CONTROL_RUN": control_run,
            "TREATMENT_RUN": treatment_run,
            "LOG": log,
            "--pre": pre,
        },
    )
    from rankmeter.online import DEFAULT_ONLINE_METRICS
    from rankmeter.online import online_vs_offline as side_by_side
    from rankmeter.report import render

    result = side_by_side(
        qrels,
        control_run,
        treatment_run,
        log,
        metrics=metric or ("nDCG@10",),
        online_metrics=online_metric or DEFAULT_ONLINE_METRICS,
        control=control,
        alpha=alpha,
        correction=correction,
        test=test,
        resamples=resamples,
        seed=seed,
        pre=pre,
        experiment=experiment,
        engine=engine.value,
        ts_unit=ts_unit.value,
        ordered=not unordered,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command("online-vs-offline", no_args_is_help=True)(online_vs_offline)
