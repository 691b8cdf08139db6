"""Fuzz every public model function: a finite answer or a clear ValueError/TypeError, nothing else.

Issue 14's fuzz of the model API (46 public functions, 129,180 cases) found OverflowError,
MemoryError and RuntimeError, NaN and inf results, complex numbers silently truncated and
raw NumPy messages.  This test repeats it on every callable in ``model.__all__`` with
arguments drawn per parameter name (the vocabularies, the ranges' edges, extremes, wrong
types) and checks the contract of ``model._validate``:

* the result is finite: a number, an array, a dict or dataclass of them (text is allowed
  where a function returns names);
* or the call raises ``ValueError`` (``UnstableQueueError`` included) or ``TypeError`` with a
  message that names something (not a bare NumPy "shape mismatch" or "could not convert").

The examples come from a fixed seed (the same every run); failures a longer run stored in
``tests/hypothesis-db`` are replayed first (see ``conftest.py``).  25 per function in the
fast tier (about 4 s), 300 in the slow tier (about 40 s); ``CRYPTOPLAN_FUZZ_EXAMPLES`` sets
the fast tier's budget.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from cryptoplan import model
from cryptoplan.model.params import CIPHERS, ECC_KEY_SIZES, POLICIES, RSA_KEY_SIZES

EXAMPLES = int(os.environ.get("CRYPTOPLAN_FUZZ_EXAMPLES", "25"))

_EXTREME = st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-310, 5e-324, 1e308, -1e308, 1.79e308, math.inf,
                            -math.inf, math.nan, 0.5, 2.0, 1e6])
# integers beyond the float range and over Python's 4,300-digit str() limit (issue 31)
_HUGE = st.sampled_from([10**400, -10**400, 10**5000])
_NUMBER = st.one_of(_EXTREME, st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6), _HUGE)
_JUNK = st.one_of(st.none(), st.booleans(), st.text(max_size=8), st.just([1.0, 2.0]), st.just(1 + 2j),
                  st.just(np.array([[1.0], [2.0]])), st.just(np.datetime64("2020-01-01")),
                  st.just([[1], [2, 3]]), st.just([1, 10**400]))    # ragged lists, a huge element
_ANY = st.one_of(_NUMBER, _JUNK)

_BY_NAME = {
    "policy": st.sampled_from(list(POLICIES) + ["Privacy", "secrecy", ""]),
    "key_type": st.sampled_from(["RSA", "NISTECC", "rsa", "DSA"]),
    "key_size": st.sampled_from(list(RSA_KEY_SIZES) + list(ECC_KEY_SIZES) + [0, 8192, -1, math.inf]),
    "key_reuse": st.sampled_from([None, 1, 32, "unlimited", 0, -5, 1e9, "abc"]),
    "platform": st.sampled_from(["z13", "z14", "z15", "z16", "z12"]),
    "card": st.sampled_from(["accelerator", "coprocessor", "cpacf"]),
    "address_space": st.sampled_from(["total", "application", "AMSM", "MSTR", "CHIN", "TCPIP", "x"]),
    "mode": st.sampled_from(["none", "SSLCIPH", "ATTLS", "AT-TLS", "tls"]),
    "cipher": st.sampled_from(list(CIPHERS) + [None, "RC4"]),
    "operation": st.sampled_from(["sign", "verify", "key_encrypt", "key_decrypt", "cert_check", "x"]),
    "method": st.sampled_from(["allen-cunneen", "cosmetatos", "x"]),
    "key_exchange": st.sampled_from(["RSA", "ECDHE", "DHE", "PSK"]),
    "certificate": st.sampled_from(["RSA", "ECDSA"]),
    "protocol": st.sampled_from(["TLS1.2", "TLS1.3", "SSLv3"]),
    "card_mode": st.sampled_from(["coprocessor", "accelerator"]),
    "card_generation": st.sampled_from(["CEX6S", "CEX7S", "CEX8S", "CEX5S"]),
    "rmf_row": st.sampled_from(["summary", "ME", "CRT", "x"]),
    "demands": st.one_of(st.lists(_NUMBER, min_size=0, max_size=4), _ANY),
    "servers": st.one_of(st.lists(st.sampled_from([1, 2, 3, math.inf, 0, 1.5]), min_size=1, max_size=4), _ANY),
}


def _strategy(name):
    if name in _BY_NAME:
        return st.one_of(_BY_NAME[name], _ANY) if name not in ("demands", "servers") else _BY_NAME[name]
    return _ANY


def _finite(value) -> bool:
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if dataclasses.is_dataclass(value):
        return all(_finite(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    arr = np.asarray(value)
    if arr.dtype.kind in "US":
        return True
    if arr.dtype.kind == "O":
        return all(_finite(v) for v in arr.ravel())
    if arr.dtype.kind not in "biuf":
        return False
    return bool(np.all(np.isfinite(arr)))


_RAW = ("shape mismatch", "could not convert", "object of type", "unsupported operand", "not subscriptable",
        "cannot convert float", "invalid literal", "inhomogeneous", "setting an array element",
        "Exceeds the limit", "int too large")

# functions whose cost is the point of their own tests (tables of every figure, the fit)
_SKIP = {"model_figures", "model_parameters", "defaults",
         "using_parameters"}   # a context manager selecting a parameter set, not a model function
FUNCTIONS = sorted(n for n in model.__all__ if callable(getattr(model, n)) and not inspect.isclass(getattr(model, n))
                   and n not in _SKIP)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_function_answers_or_explains(name):
    _fuzz(name, EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_function_answers_or_explains_longer(name):
    _fuzz(name, 300)


def _fuzz(name, examples):
    fn = getattr(model, name)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def run(kwargs):
        try:
            out = fn(**kwargs)
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            assert msg and not any(r in msg for r in _RAW), (name, kwargs, msg)
            return
        assert _finite(out), (name, kwargs, out)

    run.__name__ = f"fuzz_model_{name}"  # the example database's key
    test = given(st.fixed_dictionaries({p.name: _strategy(p.name) for p in params}))(run)
    test = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))(test)
    seed(20261123)(test)()
