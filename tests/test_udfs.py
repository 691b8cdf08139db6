"""The Excel functions (cryptoplan.addin.udfs) as Excel calls them: cells in, values or error text out.

Arguments are passed the way xlwings 0.37.8 delivers them with ``ndim=2,
err_to_str=True`` (see addin/convert.py): 2-D lists, floats, ``None`` for an
empty cell, ``"#N/A"`` for an error cell, and the raw Python default for an
omitted argument.  Expected numbers come from independent formulas written out
here (Erlang C as the textbook finite sum, Kleinrock eq. 3.39) or, for the
wrappers, from calling the wrapped model function directly: the UDF layer must
forward, not recompute.
"""

import datetime as dt
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from cryptoplan import model
from cryptoplan.addin import convert, udfs
from cryptoplan.addin.catalog import CATALOG, get

ERROR_PREFIXES = convert.EXCEL_ERRORS


def erlang_c_textbook(a: float, c: int) -> float:
    """Erlang C by the finite sum, in exact rational arithmetic (Kleinrock eq. 3.39)."""
    a = Fraction(a)
    term = Fraction(1)
    total = Fraction(0)
    for k in range(c):
        total += term
        term = term * a / (k + 1)          # term = a^(k+1)/(k+1)!
    top = term * c / (c - a)               # a^c/c! * c/(c-a)
    return float(top / (total + top))


def is_error(x) -> bool:
    return isinstance(x, str) and x.startswith(ERROR_PREFIXES)


# ------------------------------------------------------------ values
@pytest.mark.parametrize("a,c", [(9.0, 10), (2.0, 3), (0.5, 1), (45.0, 50)])
def test_erlangc_matches_textbook_sum(a, c):
    assert udfs.ERLANGC(a, float(c)) == pytest.approx(erlang_c_textbook(a, c), rel=1e-12)


def test_values_arrive_as_excel_sends_them():
    # single cell as a 1x1 grid (ndim=2), whole numbers as floats
    assert udfs.ERLANGC([[9.0]], [[10.0]]) == pytest.approx(erlang_c_textbook(9, 10), rel=1e-12)
    # numeric text is accepted
    assert udfs.ERLANGB("2", "3") == pytest.approx(model.erlang_b(2.0, 3.0))


def test_python_keywords_work():
    assert udfs.ERLANGC(servers=10, traffic=9) == udfs.ERLANGC(9, 10)


# ------------------------------------------------------------ errors
def test_bad_argument_names_argument_and_range():
    out = udfs.ERLANGC(9, 0.5)
    assert out == "#VALUE! ERLANGC: servers must be in [1, 1e+12] (got 0.5)"


def test_unstable_queue_is_num_error():
    out = udfs.ERLANGC(10, 10)
    assert out.startswith("#NUM! ERLANGC: unstable queue")
    assert udfs.MMC_WAIT(3, 1, 2).startswith("#NUM! MMC_WAIT:")


def test_empty_cell_required_vs_default():
    assert udfs.ERLANGC(None, 3) == "#VALUE! ERLANGC: traffic is required (the cell is empty)"
    assert udfs.ERLANGC([[""]], 3).startswith("#VALUE! ERLANGC: traffic is required")
    # an empty optional cell takes the model default (service_scv=0, arrival_scv=1)
    assert udfs.MGC_WAIT(1, 0.5, 1, [[None]], None) == pytest.approx(
        model.mgc_wait(1, 0.5, 1))


@pytest.mark.parametrize("value,fragment", [
    (True, "traffic must be a number (got TRUE)"),
    ("nine", "traffic must be a number (got text 'nine')"),
    (dt.datetime(2024, 1, 2), "traffic must be a number, not a date"),
    (float("nan"), "traffic must be a finite number"),
])
def test_wrong_types_are_value_errors(value, fragment):
    out = udfs.ERLANGC(value, 3)
    assert out.startswith("#VALUE! ERLANGC: ") and fragment in out


def test_integer_arguments_must_be_whole():
    out = udfs.AMS_THROUGHPUT("integrity", "RSA", 2048, 2, None, 2.5)
    assert out == "#VALUE! AMS_THROUGHPUT: requesters must be a whole number (got 2.5)"


