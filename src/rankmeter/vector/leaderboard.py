"""A leaderboard of retrievers (embedding models, BM25) over collections, MTEB style.

Each evaluation of one model on one collection is stored as one JSON file in a results folder
(at :func:`entry_path`, written by ``rankmeter.report.leaderboard.save_entry``): the scores, every query's values (so that a later reading can test
significance), the model's identity (its name, the embedding cache's fingerprint, the hub
revision, the dimension), the settings, the time it took, when it ran and the rankmeter
version. Files are written atomically and named after the model and the collection: running
the same model on the same collection again replaces its file, and any other file stays.

A stored file is read as if a user had typed it: a value outside its metric's range, or a
stored mean other than the mean of the file's own per-query values, is refused with an error
naming the file (the leaderboard ranks on what a file's queries say, never on a claim they
contradict).

:func:`read_leaderboard` reads a results folder back into a :class:`Leaderboard`: models x
datasets on a main score (nDCG@10, as MTEB's retrieval tasks), each model's mean rank over
the datasets, and on each dataset whether each model is significantly worse than that
dataset's best model: a paired randomization test on the stored per-query values of the
queries both answered, Holm-corrected over the models of the dataset (the statistics of
:func:`rankmeter.compare`, from :mod:`rankmeter.stats`); and each model's rank with its 95%
interval from a paired bootstrap over each dataset's queries, and the groups of models that
cannot be told apart (:mod:`rankmeter.vector._rank_intervals` says how both are made).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rankmeter.errors import FormatError, PolicyError
from rankmeter.vector._leaderboard_pairs import (
    _check_same_queries,
    _paired,
    _per_query_values,
    _pvalues,
    _value,
)

if TYPE_CHECKING:
    from rankmeter.vector._rank_intervals import RankIntervals

__all__ = [
    "ENTRY_FORMAT",
    "MAIN_METRIC",
    "Leaderboard",
    "LeaderboardEntry",
    "Significance",
    "dataset_name",
    "entry_of",
    "entry_path",
    "leaderboard_of",
    "read_entries",
    "read_leaderboard",
    "stamp",
]

#: What a stored result says it is (its ``"format"``), and the version of its layout.
ENTRY_FORMAT = "rankmeter leaderboard entry"
ENTRY_VERSION = 1
#: The main score, as MTEB's retrieval tasks rank models.
MAIN_METRIC = "nDCG@10"
_NAME_PART = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class LeaderboardEntry:
    """One model evaluated on one dataset, as stored in a results folder.

    Attributes
    ----------
    model : the model's (or retriever's) name, as the leaderboard shows it
    dataset : the dataset's name (the collection folder's name)
    metrics : ``{metric: mean}`` over every judged query
    per_query : ``{query_id: {metric: value}}``
    info : what ran and how: ``model`` (identity, fingerprint, revision, dimension),
        ``collection``, ``settings``, ``seconds``, ``created`` (UTC, ISO 8601),
        ``rankmeter`` (the version)
    path : the file it was read from or written to (None before it is stored)
    """

    model: str
    dataset: str
    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]] = field(repr=False)
    info: Mapping[str, Any] = field(default_factory=dict, repr=False)
    path: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))
        object.__setattr__(self, "per_query", MappingProxyType(dict(self.per_query)))
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))

    @property
    def file_name(self) -> str:
        """``<model>__<dataset>__<hash>.json``: readable, and one file per (model, dataset)
        even where two names differ only in characters a file name cannot keep."""
        digest = hashlib.sha256(f"{self.model}\0{self.dataset}".encode()).hexdigest()[:10]
        parts = [
            _NAME_PART.sub("-", text).strip("-.")[:60] or "x" for text in (self.model, self.dataset)
        ]
        return f"{parts[0]}__{parts[1]}__{digest}.json"

    def to_dict(self) -> dict[str, Any]:
        """The stored form: ``format``, ``version``, ``model``, ``dataset``, ``metrics``,
        ``info`` and ``per_query``."""
        return {
            "format": ENTRY_FORMAT,
            "version": ENTRY_VERSION,
            "model": self.model,
            "dataset": self.dataset,
            "metrics": dict(self.metrics),
            "info": _plain(self.info),
            "per_query": {q: dict(v) for q, v in self.per_query.items()},
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def entry_path(entry: LeaderboardEntry, results_dir: str | os.PathLike[str]) -> Path:
    """Where ``entry`` is stored in ``results_dir`` (the folder is made if absent): the same
    model on the same dataset has the same file, so storing it again replaces the earlier one
    and leaves every other file. The caller writes :meth:`LeaderboardEntry.to_dict` there as
    JSON, atomically (``rankmeter.report.leaderboard.render_entry`` and
    :func:`rankmeter.io.atomic_write`; :func:`read_entries` reads it back)."""
    folder = Path(results_dir)
    if folder.exists() and not folder.is_dir():
        raise FormatError(str(folder), "is not a folder; --results-dir names a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FormatError(str(folder), f"cannot make the results folder: {exc.strerror}") from None
    return folder / entry.file_name


def stamp() -> dict[str, str]:
    """When and by which rankmeter a result was made: ``created`` (UTC, ISO 8601, seconds)
    and ``rankmeter`` (the installed distribution's version)."""
    import datetime
    from importlib import metadata

    try:
        version = metadata.version("rankmeter")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        version = "unknown (not installed)"
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"created": now.isoformat(timespec="seconds"), "rankmeter": version}


