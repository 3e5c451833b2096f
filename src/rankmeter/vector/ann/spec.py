"""The index-spec grammar: ``hnsw(M=16,efSearch=64)``, ``ivf(nlist=100,nprobe=8)``, ``flat``...

Each kind of index declares its parameters (with defaults and bounds), which of them apply at
search time, and which backends build it. :func:`parse_index_spec` turns text into an
:class:`IndexSpec` (defaults filled in, names case-insensitive, typos answered with a
suggestion); :func:`sweep_settings` expands a parameter sweep into the settings to measure, and
:func:`check_backend` says whether a backend builds a kind.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter._validate import choice
from rankmeter.errors import PolicyError

__all__ = [
    "BACKENDS",
    "IndexSpec",
    "IndexSpecError",
    "check_backend",
    "check_index_fits",
    "parse_index_spec",
    "parse_sweep",
    "sweep_settings",
]

BACKENDS = ("faiss", "hnswlib")


class IndexSpecError(PolicyError):
    """An index specification (``hnsw(M=16)``, sweep parameter, backend) is not valid.

    A :class:`~rankmeter.errors.PolicyError`: a bad setting, not bad data (the command line
    exits with 2, as for any usage error). ``option``: the parameter it is about, as the
    caller named it, where :func:`~rankmeter.vector.ann.measure_indexes` knows it (else None)."""

    option: str | None = None

    # Shown in tracebacks under the name users import it by.
    __module__ = "rankmeter.vector.ann"


@dataclass(frozen=True)
class _Kind:
    """One kind of index: its parameters with defaults, which of them apply at search time."""

    defaults: Mapping[str, int]
    search: tuple[str, ...]
    minimum: Mapping[str, int]
    maximum: Mapping[str, int]
    what: str
    backends: tuple[str, ...]


_KINDS: dict[str, _Kind] = {
    "flat": _Kind({}, (), {}, {}, "exhaustive search (exact)", ("faiss", "hnswlib")),
    "hnsw": _Kind(
        {"M": 16, "efConstruction": 200, "efSearch": 64},
        ("efSearch",),
        {"M": 2},
        {},
        "HNSW graph",
        ("faiss", "hnswlib"),
    ),
    "ivf": _Kind(
        {"nlist": 100, "nprobe": 8}, ("nprobe",), {}, {}, "inverted file, flat lists", ("faiss",)
    ),
    "pq": _Kind({"m": 8, "nbits": 8}, (), {}, {"nbits": 16}, "product quantization", ("faiss",)),
    "ivfpq": _Kind(
        {"nlist": 100, "m": 8, "nbits": 8, "nprobe": 8},
        ("nprobe",),
        {},
        {"nbits": 16},
        "inverted file with product-quantized lists",
        ("faiss",),
    ),
}


def _signature(kind: str) -> str:
    params = _KINDS[kind].defaults
    return kind if not params else f"{kind}({','.join(params)})"


def _valid_kinds() -> str:
    return ", ".join(_signature(k) for k in _KINDS)


@dataclass(frozen=True)
class IndexSpec:
    """A parsed index specification: its kind and every parameter (defaults filled in).

    ``str(spec)`` is canonical and parses back to the same spec.

    >>> spec = parse_index_spec("HNSW(m=32, efsearch=128)")
    >>> str(spec)
    'hnsw(M=32,efConstruction=200,efSearch=128)'
    >>> spec.search_params, str(spec.replace(efSearch=16))
    ({'efSearch': 128}, 'hnsw(M=32,efConstruction=200,efSearch=16)')
    """

    kind: str
    params: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def __str__(self) -> str:
        if not self.params:
            return self.kind
        return f"{self.kind}({','.join(f'{k}={v}' for k, v in self.params.items())})"

    def __repr__(self) -> str:
        return f"IndexSpec({str(self)!r})"

    def __hash__(self) -> int:
        return hash((self.kind, tuple(self.params.items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexSpec):
            return NotImplemented
        return self.kind == other.kind and dict(self.params) == dict(other.params)

    @property
    def search_params(self) -> dict[str, int]:
        """The parameters that apply at search time (changing them needs no rebuild)."""
        return {k: v for k, v in self.params.items() if k in _KINDS[self.kind].search}

    @property
    def build_params(self) -> dict[str, int]:
        """The parameters fixed when the index is built."""
        return {k: v for k, v in self.params.items() if k not in _KINDS[self.kind].search}

    def param_name(self, name: str) -> str:
        """The canonical spelling of a parameter of this kind (case-insensitive)."""
        return _param_name(self.kind, name, str(self))

    def replace(self, **changes: Any) -> IndexSpec:
        """The same spec with some parameters changed (checked as when parsed)."""
        params = dict(self.params)
        for name, value in changes.items():
            canonical = self.param_name(name)
            params[canonical] = _value(self.kind, canonical, value, str(self))
        return IndexSpec(self.kind, params)


def _param_name(kind: str, name: str, text: str) -> str:
    valid = list(_KINDS[kind].defaults)
    for candidate in valid:
        if candidate.lower() == name.strip().lower():
            return candidate
    if not valid:
        raise IndexSpecError(f"{kind} has no parameters, got {name.strip()!r} in {text!r}")
    close = difflib.get_close_matches(name.strip(), valid, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise IndexSpecError(
        f"{kind} has no parameter {name.strip()!r} in {text!r}{hint}; "
        f"valid parameters: {', '.join(valid)}"
    )


def _value(kind: str, name: str, value: Any, text: str) -> int:
    if isinstance(value, str):
        token = value.strip()
        if not re.fullmatch(r"[+]?\d+", token):
            raise IndexSpecError(f"{name}={token!r} in {text!r} is not a whole number")
        number = int(token)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
    else:
        raise IndexSpecError(f"{name}={value!r} in {text!r} is not a whole number")
    low = _KINDS[kind].minimum.get(name, 1)
    high = _KINDS[kind].maximum.get(name)
    if number < low or (high is not None and number > high):
        allowed = f"at least {low}" if high is None else f"from {low} to {high}"
        raise IndexSpecError(f"{name}={number} in {text!r} is out of range: it must be {allowed}")
    return number


_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*")


def parse_index_spec(text: str | IndexSpec) -> IndexSpec:
    """Parse ``kind`` or ``kind(param=value,...)``; omitted parameters take their defaults.

    Kinds (case-insensitive, as are parameter names): ``flat``;
    ``hnsw(M=16,efConstruction=200,efSearch=64)``; ``ivf(nlist=100,nprobe=8)``;
    ``pq(m=8,nbits=8)``; ``ivfpq(nlist=100,m=8,nbits=8,nprobe=8)``.

    >>> str(parse_index_spec("ivf(nlist=64)"))
    'ivf(nlist=64,nprobe=8)'
    >>> parse_index_spec("hnsw(ef=10)")
    Traceback (most recent call last):
    ...
    rankmeter.vector.ann.IndexSpecError: hnsw has no parameter 'ef' in 'hnsw(ef=10)'; valid parameters: M, efConstruction, efSearch
    """
    if isinstance(text, IndexSpec):
        return text
    if not isinstance(text, str):
        raise IndexSpecError(f"an index spec is a string such as 'hnsw(M=16)', got {text!r}")
    match = _SPEC.fullmatch(text)
    if match is None:
        raise IndexSpecError(
            f"cannot parse index spec {text!r}: expected NAME or NAME(param=value,...), "
            f"one of {_valid_kinds()}"
        )
    kind = match.group(1).lower()
    if kind not in _KINDS:
        close = difflib.get_close_matches(kind, list(_KINDS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise IndexSpecError(
            f"unknown index {match.group(1)!r} in {text!r}{hint}; valid indexes: {_valid_kinds()}"
        )
    params = dict(_KINDS[kind].defaults)
    body = match.group(2)
    seen: set[str] = set()
    if body is not None and body.strip():
        for token in body.split(","):
            name, equals, value = token.partition("=")
            if not equals or not name.strip():
                raise IndexSpecError(
                    f"bad parameter {token.strip()!r} in {text!r}: expected name=value, "
                    f"e.g. {_example(kind)}"
                )
            canonical = _param_name(kind, name, text)
            if canonical in seen:
                raise IndexSpecError(f"{canonical} is given twice in {text!r}")
            seen.add(canonical)
            params[canonical] = _value(kind, canonical, value, text)
    return IndexSpec(kind, params)


def _example(kind: str) -> str:
    defaults = _KINDS[kind].defaults
    return str(IndexSpec(kind, defaults)) if defaults else kind


def check_backend(spec: IndexSpec, backend: str) -> None:
    """Fail with :class:`IndexSpecError` unless ``backend`` is known and builds ``spec``'s kind."""
    choice("backend", backend, BACKENDS, error=IndexSpecError)
    if backend not in _KINDS[spec.kind].backends:
        raise IndexSpecError(
            f"{spec.kind} indexes need the {' or '.join(_KINDS[spec.kind].backends)} backend, "
            f"not {backend} (which has: "
            f"{', '.join(k for k, v in _KINDS.items() if backend in v.backends)})"
        )


