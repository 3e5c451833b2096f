"""Every metric rankmeter knows, by name, alias and trec_eval name."""

from __future__ import annotations

from rankmeter.metrics import (
    ap,
    bpref,
    compat,
    counts,
    err,
    gm_map,
    infap,
    iprec,
    judged,
    ndcg,
    precision,
    rbp,
    recall,
    rprec,
    rr,
    statap,
    success,
)
from rankmeter.metrics._spec import MetricSpec
from rankmeter.metrics.diversity import SPECS as DIVERSITY_SPECS

#: All metric families, in the order they are listed to users.
SPECS: tuple[MetricSpec, ...] = (
    precision.SPEC,
    recall.SPEC,
    *ndcg.SPECS,
    rr.SPEC,
    ap.SPEC,
    rprec.SPEC,
    bpref.SPEC,
    infap.SPEC,
    iprec.IPREC,
    iprec.ELEVEN_POINT,
    gm_map.SPEC,
    success.SPEC,
    *err.SPECS,
    *rbp.SPECS,
    *compat.SPECS,
    judged.SPEC,
    *counts.SPECS,
    *statap.SPECS,
    *DIVERSITY_SPECS,
)

#: Used by `rankmeter evaluate` when no -m is given.
DEFAULT_METRICS = ("nDCG@10", "P@10", "R@100", "RR", "AP")


def normalize(name: str) -> str:
    """Lower case without '-', '_' or spaces: 'R-Prec', 'rprec' and 'r_prec' are one name."""
    return name.lower().replace("-", "").replace("_", "").replace(" ", "")


BY_NAME: dict[str, MetricSpec] = {}
for _spec in SPECS:
    for _name in (_spec.name, *_spec.aliases):
        BY_NAME.setdefault(normalize(_name), _spec)

#: trec_eval measure name -> (spec, whether it takes a cutoff)
BY_TREC_NAME: dict[str, tuple[MetricSpec, bool]] = {}
for _spec in SPECS:
    for _name, _takes in _spec.trec_names:
        BY_TREC_NAME.setdefault(normalize(_name) + ("." if _takes else ""), (_spec, _takes))
