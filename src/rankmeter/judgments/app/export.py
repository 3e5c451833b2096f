"""From raters' labels to one grade per item: the qrels the rating app exports.

``majority``: the grade most raters gave (a tie goes to the lower of the tied grades: a
document two raters disagree on is not promoted). ``mean``: the mean grade, rounded to the
nearest whole grade, halves up. "Can't judge" is no label; an item nobody could judge is left
out of the qrels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rankmeter._validate import choice
from rankmeter.data.ids import natural_key
from rankmeter.errors import PolicyError
from rankmeter.judgments.app.store import Label

__all__ = ["RESOLUTIONS", "Resolved", "resolve"]

RESOLUTIONS = ("majority", "mean")


@dataclass(frozen=True)
class Resolved:
    """One item's grade, from ``n_labels`` raters' labels."""

    query_id: str
    doc_id: str
    grade: int
    n_labels: int


def resolve(labels: Iterable[Label], how: str = "majority") -> list[Resolved]:
    """One grade per labelled item, queries in natural order, then doc ids in natural order.

    >>> from rankmeter.judgments.app.store import Label
    >>> given = [Label("q1", "d1", "ann", 3, 0, 1), Label("q1", "d1", "bob", 2, 0, 1),
    ...          Label("q1", "d2", "ann", None, 0, 1)]
    >>> [(r.doc_id, r.grade) for r in resolve(given, "majority")]
    [('d1', 2)]
    >>> [(r.doc_id, r.grade) for r in resolve(given, "mean")]
    [('d1', 3)]
    """
    choice("resolve", how, RESOLUTIONS)
    grades: dict[tuple[str, str], list[int]] = {}
    for label in labels:
        if label.grade is not None:
            grades.setdefault((label.query_id, label.doc_id), []).append(label.grade)
    for query_id, doc_id in grades:
        if any(c.isspace() for c in query_id + doc_id):
            raise PolicyError(
                f"query {query_id!r}, doc {doc_id!r} holds whitespace, which TREC qrels cannot "
                "hold: export the labels as CSV (--labels) instead"
            )
    out = []
    for (query_id, doc_id), given in grades.items():
        if how == "majority":
            counts = Counter(given)
            most = max(counts.values())
            grade = min(g for g, n in counts.items() if n == most)
        else:
            grade = math.floor(sum(given) / len(given) + 0.5)
        out.append(Resolved(query_id, doc_id, grade, len(given)))
    out.sort(key=lambda r: (natural_key(r.query_id), natural_key(r.doc_id)))
    return out
