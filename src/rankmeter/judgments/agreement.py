"""Agreement between raters: how far the relevance labels of several people (or of a model and
people) can be trusted.

The statistics are the maintained implementations', not re-derived here: Cohen's kappa (plain
and weighted), Fleiss' kappa and the tables they read come from statsmodels
(``statsmodels.stats.inter_rater``: ``cohens_kappa``, ``fleiss_kappa``, ``aggregate_raters``,
``to_table``), Krippendorff's alpha from the ``krippendorff`` package. Both are the ``judge``
extra, imported when :func:`agreement` runs. What they lack is written here, and only that:
pairing the raters, raw agreement, leniency, the items that split the raters most, and the
bootstrap interval of alpha (items resampled with replacement: ``krippendorff`` gives the
estimate only).
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.data.arrays import FloatArray, IntArray
from rankmeter.data.labels import Labels
from rankmeter.errors import FormatError, PolicyError, RankmeterError

__all__ = [
    "ALPHA_LEVELS",
    "Agreement",
    "Alpha",
    "Disagreement",
    "Leniency",
    "PairAgreement",
    "rater_files",
]

#: Krippendorff's alpha is given at these levels of measurement.
ALPHA_LEVELS = ("nominal", "ordinal", "interval")


def _number(value: float) -> float | int:
    """A label as it reads: 2, not 2.0."""
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True)
class PairAgreement:
    """Two raters on the items they both labelled.

    ``confusion[i][j]`` counts the shared items that ``rater_a`` gave the ``i``-th category
    and ``rater_b`` the ``j``-th (:attr:`Agreement.categories`). Every statistic is NaN (null
    in JSON) where it is undefined: no shared item, or (the kappas) both raters gave one and
    the same label throughout, so that chance agreement is already perfect.
    """

    rater_a: str
    rater_b: str
    n_shared: int
    raw: float
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    confusion: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rater_a": self.rater_a,
            "rater_b": self.rater_b,
            "shared_items": self.n_shared,
            "raw_agreement": self.raw,
            "cohen_kappa": self.kappa,
            "weighted_kappa_linear": self.kappa_linear,
            "weighted_kappa_quadratic": self.kappa_quadratic,
            "confusion": [list(row) for row in self.confusion],
        }


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's alpha at one level of measurement, with its bootstrap interval."""

    level: str
    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "alpha": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Leniency:
    """One rater's labels against the others': ``mean_label`` over all the rater's labels;
    ``mean_difference`` over the items another rater labelled too, of the rater's label minus
    the mean of the others' (positive: more lenient than the others)."""

    rater: str
    n_labels: int
    mean_label: float
    n_shared: int
    mean_difference: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "rater": self.rater,
            "labels": self.n_labels,
            "mean_label": self.mean_label,
            "shared_items": self.n_shared,
            "mean_difference": self.mean_difference,
        }


@dataclass(frozen=True)
class Disagreement:
    """An item the raters split on: its labels by rater, and their spread (highest minus
    lowest)."""

    query_id: str
    doc_id: str
    labels: tuple[tuple[str, float | int], ...]
    spread: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "spread": self.spread,
            "labels": dict(self.labels),
        }


