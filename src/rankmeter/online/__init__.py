"""Search logs: the log schema, per-user metrics, A/B analysis, interleaving, a log simulator.

Names load on first use: ``import rankmeter.online`` stays light. The module of
:func:`interleave` is ``interleaving`` (not ``interleave``): importing a submodule named
``rankmeter.online.interleave`` would rebind the package attribute, the function, to the module.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Interleaving",
    "InterleavingResult",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
]

_LAZY = {
    "Interleaving": "rankmeter.online.interleaving",
    "InterleavingResult": "rankmeter.online.interleaving",
    "interleave": "rankmeter.online.interleaving",
    "interleave_runs": "rankmeter.online.interleaving",
    "interleaving_credit": "rankmeter.online.interleaving",
    "interleaving_test": "rankmeter.online.interleaving",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rankmeter.online' has no attribute {name!r}")
