"""Excel values as NumPy arrays with a scenario axis.

Every value the engine handles is a :class:`Val`: three parallel arrays of shape
``(n, rows, cols)``:

* ``num``  -- float64, the number (booleans as 0/1, empty as 0);
* ``kind`` -- int8, the Excel type of each element: :data:`NUM`, :data:`BOOL`,
  :data:`STR`, :data:`EMPTY` or an error code (``>= ERR_NULL``);
* ``text`` -- object array of ``str`` where ``kind == STR`` (``None`` when the
  value holds no text at all).

Axis 0 is the *scenario* axis of a sweep: ``n`` is 1 for a value that is the
same in every scenario and broadcasts against ``n = N`` values.  Axes 1-2 are
the Excel array (a single cell is ``1 x 1``).  Errors are values, element by
element, so an error in one scenario never touches the others, and no
operation returns NaN or infinity: a non-finite result becomes ``#NUM!``
(``#DIV/0!`` for a division by zero).
"""

from __future__ import annotations

import math
import re

import numpy as np

__all__ = [
    "NUM", "BOOL", "STR", "EMPTY", "ERR_NULL", "ERR_DIV0", "ERR_VALUE", "ERR_REF", "ERR_NAME",
    "ERR_NUM", "ERR_NA", "ERR_CALC", "ERR_UNSUPPORTED", "ERR_CIRCULAR", "ERR_INTERNAL",
    "ERROR_TEXT", "ERROR_CODES", "NOT_COMPUTED", "not_computed", "ExcelError", "Val", "number_to_text", "csv_text",
    "text_to_number",
]

NUM, BOOL, STR, EMPTY = 0, 1, 2, 3
ERR_NULL, ERR_DIV0, ERR_VALUE, ERR_REF, ERR_NAME, ERR_NUM, ERR_NA, ERR_CALC = range(8, 16)
#: Internal codes: the cell could not be computed by this engine (an unsupported
#: function, a circular reference, an engine failure).  They behave like errors
#: inside a formula but are never written to a file as a cached value.
ERR_UNSUPPORTED, ERR_CIRCULAR, ERR_INTERNAL = 16, 17, 18
NOT_COMPUTED = frozenset({ERR_UNSUPPORTED, ERR_CIRCULAR, ERR_INTERNAL})
_NOT_COMPUTED_KIND = np.zeros(128, dtype=bool)
_NOT_COMPUTED_KIND[sorted(NOT_COMPUTED)] = True


def not_computed(kind: np.ndarray) -> np.ndarray:
    """Elements of a ``kind`` array (int8, >= 0) holding a :data:`NOT_COMPUTED` code.

    A table look-up: ``np.isin`` costs ~60 µs a call on a one-cell argument, and every
    add-in call checks each of its arguments.
    """
    return _NOT_COMPUTED_KIND[kind]

ERROR_TEXT = {
    ERR_NULL: "#NULL!", ERR_DIV0: "#DIV/0!", ERR_VALUE: "#VALUE!", ERR_REF: "#REF!",
    ERR_NAME: "#NAME?", ERR_NUM: "#NUM!", ERR_NA: "#N/A", ERR_CALC: "#CALC!",
    ERR_UNSUPPORTED: "#NAME?", ERR_CIRCULAR: "#CIRCULAR!", ERR_INTERNAL: "#ENGINE!",
}
#: Excel error literal -> code (the literals Excel writes in files and formulas).
ERROR_CODES = {ERROR_TEXT[c]: c for c in range(ERR_NULL, ERR_CALC + 1)}
ERROR_CODES.update({"#GETTING_DATA": ERR_NA, "#SPILL!": ERR_CALC, "#UNKNOWN!": ERR_VALUE,
                    "#FIELD!": ERR_VALUE, "#BLOCKED!": ERR_VALUE, "#CONNECT!": ERR_VALUE,
                    "#BUSY!": ERR_NA})


class ExcelError(str):
    """An Excel error value returned to Python callers (a ``str`` such as ``"#N/A"``).

    Attributes
    ----------
    code : int
        Engine error code (see :data:`ERROR_TEXT`).
    message : str
        Why, when the engine knows (e.g. the model's ``ValueError`` text), else ``""``.
    computed : bool
        ``False`` for the internal codes meaning "could not be computed here"
        (unsupported function, circular reference).
    """

    code: int
    message: str
    _plain: dict = {}

    def __new__(cls, code: int, message: str = ""):
        if not message:  # plain errors are immutable: share one instance per code
            obj = cls._plain.get(code)
            if obj is not None:
                return obj
        obj = super().__new__(cls, ERROR_TEXT[code])
        obj.code = code
        obj.message = message
        if not message:
            cls._plain[code] = obj
        return obj

    @property
    def computed(self) -> bool:
        return self.code not in NOT_COMPUTED

    def __repr__(self) -> str:
        return f"ExcelError({str(self)!r}{', ' + repr(self.message) if self.message else ''})"