def test_text_argument_rejects_number():
    out = udfs.AMS_THROUGHPUT(3, "RSA", 2048, 2)
    assert out.startswith("#VALUE! AMS_THROUGHPUT: policy must be text: one of integrity")


def test_incoming_errors_propagate():
    # an error value from another cell (xlwings err_to_str) names the argument
    assert udfs.ERLANGC("#N/A", 3) == "#N/A ERLANGC: traffic is #N/A"
    # error text from another cryptoplan cell passes through unchanged
    upstream = udfs.ERLANGC(10, 10)
    assert udfs.MMC_WAIT(upstream, 1, 2) == upstream
    # the first bad argument wins, even if a later one is also bad
    assert udfs.ERLANGB("#DIV/0!", "#N/A") == "#DIV/0! ERLANGB: traffic is #DIV/0!"


def test_error_text_is_capped_at_255_characters():
    out = udfs.ERLANGC("#VALUE! " + "x" * 600, 3)
    assert len(out) <= 255
    assert len(convert.error_text("#VALUE!", "F", "y" * 1000)) == 255


def test_missing_model_function_reports_upgrade():
    spec = get("ERLANGC")
    ghost = type(spec)("GHOST", "no_such_function", spec.category, "x", spec.args, "")
    assert convert.call(ghost, (1, 2)) == (
        "#VALUE! GHOST: this cryptoplan version has no model.no_such_function; update cryptoplan")


def test_internal_errors_become_text(monkeypatch):
    monkeypatch.setattr(model, "erlang_b", lambda a, c: 1 / 0)
    out = udfs.ERLANGB(1, 2)
    assert out.startswith("#VALUE! ERLANGB: internal error (ZeroDivisionError")


def test_non_finite_result_is_an_error(monkeypatch):
    monkeypatch.setattr(model, "erlang_b", lambda a, c: float("inf"))
    assert udfs.ERLANGB(1, 2) == "#NUM! ERLANGB: the result is not a finite number (inf)"


# ------------------------------------------------------------ broadcasting
def test_column_against_row_gives_table_elementwise():
    rates = [[1.0], [2.0], [3.0]]
    servers = [[4.0, 5.0]]
    out = udfs.MMC_WAIT(rates, 0.9, servers)
    assert len(out) == 3 and all(len(r) == 2 for r in out)
    for i, lam in enumerate((1.0, 2.0, 3.0)):
        for j, c in enumerate((4.0, 5.0)):
            assert out[i][j] == pytest.approx(model.mmc_wait(lam, 0.9, c), rel=1e-14)


def test_bad_element_only_fails_that_element():
    out = udfs.ERLANGC([[8.0], [10.0], [-1.0], [None], [9.0]], 10)
    assert out[0][0] == pytest.approx(erlang_c_textbook(8, 10), rel=1e-12)
    assert out[1][0].startswith("#NUM! ERLANGC: unstable queue")
    assert out[2][0] == "#VALUE! ERLANGC: traffic must be in [0, 1e+12] (got -1)"
    assert out[3][0] == "#VALUE! ERLANGC: traffic is required (the cell is empty)"
    assert out[4][0] == pytest.approx(erlang_c_textbook(9, 10), rel=1e-12)


def test_mismatched_ranges_fail_the_whole_call():
    out = udfs.ERLANGC([[1.0, 2.0]], [[3.0], [4.0], [5.0], [6.0]])
    assert isinstance(out, list)  # 1x2 against 4x1 broadcasts to 4x2
    out = udfs.ERLANGC([[1.0], [2.0]], [[3.0], [4.0], [5.0]])
    assert out.startswith("#VALUE! ERLANGC: the argument ranges do not fit together "
                          "(traffic 2x1, servers 3x1)")


def test_text_arguments_broadcast_too():
    out = udfs.CRYPTO_OP_MS([["sign"], ["verify"], ["bogus"]])
    assert out[0][0] == pytest.approx(model.crypto_op_ms("sign"))
    assert out[1][0] == pytest.approx(model.crypto_op_ms("verify"))
    assert out[2][0].startswith("#VALUE! CRYPTO_OP_MS: operation must be one of")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.booleans(), st.text(max_size=5),
                          st.floats(allow_nan=True, allow_infinity=True),
                          st.integers(-5, 50)), min_size=3, max_size=3))