@dataclass(frozen=True)
class Agreement:
    """How much raters agree: the result of :func:`agreement`.

    Attributes
    ----------
    raters : tuple of str
        The raters, in natural order of their names.
    categories : tuple of numbers
        The labels, in order: the scale's whole numbers when a scale was given, else the
        labels seen. The rows and columns of every confusion matrix.
    n_items, n_labels : int
        Items (query, doc) labelled by anyone, and labels in all.
    n_compared : int
        Items labelled by two raters or more: the ones agreement is measured on.
    raw : float
        Raw agreement: of all pairs of labels given to one item, the share that are equal.
    pairs : tuple of PairAgreement
        Every pair of raters: shared items, raw agreement, Cohen's kappa, weighted kappa
        (linear and quadratic), the confusion matrix.
    fleiss_kappa : float
        Fleiss' kappa over the ``fleiss_items`` items that have ``fleiss_raters`` labels
        each (the most common number of labels per item, two or more; Fleiss' kappa needs
        the same number on every item).
    alpha : tuple of Alpha
        Krippendorff's alpha, nominal, ordinal and interval, over every item labelled twice
        or more (missing labels allowed), with a ``confidence`` bootstrap interval from
        ``resamples`` resamples of those items (``seed``).
    leniency : tuple of Leniency
        Per rater: the mean label, and the mean difference to the others on shared items.
    disagreements : tuple of Disagreement
        The ``top`` items with the largest spread of labels, largest first.
    notes : tuple of str
        Why a statistic is undefined (NaN; null in JSON), where one is.
    """

    source: str
    raters: tuple[str, ...]
    categories: tuple[float | int, ...]
    scale: tuple[int, int] | None
    n_items: int
    n_labels: int
    n_compared: int
    raw: float
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float
    fleiss_items: int
    fleiss_raters: int
    alpha: tuple[Alpha, ...]
    confidence: float
    resamples: int
    seed: int
    leniency: tuple[Leniency, ...]
    disagreements: tuple[Disagreement, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN stays NaN: the JSON writer makes it null)."""
        return {
            "source": self.source,
            "raters": list(self.raters),
            "categories": list(self.categories),
            "scale": None if self.scale is None else f"{self.scale[0]}-{self.scale[1]}",
            "items": self.n_items,
            "labels": self.n_labels,
            "compared_items": self.n_compared,
            "raw_agreement": self.raw,
            "pairs": [p.to_dict() for p in self.pairs],
            "fleiss_kappa": {
                "kappa": self.fleiss_kappa,
                "items": self.fleiss_items,
                "raters_per_item": self.fleiss_raters,
            },
            "krippendorff_alpha": {
                "confidence": self.confidence,
                "resamples": self.resamples,
                "seed": self.seed,
                "levels": [a.to_dict() for a in self.alpha],
            },
            "leniency": [r.to_dict() for r in self.leniency],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "notes": list(self.notes),
        }


def agreement(
    labels: Any,
    *,
    scale: Any = None,
    top: int = 10,
    seed: int = 0,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> Agreement:
    """Agreement between raters on relevance labels.

    Parameters
    ----------
    labels
        A long table with one row per label (query_id, doc_id, rater, label): a path (CSV/TSV
        with a header, JSONL, Parquet), a pandas/polars DataFrame, an Arrow table or a list of
        dicts; or one qrels per rater, ``{rater: qrels}`` (paths, Qrels or dicts; negative
        grades are "not judged" there). See :func:`rankmeter.io.as_labels`.
    scale : str or (int, int), optional
        The grades raters may give, ``"0-3"``: a label off the scale is an error naming its
        line, and the confusion matrices have a row for every grade.
    top : int
        How many of the most disputed items to list.
    seed, resamples, confidence
        The bootstrap interval of Krippendorff's alpha: items labelled twice or more are
        resampled with replacement ``resamples`` times (a NumPy generator seeded with
        ``seed``: the same seed gives the same interval), alpha computed on each resample,
        and the central ``confidence`` share of those values (percentiles) kept. Resamples on
        which alpha is undefined (one label throughout) are left out.

    Returns
    -------
    Agreement

    Notes
    -----
    Cohen's kappa is ``(p_o - p_e) / (1 - p_e)``, ``p_o`` the share of shared items with equal
    labels and ``p_e`` the share expected by chance from each rater's own label frequencies;
    weighted kappa counts a near miss as partial agreement (linear: by distance, quadratic: by
    squared distance between the labels). A kappa is undefined (NaN, JSON null, and a note)
    where a rater gave one label throughout: then ``p_e = p_o`` whatever the other rater did
    (statsmodels returns 0, or 0/0 when both gave one and the same label). A single rater, or
    no item labelled by two raters, raises :class:`~rankmeter.errors.FormatError`.

    Examples
    --------
    Two raters, four documents; they differ on ``d3`` only:

    >>> rows = [{"query_id": "1", "doc_id": d, "rater": r, "label": g}
    ...         for d, a, b in [("d1", 1, 1), ("d2", 0, 0), ("d3", 1, 0), ("d4", 0, 0)]
    ...         for r, g in [("ann", a), ("bob", b)]]
    >>> result = agreement(rows, scale="0-1")
    >>> result.raw, round(result.pairs[0].kappa, 3)
    (0.75, 0.5)
    >>> result.disagreements[0].doc_id, result.disagreements[0].labels
    ('d3', (('ann', 1), ('bob', 0)))
    """
    from rankmeter.io import as_labels

    top = _validate.integer("top", top, low=0, what="how many disputed items to list")
    seed = _validate.seed(seed)
    resamples = _validate.resamples(resamples, high=1_000_000, what="bootstrap resamples of alpha")
    confidence = _validate.level(confidence, name="confidence")
    loaded = as_labels(labels, scale=scale)
    raters = tuple(str(r) for r in loaded.raters)
    if len(raters) < 2:
        raise FormatError(
            loaded.source,
            f"only one rater ({raters[0]!r}): agreement needs labels from two raters or more",
        )
    matrix = loaded.matrix()
    counts = np.sum(~np.isnan(matrix), axis=1)
    compared = counts >= 2
    if not compared.any():
        raise FormatError(
            loaded.source,
            "no item was labelled by two raters or more: nothing to compare (raters must "
            "label some of the same query-doc pairs)",
        )
    if loaded.scale is not None:
        low, high = loaded.scale
        categories: FloatArray = np.arange(low, high + 1, dtype=np.float64)
    else:
        categories = np.unique(loaded.values)
    # Every label as the position of its category (-1: no label).
    codes = np.full(matrix.shape, -1, dtype=np.int64)
    present = ~np.isnan(matrix)
    codes[present] = np.searchsorted(categories, matrix[present])
    inter_rater = _require("statsmodels.stats.inter_rater", "statsmodels", "agreement")
    notes: list[str] = []
    pairs = tuple(
        _pair(raters, a, b, codes, categories, inter_rater, notes)
        for a, b in itertools.combinations(range(len(raters)), 2)
    )
    fleiss, fleiss_items, fleiss_raters = _fleiss(codes, counts, categories, inter_rater, notes)
    value_counts = np.stack([np.sum(codes == k, axis=1) for k in range(len(categories))], axis=1)
    alphas = _alphas(value_counts[compared], categories, seed, resamples, confidence, notes)
    return Agreement(
        source=loaded.source,
        raters=raters,
        categories=tuple(_number(c) for c in categories),
        scale=loaded.scale,
        n_items=loaded.n_items,
        n_labels=len(loaded),
        n_compared=int(compared.sum()),
        raw=_raw_agreement(value_counts[compared]),
        pairs=pairs,
        fleiss_kappa=fleiss,
        fleiss_items=fleiss_items,
        fleiss_raters=fleiss_raters,
        alpha=alphas,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        leniency=_leniency(raters, matrix),
        disagreements=_disagreements(loaded, matrix, raters, top),
        notes=tuple(notes),
    )


def rater_files(
    paths: Sequence[str | os.PathLike[str]], raters: str | Sequence[str] | None = None
) -> dict[str, str]:
    """Several qrels files, one per rater, keyed by the raters' names (what :func:`agreement`
    takes): ``raters`` names them in order (a list, or one comma-separated string), else each
    is named after its file without its extensions (``judged/alice.qrels.gz``: ``alice``).

    >>> rater_files(["judged/alice.qrels.gz", "bob.txt"])
    {'alice': 'judged/alice.qrels.gz', 'bob': 'bob.txt'}
    >>> rater_files(["a.qrels", "b.qrels"], "ann,bo")
    {'ann': 'a.qrels', 'bo': 'b.qrels'}
    """
    files = [os.fspath(p) for p in paths]
    if raters is None:
        names = [Path(p).name.split(".")[0] or Path(p).name for p in files]
    else:
        given = raters if isinstance(raters, str) else ",".join(raters)
        names = [n.strip() for n in given.split(",")]
    if len(names) != len(files):
        raise PolicyError(
            f"--raters gives {len(names)} names for {len(files)} qrels files: give one "
            "name per file, in order"
        )
    if not all(names):
        raise PolicyError(f"--raters {raters!r} has an empty name")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise PolicyError(
            f"two qrels files are rater {twice!r}: name the raters with --raters a,b,..."
        )
    return dict(zip(names, files, strict=True))


def _require(module: str, package: str, purpose: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RankmeterError(
            f"{purpose} needs the {package!r} package: pip install 'rankmeter[judge]' ({exc})"
        ) from None


def _quietly(compute: Any, *args: Any, **kwargs: Any) -> float:
    """A statistic whose 0/0 (undefined) is NaN, without NumPy's warnings."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(compute(*args, **kwargs))


