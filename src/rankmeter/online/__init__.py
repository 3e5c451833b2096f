"""Search logs and online evaluation: the log schema and its checks (:mod:`.logs`), the log
simulator (:mod:`.simulate`). Names are loaded on first use: Ibis and DuckDB are extras."""

from __future__ import annotations

from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rankmeter.online.logs import (
        LOG_COLUMNS,
        REQUIRED_COLUMNS,
        LogCheck,
        LogProblem,
        VariantCounts,
        check_log,
        read_log,
    )

__all__ = [
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "LogCheck",
    "LogProblem",
    "VariantCounts",
    "check_log",
    "read_log",
]

_LAZY = {name: "rankmeter.online.logs" for name in __all__}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.online' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
