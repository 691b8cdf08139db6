"""Argument validation: the one place where model inputs are checked.

Every public function in :mod:`cryptoplan.model` passes its numeric arguments through
:func:`check`, so the error a user sees (in Python or, through the add-in, in
an Excel cell) always has the same form::

    servers must be >= 1 (got 0.5)
    servers must be >= 1 (got 0.5 at index 3)

Array policy
------------
Validation is *all or nothing*: if any element of an array argument is
outside its allowed range the whole call raises :class:`ValueError` naming the
argument, the first offending index and value, and the allowed range.  No
element is silently masked or returned as NaN.  Callers that want per-element
errors (the Excel layer does, so that one bad row of a What-if table does not
blank the others) evaluate element by element.
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError, InputError, InputTypeError

import math
import sys
from collections.abc import Sequence
from numbers import Real

import numpy as np

from ._text import value_text

__all__ = ["check", "check_stable", "as_float_array", "as_array", "as_choice_array", "is_scalar", "broadcast",
           "index_text", "number_text", "range_text", "UnstableQueueError", "ArgumentError", "NotAvailableError"]


class _ElementsError(CryptoplanError, ValueError):
    """A ValueError that may say which elements of an array call failed (``mask``) and what
    each one's own message is (``element_message``); the two public kinds follow."""

    def __init__(self, message: str, mask=None, element_message=None):
        super().__init__(message)
        self.mask = mask
        self.element_message = element_message

    def __reduce__(self):          # pickles as its message (the element detail stays in-process)
        return type(self), self.args


class UnstableQueueError(_ElementsError):
    """The offered load reaches or exceeds the capacity of an open queue.

    A subclass of :class:`ValueError` so that callers catching bad input also
    catch instability; the add-in shows it as its own Excel error text.

    Attributes
    ----------
    mask : ndarray of bool or None
        For an array call: which elements are unstable (the broadcast shape of the
        arguments); every other element passed this check.
    element_message : callable or None
        ``element_message(i)`` is the message a call with element ``i``'s (flat index)
        scalar arguments raises here: a caller evaluating many scenarios reports each
        unstable one without calling again, then retries only the stable ones.
    """


class ArgumentError(_ElementsError):
    """An argument outside its allowed range: a :class:`ValueError` that says which elements.

    Attributes
    ----------
    mask : ndarray of bool
        Over the argument's own shape (0-d for a single number): which elements are outside
        the range.  Every other element passed this check.
    element_message : callable
        ``element_message(i)`` is the message a call with element ``i``'s (flat index) value
        alone raises here, so a caller evaluating many scenarios reports each bad one and
        computes the others in one more call (scipy's ``_argcheck`` pattern).
    """


class NotAvailableError(_ElementsError):
    """The quantity asked for does not exist for these inputs (Excel's ``#N/A``), with ``mask`` and
    ``element_message`` as :class:`ArgumentError`: e.g. the months until a resource reaches its
    target when nothing on it grows."""


def is_scalar(*xs) -> bool:
    """True when every argument is a plain Python/NumPy real scalar (fast path).

    A Python ``float`` or ``int`` (not ``bool``) is answered by its type alone: the
    :class:`numbers.Real` test is an abstract-class check, 0.3 µs an argument, a third of a
    scalar Erlang C's validation.
    """
    for x in xs:
        t = type(x)
        if t is float or t is int:
            continue
        if not isinstance(x, Real) or isinstance(x, (bool, np.timedelta64, np.datetime64)):
            return False
    return True


def as_float_array(name: str, x, requirement: str = "must be a finite number") -> np.ndarray:
    """Convert *x* to a float64 array, naming *name* if that is impossible.

    Parameters
    ----------
    name : str
        The argument's name for the error message.
    x : array_like
        Number(s).
    requirement : str
        What the argument must be (:func:`range_text`), stated when an element is an
        integer beyond the float range (``traffic must be in [0, 1e+12] (got 1000...000
        (401 digits))``).

    Raises
    ------
    TypeError
        Text, a date, TRUE/FALSE, a complex or masked array, or something not numeric.
    ValueError
        Nested lists of unequal lengths, or an integer beyond the float range
        (:class:`ArgumentError`), naming the argument, the value and ``requirement``.
    """
    if isinstance(x, (str, bytes)):
        raise InputTypeError(f"{name} must be a number or an array of numbers (got {value_text(x)})")
    ma = sys.modules.get("numpy.ma")  # a masked array exists only once numpy.ma is imported
    if ma is not None and isinstance(x, ma.MaskedArray):
        raise InputTypeError(f"{name} must be plain numbers: a masked array's hidden values would be used "
                        "(fill or drop them first, e.g. x.filled(...) or x.compressed())")
    if isinstance(x, complex):
        raise InputTypeError(f"{name} must be a real number (got a complex value); its imaginary part "
                        "would be dropped")
    try:
        raw = np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        if isinstance(x, (list, tuple)):    # NumPy's "inhomogeneous shape": rows of unequal lengths
            raise InputError(f"{name} must be a number or a rectangular array of numbers: its nested lists "
                             f"have different lengths (got {value_text(x)})") from None
        raise InputTypeError(f"{name} must be a number or an array of numbers (got {value_text(x)})") from None
    if np.iscomplexobj(raw):
        raise InputTypeError(f"{name} must be a real number (got a complex value); its imaginary part "
                        "would be dropped")
    if raw.dtype.kind in "mM":
        raise InputTypeError(f"{name} must be a number, not a date or time (got dtype {raw.dtype})")
    if raw.dtype == bool:
        raise InputTypeError(f"{name} must be a number, not TRUE/FALSE (got {value_text(x)})")
    try:
        return np.asarray(raw, dtype=float)
    except OverflowError:
        raise _beyond_float(name, raw, requirement) from None
    except (ValueError, TypeError):
        raise InputTypeError(f"{name} must be a number or an array of numbers (got {value_text(x)})") from None


