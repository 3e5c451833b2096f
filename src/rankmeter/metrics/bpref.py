"""Bpref: how often relevant documents are ranked above judged non-relevant ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def bpref(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    nonrelevant = ranked.judged & ~relevant
    running = np.cumsum(nonrelevant, dtype=np.int64)
    before_query = np.concatenate(([0], running))[ranked.offsets[:-1]]
    nonrel_above = (running - before_query[ranked.groups])[relevant]
    groups = ranked.groups[relevant]
    big_r = ranked.num_rel(rel)[groups]
    big_n = ranked.num_nonrel(rel)[groups]
    # trec_eval: 1 - min(n above, R) / min(N, R); n above > 0 implies N > 0.
    penalty = ratio(np.minimum(nonrel_above, big_r), np.minimum(big_n, big_r))
    return ratio(ranked.total(groups, 1.0 - penalty), ranked.num_rel(rel))


SPEC = MetricSpec(
    name="Bpref",
    description="Binary preference: for each relevant result, one minus the share of judged "
    "non-relevant documents ranked above it (counting at most R); averaged over the R relevant "
    "documents. Unjudged documents are ignored, so it is robust to incomplete judgments.",
    formula="Bpref = (1/R) sum_{r relevant retrieved} (1 - min(|n above r|, R) / min(N, R))",
    kernel=bpref,
    cutoff="none",
    params=(REL,),
    trec_names=(("bpref", False),),
    reference="Buckley & Voorhees 2004; trec_eval bpref",
    uses=("grade", "relevant", "judged"),
)