def _pair(
    raters: tuple[str, ...],
    a: int,
    b: int,
    codes: IntArray,
    categories: FloatArray,
    inter_rater: Any,
    notes: list[str],
) -> PairAgreement:
    both = (codes[:, a] >= 0) & (codes[:, b] >= 0)
    n_shared = int(both.sum())
    k = len(categories)
    if n_shared == 0:
        notes.append(
            f"{raters[a]!r} and {raters[b]!r} share no item: their statistics are NaN (null in "
            "JSON)"
        )
        nan = float("nan")
        empty = tuple(tuple(0 for _ in range(k)) for _ in range(k))
        return PairAgreement(raters[a], raters[b], 0, nan, nan, nan, nan, empty)
    shared = codes[both][:, [a, b]]
    table, _ = inter_rater.to_table(shared, bins=k)
    kappa = _quietly(inter_rater.cohens_kappa, table, return_results=False)
    linear = _quietly(
        inter_rater.cohens_kappa, table, weights=categories, wt="linear", return_results=False
    )
    quadratic = _quietly(
        inter_rater.cohens_kappa, table, weights=categories, wt="quadratic", return_results=False
    )
    constant = [r for r in (a, b) if np.all(codes[both][:, r] == codes[both][0, r])]
    if np.isnan(kappa) or constant:
        constant = constant or [a, b]
        # One rater giving one label throughout makes chance agreement equal the observed one
        # (p_o = p_e): statsmodels then returns 0 (0/0 when both are constant), a number that
        # says nothing about agreement. Undefined, as for both raters constant.
        kappa = linear = quadratic = float("nan")
        label = _number(categories[shared[0, 0 if constant[0] == a else 1]])
        who = (
            f"both gave label {label} only, so chance agreement is already 1"
            if len(constant) == 2
            else f"{raters[constant[0]]!r} gave label {label} only, so chance agreement "
            "equals the observed agreement whatever the other rater does"
        )
        notes.append(
            f"Cohen's kappa of {raters[a]!r} and {raters[b]!r} is undefined (plain and "
            f"weighted; null in JSON): on their {n_shared} shared items {who}"
        )
    return PairAgreement(
        raters[a],
        raters[b],
        n_shared,
        float(np.mean(shared[:, 0] == shared[:, 1])),
        kappa,
        linear,
        quadratic,
        tuple(tuple(int(x) for x in row) for row in table),
    )


