"""model.domains: every validated argument's range, declared once.

A value inside a domain is accepted and one outside is refused with a message that names
the argument, the value and the range (the format of ``model/_validate.py``); the range
text help texts use; bounds read from the figures table in force; narrowing never widens;
and the model validates through the domains only (no ``check`` call with literal bounds,
no card limit written outside ``model/domains.py``).
"""

from __future__ import annotations

import ast
import csv
import importlib
import inspect
import math
import re
import tokenize
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _ranges import documented_entry, normalized, range_spans
from cryptoplan import model
from cryptoplan.model import domains as D
from cryptoplan.model._validate import range_text
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.domains import Domain, FromFigure
from cryptoplan.model.figures import using_figures

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = {n: getattr(D, n) for n in D.__all__ if isinstance(getattr(D, n), Domain)}
BIG = 1e300        # stands in for an unbounded side when drawing numbers


def _closed_int_bounds(d: Domain):
    lo, hi = d.bounds()
    a = -BIG if lo is None else (math.floor(lo) + 1 if d.lo_open else math.ceil(lo))
    b = BIG if hi is None else (math.ceil(hi) - 1 if d.hi_open else math.floor(hi))
    return int(max(a, -2**50)), int(min(b, 2**50))


def _inside(d: Domain):
    lo, hi = d.bounds()
    if d.integer:
        a, b = _closed_int_bounds(d)
        return st.integers(a, b).map(float)
    return st.floats(min_value=-BIG if lo is None else lo, max_value=BIG if hi is None else hi,
                     exclude_min=d.lo_open, exclude_max=d.hi_open, allow_nan=False, allow_infinity=False)


def _outside(d: Domain):
    """Numbers beyond a bound (with the message check states), and non-integers for integer domains."""
    lo, hi = d.bounds()
    parts = []
    if lo is not None:
        parts.append(st.floats(max_value=lo, exclude_max=not d.lo_open, min_value=-BIG).map(lambda v: (v, "range")))
    if hi is not None:
        parts.append(st.floats(min_value=hi, exclude_min=not d.hi_open, max_value=BIG).map(lambda v: (v, "range")))
    if d.integer:
        a, b = _closed_int_bounds(d)
        if a < b:
            parts.append(st.integers(a, b - 1).flatmap(
                lambda i: st.floats(i, i + 1, exclude_min=True, exclude_max=True)).map(lambda v: (v, "whole")))
    return st.one_of(parts)


# ------------------------------------------------------------------ the declarations
def test_the_declared_domains_are_the_public_ones():
    assert len(DOMAINS) >= 40
    for name, d in DOMAINS.items():
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and re.fullmatch(r"[a-z][a-z0-9_]*", d.name), name
        lo, hi = d.bounds()
        assert lo is not None or hi is not None, name          # every argument has some bound
        assert lo is None or hi is None or lo <= hi, name
        assert not (d.integer and (d.lo_open or d.hi_open)), name   # whole-number ranges are stated closed


def test_the_card_limit_and_the_published_bounds():
    assert D.CARDS.bounds() == (1.0, 64.0) and D.CARDS.integer
    assert D.PROCESSORS.bounds() == (1.0, 256.0) and D.REQUESTERS.bounds() == (1.0, 100000.0)
    # bounds that are published figures are read, not written
    for d in (D.SSLRKEYC, D.KEY_REUSE, D.CHANNEL_PAIRS, D.DISPATCHERS, D.ROUNDTRIP_MESSAGE_KB):
        assert isinstance(d.high, FromFigure), d.name
    assert D.SSLRKEYC.bounds() == (0.0, 999999999.0)
    assert D.KEY_REUSE.bounds() == (1.0, 9999999.0)
    assert D.CHANNEL_PAIRS.bounds() == (1.0, 4999.0)          # MAXCHL 9999 over two channels a pair
    assert D.DISPATCHERS.bounds() == (1.0, 9999.0)
    assert D.ROUNDTRIP_MESSAGE_KB.bounds() == (0.0, 1024.0)
    assert D.MESSAGE_KB.bounds() == (0.0, D.MAX_MESSAGE_KB) == (0.0, 102400.0)


