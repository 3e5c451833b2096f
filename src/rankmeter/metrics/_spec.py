"""A metric is a frozen spec (its facts, in one place) plus one vectorised kernel."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rankmeter._validate import number_text
from rankmeter.errors import MetricError

if TYPE_CHECKING:
    import numpy.typing as npt

    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked

    #: One value per rank of a query: a list or a NumPy array.
    PerRank = Sequence[Any] | npt.NDArray[Any]

Kernel = Callable[["Ranked", "Metric"], "FloatArray"]
#: A family's kernel for many cutoffs at once: (Ranked, the metric, cutoffs) -> an array of
#: shape (n_queries, len(cutoffs)), column j the metric at cutoffs[j].
CutoffKernel = Callable[["Ranked", "Metric", Sequence[int]], "FloatArray"]
#: A family's explain hook: (one query's Ranked, the metric, its value there) -> Breakdown.
Explainer = Callable[["Ranked", "Metric", float], "Breakdown"]


@dataclass(frozen=True)
class Breakdown:
    """How one query's value follows from its ranking: what a family's ``explain`` hook returns.

    The hook gets a :class:`Ranked` holding exactly one query and reads the same arrays (and the
    same helpers) as the kernel. rankmeter.explanation turns this into an Explanation.

    Attributes
    ----------
    steps : human-readable lines, from the inputs to the value
    columns : the metric's own per-rank columns named in ``spec.uses`` (``grade``, ``judged`` and
        ``relevant`` are filled in for every metric), one value per rank of the query; None
        leaves a cell blank
    contributes : per rank, whether it changes the value (those ranks are always shown);
        None means the relevant ranks
    limit : how many ranks the metric looks at (its cutoff; R for R-Prec); None for all
    ideal : the ideal ordering's rows, where the metric normalises by one
    quiet : what the ranks that are summarised instead of shown have in common
    """

    steps: tuple[str, ...]
    columns: Mapping[str, PerRank] = field(default_factory=dict)
    contributes: PerRank | None = None
    limit: int | None = None
    ideal: tuple[dict[str, Any], ...] = ()
    quiet: str = "none of them changes the value"


# A number as a metric name writes it: ASCII digits, a sign, a point, an exponent; nan and inf
# get through to be refused as not finite.
_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|inf|infinity)", re.IGNORECASE
)


@dataclass(frozen=True)
class Param:
    """A metric parameter: ``name=value`` inside the parentheses of a metric name.

    A number is checked against its bounds (``low``/``high``, either optional; ``open_low``
    and ``open_high`` leave the bound itself out) and must be finite; a choice must be one of
    ``choices``. Both through :mod:`rankmeter._validate`, worded as every other parameter:

    >>> persistence = Param("p", "number", 0.8, "persistence", low=0, high=1, open_low=True,
    ...                     open_high=True)
    >>> persistence.convert("RBP(p=0.5)", "0.5")
    0.5
    >>> persistence.convert("RBP(p=1.5)", "1.5")
    Traceback (most recent call last):
    ...
    rankmeter.errors.MetricError: 'RBP(p=1.5)': p=1.5 must be a number strictly between 0 and 1
    """

    name: str
    kind: Literal["number", "choice"]
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def convert(self, metric: str, text: Any) -> Any:
        """The value of ``text`` (as written in the metric name ``metric``), checked."""
        from rankmeter._validate import choice, real

        try:
            if self.kind == "choice":
                value = str(text).strip().lower()
                given = value if value in self.choices else text
                return choice(self.name, given, self.choices, error=MetricError)
            try:
                # ASCII decimals only, as in a cutoff: float() also reads other scripts'
                # digits and "1_0"
                if isinstance(text, str) and not _NUMBER.fullmatch(text.strip()):
                    raise ValueError(text)
                number: Any = float(text)
                number = int(number) if number.is_integer() else number  # p=1, not p=1.0
            except (TypeError, ValueError):
                number = text  # not a number: refused below, in the same words
            checked = real(
                self.name,
                number,
                low=self.low,
                high=self.high,
                open_low=self.open_low,
                open_high=self.open_high,
                error=MetricError,
            )
        except MetricError as exc:
            raise MetricError(f"{metric!r}: {exc}") from None
        return int(checked) if checked.is_integer() else checked


@dataclass(frozen=True)
class WorkedExample:
    """One query worked through by hand, for docs/metrics.md: its judgments, a ranking, the
    metric and its value, with the arithmetic in ``working``. A test evaluates every example
    through :func:`rankmeter.evaluate` and checks ``value`` (written to as many decimals as
    shown), so the docs cannot drift from the kernel.

    ``judgments`` maps doc id -> grade (a negative grade: pooled, not judged); ``ranking`` is
    the doc ids top first (ids without a judgment are unjudged).
    """

    judgments: Mapping[str, float]
    ranking: tuple[str, ...]
    metric: str
    value: str
    working: str


@dataclass(frozen=True)
class MetricSpec:
    """Everything there is to know about one metric family.

    ``cutoff`` says whether ``@k`` is ``"required"``, ``"optional"`` or ``"none"``. ``trec_names``
    maps the trec_eval measure names to this metric: a name used with ``.k`` takes a cutoff, a name
    used bare takes none. ``aggregate`` is ``"mean"`` over queries, ``"sum"`` for counts, or
    ``"geometric"``: the per-query values are logarithms and the aggregate is exp of their mean
    (trec_eval's gm_map), so the mean printed is a geometric mean while paired tests over the
    per-query values compare logarithms.
    """

    name: str
    description: str
    formula: str
    kernel: Kernel = field(repr=False)
    cutoff: Literal["required", "optional", "none"] = "optional"
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    trec_names: tuple[tuple[str, bool], ...] = ()
    aggregate: Literal["mean", "sum", "geometric"] = "mean"
    integer: bool = False
    #: which way is better: ``"higher"`` (most metrics) or ``"lower"`` (a residual such as
    #: RBP_resid: less left to unjudged documents); comparisons' wins and losses, the regression
    #: gate, the leaderboard's ranks and every better/worse word read it. The counts (NumRet,
    #: NumRel) and DCG are "higher" here: more, if not better, as they have always been shown
    better: Literal["higher", "lower"] = "higher"
    #: the largest value one query can have (every metric is 0 at least): 1.0 for the measures
    #: in [0, 1], None where there is no bound (DCG, the counts); what reads stored values
    #: back (the leaderboard) refuses a value outside [0, high]
    high: float | None = 1.0
    #: the smallest value one query can have: 0 but for a log-valued metric (GMAP: log 0.00001)
    low: float = 0.0
    reference: str = ""
    #: the per-rank columns an explanation shows, in order: grade, judged, relevant (filled in
    #: for every metric) and the columns the ``explain`` hook computes (gain, discount, ...)
    uses: tuple[str, ...] = ("grade", "relevant")
    #: how one query's value follows from its ranking (see :class:`Breakdown`)
    explain: Explainer | None = field(default=None, repr=False)
    #: the metric at many cutoffs at once (see :meth:`Metric.compute_at`); a family that has
    #: one computes its single cutoff through it too, so both are one definition
    at_cutoffs: CutoffKernel | None = field(default=None, repr=False)
    #: what the metric does at its edges (no relevant document, an empty ranking, ties,
    #: unjudged or negative grades, ...), one sentence each, for docs/metrics.md
    edge_cases: tuple[str, ...] = ()
    #: one query worked through by hand (docs/metrics.md; tested); not part of the spec's
    #: identity (its judgments are a dict: a Metric must stay hashable)
    example: WorkedExample | None = field(default=None, repr=False, compare=False)
    #: what ``@x`` means: a rank cutoff (``P@10``), or a recall level in [0, 1] (``IPrec@0.5``),
    #: which is the metric's parameter ``recall`` (the spec then takes no rank cutoff)
    cutoff_kind: Literal["rank", "recall level"] = "rank"

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def trec_name(self, cutoff: int | None) -> str | None:
        """The trec_eval measure name this metric prints as (``P_10``, ``map``), if any."""
        for name, takes_cutoff in self.trec_names:
            if takes_cutoff and cutoff is not None:
                return f"{name}_{cutoff}"
            if not takes_cutoff and cutoff is None:
                return name
        return None


@dataclass(frozen=True)
class Metric:
    """One measurable quantity: a spec with its parameters and cutoff, e.g. ``nDCG(gain=exp)@10``.

    ``str(metric)`` is canonical and parses back to an equal Metric. ``label`` is the name the
    user wrote (``"MRR@10"``, ``"ndcg_cut.10"``): results, tables and reports are keyed by it.
    It is not part of the metric's identity: ``MRR@10`` and ``RR@10`` are equal metrics.

    >>> from rankmeter.metrics import parse_metric
    >>> m = parse_metric("MRR@10")
    >>> str(m), m.label, m == parse_metric("RR@10")
    ('RR@10', 'MRR@10', True)
    """

    spec: MetricSpec
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    label: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", str(self))

    def labelled(self, label: str) -> Metric:
        """The same metric under another name (the name a user wrote for it)."""
        from dataclasses import replace

        return replace(self, label=label)

    def get(self, name: str) -> Any:
        """The value of a parameter (its default when not given)."""
        for key, value in self.params:
            if key == name:
                return value
        param = self.spec.param(name)
        if param is None:
            raise KeyError(name)
        return param.default

    def rel(self, ranked: Ranked) -> float:
        """The relevance level: the metric's own ``rel`` if given, else the evaluation's."""
        value = self.get("rel") if self.spec.param("rel") else None
        return ranked.rel if value is None else float(value)

    def compute(self, ranked: Ranked) -> FloatArray:
        """Per-query values, one per query of ``ranked``."""
        values = self.spec.kernel(ranked, self)
        return np.asarray(values, dtype=np.float64)

    def compute_at(self, ranked: Ranked, cutoffs: Sequence[int]) -> FloatArray:
        """Per-query values at each cutoff, shape (n_queries, len(cutoffs)).

        Column j is exactly what this metric with the cutoff ``cutoffs[j]`` computes (its own
        cutoff, if any, is not used): the metric@k curves read these. Families whose kernel
        adds up ranks (P, R, nDCG, DCG, ERR, nERR, RBP, RBP_resid) give every cutoff from one
        pass; the others are computed one cutoff at a time.

        >>> import numpy as np
        >>> from rankmeter.data import Qrels, Run
        >>> from rankmeter.metrics import parse_metric
        >>> from rankmeter.metrics._ranked import join
        >>> qrels = Qrels.from_dict({"q": {"a": 1, "c": 1}})
        >>> ranked = join(qrels, Run.from_dict({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}))
        >>> parse_metric("P").compute_at(ranked, [1, 2, 3])
        array([[1.        , 0.5       , 0.66666667]])
        """
        from dataclasses import replace

        from rankmeter import _validate

        if self.spec.cutoff_kind == "recall level":
            raise MetricError(
                f"{self}: {self.spec.name}@x takes a recall level, not a rank, so it has no "
                "value at a rank cutoff (no metric@k curve)"
            )
        if self.spec.cutoff == "none":
            raise MetricError(f"{self.spec.name} takes no cutoff, so it has no value at a cutoff")
        ks = [
            _validate.integer("cutoff", k, low=1, what="a rank", error=MetricError) for k in cutoffs
        ]
        if self.spec.at_cutoffs is not None:
            return np.asarray(self.spec.at_cutoffs(ranked, self, ks), dtype=np.float64)
        columns = [replace(self, cutoff=k, label="").compute(ranked) for k in ks]
        if not columns:
            return np.zeros((ranked.n_queries, 0), dtype=np.float64)
        return np.column_stack(columns)

    def aggregate(self, values: FloatArray) -> float:
        if self.spec.aggregate == "sum":
            return float(values.sum())
        if not len(values):
            return 0.0
        if self.spec.aggregate == "geometric":  # the values are logs (trec_eval gm_map)
            return math.exp(float(values.mean()))
        with np.errstate(over="ignore"):
            mean = float(values.mean())
        if not math.isfinite(mean) and np.isfinite(values).all():
            # Finite values whose sum overflows (DCGs of grades near 1e308): a mean is never
            # beyond the largest value, so it is taken of the values scaled by a power of two.
            exponent = math.frexp(float(np.abs(values).max()))[1]
            mean = math.ldexp(float(np.ldexp(values, -exponent).mean()), exponent)
        return mean

    @property
    def trec_name(self) -> str | None:
        if self.spec.cutoff_kind == "recall level":
            # trec_eval prints a recall level to two decimals: iprec_at_recall_0.50
            names = [name for name, takes in self.spec.trec_names if takes]
            others = any(k != "recall" for k, _ in self.params)
            if others or not names or self.get("recall") is None:
                return None
            return f"{names[0]}_{self.get('recall'):.2f}"
        if self.params:
            return None
        return self.spec.trec_name(self.cutoff)

    def __str__(self) -> str:
        text = self.spec.name
        level = self.spec.cutoff_kind == "recall level"
        shown = [(k, v) for k, v in self.params if not (level and k == "recall")]
        if shown:
            text += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in shown) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        if level and self.get("recall") is not None:
            text += f"@{_fmt(self.get('recall'))}"
        return text


def _fmt(value: Any) -> str:
    return number_text(value) if isinstance(value, float) else str(value)


#: The relevance level shared by binary metrics; None means "the evaluation's ``rel``".
REL = Param(
    "rel",
    "number",
    None,
    "minimum grade counted relevant (default: the evaluation's --rel, 1 as in trec_eval)",
)


def zeros(ranked: Ranked) -> FloatArray:
    return np.zeros(ranked.n_queries, dtype=np.float64)


def ratio(numerator: Any, denominator: Any) -> FloatArray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den != 0)


# -- explanations: how numbers are written in the steps (one style for every metric) ----------


#: From here on, numbers in explanations and messages are written in scientific notation.
LONG_NUMBER = 1e15


def num(value: Any) -> str:
    """A term as the steps write it: integers plainly, others to 3 decimals (``1.585``)."""
    x = float(value)
    if abs(x) >= LONG_NUMBER:
        return f"{x:g}"  # 1e+308, not 309 digits
    if x.is_integer():
        return str(int(x))
    text = f"{x:.3f}".rstrip("0").rstrip(".")
    return f"{x:.2g}" if text in ("0", "-0") else text


def approx(value: Any) -> str:
    """A result as the steps write it: ``4.0``, ``8.89``, ``0.96``; small values to 2 digits."""
    x = float(value)
    if abs(x) >= LONG_NUMBER:
        return f"{x:.3g}"
    if x.is_integer():
        return f"{x:.1f}"
    if abs(x) >= 0.1:
        return str(round(x, 2))
    return f"{x:.2g}"


def ranks(positions: Any, most: int = 12) -> str:
    """1-based ranks of 0-based positions, as a list shortened in the middle: ``1, 3, 10``."""
    shown = [str(int(p) + 1) for p in positions]
    if len(shown) > most:
        shown = [*shown[: most - 2], "...", shown[-1]]
    return ", ".join(shown)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"
