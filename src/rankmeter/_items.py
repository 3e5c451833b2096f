"""Comma-separated lists typed by hand: ``--grades 3,0,2``, ``--weights 0.7,0.3``,
``--sweep efSearch=16,32``.

Every item is checked and named by its position when it is wrong. An empty item is an error,
never dropped: ``3,,2`` is a typo, and reading it as the list 3, 2 would compute a number for a
ranking nobody gave. Numbers are read as people write them (``3``, ``-1``, ``0.5``, ``.5``,
``1e-3``), not as everything Python's ``float()`` takes (``1_000``, ``０``, ``nan``, ``inf``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from rankmeter.errors import PolicyError

__all__ = ["number", "split"]

# ASCII digits only: Python's float() also takes "1_000" and other scripts' digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def split(text: str, what: str, hint: str, *, spaces: bool = False) -> list[str]:
    """The items of a comma-separated list (and, with ``spaces``, of a space-separated one).

    Raises PolicyError naming ``what`` when nothing is given, or an empty item and its
    position (1-based, counting the items before it):

    >>> split("3, 0 ,2", "grades", "give numbers")
    ['3', '0', '2']
    >>> split("3,,2", "grades", "give numbers")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: grades: item 2 is empty in '3,,2'; give numbers
    """
    if not text.strip():
        raise PolicyError(f"{what}: none given; {hint}")
    items: list[str] = []
    for part in text.split(","):
        tokens = part.split() if spaces else [part.strip()]
        if not tokens or tokens == [""]:
            raise PolicyError(f"{what}: item {len(items) + 1} is empty in {text!r}; {hint}")
        items.extend(tokens)
    return items


def number(item: Any, position: int, what: str, hint: str, noun: str = "number") -> float:
    """Item ``position`` of a list as a finite float; else a PolicyError that names it.

    >>> number("2.5", 1, "weights", "give numbers")
    2.5
    >>> number("nan", 2, "weights", "give numbers")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: weights: item 2, 'nan', is not a finite number; give numbers
    """
    if isinstance(item, str):
        if not item.strip():
            raise PolicyError(f"{what}: item {position} is empty; {hint}")
        if _NOT_FINITE.fullmatch(item.strip()):
            raise PolicyError(f"{what}: item {position}, {item!r}, is not a finite {noun}; {hint}")
        if not _NUMBER.fullmatch(item.strip()):
            raise PolicyError(f"{what}: item {position}, {item!r}, is not a {noun}; {hint}")
        value = float(item)
    else:
        try:
            if isinstance(item, bool):
                raise TypeError  # True is not the number 1 here
            value = float(item)  # an int, a float, a NumPy number, a Fraction, ...
        except (TypeError, ValueError):
            raise PolicyError(
                f"{what}: item {position}, {item!r}, is not a {noun}; {hint}"
            ) from None
    if not math.isfinite(value):  # nan and inf given as numbers, or 1e400
        raise PolicyError(f"{what}: item {position}, {item!r}, is not a finite {noun}; {hint}")
    return value