def test_never_blank_never_nan(args):
    """Whatever the cells hold, the result is a finite number or error text <= 255 chars."""
    for name in ("ERLANGB", "ERLANGC", "MMC_UTILIZATION", "MMC_WAIT", "MMC_RESPONSE"):
        spec = get(name)
        out = getattr(udfs, name)(*args[:len(spec.args)])
        if isinstance(out, str):
            assert is_error(out) and len(out) <= 255, out
        else:
            assert isinstance(out, float) and math.isfinite(out), out


# ------------------------------------------------------------ queueing wrappers
def test_mmc_servers_returns_whole_count():
    out = udfs.MMC_SERVERS(3000.0, 0.5e-3, 0.7)
    assert out == 3 and isinstance(out, int)
    assert udfs.MMC_SERVERS(3000.0, 0.5e-3, None, 1e-5) == model.mmc_servers(
        3000.0, 0.5e-3, max_wait=1e-5)


def test_mva_vectors_from_rows_or_columns():
    expect = model.mva_throughput(5, [1.0, 2.0], None, 1.0)
    assert udfs.MVA_THROUGHPUT(5.0, [[1.0, 2.0]], None, 1.0) == pytest.approx(expect)
    assert udfs.MVA_THROUGHPUT(5.0, [[1.0], [2.0]], [[None]], 1.0) == pytest.approx(expect)
    delay = model.mva_throughput(5, [1.0, 2.0], [1, math.inf])
    assert udfs.MVA_THROUGHPUT(5.0, [[1.0], [2.0]], [[1.0], ["inf"]]) == pytest.approx(delay)
    assert udfs.MVA_THROUGHPUT(5.0, [[1.0], [None]]).startswith(
        "#VALUE! MVA_THROUGHPUT: demands has an empty cell at position 2")
    assert udfs.MVA_THROUGHPUT([[1.0], [2.0]], [[1.0, 2.0]]) == [
        [pytest.approx(model.mva_throughput(1, [1.0, 2.0]))],
        [pytest.approx(model.mva_throughput(2, [1.0, 2.0]))]]


# ------------------------------------------------------------ planning wrappers
# These forward to model functions written by the lead; they fail (with the
# "no model.<name>" error text) until those functions exist.
AMS = ("integrity", "RSA", 2048.0, 2.0)


def test_ams_wrappers_forward_to_model():
    assert udfs.AMS_THROUGHPUT(*AMS) == pytest.approx(model.ams_throughput(*AMS), rel=1e-14)
    assert udfs.AMS_COST_US(*AMS, None, 1, 2, 1, 1, "AMSM") == pytest.approx(
        model.ams_cost_us(*AMS, address_space="AMSM"), rel=1e-14)
    assert udfs.CARD_UTILIZATION(500.0, *AMS, None, "coprocessor", 2.0) == pytest.approx(
        model.card_utilization(500.0, *AMS, card="coprocessor", cards=2), rel=1e-14)
    assert udfs.CRYPTO_WAIT_MS(500.0, *AMS) == pytest.approx(
        model.crypto_wait_ms(500.0, *AMS), rel=1e-14)
    n = udfs.COPROCESSORS_REQUIRED(2000.0, *AMS, None, 0.7)
    assert n == model.coprocessors_required(2000.0, *AMS) and isinstance(n, int)
    assert udfs.ACCELERATORS_REQUIRED(2000.0, *AMS) == model.accelerators_required(2000.0, *AMS)
    assert udfs.CRYPTO_OP_MS("sign") == pytest.approx(model.crypto_op_ms("sign"))


def test_planning_text_is_case_insensitive_and_key_reuse_unlimited():
    a = udfs.AMS_THROUGHPUT("Confidentiality", "rsa", 2048.0, 2.0, "unlimited")
    b = model.ams_throughput("confidentiality", "RSA", 2048, 2.0, "unlimited")
    assert a == pytest.approx(b, rel=1e-14)
    assert udfs.AMS_THROUGHPUT("confidentiality", "RSA", 2048.0, 2.0, 32.0) == pytest.approx(
        model.ams_throughput("confidentiality", "RSA", 2048, 2.0, 32), rel=1e-14)


