"""Render click-model fits (:func:`rankmeter.clicks.fit`, :func:`rankmeter.clicks.evaluate_model`)
and click labels (:func:`rankmeter.clicks.labels`): a terminal table of the propensities per
rank with the fit's figures under it, or strict JSON; the labels' summary in sentences."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankmeter.report._json import json_text
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown

if TYPE_CHECKING:
    from rankmeter.clicks import ClickModel, ModelEvaluation
    from rankmeter.data.qrels import Qrels

__all__ = ["fit_dict", "fit_lines", "labels_lines", "render_fit_json", "render_fit_table"]


def fit_dict(model: ClickModel, held_out: ModelEvaluation | None) -> dict[str, Any]:
    """The fit's figures (``model.to_dict()``) and the held-out evaluation's (or None)."""
    return {"fit": model.to_dict(), "held_out": None if held_out is None else held_out.to_dict()}


@renders("rankmeter.clicks.ClickModel", "json")
def _fit_json(model: ClickModel, *, held_out: ModelEvaluation | None = None) -> str:
    return render_fit_json(model, held_out)


def render_fit_json(model: ClickModel, held_out: ModelEvaluation | None) -> str:
    """:func:`fit_dict` as strict JSON (a number that cannot be computed is ``null``)."""
    return json_text(fit_dict(model, held_out))


def _count(n: int) -> str:
    return f"{n:,}"


def fit_lines(model: ClickModel, held_out: ModelEvaluation | None) -> list[str]:
    """What was fitted and how well, in sentences.

    >>> import pyarrow as pa
    >>> from rankmeter.clicks import fit
    >>> log = pa.table({"request_id": ["r1", "r2"], "query_id": ["q", "q"],
    ...     "doc_id": ["a", "a"], "position": [1, 1], "clicked": [True, False]})
    >>> for line in fit_lines(fit(log, "cascade"), None):
    ...     print(line)
    cascade fitted to 2 requests (1 (query, doc) pairs, 2 impressions, 1 clicks)
    closed form; log-likelihood per request -0.6931 (training)
    """
    figures = model.to_dict()
    how = (
        "closed form"
        if model.model == "cascade"
        else f"EM {'converged' if model.converged else 'stopped without converging'} after "
        f"{model.iterations} iterations"
    )
    lines = [
        f"{model.model} fitted to {_count(model.sessions)} requests "
        f"({_count(figures['pairs'])} (query, doc) pairs, {_count(figures['impressions'])} "
        f"impressions, {_count(figures['clicks'])} clicks)",
        f"{how}; log-likelihood per request {model.log_likelihood:.4f} (training)",
    ]
    if model.gamma is not None:
        lines.append(f"gamma (going on after a result that did not satisfy): {model.gamma:.4f}")
    if held_out is not None:
        unseen = (
            f"; {_count(held_out.unseen)} impressions of pairs not in training"
            if held_out.unseen
            else ""
        )
        lines.append(
            f"held out: {_count(held_out.sessions)} requests, log-likelihood per request "
            f"{held_out.log_likelihood:.4f}, perplexity {held_out.perplexity:.4f}{unseen}"
        )
    return lines


@renders("rankmeter.clicks.ClickModel", "table")
def _fit_table(model: ClickModel, *, held_out: ModelEvaluation | None = None) -> Any:
    return render_fit_table(model, held_out)


def render_fit_table(model: ClickModel, held_out: ModelEvaluation | None) -> Any:
    """One row per rank: the propensity (normalised to rank 1) and, with a held-out part, the
    perplexity at that rank; the fit's sentences under it."""
    from rich.console import Group
    from rich.text import Text

    table = FittedTable(title=shown(f"{model.model}: position bias"), title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("propensity", justify="right")
    if held_out is not None:
        table.add_column("perplexity", justify="right")
    for rank, propensity in enumerate(model.propensities):
        cells = [str(rank + 1), f"{propensity:.4f}"]
        if held_out is not None:
            values = held_out.perplexity_by_rank
            cells.append(f"{values[rank]:.4f}" if rank < len(values) else "–")
        table.add_row(*cells)
    return Group(table, *(Text(line, style="dim") for line in fit_lines(model, held_out)))


def labels_lines(
    qrels: Qrels, *, pairs: int, sessions: int, model: str, min_impressions: int
) -> list[str]:
    """The click labels in sentences: how many pairs got a grade, how many were left out, and
    how many of each grade.

    >>> from rankmeter import Qrels
    >>> qrels = Qrels.from_dict({"q": {"a": 2, "b": 0, "c": 0}})
    >>> for line in labels_lines(qrels, pairs=5, sessions=40, model="pbm", min_impressions=20):
    ...     print(line)
    3 (query, doc) pairs graded from the clicks of 40 requests (pbm propensities)
    2 pairs shown fewer than 20 times left out
    grade 0: 2, grade 2: 1
    """
    import numpy as np

    grades, counts = np.unique(qrels.grades, return_counts=True)
    left_out = pairs - len(qrels)
    return [
        f"{_count(len(qrels))} (query, doc) pairs graded from the clicks of "
        f"{_count(sessions)} requests ({model} propensities)",
        f"{_count(left_out)} pairs shown fewer than {min_impressions} times left out",
        ", ".join(f"grade {int(g)}: {_count(int(n))}" for g, n in zip(grades, counts, strict=True)),
    ]
