"""The one way rankmeter writes JSON: strict JSON (RFC 8259), which has no NaN or Infinity.

Every JSON output (evaluate, compare, explain, metrics, embed-eval, bm25, two-stage,
ann-recall) goes through :func:`json_text`. A number that cannot be computed (NaN: a p-value,
interval or effect size from fewer than two queries) or is infinite (the effect size of
differences that never vary) is written as ``null``: deliberately, and said in docs/guide.md.
``allow_nan=False`` then makes sure that nothing non-finite slips through any other way (a
bare ``NaN`` is not JSON: ``jq``, browsers and most parsers refuse it).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from rankmeter._escape import json_safe

__all__ = ["finite_or_null", "json_line", "json_text"]


def finite_or_null(value: Any) -> Any:
    """``value`` with every NaN and infinity (at any depth) replaced by None, and NumPy
    scalars as Python numbers.

    >>> finite_or_null({"p": float("nan"), "d": [1.5, float("-inf")], "n": 3})
    {'p': None, 'd': [1.5, None], 'n': 3}
    """
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()  # a NumPy scalar: json cannot write most of them as they are
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(payload: Any, *, ensure_ascii: bool = False) -> str:
    """``payload`` as indented strict JSON and a final newline (see the module docstring).

    >>> print(json_text({"metrics": {"AP": 0.5, "p_value": float("nan")}}), end="")
    {
      "metrics": {
        "AP": 0.5,
        "p_value": null
      }
    }
    """
    text = json.dumps(finite_or_null(payload), indent=2, ensure_ascii=ensure_ascii, allow_nan=False)
    # The control characters JSON leaves raw (DEL, C1, separators, bidi) as \uXXXX escapes.
    return json_safe(text) + "\n"


def json_line(payload: Any) -> str:
    """``payload`` as one line of compact strict JSON (a JSON-lines record) and a newline;
    non-ASCII text as it is (UTF-8), the characters JSON leaves raw escaped as in
    :func:`json_text`.

    >>> print(json_line({"doc_id": "dé", "p": float("nan")}), end="")
    {"doc_id": "dé", "p": null}
    """
    text = json.dumps(finite_or_null(payload), ensure_ascii=False, allow_nan=False)
    return json_safe(text) + "\n"