def test_saturated_cards_are_num_errors():
    out = udfs.CARD_UTILIZATION(1e6, *AMS, None, "coprocessor", 1)
    assert out.startswith("#NUM! CARD_UTILIZATION: ")


def test_tls_wrappers_forward_to_model():
    args = ("ATTLS", "TLS_CHACHA20_POLY1305_SHA256", 2.0)
    assert udfs.TLS_ROUNDTRIP_US(*args) == pytest.approx(model.tls_roundtrip_us(*args))
    assert udfs.TLS_ROUNDTRIP_US("at-tls", *args[1:]) == pytest.approx(
        model.tls_roundtrip_us(*args))
    assert udfs.CHANNEL_STOP_COST_US("SSLCIPH") == pytest.approx(
        model.channel_stop_cost_us("SSLCIPH"))
    assert udfs.HANDSHAKE_CPU_FACTOR() == pytest.approx(model.handshake_cpu_factor())
    # booleans arrive as TRUE/FALSE, 1/0 or text
    assert udfs.HANDSHAKE_LATENCY_FACTOR("ECDHE", "RSA", "TLS1.2", "no", 0.0, True) == (
        pytest.approx(model.handshake_latency_factor(fips=True)))
    assert udfs.HANDSHAKE_LATENCY_FACTOR("DHE") == pytest.approx(
        model.handshake_latency_factor("DHE"))
    assert udfs.HANDSHAKE_CPU_FACTOR("ECDHE", "RSA", "TLS1.2", "maybe").startswith(
        "#VALUE! HANDSHAKE_CPU_FACTOR: resumption must be TRUE or FALSE (got 'maybe')")
    assert udfs.OCSP_CPU_US(1000.0) == pytest.approx(model.ocsp_cpu_us(1000.0))


def test_tls_channel_wrappers_forward_to_model():
    cipher = "TLS_RSA_WITH_AES_256_CBC_SHA256"
    assert udfs.TLS_COST_US("ATTLS", cipher, 2.0, "CHIN") == pytest.approx(
        model.tls_cost_us("ATTLS", cipher, 2.0, "CHIN"))
    assert udfs.TLS_COST_US("ATTLS", cipher, 2.0) == pytest.approx(
        model.tls_cost_us("ATTLS", cipher, 2.0))
    # SSLRKEYC arrives from Excel as a float; the platform as text in any case
    assert udfs.TLS_COST_US("SSLCIPH", cipher, 32.0, None, 1048576.0, "Z14") == pytest.approx(
        model.tls_cost_us("SSLCIPH", cipher, 32.0, sslrkeyc=1048576, platform="z14"))
    assert udfs.TLS_COST_US("SSLCIPH", cipher, 32.0, None, 0, "z13").startswith(
        "#VALUE! TLS_COST_US: platform must be one of z14, z15, z16")
    assert udfs.AMS_MESSAGE_COST_US("privacy", 2.0) == pytest.approx(
        model.ams_message_cost_us("privacy", 2.0))
    # AMS accepts z13 (the z14 report's column), which the channel functions do not
    assert udfs.AMS_MESSAGE_COST_US("privacy", 2.0, None, 1, "Z13") == pytest.approx(
        model.ams_message_cost_us("privacy", 2.0, platform="z13"), rel=1e-14)
    assert udfs.AMS_COST_US(*AMS, None, 1, 2, 1, 1, "total", "z15") == pytest.approx(
        model.ams_cost_us(*AMS, coprocessors=2, platform="z15"), rel=1e-14)
    assert udfs.AMS_COST_US(*AMS, None, 1, 2, 1, 1, "total", "z12").startswith(
        "#VALUE! AMS_COST_US: platform must be one of z13, z14, z15, z16")
    assert udfs.CHANNEL_START_COST_US("SSLCIPH", cipher) == pytest.approx(
        model.channel_start_cost_us("SSLCIPH", cipher))
    assert udfs.CHANNEL_START_RATE("SSLCIPH", cipher) == pytest.approx(
        model.channel_start_rate("SSLCIPH", cipher))
    assert udfs.CHANNEL_START_RATE("SSLCIPH", cipher, "Z15") == pytest.approx(
        model.channel_start_rate("SSLCIPH", cipher, "z15"))
    assert udfs.CHANNEL_START_COST_US("SSLCIPH", cipher, "total", "z14").startswith(
        "#VALUE! CHANNEL_START_COST_US: platform must be one of z15, z16 (got 'z14')")


