"""resolve(..., "adjudicated"): agreed and single-rater items keep their grade, disputed ones
take the adjudicator's, and a disputed item the adjudicator has not graded is left out and
counted (unadjudicated)."""

from __future__ import annotations

import pytest

from rankmeter.errors import PolicyError
from rankmeter.judgments.app.export import resolve, unadjudicated
from rankmeter.judgments.app.store import Label


def label(query_id: str, doc_id: str, rater: str, grade: int | None) -> Label:
    return Label(query_id, doc_id, rater, grade, 0, 1)


LABELS = [
    label("q1", "agreed", "ann", 2), label("q1", "agreed", "bob", 2),
    label("q1", "single", "bob", 1),
    label("q1", "disputed", "ann", 3), label("q1", "disputed", "bob", 0),
    label("q1", "disputed", "cy", 1),
    label("q2", "unsettled", "ann", 3), label("q2", "unsettled", "bob", 1),
    label("q2", "cant", "ann", 2), label("q2", "cant", "bob", 0), label("q2", "cant", "cy", None),
    label("q2", "nobody", "cy", None),
]  # fmt: skip


def grades(how: str, adjudicator: str | None = None) -> dict[tuple[str, str], int]:
    return {(r.query_id, r.doc_id): r.grade for r in resolve(LABELS, how, adjudicator=adjudicator)}


def test_the_adjudicator_decides_disputed_items_only() -> None:
    assert grades("adjudicated", "cy") == {
        ("q1", "agreed"): 2, ("q1", "single"): 1, ("q1", "disputed"): 1,
    }  # fmt: skip


def test_the_adjudicators_own_label_on_a_disputed_item_wins() -> None:
    assert grades("adjudicated", "ann") == {
        ("q1", "agreed"): 2, ("q1", "single"): 1, ("q1", "disputed"): 3,
        ("q2", "unsettled"): 3, ("q2", "cant"): 2,
    }  # fmt: skip


def test_the_disputed_items_left_out_are_counted() -> None:
    assert unadjudicated(LABELS, "cy") == [("q2", "cant"), ("q2", "unsettled")]
    assert unadjudicated(LABELS, "ann") == []


def test_n_labels_counts_every_rater_of_an_adjudicated_item() -> None:
    found = resolve(LABELS, "adjudicated", adjudicator="cy")
    assert [r.n_labels for r in found if r.doc_id == "disputed"] == [3]


def test_adjudicated_needs_an_adjudicator() -> None:
    with pytest.raises(PolicyError, match="'adjudicated' needs an adjudicator"):
        resolve(LABELS, "adjudicated")


@pytest.mark.parametrize("how", ["majority", "mean"])
def test_an_adjudicator_only_goes_with_adjudicated(how: str) -> None:
    with pytest.raises(PolicyError, match=f"an adjudicator .*'cy'.* but resolve is '{how}'"):
        resolve(LABELS, how, adjudicator="cy")
