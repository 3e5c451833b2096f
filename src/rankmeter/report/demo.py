"""The narrated output of ``rankmeter demo``: each system's means, the worst openings, the
misses, whether the difference is real, and where to go next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter._escape import visible
from rankmeter.report._rich import shown
from rankmeter.report._text import pvalue, signed
from rankmeter.report.comparison import interval, legend
from rankmeter.report.evaluation import render_table

if TYPE_CHECKING:
    from rankmeter.comparison import Comparison
    from rankmeter.datasets import Collection
    from rankmeter.online import ABResult, LogCheck, OnlineOffline
    from rankmeter.results import EvalResults

__all__ = ["render_demo", "render_online_demo"]


def render_demo(
    collection: Collection,
    results: EvalResults,
    comparison: Comparison,
    *,
    queries: dict[str, str],
    worst: int,
    report: str,
) -> str:
    """The demo's text for a terminal: ``queries`` are the openings' texts, ``worst`` how
    many of the worst openings to list, ``report`` where the HTML report was written ('' for
    none)."""
    from rich.console import Console

    console = Console(soft_wrap=False, highlight=False)
    # Rendered whole, then written once by the caller: a closed pipe (`rankmeter demo | head`)
    # is then handled like every other command's output.
    with console.capture() as captured:
        _print_report(console, collection, results, queries, worst)
        console.print()
        _print_comparison(console, comparison, report)
        console.print()
        _print_next(console, collection)
    return str(captured.get())


def _print_report(
    console: Any,
    collection: Collection,
    results: EvalResults,
    queries: dict[str, str],
    worst: int,
) -> None:
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
    # (The demo says in words that unjudged profiles count as not relevant.)
    console.print(render_table(list(results.results), per_query=False, judged_below=0))
    console.print()
    _print_worst(console, results, queries, worst)
    console.print()
    _print_misses(console, results, queries)


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
        table.add_row(shown(query_id), shown(queries.get(query_id, "")), *cells)
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
        console.print(visible(line), markup=False, soft_wrap=True)


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


def _print_comparison(console: Any, comparison: Comparison, report: str) -> None:
    from rich import box
    from rich.table import Table

    from rankmeter.stats import correction_label

    base = comparison.baseline
    others = ", ".join(comparison.systems[1:])
    console.print(
        f"[bold]4. Did {others} beat {base}?[/bold] Paired over the same {comparison.n_queries} "
        "openings"
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    one = len(comparison.systems) == 2
    system_header = comparison.systems[1] if one else "system"
    corrected = f"p ({correction_label(comparison.settings.correction, short=True)})"
    for i, h in enumerate(["metric", base, system_header, "Δ [95% CI]", corrected, "W/T/L"]):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for d in comparison.differences:
        table.add_row(
            d.metric,
            f"{d.baseline_mean:.4f}",
            f"{d.system_mean:.4f}" if one else f"{d.system} {d.system_mean:.4f}",
            f"{signed(d.difference)} {interval(d.low, d.high, 3, sign=True)}",
            pvalue(d.p_corrected) + ("*" if d.significant else ""),
            f"{d.wins}/{d.ties}/{d.losses}",
            style="bold" if d.significant else None,
        )
    console.print(table)
    _say(console, comparison.settings.describe() + ".", legend(comparison))
    significant = [d for d in comparison.differences if d.significant]
    if significant:
        which = ", ".join(f"{d.metric} {d.difference:+.4f}" for d in significant)
        _say(console, f"Significant after the correction: {which}. The rest could be chance.")
    else:
        _say(console, "No difference is significant after the correction: it could be chance.")
    if report:
        _say(console, f"HTML report with plots and the worst queries: {report}")


def _print_next(console: Any, collection: Collection) -> None:
    import shlex

    qrels = shlex.quote(str(collection.qrels))
    runs = " ".join(shlex.quote(str(path)) for path in collection.runs.values())
    first = shlex.quote(str(next(iter(collection.runs.values()))))
    console.print("[bold]5. Where to go next[/bold]")
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
        "Compare them yourself (Markdown, LaTeX, JSON or HTML):",
        f"  rankmeter compare {qrels} {runs} -m nDCG@10 -m R@100 --format markdown",
        "Why one opening scored what it did, rank by rank:",
        f"  rankmeter explain {qrels} {first} --query q13 -m nDCG@10",
        "Every metric with its formula, or the ones for a goal:",
        "  rankmeter metrics",
        "  rankmeter metrics --goal top-results",
        "From Python:",
        "  from rankmeter import datasets, evaluate",
        "  demo = datasets.recruiting()",
        '  evaluate(demo.load_qrels(), demo.load_runs(), ["nDCG@10"])',
    ]
    _say(console, *lines)


def render_online_demo(
    collection: Collection,
    check: LogCheck,
    ab_result: ABResult,
    side_by_side: OnlineOffline,
    *,
    new_users_factor: float,
) -> str:
    """The text of ``rankmeter demo online``: the simulated log, the A/B analysis with its
    segments, and offline against online, each with the command that gives it on real data."""
    from rich.console import Console

    from rankmeter.report.ab import render_table as ab_table
    from rankmeter.report.logs import render_table as log_table
    from rankmeter.report.online_offline import render_table as side_table

    control, treatment = ab_result.control, ab_result.treatment
    console = Console(soft_wrap=False, highlight=False)
    with console.capture() as captured:
        console.print(f"[bold]rankmeter demo online[/bold]: the {collection.name} collection")
        _say(
            console,
            f"No real search log ships with rankmeter, so this one is simulated from the "
            f"{collection.name}",
            f"collection: its two rankers are the variants, {control} (the control) and "
            f"{treatment},",
            "users click with a position bias on documents as attractive as their labels, and "
            f"the {treatment} ranker",
            f"was set to make new users click {1 - new_users_factor:.0%} less "
            "(rankmeter logs simulate makes such a log from any qrels and runs).",
        )
        console.print()
        console.print("[bold]1. The log[/bold] (rankmeter logs check LOG)")
        console.print(log_table(check))
        console.print()
        console.print(
            "[bold]2. Did it win online, for whom?[/bold] "
            "(rankmeter ab LOG --segments is_new_user --pre PRE_LOG)"
        )
        console.print(ab_table(ab_result))
        worse = ab_result.worse_segments
        if worse:
            _say(
                console,
                "Flagged: "
                + "; ".join(f"{s.column}={s.value} ({s.effect.metric})" for s in worse)
                + " got significantly worse, after the correction across segments.",
            )
        console.print()
        console.print(
            "[bold]3. Did the A/B test confirm the judged queries?[/bold] "
            "(rankmeter online-vs-offline QRELS CONTROL_RUN TREATMENT_RUN LOG)"
        )
        console.print(side_table(side_by_side))
        console.print()
        console.print("[bold]Next[/bold]")
        _say(
            console,
            "  On your own log: rankmeter logs check LOG, then rankmeter ab LOG --segments ...",
            "  Which ranker users prefer, with fewer users: rankmeter interleave LOG "
            "(docs/interleaving.md)",
            "  Clicks into labels despite position bias: rankmeter clicks fit LOG (docs/clicks.md)",
        )
    return str(captured.get())
