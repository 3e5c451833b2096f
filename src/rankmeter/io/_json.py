"""What every JSON reader of rankmeter checks after a line parses: valid JSON may hold a lone
surrogate (``"\\ud800"``), half of a UTF-16 pair, which is no character: no output could be
written with it, and Arrow refuses it, so a reader names its line instead of a later write
failing as an internal error."""

from __future__ import annotations

import json
import re
from typing import Any

_ESCAPED = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ESCAPED_BYTES = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def escapes_a_surrogate(raw: str | bytes) -> bool:
    """Whether the JSON text ``raw`` escapes a surrogate (``\\ud800``), paired or not."""
    if isinstance(raw, bytes):
        return _ESCAPED_BYTES.search(raw) is not None
    return _ESCAPED.search(raw) is not None


def lone_surrogate(raw: str | bytes, value: Any, what: str = "the line") -> str | None:
    """Why ``value``, parsed from the JSON text ``raw`` (``what``: the line, the file), holds
    no text (a lone surrogate in a key or a string anywhere in it), or None. The text is
    searched first for an escaped surrogate, so a line without one costs one search.

    >>> lone_surrogate(r'{"text": "a \\ud800"}', {"text": "a \\ud800"})
    'the line holds a lone surrogate (\\\\ud800): half of a UTF-16 pair, not a character'
    >>> lone_surrogate(r'"\\ud83d\\ude00"', "\\U0001f600") is None
    True
    """
    if not escapes_a_surrogate(raw):
        return None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        half = ord(exc.object[exc.start])
        pair = "half of a UTF-16 pair, not a character"
        return f"{what} holds a lone surrogate (\\u{half:04x}): {pair}"
    return None
