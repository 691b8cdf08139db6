"""The syntax tree of a formula: one small immutable class per kind of node.

:func:`~cryptoplan.workbook.engine.parser.parse` builds the tree; the compiler
(:class:`~cryptoplan.workbook.engine.compiler.Compiler`) turns it into closures, choosing
what to do by the node's class.  ``=SUM(A1:B2)*-2%`` parses to::

    BinaryOp("*", Call("SUM", (Reference(None, 1, 1, 2, 2),)),
                  Negate(Percent(Number(2.0))))

Every node is a :class:`typing.NamedTuple`: named fields, immutable, and as cheap to build
as a tuple (a workbook has tens of thousands of nodes; a frozen dataclass costs twice as
much to build and 0.4 ms a class at start-up).  Two nodes are equal only if they are of
the same class, unlike plain tuples: ``Negate(x) != Percent(x)``.

Until the node classes, the parser returned tagged tuples (``("ref", sheet, r1, c1, r2,
c2)``, ``("op", "+", left, right)`` ...); :func:`as_tuple` gives a tree in that form, each
class's ``tag`` naming it, for the code written against it
(:meth:`~cryptoplan.workbook.engine.core.Engine.resolve_name`'s callers).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, TypeVar

__all__ = ["Number", "Text", "Boolean", "ErrorValue", "ArrayConst", "Reference", "Name",
           "BadReference", "BinaryOp", "Negate", "Percent", "Call", "Omitted", "OMITTED",
           "NODE_TYPES", "as_tuple"]

_C = TypeVar("_C", bound=type)


def _tagged(tag: str) -> Callable[[_C], _C]:
    """Class decorator: the class attribute ``tag`` (:func:`as_tuple`'s tag), not a field.

    In a NamedTuple's body, ``tag = "n"`` is a field to type checkers, and ``tag: ClassVar[str]``
    is a field at run time too (``typing.NamedTuple`` makes every annotation one).
    """
    def set_tag(cls: _C) -> _C:
        setattr(cls, "tag", tag)
        return cls
    return set_tag


@_tagged("n")
class Number(NamedTuple):
    """A number constant: ``2.5``."""

    value: float


@_tagged("s")
class Text(NamedTuple):
    """A text constant, without its quotes and with doubled quotes undone."""

    value: str


@_tagged("b")
class Boolean(NamedTuple):
    """``TRUE`` or ``FALSE``."""

    value: bool


@_tagged("e")
class ErrorValue(NamedTuple):
    """An error constant such as ``#N/A``, by its engine code (:data:`~.values.ERROR_CODES`)."""

    code: int


@_tagged("arr")
class ArrayConst(NamedTuple):
    """An array constant ``{1,2;"a",TRUE}``: rows of equal length holding floats, strings,
    booleans and :class:`ErrorValue` nodes."""

    rows: tuple


@_tagged("ref")
class Reference(NamedTuple):
    """A cell or rectangular range ``Sheet!A1:B2``: 1-based, inclusive corners.

    ``sheet`` is the sheet's name as written, ``None`` for the formula's own sheet.
    """

    sheet: str | None
    r1: int
    c1: int
    r2: int
    c2: int


@_tagged("name")
class Name(NamedTuple):
    """A defined name, upper case; ``sheet`` is set for a sheet-qualified ``Sheet!Name``."""

    sheet: str | None
    name: str


@_tagged("bad")
class BadReference(NamedTuple):
    """A reference the engine cannot follow, evaluated as the error ``code``: ``#REF!`` itself,
    or an external-workbook, 3-D or structured (table) reference."""

    text: str
    code: int


@_tagged("op")
class BinaryOp(NamedTuple):
    """An infix operator: arithmetic, comparison, ``&``, or a reference operator
    (``:`` range, ``" "`` intersection, ``,`` union)."""

    op: str
    left: tuple
    right: tuple


@_tagged("neg")
class Negate(NamedTuple):
    """Prefix minus: ``-x``."""

    operand: tuple


@_tagged("pct")
class Percent(NamedTuple):
    """Postfix percent: ``x%`` is ``x / 100``."""

    operand: tuple


@_tagged("call")
class Call(NamedTuple):
    """A function call; ``name`` is upper case without the ``_xlfn.`` prefix, ``args`` a tuple
    of nodes."""

    name: str
    args: tuple


@_tagged("missing")
class Omitted(NamedTuple):
    """An omitted argument: the middle one of ``IF(A1,,2)``."""


#: The one :class:`Omitted` node the parser uses.
OMITTED = Omitted()

#: Every class of node.
NODE_TYPES = (Number, Text, Boolean, ErrorValue, ArrayConst, Reference, Name, BadReference,
              BinaryOp, Negate, Percent, Call, Omitted)


def _same_node(a, b):
    return type(a) is type(b) and tuple.__eq__(a, b)


def _other_node(a, b):
    return not _same_node(a, b)


# a node equals a node of its own class only (a plain tuple compares its items alone)
# (setattr: replacing a class's methods is what this does; mypy refuses an assignment to one)
for _cls in NODE_TYPES:
    setattr(_cls, "__eq__", _same_node)
    setattr(_cls, "__ne__", _other_node)


def as_tuple(node) -> tuple:
    """``node`` and its subtree in the parser's former form: tagged tuples such as
    ``("op", "+", ("ref", None, 1, 1, 1, 1), ("n", 2.0))``."""
    return (node.tag, *[_as_tuple_field(x) for x in node])


def _as_tuple_field(x):
    if type(x) in _NODE_TYPE_SET:
        return as_tuple(x)
    if type(x) is tuple:                # Call's arguments, ArrayConst's rows
        return tuple(_as_tuple_field(y) for y in x)
    return x


_NODE_TYPE_SET = frozenset(NODE_TYPES)
