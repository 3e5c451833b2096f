"""A BEIR collection as the vectors an ANN index is measured on: its documents and queries
embedded by a model (through the embedding cache), every index setting checked against the
model's dimension and the corpus size first, so that a mistake fails before the embedding."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CollectionVectors", "collection_vectors"]


@dataclass(frozen=True)
class CollectionVectors:
    """A collection's embeddings and how results name them.

    Attributes
    ----------
    corpus, queries : the documents' and the queries' embeddings (rows in the collection's
        order)
    names : how results name the corpus and the queries: the folder (absolute, so that one
        folder is one dataset however it was given) and the model
    collection : the :class:`~rankmeter.io.beir.BeirCollection`, whose judgments let
        :func:`~rankmeter.vector.ann.ann_benchmark` measure the quality each setting loses
    """

    corpus: npt.NDArray[np.float32] = field(repr=False)
    queries: npt.NDArray[np.float32] = field(repr=False)
    names: tuple[str, str]
    collection: Any = field(repr=False)

    def judged(self) -> dict[str, Any]:
        """What :func:`~rankmeter.vector.ann.ann_benchmark` takes to measure quality:
        ``qrels``, ``query_ids`` and ``doc_ids``."""
        return {
            "qrels": self.collection.qrels,
            "query_ids": list(self.collection.queries),
            "doc_ids": list(self.collection.corpus),
        }


def collection_vectors(
    folder: str | os.PathLike[str],
    model: Any = None,
    *,
    settings: Sequence[Any] = (),
    ks: Sequence[int] = (),
) -> CollectionVectors:
    """Embed a BEIR collection folder's documents and queries with ``model`` (as
    :func:`rankmeter.vector.embed.embed_texts` takes it; None: the packaged all-MiniLM-L6-v2),
    through the default embedding cache.

    Before anything is embedded, every index setting (:class:`~rankmeter.vector.ann.IndexSpec`)
    is checked to fit the model's dimension and the corpus (an
    :class:`~rankmeter.vector.ann.IndexSpecError` if not), and every ``k`` to be at most the
    corpus size (a :class:`~rankmeter.errors.PolicyError`).
    """
    from rankmeter.errors import PolicyError
    from rankmeter.io.beir import load_beir
    from rankmeter.vector.ann.spec import check_index_fits
    from rankmeter.vector.embed import DEFAULT_MODEL, embed_texts, model_dimension

    corpus = os.fspath(folder)
    collection = load_beir(corpus)
    docs = [d.content for d in collection.corpus.values()]
    dim = model_dimension(model)
    for setting in settings:
        check_index_fits(setting, dim=dim, n_vectors=len(docs), what=f"the corpus {corpus}")
    if ks and max(ks) > len(docs):
        raise PolicyError(
            f"k={max(ks)} is more than the corpus has ({len(docs)} documents in {corpus}); "
            "give smaller k values"
        )
    # The names are the dataset of a results file: absolute, so that one folder is one
    # dataset however it was named (relative, absolute, from another directory).
    name = model if model is not None else DEFAULT_MODEL
    if isinstance(name, (str, os.PathLike)) and Path(name).exists():
        name = os.path.abspath(name)
    where = os.path.abspath(corpus)
    return CollectionVectors(
        embed_texts(model, docs, kind="corpus"),
        embed_texts(model, list(collection.queries.values()), kind="queries"),
        (f"{where} (documents, embedded by {name})", f"{where} (queries, embedded by {name})"),
        collection,
    )