def _fleiss(
    codes: IntArray, counts: IntArray, categories: FloatArray, inter_rater: Any, notes: list[str]
) -> tuple[float, int, int]:
    """Fleiss' kappa over the items with the most common number of labels (two or more):
    ties go to the larger number of raters."""
    sizes, how_many = np.unique(counts[counts >= 2], return_counts=True)
    best = max(zip(how_many, sizes, strict=True))
    raters_per_item = int(best[1])
    rows = codes[counts == raters_per_item]
    labelled = np.sort(rows, axis=1)[:, -raters_per_item:]  # the labels, without the -1s
    table, _ = inter_rater.aggregate_raters(labelled, n_cat=len(categories))
    kappa = _quietly(inter_rater.fleiss_kappa, table)
    if np.isnan(kappa):
        notes.append(
            f"Fleiss' kappa is undefined (NaN, null in JSON): the {len(rows)} items with "
            f"{raters_per_item} labels all have one and the same label"
        )
    return kappa, len(rows), raters_per_item


def _alphas(
    value_counts: IntArray,
    categories: FloatArray,
    seed: int,
    resamples: int,
    confidence: float,
    notes: list[str],
) -> tuple[Alpha, ...]:
    """Krippendorff's alpha per level, and its bootstrap interval over resampled items.

    ``value_counts`` (items x categories: how many raters gave each label) is what
    ``krippendorff.alpha`` reads; an item resampled twice counts twice.
    """
    krippendorff = _require("krippendorff", "krippendorff", "agreement")
    nan = float("nan")
    used = value_counts.sum(axis=0) > 0
    if used.sum() < 2:
        label = _number(categories[np.flatnonzero(used)[0]])
        notes.append(
            f"Krippendorff's alpha is undefined (NaN, null in JSON): every item labelled twice "
            f"or more has label {label} only"
        )
        return tuple(Alpha(level, nan, nan, nan) for level in ALPHA_LEVELS)
    if len(categories) < 2:  # pragma: no cover - two labels used means two categories
        return tuple(Alpha(level, nan, nan, nan) for level in ALPHA_LEVELS)

    def alpha(counts: IntArray, level: str) -> float:
        return _quietly(
            krippendorff.alpha,
            value_counts=counts,
            value_domain=categories,
            level_of_measurement=level,
        )

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(value_counts), size=(resamples, len(value_counts)))
    tail = (1 - confidence) / 2
    out = []
    for level in ALPHA_LEVELS:
        estimate = alpha(value_counts, level)
        spread = np.asarray([alpha(value_counts[p], level) for p in picks])
        spread = spread[np.isfinite(spread)]
        if len(spread):
            low, high = np.quantile(spread, [tail, 1 - tail])
        else:
            low = high = nan
        out.append(Alpha(level, estimate, float(low), float(high)))
    return tuple(out)


