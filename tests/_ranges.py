"""Ranges as prose states them ("1..64", ">= 0", "(0, 1)"), for the tests that compare the
help texts and the model docstrings with the declared domains (tests/test_catalog.py,
tests/test_domains.py)."""

from __future__ import annotations

import inspect
import re

from cryptoplan.model._validate import number_text

_NUM = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_SPAN = re.compile(rf"(?P<clo>{_NUM}) ?(?P<cop1><=|<) ?\w+ ?(?P<cop2><=|<) ?(?P<chi>{_NUM})"   # 0 <= x <= 1
                   rf"|(?P<dlo>{_NUM})\.\.(?P<dhi>{_NUM})"                                    # 1..64
                   rf"|(?P<left>[\[(])(?P<ilo>{_NUM}), ?(?P<ihi>{_NUM})(?P<right>[\])])"      # [0, 1)
                   rf"|(?P<op>>=|<=|>|<) ?(?P<num>{_NUM})")                                     # >= 0


def _n(text: str) -> str:
    return number_text(float(text))


def _interval(lo, hi, lo_open, hi_open) -> str:
    if not (lo_open or hi_open):
        return f"{_n(lo)}..{_n(hi)}"
    return f"{'(' if lo_open else '['}{_n(lo)},{_n(hi)}{')' if hi_open else ']'}"


def range_spans(text: str) -> list[str]:
    """The ranges a text states, in one canonical form whatever the prose's: ``1..64`` (also
    ``[1, 64]`` and ``1 <= x <= 64``), ``(0,1)``, ``[0,1)``, ``>=0``; numbers as the messages
    write them (``1e12`` -> ``1e+12``), thousands commas and backquotes dropped."""
    flat = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.replace("`", ""))
    out = []
    for m in _SPAN.finditer(flat):
        g = m.groupdict()
        if g["clo"] is not None:
            out.append(_interval(g["clo"], g["chi"], g["cop1"] == "<", g["cop2"] == "<"))
        elif g["dlo"] is not None:
            out.append(_interval(g["dlo"], g["dhi"], False, False))
        elif g["ilo"] is not None:
            out.append(_interval(g["ilo"], g["ihi"], g["left"] == "(", g["right"] == ")"))
        else:
            out.append(f"{g['op']}{_n(g['num'])}")
    return out


def normalized(domain_text: str) -> str:
    """A Domain.text() in the form :func:`range_spans` gives."""
    spans = range_spans(domain_text)
    return spans[0] if len(spans) == 1 else re.sub(r"\s", "", domain_text)


def parameter_entries(doc: str) -> dict:
    """``{parameter: (names, description)}`` of a numpydoc *Parameters* section; an entry
    ``a, b : type`` gives both names its description and ``names == ("a", "b")``."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out, names, inside = {}, (), False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.fullmatch(r"-{3,}", nxt.strip()):              # a section header
            inside = line.strip() == "Parameters"
            names = ()
            continue
        if not inside or re.fullmatch(r"-{3,}", line.strip()):
            continue
        if line and not line.startswith(" "):
            head = line.split(" : ")[0]
            names = tuple(n.strip() for n in head.split(",")) if re.fullmatch(r"[\w, ]+", head) else ()
            for n in names:
                out.setdefault(n, (names, ""))
        elif names:
            for n in names:
                out[n] = (names, out[n][1] + " " + line.strip())
    return out


def referenced_functions(fn) -> list:
    """Functions a docstring sends the reader to (``:func:`x```), resolved in fn's module,
    then in cryptoplan.model."""
    from cryptoplan import model
    module = inspect.getmodule(fn)
    out = []
    for name in re.findall(r":func:`~?([\w.]+)`", fn.__doc__ or ""):
        short = name.rsplit(".", 1)[-1]
        target = getattr(module, short, None) or getattr(model, short, None)
        if callable(target) and target is not fn:
            out.append(target)
    return out


def documented_entry(fn, param: str, depth: int = 3):
    """(function whose docstring documents ``param``, names of its entry, description): fn's
    own entry, or the first found by following its ``:func:`` references; (None, (), "") if
    none documents it."""
    seen, frontier = set(), [fn]
    for _ in range(depth + 1):
        nxt = []
        for f in frontier:
            if f in seen:
                continue
            seen.add(f)
            entries = parameter_entries(f.__doc__)
            if param in entries:
                return (f, *entries[param])
            nxt += referenced_functions(f)
        frontier = nxt
    return None, (), ""