def check_index_fits(
    spec: IndexSpec, *, dim: int | None = None, n_vectors: int | None = None, what: str = ""
) -> None:
    """Fail with :class:`IndexSpecError` where ``spec`` cannot be built on ``n_vectors``
    vectors of ``dim`` dimensions (None: not known yet, not checked): PQ's ``m`` must divide
    the dimension, and IVF and PQ train ``nlist`` and ``2**nbits`` centroids on the vectors,
    so they need at least that many. Checked before anything is embedded or built; ``what``
    names the vectors (``"the corpus"``).

    >>> check_index_fits(parse_index_spec("pq(m=7)"), dim=384)
    Traceback (most recent call last):
    ...
    rankmeter.vector.ann.IndexSpecError: m=7 in pq(m=7,nbits=8) must divide the dimension 384 (each of the m sub-quantizers takes dim / m dimensions)
    """
    params = spec.params
    if dim is not None and "m" in params and dim % params["m"]:
        raise IndexSpecError(
            f"m={params['m']} in {spec} must divide the dimension {dim} "
            "(each of the m sub-quantizers takes dim / m dimensions)"
        )
    if n_vectors is None:
        return
    vectors = what or "the vectors"
    for name, needed in (
        ("nlist", params.get("nlist")),
        ("nbits", 2 ** params["nbits"] if "nbits" in params else None),
    ):
        if needed is not None and needed > n_vectors:
            shown = f"nlist={needed}" if name == "nlist" else f"nbits={params['nbits']}"
            raise IndexSpecError(
                f"{spec} trains {needed} centroids ({shown}) but {vectors} has only "
                f"{n_vectors} vectors: lower {name} to at most "
                f"{n_vectors if name == 'nlist' else max(n_vectors.bit_length() - 1, 1)}"
            )


