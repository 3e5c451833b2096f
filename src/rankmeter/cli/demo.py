"""`rankmeter demo`: evaluate the shipped recruiting systems and show where they fail."""

from __future__ import annotations

from typing import Annotated

import typer

from rankmeter.cli._common import check_optional_output, emit

DEMO_METRICS = ("nDCG@10", "P@10", "R@100", "RR", "AP")


DEFAULT_REPORT = "rankmeter-demo-report.html"


def demo(
    worst: Annotated[
        int, typer.Option("--worst", "-n", min=1, help="How many of the worst queries to show.")
    ] = 5,
    report: Annotated[
        str,
        typer.Option(
            "--report",
            help="Where to write the HTML comparison report ('' for none).",
            callback=check_optional_output,
        ),
    ] = DEFAULT_REPORT,
) -> None:
    """Evaluate and compare two systems on a shipped collection; write an HTML report.

    Shows where they fail and whether the difference is real. Synthetic recruiting data: job
    openings, candidate profiles, graded labels. No network.
    """
    from rankmeter.comparison import compare
    from rankmeter.datasets import recruiting
    from rankmeter.evaluation import evaluate
    from rankmeter.report.demo import render_demo

    collection = recruiting()
    queries = collection.load_queries()
    qrels = collection.load_qrels()
    runs = collection.load_runs()
    results = evaluate(qrels, runs, DEMO_METRICS)
    comparison = compare(qrels, runs, DEMO_METRICS, queries=queries, worst=worst, seed=0)
    if report:
        from rankmeter.report.html import render_html

        # The demo narrates unjudged profiles itself; the Judged@k warning is evaluate's and
        # compare's (issue 11, item 5).
        emit(render_html(comparison, judged_below=0), report)

    text = render_demo(collection, results, comparison, queries=queries, worst=worst, report=report)
    emit(text, None)


def register(app: typer.Typer) -> None:
    app.command()(demo)
