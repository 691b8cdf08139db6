"""SMF type 70 subtype 2 records read as RMF's crypto activity (model/site/smf70.py, hfp.py).

No real record is public, so the records here are built by :func:`build_smf70` from IBM's
documented layout ("z/OS MVS System Management Facilities (SMF)", record type 70: the
Header/Self-defining Section, the RMF Product Section and the Cryptographic CCA Coprocessor,
Accelerator and PKCS11 Coprocessor Data Sections; offsets in the builder's comments).  The
main check carries the numbers of the 2018 report excerpt (tests/data/rmf-reports/, IBM's
public RMF deck): counts and times are chosen so that IBM's formulas give back every printed
number, and the reader must return them within half a unit of the last printed digit, in the
same table (same cards, scopes, functions and key sizes) the text reader gives for that file.
"""

from __future__ import annotations

import builtins
import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from cryptoplan.model.site.hfp import HfpError, hfp_to_float
from cryptoplan.model.site.rmf_report import read_rmf_report
from cryptoplan.model.site.smf70 import Smf70Error, card_type_name, read_smf70

DATA = Path(__file__).resolve().parent / "data" / "rmf-reports"
F2018 = DATA / "z14-cex5-cex6-lpar-cpc-2018.txt"
INTERVAL_2018 = 1800.009            # INTERVAL 30.00.009


# ---------------------------------------------------------------------------------------------
# the writer (tests only): IBM's layout