def dataset_name(root: str | os.PathLike[str]) -> str:
    """A collection's name on the leaderboard: its folder's name."""
    return Path(os.path.abspath(root)).name or os.fspath(root)


# -- reading -------------------------------------------------------------------------------------
#: The largest stored result read (256 MiB), checked from the file's size before it is opened.
#: A result holds, per judged query, its id and one value per metric (about 32 bytes a value:
#: BM25 on medline, 3 metrics, is 4.4 kB for 30 queries): 1M queries with 8 metrics fit, or
#: 270k with the 30 metrics of --preset mteb, where BEIR's largest test set has 13k queries. A
#: larger file is no result, and reading it would take several times its size in memory.
MAX_ENTRY_BYTES = 256 * 2**20
#: The most digits an integer in a stored result may have: rankmeter writes counts, seconds and
#: dimensions (a few digits); Python refuses to read past 4,300 of them.
_MAX_DIGITS = 30


class _Refused(ValueError):
    """A value the JSON reader refuses as it reads (an integer too long to be a count)."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS:
        raise _Refused(
            f"an integer of {digits} digits, where a stored result has at most {_MAX_DIGITS}"
        )
    return int(text)


def _shown_path(path: Path | str) -> str:
    """A path as an error message shows it: control characters visible (a newline as \\n),
    never a line break or a terminal command."""
    from rankmeter._escape import visible

    return visible(str(path))


def _shown_value(value: Any) -> str:
    """A stored value as an error message shows it: JSON (NaN, Infinity, null, "text"), short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON (cannot come from json.loads)
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