_SHAPE1 = (1, 1, 1)


def _k(shape, code) -> np.ndarray:
    return np.full(shape, code, dtype=np.int8)


class Val:
    """An Excel value (scalar or array) for one or many scenarios; see the module doc."""

    __slots__ = ("num", "kind", "text", "_plain")

    def __init__(self, num: np.ndarray, kind: np.ndarray, text: np.ndarray | None = None):
        self.num = num
        self.kind = kind
        self.text = text
        self._plain: bool | None = None       # is_plain_number(), once asked

    # ------------------------------------------------------------ constructors
    @staticmethod
    def number(x: float) -> "Val":
        x = float(x)
        if not math.isfinite(x):
            return Val.error(ERR_NUM)
        return Val(np.full(_SHAPE1, x), _k(_SHAPE1, NUM))

    @staticmethod
    def boolean(b: bool) -> "Val":
        return Val(np.full(_SHAPE1, 1.0 if b else 0.0), _k(_SHAPE1, BOOL))

    @staticmethod
    def string(s: str) -> "Val":
        t = np.empty(_SHAPE1, dtype=object)
        t[0, 0, 0] = s
        return Val(np.zeros(_SHAPE1), _k(_SHAPE1, STR), t)

    @staticmethod
    def empty(shape=_SHAPE1) -> "Val":
        return Val(np.zeros(shape), _k(shape, EMPTY))

    @staticmethod
    def error(code: int, shape=_SHAPE1) -> "Val":
        return Val(np.zeros(shape), _k(shape, code))

    @staticmethod
    def from_python(x) -> "Val":
        """A constant from a Python value: float/int, bool, str, None or :class:`ExcelError`."""
        if x is None:
            return Val.empty()
        if isinstance(x, ExcelError):
            return Val.error(x.code)
        if isinstance(x, (bool, np.bool_)):
            return Val.boolean(bool(x))
        if isinstance(x, str):
            return Val.string(x)
        return Val.number(x)

    @staticmethod
    def numbers(num, err=None, kind=NUM) -> "Val":
        """Numeric result with optional error codes; non-finite numbers become ``#NUM!``."""
        num = np.asarray(num, dtype=float)
        if num.ndim != 3:
            num = num.reshape(num.shape + (1,) * (3 - num.ndim)) if num.ndim < 3 else num
        bad = ~np.isfinite(num)
        if err is None and not bad.any():
            return Val(num, _k(num.shape, kind))
        k = np.full(num.shape, kind, dtype=np.int8)
        if bad.any():
            k[np.broadcast_to(bad, k.shape)] = ERR_NUM
            num = np.where(bad, 0.0, num)
        if err is not None:
            err = np.broadcast_to(err, k.shape)
            k = np.where(err > 0, err, k).astype(np.int8)
        return Val(num, k)

    @staticmethod
    def bools(b, err=None) -> "Val":
        return Val.numbers(np.asarray(b, dtype=float), err, kind=BOOL)

    @staticmethod
    def texts(t: np.ndarray, err=None) -> "Val":
        t = np.asarray(t, dtype=object)
        k = np.full(t.shape, STR, dtype=np.int8)
        if err is not None:
            k = np.where(np.broadcast_to(err, k.shape) > 0, err, k).astype(np.int8)
        return Val(np.zeros(t.shape), k, t)

    # -------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        return self.num.shape[0]

    @property
    def shape(self) -> tuple[int, int]:
        return self.num.shape[1], self.num.shape[2]

    def is_plain_number(self) -> bool:
        """True when every element is a number (the fast path of arithmetic)."""
        if self._plain is None:
            self._plain = bool((self.kind == NUM).all())
        return self._plain

    def has_errors(self) -> bool:
        return bool((self.kind >= ERR_NULL).any())

    def err(self) -> np.ndarray | None:
        """Error codes (0 where not an error), or ``None`` when there is none."""
        if self.is_plain_number():
            return None
        e = np.where(self.kind >= ERR_NULL, self.kind, 0).astype(np.int8)
        return e if e.any() else None

    def broadcast(self, n: int, rows: int | None = None, cols: int | None = None) -> "Val":
        shape = (n, rows or self.num.shape[1], cols or self.num.shape[2])
        if shape == self.num.shape:
            return self
        num = np.broadcast_to(self.num, shape)
        kind = np.broadcast_to(self.kind, shape)
        text = None if self.text is None else np.broadcast_to(self.text, shape)
        return Val(num, kind, text)

    def scenario(self, s: int) -> "Val":
        """The value in scenario ``s`` (shape ``(1, rows, cols)``)."""
        if self.n == 1:
            return self
        return Val(self.num[s:s + 1], self.kind[s:s + 1],
                   None if self.text is None else self.text[s:s + 1])

    def take(self, idx: np.ndarray) -> "Val":
        """Scenarios ``idx`` (an index array) of a value; a constant stays constant."""
        if self.n == 1:
            return self
        return Val(self.num[idx], self.kind[idx], None if self.text is None else self.text[idx])

    def top_left(self) -> "Val":
        if self.shape == (1, 1):
            return self
        return Val(self.num[:, :1, :1], self.kind[:, :1, :1],
                   None if self.text is None else self.text[:, :1, :1])

    def element(self, s: int, r: int = 0, c: int = 0):
        """Python value of one element: float, bool, str, None (empty) or :class:`ExcelError`."""
        s = 0 if self.n == 1 else s
        k = int(self.kind[s, r, c])
        if k == NUM:
            return float(self.num[s, r, c])
        if k == BOOL:
            return bool(self.num[s, r, c])
        if k == STR:
            assert self.text is not None        # a string element comes with its text
            return self.text[s, r, c]
        if k == EMPTY:
            return None
        return ExcelError(k)

    def column(self, n: int | None = None) -> list:
        """Python values of the top-left element in every scenario (``n`` items)."""
        n = self.n if n is None else n
        k = self.kind[:, 0, 0]
        out = np.broadcast_to(self.num[:, 0, 0], (n,)).tolist()
        if self.n == 1 and n > 1:
            return [self.element(0)] * n if int(k[0]) != NUM else out
        for s in np.nonzero(k != NUM)[0].tolist():
            out[s] = self.element(s)
        return out

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        if self.num.size <= 6:
            vals = [self.element(s, r, c) for s in range(self.n)
                    for r in range(self.shape[0]) for c in range(self.shape[1])]
            return f"Val{self.num.shape}{vals}"
        return f"Val{self.num.shape}"


