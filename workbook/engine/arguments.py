"""How a function is declared to the engine and how its arguments reach it.

A function is an :class:`Fn`: its implementation ``impl(ctx, *args)`` and, for each
parameter, an :class:`ArgKind` saying in what form the engine passes the argument:

==========  ===============================================================================
kind        the implementation receives
==========  ===============================================================================
``VALUE``   a :class:`~.values.Val`: a reference is read, and in a normal formula a range
            is reduced to one cell by implicit intersection (kept whole in an array
            formula).  Most functions: ``ROUND``, ``IF``'s condition, ``MATCH``'s value.
``REF``     the argument as it evaluates, unread: a :class:`~.references.Ref` (or a
            :class:`~.references.RefList` union) for a reference, else a ``Val``.  For
            functions that read ranges themselves (``SUM``, ``COUNTIF``), take a reference
            (``ROW``, ``OFFSET``, ``INDEX``) or a table (``VLOOKUP``).
``ARRAY``   like ``REF``, but the argument is evaluated as in an array formula: element by
            element over ranges (``SUMPRODUCT(A1:A3*B1:B3)``, ``TRANSPOSE``).
``LAZY``    a :class:`LazyArg`, not evaluated before the call: the function evaluates it
            only if it needs it (the branches of ``IF``, ``IFERROR``, ``CHOOSE``).
==========  ===============================================================================

An omitted argument (``IF(A1,,2)``) arrives as :data:`MISSING` whatever its kind, and an
optional parameter left out has the default of the implementation's signature.
:class:`ScenarioSplit` is how an implementation asks to be called one scenario at a time.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from .values import Val

__all__ = ["ArgKind", "VALUE", "REF", "ARRAY", "LAZY", "Fn", "FunctionRegistry", "LazyArg", "MISSING",
           "ScenarioSplit"]


class ArgKind(enum.Enum):
    """In what form the engine passes an argument to a function (see the module's table).

    The value is the letter of the short code :class:`Fn` also accepts (``"vrv"``).
    """

    VALUE = "v"
    REF = "r"
    ARRAY = "a"
    LAZY = "l"


VALUE, REF, ARRAY, LAZY = ArgKind.VALUE, ArgKind.REF, ArgKind.ARRAY, ArgKind.LAZY


class ScenarioSplit(Exception):
    """Raised by a function that cannot handle scenario-varying arguments at once.

    The engine then evaluates the formula once per scenario.
    """


class _Missing:
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


#: An omitted function argument (``IF(A1,,2)``).
MISSING = _Missing()


class LazyArg:
    """What a :data:`LAZY` parameter receives: the argument, evaluated only when asked.

    :meth:`val` gives its value (a reference read as a ``VALUE`` argument is), :meth:`raw`
    what it evaluates to (a reference stays one: ``IF(A1, B1:B3, C1:C3)`` returns a range).
    """

    __slots__ = ("f", "ctx")

    def __init__(self, f, ctx):
        self.f = f
        self.ctx = ctx

    def raw(self):
        """The argument evaluated, unread (a ``Ref``, ``RefList``, ``Val`` or :data:`MISSING`)."""
        return self.f(self.ctx)

    def val(self):
        """The argument's value (a ``Val``; an empty value for an omitted argument)."""
        x = self.f(self.ctx)
        return Val.empty() if x is MISSING else self.ctx.value(x)


def _kinds(code) -> tuple[ArgKind, ...]:
    """``"vr"`` or ``(VALUE, REF)`` -> ``(VALUE, REF)``."""
    return tuple(k if isinstance(k, ArgKind) else ArgKind(k) for k in code)


class Fn:
    """A function the engine can call.

    Parameters
    ----------
    name : str
        Excel name, upper case, without ``_xlfn.``.
    impl : callable
        ``impl(ctx, *args) -> Val | Ref``.
    params : sequence of ArgKind, or str
        The kind of each parameter, in order (see :class:`ArgKind`).  The short code of one
        letter per kind is accepted too (``"vrv"`` is ``(VALUE, REF, VALUE)``), where a final
        ``*`` makes the last letter's kind repeat for any number of further arguments
        (``"vl*"`` is ``(VALUE, LAZY)`` with ``rest=(LAZY,)``), and ``max_args`` is then
        unlimited whatever is given.
    min_args, max_args : int
        Accepted argument counts; by default every parameter is required and no further
        argument is accepted, or any number when ``rest`` is given (``max_args=None``:
        unlimited).
    volatile : bool
        Recalculated on every change (``NOW``, ``OFFSET``); makes the writer
        ask Excel for a full recalculation on load.
    udf : bool
        A cryptoplan add-in function (not native Excel).  It reads the values of its ``REF``
        arguments and nothing else of them, so the cells of one shape may hand it a
        :class:`~.references.LaneRef` (one cell per lane).
    rest : sequence of ArgKind
        The kinds of the arguments after ``params``, taken in turn: ``(REF,)`` for ``SUM``'s
        ranges, ``(REF, VALUE)`` for ``COUNTIFS``'s range/criterion pairs.  Without it, an
        argument past ``params`` (when ``max_args`` allows one) has the last parameter's kind.

    Examples
    --------
    >>> Fn("MATCH", impl, (VALUE, REF, VALUE), min_args=2)              # doctest: +SKIP
    >>> Fn("SUMIFS", impl, (REF,), min_args=3, rest=(REF, VALUE))        # doctest: +SKIP
    """

    __slots__ = ("name", "impl", "params", "rest", "min_args", "max_args", "volatile", "udf")

    def __init__(self, name: str, impl: Callable, params: Sequence[ArgKind] | str = (),
                 min_args: int | None = None, max_args: int | None = None, volatile: bool = False,
                 udf: bool = False, *, rest: Sequence[ArgKind] | str = ()):
        unlimited = False
        if isinstance(params, str) and params.endswith("*"):
            unlimited = True
            params = params.rstrip("*")
            rest = params[-1:]
        self.name = name
        self.impl = impl
        self.params = _kinds(params)
        self.rest = _kinds(rest)
        self.min_args = len(self.params) if min_args is None else min_args
        if unlimited or (max_args is None and self.rest):
            max_args = None
        elif max_args is None:
            max_args = len(self.params)
        self.max_args = max_args
        self.volatile = volatile
        self.udf = udf

    def kind(self, i: int) -> ArgKind:
        """The kind of argument ``i`` (0-based)."""
        if i < len(self.params):
            return self.params[i]
        if self.rest:
            return self.rest[(i - len(self.params)) % len(self.rest)]
        return self.params[-1] if self.params else VALUE


class FunctionRegistry(dict):
    """``{NAME: Fn}``.  :func:`cryptoplan.workbook.engine.functions.native_functions` and
    :func:`~cryptoplan.workbook.catalog_functions.default_functions` make one;
    :func:`cryptoplan.workbook.catalog_functions.callable_function` wraps a plain Python callable as an ``Fn``."""

    def copy(self) -> "FunctionRegistry":
        return FunctionRegistry(self)
