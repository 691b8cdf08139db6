"""Formulas of one shape: parsed once, and the cells that share a shape.

A workbook filled down or across holds thousands of formulas that differ only in their
cell references (the template's Plan sheet mirrors 1,746 cells with one formula).  The
*shape* of a formula is its text with every A1 cell reference (``A1``, ``$B$2``,
``Sheet!C3:D4``, ``'My sheet'!E5``) replaced by a numbered placeholder; two formulas of one
shape differ only in the references.

:func:`split` finds the references with one regular expression (string literals are
skipped whole); :func:`parse_shaped` parses each shape once (openpyxl's tokenizer is most of
a parse) and puts each formula's own references, as :func:`~.parser.parse_ref` reads them,
in place of the placeholders.  The result equals :func:`~.parser.parse` of the formula
(the tests check it on every formula of the template and on random ones); a shape whose
placeholders do not come back as operands of their own (an external ``[1]Sheet!A1``, a
3-D ``Sheet1:Sheet2!A1``, ``Sheet1!A1:Sheet1!B2``) is parsed formula by formula instead.

The engine evaluates the cells of one shape as one array call (:mod:`.core`), with the
references that differ between them read as one value per cell (:class:`LaneRef`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .nodes import ArrayConst, BinaryOp, Call, Name, Negate, Percent
from .parser import MAX_FORMULA_CHARS, FormulaError, deep_recursion, parse, parse_ref

__all__ = ["split", "parse_shaped", "shape_tree", "substitute", "reference_node", "placeholder_index", "PLACEHOLDER"]

#: What a reference becomes in a shape: ``_CPREF<i>_`` (a defined name's syntax).
PLACEHOLDER = "_CPREF"

# a string literal (kept whole), or a cell reference not inside a longer operand: an
# optional sheet ('quoted' or plain), a cell and an optional second corner, not followed by
# what would make it a name, a function or a sheet, nor part of a chain (A1:B2:C3, A1:INDEX(),
# whose tree the parser builds from the whole operand)
_REFERENCE = re.compile(
    r"""("(?:[^"]|"")*")"""
    r"""|(?<![\w.$\\\]#'!?:])"""
    r"""((?:'(?:[^']|'')+'!|[A-Za-z_][A-Za-z0-9_.]*!)?\$?[A-Za-z]{1,3}\$?[0-9]+(?::\$?[A-Za-z]{1,3}\$?[0-9]+)?)"""
    r"""(?![\w.(!\[\\?$:])""")


def split(formula: str) -> tuple[str, tuple[str, ...]] | None:
    """``(shape, references)``: the formula with its references numbered, and their texts.

    None for a formula that already holds the placeholder's text (it could be mistaken for one).

    >>> split('=IF(ISBLANK(Tables!A4),"A1",$B$2*C3)')
    ('=IF(ISBLANK(_CPREF0_),"A1",_CPREF1_*_CPREF2_)', ('Tables!A4', '$B$2', 'C3'))
    """
    if PLACEHOLDER in formula.upper():
        return None
    refs: list[str] = []

    def number(m: re.Match) -> str:
        if m.group(1) is not None:
            return m.group(1)
        refs.append(m.group(2))
        return f"{PLACEHOLDER}{len(refs) - 1}_"
    return _REFERENCE.sub(number, formula), tuple(refs)


def placeholder_index(node) -> int | None:
    """The number of a placeholder :class:`~.nodes.Name` node, else None."""
    if type(node) is Name and node.sheet is None and node.name.startswith(PLACEHOLDER):
        digits = node.name[len(PLACEHOLDER):-1]
        if node.name.endswith("_") and digits.isdigit():
            return int(digits)
    return None


@lru_cache(maxsize=4096)
def shape_tree(shape: str, count: int):
    """The syntax tree of a shape, its placeholders as :class:`~.nodes.Name` nodes, and the ids of
    its nodes that hold a placeholder; None when a placeholder is not an operand of its own
    (each of the ``count`` must appear once).

    Raises
    ------
    FormulaError
        For a shape that does not parse (nor does any formula of it).
    """
    tree = parse(shape)
    seen: list[int] = []
    holders: set[int] = set()
    if not _placeholders(tree, seen, holders) or sorted(seen) != list(range(count)):
        return None
    return tree, frozenset(holders)


def _placeholders(node, seen: list, holders: set) -> bool:
    """Collect the placeholders' numbers and the ids of the nodes holding one; False if one
    appears other than as a name node."""
    i = placeholder_index(node)
    if i is not None:
        seen.append(i)
        holders.add(id(node))
        return True
    before = len(seen)
    t = type(node)
    if t is BinaryOp:
        ok = _placeholders(node.left, seen, holders) and _placeholders(node.right, seen, holders)
    elif t is Negate or t is Percent:
        ok = _placeholders(node.operand, seen, holders)
    elif t is Call:
        ok = all(_placeholders(a, seen, holders) for a in node.args)
    elif t is ArrayConst:
        ok = True
    else:   # a leaf: a placeholder's text must not hide inside another node (a bad reference's text)
        ok = PLACEHOLDER not in repr(node).upper()
    if len(seen) > before:
        holders.add(id(node))
    return ok


def substitute(node, nodes: tuple, holders: frozenset):
    """The tree with each placeholder replaced by ``nodes[i]`` (``holders``: :func:`shape_tree`'s)."""
    if id(node) not in holders:
        return node
    i = placeholder_index(node)
    if i is not None:
        return nodes[i]
    t = type(node)
    if t is BinaryOp:
        return BinaryOp(node.op, substitute(node.left, nodes, holders), substitute(node.right, nodes, holders))
    if t is Call:
        return Call(node.name, tuple(substitute(a, nodes, holders) for a in node.args))
    return t(substitute(node.operand, nodes, holders))        # Negate, Percent


#: :func:`~.parser.parse_ref`, remembered: its nodes are immutable, and a sheet of mirrors reads
#: each cell several times.
reference_node = lru_cache(maxsize=1 << 16)(parse_ref)


def parse_shaped(formula: str):
    """:func:`~.parser.parse` of ``formula``, through its shape's tree (parsed once per shape).

    Raises
    ------
    FormulaError
        As :func:`~.parser.parse`.
    """
    # a long formula is parsed as written: its limits are on its own text, and a shape's
    # placeholders are longer than short references
    parts = split(formula) if len(formula) <= MAX_FORMULA_CHARS // 2 else None
    if parts is None or not parts[1]:
        return parse(formula)
    shape, refs = parts
    with deep_recursion():      # the trees of long operator chains are deep
        try:
            tree = shape_tree(shape, len(refs))
        except FormulaError:    # the message must quote the formula, not its shape
            return parse(formula)
        if tree is None:
            return parse(formula)
        return substitute(tree[0], tuple(map(reference_node, refs)), tree[1])
