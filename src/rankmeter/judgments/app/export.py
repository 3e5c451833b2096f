"""From raters' labels to one grade per item: the qrels the rating app exports.

``majority``: the grade most raters gave (a tie goes to the lower of the tied grades: a
document two raters disagree on is not promoted). ``mean``: the mean grade, rounded to the
nearest whole grade, halves up. ``adjudicated``: an item whose raters all gave the same grade
(or that one rater graded) keeps it; a disputed item takes the adjudicator's grade (the
adjudicator is one of the raters: their grade on a disputed item wins), and a disputed item the
adjudicator has not graded is left out of the qrels (:func:`unadjudicated` lists those, for a
warning). "Can't judge" is no label; an item nobody could judge is left out of the qrels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rankmeter._validate import choice
from rankmeter.data.ids import natural_key
from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments.app.store import Label

__all__ = ["RESOLUTIONS", "Resolved", "check_trec_ids", "resolve", "unadjudicated"]

RESOLUTIONS = ("majority", "mean", "adjudicated")


@dataclass(frozen=True)
class Resolved:
    """One item's grade, from ``n_labels`` raters' labels."""

    query_id: str
    doc_id: str
    grade: int
    n_labels: int


def resolve(
    labels: Iterable[Label], how: str = "majority", *, adjudicator: str | None = None
) -> list[Resolved]:
    """One grade per labelled item, queries in natural order, then doc ids in natural order.

    ``adjudicator`` names the rater whose grade settles a disputed item; it is required with
    ``how="adjudicated"`` and refused with the others (:class:`PolicyError`). A disputed item
    the adjudicator has not graded is left out (see :func:`unadjudicated`).

    >>> from rankmeter.judgments.app.store import Label
    >>> given = [Label("q1", "d1", "ann", 3, 0, 1), Label("q1", "d1", "bob", 2, 0, 1),
    ...          Label("q1", "d2", "ann", None, 0, 1)]
    >>> [(r.doc_id, r.grade) for r in resolve(given, "majority")]
    [('d1', 2)]
    >>> [(r.doc_id, r.grade) for r in resolve(given, "mean")]
    [('d1', 3)]
    >>> [(r.doc_id, r.grade) for r in resolve(given, "adjudicated", adjudicator="ann")]
    [('d1', 3)]
    >>> resolve(given, "adjudicated", adjudicator="cy")
    []
    """
    choice("resolve", how, RESOLUTIONS)
    _check_adjudicator(how, adjudicator)
    grades, by_rater = _grades(labels)
    out = []
    for (query_id, doc_id), given in grades.items():
        if how == "majority":
            counts = Counter(given)
            most = max(counts.values())
            grade = min(g for g, n in counts.items() if n == most)
        elif how == "mean":
            grade = math.floor(sum(given) / len(given) + 0.5)
        elif len(set(given)) == 1:
            grade = given[0]
        else:
            decided = by_rater.get((query_id, doc_id, str(adjudicator)))
            if decided is None:
                continue
            grade = decided
        out.append(Resolved(query_id, doc_id, grade, len(given)))
    out.sort(key=lambda r: (natural_key(r.query_id), natural_key(r.doc_id)))
    return out


def unadjudicated(labels: Iterable[Label], adjudicator: str) -> list[tuple[str, str]]:
    """The disputed items (raters gave different grades) that ``adjudicator`` has not graded,
    as ``(query_id, doc_id)`` in natural order: what ``resolve(..., "adjudicated")`` leaves out.

    >>> from rankmeter.judgments.app.store import Label
    >>> given = [Label("q1", "d1", "ann", 3, 0, 1), Label("q1", "d1", "bob", 2, 0, 1)]
    >>> unadjudicated(given, "cy")
    [('q1', 'd1')]
    >>> unadjudicated(given, "bob")
    []
    """
    grades, by_rater = _grades(labels)
    left = [
        item
        for item, given in grades.items()
        if len(set(given)) > 1 and (*item, adjudicator) not in by_rater
    ]
    return sorted(left, key=lambda item: (natural_key(item[0]), natural_key(item[1])))


def _check_adjudicator(how: str, adjudicator: str | None) -> None:
    if how == "adjudicated" and adjudicator is None:
        raise PolicyError(
            "resolve 'adjudicated' needs an adjudicator: the rater whose grade settles a "
            "disputed item"
        )
    if how != "adjudicated" and adjudicator is not None:
        raise PolicyError(
            f"an adjudicator ({adjudicator!r}) is given but resolve is {how!r}: the adjudicator "
            "goes with resolve 'adjudicated' only"
        )


def _grades(
    labels: Iterable[Label],
) -> tuple[dict[tuple[str, str], list[int]], dict[tuple[str, str, str], int]]:
    """Each item's grades (raters' order), and each (item, rater)'s grade; no "can't judge"."""
    grades: dict[tuple[str, str], list[int]] = {}
    by_rater: dict[tuple[str, str, str], int] = {}
    for label in labels:
        if label.grade is not None:
            grades.setdefault((label.query_id, label.doc_id), []).append(label.grade)
            by_rater[(label.query_id, label.doc_id, label.rater)] = label.grade
    return grades, by_rater


def check_trec_ids(resolved: Iterable[Resolved], source: str, *, advice: str) -> None:
    """Raise :class:`FormatError` naming ``source`` (the database) and the first item whose
    query or document id a TREC line cannot hold (:func:`rankmeter.io.trec_id_writable`: an
    empty id, or one with whitespace, on which TREC splits fields); ``advice`` ends the message
    (what to do instead)."""
    from rankmeter.io import trec_id_writable  # the readers and writers: loaded when exporting

    for r in resolved:
        if trec_id_writable(r.query_id) and trec_id_writable(r.doc_id):
            continue
        what = "has an empty id" if not (r.query_id and r.doc_id) else "holds whitespace"
        raise FormatError(
            source,
            f"query {r.query_id!r}, doc {r.doc_id!r} {what}, which TREC qrels cannot hold: "
            f"{advice}",
        )
