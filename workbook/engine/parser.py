"""Excel formula text -> abstract syntax tree.

Tokenizing is :mod:`.tokenizer`'s (openpyxl's token stream, read a run at a
time and with Excel's numbers and white space); this module only turns the
token stream into a tree by precedence climbing (the recursive form of the
shunting-yard algorithm), with Excel's operator precedence::

    :  (range)  >  ' ' (intersection)  >  , (union, inside parentheses)
    >  - + (prefix)  >  %  >  ^  >  * /  >  + -  >  &  >  = <> < <= > >=

The tree's nodes are the classes of :mod:`.nodes`, one per kind:

=======================================  ====================================================
formula text                             node
=======================================  ====================================================
``2.5``, ``"a"``, ``TRUE``, ``#N/A``     ``Number``, ``Text``, ``Boolean``, ``ErrorValue``
``{1,2;"a",TRUE}``                       ``ArrayConst`` (rows of Python values)
``A1``, ``'My sheet'!A1:B2``, ``A:A``    ``Reference`` (1-based corners; sheet ``None``:
                                         the formula's own)
``TxRate``, ``Inputs!TxRate``            ``Name`` (upper case)
``#REF!``, ``[1]Sheet1!A1``, ``T[Col]``  ``BadReference`` (a reference the engine cannot
                                         follow: ``#REF!``, external workbook, 3-D or table)
``a+b``, ``a&b``, ``a:b``, ``a b``       ``BinaryOp`` (the space is the intersection, the
                                         comma of ``(a,b)`` the union)
``-a``, ``a%``                           ``Negate``, ``Percent``
``SUM(a,,b)``                            ``Call`` (name upper case, ``_xlfn.`` removed);
                                         ``Omitted`` for the empty argument
=======================================  ====================================================
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

import re
import sys
from contextlib import contextmanager

from .nodes import (
    OMITTED, ArrayConst, BadReference, BinaryOp, Boolean, Call, ErrorValue, Name, Negate, Number,
    Percent, Reference, Text,
)
from .tokenizer import Token, TokenizerError, tokenize
from .values import ERR_REF, ERR_UNSUPPORTED, ERROR_CODES

__all__ = ["FormulaError", "parse", "parse_ref", "parse_area", "col_to_index", "index_to_col", "cell_name",
           "split_cell", "MAX_ROW", "MAX_COL", "strip_function_prefix", "deep_recursion"]



MAX_ROW, MAX_COL = 1_048_576, 16_384


class FormulaError(CryptoplanError, ValueError):
    """A formula that cannot be parsed."""


_COLUMN_OF: dict[str, int] = {}


def col_to_index(col: str) -> int:
    """Column letters to the 1-based column number: ``"A"`` -> 1, ``"AA"`` -> 27 (remembered:
    a workbook uses few columns; past 4,096 distinct spellings they are not kept)."""
    n = _COLUMN_OF.get(col)
    if n is None:
        n = 0
        for ch in col.upper():
            n = n * 26 + (ord(ch) - 64)
        if len(_COLUMN_OF) < 4096:
            _COLUMN_OF[col] = n
    return n


def index_to_col(i: int) -> str:
    """1-based column number to its letters: 27 -> ``"AA"``."""
    s = ""
    while i > 0:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def cell_name(row: int, col: int) -> str:
    """``(3, 2)`` -> ``"B3"``."""
    return f"{index_to_col(col)}{row}"


_CELL_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")
_COL_RE = re.compile(r"^\$?([A-Za-z]{1,3})$")
_ROW_RE = re.compile(r"^\$?([0-9]+)$")
_NAME_RE = re.compile(r"^[A-Za-z_\\][A-Za-z0-9_.\\?]*$")
_SHEET_RE = re.compile(r"^(?:'((?:[^']|'')+)'|([^'!]+))!(.*)$", re.S)


def split_cell(text: str) -> tuple[int, int]:
    """``"B3"`` -> ``(3, 2)`` (row, column), or raise :class:`FormulaError`."""
    m = _CELL_RE.match(text.strip())
    if not m:
        raise FormulaError(f"not a cell reference: {text!r}")
    row, col = int(m.group(2)), col_to_index(m.group(1))
    if not (1 <= row <= MAX_ROW and 1 <= col <= MAX_COL):
        raise FormulaError(f"cell reference out of the sheet: {text!r}")
    return row, col


def parse_area(text: str):
    """``A1``, ``A1:B2``, ``A:A``, ``1:3`` -> (r1, c1, r2, c2) or None."""
    parts = text.split(":")
    if len(parts) == 1:
        m = _CELL_RE.match(parts[0])
        if not m:
            return None
        r, c = int(m.group(2)), col_to_index(m.group(1))
        return (r, c, r, c) if 1 <= r <= MAX_ROW and 1 <= c <= MAX_COL else None
    if len(parts) != 2:
        return None
    a, b = parts
    ma, mb = _CELL_RE.match(a), _CELL_RE.match(b)
    if ma and mb:
        r1, c1 = int(ma.group(2)), col_to_index(ma.group(1))
        r2, c2 = int(mb.group(2)), col_to_index(mb.group(1))
    else:
        ma, mb = _COL_RE.match(a), _COL_RE.match(b)
        if ma and mb:
            r1, r2 = 1, MAX_ROW
            c1, c2 = col_to_index(ma.group(1)), col_to_index(mb.group(1))
        else:
            ma, mb = _ROW_RE.match(a), _ROW_RE.match(b)
            if not (ma and mb):
                return None
            r1, r2 = int(ma.group(1)), int(mb.group(1))
            c1, c2 = 1, MAX_COL
    r1, r2 = min(r1, r2), max(r1, r2)
    c1, c2 = min(c1, c2), max(c1, c2)
    if not (1 <= r1 and r2 <= MAX_ROW and 1 <= c1 and c2 <= MAX_COL):
        return None
    return r1, c1, r2, c2


def _split_sheet(text: str):
    """``'My sheet'!A1`` -> ``("My sheet", "A1")``; ``(None, text)`` without a sheet."""
    m = _SHEET_RE.match(text)
    if not m:
        return None, text
    sheet = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
    return sheet, m.group(3)


def parse_ref(text: str):
    """A reference operand (as the tokenizer returns it) -> AST node."""
    text = text.strip()
    if text.startswith("["):
        return BadReference(text, ERR_UNSUPPORTED)  # external workbook reference
    if "[" in text:
        return BadReference(text, ERR_UNSUPPORTED)  # structured (table) reference
    sheet, rest = _split_sheet(text)
    if sheet is not None and ":" in sheet:
        return BadReference(text, ERR_UNSUPPORTED)  # 3-D reference Sheet1:Sheet3!A1
    if "#REF!" in rest.upper():
        return BadReference(text, ERR_REF)
    # Sheet1!A1:Sheet1!B2 -> same-sheet area
    if "!" in rest and ":" in rest:
        left, right = rest.split(":", 1)
        s2, r2 = _split_sheet(right)
        if s2 is not None and s2.lower() == (sheet or "").lower():
            rest = f"{left}:{r2}"
        else:
            return BadReference(text, ERR_UNSUPPORTED)
    area = parse_area(rest)
    if area is not None:
        return Reference(sheet, *area)
    if ":" in rest:  # e.g. Name1:Name2 or A1:Name
        left, right = rest.split(":", 1)
        pre = "" if sheet is None else _quote(sheet) + "!"
        return BinaryOp(":", parse_ref(pre + left), parse_ref(pre + right))
    if _NAME_RE.match(rest) and rest.upper() not in ("TRUE", "FALSE"):
        return Name(sheet, rest.upper())
    return BadReference(text, ERR_REF)


def _quote(sheet: str) -> str:
    """A sheet name quoted as a formula writes it: ``'It''s'``."""
    return "'" + sheet.replace("'", "''") + "'"


_PREFIXES = ("_xlfn._xlws.", "_xlfn.", "_xlws.", "_xludf.", "_xlpm.")
_PREFIXES_UPPER = tuple(p.upper() for p in _PREFIXES)


def strip_function_prefix(name: str) -> str:
    """``_xlfn.POISSON.DIST`` -> ``POISSON.DIST``; ``[1]!ERLANGC`` -> ``ERLANGC``."""
    if "!" in name:  # add-in function stored with its workbook: [1]!F or 'addin.xlam'!F
        name = name.rsplit("!", 1)[1]
    name = name.upper()
    for p in _PREFIXES_UPPER:
        if name.startswith(p):
            name = name[len(p):]
    return name


def _ends_range(t: Token) -> bool:
    """A range operand or a closing parenthesis: what white space intersects on its left."""
    return ((t.type == Token.OPERAND and t.subtype == Token.RANGE)
            or (t.subtype == Token.CLOSE and t.type in (Token.FUNC, Token.PAREN)))


def _starts_range(t: Token) -> bool:
    """A range operand or an opening parenthesis: what white space intersects on its right."""
    return ((t.type == Token.OPERAND and t.subtype == Token.RANGE)
            or (t.subtype == Token.OPEN and t.type in (Token.FUNC, Token.PAREN)))


#: Infix operators: (left binding power, right binding power); higher binds tighter.
_INFIX = {":": (10, 11), " ": (9, 10), ",": (8, 9), "^": (5, 6), "*": (4, 5), "/": (4, 5),
          "+": (3, 4), "-": (3, 4), "&": (2, 3), "=": (1, 2), "<>": (1, 2), "<": (1, 2),
          "<=": (1, 2), ">": (1, 2), ">=": (1, 2)}


class _Parser:
    """Precedence climbing over the tokens of one formula (:func:`parse`)."""

    def __init__(self, formula: str):
        self.formula = formula
        try:
            items = tokenize(formula if formula.startswith("=") else "=" + formula)
        except TokenizerError as exc:
            raise FormulaError(str(exc)) from None
        # the end is None: what peek() gives there (next() refuses it)
        self.toks: list[Token | None] = [*self._clean(items), None]
        self.i = 0

    @staticmethod
    def _clean(items: list[Token]) -> list[Token]:
        """Drop white space except where it is the intersection operator; split ``A1:F(``."""
        out: list[Token] = []
        for j, t in enumerate(items):
            if t.type == Token.WSPACE:
                prev = out[-1] if out else None
                nxt = items[j + 1] if j + 1 < len(items) else None
                if prev is not None and nxt is not None and _ends_range(prev) and _starts_range(nxt):
                    out.append(Token(" ", Token.OP_IN))
                continue
            if t.type == Token.FUNC and t.subtype == Token.OPEN and ":" in t.value:
                # 'A1:INDEX(' -> operand A1, operator ':', function INDEX(
                left, func = t.value.rsplit(":", 1)
                out.append(Token(left, Token.OPERAND, Token.RANGE))
                out.append(Token(":", Token.OP_IN))
                out.append(Token(func, Token.FUNC, Token.OPEN))
                continue
            if t.type == Token.OPERAND and t.subtype == Token.RANGE and t.value.startswith(":"):
                out.append(Token(":", Token.OP_IN))
                out.append(Token(t.value[1:], Token.OPERAND, Token.RANGE))
                continue
            out.append(t)
        return out

    def peek(self):
        """The next token (None at the end), not consumed."""
        return self.toks[self.i]

    def next(self):
        """The next token, consumed; :class:`FormulaError` at the end."""
        t = self.peek()
        if t is None:
            raise FormulaError(f"unexpected end of formula {self.formula!r}")
        self.i += 1
        return t

    def parse(self):
        """The formula's tree (after checking Excel's limit on nested functions)."""
        if self.toks[0] is None:
            raise FormulaError("empty formula")
        depth = deepest = 0
        for t in self.toks[:-1]:    # Excel's limit on nested functions, checked before recursing
            if t.type == Token.FUNC and t.subtype == Token.OPEN:
                depth += 1
                deepest = max(deepest, depth)
            elif t.type == Token.FUNC and t.subtype == Token.CLOSE:
                depth -= 1
        if deepest > MAX_FUNCTION_NESTING:
            raise FormulaError(f"functions are nested {deepest} levels deep; Excel allows "
                               f"{MAX_FUNCTION_NESTING}")
        node = self.expr(0)
        if self.peek() is not None:
            raise FormulaError(f"unexpected {self.peek().value!r} in formula {self.formula!r}")
        return node

    def expr(self, min_prec: int):
        """An expression whose infix operators bind at least as tightly as ``min_prec``."""
        lhs = self.unary()
        toks = self.toks
        while True:
            t = toks[self.i]
            if t is None or t.type != Token.OP_IN or t.value not in _INFIX:
                return lhs
            lp, rp = _INFIX[t.value]
            if lp < min_prec:
                return lhs
            self.i += 1
            rhs = self.expr(rp)
            lhs = BinaryOp(t.value, lhs, rhs)

    def unary(self):
        """Prefix signs, then an operand with its postfix ``%`` and reference operators."""
        toks = self.toks
        t = toks[self.i]
        if t is not None and t.type == Token.OP_PRE:
            self.i += 1
            operand = self.unary()
            return Negate(operand) if t.value == "-" else operand
        node = self.primary()
        # range / intersection operators bind tighter than prefix minus
        while True:
            t = toks[self.i]
            if t is not None and t.type == Token.OP_POST:
                self.i += 1
                node = Percent(node)
                continue
            if t is not None and t.type == Token.OP_IN and t.value in (":", " "):
                lp, rp = _INFIX[t.value]
                self.i += 1
                node = BinaryOp(t.value, node, self.primary_postfix(rp))
                continue
            return node

    def primary_postfix(self, min_prec):
        """An operand and the reference operators (``:``, intersection) binding to it."""
        node = self.primary()
        toks = self.toks
        while True:
            t = toks[self.i]
            if t is not None and t.type == Token.OP_IN and t.value in (":", " ") \
                    and _INFIX[t.value][0] >= min_prec:
                self.i += 1
                node = BinaryOp(t.value, node, self.primary_postfix(_INFIX[t.value][1]))
                continue
            return node

    def primary(self):
        """An operand: a constant, a reference, a function call, a parenthesis or an array."""
        t = self.next()
        if t.type == Token.OPERAND:
            if t.subtype == Token.NUMBER:
                return Number(float(t.value))
            if t.subtype == Token.TEXT:
                return Text(t.value[1:-1].replace('""', '"'))
            if t.subtype == Token.LOGICAL:
                return Boolean(t.value.upper() == "TRUE")
            if t.subtype == Token.ERROR:
                return ErrorValue(ERROR_CODES.get(t.value.upper(), ERR_REF))
            return parse_ref(t.value)
        if t.type == Token.FUNC and t.subtype == Token.OPEN:
            return self.call(strip_function_prefix(t.value[:-1]))
        if t.type == Token.PAREN and t.subtype == Token.OPEN:
            node = self.expr(0)
            c = self.next()
            if not (c.type == Token.PAREN and c.subtype == Token.CLOSE):
                raise FormulaError(f"expected ')' in formula {self.formula!r}")
            return node
        if t.type == Token.ARRAY and t.subtype == Token.OPEN:
            return self.array()
        raise FormulaError(f"unexpected {t.value!r} in formula {self.formula!r}")

    def call(self, name: str):
        """The arguments of a call to ``name`` (an empty one is :data:`~.nodes.OMITTED`)."""
        args = []
        toks = self.toks
        t = toks[self.i]
        if t is not None and t.type == Token.FUNC and t.subtype == Token.CLOSE:
            self.i += 1
            return Call(name, ())
        while True:
            t = toks[self.i]
            if t is not None and ((t.type == Token.SEP and t.subtype == Token.ARG)
                                  or (t.type == Token.FUNC and t.subtype == Token.CLOSE)):
                args.append(OMITTED)
            else:
                args.append(self.expr(0))
            t = self.next()
            if t.type == Token.SEP and t.subtype == Token.ARG:
                continue
            if t.type == Token.FUNC and t.subtype == Token.CLOSE:
                return Call(name, tuple(args))
            raise FormulaError(f"expected ',' or ')' in {name}(...) in formula {self.formula!r}")

    def array(self):
        """An array constant ``{1,2;3,4}``: constants only, rows of one length."""
        rows, row = [], []
        while True:
            t = self.next()
            sign = 1.0
            while t.type == Token.OP_PRE:
                sign = -sign if t.value == "-" else sign
                t = self.next()
            if t.type != Token.OPERAND:
                raise FormulaError(f"array constants hold only constants: {self.formula!r}")
            if t.subtype == Token.NUMBER:
                row.append(sign * float(t.value))
            elif t.subtype == Token.TEXT:
                row.append(t.value[1:-1].replace('""', '"'))
            elif t.subtype == Token.LOGICAL:
                row.append(t.value.upper() == "TRUE")
            elif t.subtype == Token.ERROR:
                row.append(ErrorValue(ERROR_CODES.get(t.value.upper(), ERR_REF)))
            else:
                raise FormulaError(f"array constants hold only constants: {self.formula!r}")
            t = self.next()
            if t.type == Token.SEP and t.subtype == Token.ARG:
                continue
            if t.type == Token.SEP and t.subtype == Token.ROW:
                rows.append(tuple(row))
                row = []
                continue
            if t.type == Token.ARRAY and t.subtype == Token.CLOSE:
                rows.append(tuple(row))
                if len({len(r) for r in rows}) != 1:
                    raise FormulaError(f"array constant rows differ in length: {self.formula!r}")
                return ArrayConst(tuple(rows))
            raise FormulaError(f"bad array constant in formula {self.formula!r}")


# Excel's specifications and limits: "Length of formula contents: 8,192 characters";
# "Nested levels of functions: 64".  Everything within them is evaluated.
MAX_FORMULA_CHARS = 8192
MAX_FUNCTION_NESTING = 64


def parse(formula: str):
    """Parse Excel formula text (with or without the leading ``=``) into an AST.

    Raises
    ------
    FormulaError
        If the text is not a well-formed formula, is longer than Excel's 8,192
        characters or nests functions deeper than Excel's 64 levels.
    """
    body = formula[1:] if formula.startswith("=") else formula
    if len(body) > MAX_FORMULA_CHARS:
        raise FormulaError(f"the formula is {len(body):,} characters long; Excel allows "
                           f"{MAX_FORMULA_CHARS:,}")
    with deep_recursion():
        return _Parser(formula).parse()


@contextmanager
def deep_recursion():
    """Room for the deepest formula Excel accepts (8,192 characters of nesting or operator chains).

    Parsing, compiling and evaluating recurse once per nesting level or chained
    operator; Python 3.11+ runs such pure-Python recursion without growing the C
    stack, so a limit above the default 1,000 is safe.
    """
    old = sys.getrecursionlimit()
    if old < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < RECURSION_LIMIT:
            sys.setrecursionlimit(old)


RECURSION_LIMIT = 40 * MAX_FORMULA_CHARS
