"""`rankmeter demo`: evaluate the shipped recruiting systems and show where they fail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rankmeter.cli._common import emit

if TYPE_CHECKING:
    from rankmeter.datasets import Collection
    from rankmeter.results import EvalResults

DEMO_METRICS = ("nDCG@10", "P@10", "R@100", "RR", "AP")


def demo(
    worst: Annotated[
        int, typer.Option("--worst", "-n", min=1, help="How many of the worst queries to show.")
    ] = 5,
) -> None:
    """Evaluate two search systems on a small shipped collection and show where they fail.

    Synthetic recruiting data: job openings, candidate profiles, graded labels. No network.
    """
    from rich.console import Console

    from rankmeter.datasets import recruiting
    from rankmeter.evaluation import evaluate

    collection = recruiting()
    queries = collection.load_queries()
    qrels = collection.load_qrels()
    results = evaluate(qrels, collection.load_runs(), DEMO_METRICS)

    console = Console(soft_wrap=False, highlight=False)
    # Rendered whole, then written once: a closed pipe (`rankmeter demo | head`) is then
    # handled like every other command's output.
    with console.capture() as captured:
        _print_report(console, collection, results, queries, worst)
    emit(captured.get(), None)


def _print_report(
    console: Any,
    collection: Collection,
    results: EvalResults,
    queries: dict[str, str],
    worst: int,
) -> None:
    from rankmeter.report.evaluation import render_table

    console.print(f"[bold]rankmeter demo[/bold]: the {collection.name} collection")
    _say(
        console,
        f"{collection.description.capitalize()}: {len(queries)} job openings are the queries,",
        f"{len(collection.load_docs())} candidate profiles the documents, labels are graded 0-3",
        "(3 strong match, 2 good, 1 partial, 0 not a fit). Relevant means grade >= 1;",
        f"profiles nobody judged count as not relevant. Systems: {', '.join(results)}.",
    )
    console.print()
    console.print("[bold]1. Each system, averaged over the openings[/bold]")
    console.print(render_table(list(results.results), per_query=False))
    console.print()
    _print_worst(console, results, queries, worst)
    console.print()
    _print_misses(console, results, queries)
    console.print()
    _print_next(console, collection)


def _print_worst(console: Any, results: EvalResults, queries: dict[str, str], n: int) -> None:
    from rich.table import Table

    key = "nDCG@10"
    best = max(results.results, key=lambda r: r.metrics[key])
    values = {r.run: r.per_query.to_dict() for r in results.results}
    # Lowest first; ties in query id order so the listing never changes between runs.
    order = sorted(values[best.run], key=lambda q: (values[best.run][q][key], q))
    console.print(
        f"[bold]2. The {min(n, len(order))} worst openings for the best system, "
        f"{best.run}[/bold] (lowest {key})"
    )
    table = Table(title_justify="left")
    table.add_column("query", style="bold", no_wrap=True)
    table.add_column("opening")
    for r in results.results:
        table.add_column(f"{r.run}\n{key}", justify="right")
    for query_id in order[:n]:
        cells = [_cell(values[r.run].get(query_id, {}).get(key)) for r in results.results]
        table.add_row(query_id, queries.get(query_id, ""), *cells)
    console.print(table)
    for other in results.results:
        if other.run == best.run:
            continue
        losses = [
            q
            for q in order
            if q in values[other.run] and values[other.run][q][key] > values[best.run][q][key]
        ]
        if losses:
            _say(
                console,
                f"{best.run} is better on average, yet {other.run} wins on "
                f"{len(losses)} of {len(order)} openings: {', '.join(sorted(losses))}.",
            )


def _say(console: Any, *lines: str) -> None:
    # Plain lines are never wrapped, so commands and paths can be copied whole.
    for line in lines:
        console.print(line, markup=False, soft_wrap=True)


def _cell(value: float | int | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _print_misses(console: Any, results: EvalResults, queries: dict[str, str]) -> None:
    console.print("[bold]3. Openings with no relevant profile in the top 10[/bold] (P@10 = 0)")
    for r in results.results:
        misses = [q for q, row in r.per_query.to_dict().items() if row["P@10"] == 0]
        if not misses:
            _say(console, f"  {r.run}: none")
            continue
        _say(console, f"  {r.run}: {len(misses)}")
        _say(console, *(f"    {q}  {queries.get(q, '')}" for q in misses))


def _print_next(console: Any, collection: Collection) -> None:
    import shlex

    qrels = shlex.quote(str(collection.qrels))
    runs = " ".join(shlex.quote(str(path)) for path in collection.runs.values())
    first = shlex.quote(str(next(iter(collection.runs.values()))))
    console.print("[bold]4. Where to go next[/bold]")
    lines = [
        "The shipped files (plain TREC format; see README.md next to them):",
        f"  qrels    {qrels}",
        *(f"  run      {shlex.quote(str(path))}" for path in collection.runs.values()),
        f"  queries  {shlex.quote(str(collection.queries))}",
        f"  profiles {shlex.quote(str(collection.docs))}",
        "Every opening's values for one system:",
        f"  rankmeter evaluate {qrels} {first} -m nDCG@10 --per-query",
        "Both systems as JSON, with graded relevance (grade >= 2 counts):",
        f"  rankmeter evaluate {qrels} {runs} --rel 2 --format json",
        "Every metric with its formula:",
        "  rankmeter metrics",
        "From Python:",
        "  from rankmeter import datasets, evaluate",
        "  demo = datasets.recruiting()",
        '  evaluate(demo.load_qrels(), demo.load_runs(), ["nDCG@10"])',
    ]
    _say(console, *lines)


def register(app: typer.Typer) -> None:
    app.command()(demo)