def as_array(name: str, x) -> np.ndarray:
    """``np.asarray(x)``, with an error naming ``name`` for nested lists of unequal lengths.

    For arguments whose dtype matters to the caller (integer station indices, text or
    numbers); :func:`as_float_array` converts to floats as well.

    Raises
    ------
    ValueError
        The nested lists have different lengths.
    """
    try:
        return np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        if isinstance(x, (list, tuple)):
            raise InputError(f"{name} must be one value or a rectangular array of values: its nested lists "
                             f"have different lengths (got {value_text(x)})") from None
        raise InputTypeError(f"{name} must be one value or an array of values (got {value_text(x)})") from None


def as_choice_array(name: str, x) -> tuple:
    """An array argument of choices (text, key sizes, "unlimited"...): ``(objects, keys)``.

    ``objects`` is ``x`` as an object array (each element as given, for the caller's own
    vocabulary check), ``keys`` the same as text (for ``np.unique``: one check per distinct
    spelling).  Nested lists of unequal lengths, which NumPy leaves as list elements, are
    refused here, naming the argument; the check costs nothing on the normal path (it is
    the failure of the conversion to text).

    Raises
    ------
    ValueError
        The nested lists have different lengths.
    """
    try:
        arr = np.asarray(x, dtype=object)
        return arr, arr.astype(str)
    except (ValueError, TypeError):
        pass
    # the error path only: find out why, element by element
    try:
        arr = np.asarray(x, dtype=object)
        ragged = any(isinstance(v, (list, tuple, np.ndarray)) for v in arr.ravel())
    except (ValueError, TypeError):
        ragged = True
    if ragged:
        raise InputError(f"{name} must be one value or a rectangular array of values: its nested lists "
                         f"have different lengths (got {value_text(x)})")
    # an element str() refuses (an integer over 4,300 digits)
    return arr, np.array([value_text(v) for v in arr.ravel()]).reshape(arr.shape)


def _beyond_float(name: str, raw: np.ndarray, requirement: str) -> ArgumentError:
    """The error for an integer argument (or element) beyond the float range (about 1.8e308).

    Only on this error path are the elements visited one by one, to name the first.
    """
    def huge(v) -> bool:
        try:
            float(v)
        except OverflowError:
            return True
        except (TypeError, ValueError):
            return False
        return False
    if raw.ndim == 0:
        return ArgumentError(f"{name} {requirement} (got {value_text(raw.item())})")
    for idx in np.ndindex(raw.shape):
        if huge(raw[idx]):
            return ArgumentError(f"{name} {requirement} (got {value_text(raw[idx])} at index {index_text(idx)})")
    return ArgumentError(f"{name} {requirement} (got a number beyond the float range)")


def _where(bad: np.ndarray, arr: np.ndarray) -> str:
    idx = np.argwhere(bad)[0]
    value = arr[tuple(idx)]
    if arr.ndim == 0:
        return f"got {value:g}"
    return f"got {value:g} at index {index_text(idx)}"


def index_text(idx) -> str:
    """An array index as error messages print it: ``3`` or ``1, 2``."""
    return ", ".join(str(int(i)) for i in idx)


def number_text(x: float) -> str:
    """A bound as messages and help texts write it: shortest (``%g``) when that is exact.

    ``64``, ``0.01``, ``1e+12``; ``999999999`` and ``9999999`` in full, where ``%g``
    would round them to ``1e+09`` and ``1e+07`` and a message would contradict itself.
    """
    short = f"{x:g}"
    if float(short) == x:
        return short
    return str(int(x)) if x == int(x) else repr(float(x))


def range_text(lo, hi, lo_open=False, hi_open=False) -> str:
    """The requirement :func:`check` states: ``must be >= 1``, ``must be in [0, 1)``."""
    if hi is None:
        return f"must be {'>' if lo_open else '>='} {number_text(lo)}"
    if lo is None:
        return f"must be {'<' if hi_open else '<='} {number_text(hi)}"
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    return f"must be in {left}{number_text(lo)}, {number_text(hi)}{right}"