def stack_scenarios(parts: list[Val], index: list[np.ndarray], n: int) -> Val:
    """Assemble a value from per-group results: ``parts[i]`` holds scenarios ``index[i]``."""
    rows = max(p.shape[0] for p in parts)
    cols = max(p.shape[1] for p in parts)
    num = np.zeros((n, rows, cols))
    kind = np.full((n, rows, cols), ERR_NA, dtype=np.int8)
    text = None
    if any(p.text is not None for p in parts):
        text = np.empty((n, rows, cols), dtype=object)
    for p, idx in zip(parts, index):
        r, c = p.shape
        pb = p.broadcast(len(idx)) if p.n == 1 else p
        num[idx, :r, :c] = pb.num
        kind[idx, :r, :c] = pb.kind
        if pb.text is not None and text is not None:    # (text is made when any part has text)
            text[idx, :r, :c] = pb.text
        # Excel fills the unused part of a smaller array with #N/A
    return Val(num, kind, text)


# ------------------------------------------------------------ text <-> number
def csv_text(value) -> str:
    """A cell's Python value as a CSV file holds it: numbers in full precision, whole numbers
    without ``.0``, booleans ``TRUE``/``FALSE``, empty as ``""``, anything else as its text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        v = float(value)
        if not math.isfinite(v):
            return str(value)
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(value)


def number_to_text(x: float) -> str:
    """Excel's General text for a number (``=x&""``): up to 15 significant digits."""
    if x == 0:
        return "0"
    if x == math.floor(x) and abs(x) < 1e15:
        return str(int(x))
    s = f"{x:.15g}"
    if "e" in s:
        mant, exp = s.split("e")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        e = int(exp)
        if -20 < e < 0 and len(mant.replace("-", "").replace(".", "")) + (-e) <= 20:
            # Excel writes small numbers in full while they fit its General width
            return np.format_float_positional(float(s), trim="-")
        return f"{mant}E{'+' if e >= 0 else '-'}{abs(e):02d}"
    return s


_NUM_RE = re.compile(r"^\s*([+-]?)\s*\$?\s*((?:\d{1,3}(?:,\d{3})+|\d*)(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*(%?)\s*$")


def text_to_number(s: str) -> float | None:
    """Excel's coercion of text to a number (``="2"+1``), or ``None`` if it is not numeric.

    Accepts signs, thousands separators, a leading ``$`` and a trailing ``%``;
    dates and times written as text are not recognised (``#VALUE!``).
    """
    m = _NUM_RE.match(s)
    if not m or not m.group(2) or m.group(2) in (".", ""):
        return None
    body = m.group(2).replace(",", "")
    if body.startswith(("e", "E")) or body[0] == "." and len(body) == 1:
        return None
    try:
        v = float(body)
    except ValueError:
        return None
    if m.group(1) == "-":
        v = -v
    if m.group(3):
        v /= 100.0
    return v if math.isfinite(v) else None
