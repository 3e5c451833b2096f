"""Parameter validation: one helper for the API, the CLI and metric parameters.

Every public function checks its arguments with these, so that a wrong value gets the same kind
of message wherever it is given: the parameter, the value given, what is expected and, where it
helps, what the parameter means::

    resamples=0 must be an integer from 1 to 10,000,000 (randomizations of the paired test)
    alpha=1.5 must be a number strictly between 0 and 1 (the significance level)
    test='anova' must be one of 'randomization', 't', 'bootstrap', 'wilcoxon', 'sign'

Booleans are never numbers here (``True`` is not the integer 1), NaN and infinities are never
numbers unless a bound says so, and NumPy scalars count as the Python numbers they hold. Each
helper returns the value as a plain Python object (``int``, ``float``, ``bool``, ``str``), so a
caller can store what it returns. Standard library only: it sits beside ``errors``, below
everything else.

In the style of scikit-learn's parameter validation, but as plain functions: a call site reads
as the constraint it enforces, and the type checker sees the returned type.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

from rankmeter.errors import PolicyError

__all__ = [
    "INT64_MAX",
    "MAX_RESAMPLES",
    "alpha",
    "boolean",
    "choice",
    "identifier",
    "integer",
    "level",
    "number_text",
    "real",
    "resamples",
    "seed",
]

#: The largest integer any parameter takes where the caller gives no upper bound: NumPy and the
#: C kernels hold integers (cutoffs, depths, counts, seeds) as int64, and a larger Python int
#: overflows there ("Python int too large to convert to C long") instead of being refused.
INT64_MAX = 2**63 - 1

#: The most random sign patterns, permutations or bootstrap resamples anything in rankmeter
#: draws. The intervals keep every bootstrap mean (8 bytes per resample and column), and the
#: work grows with resamples times queries, so a mistyped count would otherwise end in an
#: exhausted memory, hours later.
MAX_RESAMPLES = 10_000_000


def _fail(name: str, value: Any, expected: str, what: str, error: type[Exception]) -> Exception:
    meaning = f" ({what})" if what else ""
    return error(f"{name}={_shown(value)} must be {expected}{meaning}")


def _shown(value: Any) -> str:
    """``repr(value)``, except for an int too long to write (Python refuses past 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"<an integer of about {int(value.bit_length() * math.log10(2))} digits>"
    return repr(value)


def _int_text(value: int) -> str:
    return f"{value:,}" if abs(value) >= 10_000 else str(value)


def integer(
    name: str,
    value: Any,
    *,
    low: int | None = None,
    high: int | None = None,
    what: str = "",
    error: type[Exception] = PolicyError,
) -> int:
    """``value`` as an int, if it is an integer within ``[low, high]`` (either bound optional).

    >>> integer("cutoff", 10, low=1)
    10
    >>> integer("cutoff", 0, low=1, what="how many results count")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: cutoff=0 must be an integer >= 1 (how many results count)
    >>> integer("resamples", True, low=1, high=10_000_000)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: resamples=True must be an integer from 1 to 10,000,000

    Without ``high``, the bound is :data:`INT64_MAX` (what NumPy can hold):

    >>> integer("depth", 2**64, low=1)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: depth=18446744073709551616 must be an integer from 1 to 9,223,372,036,854,775,807
    """
    if low is not None and high is not None:
        expected = f"an integer from {_int_text(low)} to {_int_text(high)}"
    elif low is not None:
        expected = f"an integer >= {_int_text(low)}"
    elif high is not None:
        expected = f"an integer <= {_int_text(high)}"
    else:
        expected = "an integer"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _fail(name, value, expected, what, error)
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise _fail(name, value, expected, what, error)
    if high is None and abs(number) > INT64_MAX:
        floor = low if low is not None else -INT64_MAX
        expected = f"an integer from {_int_text(floor)} to {_int_text(INT64_MAX)}"
        raise _fail(name, value, expected, what, error)
    return number


def real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    what: str = "",
    error: type[Exception] = PolicyError,
) -> float:
    """``value`` as a float, if it is a finite real number within the bounds (closed unless
    ``open_low``/``open_high``).

    >>> real("alpha", 0.05, low=0, high=1, open_low=True, open_high=True)
    0.05
    >>> real("alpha", 1.5, low=0, high=1, open_low=True, open_high=True, what="the significance level")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: alpha=1.5 must be a number strictly between 0 and 1 (the significance level)
    >>> real("rel", float("nan"))
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: rel=nan must be a finite number
    """
    expected = _range_text(low, high, open_low, open_high)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(name, value, expected, what, error)
    number = float(value)
    if not math.isfinite(number):  # "inf must be a number >= 0" would contradict itself
        finite = expected.replace("a number", "a finite number", 1)
        raise _fail(name, value, finite, what, error)
    if low is not None and (number < low or (open_low and number == low)):
        raise _fail(name, value, expected, what, error)
    if high is not None and (number > high or (open_high and number == high)):
        raise _fail(name, value, expected, what, error)
    return number


