"""Tests for model._validate: the single place where model inputs are checked.

Expected messages are the documented format of ``model/_validate.py``
("<name> must be >= 1 (got 0.5)", "... (got 0.5 at index 3)"), written out by
hand here from that specification.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from numbers import Real

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from cryptoplan.model import UnstableQueueError, erlang_b, mmc_wait
from cryptoplan.model._validate import as_float_array, check, check_stable, is_scalar, number_text, range_text


# ------------------------------------------------------------------ scalars
def test_scalar_ok_returns_python_float():
    out = check("servers", 3, 1.0)
    assert out == 3.0 and type(out) is float


def test_numpy_scalar_takes_scalar_path():
    out = check("servers", np.float64(2.5), 1.0)
    assert out == 2.5 and type(out) is float


@pytest.mark.parametrize(
    "kwargs, value, message",
    [
        (dict(lo=1.0), 0.5, "servers must be >= 1 (got 0.5)"),
        (dict(lo=0.0, lo_open=True), 0.0, "servers must be > 0 (got 0)"),
        (dict(hi=1.0), 2.0, "servers must be <= 1 (got 2)"),
        (dict(hi=1.0, hi_open=True), 1.0, "servers must be < 1 (got 1)"),
        (dict(lo=0.0, hi=1.0), -0.25, "servers must be in [0, 1] (got -0.25)"),
        (dict(lo=0.0, hi=1.0, lo_open=True, hi_open=True), 1.0, "servers must be in (0, 1) (got 1)"),
        (dict(lo=0.0, hi=1.0, lo_open=True), 0.0, "servers must be in (0, 1] (got 0)"),
        (dict(lo=1.0, integer=True), 2.5, "servers must be a whole number (got 2.5)"),
        (dict(lo=1.0), math.nan, "servers must be a finite number (got nan)"),
        (dict(lo=1.0), math.inf, "servers must be a finite number (got inf)"),
        (dict(), -math.inf, "servers must be a finite number (got -inf)"),
    ],
)
def test_scalar_message_format(kwargs, value, message):
    with pytest.raises(ValueError) as exc:
        check("servers", value, **kwargs)
    assert str(exc.value) == message


def test_bounds_are_inclusive_unless_open():
    assert check("x", 1.0, 1.0, 2.0) == 1.0
    assert check("x", 2.0, 1.0, 2.0) == 2.0
    with pytest.raises(ValueError):
        check("x", 1.0, 1.0, 2.0, lo_open=True)
    with pytest.raises(ValueError):
        check("x", 2.0, 1.0, 2.0, hi_open=True)


def test_integer_accepts_whole_floats():
    # Excel sends every number as a float: 2048.0 is a whole number.
    assert check("population", 2048.0, 1.0, integer=True) == 2048.0


def test_bool_is_not_a_scalar_number_but_still_converts():
    assert not is_scalar(True)
    assert is_scalar(1, 2.0, np.float32(3.0), np.int64(4))


@pytest.mark.parametrize("x", [0, -3, 2**80, 1.5, float("nan"), float("inf"), True, False, np.bool_(True),
                               np.float64(2.0), np.float32(1.0), np.int8(1), np.uint64(7), np.array(1.0),
                               np.array([1.0]), [1.0], (1.0,), "1", None, 1 + 0j, Fraction(1, 3),
                               Decimal("1.5"), np.timedelta64(1, "s"), np.datetime64("2026-01-01")])
def test_is_scalar_answers_as_the_real_number_test_does(x):
    # the fast path (a float's or an int's type) must not change an answer: the definition is
    # numbers.Real, less bool and NumPy's time types
    real = isinstance(x, Real) and not isinstance(x, (bool, np.timedelta64, np.datetime64))
    assert is_scalar(x) is real
    assert is_scalar(1.0, x, 2) is real


# ------------------------------------------------------------------- arrays
def test_array_ok_returned_as_float_array():
    out = check("servers", [1, 2, 3], 1.0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert_array_equal(out, [1.0, 2.0, 3.0])


def test_zero_dim_array_returns_float():
    out = check("servers", np.array(4.0), 1.0)
    assert type(out) is float and out == 4.0


def test_array_reports_first_bad_index():
    with pytest.raises(ValueError) as exc:
        check("servers", [1.0, 2.0, 3.0, 0.5, 0.25], 1.0)
    assert str(exc.value) == "servers must be >= 1 (got 0.5 at index 3)"


def test_2d_array_reports_full_index():
    with pytest.raises(ValueError) as exc:
        check("traffic", [[1.0, 2.0], [3.0, -1.0]], 0.0)
    assert str(exc.value) == "traffic must be >= 0 (got -1 at index 1, 1)"


def test_array_nan_is_reported_before_range():
    with pytest.raises(ValueError) as exc:
        check("traffic", [-1.0, np.nan], 0.0)
    assert str(exc.value) == "traffic must be a finite number (got nan at index 1)"


def test_array_integer_message():
    with pytest.raises(ValueError) as exc:
        check("population", [1.0, 2.0, 2.5], 1.0, integer=True)
    assert str(exc.value) == "population must be a whole number (got 2.5 at index 2)"


def test_array_upper_bound_message():
    with pytest.raises(ValueError) as exc:
        check("p", [0.5, 1.0], 0.0, 1.0, lo_open=True, hi_open=True)
    assert str(exc.value) == "p must be in (0, 1) (got 1 at index 1)"


def test_all_or_nothing_no_partial_result():
    # One bad element raises for the whole call (no NaN masking).
    with pytest.raises(ValueError, match=r"at index 2\)$"):
        erlang_b([1.0, 2.0, 3.0], [1.0, 2.0, 0.0])


# ------------------------------------------------------------- non-numeric
@pytest.mark.parametrize("bad", ["abc", "1.5", b"2", ["1", "x"], {"a": 1}])
def test_non_numeric_raises_type_error_naming_argument(bad):
    with pytest.raises(TypeError) as exc:
        check("service_time", bad, 0.0)
    msg = str(exc.value)
    assert msg.startswith("service_time must be a number or an array of numbers (got ")
    assert repr(bad) in msg


def test_none_in_array_becomes_nan_and_is_reported_with_index():
    # NumPy converts None to NaN (an empty Excel cell); that is caught as non-finite.
    with pytest.raises(ValueError) as exc:
        check("service_time", [1.0, None], 0.0)
    assert str(exc.value) == "service_time must be a finite number (got nan at index 1)"


def test_as_float_array_names_argument():
    with pytest.raises(TypeError, match=r"^arrival_rate must be a number"):
        as_float_array("arrival_rate", "fast")
    assert_array_equal(as_float_array("x", [1, 2]), [1.0, 2.0])


def test_public_function_type_error_names_argument():
    with pytest.raises(TypeError, match=r"^servers must be a number"):
        erlang_b(1.0, "two")


# -------------------------------------------------------------- stability
def test_check_stable_scalar():
    check_stable(0.999999)
    with pytest.raises(UnstableQueueError) as exc:
        check_stable(1.0, what="traffic / servers")
    msg = str(exc.value)
    assert msg.startswith("unstable queue: traffic / servers must be < 1")
    assert "(got 1)" in msg


def test_check_stable_array_reports_index():
    check_stable(np.array([0.1, 0.5, 0.99]))
    with pytest.raises(UnstableQueueError) as exc:
        check_stable(np.array([0.1, 0.5, 1.25, 2.0]))
    assert "(got 1.25 at index 2)" in str(exc.value)


def test_unstable_is_a_value_error():
    assert issubclass(UnstableQueueError, ValueError)
    with pytest.raises(ValueError):
        mmc_wait(2.0, 1.0, 2)


def test_message_value_uses_g_format():
    # Large and small values keep the %g form, so the message stays short.
    with pytest.raises(ValueError) as exc:
        check("traffic", -1.5e-12, 0.0)
    assert str(exc.value) == "traffic must be >= 0 (got -1.5e-12)"


def test_bounds_are_written_exactly():
    # %g would print 999999999 as 1e+09: "must be in [0, 1e+09] (got 1e+09)" contradicts itself
    with pytest.raises(ValueError) as exc:
        check("sslrkeyc", 1e9, 0.0, 999999999.0)
    assert str(exc.value) == "sslrkeyc must be in [0, 999999999] (got 1e+09)"
    with pytest.raises(ValueError) as exc:
        check("key_reuse", 0.0, 1.0, 9999999.0)
    assert str(exc.value) == "key_reuse must be in [1, 9999999] (got 0)"


@pytest.mark.parametrize("x, text", [(64.0, "64"), (0.01, "0.01"), (1e12, "1e+12"), (102400.0, "102400"),
                                     (999999999.0, "999999999"), (0.1234567, "0.1234567"), (-3.0, "-3")])
def test_number_text_is_short_and_exact(x, text):
    assert number_text(x) == text and float(text) == x


def test_range_text_is_the_requirement_check_states():
    assert range_text(1.0, None) == "must be >= 1"
    assert range_text(0.0, 1.0, lo_open=True, hi_open=True) == "must be in (0, 1)"
    assert range_text(None, 5.0, hi_open=True) == "must be < 5"
    with pytest.raises(ValueError, match=r"^x must be in \[0, 1\) "):
        check("x", 1.0, 0.0, 1.0, hi_open=True)


# ------------------------------------------------ the model API fuzz (issue 14, item 6)
@pytest.mark.parametrize("bad, match", [
    (10 + 5j, "servers must be a real number"),
    (np.array([10 + 5j]), "servers must be a real number"),
    (np.ma.array([10.0], mask=[True]), "servers must be plain numbers: a masked array"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "servers must be a number, not a date or time"),
    (np.timedelta64(5, "s"), "servers must be a number, not a date or time"),
    (np.datetime64("2020-01-01"), "servers must be a number, not a date or time"),
])
def test_values_that_are_not_real_numbers_are_refused(bad, match):
    # the fuzz: erlang_c(9, 10+5j) -> 0.6687 (imaginary part dropped); datetime64 and masked
    # arrays accepted
    from cryptoplan import model
    with pytest.raises(TypeError, match=match):
        model.erlang_c(9, bad)


def test_overflowing_inputs_and_mismatched_shapes_are_named():
    from cryptoplan import model
    # crypto_op_ms('sign', 'RSA', inf) was an OverflowError; ocsp_cpu_us(1.79e308) returned inf
    with pytest.raises(ValueError, match=r"key_size for RSA must be one of .* \(got inf\)"):
        model.crypto_op_ms("sign", "RSA", float("inf"))
    with pytest.raises(ValueError, match="connection_cpu_us is too large"):
        model.ocsp_cpu_us(1.79e308, "TCPIP")
    # "shape mismatch: objects cannot be broadcast" named no argument
    with pytest.raises(ValueError, match=r"policy \(3,\).*key_size \(2,\)"):
        model.ams_throughput(["integrity", "privacy", "integrity"], "RSA", [2048, 4096], 2)


def test_check_stable_element_messages_equal_the_scalar_calls():
    """mmc_wait over an array of rates: the mask marks the unstable elements, and each one's
    message is what mmc_wait raises for that rate alone."""
    rates = np.array([5.0, 12.0, 9.0, 30.0])
    with pytest.raises(UnstableQueueError) as info:
        mmc_wait(rates, 1.0, 10)
    exc = info.value
    assert exc.mask.tolist() == [False, True, False, True]
    for k in (1, 3):
        with pytest.raises(UnstableQueueError) as one:
            mmc_wait(float(rates[k]), 1.0, 10)
        assert exc.element_message(k) == str(one.value)


# ------------------------------------------------ which elements failed (ArgumentError)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cryptoplan.model import ArgumentError  # noqa: E402

_VALUES = st.one_of(st.floats(-5, 70, allow_nan=False), st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1.0, 64.0, 64.5]))
_RULES = st.sampled_from([dict(lo=1.0, hi=64.0, integer=True), dict(lo=0.0, lo_open=True),
                          dict(lo=0.0, hi=1.0, lo_open=True, hi_open=True), dict(hi=10.0), dict()])


@settings(max_examples=200, deadline=None)
@given(values=st.lists(_VALUES, min_size=1, max_size=12), rule=_RULES)
def test_an_array_error_names_each_bad_element_as_its_scalar_call_would(values, rule):
    """The mask is exactly the elements a scalar call rejects, and element_message(i) is that
    call's message (independent reference: check() on the element alone)."""
    def alone(v):
        try:
            check("cards", v, rule.get("lo"), rule.get("hi"), lo_open=rule.get("lo_open", False),
                  hi_open=rule.get("hi_open", False), integer=rule.get("integer", False))
            return None
        except ValueError as exc:
            return str(exc)
    expected = [alone(v) for v in values]
    arr = np.array(values)
    try:
        check("cards", arr, rule.get("lo"), rule.get("hi"), lo_open=rule.get("lo_open", False),
              hi_open=rule.get("hi_open", False), integer=rule.get("integer", False))
    except ArgumentError as exc:
        assert_array_equal(exc.mask, [m is not None for m in expected])
        assert [exc.element_message(i) for i in np.nonzero(exc.mask)[0]] == [m for m in expected if m]
        assert isinstance(exc, ValueError)
    else:
        assert expected == [None] * len(values)


def test_a_single_bad_number_has_a_zero_dim_mask():
    with pytest.raises(ArgumentError) as info:
        check("cards", 65.0, 1.0, 64.0)
    assert info.value.mask.shape == () and bool(info.value.mask)
    assert info.value.element_message(0) == str(info.value) == "cards must be in [1, 64] (got 65)"
