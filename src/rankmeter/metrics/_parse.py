"""The metric-name grammar: ``Name(param=value,...)@cutoff`` plus trec_eval names.

Examples: ``nDCG@10``, ``nDCG(gain=exp)@10``, ``P(rel=2)@5``, ``RR@10``, ``AP``, ``R@100``;
aliases ``MRR``, ``MAP``, ``Recall@100``, ``NDCG@10``, ``Hit@5``; trec_eval names ``ndcg_cut.10``,
``P.10``, ``P_10``, ``recip_rank``, ``map``, ``map_cut.5,10`` (several cutoffs), ``Rprec``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from rankmeter.errors import MetricError
from rankmeter.metrics._registry import BY_NAME, BY_TREC_NAME, SPECS, normalize
from rankmeter.metrics._spec import Metric, MetricSpec

_GRAMMAR = re.compile(
    r"(?P<name>[A-Za-zα][\w\-]*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<cutoff>\S*))?"
)
#: The largest cutoff a metric takes (2**31 - 1): no ranking is longer, and a larger one would
#: overflow the C kernels' integers instead of being refused.
MAX_CUTOFF = 2**31 - 1
# Cutoffs are ASCII digits ([0-9], not \d: int() reads every script's digits, and "P@٥" would
# be P@5).
_TREC = re.compile(r"(?P<base>[A-Za-z][\w\-]*?)[._](?P<cutoffs>[0-9]+(?:,[0-9]+)*)")
# Recall levels in a trec_eval name: iprec_at_recall_0.50, iprec_at_recall.0.5,0.25.
_LEVEL = r"[0-9]*\.?[0-9]+"
_TREC_LEVELS = re.compile(rf"(?P<base>[A-Za-z][\w\-]*?)[._](?P<levels>{_LEVEL}(?:,{_LEVEL})*)")


def parse_metric(text: str | Metric) -> Metric:
    """Parse one metric name.

    >>> str(parse_metric("ndcg_cut.10"))
    'nDCG@10'
    >>> str(parse_metric("MRR@10"))
    'RR@10'
    >>> parse_metric("nDCG(gain=exp)@10").get("gain")
    'exp'
    """
    metrics = _parse(text)
    if len(metrics) != 1:
        raise MetricError(f"{text!r} names {len(metrics)} metrics; give one (or use parse_metrics)")
    return metrics[0]


def parse_metrics(texts: Iterable[str | Metric] | str) -> tuple[Metric, ...]:
    """Parse metric names, expanding trec_eval cutoff lists (``P.5,10``).

    Each metric keeps the name it was written with (its ``label``). A metric asked for twice,
    under any two names (``MRR@10`` and ``RR@10``), is kept once, under the first name given.

    >>> [m.label for m in parse_metrics(["MRR@10", "ndcg_cut.10", "RR@10", "P.5,10"])]
    ['MRR@10', 'ndcg_cut.10', 'P.5', 'P.10']
    """
    if isinstance(texts, str):
        texts = [texts]
    out: list[Metric] = []
    labels: dict[str, Metric] = {}
    for text in texts:
        for metric in _parse(text):
            if metric in out:
                continue
            other = labels.get(metric.label)
            if other is not None:  # only possible with Metric objects labelled by hand
                raise MetricError(
                    f"two different metrics are labelled {metric.label!r} ({other} and "
                    f"{metric}); give each its own label"
                )
            labels[metric.label] = metric
            out.append(metric)
    if not out:
        raise MetricError("no metrics given")
    return tuple(out)


# A name longer than this is quoted in an error by its start and its length.
_SHOWN = 60


def _parse(text: Any) -> list[Metric]:
    try:
        return _parse_text(text)
    except MetricError as exc:
        if not isinstance(text, str) or len(text) <= _SHOWN:
            raise
        shown = f"{text[:_SHOWN]!r}... ({len(text):,} characters)"
        raise MetricError(str(exc).replace(repr(text), shown)) from None


def _parse_text(text: Any) -> list[Metric]:
    if isinstance(text, Metric):
        return [text]
    if not isinstance(text, str):
        raise MetricError(f"a metric name must be a string, not {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise MetricError("empty metric name; try nDCG@10, P@10, R@100, RR or AP")
    if "@" not in stripped and "(" not in stripped:
        if stripped[-1] in "._" and _takes_cutoff(stripped[:-1]):
            # "P." is a trec_eval name cut short, not P without a cutoff.
            example = "0.5" if _recall_spec(stripped[:-1]) else "10"
            raise MetricError(
                f"{text!r} is incomplete: give the cutoff after the {stripped[-1]!r}, e.g. "
                f"{stripped}{example}"
            )
        spec = BY_NAME.get(normalize(stripped))
        if spec is not None:
            return [_build(text, spec, None, {})]
        trec = BY_TREC_NAME.get(normalize(stripped))
        if trec is not None:
            return [_build(text, trec[0], None, {})]
        if normalize(stripped) + "." in BY_TREC_NAME:
            leveled = _recall_spec(stripped)
            if leveled is not None:
                # trec_eval's bare iprec_at_recall: its 11 levels, labelled as it prints them.
                return [
                    _build(text, leveled, None, {"recall": r}, label=f"{stripped}_{r:.2f}")
                    for r in _DEFAULT_LEVELS
                ]
            raise MetricError(f"{text!r} needs a cutoff, e.g. {stripped}.10")
        levels = _TREC_LEVELS.fullmatch(stripped)
        leveled = None if levels is None else _recall_spec(levels["base"])
        if levels is not None and leveled is not None:
            written = levels["levels"].split(",")
            values = [_recall_level(text, level) for level in written]
            if len(values) == 1:
                return [_build(text, leveled, None, {"recall": values[0]})]
            head = stripped[: len(levels["base"]) + 1]
            return [
                _build(text, leveled, None, {"recall": r}, label=f"{head}{w}")
                for r, w in zip(values, written, strict=True)
            ]
        split = _TREC.fullmatch(stripped)
        if split:
            base = normalize(split["base"])
            found = BY_TREC_NAME.get(base + ".") or (
                (BY_NAME[base], True) if base in BY_NAME else None
            )
            bare = BY_TREC_NAME.get(base)
            if found is None and bare is not None and bare[0].cutoff == "none":
                raise MetricError(f"{text!r}: {bare[0].name} takes no cutoff; use {bare[0].name}")
            if found is not None:
                cutoffs = [_cutoff(text, c) for c in split["cutoffs"].split(",")]
                if len(cutoffs) == 1:
                    return [_build(text, found[0], cutoffs[0], {})]
                # "P.5,10" asks for P.5 and P.10: each is labelled as it would be written alone.
                head = stripped[: len(split["base"]) + 1]
                return [_build(text, found[0], c, {}, label=f"{head}{c}") for c in cutoffs]
    match = _GRAMMAR.fullmatch(stripped)
    if match is None:
        raise _unknown(text)
    spec = BY_NAME.get(normalize(match["name"]))
    if spec is None:
        trec = BY_TREC_NAME.get(normalize(match["name"]))
        if trec is not None and trec[0].cutoff == "none" and match["cutoff"] is not None:
            # gm_map@10: a measure without a cutoff, not the closest name that takes one (AP@10)
            name = trec[0].name
            raise MetricError(f"{text!r}: {name} takes no cutoff; use {name}")
        raise _unknown(text, match["name"], match["cutoff"])
    params = _params(text, spec, match["params"])
    if match["cutoff"] is not None and spec.cutoff_kind == "recall level":
        if "recall" in params:
            raise MetricError(f"{text!r}: the recall level is given twice (after @ and recall=)")
        params["recall"] = _recall_level(text, match["cutoff"])
        return [_build(text, spec, None, params)]
    cutoff = None if match["cutoff"] is None else _cutoff(text, match["cutoff"])
    return [_build(text, spec, cutoff, params)]


def _takes_cutoff(name: str) -> bool:
    """Whether ``name`` is a metric (or trec_eval measure) that takes a cutoff."""
    key = normalize(name)
    spec = BY_NAME.get(key)
    return key + "." in BY_TREC_NAME or (spec is not None and spec.cutoff != "none")


#: trec_eval's recall levels for a bare iprec_at_recall.
_DEFAULT_LEVELS = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)


def _recall_spec(name: str) -> MetricSpec | None:
    """The metric ``name`` names (or the trec_eval measure), if ``@`` gives it a recall level."""
    key = normalize(name)
    found = BY_TREC_NAME.get(key + ".")
    spec = found[0] if found is not None else BY_NAME.get(key)
    return spec if spec is not None and spec.cutoff_kind == "recall level" else None


def _recall_level(text: str, value: str) -> float:
    """A recall level: a number from 0 to 1 (``IPrec@0.5``), never a rank."""
    written = value.strip()
    shown = written if len(written) <= 30 else f"{written[:20]}... ({len(written)} characters)"
    if not re.fullmatch(r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", written):
        raise MetricError(
            f"{text!r}: the recall level must be a number between 0 and 1, got {shown!r}"
        )
    level = float(written)
    if not 0 <= level <= 1:
        raise MetricError(f"{text!r}: the recall level must be between 0 and 1, got {shown}")
    return int(level) if level.is_integer() else level


def _cutoff(text: str, value: str) -> int:
    if not re.fullmatch(r"\+?[0-9]+", value.strip()):
        hint = ""
        if "," in value:
            hint = " (name each metric separately, e.g. -m P@1 -m P@2, or use P.1,2)"
        shown = (
            repr(value) if len(value) <= 30 else f"{value[:20]!r}... ({len(value):,} characters)"
        )
        raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {shown}{hint}")
    digits = value.strip().lstrip("+").lstrip("0") or "0"
    # Checked on the digits before int(): Python refuses to read past 4,300 of them.
    if len(digits) > len(str(MAX_CUTOFF)) or int(digits) > MAX_CUTOFF:
        shown = digits if len(digits) <= 30 else f"{digits[:20]}... ({len(digits)} digits)"
        raise MetricError(
            f"{text!r}: the cutoff must be a positive integer up to {MAX_CUTOFF:,}, got {shown}"
        )
    cutoff = int(digits)
    if cutoff <= 0:
        raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {cutoff}")
    return cutoff


def _params(text: str, spec: MetricSpec, body: str | None) -> dict[str, Any]:
    if body is None or not body.strip():
        return {}
    params: dict[str, Any] = {}
    for item in body.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise MetricError(f"{text!r}: parameters are written name=value, got {item.strip()!r}")
        param = spec.param(key)
        if param is None:
            valid = ", ".join(p.name for p in spec.params) or "none"
            raise MetricError(f"{text!r}: {spec.name} has no parameter {key!r} (valid: {valid})")
        if key in params:
            raise MetricError(f"{text!r}: parameter {key!r} is given twice")
        params[key] = param.convert(text, value.strip())
    return params


def _build(
    text: str,
    spec: MetricSpec,
    cutoff: int | None,
    params: dict[str, Any],
    *,
    label: str | None = None,
) -> Metric:
    if spec.cutoff_kind == "recall level" and params.get("recall") is None:
        raise MetricError(
            f"{text!r}: {spec.name} needs a recall level from 0 to 1, e.g. {spec.name}@0.5"
        )
    if cutoff is None and spec.cutoff == "required":
        raise MetricError(f"{text!r}: {spec.name} needs a cutoff, e.g. {spec.name}@10")
    if cutoff is not None and spec.cutoff == "none":
        raise MetricError(f"{text!r}: {spec.name} takes no cutoff; use {spec.name}")
    ordered = tuple(
        (p.name, params[p.name])
        for p in spec.params
        if p.name in params and params[p.name] != p.default
    )
    # The label is the name as written, without its whitespace ("nDCG @ 10" -> "nDCG@10").
    written = "".join(text.split()) if label is None else label
    return Metric(spec, cutoff, ordered, label=written)


def metric_names() -> list[str]:
    """Canonical names, with @k where a cutoff is usual (for help and suggestions)."""
    return [
        s.name + ("@r" if s.cutoff_kind == "recall level" else "@k" if s.cutoff != "none" else "")
        for s in SPECS
    ]


# Well-known measures (trec_eval's, ir_measures', the literature's) that rankmeter does not
# compute yet: asked for by name, they are "not supported yet", never "did you mean" a
# supported metric whose name happens to look alike (ERR is not RR, S-recall is not R).
_NOT_YET_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("NERR8", "NERR9", "NERR10", "NERR11"), "the C/W/L approximations of ERR (NERR8-NERR11)"),
    (("AP_IA", "P_IA", "nDCG_IA", "NRBP"), "the intent-aware measures"),
    (("infNDCG",), "infNDCG (inferred nDCG)"),
    (("gm_bpref",), "gm_bpref (geometric mean of Bpref)"),
    (("RBO",), "RBO (rank-biased overlap of two rankings; Compat is a run against its ideal)"),
    (("F", "F1", "set_F", "SetF", "F-measure"), "the F-measure"),
    (("set_map", "SetAP", "set_relative_P", "relative_P", "SetR"), "the set measures"),
    (("ndcg_rel", "Rndcg", "ndcg_p", "SDCG"), "trec_eval's other nDCG variants"),
    (("Rprec_mult", "Rprec_mult_avgjg", "map_avgjg", "P_avgjg"), "the averages over judges"),
    (("utility", "binG", "G", "INST", "INSQ", "num_q", "NumQ", "Accuracy"), "that measure"),
    (("num_nonrel_judged_ret", "runid", "relstring"), "that trec_eval field"),
)
_NOT_YET: dict[str, str] = {
    normalize(name): described for names, described in _NOT_YET_NAMES for name in names
}
# A trec_eval-style tail (P_10, iprec_at_recall_0.10, NERR10) is not part of a measure's name.
_TAIL = re.compile(r"[._]?[0-9][0-9.,]*$")


def _unknown(text: str, name: str | None = None, cutoff: str | None = None) -> MetricError:
    valid = ", ".join(metric_names())
    probe = name or text.strip().split("@")[0].split("(")[0]
    key = normalize(probe)
    lacking = _NOT_YET.get(key) or _NOT_YET.get(normalize(_TAIL.sub("", probe)))
    if lacking is not None and key not in BY_NAME and key not in BY_TREC_NAME:
        return MetricError(
            f"metric {text!r} is not supported yet: rankmeter does not compute {lacking}. "
            f"Supported metrics: {valid} (see `rankmeter metrics`)"
        )
    with_cutoff = bool(
        cutoff and cutoff.isascii() and cutoff.isdigit() and 0 < int(cutoff[:12]) <= MAX_CUTOFF
    )
    suggestion = _closest(key, with_cutoff=with_cutoff)
    hint = ""
    if suggestion is not None:
        if with_cutoff:
            suggestion += f"@{cutoff}"
        hint = f"; did you mean {suggestion}?"
    return MetricError(
        f"unknown metric {text!r}{hint or '.'} Valid metrics: {valid} (see `rankmeter metrics`)"
    )


def _closest(key: str, *, with_cutoff: bool) -> str | None:
    """The metric a misspelt name most likely meant: the one closest in spelling (a typo:
    ndgc, mrrr, precison), else the one the name begins (preci), or None where two metrics
    are equally close (numre: NumRet or NumRel?). With a cutoff, only metrics that take one.
    Names of other measures never get here (see _NOT_YET), so closeness of spelling stands
    for closeness of meaning."""
    candidates: dict[str, MetricSpec] = {}
    for spec in SPECS:
        if with_cutoff and spec.cutoff == "none":
            continue
        for alias in (spec.name, *spec.aliases, *(trec for trec, _ in spec.trec_names)):
            candidates.setdefault(normalize(alias), spec)
    scored: dict[str, float] = {}
    for alias, spec in candidates.items():
        ratio = difflib.SequenceMatcher(None, key, alias).ratio()
        scored[spec.name] = max(scored.get(spec.name, 0.0), ratio)
    best = max(scored.values(), default=0.0)
    close = [name for name, ratio in scored.items() if ratio == best]
    if best >= 0.75:
        return close[0] if len(close) == 1 else None
    begun = {spec.name for alias, spec in candidates.items() if alias.startswith(key)}
    return begun.pop() if len(key) >= 4 and len(begun) == 1 else None
