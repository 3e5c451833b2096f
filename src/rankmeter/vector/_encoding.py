"""Encoding texts with an embedding model, through the on-disk embedding cache.

Rows are float32 and scaled to unit length (cosine = inner product); queries go through a
model's ``encode_query`` and documents through ``encode_document`` where it has them, else
``encode``. Texts are embedded longest first, in chunks of :data:`CHUNK_BATCHES` batches (one
progress step each), and stored in the cache under the model's fingerprint and the texts.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer
from rankmeter.errors import RankmeterError
from rankmeter.vector._cache import cache_of, texts_key
from rankmeter.vector.embed import _Model, _resolve_model, _warn_uncached

__all__ = ["CHUNK_BATCHES", "cached_embeddings", "embed_texts"]

# Texts are embedded in chunks of this many batches: one progress step each.
CHUNK_BATCHES = 8

Embeddings = npt.NDArray[np.float32]
Progress = Callable[[str], None]


def _normalise(vectors: Any, count: int) -> Embeddings:
    # A copy: the model's own array is never written into.
    array = np.array(vectors.cpu() if hasattr(vectors, "cpu") else vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0:
        raise RankmeterError(
            f"the model returned embeddings of shape {array.shape} for {count} texts; "
            f"expected ({count}, dimension)"
        )
    if not np.isfinite(array).all():
        raise RankmeterError("the model returned embeddings with NaN or infinite values")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    np.divide(array, norms, out=array, where=norms > 0)
    return array


def _unit_rows(array: Embeddings) -> bool:
    norms = np.linalg.norm(array, axis=1)
    return bool(np.all((np.abs(norms - 1) < 1e-3) | (norms == 0)))


def _call(method: Callable[..., Any], texts: list[str], batch_size: int) -> Any:
    """``method(texts, **options)`` with the sentence-transformers options it accepts: a plain
    ``encode(texts)`` gets none of them."""
    options: dict[str, Any] = {
        "batch_size": batch_size,
        "show_progress_bar": False,
        "convert_to_numpy": True,
        "normalize_embeddings": True,
    }
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):  # a builtin or extension without a signature: try them all
        return method(texts, **options)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        options = {k: v for k, v in options.items() if k in params}
    return method(texts, **options)


def _encode(
    model: _Model, texts: Sequence[str], kind: str, batch_size: int, progress: Progress
) -> Embeddings:
    model.calls += 1
    encoder = model.encoder
    # Queries and documents may be embedded differently (models with prompts); plain models
    # have only encode().
    method_name = "encode_query" if kind == "queries" else "encode_document"
    method = getattr(encoder, method_name, None)
    if not callable(method):
        method = encoder.encode
    # Longest first, as sentence-transformers orders each call: batches of similar lengths pad
    # little. Chunks of batches give the progress bar its steps.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    chunk = batch_size * CHUNK_BATCHES
    parts: list[Embeddings] = []
    for start in range(0, len(order), chunk):
        progress(f"embedding {kind} {start}/{len(texts)}")
        block = [texts[i] for i in order[start : start + chunk]]
        parts.append(_normalise(_call(method, block, batch_size), len(block)))
    if not parts:
        raise RankmeterError(f"no {kind} to embed")
    dims = {p.shape[1] for p in parts}
    if len(dims) > 1:
        raise RankmeterError(f"the model returned embeddings of several dimensions: {dims}")
    out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
    out[np.asarray(order, dtype=np.int64)] = np.concatenate(parts)
    return out


def embed_texts(
    model: Any,
    texts: Sequence[str],
    *,
    kind: str = "corpus",
    cache: str | os.PathLike[str] | bool | None = True,
    batch_size: int = 32,
    progress: Progress | None = None,
    cache_key: str | None = None,
) -> Embeddings:
    """Embed texts (normalised rows, float32), through the on-disk cache.

    Parameters
    ----------
    model : None (the packaged all-MiniLM-L6-v2), a model folder or name, or an object with
        ``encode()`` (a SentenceTransformer)
    texts : the texts, in order; row ``i`` of the result embeds ``texts[i]``
    kind : ``"corpus"`` or ``"queries"`` (models with prompts embed them differently)
    cache : True (the default folder, see :func:`rankmeter.vector._cache.default_cache_dir`),
        a folder, or False/None for no cache
    batch_size : texts per forward pass
    progress : called with a label at the start of each step
    cache_key : a name for the model's version, as for :func:`evaluate_model`
    """
    _check_count("batch_size", batch_size)
    choice("kind", kind, ("corpus", "queries"))
    resolved = _resolve_model(model, None, cache_key)
    _warn_uncached(resolved, cache)
    return _embed(resolved, list(texts), kind, cache, batch_size, progress)


def cached_embeddings(
    model: Any,
    texts: Sequence[str],
    *,
    kind: str = "corpus",
    cache: str | os.PathLike[str] | bool | None = True,
    cache_key: str | None = None,
) -> Embeddings | None:
    """The embeddings of ``texts`` if the cache holds them (as :func:`embed_texts` or
    :func:`evaluate_model` left them, and checked as they check them), else None. Nothing is
    embedded and no model is loaded: a caller can ask whether a whole corpus is cached before
    choosing to embed only part of it."""
    choice("kind", kind, ("corpus", "queries"))
    store = cache_of(cache)
    if store is None:
        return None
    resolved = _resolve_model(model, None, cache_key)
    if resolved.key is None:
        return None
    listed = list(texts)
    return store.load(store.path(resolved.key, kind, texts_key(listed)), len(listed), _unit_rows)


def _embed(
    model: _Model,
    texts: Sequence[str],
    kind: str,
    cache: str | os.PathLike[str] | bool | None,
    batch_size: int,
    progress: Progress | None,
) -> Embeddings:
    report = progress or _quiet
    store = cache_of(cache)
    path = None
    if store is not None and model.key is not None:  # None: a model that is never cached
        path = store.path(model.key, kind, texts_key(texts))
    if store is not None and path is not None:
        cached = store.load(path, len(texts), _unit_rows)
        if cached is not None:
            report(f"{kind} embeddings from the cache")
            return cached
    vectors = _encode(model, texts, kind, batch_size, report)
    if store is not None and path is not None:
        store.save(path, vectors)
    return vectors


def _quiet(label: str) -> None:
    pass


_COUNTS = {"k": "results retrieved per query", "batch_size": "texts per forward pass"}


def _check_count(label: str, value: Any) -> int:
    return integer(label, value, low=1, what=_COUNTS[label])
