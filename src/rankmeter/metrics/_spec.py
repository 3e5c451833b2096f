"""A metric is a frozen spec (its facts, in one place) plus one vectorised kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rankmeter.errors import MetricError

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked

Kernel = Callable[["Ranked", "Metric"], "FloatArray"]


@dataclass(frozen=True)
class Param:
    """A metric parameter: ``name=value`` inside the parentheses of a metric name."""

    name: str
    kind: Literal["number", "choice"]
    default: Any
    description: str
    choices: tuple[str, ...] = ()

    def convert(self, metric: str, text: Any) -> Any:
        if self.kind == "choice":
            value = str(text).strip().lower()
            if value not in self.choices:
                raise MetricError(
                    f"{metric!r}: {self.name}={text!r} is not allowed; use one of "
                    f"{', '.join(self.choices)}"
                )
            return value
        try:
            number = float(text)
        except (TypeError, ValueError):
            raise MetricError(f"{metric!r}: {self.name}={text!r} must be a number") from None
        if not np.isfinite(number):
            raise MetricError(f"{metric!r}: {self.name}={text!r} must be a finite number")
        return int(number) if number.is_integer() else number


@dataclass(frozen=True)
class MetricSpec:
    """Everything there is to know about one metric family.

    ``cutoff`` says whether ``@k`` is ``"required"``, ``"optional"`` or ``"none"``. ``trec_names``
    maps the trec_eval measure names to this metric: a name used with ``.k`` takes a cutoff, a name
    used bare takes none. ``aggregate`` is ``"mean"`` over queries, or ``"sum"`` for counts.
    """

    name: str
    description: str
    formula: str
    kernel: Kernel = field(repr=False)
    cutoff: Literal["required", "optional", "none"] = "optional"
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    trec_names: tuple[tuple[str, bool], ...] = ()
    aggregate: Literal["mean", "sum"] = "mean"
    integer: bool = False
    reference: str = ""
    #: what the per-rank explanation shows: grade, gain, discount, relevant, judged
    uses: tuple[str, ...] = ("grade", "relevant")

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

    ``str(metric)`` is canonical and parses back to an equal Metric.
    """

    spec: MetricSpec
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

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

    def aggregate(self, values: FloatArray) -> float:
        if self.spec.aggregate == "sum":
            return float(values.sum())
        return float(values.mean()) if len(values) else 0.0

    @property
    def trec_name(self) -> str | None:
        if self.params:
            return None
        return self.spec.trec_name(self.cutoff)

    def __str__(self) -> str:
        text = self.spec.name
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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
