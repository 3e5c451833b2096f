"""Search logs and online evaluation: the log schema and its checks (:mod:`.logs`), the log
simulator (:mod:`.simulate`), interleaving (:mod:`.interleaving`). Names are loaded on first
use: Ibis and DuckDB are extras.

The module of :func:`interleave` is ``interleaving``, not ``interleave``: importing a submodule
named ``rankmeter.online.interleave`` would rebind the package attribute, the function, to the
module."""

from __future__ import annotations

from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rankmeter.online.interleaving import (
        Interleaving,
        InterleavingResult,
        interleave,
        interleave_runs,
        interleaving_credit,
        interleaving_test,
    )
    from rankmeter.online.logs import (
        LOG_COLUMNS,
        REQUIRED_COLUMNS,
        LogCheck,
        LogProblem,
        VariantCounts,
        check_log,
        read_log,
    )

_INTERLEAVING = (
    "Interleaving",
    "InterleavingResult",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
)

__all__ = [
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "Interleaving",
    "InterleavingResult",
    "LogCheck",
    "LogProblem",
    "VariantCounts",
    "check_log",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
    "read_log",
]

_LAZY = {
    name: "rankmeter.online.interleaving" if name in _INTERLEAVING else "rankmeter.online.logs"
    for name in __all__
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.online' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
