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

from typing import NamedTuple

__all__ = ["Number", "Text", "Boolean", "ErrorValue", "ArrayConst", "Reference", "Name",
           "BadReference", "BinaryOp", "Negate", "Percent", "Call", "Omitted", "OMITTED",
           "NODE_TYPES", "as_tuple"]


class Number(NamedTuple):
    """A number constant: ``2.5``."""

    value: float
    tag = "n"


class Text(NamedTuple):
    """A text constant, without its quotes and with doubled quotes undone."""

    value: str
    tag = "s"


class Boolean(NamedTuple):
    """``TRUE`` or ``FALSE``."""

    value: bool
    tag = "b"


class ErrorValue(NamedTuple):
    """An error constant such as ``#N/A``, by its engine code (:data:`~.values.ERROR_CODES`)."""

    code: int
    tag = "e"


class ArrayConst(NamedTuple):
    """An array constant ``{1,2;"a",TRUE}``: rows of equal length holding floats, strings,
    booleans and :class:`ErrorValue` nodes."""

    rows: tuple
    tag = "arr"


class Reference(NamedTuple):
    """A cell or rectangular range ``Sheet!A1:B2``: 1-based, inclusive corners.

    ``sheet`` is the sheet's name as written, ``None`` for the formula's own sheet.
    """

    sheet: str | None
    r1: int
    c1: int
    r2: int
    c2: int
    tag = "ref"


class Name(NamedTuple):
    """A defined name, upper case; ``sheet`` is set for a sheet-qualified ``Sheet!Name``."""

    sheet: str | None
    name: str
    tag = "name"


class BadReference(NamedTuple):
    """A reference the engine cannot follow, evaluated as the error ``code``: ``#REF!`` itself,
    or an external-workbook, 3-D or structured (table) reference."""

    text: str
    code: int
    tag = "bad"


class BinaryOp(NamedTuple):
    """An infix operator: arithmetic, comparison, ``&``, or a reference operator
    (``:`` range, ``" "`` intersection, ``,`` union)."""

    op: str
    left: tuple
    right: tuple
    tag = "op"


class Negate(NamedTuple):
    """Prefix minus: ``-x``."""

    operand: tuple
    tag = "neg"


class Percent(NamedTuple):
    """Postfix percent: ``x%`` is ``x / 100``."""

    operand: tuple
    tag = "pct"


class Call(NamedTuple):
    """A function call; ``name`` is upper case without the ``_xlfn.`` prefix, ``args`` a tuple
    of nodes."""

    name: str
    args: tuple
    tag = "call"


class Omitted(NamedTuple):
    """An omitted argument: the middle one of ``IF(A1,,2)``."""

    tag = "missing"


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
for _cls in NODE_TYPES:
    _cls.__eq__, _cls.__ne__ = _same_node, _other_node


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
