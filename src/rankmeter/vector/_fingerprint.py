"""Fingerprints of embedding models: the embedding cache's keys.

A model folder is keyed by the content of every file a loader reads (symbolic links followed);
a ``SentenceTransformer`` object by its module tree, every module's settings, its tokenizer, its
prompts and every weight; both with the versions of the libraries that run them
(:func:`_library_versions`) and rankmeter's own recipe (:data:`RECIPE`). Anything whose code
rankmeter cannot see into raises :class:`_NoFingerprint`: it is not cached.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

from rankmeter.errors import RankmeterError

# Folders of a model directory that hold other runtimes' copies of the weights, not read here.
_SKIPPED_FOLDERS = frozenset({"onnx", "openvino", ".git", "__pycache__"})

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
