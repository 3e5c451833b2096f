"""Render a retriever's evaluation (:class:`rankmeter.vector.retrieval.RetrievalResult`, from
``rankmeter bm25`` and ``rankmeter embed-eval``): evaluate's table with what ran on what and
which judged queries got no results under it, or JSON with the same."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._registry import Rendered, renderer, renders
from rankmeter.report._rich import shown

if TYPE_CHECKING:
    from rankmeter.vector.benchmark import BenchmarkSettings, EmbedBenchmark
    from rankmeter.vector.fusion import FusedRun
    from rankmeter.vector.retrieval import RetrievalResult

__all__ = [
    "fused_line",
    "query_notes",
    "render_benchmark_json",
    "render_benchmark_table",
    "render_fused",
    "render_json",
    "render_table",
    "shallow_line",
]

#: Query ids listed by name in a note; more are counted.
LISTED = 10


@renders("rankmeter.vector.RetrievalResult", "json")
def render_json(result: RetrievalResult, *, per_query: bool = False) -> str:
    """``RetrievalResult.to_dict``: run, model, collection, query count and rule, the
    unanswered queries, the metrics (what ``evaluate --include-missing`` gives)."""
    return json_text(result.to_dict(per_query=per_query))


def fused_line(name: str, *, method: str, runs: int, queries: int, results: int, path: str) -> str:
    """What ``rankmeter fuse -o FILE`` wrote, in one line for stderr (the caller shows it with
    :func:`rankmeter.report.visible`).

    >>> fused_line("rrf(a+b)", method="rrf", runs=2, queries=3, results=1200, path="h.run")
    "wrote the fused run 'rrf(a+b)' to h.run: 3 queries, 1,200 results (rrf of 2 runs)"
    """
    query_noun = "query" if queries == 1 else "queries"
    result_noun = "result" if results == 1 else "results"
    return (
        f"wrote the fused run '{name}' to {path}: {queries:,} {query_noun}, {results:,} "
        f"{result_noun} ({method} of {runs} runs)"
    )


@renders("rankmeter.vector.FusedRun", "trec")
def render_fused(result: FusedRun, *, path: str | None = None) -> Rendered:
    """The fused run as TREC text (``rankmeter fuse``); on stderr, the warning on runs of
    different depths before it and, when it goes to the file ``path``, the line saying what
    was written there after it."""
    from rankmeter.io import trec_run_text
    from rankmeter.report.checking import fusion_depth_line

    gap = result.depth_gap
    before: tuple[str, ...] = () if gap is None else (f"rankmeter: {fusion_depth_line(gap)}",)
    after: tuple[str, ...] = ()
    if path is not None and path != "-":
        run = result.run
        line = fused_line(
            result.tag,  # the tag written, not the name given ("a b" -> "a_b")
            method=result.method, runs=result.runs, queries=run.n_queries, results=len(run),
            path=path,
        )  # fmt: skip
        after = (f"rankmeter: {line}",)
    return Rendered(trec_run_text(result.run), before, after)


def _benchmark_output(bench: EmbedBenchmark) -> Any:
    """What ``rankmeter embed-eval`` shows of a benchmark: one model on one collection, its
    result; else the leaderboard of every result."""
    return bench.results[0] if bench.single else bench.leaderboard()


@renders("rankmeter.vector.EmbedBenchmark", "table")
def render_benchmark_table(bench: EmbedBenchmark, *, per_query: bool = False) -> Any:
    """The one result's table (:func:`render_table`), or the leaderboard's table."""
    shown = _benchmark_output(bench)
    options = {"per_query": per_query} if bench.single else {}
    return renderer(type(shown), "table")(shown, **options)


@renders("rankmeter.vector.EmbedBenchmark", "json")
def render_benchmark_json(bench: EmbedBenchmark, *, per_query: bool = False) -> Any:
    """The one result's JSON (:func:`render_json`), or the leaderboard's JSON."""
    shown = _benchmark_output(bench)
    options = {"per_query": per_query} if bench.single else {}
    return renderer(type(shown), "json")(shown, **options)


def shallow_line(settings: BenchmarkSettings) -> str | None:
    """The warning of ``rankmeter embed-eval`` on metrics that read deeper than ``-k`` (not
    escaped; None when none does).

    >>> from rankmeter.vector.benchmark import BenchmarkSettings
    >>> print(shallow_line(BenchmarkSettings(metrics=("nDCG@10", "R@100"), k=50)))
    warning: -k 50 retrieves fewer results per query than R@100 read: they measure the top 50 only (give -k 100 to measure them whole)
    """
    shallow = settings.shallow()
    if not shallow:
        return None
    return (
        f"warning: -k {settings.k} retrieves fewer results per query than "
        f"{', '.join(shallow)} read: they measure the top {settings.k} only (give "
        f"-k {max(m.cutoff or 0 for m in settings.measures)} to measure them whole)"
    )


def _ids(ids: tuple[str, ...]) -> str:
    named = ", ".join(repr(q) for q in ids[:LISTED])
    more = len(ids) - LISTED
    return named + (f" and {more} more" if more > 0 else "")


def query_notes(unanswered: tuple[str, ...], empty: tuple[str, ...], n_queries: int) -> list[str]:
    """The warning lines on judged queries without results (none: no line)."""
    notes = []
    if empty:
        noun = "query has" if len(empty) == 1 else "queries have"
        notes.append(
            f"warning: {len(empty)} judged {noun} an empty text, not embedded: {_ids(empty)}"
        )
    if unanswered:
        notes.append(
            f"warning: {len(unanswered)} of {n_queries} judged queries got no results: each "
            f"scores 0 in the averages: {_ids(unanswered)}"
        )
    return notes


@renders("rankmeter.vector.RetrievalResult", "table")
def render_table(result: RetrievalResult, *, per_query: bool = False) -> Any:
    """Evaluate's table (``queries`` counts every judged query), a line saying what retrieved
    on which collection and how queries count, and a warning naming the unanswered ones."""
    from rich.console import Group

    from rankmeter.report.evaluation import render_table as evaluation_table
    from rankmeter.vector.retrieval import QUERIES_RULE

    parts = [evaluation_table([result], per_query=per_query, judged_below=0)]
    parts.append(shown(f"{result.model} on {result.collection}; {QUERIES_RULE}", style="dim"))
    parts += [shown(note, style="dim") for note in result.notes]
    notes = query_notes(result.unanswered, result.empty_queries, result.n_queries)
    parts += [shown(note, style="yellow") for note in notes]
    return Group(*parts)
