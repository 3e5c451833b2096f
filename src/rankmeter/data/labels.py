"""Labels: who gave which relevance label to which item, as a long table (issue 11).

An item is a (query id, doc id) pair; each rater gives an item at most one label. Where Qrels
hold one grade per item (the labels a run is evaluated against), Labels hold every rater's,
so that their agreement can be measured (:func:`rankmeter.judgments.agreement`). Files and
frames are read by :mod:`rankmeter.io` (``rankmeter.io.as_labels``).
"""

from __future__ import annotations

import re
from typing import Any, Literal, overload

import numpy as np

from rankmeter.data._inputs import as_float_column
from rankmeter.data.arrays import FloatArray, IntArray, ObjArray, readonly
from rankmeter.data.ids import intern
from rankmeter.data.origin import Origin
from rankmeter.errors import PolicyError

__all__ = ["MAX_SCALE_DIGITS", "Labels", "check_scale", "parse_scale"]

#: The most digits either end of a scale may have (ASCII digits only): a scale of whole numbers
#: below 10**18 fits int64, and a longer digit string (thousands of digits make ``int()``
#: refuse) is refused with the scale's one message, not with Python's.
MAX_SCALE_DIGITS = 18

_SCALE = re.compile(
    rf"\s*(-?[0-9]{{1,{MAX_SCALE_DIGITS}}})\s*-\s*(-?[0-9]{{1,{MAX_SCALE_DIGITS}}})\s*", re.ASCII
)


@overload
def parse_scale(scale: Any, *, required: Literal[True]) -> tuple[int, int]: ...
@overload
def parse_scale(scale: Any, *, required: bool = False) -> tuple[int, int] | None: ...
def parse_scale(scale: Any, *, required: bool = False) -> tuple[int, int] | None:
    """The grades a rater may give, ``(low, high)``: whole numbers from ``low`` to ``high``.

    ``scale`` is ``None`` (any number), a text ``"LOW-HIGH"`` (``"0-3"``, ``"-5--1"``, as
    ``--scale`` takes it; ASCII digits, at most :data:`MAX_SCALE_DIGITS` each) or a pair of
    integers (each below 10**18 in magnitude); ``None`` is refused too where ``required``. The
    one parser of a scale: the rating app (``rankmeter.judgments.app.store``) adds only its own
    bounds.

    >>> parse_scale("0-3")
    (0, 3)
    >>> parse_scale("3")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: scale='3' must be LOW-HIGH, two whole numbers (ASCII digits) with LOW < HIGH, each of at most 18 digits, such as '0-3' (the grades a rater may give)
    """
    if scale is None and not required:
        return None
    low: Any = None
    high: Any = None
    if isinstance(scale, str):
        match = _SCALE.fullmatch(scale)
        if match:
            low, high = int(match.group(1)), int(match.group(2))
    elif isinstance(scale, (tuple, list)) and len(scale) == 2:
        low, high = scale
    limit = 10**MAX_SCALE_DIGITS
    if (
        isinstance(low, bool)
        or isinstance(high, bool)
        or not isinstance(low, (int, np.integer))
        or not isinstance(high, (int, np.integer))
        or not -limit < low < high < limit
    ):
        raise PolicyError(
            f"scale={scale!r} must be LOW-HIGH, two whole numbers (ASCII digits) with LOW < HIGH, "
            f"each of at most {MAX_SCALE_DIGITS} digits, such as '0-3' (the grades a rater may give)"
        )
    return int(low), int(high)


