"""Render the rating app (rankmeter.judgments.app): its pages, the raters' progress, and the
labels it exports (TREC qrels, the long CSV table ``rankmeter agree`` reads).

The pages come from one template (``templates/judge.html.j2``) with autoescape and the one
HTML escaper: queries, documents and guidelines are untrusted text, shown as text. The
guidelines (Markdown) are shown line by line as written, not rendered: a guidelines file
cannot put markup on a rater's page.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import io
from collections.abc import Iterable, Sequence
from typing import Any

from rankmeter._escape import spreadsheet_cell, visible
from rankmeter.judgments.app import DoneView, ItemView
from rankmeter.judgments.app.export import Resolved
from rankmeter.judgments.app.store import Label, Progress
from rankmeter.judgments.model_labels import ModelLabels
from rankmeter.report._html import render
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown

__all__ = [
    "RaterPages",
    "labels_csv",
    "labels_parquet",
    "left_out_line",
    "model_labels_lines",
    "model_labels_trec",
    "pages",
    "qrels_text",
    "render_status",
    "write_labels",
]


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n") if text else []


def _static(name: str) -> str:
    files = importlib.resources.files("rankmeter.report").joinpath("templates", name)
    return files.read_text(encoding="utf-8")


class RaterPages:
    """The pages of the rating app (:class:`rankmeter.judgments.app.Pages`)."""

    def item(self, view: ItemView) -> str:
        found = view.assignment
        current = found.grade
        labelled = "can't judge" if found.cant_judge else "" if current is None else str(current)
        next_url = view.base if found.judged else None
        return render(
            "judge.html.j2",
            title=f"{view.rater}: {view.position} of {view.total}",
            rater=view.rater,
            judged=view.judged,
            total=view.total,
            guidelines=_lines(view.guidelines),
            guidelines_open=view.judged == 0,
            item=found.item,
            doc_lines=_lines(found.item.doc_text),
            position=view.position,
            action=view.action,
            version=view.version,
            grades=view.grades,
            current=current,
            cant_judge=found.cant_judge,
            cant_judge_key=view.cant_judge_key,
            labelled=labelled,
            back=view.back,
            next_url=next_url,
            message="",
            status="",
        )

    def done(self, view: DoneView) -> str:
        return render(
            "judge.html.j2",
            title=f"{view.rater}: done",
            rater=view.rater,
            judged=view.judged,
            total=view.total,
            guidelines=_lines(view.guidelines),
            guidelines_open=False,
            item=None,
            back=view.back,
            next_url=None,
            message="",
            status="",
        )

    def error(self, status: int, message: str) -> str:
        return render(
            "judge.html.j2",
            title=str(status),
            rater="",
            guidelines=[],
            item=None,
            back=None,
            next_url=None,
            message=message,
            status=status,
        )

    def stylesheet(self) -> str:
        return _static("judge.css")

    def script(self) -> str:
        return _static("judge.js")


@functools.cache
def pages() -> RaterPages:
    """The pages :func:`rankmeter.judgments.app.create_app` serves."""
    return RaterPages()


def render_status(progress: Sequence[Progress]) -> Any:
    """A rich table: per rater, the labels given of the items assigned."""
    table = FittedTable(title="judging progress", title_justify="left")
    table.add_column("rater", text=True, style="bold")
    for header in ("judged", "assigned", "done", "can't judge", "minutes"):
        table.add_column(header, justify="right")
    for p in progress:
        share = p.judged / p.assigned if p.assigned else 0.0
        table.add_row(
            shown(p.rater),
            str(p.judged),
            str(p.assigned),
            f"{share:.0%}",
            str(p.cant_judge),
            f"{p.seconds / 60:.1f}",
        )
    return table


def qrels_text(resolved: Iterable[Resolved]) -> str:
    """TREC qrels, ``query_id 0 doc_id grade`` a line, in the order given."""
    return "".join(f"{r.query_id} 0 {r.doc_id} {r.grade}\n" for r in resolved)


def labels_csv(labels: Iterable[Label]) -> str:
    """The long table ``query_id,doc_id,rater,label`` (CSV with a header; "can't judge" left
    out), as ``rankmeter agree`` reads it.

    Safe to open in a spreadsheet: an id or a rater that begins with ``=``, ``+``, ``-``,
    ``@`` (a formula there) gets a leading apostrophe (:func:`rankmeter._escape.spreadsheet_cell`),
    which ``rankmeter agree`` removes again; the grades are numbers and written as they are."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("query_id", "doc_id", "rater", "label"))
    for label in labels:
        if label.grade is not None:
            writer.writerow(
                (
                    spreadsheet_cell(label.query_id),
                    spreadsheet_cell(label.doc_id),
                    spreadsheet_cell(label.rater),
                    label.grade,
                )
            )
    return out.getvalue()