@pytest.mark.parametrize("name", ["MODEL_PARAMETERS", "MODEL_FIGURES"])
def test_tables_have_header_and_no_blanks(name):
    spec = get(name)
    out = getattr(udfs, name)()
    assert isinstance(out, list), out
    assert out[0] == list(spec.columns)
    rows = getattr(model, spec.model)()
    assert len(out) == len(rows) + 1
    for row, src in zip(out[1:], rows):
        assert len(row) == len(spec.columns)
        assert row[0] == src[spec.columns[0]]
        assert all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in row)
        # the fuzz found 55 blank cells in MODEL_FIGURES() and 5 in MODEL_PARAMETERS()
        assert all(not (isinstance(v, str) and not v.strip()) for v in row), row


def test_every_catalog_function_is_generated():
    assert sorted(udfs.__all__) == sorted(f.name for f in CATALOG)
    for f in CATALOG:
        assert getattr(udfs, f.name).catalog_entry is f


# ------------------------------------------------------------ params_file (issue 13)
def test_params_file_cell_selects_and_validates_the_parameter_file(tmp_path):
    """The Excel path (xlwings hands 2-D lists): a file in force for the call, errors as cell text."""
    import json

    from cryptoplan.model.params import Parameters, load_params, using_parameters
    doc = json.loads(json.dumps(load_params()))
    doc["parameters"]["cop_rsa_ms_2048"]["value"] *= 2.0
    site = tmp_path / "site.json"
    site.write_text(json.dumps(doc), encoding="utf-8")
    base = udfs.CRYPTO_OP_MS("sign")
    assert udfs.CRYPTO_OP_MS([["sign"]], [["RSA"]], [[2048.0]], [[str(site)]]) == pytest.approx(2 * base, rel=1e-12)
    assert udfs.CRYPTO_OP_MS("sign", params_file=[[None]]) == base          # empty cell: the default
    with using_parameters(Parameters.load(site)):
        want = model.card_utilization(300.0, "privacy", "RSA", 2048, 10.0, None, "coprocessor", 2)
    got = udfs.CARD_UTILIZATION(300, "privacy", "RSA", 2048, 10, None, "coprocessor", 2, params_file=str(site))
    assert got == pytest.approx(want, rel=1e-12)
    table = udfs.MODEL_PARAMETERS(str(site))
    row = next(r for r in table if r[0] == "cop_rsa_ms_2048")
    assert row[1] == doc["parameters"]["cop_rsa_ms_2048"]["value"]
    # errors: a range, a number, an incoming error, a broken file
    assert udfs.CRYPTO_OP_MS("sign", params_file=[[str(site)], [str(site)]]) == (
        "#VALUE! CRYPTO_OP_MS: params_file must be one cell, got a 2x1 range")
    assert udfs.CRYPTO_OP_MS("sign", params_file=3.0).startswith(
        "#VALUE! CRYPTO_OP_MS: params_file must be the path of a parameter file (text), got 3")
    assert udfs.CRYPTO_OP_MS("sign", params_file="#N/A") == "#N/A CRYPTO_OP_MS: params_file is #N/A"
    doc["parameters"]["ams_msg_us"]["value"] = "1.5"
    site.write_text(json.dumps(doc), encoding="utf-8")
    msg = udfs.MODEL_FIGURES(str(site))
    assert msg.startswith("#VALUE! MODEL_FIGURES: params_file: ") and "'ams_msg_us'" in msg, msg
    assert udfs.ERLANGC(9, 10) == pytest.approx(model.erlang_c(9, 10))    # no params_file there