def check_scale(values: FloatArray, scale: tuple[int, int] | None, origin: Origin) -> None:
    """Raise, naming the first bad row, if a label is not a whole number within ``scale``."""
    if scale is None:
        return
    low, high = scale
    bad = (values < low) | (values > high) | (values != np.floor(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise origin.error(
            row,
            f"label {values[row]:g} is outside the scale {low}-{high} (whole numbers from "
            f"{low} to {high}; give another --scale if the labels are right)",
        )


class Labels:
    """Relevance labels from several raters: one row per (item, rater), an item being a
    (query id, doc id) pair.

    Build with :meth:`from_columns` (or read with ``rankmeter.io.as_labels``). Items are in
    natural order of query, then doc; raters in natural order of their names. Immutable.

    Attributes
    ----------
    query_ids, doc_ids : numpy object arrays
        The query and the doc of each item.
    raters : numpy object array
        The raters' names.
    item, rater : int64 arrays
        For each label row, its item and its rater (positions in the arrays above); rows
        sorted by item, then rater.
    values : float64 array
        The label of each row.
    scale : (int, int) or None
        The scale the labels were checked against.
    source : str
        Where the labels came from (a path, ``"<pandas DataFrame>"``...).

    Examples
    --------
    >>> labels = Labels.from_columns(["1", "1", "1"], ["d1", "d1", "d2"], ["ann", "bob", "ann"],
    ...                              [2, 1, 0], scale="0-3")
    >>> labels
    Labels(2 raters, 2 items, 3 labels)
    >>> labels.matrix()
    array([[ 2.,  1.],
           [ 0., nan]])
    """

    __slots__ = ("doc_ids", "item", "query_ids", "rater", "raters", "scale", "source", "values")

    def __init__(
        self,
        query_ids: ObjArray,
        doc_ids: ObjArray,
        raters: ObjArray,
        item: IntArray,
        rater: IntArray,
        values: FloatArray,
        scale: tuple[int, int] | None,
        source: str,
    ) -> None:
        # Private: use from_columns. Rows sorted by (item, rater), one per pair.
        self.query_ids = readonly(query_ids)
        self.doc_ids = readonly(doc_ids)
        self.raters = readonly(raters)
        self.item = readonly(item)
        self.rater = readonly(rater)
        self.values = readonly(values)
        self.scale = scale
        self.source = source

    @classmethod
    def from_columns(
        cls,
        query_ids: Any,
        doc_ids: Any,
        raters: Any,
        labels: Any,
        *,
        origin: Origin | str = "<columns>",
        scale: Any = None,
    ) -> Labels:
        """Build from four parallel columns (lists, NumPy or Arrow arrays).

        A label that is not a finite number, or (with ``scale``, see :func:`parse_scale`) not
        a whole number on the scale, and a rater who gives one item two different labels
        raise :class:`~rankmeter.errors.FormatError` naming the row (its file line); the same
        label given twice counts once.
        """
        if isinstance(origin, str):
            origin = Origin(origin)
        bounds = parse_scale(scale)
        q_codes, q_vocab = intern(query_ids, origin, "query id")
        d_codes, d_vocab = intern(doc_ids, origin, "doc id")
        r_codes, r_vocab = intern(raters, origin, "rater")
        values = as_float_column(labels, origin, "label", allow_inf=False)
        if not (len(q_codes) == len(d_codes) == len(r_codes) == len(values)):
            raise origin.error(None, "query, doc, rater and label columns have different lengths")
        if len(values) == 0:
            raise origin.error(None, "no labels: the table must hold at least one row")
        check_scale(values, bounds, origin)
        keys = q_codes * max(len(d_vocab), 1) + d_codes
        unique_keys, item_codes = np.unique(keys, return_inverse=True)
        order = np.lexsort((r_codes, item_codes))
        item_sorted = item_codes[order]
        rater_sorted = r_codes[order]
        value_sorted = values[order]
        same = (item_sorted[1:] == item_sorted[:-1]) & (rater_sorted[1:] == rater_sorted[:-1])
        clash = np.flatnonzero(same & (value_sorted[1:] != value_sorted[:-1]))
        if len(clash):
            at = int(clash[0])
            key = int(unique_keys[item_sorted[at]])
            raise origin.error(
                int(max(order[at], order[at + 1])),
                f"rater {r_vocab[rater_sorted[at]]!r} labelled query "
                f"{q_vocab[key // max(len(d_vocab), 1)]!r}, doc "
                f"{d_vocab[key % max(len(d_vocab), 1)]!r} twice, with different labels "
                f"({value_sorted[at]:g} and {value_sorted[at + 1]:g}); keep one of the rows",
            )
        keep = np.concatenate(([True], ~same))
        n_docs = max(len(d_vocab), 1)
        return cls(
            q_vocab[unique_keys // n_docs],
            d_vocab[unique_keys % n_docs],
            r_vocab,
            item_sorted[keep].astype(np.int64),
            rater_sorted[keep].astype(np.int64),
            value_sorted[keep],
            bounds,
            origin.name,
        )

    @property
    def n_items(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"Labels({len(self.raters)} raters, {self.n_items} items, {len(self)} labels)"

    def matrix(self) -> FloatArray:
        """Items x raters: the label each rater gave each item, NaN where none."""
        out = np.full((self.n_items, len(self.raters)), np.nan)
        out[self.item, self.rater] = self.values
        return out

    def to_arrow(self) -> Any:
        """The long table: columns query_id, doc_id, rater, label."""
        import pyarrow as pa

        return pa.table(
            {
                "query_id": pa.array(self.query_ids[self.item].tolist(), type=pa.string()),
                "doc_id": pa.array(self.doc_ids[self.item].tolist(), type=pa.string()),
                "rater": pa.array(self.raters[self.rater].tolist(), type=pa.string()),
                "label": pa.array(self.values),
            }
        )