def number_text(value: float) -> str:
    """A number as a person writes it: a whole number without its ``.0``, any other exactly
    as Python reads it back (``repr``). The one way rankmeter writes a number into a name, a
    message or a TREC file (``rel=2`` in a metric's name, a grade ``0.5`` in qrels).

    >>> number_text(2.0), number_text(0.5), number_text(3), number_text(1e-07), number_text(-0.0)
    ('2', '0.5', '3', '1e-07', '0')
    """
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _range_text(low: float | None, high: float | None, open_low: bool, open_high: bool) -> str:
    shown = number_text

    if low is not None and high is not None:
        if open_low and open_high:
            return f"a number strictly between {shown(low)} and {shown(high)}"
        if not open_low and not open_high:
            return f"a number from {shown(low)} to {shown(high)}"
        left = ">" if open_low else ">="
        right = "<" if open_high else "<="
        return f"a number {left} {shown(low)} and {right} {shown(high)}"
    if low is not None:
        return f"a number {'>' if open_low else '>='} {shown(low)}"
    if high is not None:
        return f"a number {'<' if open_high else '<='} {shown(high)}"
    return "a finite number"


def boolean(name: str, value: Any, *, error: type[Exception] = PolicyError) -> bool:
    """``value`` if it is True or False (not 0, 1, or a string).

    >>> boolean("include_missing", 1)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: include_missing=1 must be True or False
    """
    if not isinstance(value, bool):
        raise _fail(name, value, "True or False", "", error)
    return value


def choice(
    name: str,
    value: Any,
    options: Iterable[str],
    *,
    what: str = "",
    error: type[Exception] = PolicyError,
) -> str:
    """``value`` if it is one of ``options`` (strings, compared exactly).

    >>> choice("correction", "holm", ("holm", "bonferroni", "bh", "none"))
    'holm'
    >>> choice("correction", "sidak", ("holm", "bonferroni", "bh", "none"))
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: correction='sidak' must be one of 'holm', 'bonferroni', 'bh', 'none'
    """
    valid = tuple(options)
    if not isinstance(value, str) or value not in valid:
        raise _fail(name, value, "one of " + ", ".join(map(repr, valid)), what, error)
    return value


def identifier(
    name: str, value: Any, *, what: str = "", error: type[Exception] = PolicyError
) -> str:
    """``value`` as a string, if it is a string or an integer (an id typed as a number).

    >>> identifier("query", 7)
    '7'
    >>> identifier("query", None, what="the query to explain")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: query=None must be a string or an integer (the query to explain)
    """
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral)):
        raise _fail(name, value, "a string or an integer", what, error)
    return str(value) if isinstance(value, str) else str(int(value))


# -- the parameters shared across the library: one check and one wording each ------------------