# ------------------------------------------------------------------ accept and refuse
@pytest.mark.parametrize("name", sorted(DOMAINS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_inside_is_accepted_outside_is_refused_naming_argument_value_and_range(name, data):
    d = DOMAINS[name]
    v = data.draw(_inside(d), label="inside")
    assert d.contains(v)
    assert d.check(v) == v and type(d.check(v)) is float
    assert d.check(v, "other_name") == v
    np.testing.assert_array_equal(d.check(np.array([v, v])), [v, v])

    w, why = data.draw(_outside(d), label="outside")
    assert not d.contains(w)
    with pytest.raises(ValueError) as exc:
        d.check(w, "the_arg")
    msg = str(exc.value)
    if why == "range":
        lo, hi = d.bounds()
        assert msg == f"the_arg {range_text(lo, hi, d.lo_open, d.hi_open)} (got {w:g})"
    else:
        assert msg == f"the_arg must be a whole number (got {w:g})"
    with pytest.raises(ValueError, match=rf"^the_arg .* \(got {re.escape(f'{w:g}')} at index 1\)$"):
        d.check(np.array([v, w, v]), "the_arg")


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_the_bounds_themselves(name):
    d = DOMAINS[name]
    lo, hi = d.bounds()
    for bound, is_open, beyond in ((lo, d.lo_open, -math.inf), (hi, d.hi_open, math.inf)):
        if bound is None:
            continue
        assert d.contains(bound) is not is_open
        outside = np.nextafter(bound, beyond)
        assert not d.contains(outside)
        with pytest.raises(ValueError, match=rf"^{d.name} must be "):
            d.check(outside)
        if is_open:
            with pytest.raises(ValueError, match=rf"^{d.name} must be "):
                d.check(bound)
        else:
            assert d.check(bound) == bound


def test_not_finite_and_not_numbers_are_refused():
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=r"^cards must be a finite number"):
            D.CARDS.check(bad)
        assert not D.CARDS.contains(bad)
    with pytest.raises(TypeError, match="^cards must be a number"):
        D.CARDS.check("two")
    with pytest.raises(ValueError, match=r"^cards must be a single number"):
        D.CARDS.check([1, 2], scalar=True)


# ------------------------------------------------------------------ the text
@pytest.mark.parametrize("domain, text", [
    (D.CARDS, "1..64"),
    (D.MESSAGE_KB, "0..102400"),
    (D.SSLRKEYC, "0..999999999"),
    (D.TX_RATE, ">= 0"),
    (D.PLANNED_TX_RATE, "> 0"),
    (D.MAX_UTILIZATION, "in (0, 1)"),
    (D.MAX_SERVER_UTILIZATION, "in (0, 1]"),
    (D.OTHER_LPAR_UTIL, "in [0, 1)"),
    (D.TRAFFIC, "0..1e+12"),
    (D.COSMETATOS_ARRIVAL_SCV, "= 1"),
    (Domain("x", high=5.0, hi_open=True), "< 5"),
    (Domain("x", high=5.0), "<= 5"),
    (Domain("x"), "any finite number"),
])
def test_text(domain, text):
    assert domain.text() == text


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_text_and_error_message_give_the_same_numbers(name):
    d = DOMAINS[name]
    lo, hi = d.bounds()
    numbers = lambda s: set(re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?", s))   # noqa: E731
    assert numbers(d.text()) == numbers(range_text(lo, hi, d.lo_open, d.hi_open))


# ------------------------------------------------------------------ bounds from the figures in force
def _table_with(tmp_path, changes: dict) -> Path:
    with open(data_path("figures.csv"), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r.update(changes.get(r["id"], {}))
    path = tmp_path / "site-figures.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_figure_bounds_follow_the_table_in_force(tmp_path):
    path = _table_with(tmp_path, {"ref_maxchl_range": {"high": "101"}, "ref_sslrkeyc_range": {"high": "65536"}})
    with using_figures(path):
        assert D.CHANNEL_PAIRS.bounds() == (1.0, 50.0) and D.CHANNEL_PAIRS.text() == "1..50"
        assert D.SSLRKEYC.text() == "0..65536"
        with pytest.raises(ValueError, match=r"^channel_pairs must be in \[1, 50\] \(got 51\)$"):
            D.CHANNEL_PAIRS.check(51)
        with pytest.raises(ValueError, match=r"^sslrkeyc must be in \[0, 65536\] \(got 65537\)$"):
            model.tls_cost_us("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256", 2, sslrkeyc=65537)
    assert D.CHANNEL_PAIRS.bounds() == (1.0, 4999.0)


def test_from_figure_reads_a_condition_and_refuses_an_empty_field():
    assert FromFigure("s002_rt_sslciph_1m_us", "message_kb")() == 1024.0
    assert FromFigure("ref_maxchl_range", "high", divisor=2.0)() == 4999.0
    with pytest.raises(ValueError, match="ref_maxchl_range has no value"):
        FromFigure("ref_maxchl_range", "value")()
    with pytest.raises(ValueError, match="ref_maxchl_range has no message_kb"):
        FromFigure("ref_maxchl_range", "message_kb")()


@pytest.mark.subprocess
def test_importing_the_domains_loads_no_numpy():
    # model.params reads KEY_REUSE from here and is documented to import without NumPy
    import subprocess
    import sys
    code = ("import sys; import cryptoplan.model.params, cryptoplan.model.domains as D; D.CARDS.bounds(); "
            "print(type(sys.modules.get('numpy')) is type(sys))")   # ran, not lazy_loader's placeholder
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ narrowing
def test_narrowing_stays_inside():
    n = D.MAX_UTILIZATION.narrowed(0.01, 0.99, lo_open=False, hi_open=False)
    assert n.text() == "0.01..0.99" and n.name == "max_utilization"
    assert all(D.MAX_UTILIZATION.contains(x) for x in (0.01, 0.5, 0.99))
    with pytest.raises(ValueError, match="cannot widen"):
        D.MAX_UTILIZATION.narrowed(0.01, 1.0, lo_open=False, hi_open=False)   # 1 is outside (0, 1)
    with pytest.raises(ValueError, match="cannot widen"):
        D.MAX_UTILIZATION.narrowed(0.0, 0.5, lo_open=False)                   # 0 is outside
    with pytest.raises(ValueError, match="cannot widen"):
        D.CARDS.narrowed(high=65.0)
    assert D.CARDS.narrowed(2.0, 8.0).bounds() == (2.0, 8.0)


def test_within():
    assert D.CARDS.within(D.CARDS) and D.CARDS.within(D.PROCESSORS) and not D.PROCESSORS.within(D.CARDS)
    assert D.PLANNED_TX_RATE.within(D.TX_RATE) and not D.TX_RATE.within(D.PLANNED_TX_RATE)
    assert D.MAX_UTILIZATION.within(D.MAX_SERVER_UTILIZATION) and not D.MAX_SERVER_UTILIZATION.within(D.MAX_UTILIZATION)
    assert D.CARDS.within(D.TX_RATE) and not D.TX_RATE.within(D.CARDS)              # unbounded above
    assert not Domain("x", 1.0, 64.0).within(D.CARDS)                                # not whole numbers
    assert D.ROUNDTRIP_MESSAGE_KB.within(D.MESSAGE_KB) and not D.MESSAGE_KB.within(D.ROUNDTRIP_MESSAGE_KB)


# ------------------------------------------------------------------ the model validates through the domains
MODEL = sorted((ROOT / "model").rglob("*.py"))
OWNERS = {"domains.py", "_validate.py"}


def test_no_model_module_calls_check_itself():
    """Every argument is validated through a Domain: a ``check(...)`` call with bounds of its
    own outside model/domains.py and model/_validate.py would be a second declaration."""
    calls = []
    for p in MODEL:
        if p.name in OWNERS:
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check":
                calls.append(f"{p.name}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and any(a.name == "check" for a in node.names):
                calls.append(f"{p.name}:{node.lineno} imports check")
    assert calls == []


def _tokens(path: Path):
    with open(path, "rb") as fh:
        yield from tokenize.tokenize(fh.readline)


def _docstrings(path: Path) -> dict:
    """``{line: qualified name}`` of every line of the module's, classes' and functions' docstrings."""
    out = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{prefix}{child.name}.")
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.update({n: prefix.rstrip(".") for n in range(first.lineno, first.end_lineno + 1)})

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


def literal_card_limits(path: Path, rel: str, not_cards: dict) -> tuple[list, set, list]:
    """Tokens of ``path`` that write the card limit: the float 64.0 (``64.``, ``64.00``), a
    string "64", or a string holding "1..64".  Returns (hits in code, exceptions used,
    (qualified name, line) of docstrings holding "1..64"); a code line holding one of
    ``not_cards[rel]`` is not a hit."""
    lines = path.read_text(encoding="utf-8").splitlines()
    docs = _docstrings(path)
    hits, used, doc_hits = [], set(), []
    for tok in _tokens(path):
        text = tok.string
        hit = ((tok.type == tokenize.NUMBER and "." in text and float(text.replace("_", "")) == 64.0)
               or (tok.type == tokenize.STRING and ("1..64" in text or re.fullmatch(r"""['"]64['"]""", text))))
        if not hit:
            continue
        if tok.type == tokenize.STRING and tok.start[0] in docs:
            doc_hits.append((docs[tok.start[0]], tok.start[0]))
            continue
        line = lines[tok.start[0] - 1]
        allowed = [a for a in not_cards.get(rel, ()) if a in line]
        used.update((rel, a) for a in allowed)
        if not allowed:
            hits.append(f"{rel}:{tok.start[0]}: {line.strip()}")
    return hits, used, doc_hits


# A 64 that is not a card count: message sizes in KB (the measured 64KB messages), the
# coprocessor's ECC word size and the MVA work estimate's array width.  Anything else in these files fails the scan.
NOT_CARDS = {"model/zos/ams/_scenario.py": ('"medium": 64.0',),
             "model/zos/crypto.py": ("ECC_WORD_BITS = 64.0",),
             "model/calibration/targets.py": ('("64k", 64.0)', "for kb in (2.0, 64.0, 4096.0)"),
             "model/queueing/mva.py": ("finite.sum()) / 64.0",)}


# the Excel catalog writes the help texts, the template the data validation
SCANNED = MODEL + [ROOT / "addin" / "catalog.py", *sorted((ROOT / "workbook" / "template").glob("*.py"))]


def test_the_card_limit_is_written_once():
    """The card limit 64 appears as code in model/, the catalog and the template only in model/domains.py (whole-number 64s
    are message sizes in KB all over model/calibration/targets.py: the float 64.0 is what a bound is written as).
    A docstring may say 1..64 only where the docstring test below compares it with the domain."""
    found, used = [], set()
    verified = {(inspect.getsourcefile(owner), owner.__qualname__) for _, a, owner, _, _ in catalog_entries()
                if a.domain is D.CARDS and owner is not None}
    for p in SCANNED:
        if p.name != "domains.py":
            rel = p.relative_to(ROOT).as_posix()
            hits, u, doc_hits = literal_card_limits(p, rel, NOT_CARDS)
            found += hits
            used |= u
            module = importlib.import_module("cryptoplan." + rel.removesuffix(".py").replace("/", "."))
            found += [f"{rel}:{line}: {name or 'the module'}'s docstring, not compared with the domain"
                      for name, line in doc_hits if (inspect.getsourcefile(module), name) not in verified]
    assert found == []
    assert used == {(f, a) for f, allow in NOT_CARDS.items() for a in allow}   # no stale exception


def test_the_scan_finds_the_old_literals(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Cards, 1..64 (a docstring)."""\n'
                   'n = check("cards", cards, 1.0, 64.0, integer=True)\n'
                   'help = "Cards; 1..64."\n'
                   'v = ("whole", "between", "1", "64")\n'
                   'kb = 64.0\n')
    hits, used, doc_hits = literal_card_limits(bad, "bad.py", {"bad.py": ("kb =",)})
    assert [h.split(":")[1] for h in hits] == ["2", "3", "4"] and used == {("bad.py", "kb =")}
    assert doc_hits == [("", 1)]


# ------------------------------------------------------------------ docstrings state the domains
def catalog_entries():
    """(catalog function, argument, function whose docstring documents it, the ranges the
    catalog allows there, the description) for every catalog argument with a domain.

    The description is found by following the docstring's :func: references ("Other
    parameters as :func:`ams_throughput`"); the allowed ranges are those the catalog help
    states for the argument and for any other argument the same entry documents
    ("wait_percentile, max_percentile_wait : float")."""
    from cryptoplan.addin.catalog import CATALOG
    for f in CATALOG:
        fn = f.model_function()
        helps = {a.name: a.help for a in f.model_args}
        for a in f.model_args:
            if a.domain is not None:
                owner, names, text = documented_entry(fn, a.name)
                allowed = {s for n in names or (a.name,) for s in range_spans(helps.get(n, ""))}
                yield f, a, owner, allowed, text


def test_docstring_ranges_agree_with_the_declared_domains():
    """Where a model docstring states an argument's range, it is the range the catalog
    declares for it (whose help states the domain: tests/test_catalog.py), so prose such as
    "cards : int  Cards of that mode, 1..64." cannot drift from the validation."""
    checked, wrong = set(), []
    for f, a, owner, allowed, text in catalog_entries():
        spans = range_spans(text)
        assert normalized(a.domain.text()) in allowed, (f.name, a.name)
        if spans:
            checked.add((owner, a.name))
        wrong += [f"{owner.__module__}.{owner.__qualname__}, {a.name}: the docstring says {s}, the domain is "
                  f"{a.domain.text()} ({f.name})" for s in spans if s not in allowed]
    assert wrong == []
    assert len(checked) >= 40       # the docstrings do state ranges: the comparison is not empty


def test_range_spans_reads_the_docstring_forms():
    assert range_spans("Cards of that mode, 1..64.") == ["1..64"]
    assert range_spans("Parallel requesters (1..100,000).") == ["1..100000"]
    assert range_spans("Mean service time, ``> 0``; [0, 1) or (0, 1].") == [">0", "[0,1)", "(0,1]"]
    assert range_spans("``0 <= traffic <= 1e12``; [0, 1]; 0 < p < 1") == ["0..1e+12", "0..1", "(0,1)"]
    assert normalized(D.MAX_UTILIZATION.text()) == "(0,1)" and normalized(D.TRAFFIC.text()) == "0..1e+12"
    assert normalized(D.OTHER_LPAR_UTIL.text()) == "[0,1)" and normalized(D.CARDS.text()) == "1..64"