def sweep_settings(spec: IndexSpec, sweep: Mapping[str, Sequence[Any]] | None) -> list[IndexSpec]:
    """Every setting of the sweep, build-time parameters outermost (so each build is reused
    by the search-time values that follow it)."""
    if not sweep:
        return [spec]
    named: dict[str, list[int]] = {}
    for name, values in sweep.items():
        canonical = spec.param_name(name)
        if canonical in named:
            raise IndexSpecError(f"{canonical} is swept twice")
        listed = [values] if isinstance(values, (int, str)) else list(values)
        if not listed:
            raise IndexSpecError(f"sweep of {canonical} has no values")
        named[canonical] = list(
            dict.fromkeys(_value(spec.kind, canonical, v, f"sweep {canonical}") for v in listed)
        )
    searched = spec.search_params
    order = sorted(named, key=lambda n: n in searched)
    combos = itertools.product(*(named[n] for n in order))
    return [spec.replace(**dict(zip(order, combo, strict=True))) for combo in combos]


# ASCII digits: str.isdigit() also takes "²", which int() refuses.
_WHOLE = re.compile(r"[0-9]+")


def parse_sweep(texts: Sequence[str]) -> dict[str, list[int]]:
    """Sweeps as typed (``efSearch=16,32,64``, one text per parameter) as
    ``{"efSearch": [16, 32, 64]}``: an empty or malformed value is an :class:`IndexSpecError`
    naming its position, never dropped; a parameter swept twice is one too.

    >>> parse_sweep(["efSearch=16,32", "nprobe=4"])
    {'efSearch': [16, 32], 'nprobe': [4]}
    >>> parse_sweep(["efSearch=16,,64"])
    Traceback (most recent call last):
    ...
    rankmeter.vector.ann.IndexSpecError: 'efSearch=16,,64': item 2 is empty; expected NAME=V1,V2,..., e.g. efSearch=16,32,64
    """
    hint = "expected NAME=V1,V2,..., e.g. efSearch=16,32,64"
    sweep: dict[str, list[int]] = {}
    for text in texts:
        name, equals, values = text.partition("=")
        if not equals or not name.strip():
            raise IndexSpecError(f"{text!r}: {hint}")
        if not values.strip():
            raise IndexSpecError(f"{text!r}: no values; {hint}")
        tokens = [t.strip() for t in values.split(",")]
        for position, token in enumerate(tokens, start=1):
            if not token:
                raise IndexSpecError(f"{text!r}: item {position} is empty; {hint}")
            if not _WHOLE.fullmatch(token):
                raise IndexSpecError(
                    f"{text!r}: item {position}, {token!r}, is not a whole number; {hint}"
                )
        if name.strip() in sweep:  # a dict would keep only the last values, silently
            raise IndexSpecError(
                f"{name.strip()} is swept twice; give all its values in one --sweep "
                f"{name.strip()}=V1,V2,..."
            )
        sweep[name.strip()] = [int(t) for t in tokens]
    return sweep