#: A JSON escape of half a UTF-16 pair: the file may hold a lone surrogate, which no output
#: could be written with (a board naming the model would fail as it is written).
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _entry_from(path: Path, size: int | None = None) -> LeaderboardEntry:
    shown = _shown_path(path)

    def bad(reason: str) -> FormatError:
        return FormatError(
            shown,
            f"{reason}; a results folder holds only the files rankmeter embed-eval "
            "--results-dir writes",
        )

    if size is None:
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise FormatError(shown, f"cannot read it: {exc.strerror}") from None
    if size > MAX_ENTRY_BYTES:
        raise bad(
            f"too big to be a leaderboard result ({size:,} bytes; a result of 1M queries takes "
            f"well under {MAX_ENTRY_BYTES:,})"
        )
    try:
        # Read at most one byte past the cap: a file that grew since its size was taken is
        # still refused without being read whole.
        with path.open("rb") as handle:
            data = handle.read(MAX_ENTRY_BYTES + 1)
        if len(data) > MAX_ENTRY_BYTES:
            raise bad(f"too big to be a leaderboard result (more than {MAX_ENTRY_BYTES:,} bytes)")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not a leaderboard result (not UTF-8 text)") from None
    except OSError as exc:
        raise FormatError(shown, f"cannot read it: {exc.strerror}") from None
    try:
        payload = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise bad(f"not a leaderboard result (not JSON: {exc.msg} at line {exc.lineno})") from None
    except _Refused as exc:
        raise bad(f"not a leaderboard result ({exc})") from None
    except RecursionError:
        raise bad("not a leaderboard result (JSON nested too deeply)") from None
    if _ESCAPED_SURROGATE.search(text):  # "\ud83d\ude00" is a character, a lone half none
        try:
            json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            half = ord(exc.object[exc.start])
            raise bad(
                f"not a leaderboard result (a lone surrogate (\\u{half:04x}), half of a UTF-16 "
                "pair, is no character)"
            ) from None
    if not isinstance(payload, dict) or payload.get("format") != ENTRY_FORMAT:
        raise bad(f'not a leaderboard result (no "format": "{ENTRY_FORMAT}")')
    if "version" not in payload:
        raise bad(f'no "version" of its layout; this rankmeter reads version {ENTRY_VERSION}')
    if payload["version"] != ENTRY_VERSION:
        raise bad(
            f"layout version {_shown_value(payload['version'])}; this rankmeter reads "
            f"{ENTRY_VERSION}"
        )
    model, dataset = payload.get("model"), payload.get("dataset")
    metrics, per_query = payload.get("metrics"), payload.get("per_query")
    info = payload.get("info", {})
    if not isinstance(model, str) or not model or not isinstance(dataset, str) or not dataset:
        raise bad('a leaderboard result needs a non-empty "model" and "dataset"')
    if not isinstance(metrics, dict):
        raise bad('"metrics" must map metric names to numbers')
    for name, value in metrics.items():
        if not _number(value):
            raise bad(
                f'"metrics" has {name!r} = {_shown_value(value)}: a metric\'s value must be a '
                "finite number"
            )
    if not isinstance(per_query, dict):
        raise bad('"per_query" must map query ids to {metric: number}')
    for query, values in per_query.items():
        if not isinstance(values, dict):
            raise bad(
                f'"per_query" has {_shown_value(values)} for query {query!r}, not {{metric: number}}'
            )
        for name, value in values.items():
            if not _number(value):
                raise bad(
                    f'"per_query" has {name!r} = {_shown_value(value)} for query {query!r}: a '
                    "metric's value must be a finite number"
                )
    if not isinstance(info, dict):
        raise bad('"info" must be an object')
    _check_values(path, metrics, per_query)
    return LeaderboardEntry(model, dataset, metrics, per_query, info, path)


#: How far a stored mean may be from the mean of the stored per-query values (relative to
#: max(1, |mean|)): rankmeter writes both from the same numbers, so only floating-point rounding
#: (another order of summation) separates them.
MEAN_TOLERANCE = 1e-6


def _check_values(
    path: Path, metrics: Mapping[str, float], per_query: Mapping[str, Mapping[str, float]]
) -> None:
    """A stored result is read as if a user had typed it: every value in its metric's range
    (nDCG, P, R, RR, AP... in [0, 1]; DCG and the counts at least 0) and every stored mean
    equal, up to rounding, to the mean (the sum, for counts) of the file's own per-query
    values. A file that contradicts itself is refused, naming it, rather than ranked on either
    number: which of the two was edited cannot be told."""
    import numpy as np

    from rankmeter.errors import MetricError
    from rankmeter.metrics import parse_metric

    def refuse(reason: str) -> FormatError:
        return FormatError(
            _shown_path(path),
            f"{reason}; the file was edited or is corrupt: store the result again with "
            "rankmeter embed-eval --results-dir",
        )

    for name, stored in metrics.items():
        try:
            metric = parse_metric(name)
        except MetricError:
            metric = None  # a name this rankmeter does not know: its mean is still checked
        values = [v.get(name) for v in per_query.values()]
        if metric is not None:
            low, high = metric.spec.low, metric.spec.high
            places = ['"metrics"', *(f"query {q!r}" for q in per_query)]
            for where, value in zip(places, [stored, *values], strict=True):
                if where == '"metrics"' and metric.spec.aggregate == "geometric":
                    # per query a log (GMAP: log AP), over queries exp of their mean
                    lo, hi = math.exp(low), None if high is None else math.exp(high)
                else:
                    lo, hi = low, high
                if value is not None and (value < lo or (hi is not None and value > hi)):
                    shown = (
                        "[0, 1]"
                        if (lo, hi) == (0.0, 1.0)
                        else f"{lo:g} or more"
                        if hi is None
                        else f"[{lo:g}, {hi:g}]"
                    )
                    raise refuse(f"{name} = {value:g} in {where}, outside its range {shown}")
        if any(v is None for v in values):
            missing = next(q for q, v in per_query.items() if name not in v)
            raise refuse(f'"per_query" has no {name} for query {missing!r}, but "metrics" has')
        column = np.array(values, dtype=np.float64)
        if metric is not None:
            recomputed = metric.aggregate(column)
        else:
            recomputed = float(column.mean()) if len(column) else 0.0
        if abs(stored - recomputed) > MEAN_TOLERANCE * max(1.0, abs(recomputed)):
            what = "sum" if metric is not None and metric.spec.aggregate == "sum" else "mean"
            raise refuse(
                f'"metrics" says {name} = {stored:.6g}, but the {what} of its {len(column)} '
                f"per-query values is {recomputed:.6g}"
            )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_entries(results_dir: str | os.PathLike[str]) -> list[LeaderboardEntry]:
    """Every result stored in ``results_dir``; any other file there is an error naming it
    (hidden files, such as a write in progress, are skipped; a FIFO, socket or device is
    refused without being opened), and so is a result that contradicts itself: a value out of
    its metric's range, or a stored mean that is not the mean of the file's per-query values."""
    folder = Path(results_dir)
    if not folder.is_dir():
        what = "no such folder" if not folder.exists() else "not a folder"
        raise FormatError(
            _shown_path(folder), f"{what}; give the folder embed-eval --results-dir wrote"
        )
    entries: list[LeaderboardEntry] = []
    seen: dict[tuple[str, str], Path] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        try:
            status = path.stat()
        except OSError as exc:  # a link to nowhere, a file removed meanwhile
            raise FormatError(_shown_path(path), f"cannot read it: {exc.strerror}") from None
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            # Opening a FIFO would wait for a writer forever; a device is no result either.
            raise FormatError(
                _shown_path(path),
                f"not a regular file ({_kind(mode)}); a results folder holds only the files "
                "rankmeter embed-eval --results-dir writes",
            )
        entry = _entry_from(path, status.st_size)
        key = (entry.model, entry.dataset)
        if key in seen:
            raise FormatError(
                _shown_path(path),
                f"a second result for model {entry.model!r} on {entry.dataset!r} (the first: "
                f"{_shown_path(seen[key])}); remove one",
            )
        seen[key] = path
        entries.append(entry)
    if not entries:
        raise FormatError(
            _shown_path(folder), "holds no results; run rankmeter embed-eval --results-dir"
        )
    return entries


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "not a file"


