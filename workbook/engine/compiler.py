"""Syntax tree -> a tree of Python closures, once per formula.

:class:`Compiler` walks the tree :func:`~cryptoplan.workbook.engine.parser.parse` builds
(:mod:`.nodes`) and returns one closure ``f(ctx)`` for the formula, made of one closure per
node.  ``f(ctx)`` returns a :class:`~.values.Val`, a :class:`~.references.Ref` or
:class:`~.references.RefList` (a formula may evaluate to a reference: ``=INDEX(A1:B2, 1, 1)``),
or :data:`~.arguments.MISSING`.  ``ctx`` is the evaluation context of the formula's cell
(:class:`~.core.Ctx`): the engine, the cell, array mode, the scenario.

While compiling, the compiler collects what the engine needs to know of the formula: its
static references (the edges of the dependency graph), whether it is *dynamic* (it calls
``OFFSET``, ``INDIRECT`` or a volatile function) and the functions it calls.

Defined names are compiled in place, each time they are used, from the tree the engine keeps
of each name (:meth:`~.core.Engine.defined_name`); a name defined through itself, directly
or through others, compiles to ``#REF!``.

A *shape* (:mod:`.shapes`) shared by many cells compiles once for all of them: given the
references of each cell (``lanes``), a reference the cells share compiles as usual and one
that differs becomes a :class:`~.references.LaneRef`, one cell per lane, read as one value
per cell.  A shape whose differing references are not single cells, or are used where a
function needs the reference itself (``ROWS(A1)``, ``A1:B2``), raises :class:`Ungroupable`:
its cells are compiled one by one.
"""

from __future__ import annotations

import numpy as np

from .arguments import ARRAY, MISSING, REF, VALUE, LazyArg
from .nodes import (
    ArrayConst, BadReference, BinaryOp, Boolean, Call, ErrorValue, Name, Negate, Number, Omitted,
    Percent, Reference, Text,
)
from .ops import binary_op, compare, concat, percent, unary_minus
from .parser import FormulaError
from .references import LaneRef, Ref, Ungroupable, intersection, range_join, union
from .shapes import placeholder_index, reference_node
from .values import (
    BOOL, ERR_NAME, ERR_REF, ERR_UNSUPPORTED, ERR_VALUE, NOT_COMPUTED, STR, Val,
)

__all__ = ["Compiler", "array_value"]

_ARITHMETIC = ("+", "-", "*", "/", "^")
_COMPARISON = ("=", "<>", "<", "<=", ">", ">=")
#: Functions whose references are only known when they run (the engine orders them at run time).
_DYNAMIC_FUNCTIONS = ("OFFSET", "INDIRECT")


def _const(v: Val):
    """The closure of a constant."""
    return lambda ctx: v


def _missing(ctx):
    return MISSING


def _error(function: str, code: int, message: str):
    """A closure that records why (``message``) and returns the error ``code``."""
    def error(ctx):
        ctx.diag(function, code, message)
        return Val.error(code)
    return error


def array_value(rows) -> Val:
    """The value of an array constant (:class:`~.nodes.ArrayConst`'s rows), shape ``(1, rows, cols)``."""
    r, c = len(rows), len(rows[0])
    num = np.zeros((1, r, c))
    kind = np.zeros((1, r, c), dtype=np.int8)
    text = None
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            if isinstance(x, ErrorValue):
                kind[0, i, j] = x.code
            elif isinstance(x, bool):
                kind[0, i, j] = BOOL
                num[0, i, j] = float(x)
            elif isinstance(x, str):
                if text is None:
                    text = np.empty((1, r, c), dtype=object)
                kind[0, i, j] = STR
                text[0, i, j] = x
            else:
                num[0, i, j] = x
    return Val(num, kind, text)