def _raw_agreement(value_counts: IntArray) -> float:
    """Of all pairs of labels given to one item, the share that agree."""
    n = value_counts.sum(axis=1)
    pairs = float(np.sum(n * (n - 1)))
    agreeing = float(np.sum(value_counts * (value_counts - 1)))
    return agreeing / pairs


def _leniency(raters: tuple[str, ...], matrix: FloatArray) -> tuple[Leniency, ...]:
    present = ~np.isnan(matrix)
    totals = np.where(present, matrix, 0.0).sum(axis=1)
    counts = present.sum(axis=1)
    out = []
    for r, name in enumerate(raters):
        own = present[:, r]
        shared = own & (counts >= 2)
        others = (totals[shared] - matrix[shared, r]) / (counts[shared] - 1)
        out.append(
            Leniency(
                name,
                int(own.sum()),
                float(matrix[own, r].mean()),
                int(shared.sum()),
                float((matrix[shared, r] - others).mean()) if shared.any() else float("nan"),
            )
        )
    return tuple(out)


def _disagreements(
    labels: Labels, matrix: FloatArray, raters: tuple[str, ...], top: int
) -> tuple[Disagreement, ...]:
    """The items whose labels are furthest apart (then most dispersed), in item order on ties."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # items with no label: all-NaN rows
        spread = np.nanmax(matrix, axis=1) - np.nanmin(matrix, axis=1)
        dispersion = np.nanstd(matrix, axis=1)
    spread = np.nan_to_num(spread, nan=0.0)
    candidates = np.flatnonzero(spread > 0)
    order = candidates[np.lexsort((candidates, -dispersion[candidates], -spread[candidates]))]
    out = []
    for item in order[:top]:
        row = matrix[item]
        out.append(
            Disagreement(
                str(labels.query_ids[item]),
                str(labels.doc_ids[item]),
                tuple((raters[r], _number(row[r])) for r in np.flatnonzero(~np.isnan(row))),
                float(spread[item]),
            )
        )
    return tuple(out)