def alpha(value: Any, *, name: str = "alpha") -> float:
    """A significance level: a number strictly between 0 and 1 (``name`` for a second one,
    such as ``srm_alpha``).

    >>> alpha(0.05)
    0.05
    >>> alpha(1.5)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: alpha=1.5 must be a number strictly between 0 and 1 (the significance level)
    """
    return real(
        name, value, low=0, high=1, open_low=True, open_high=True, what="the significance level"
    )


def level(value: Any, *, name: str = "level") -> float:
    """A confidence level: a number strictly between 0 and 1 (``name``: the parameter's name
    where it is not ``level``, such as agreement's ``confidence``).

    >>> level(95)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: level=95 must be a number strictly between 0 and 1 (e.g. 0.95 for 95%)
    """
    return real(name, value, low=0, high=1, open_low=True, open_high=True, what="e.g. 0.95 for 95%")


def seed(value: Any, *, name: str = "seed") -> int:
    """A seed of NumPy's random number generators: an integer from 0 to :data:`INT64_MAX`.

    >>> seed(-1)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: seed=-1 must be an integer >= 0 (the seed of the random number generator)
    """
    return integer(name, value, low=0, what="the seed of the random number generator")


def resamples(
    value: Any,
    *,
    what: str,
    low: int = 1,
    high: int = MAX_RESAMPLES,
    name: str = "resamples",
    default: int = 10_000,
    p_values: bool = True,
    kept: bool = True,
) -> int:
    """A count of random draws (sign patterns, permutations, bootstrap resamples): an integer
    from ``low`` (the fewest that can give the answer asked for) to ``high`` (at most
    :data:`MAX_RESAMPLES`). ``what`` says what is drawn; a count above :data:`MAX_RESAMPLES`
    is also told what it would cost, in words the caller makes true of its work: ``default``
    is the caller's default count, ``p_values`` whether the draws give p-values (then the
    default's resolution is told) and ``kept`` whether every resample is kept (bootstrap
    intervals: then the memory is told):

    >>> resamples(10**9, what="bootstrap resamples")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: resamples=1000000000 must be an integer from 1 to 10,000,000 (bootstrap resamples): bootstrap intervals keep every resample (7.5 GiB per system and metric at this count), and the time grows with resamples times queries (about 1 s per million resamples and 100 queries); 10,000 (the default) already resolves p-values to 0.0001

    >>> resamples(10**9, what="bootstrap resamples of the queries", default=1_000, p_values=False,
    ...           kept=False)
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: resamples=1000000000 must be an integer from 1 to 10,000,000 (bootstrap resamples of the queries): the time grows with resamples times queries (about 1 s per million resamples and 100 queries); the default is 1,000

    >>> resamples(1_000, what="bootstrap resamples")
    1000
    >>> resamples(0, what="bootstrap resamples")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: resamples=0 must be an integer from 1 to 10,000,000 (bootstrap resamples)
    """
    high = min(high, MAX_RESAMPLES)
    count = int(value) if isinstance(value, numbers.Integral) else None
    if (
        count is not None
        and not isinstance(value, bool)
        and high == MAX_RESAMPLES < count <= INT64_MAX
    ):
        per_column = count * 8 / 2**30
        size = f"{per_column:.1f} GiB" if per_column >= 1 else f"{count * 8 / 2**20:.0f} MiB"
        head = _fail(
            name, value, f"an integer from {_int_text(low)} to {_int_text(high)}", what, PolicyError
        )
        time = (
            "the time grows with resamples times queries (about 1 s per million resamples and "
            "100 queries)"
        )
        if kept:
            time = (
                f"bootstrap intervals keep every resample ({size} per system and metric at this "
                f"count), and {time}"
            )
        if p_values:
            enough = f"{default:,} (the default) already resolves p-values to {1 / default:g}"
        else:
            enough = f"the default is {default:,}"
        raise PolicyError(f"{head}: {time}; {enough}")
    return integer(name, value, low=low, high=high, what=what)