class Compiler:
    """Compiles the formulas of one sheet; collects their static references.

    Parameters
    ----------
    engine : Engine
        Gives the sheets, the defined names and the functions.
    sheet : int
        Index of the formula's sheet (what a reference without a sheet means).
    name_stack : dict, optional
        The defined names being compiled, outermost first (shared with the compilers of the
        names a formula uses, to find names defined through themselves).

    Attributes
    ----------
    refs : list of Ref
        The static references met (of the formula and the names it uses).
    dynamic : bool
        A function whose references are known only at run time was met.
    functions : set of str
        The names of the functions called.
    lanes : list of tuple of str, optional
        For a shape's tree (:func:`~.shapes.shape_tree`): each cell's references, as written.
    lane_refs : list of LaneRef
        The references that differ between the cells (``lanes`` given), each once: a cell
        reference the formula repeats (``IF(ISBLANK(A1),"",A1)``) is one lane, read once.
    """

    def __init__(self, engine, sheet: int, name_stack: dict | None = None, lanes: list | None = None):
        self.engine = engine
        self.sheet = sheet
        self.refs: list[Ref] = []
        self.dynamic = False
        self.functions: set[str] = set()
        self.name_stack = {} if name_stack is None else name_stack
        self.lanes = lanes
        self.lane_refs: list[LaneRef] = []
        self._lanes_by_text: dict = {}      # the cells' reference texts -> their compiled lane
        self._lane_uses = 0                 # placeholders met: a subtree holds a lane if it grew

    def compile(self, node):
        """The closure ``f(ctx)`` of ``node`` (and its subtree)."""
        method = _DISPATCH.get(type(node))
        if method is None:
            raise FormulaError(f"unknown node {node!r}")  # pragma: no cover
        return method(self, node)

    # ---------------------------------------------------------- constants
    def _number(self, node: Number):
        return _const(Val.number(node.value))

    def _text(self, node: Text):
        return _const(Val.string(node.value))

    def _boolean(self, node: Boolean):
        return _const(Val.boolean(node.value))

    def _error_value(self, node: ErrorValue):
        return _const(Val.error(node.code))

    def _array(self, node: ArrayConst):
        return _const(array_value(node.rows))

    def _omitted(self, node: Omitted):
        return _missing

    # ---------------------------------------------------------- references
    def _sheet_index(self, name):
        if name is None:
            return self.sheet
        return self.engine.sheet_index.get(name.lower())

    def _reference(self, node: Reference):
        si = self._sheet_index(node.sheet)
        if si is None or self.engine.sheets[si].kind != "worksheet":
            what = "no sheet" if si is None else f"{self.engine.sheets[si].kind} (not evaluated)"
            return _error("reference", ERR_REF, f"{what} {node.sheet!r}")
        ref = Ref(si, node.r1, node.c1, node.r2, node.c2)
        self.refs.append(ref)
        return lambda ctx: ref

    def _bad_reference(self, node: BadReference):
        code, text = node.code, node.text

        def bad(ctx):
            if code in NOT_COMPUTED:
                ctx.diag("reference", code, f"unsupported reference {text!r} (external "
                         "workbook, 3-D or table reference)")
            return Val.error(code)
        return bad

    def _lane_reference(self, i: int):
        """A shape's placeholder ``i``: the cells' reference if they share it, else a
        :class:`~.references.LaneRef` of single cells (:class:`Ungroupable` otherwise)."""
        texts = tuple([refs[i] for refs in self.lanes or ()])
        known = self._lanes_by_text.get(texts)
        if known is not None:           # a reference the formula repeats: the same lane
            self._lane_uses += 1
            return known
        nodes = [reference_node(t) for t in texts]
        if all(x == nodes[0] for x in nodes):
            return self.compile(nodes[0])
        lane = []
        for x in nodes:
            si = self._sheet_index(x.sheet) if type(x) is Reference else None
            if si is None or self.engine.sheets[si].kind != "worksheet" or x.r1 != x.r2 or x.c1 != x.c2:
                raise Ungroupable(f"reference {i} differs and is not a cell of a worksheet")
            lane.append(Ref(si, x.r1, x.c1, x.r2, x.c2))
        ref = LaneRef(tuple(lane))
        self.lane_refs.append(ref)
        self._lane_uses += 1
        f = self._lanes_by_text[texts] = lambda ctx: ref
        return f

    def _name(self, node: Name):
        """A defined name: its formula compiled in place (``#NAME?`` if unknown, ``#REF!`` if
        it is defined through itself)."""
        if self.lanes is not None:
            i = placeholder_index(node)
            if i is not None:
                return self._lane_reference(i)
        name = node.name
        scope = self.sheet if node.sheet is None else self._sheet_index(node.sheet)
        target = self.engine.defined_name(name, scope)
        if target is None:
            return _error(name, ERR_NAME, f"unknown name {name}")
        tree, home = target
        key = (name.upper(), home)
        name = self.engine.name_as_written(name, home)
        stack = self.name_stack
        if key in stack:
            path = list(stack.values())
            path = path[path.index(stack[key]):] + [name]
            return _error("reference", ERR_REF,
                          f"defined name {name} refers to itself" if len(path) == 2 else
                          f"defined names {' -> '.join(path)} refer to each other in a circle")
        sub = Compiler(self.engine, home if home is not None else self.sheet, stack)
        stack[key] = name
        try:
            f = sub.compile(tree)
        finally:
            stack.pop(key, None)
        self.refs.extend(sub.refs)
        self.dynamic |= sub.dynamic
        self.functions |= sub.functions
        return f

    # ----------------------------------------------------------- operators
    def _negate(self, node: Negate):
        f = self.compile(node.operand)
        return lambda ctx: unary_minus(ctx.value(f(ctx)))

    def _percent(self, node: Percent):
        f = self.compile(node.operand)
        return lambda ctx: percent(ctx.value(f(ctx)))

    def _binary(self, node: BinaryOp):
        op = node.op
        before = self._lane_uses
        fa, fb = self.compile(node.left), self.compile(node.right)
        if op in (":", " ", ",") and self._lane_uses > before:
            raise Ungroupable(f"the reference operator {op!r} on a reference that differs between cells")
        if op in _ARITHMETIC:
            return lambda ctx: binary_op(op, ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op in _COMPARISON:
            return lambda ctx: compare(op, ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op == "&":
            return lambda ctx: concat(ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op == ":":
            return lambda ctx: range_join(ctx, fa(ctx), fb(ctx))
        if op == " ":
            return lambda ctx: intersection(fa(ctx), fb(ctx))
        if op == ",":
            return lambda ctx: union(fa(ctx), fb(ctx))
        raise FormulaError(f"unknown operator {op!r}")  # pragma: no cover

    # ---------------------------------------------------------- functions
    def _call(self, node: Call):
        """A function call: its arguments compiled and passed as the function's parameters
        ask (:class:`~.arguments.ArgKind`); ``#NAME?`` for an unknown function, ``#VALUE!``
        for a wrong number of arguments."""
        name, args = node.name, node.args
        self.functions.add(name)
        spec = self.engine.functions.get(name)
        argfs, laned = [], []
        for a in args:
            before = self._lane_uses
            argfs.append(self.compile(a))
            laned.append(self._lane_uses > before)
        if spec is None:
            return _error(name, ERR_UNSUPPORTED, f"unsupported function {name}()")
        if spec.volatile or name in _DYNAMIC_FUNCTIONS:
            self.dynamic = True
        nargs = len(argfs)
        if nargs < spec.min_args or (spec.max_args is not None and nargs > spec.max_args):
            expected = (f"{spec.min_args}" if spec.max_args == spec.min_args else
                        f"{spec.min_args} to {spec.max_args if spec.max_args is not None else 'any'}")
            return _error(name, ERR_VALUE, f"{name}() takes {expected} arguments, got {nargs}")
        # an omitted argument compiles to a closure returning MISSING: passed as is (REF)
        kinds = [REF if isinstance(a, Omitted) else spec.kind(i) for i, a in enumerate(args)]
        # an add-in function only reads its references' values (a LaneRef is read as one per cell)
        if not spec.udf and any(lane and kind is REF for lane, kind in zip(laned, kinds)):
            raise Ungroupable(f"{name}() takes a reference that differs between cells")
        return _invocation(name, spec.impl, tuple(zip(kinds, argfs)))


def _invocation(name: str, impl, arguments: tuple):
    """The closure that evaluates the arguments, each as its kind says, and calls ``impl``."""
    def call(ctx):
        vals = []
        for kind, f in arguments:
            if kind is VALUE:
                x = f(ctx)
                vals.append(x if x is MISSING else ctx.value(x))
            elif kind is REF:
                vals.append(f(ctx))
            elif kind is ARRAY:
                vals.append(f(ctx.as_array()))
            else:  # LAZY
                vals.append(LazyArg(f, ctx))
        return impl(ctx, *vals)
    call.__name__ = name
    return call


#: The compiler's method for each class of node.
_DISPATCH = {
    Number: Compiler._number, Text: Compiler._text, Boolean: Compiler._boolean,
    ErrorValue: Compiler._error_value, ArrayConst: Compiler._array, Omitted: Compiler._omitted,
    Reference: Compiler._reference, Name: Compiler._name, BadReference: Compiler._bad_reference,
    Negate: Compiler._negate, Percent: Compiler._percent, BinaryOp: Compiler._binary,
    Call: Compiler._call,
}
