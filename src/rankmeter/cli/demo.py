"""`rankmeter demo [offline|online]`: evaluate the shipped recruiting systems and show where they
fail; or, online, analyse a simulated A/B test of the same two systems."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import check_optional_output, emit

DEMO_METRICS = ("nDCG@10", "P@10", "R@100", "RR", "AP")


DEFAULT_REPORT = "rankmeter-demo-report.html"
ONLINE_REPORT = "rankmeter-demo-online-report.html"
#: The online demo's treatment makes new users click this much as often as under the control.
NEW_USERS_FACTOR = 0.6
#: The online metrics the demo shows (all of them, with segments, do not fit a screen).
DEMO_ONLINE_METRICS = ("ctr", "abandonment", "success")


class Part(str, Enum):
    offline = "offline"
    online = "online"


def demo(
    part: Annotated[
        Part,
        typer.Argument(
            help="offline (default): evaluate and compare the two systems on judged queries; "
            "online: a simulated A/B test of the same systems (needs the [online] extra)."
        ),
    ] = Part.offline,
    worst: Annotated[
        int, typer.Option("--worst", "-n", min=1, help="How many of the worst queries to show.")
    ] = 5,
    report: Annotated[
        str,
        typer.Option(
            "--report",
            help="Where to write the HTML report ('' for none; online: "
            f"{ONLINE_REPORT} unless given).",
            callback=check_optional_output,
        ),
    ] = DEFAULT_REPORT,
    users: Annotated[
        int, typer.Option(min=100, help="Online: users in the simulated A/B test.")
    ] = 4000,
    seed: Annotated[int, typer.Option(help="Online: the simulation's seed.")] = 1,
) -> None:
    """Evaluate and compare two systems on a shipped collection; write an HTML report.

    Shows where they fail and whether the difference is real. Synthetic recruiting data: job
    openings, candidate profiles, graded labels. No network. `rankmeter demo online` runs a
    simulated A/B test of the same two systems: the log, the A/B analysis with its segments,
    and whether it confirms the offline comparison.
    """
    if part is Part.online:
        _online(report if report != DEFAULT_REPORT else ONLINE_REPORT, users, seed)
        return
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


def _online(report: str, users: int, seed: int) -> None:
    from rankmeter.online import recruiting_experiment
    from rankmeter.report.demo import render_online_demo

    run = recruiting_experiment(
        users=users, seed=seed, new_users_factor=NEW_USERS_FACTOR, metrics=DEMO_ONLINE_METRICS
    )
    if report:
        from rankmeter.report.ab import render_html

        emit(render_html(run.result), report)
    text = render_online_demo(
        run.collection, run.check, run.result, run.side_by_side, new_users_factor=NEW_USERS_FACTOR
    )
    if report:
        text += f"The A/B analysis as an HTML page: {report}\n"
    emit(text, None)


def register(app: typer.Typer) -> None:
    app.command()(demo)