def check(name: str, x, lo=None, hi=None, *, lo_open=False, hi_open=False,
          integer=False, scalar=False):
    """Validate a numeric argument and return it (scalar as float, array as ndarray).

    Parameters
    ----------
    name : str
        Argument name used in the error message.
    x : float or array_like
        Value(s) to check.  Must be finite.
    lo, hi : float, optional
        Allowed bounds.  ``None`` means unbounded on that side.
    lo_open, hi_open : bool
        Whether the bound itself is excluded.
    integer : bool
        Require whole numbers (``2048.0`` is accepted: Excel sends floats).
    scalar : bool
        Require a single number (for arguments that are not vectorized).

    Raises
    ------
    ValueError
        Naming the argument, the offending value (and index), and the range.
    TypeError
        If *x* is not numeric.
    """
    if is_scalar(x):
        try:
            v = float(x)
        except OverflowError:       # an integer beyond the float range: outside any range
            raise ArgumentError(f"{name} {_requirement(lo, hi, lo_open, hi_open)} (got {value_text(x)})",
                                mask=np.asarray(True),
                                element_message=lambda i: f"{name} {_requirement(lo, hi, lo_open, hi_open)} "
                                                          f"(got {value_text(x)})") from None
        ok = math.isfinite(v)
        if ok and lo is not None:
            ok = v > lo if lo_open else v >= lo
        if ok and hi is not None:
            ok = v < hi if hi_open else v <= hi
        if ok and integer:
            ok = v == math.floor(v)
        if ok:
            return v
        arr = np.asarray(v)
    else:
        arr = as_float_array(name, x, _requirement(lo, hi, lo_open, hi_open))
        if scalar and arr.ndim != 0:
            raise InputError(f"{name} must be a single number, not a range or array (got shape "
                             f"{arr.shape})")
    rng = range_text(lo, hi, lo_open, hi_open) if lo is not None or hi is not None else ""
    tests = [(~np.isfinite(arr), "must be a finite number")]
    if lo is not None:
        tests.append((arr <= lo if lo_open else arr < lo, rng))
    if hi is not None:
        tests.append((arr >= hi if hi_open else arr > hi, rng))
    if integer:
        tests.append((arr != np.floor(arr), "must be a whole number"))
    failed = [(bad, text) for bad, text in tests if bad.any()]
    if failed:
        bad, text = failed[0]
        mask = np.any([b for b, _ in failed], axis=0)    # = logical_or.reduce, which NumPy 2.5's stubs refuse

        def element_message(i: int) -> str:      # the first test element i fails, as a scalar call says
            text_i = next(tx for b, tx in tests if b.flat[i])
            return f"{name} {text_i} (got {arr.flat[i]:g})"
        raise ArgumentError(f"{name} {text} ({_where(bad, arr)})", mask=mask,
                            element_message=element_message)
    if arr.ndim == 0:
        return float(arr)
    return arr


def _requirement(lo, hi, lo_open, hi_open) -> str:
    """What :func:`check` requires of a number beyond the float range: ``must be in [0, 1e+12]``,
    ``must be a finite number >= 0`` (one bound: finiteness is the other), ``must be a finite number``."""
    if lo is not None and hi is not None:
        return range_text(lo, hi, lo_open, hi_open)
    if lo is None and hi is None:
        return "must be a finite number"
    return "must be a finite number " + range_text(lo, hi, lo_open, hi_open)[len("must be "):]


def broadcast(**named) -> Sequence[np.ndarray]:
    """``np.broadcast_arrays`` of the named arguments, with an error that names them and their shapes."""
    try:
        return np.broadcast_arrays(*(np.asarray(v) for v in named.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in named.items() if np.ndim(v))
        raise InputError(f"the array arguments do not fit together ({shapes}): give arrays of one "
                         "shape, or shapes that broadcast (one of them 1 along each axis)") from None


def check_stable(utilization, *, what: str = "utilization") -> None:
    """Raise :class:`UnstableQueueError` if any utilization is >= 1.

    ``utilization`` is offered load divided by capacity (traffic / servers).
    """
    if is_scalar(utilization):
        if utilization < 1.0:
            return
        arr = np.asarray(float(utilization))
    else:
        arr = np.asarray(utilization, dtype=float)
        if not (arr >= 1.0).any():
            return
    bad = arr >= 1.0

    def message(where: str) -> str:
        return (f"unstable queue: {what} must be < 1, i.e. the offered load must be below "
                f"the capacity ({where}); add servers or lower the arrival rate")
    raise UnstableQueueError(message(_where(bad, arr)), mask=bad if arr.ndim else None,
                             element_message=lambda i: message(f"got {arr.flat[i]:g}"))
