"""Vector search and embedding models: ANN recall against exact neighbours, end-to-end retrieval
evaluation of an embedding model, a BM25 baseline, fusion, and two-stage pipelines.

Everything heavy (FAISS, hnswlib, sentence-transformers, torch, bm25s) is an extra, imported
when first used, with an error naming the extra to install.
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = ["RUN_DEPTH"]

#: How many results per query every command and function that makes a run retrieves by
#: default (``bm25``, ``embed-eval``, ``fuse --depth``; ``bm25_run``, ``evaluate_model``,
#: ``retrieve_model``, ``fuse``): trec_eval's customary 1,000, so that runs made here compare
#: at equal depth (AP, R@k and the other metrics that read deep favour a deeper run).
RUN_DEPTH = 1000

# name -> module, loaded on first use so that `import rankmeter.vector` stays light.
_LAZY: dict[str, str] = {}
_ANN = ["AnnRecall", "Index", "IndexSpec", "ann_recall", "make_index", "parse_index_spec"]
__all__ += [*_ANN, "exact_search"]  # ANN recall against exact neighbours
_LAZY.update(
    {**dict.fromkeys(_ANN, "rankmeter.vector.ann"), "exact_search": "rankmeter.vector.exact"}
)
_RETRIEVAL = {"bm25_run": "bm25", "fuse": "fusion", "fuse_runs": "fusion", "FusedRun": "fusion", "TwoStage": "pipeline", "two_stage": "pipeline", "two_stage_runs": "pipeline", "cross_encoder": "pipeline"}  # fmt: skip
__all__ += list(_RETRIEVAL)  # BM25 baseline, fusion, two-stage pipelines
_LAZY.update({k: f"rankmeter.vector.{v}" for k, v in _RETRIEVAL.items()})
__all__ += ["evaluate_model"]  # an embedding model evaluated end to end
_LAZY["evaluate_model"] = "rankmeter.vector.embed"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.vector' has no attribute {name!r}")


def require(module: str, extra: str, purpose: str) -> Any:
    """Import an optional dependency, or fail with the extra that provides it."""
    import importlib

    from rankmeter.errors import RankmeterError

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RankmeterError(
            f"{purpose} needs the {module!r} package: pip install 'rankmeter[{extra}]' ({exc})"
        ) from None
