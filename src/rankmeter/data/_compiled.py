"""The compiled inner loops (the C extension ``rankmeter.data._native``), when they were built.

``NATIVE`` is the extension module, or None: not built on this machine (the install fell back
to pure Python), or switched off with the environment variable ``RANKMETER_PURE=1``. Each
caller keeps its NumPy code beside the compiled call and reads ``NATIVE`` at call time, so the
two give the same answers by test (tests/data/test_native.py runs both on random input) and
setting ``NATIVE = None`` switches every caller back to NumPy.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

__all__ = ["NATIVE", "native_available", "string_parts"]


def _load() -> ModuleType | None:
    if os.environ.get("RANKMETER_PURE", "") not in ("", "0"):
        return None
    try:
        from rankmeter.data import _native  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _native  # type: ignore[no-any-return]


NATIVE: ModuleType | None = _load()


def string_parts(strings: Any) -> tuple[Any, bool, int, Any]:
    """What the compiled loops read of an Arrow string (or binary) array: its offsets buffer,
    whether those are 64-bit (large_string, large_binary), where the array starts in them
    (its offset), and its data buffer (``b""`` when it has none)."""
    import pyarrow as pa

    buffers = strings.buffers()
    wide = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    return buffers[1], wide, strings.offset, b"" if buffers[2] is None else buffers[2]


def native_available() -> bool:
    """Whether the compiled loops are in use (``rankmeter version`` says so)."""
    return NATIVE is not None