# -- the leaderboard -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Significance:
    """A model against the best model on one dataset: the paired test of their per-query
    values (model minus best) on the queries both have."""

    difference: float
    pvalue: float
    adjusted: float
    worse: bool
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "difference": self.difference,
            "pvalue": self.pvalue,
            "adjusted": self.adjusted,
            "significantly_worse": self.worse,
            "n": self.n,
        }


@dataclass(frozen=True)
class Leaderboard:
    """Models x datasets on one main score.

    Attributes
    ----------
    metric : the main score (nDCG@10 by default)
    models : the models, best mean rank first
    datasets : the datasets, by name
    scores : ``{(model, dataset): score}``; a model not run on a dataset has no key
    mean_rank : ``{model: mean rank}`` over the datasets it ran on (1 = best; ties share
        the mean of their ranks)
    best : ``{dataset: model}`` with the best score, the highest (the lowest where the metric's
        spec says lower is better: RBP_resid) (ties: the first name; every model tied with it
        is also shown as best, and is not tested against it)
    significance : ``{(model, dataset): Significance}`` for every model but the best
    test, correction, alpha, resamples, seed : how significance was decided
    entries : the stored results read
    ranks : each model's rank on the table, its interval over bootstrap resamples of the
        queries and its group (``RankIntervals``; None on a board made without them)
    """

    metric: str
    models: tuple[str, ...]
    datasets: tuple[str, ...]
    scores: Mapping[tuple[str, str], float]
    mean_rank: Mapping[str, float]
    best: Mapping[str, str]
    significance: Mapping[tuple[str, str], Significance]
    entries: tuple[LeaderboardEntry, ...] = field(repr=False)
    test: str = "randomization"
    correction: str = "holm"
    alpha: float = 0.05
    resamples: int = 10_000
    seed: int = 0
    ranks: RankIntervals | None = None

    def rule(self) -> str:
        """The sentence that says how the table was made."""
        from rankmeter.metrics import parse_metric
        from rankmeter.stats import correction_phrase, paired_test_label

        lower = parse_metric(self.metric).spec.better == "lower"
        return (
            f"Main score {self.metric}{' (lower is better)' if lower else ''}; mean rank over the datasets each model ran on (1 = "
            f"best). A model is marked when it is significantly worse than the dataset's best: "
            f"{paired_test_label(self.test, resamples=self.resamples, seed=self.seed)} on the per-query values of the "
            f"queries both answered, {correction_phrase(self.correction)} over the models of "
            f"the dataset, alpha {self.alpha:g}."
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"metric", "rule", "datasets", "models": [{"model", "mean_rank", "scores":
        {dataset: {"score", "best", "significantly_worse", ...}}}]}``; with rank intervals
        (:attr:`ranks`) also ``"rank_intervals": {"level", "resamples", "seed", "rule",
        "notes"}`` and in each model's row ``"rank"`` (1 + the models with a better mean
        rank), ``"rank_interval"`` (``[low, high]``, or null without per-query values) and
        ``"group"`` (an integer, 1 = the top group, or null)."""
        rows = []
        for model in self.models:
            cells: dict[str, Any] = {}
            for dataset in self.datasets:
                if (model, dataset) not in self.scores:
                    continue
                cell: dict[str, Any] = {
                    "score": self.scores[model, dataset],
                    "best": self.scores[model, dataset] == self.scores[self.best[dataset], dataset],
                }
                tested = self.significance.get((model, dataset))
                if tested is not None:
                    cell.update(tested.to_dict())
                cells[dataset] = cell
            row: dict[str, Any] = {
                "model": model,
                "mean_rank": self.mean_rank[model],
                "scores": cells,
            }
            if self.ranks is not None:
                bounds = self.ranks.interval.get(model)
                row["rank"] = self.ranks.rank[model]
                row["rank_interval"] = None if bounds is None else list(bounds)
                row["group"] = self.ranks.group.get(model)
            rows.append(row)
        payload: dict[str, Any] = {
            "metric": self.metric,
            "rule": self.rule(),
            "datasets": list(self.datasets),
            "models": rows,
        }
        if self.ranks is not None:
            payload["rank_intervals"] = self.ranks.to_dict()
        return payload


def read_leaderboard(
    results_dir: str | os.PathLike[str],
    *,
    metric: str = MAIN_METRIC,
    alpha: float = 0.05,
    resamples: int = 1_000,
    seed: int = 0,
    level: float = 0.95,
) -> Leaderboard:
    """Read a results folder (written by ``rankmeter embed-eval --results-dir``) into a
    :class:`Leaderboard`.

    A file that is not a stored result, or a result without ``metric``, is an error naming
    the file. ``resamples``, ``seed`` and ``level``: the rank intervals' bootstrap (see
    :func:`leaderboard_of`), checked before any file is read.
    """
    from rankmeter import _validate

    _validate.alpha(alpha)
    checked = _interval_settings(resamples, seed, level)
    return leaderboard_of(read_entries(results_dir), metric=metric, alpha=alpha, **checked)


def _interval_settings(resamples: Any, seed: Any, level: Any) -> dict[str, Any]:
    """The rank intervals' settings, checked with the library's one wording for each."""
    from rankmeter import _validate
    from rankmeter.vector._rank_intervals import DEFAULT_RESAMPLES, MIN_RESAMPLES

    return {
        "resamples": _validate.resamples(
            resamples,
            low=MIN_RESAMPLES,
            what="bootstrap resamples of the queries",
            default=DEFAULT_RESAMPLES,
            p_values=False,
            kept=False,
        ),
        "seed": _validate.seed(seed),
        "level": _validate.level(level),
    }


def leaderboard_of(
    entries: Iterable[LeaderboardEntry],
    *,
    metric: str = MAIN_METRIC,
    alpha: float = 0.05,
    resamples: int = 1_000,
    seed: int = 0,
    level: float = 0.95,
) -> Leaderboard:
    """The :class:`Leaderboard` of these results (see :func:`read_leaderboard`).

    Each model's rank gets its ``level`` interval from ``resamples`` paired bootstrap resamples
    of each dataset's queries (seeded by ``seed``: the same seed gives the same intervals), and
    the models are grouped where their intervals cannot be told apart
    (:mod:`rankmeter.vector._rank_intervals`). An entry may hold only means (no per-query
    values, e.g. from a published table): it is ranked, but not tested and given no interval.

    >>> a = LeaderboardEntry("a", "d", {"P@1": 1.0}, {"1": {"P@1": 1.0}, "2": {"P@1": 1.0}})
    >>> b = LeaderboardEntry("b", "d", {"P@1": 0.5}, {"1": {"P@1": 1.0}, "2": {"P@1": 0.0}})
    >>> board = leaderboard_of([b, a], metric="P@1")
    >>> board.models, board.best["d"], dict(board.mean_rank)
    (('a', 'b'), 'a', {'a': 1.0, 'b': 2.0})
    """
    import numpy as np
    from scipy.stats import rankdata

    from rankmeter import _validate
    from rankmeter.metrics import parse_metric
    from rankmeter.stats import correct

    checked = _interval_settings(resamples, seed, level)
    level = _validate.alpha(alpha)
    label = str(parse_metric(metric))
    given = list(entries)
    if not given:
        raise PolicyError("no results to rank")
    for entry in given:
        if _value(entry.metrics, label) is None:
            where = f" ({_shown_path(entry.path)})" if entry.path is not None else ""
            raise PolicyError(
                f"the result of {entry.model!r} on {entry.dataset!r}{where} has no {label} "
                f"(it has {', '.join(entry.metrics) or 'no metric'}); choose one of those or "
                f"evaluate with -m {label}"
            )
    datasets = tuple(sorted({e.dataset for e in given}))
    scores: dict[tuple[str, str], float] = {}
    by_key: dict[tuple[str, str], LeaderboardEntry] = {}
    for entry in given:
        key = (entry.model, entry.dataset)
        if key in by_key:
            raise PolicyError(f"two results for model {entry.model!r} on {entry.dataset!r}")
        by_key[key] = entry
        value = _value(entry.metrics, label)
        assert value is not None  # checked above
        scores[key] = value
    _check_same_queries(given)
    per_query = _per_query_values(by_key, label)
    ranks: dict[str, list[float]] = {}
    best: dict[str, str] = {}
    significance: dict[tuple[str, str], Significance] = {}
    better = parse_metric(label).spec.better
    sign = -1.0 if better == "lower" else 1.0  # sign * score: larger is better
    for dataset in datasets:
        here = sorted(m for m, d in scores if d == dataset)
        values = sign * np.array([scores[m, dataset] for m in here])
        for model, rank in zip(here, rankdata(-values, method="average"), strict=True):
            ranks.setdefault(model, []).append(float(rank))
        top = here[int(np.argmax(values))]
        best[dataset] = top
        # A model with only a mean here cannot be paired: it is not tested, and nothing is
        # tested against a best that has only a mean.
        others = [m for m in here if m != top and by_key[m, dataset].per_query]
        if not by_key[top, dataset].per_query or not others:
            continue
        tested = [_paired(by_key[top, dataset], by_key[m, dataset], label) for m in others]
        pvalues = _pvalues(tested)
        corrected = correct(np.array(pvalues), "holm", alpha=level)
        for i, (model, diffs) in enumerate(zip(others, tested, strict=True)):
            mean = float(diffs.mean()) if len(diffs) else math.nan
            significance[model, dataset] = Significance(
                difference=mean,
                pvalue=pvalues[i],
                adjusted=float(corrected.adjusted[i]),
                worse=bool(corrected.significant[i]) and sign * mean < 0,
                n=len(diffs),
            )
    mean_rank = {m: sum(r) / len(r) for m, r in ranks.items()}
    models = tuple(sorted(mean_rank, key=lambda m: (mean_rank[m], m)))
    from rankmeter.vector._rank_intervals import rank_intervals

    intervals = rank_intervals(
        per_query, scores, models, mean_rank, metric=label, better=better, **checked
    )
    return Leaderboard(
        metric=label,
        models=models,
        datasets=datasets,
        scores=MappingProxyType(scores),
        mean_rank=MappingProxyType(mean_rank),
        best=MappingProxyType(best),
        significance=MappingProxyType(significance),
        entries=tuple(given),
        alpha=level,
        ranks=intervals,
    )


def entry_of(
    result: Any,
    *,
    dataset: str,
    info: Mapping[str, Any],
    model: str | None = None,
) -> LeaderboardEntry:
    """A :class:`LeaderboardEntry` from a retriever's evaluation
    (:class:`rankmeter.vector.retrieval.RetrievalResult`) and what ran (``info``)."""
    data = result.to_dict(per_query=True)
    return LeaderboardEntry(
        model=model or result.model,
        dataset=dataset,
        metrics=data["metrics"],
        per_query=data["per_query"],
        info={
            **info,
            "collection": result.collection,
            "n_queries": result.n_queries,
            "unanswered": list(result.unanswered),
            "queries": data.get("queries", ""),
        },
    )