def labels_parquet(labels: Iterable[Label]) -> bytes:
    """The long table of :func:`labels_csv` as a Parquet file's bytes: ``query_id``,
    ``doc_id`` and ``rater`` strings, ``label`` integers ("can't judge" left out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    graded = [label for label in labels if label.grade is not None]
    table = pa.table(
        {
            "query_id": pa.array([label.query_id for label in graded], pa.string()),
            "doc_id": pa.array([label.doc_id for label in graded], pa.string()),
            "rater": pa.array([label.rater for label in graded], pa.string()),
            "label": pa.array([label.grade for label in graded], pa.int64()),
        }
    )
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    return bytes(out.getvalue().to_pybytes())


def write_labels(labels: Iterable[Label], path: str) -> None:
    """Write the long table of labels to ``path`` (``judge export --labels``): Parquet
    (:func:`labels_parquet`) when the name ends in ``.parquet`` or ``.pq``, else CSV
    (:func:`labels_csv`); files atomically, ``"-"`` to stdout (escaped at a terminal)."""
    from rankmeter._escape import terminal_safe
    from rankmeter.io import atomic_write_bytes
    from rankmeter.report._registry import emit

    if path.lower().endswith((".parquet", ".pq")):
        atomic_write_bytes(path, labels_parquet(labels))
    else:
        emit(terminal_safe(labels_csv(labels), path), path)


def left_out_line(left_out: Sequence[Any], adjudicator: str | None) -> str:
    """The warning of ``judge export --resolve adjudicated`` on the disputed items the
    adjudicator has not graded, left out of the qrels (not escaped).

    >>> left_out_line([("q1", "d1")], "ann")
    "warning: 1 disputed item has no grade from the adjudicator 'ann' and is left out of the qrels; see rankmeter judge status"
    """
    items = "item has" if len(left_out) == 1 else "items have"
    return (
        f"warning: {len(left_out)} disputed {items} no grade from the adjudicator "
        f"{adjudicator!r} and {'is' if len(left_out) == 1 else 'are'} left out of the "
        "qrels; see rankmeter judge status"
    )


def model_labels_lines(labelled: ModelLabels) -> list[str]:
    """The summary of a pool labelled by a model (``rankmeter label``): MiniLM's fitted
    thresholds, then how many items of how many queries, labelled by what."""
    qrels, lines = labelled.qrels, []
    done = f"{len(qrels)} items of {qrels.n_queries} queries labelled by"
    if labelled.fitted is not None:
        fitted = labelled.fitted
        low = fitted.scale[0]
        cuts = ", ".join(f"{low + i + 1} from {c:.4f}" for i, c in enumerate(fitted.thresholds))
        lines.append(
            f"minilm thresholds fitted on {fitted.n_calibration} human-labelled items of "
            f"{len(fitted.calibration_queries)} queries (quadratic weighted kappa "
            f"{fitted.calibration_kappa:.3f}): cosine grade {cuts}"
        )
    if labelled.chat is not None:
        chat = labelled.chat
        lines.append(
            f"{done} {visible(labelled.labeler)} at {visible(chat.url)} ({chat.requests} "
            f"requests, {chat.cached} from the cache)"
        )
    else:
        lines.append(f"{done} {labelled.labeler}")
    return lines


@renders("rankmeter.judgments.ModelLabels", "trec")
def model_labels_trec(labelled: ModelLabels) -> str:
    """The qrels a model gave, as TREC qrels text: what ``rankmeter label`` writes."""
    from rankmeter.io import trec_qrels_text

    return trec_qrels_text(labelled.qrels)