def float_to_hfp(x: float, length: int = 8) -> bytes:
    """``x`` as an HFP number of 4 or 8 bytes (exact for every double in long form)."""
    if x == 0:
        return bytes(length)
    bits = 8 * length - 8
    m, e2 = math.frexp(abs(x))               # |x| = m * 2**e2, 0.5 <= m < 1
    e16 = -(-e2 // 4)                         # ceil(e2 / 4): |x| = F * 16**e16, 1/16 <= F < 1
    fraction = round(math.ldexp(m, e2 - 4 * e16 + bits))
    if fraction >> bits:                      # rounding carried into a new hex digit
        fraction >>= 4
        e16 += 1
    assert 0 <= e16 + 64 <= 127, x
    word = (1 << (8 * length - 1) if x < 0 else 0) | (e16 + 64) << bits | fraction
    return word.to_bytes(length, "big")


def packed(digits: str, sign: str = "F") -> bytes:
    return bytes.fromhex(digits + sign)


def u(value: int, size: int) -> bytes:
    return value.to_bytes(size, "big")


def cca_section(ax, ct, scope, sf, t0, c0, c1, msk=0xC0, with_scope=True) -> bytes:
    """R702TYP3: AX, CT, MSK, MT, reserved(4), SF, T0, C0, reserved(8), C1[, SCOPE, DID, reserved(2)]."""
    out = bytes([ax, ct, msk, 0]) + bytes(4) + b"".join(float_to_hfp(v) for v in (sf, t0, c0)) + bytes(8)
    out += float_to_hfp(c1)
    return out + (bytes([scope, 7, 0, 0]) if with_scope else b"")


ENGINE_FIELDS = ("1met", "1mec", "2met", "2mec", "1crt", "1crc", "2crt", "2crc")


def accel_section(ax, ct, scope, sf, engines, blocks, me4=(0, 0), crt4=(0, 0), msk=0xFC) -> bytes:
    """R702TYP4: AX, CT, MSK, MT, EN(4), SF, R7024TC 5 x 64 bytes, 4096 ME/CRT time and count, SCOPE, DID."""
    out = bytes([ax, ct, msk, 0]) + u(engines, 4) + float_to_hfp(sf)
    for k in range(5):
        block = blocks[k] if k < len(blocks) else {}
        out += b"".join(float_to_hfp(block.get(f, 0)) for f in ENGINE_FIELDS)
    out += b"".join(float_to_hfp(v) for v in (*me4, *crt4))
    return out + bytes([scope, 7, 0, 0])


PKCS11_ORDER = ("ASYM SLOW", "ASYM FAST", "SYMM PARTIAL", "SYMM COMPLETE", "ASYM GEN")   # SAT/SAC ... AGT/AGC


def pkcs11_section(ax, ct, scope, sf, pairs, msk=0xF8) -> bytes:
    """R702TYP5: AX, CT, MSK, MT, reserved(4), SF, then (time, count) of the five function groups, SCOPE, DID."""
    out = bytes([ax, ct, msk, 0]) + bytes(4) + float_to_hfp(sf)
    for f in PKCS11_ORDER:
        t, c = pairs.get(f, (0, 0))
        out += float_to_hfp(t) + float_to_hfp(c)
    return out + bytes([scope, 7, 0, 0])


def build_smf70(*, system="S21", ist="0110000", dat="0118193", interval="3000009", cca=(), accel=(), pkcs11=(),
                icsf=bytes(24), srl=0x83, rty=70, sty=2, product_len=104) -> bytes:
    """One SMF type 70 subtype 2 record, RDW included, from IBM's layout.

    Header/Self-defining Section: LEN(2) SEG(2) FLG(1) RTY(1) TME(4) DTE(4 packed) SID(4) SSI(4) STY(2)
    TRN(2) reserved(2), then the triplets (offset 4, length 2, number 2) of the product section (28),
    CCA (36), accelerator (44), ICSF (52) and PKCS11 (60) sections; the product section at 68:
    MFV(2) PRD(8) IST(4) DAT(4) INT(4) ... SRL at 51.
    """
    product = bytearray(product_len)
    product[0:2] = packed("240", "F")
    product[2:10] = "RMF     ".encode("cp037")
    product[10:14] = packed(ist)
    product[14:18] = packed(dat)
    product[18:22] = packed(interval)
    if product_len > 51:
        product[51] = srl
    sections = {"CCA": list(cca), "ACCEL": list(accel), "ICSF": [icsf] if icsf else [], "PKCS11": list(pkcs11)}
    offset = 68 + len(product)
    triplets, body = b"", b""
    for key in ("CCA", "ACCEL", "ICSF", "PKCS11"):
        secs = sections[key]
        if secs:
            assert len({len(s) for s in secs}) == 1
            triplets += u(offset, 4) + u(len(secs[0]), 2) + u(len(secs), 2)
            body += b"".join(secs)
            offset += sum(len(s) for s in secs)
        else:
            triplets += bytes(8)
    header = (bytes([0x5E, rty]) + u(4_140_000, 4) + packed("0118193", "F") + system.ljust(4).encode("cp037")
              + "RMF ".encode("cp037") + u(sty, 2) + u(5, 2) + bytes(2) + u(68, 4) + u(len(product), 2) + u(1, 2)
              + triplets)
    record = header + bytes(product) + body
    return u(len(record) + 4, 2) + bytes(2) + record


def other_record(rty: int, sty: int = 0, size: int = 40) -> bytes:
    rec = bytes([0x5E, rty]) + u(4_140_000, 4) + packed("0118193") + "S21 ".encode("cp037") + b"XXXX" + u(sty, 2)
    rec = (rec + bytes(size))[:size - 4]
    return u(len(rec) + 4, 2) + bytes(2) + rec


def spanned(record: bytes, segment: int) -> bytes:
    """A record (RDW included) as VBS segments of at most ``segment`` bytes, each with its own descriptor."""
    body = record[4:]
    chunks = [body[i:i + segment - 4] for i in range(0, len(body), segment - 4)]
    if len(chunks) == 1:
        return record
    out = b""
    for i, chunk in enumerate(chunks):
        code = 1 if i == 0 else 2 if i == len(chunks) - 1 else 3
        out += u(len(chunk) + 4, 2) + bytes([code, 0]) + chunk
    return out


# ---------------------------------------------------------------------------------------------
# HFP


@pytest.mark.parametrize("word, value", [
    ("41100000", 1.0), ("C1100000", -1.0), ("42640000", 100.0), ("00000000", 0.0), ("80000000", 0.0),
    ("C276A000", -118.625), ("40800000", 0.5), ("3F100000", 1 / 16 ** 2), ("4110000000000000", 1.0),
    ("4519D4C000000000", 1692864.0 / 16), ("7FFFFFFE", (0xFFFFFE / 16 ** 6) * 16.0 ** 63),
])
def test_hfp_values_are_exact(word, value):
    raw = bytes.fromhex(word)
    assert hfp_to_float(raw, 0, len(raw)) == value


def test_hfp_reads_at_an_offset_and_round_trips_every_double():
    raw = b"\x00\x00" + bytes.fromhex("42640000")
    assert hfp_to_float(raw, 2, 4) == 100.0
    rng = np.random.default_rng(44)
    values = [1 / 3, math.pi, 1e-70, 7e75, 2.0 ** -200, 4380.0 * 1800.009, -0.1, 2 ** 53 - 1.0]
    values += list(rng.uniform(-1e6, 1e6, 200)) + list(10.0 ** rng.uniform(-60, 60, 200))
    for v in values:
        assert hfp_to_float(float_to_hfp(v)) == v, v


@pytest.mark.parametrize("word, why", [
    ("7FFFFFFF", "all-ones"), ("FFFFFFFF", "all-ones"), ("7FFFFFFFFFFFFFFF", "all-ones"),
    ("FFFFFFFFFFFFFFFF", "all-ones"), ("41010000", "unnormalized"), ("41000000", "zero fraction"),
])
def test_hfp_nan_like_and_unnormalized_patterns_are_refused_naming_the_offset(word, why):
    raw = bytes(5) + bytes.fromhex(word)
    with pytest.raises(HfpError, match=rf"byte offset 5: .*{why}") as exc:
        hfp_to_float(raw, 5, len(raw) - 5)
    assert exc.value.offset == 5
    with pytest.raises(HfpError, match="byte offset 3: .*past the end"):
        hfp_to_float(bytes(6), 3)


# ---------------------------------------------------------------------------------------------
# the 2018 excerpt: printed numbers (copied from the report's lines) -> counts and times -> back

# (rate, exec ms, util %) as printed, LPAR then CPC
CCA_2018 = [
    ("CEX5C", 0, ("0.00", "0.000", "0.0"), ("0.00", "0.000", "0.0"), "0.00", "0.00"),
    ("CEX5C", 1, ("2185", "0.201", "43.9"), ("4987", "0.200", "99.8"), "0.83", "0.83"),
    ("CEX6C", 5, ("4380", "0.091", "40.0"), ("9121", "0.109", "99.5"), "3.89", "3.89"),
    ("CEX6C", 6, ("4435", "0.091", "40.2"), ("9236", "0.108", "99.5"), "3.89", "3.89"),
    ("CEX6C", 7, ("4446", "0.090", "39.9"), ("9262", "0.107", "99.5"), "3.82", "3.82"),
    ("CEX6C", 8, ("4462", "0.090", "40.1"), ("9290", "0.107", "99.5"), "3.76", "3.76"),
]
ZERO = ("0.00", "0.000", "0.0")
PKCS11_2018 = ("CEX5P", 3, ("461.5", "1.005", "46.4"), ("1005", "0.994", "99.9"), {
    "ASYM FAST": (("255.7", "0.949", "24.3"), ("472.7", "1.007", "47.6")),
    "ASYM GEN": (ZERO, ("0.40", "2.113", "0.1")),
    "ASYM SLOW": (("188.2", "1.080", "20.3"), ("493.7", "1.012", "50.0")),
    "SYMM COMPLETE": (("17.57", "1.019", "1.8"), ("38.61", "0.603", "2.3")),
    "SYMM PARTIAL": (ZERO, ZERO)})
ACCEL_2018 = ("CEX5A", 2, ("1960", "0.395", "77.5"), ("4930", "0.202", "99.8"), {
    ("RSA ME", 1024): (("385.0", "0.009", "0.3"), ("722.5", "0.059", "4.3")),
    ("RSA ME", 2048): (("128.0", "0.036", "0.5"), ("1624", "0.036", "5.9")),
    ("RSA ME", 4096): (("764.6", "0.121", "9.2"), ("1292", "0.121", "15.6")),
    ("RSA CRT", 1024): (ZERO, ("562.6", "0.080", "4.5")),
    ("RSA CRT", 2048): (("88.66", "0.417", "3.7"), ("136.1", "0.421", "5.7")),
    ("RSA CRT", 4096): (("593.3", "1.075", "63.8"), ("593.3", "1.075", "63.8"))})
CODES = {"CEX5C": 11, "CEX6C": 12, "CEX5P": 11, "CEX5A": 11}


def _half(text: str) -> float:
    """Half a unit of the last printed digit."""
    return 0.5 * 10.0 ** -len(text.partition(".")[2])


def solve(rows, summary=None, interval=INTERVAL_2018, engines=1):
    """Integer counts N_i and busy seconds B_i whose RATE, EXEC TIME and UTIL% (IBM's formulas) print as
    ``rows`` and whose sums print as ``summary``: a linear program maximizing the smallest margin t to the
    rounding limits (EXEC TIME's band, (e - h) N <= 1000 B <= (e + h) N, gets its margin at the printed rate)."""
    k = len(rows)
    a_ub, b_ub = [], []

    def band(coef, value, half, margin):
        # value - half + t*margin <= coef.x <= value + half - t*margin
        a_ub.append(np.append(-coef, margin))
        b_ub.append(half - value)
        a_ub.append(np.append(coef, margin))
        b_ub.append(value + half)

    def add(select, printed):
        r, e, uu = (float(x) for x in printed)
        hr, he, hu = (_half(x) for x in printed)
        zero = np.zeros(k)
        band(np.concatenate([select / interval, zero]), r, hr, hr)
        band(np.concatenate([zero, select * 100 / (interval * engines)]), uu, hu, hu)
        if r > 0:
            nref = r * interval
            a_ub.append(np.concatenate([(e - he) * select, -1000 * select, [he * nref]]))
            a_ub.append(np.concatenate([-(e + he) * select, 1000 * select, [he * nref]]))
            b_ub.extend([0.0, 0.0])

    zero_rows = [all(float(x) == 0 for x in printed) for printed in rows]
    for i, printed in enumerate(rows):
        add(np.eye(k)[i], printed)
    if summary is not None:
        add(np.ones(k), summary)
    bounds = [(0, 0) if z else (0, None) for z in zero_rows] * 2 + [(None, 1)]
    res = linprog(np.append(np.zeros(2 * k), -1.0), A_ub=np.array(a_ub), b_ub=np.array(b_ub), bounds=bounds,
                  method="highs")
    assert res.status == 0 and res.x[-1] > 0, (rows, summary, res.message)
    return [(float(round(res.x[i])), float(res.x[k + i])) for i in range(k)]


def _check_printed(pairs, rows, summary, interval=INTERVAL_2018, engines=1):
    """The builder's own check: the chosen numbers print as the report does."""
    def fmt(n, b, printed):
        r, e, uu = printed
        got = (n / interval, b / n * 1000 if n else 0.0, b * 100 / (interval * engines))
        return all(abs(g - float(p)) <= _half(p) for g, p in zip(got, printed))
    assert all(fmt(n, b, p) for (n, b), p in zip(pairs, rows))
    if summary:
        assert fmt(sum(n for n, _ in pairs), sum(b for _, b in pairs), summary)


def records_2018() -> bytes:
    """The 2018 excerpt as one SMF 70-2 record: every card in LPAR (system) and CPC scope."""
    sf_cca, sf_pkcs, sf_accel = 2.0 ** -20, 1e-6, 1 / 4096e3
    cca = []
    for ctype, ax, lpar, cpc, kg_l, kg_c in CCA_2018:
        for scope, printed, kg in ((1, lpar, kg_l), (0, cpc, kg_c)):
            (n, b), = solve([printed])
            _check_printed([(n, b)], [printed], None)
            keygen = round(float(kg) * INTERVAL_2018)
            cca.append(cca_section(ax, CODES[ctype], scope, sf_cca, b / sf_cca, n, keygen))
    ctype, ax, s_l, s_c, funcs = PKCS11_2018
    pk = []
    for scope, summary, j in ((1, s_l, 0), (0, s_c, 1)):
        rows = [v[j] for v in funcs.values()]
        pairs = solve(rows, summary)
        _check_printed(pairs, rows, summary)
        pk.append(pkcs11_section(ax, CODES[ctype], scope, sf_pkcs,
                                 {f: (b / sf_pkcs, n) for f, (n, b) in zip(funcs, pairs)}))
    ctype, ax, s_l, s_c, funcs = ACCEL_2018
    acc = []
    for scope, summary, j in ((1, s_l, 0), (0, s_c, 1)):
        rows = [v[j] for v in funcs.values()]
        pairs = dict(zip(funcs, solve(rows, summary)))
        _check_printed(list(pairs.values()), rows, summary)
        block = {}
        for (fn, key), (n, b) in pairs.items():
            if key != 4096:
                tag = f"{key // 1024}{'me' if fn == 'RSA ME' else 'cr'}"
                block[f"{tag}t"], block[f"{tag}c"] = b / sf_accel, n
        (me4n, me4b), (crt4n, crt4b) = pairs[("RSA ME", 4096)], pairs[("RSA CRT", 4096)]
        acc.append(accel_section(ax, CODES[ctype], scope, sf_accel, 1, [block], me4=(me4b / sf_accel, me4n),
                                 crt4=(crt4b / sf_accel, crt4n)))
    return build_smf70(cca=cca, pkcs11=pk, accel=acc)


def printed_2018() -> dict:
    """(section, type, id, scope, function, key) -> (rate, exec, util) strings as printed (None: not printed)."""
    out = {}
    for ctype, ax, lpar, cpc, kg_l, kg_c in CCA_2018:
        for scope, printed, kg in (("LPAR", lpar, kg_l), ("CPC", cpc, kg_c)):
            out[("CCA", ctype, ax, scope, None, None)] = printed
            out[("CCA", ctype, ax, scope, "KEY-GEN", None)] = (kg, None, None)
    for section, (ctype, ax, s_l, s_c, funcs) in (("PKCS11", PKCS11_2018), ("ACCELERATOR", ACCEL_2018)):
        for scope, summary, j in (("LPAR", s_l, 0), ("CPC", s_c, 1)):
            out[(section, ctype, ax, scope, None, None)] = summary
            for f, v in funcs.items():
                fn, key = f if isinstance(f, tuple) else (f, None)
                out[(section, ctype, ax, scope, fn, key)] = v[j]
    return out


def _key(r):
    return (r.section, r.card_type, r.card_id, r.scope, r.function, r.key_size)


def test_the_2018_excerpt_comes_back_at_its_printed_precision():
    records, warnings = read_smf70(records_2018(), source="2018.smf")
    assert warnings == []
    expected = printed_2018()
    got = {_key(r): r for r in records}
    assert len(got) == len(records) == len(expected)
    assert set(got) == set(expected)
    for key, printed in expected.items():
        r = got[key]
        assert (r.system, r.date, r.time, r.interval_s) == ("S21", "2018-07-12", "11:00:00", INTERVAL_2018)
        for name, text in zip(("rate", "exec_ms", "util_pct"), printed):
            value = getattr(r, name)
            if text is None:
                assert value is None, (key, name)
            else:
                assert abs(value - float(text)) <= _half(text) + 1e-12, (key, name, value, text)
    # e.g. CEX6C 5 as the issue quotes it
    assert abs(got[("CCA", "CEX6C", 5, "LPAR", None, None)].rate - 4380) <= 0.5
    assert abs(got[("CCA", "CEX6C", 5, "CPC", None, None)].util_pct - 99.5) <= 0.05


def test_the_2018_excerpt_reads_into_the_same_table_as_the_text_reader():
    text, tw = read_rmf_report(F2018)
    smf, sw = read_smf70(records_2018())
    assert not tw and not sw
    printed = printed_2018()
    # the transcription above is the text reader's table, number for number
    assert {_key(r): (r.rate, r.exec_ms, r.util_pct) for r in text} == {
        k: tuple(None if t is None else float(t) for t in v) for k, v in printed.items()}
    # and the SMF records are that table: same keys, in the same order, numbers to the printed precision
    assert [_key(r) for r in smf] == [_key(r) for r in text]
    for a, b in zip(smf, text):
        assert (a.system, a.date, a.time, a.interval_s) == (b.system, b.date, b.time, b.interval_s)
        for name, t in zip(("rate", "exec_ms", "util_pct"), printed[_key(b)]):
            va, vb = getattr(a, name), getattr(b, name)
            assert (va is None) == (vb is None)
            if t is not None:
                assert abs(va - vb) <= _half(t) + 1e-12, (_key(a), name, va, vb)
        assert a.source.startswith("<bytes>@")


# ---------------------------------------------------------------------------------------------
# the formulas on hand-made numbers


def test_ibm_formulas_on_one_card_of_each_kind():
    # CCA: 7,884,000 operations busy 720 s in 1800.009 s
    cca = cca_section(5, 12, 1, 2.0 ** -20, 720 * 2 ** 20, 7_884_000, 7000)
    # accelerator with 2 engines: 1024-bit ME counted on both engines' blocks, utilization over both
    blocks = [{"1met": 300, "1mec": 1000}, {"1met": 100, "1mec": 3000}]
    acc = accel_section(2, 11, 0, 0.5, 2, blocks, me4=(40, 10))
    pk = pkcs11_section(3, 11, 1, 0.25, {"ASYM FAST": (400, 100), "SYMM COMPLETE": (40, 50)})
    recs, warnings = read_smf70(build_smf70(cca=[cca], accel=[acc], pkcs11=[pk]))
    assert not warnings
    got = {_key(r): r for r in recs}
    iv = INTERVAL_2018
    c = got[("CCA", "CEX6C", 5, "LPAR", None, None)]
    assert (c.rate, c.exec_ms, c.util_pct) == pytest.approx((7_884_000 / iv, 720 / 7_884_000 * 1000, 72000 / iv))
    assert got[("CCA", "CEX6C", 5, "LPAR", "KEY-GEN", None)].rate == pytest.approx(7000 / iv)
    assert got[("CCA", "CEX6C", 5, "LPAR", "KEY-GEN", None)].exec_ms is None
    me = got[("ACCELERATOR", "CEX5A", 2, "CPC", "RSA ME", 1024)]
    assert (me.rate, me.exec_ms, me.util_pct) == pytest.approx((4000 / iv, 200 / 4000 * 1000, 200 * 100 / (iv * 2)))
    total = got[("ACCELERATOR", "CEX5A", 2, "CPC", None, None)]
    assert (total.rate, total.util_pct) == pytest.approx((4010 / iv, 220 * 100 / (iv * 2)))
    idle = got[("ACCELERATOR", "CEX5A", 2, "CPC", "RSA CRT", 2048)]
    assert (idle.rate, idle.exec_ms, idle.util_pct) == (0.0, 0.0, 0.0)
    p = got[("PKCS11", "CEX5P", 3, "LPAR", None, None)]
    assert (p.rate, p.exec_ms, p.util_pct) == pytest.approx((150 / iv, 110 / 150 * 1000, 110 * 100 / iv))


def test_old_layout_is_total_and_a_cpc_only_card_is_cpc():
    old = cca_section(1, 11, 0, 1.0, 10, 20, 0, with_scope=False)
    recs, _ = read_smf70(build_smf70(cca=[old]))
    assert {r.scope for r in recs} == {"TOTAL"} and len(recs) == 2
    acc = accel_section(2, 13, 0, 1.0, 1, [{"1met": 1, "1mec": 2}])
    recs, _ = read_smf70(build_smf70(accel=[acc]))
    assert {r.scope for r in recs} == {"CPC"} and {r.card_type for r in recs} == {"CEX7A"}


# ---------------------------------------------------------------------------------------------
# the stream


def test_rdw_stream_and_vbs_spanned_segments_read_the_same():
    one = records_2018()
    plain = read_smf70(one + other_record(30) + one)
    for size in (64, 200, 1000):
        stream = spanned(one, size) + other_record(30) + spanned(one, size)
        recs, warnings = read_smf70(stream)
        assert [(_key(r), r.rate, r.exec_ms, r.util_pct) for r in recs] == [
            (_key(r), r.rate, r.exec_ms, r.util_pct) for r in plain[0]]
        assert warnings == plain[1] and "skipped 1 records" in warnings[0]
        # each record's source is the file byte where its section begins, across segments too
        for r in recs:
            at = int(r.source.rpartition("@")[2])
            assert stream[at + 1] in (11, 12) and stream[at] == r.card_id


def test_a_copy_without_rdws_or_with_block_descriptors_is_refused_saying_how_to_transfer():
    one = records_2018()
    with pytest.raises(Smf70Error, match=r"@0: .*not a record descriptor word.*quote site rdw"):
        read_smf70(one[4:])
    blocked = u(len(one) * 2 + 4, 2) + bytes(2) + one + one
    with pytest.raises(Smf70Error, match=r"block descriptor word.*quote site rdw"):
        read_smf70(blocked)


def test_truncated_records_and_broken_segments_name_the_byte_offset():
    one = records_2018()
    stream = one + one
    with pytest.raises(Smf70Error, match=rf"<bytes>@{len(one)}: truncated record: .*{len(one)} bytes, "
                                         rf"{len(one) - 10} are left"):
        read_smf70(stream[:-10])
    seg = spanned(one, 300)
    starts, pos = [], 0
    while pos < len(seg):
        starts.append(pos)
        pos += int.from_bytes(seg[pos:pos + 2], "big")
    assert seg[starts[-1] + 2] == 2 and len(starts) > 3
    with pytest.raises(Smf70Error, match=r"@0: truncated: the spanned record begun here has no last segment"):
        read_smf70(seg[:starts[-1]])
    with pytest.raises(Smf70Error, match=rf"@{starts[2]}: a new record begins while the spanned record begun at "
                                         r"byte 0 has had no last segment"):
        read_smf70(seg[:starts[2]] + one)
    with pytest.raises(Smf70Error, match=r"@0: a middle segment .* without its first segment"):
        read_smf70(u(10, 2) + bytes([3, 0]) + bytes(6))
    with pytest.raises(Smf70Error, match=r"truncated SMF record: 20 bytes"):
        read_smf70(u(20, 2) + bytes(2) + bytes([0x5E, 70]) + bytes(14))
    short = bytearray(one)
    short[0:2] = u(60, 2)                       # a 70-2 record cut inside its triplets
    with pytest.raises(Smf70Error, match=r"@0: truncated SMF record: 60 bytes"):
        read_smf70(bytes(short[:60]))


def test_zero_padding_after_the_last_record_is_a_warning():
    recs, warnings = read_smf70(records_2018() + bytes(100))
    assert recs and any("100 bytes of zeros" in w for w in warnings)


def test_a_file_with_no_type_70_subtype_2_record_is_an_error_naming_it(tmp_path):
    path = tmp_path / "dump.bin"
    path.write_bytes(other_record(30) + other_record(70, 1) + other_record(2, size=20))
    with pytest.raises(Smf70Error, match=rf"{path.name}: no SMF type 70 subtype 2 record in it "
                                         r"\(type 2 x1, type 30 x1, type 70 subtype 1 x1\)"):
        read_smf70(path)


# ---------------------------------------------------------------------------------------------
# bad fields


def test_a_section_count_beyond_the_record_names_the_triplet_and_its_offset():
    one = bytearray(records_2018())
    stream = bytes(other_record(30)) + bytes(one)
    pos = len(other_record(30))
    one[42:44] = u(500, 2)                       # SMF7023N: 500 CCA sections
    with pytest.raises(Smf70Error, match=rf"x@{pos + 36}: triplet SMF7023S \(record offset 36\): 500 section\(s\) "
                                         r"of 52 bytes .* beyond the"):
        read_smf70(stream[:pos] + bytes(one), source="x")


def test_an_hfp_nan_like_pattern_is_an_error_naming_its_byte():
    one = bytearray(records_2018())
    cca0 = int.from_bytes(one[36:40], "big")
    one[cca0 + 16:cca0 + 24] = bytes.fromhex("7FFFFFFFFFFFFFFF")     # the first CCA section's R7023T0
    pos = len(other_record(30))                 # the file byte is the record's plus the field's offset in it
    with pytest.raises(Smf70Error, match=rf"<bytes>@{pos + cca0 + 16}: R7023T0/R7023C0 \(all operations\) "
                                         rf"execution time at record offset {cca0 + 16}: X'7FFFFFFFFFFFFFFF' is "
                                         "the all-ones"):
        read_smf70(other_record(30) + bytes(one))


def test_bad_packed_decimal_negative_counts_and_engines_are_errors_with_offsets():
    one = bytearray(records_2018())
    one[68 + 18:68 + 22] = bytes.fromhex("3000A09F")
    with pytest.raises(Smf70Error, match=rf"@{68 + 18}: SMF70INT .* not packed decimal"):
        read_smf70(bytes(one))
    neg = cca_section(1, 11, 1, 1.0, 10, -5, 0)
    with pytest.raises(Smf70Error, match=r"count -5.0 is negative"):
        read_smf70(build_smf70(cca=[neg]))
    bad = accel_section(2, 11, 1, 1.0, 0, [])
    with pytest.raises(Smf70Error, match=r"R7024EN 0 engines"):
        read_smf70(build_smf70(accel=[bad]))


# ---------------------------------------------------------------------------------------------
# a newer RMF


def test_an_unknown_card_type_is_read_with_a_warning_naming_it():
    cca = [cca_section(9, 15, 1, 1.0, 10, 20, 1), cca_section(4, 2, 1, 1.0, 10, 20, 1)]
    recs, warnings = read_smf70(build_smf70(cca=cca))
    assert {r.card_type for r in recs} == {"CEX9C", "UNKNOWN(2)"}
    assert any("CEX9C" in w and "type code 15" in w for w in warnings)
    assert any("UNKNOWN(2)" in w for w in warnings)
    assert card_type_name("PKCS11", 16) == ("CEX10P", False)
    assert card_type_name("ACCELERATOR", 13) == ("CEX7A", True)


def test_longer_sections_and_more_triplets_of_a_newer_rmf_are_read_with_warnings():
    long_cca = cca_section(1, 12, 1, 1.0, 10, 20, 1) + bytes(16)
    recs, warnings = read_smf70(build_smf70(cca=[long_cca]))
    assert len(recs) == 2 and any("68 bytes, this reader knows 52" in w for w in warnings)
    more = bytearray(build_smf70(cca=[cca_section(1, 12, 1, 1.0, 10, 20, 1)]))
    more[24:26] = u(6, 2)                       # SMF70TRN: a sixth triplet this reader does not know
    recs, warnings = read_smf70(bytes(more))
    assert len(recs) == 2 and any("6 triplets; this reader knows 5" in w for w in warnings)


def test_an_invalid_timer_counter_pair_is_not_printed():
    recs, warnings = read_smf70(build_smf70(cca=[cca_section(1, 12, 1, 1.0, 10, 20, 1, msk=0x80)]))
    kg = [r for r in recs if r.function == "KEY-GEN"][0]
    assert kg.rate is None and any("RSA key generation invalid" in w for w in warnings)


# ---------------------------------------------------------------------------------------------
# reading writes nothing


def test_reading_writes_nothing_on_success_or_failure(tmp_path, monkeypatch):
    good, bad = tmp_path / "good.smf", tmp_path / "bad.smf"
    good.write_bytes(records_2018())
    bad.write_bytes(records_2018()[:-7])
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    real_open, real_os_open = builtins.open, os.open

    def no_write_open(file, mode="r", *a, **k):
        assert not set(mode) & set("wax+"), (file, mode)
        return real_open(file, mode, *a, **k)

    def no_write_os_open(path, flags, *a, **k):
        assert not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND), path
        return real_os_open(path, flags, *a, **k)

    monkeypatch.setattr(builtins, "open", no_write_open)
    monkeypatch.setattr(os, "open", no_write_os_open)
    recs, _ = read_smf70(good)
    assert recs and recs[0].source.startswith(str(good) + "@")
    with pytest.raises(Smf70Error, match="truncated"):
        read_smf70(bad)
    with pytest.raises(Smf70Error, match="not a regular file"):
        read_smf70(tmp_path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_rmf_command_reads_smf_records_as_it_reads_the_report(tmp_path):
    # `cryptoplan rmf --smf` on records built from the 2018 excerpt gives the cards, and the other
    # LPARs' share, the text reader gives for the printed report
    import json

    from click.testing import CliRunner

    from cryptoplan.cli import main
    (tmp_path / "smf.bin").write_bytes(records_2018())
    smf = CliRunner().invoke(main, ["rmf", "--smf", str(tmp_path / "smf.bin"), "--json"], catch_exceptions=False)
    txt = CliRunner().invoke(main, ["rmf", str(Path(__file__).resolve().parent / "data" / "rmf-reports"
                                              / "z14-cex5-cex6-lpar-cpc-2018.txt"), "--json"])
    assert smf.exit_code == 0 and txt.exit_code == 0, smf.output
    a, b = json.loads(smf.output)["cards"], json.loads(txt.output)["cards"]
    assert [(c["card_type"], c["card_id"]) for c in a] == [(c["card_type"], c["card_id"]) for c in b]
    for x, y in zip(a, b):
        assert x["other_lpars_util_pct"] == pytest.approx(y["other_lpars_util_pct"], abs=0.1)
    bad = CliRunner().invoke(main, ["rmf", "--smf", str(tmp_path / "nothing.bin")])
    assert bad.exit_code == 2 and "nothing.bin" in bad.output
