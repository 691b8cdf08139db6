"""RMF's CRYPTO HARDWARE ACTIVITY report read as printed (model/site/rmf_report.py, rmf_cards.py,
``cryptoplan rmf``).

Expected values come from the three real report excerpts in tests/data/rmf-reports/ (IBM's public
RMF decks, see their README): the numbers below are copied from the printed lines they name, and
RMF's own identity RATE x EXEC TIME = UTIL% (ms per second over 10) is checked on every record to
the printed precision, an independent check of which column each number was read from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cryptoplan.cli import main
from cryptoplan.model.site.rmf_cards import card_lines, peak_intervals
from cryptoplan.model.site.rmf_report import RmfReportError, parse_rmf_report, read_rmf_report

DATA = Path(__file__).resolve().parent / "data" / "rmf-reports"
FILES = sorted(DATA.glob("*.txt"))
F2017, F2018, F2019 = (DATA / n for n in ("z14-cex5-cex6-2017.txt", "z14-cex5-cex6-lpar-cpc-2018.txt",
                                          "z15-cex7-lpar-cpc-2019.txt"))


def _find(records, card_type, card_id, scope, function=None, key=None):
    hits = [r for r in records if (r.card_type, r.card_id, r.scope, r.function, r.key_size)
            == (card_type, card_id, scope, function, key)]
    assert len(hits) == 1, (card_type, card_id, scope, function, key, hits)
    return hits[0]


def test_the_three_excerpts_read_every_card_line_as_printed():
    r17, w17 = read_rmf_report(F2017)
    r18, w18 = read_rmf_report(F2018)
    r19, w19 = read_rmf_report(F2019)
    assert not (w17 or w18 or w19)
    # (file line) TYPE ID RATE EXEC TIME UTIL% as printed
    cases = [(r17, "CEX5C", 0, "TOTAL", None, None, 1882, 0.206, 38.8),        # 2017 line 8
             (r17, "CEX6C", 7, "TOTAL", None, None, 3504, 0.110, 38.7),        # line 12
             (r17, "CEX6P", 8, "TOTAL", "SYMM PARTIAL", None, 62.41, 0.571, 3.6),
             (r17, "CEX6A", 4, "TOTAL", None, None, 13504, 0.029, 38.7),       # line 31
             (r17, "CEX6A", 4, "TOTAL", "RSA ME", 4096, 6072, 0.042, 25.2),     # line 33
             (r17, "CEX6A", 4, "TOTAL", "RSA CRT", 1024, 1439, 0.034, 4.9),     # line 31
             (r18, "CEX6C", 5, "LPAR", None, None, 4380, 0.091, 40.0),         # 2018 line 10
             (r18, "CEX6C", 5, "CPC", None, None, 9121, 0.109, 99.5),
             (r18, "CEX5P", 3, "CPC", "ASYM SLOW", None, 493.7, 1.012, 50.0),
             (r18, "CEX5A", 2, "LPAR", "RSA CRT", 4096, 593.3, 1.075, 63.8),
             (r19, "CEX7A", 2, "CPC", None, None, 15043, 0.066, 99.7),         # 2019: CPC columns only
             (r19, "CEX7A", 2, "CPC", "RSA CRT", 2048, 246.2, 0.207, 5.1)]
    for recs, t, i, scope, fn, key, rate, ex, util in cases:
        r = _find(recs, t, i, scope, fn, key)
        assert (r.rate, r.exec_ms, r.util_pct) == (rate, ex, util)
    assert not [r for r in r19 if r.card_type == "CEX7A" and r.scope == "LPAR"]     # blank: not printed
    k = _find(r18, "CEX6C", 5, "LPAR", "KEY-GEN")
    assert k.rate == 3.89 and k.exec_ms is None
    # every card row of the three files: 5 + 2 + 1 (2017), 6 + 1 + 1 (2018), 2 + 1 + 1 (2019)
    assert [len(card_lines(r)) for r in (r17, r18, r19)] == [8, 8, 4]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_rate_times_exec_time_is_utilization_on_every_record(path):
    # RMF's identity: UTIL% = RATE/s x EXEC TIME ms / 10, each rounded as printed: the rate to its
    # last printed digit (4 significant), the time to 0.0005 ms, the utilization to 0.05
    recs, _ = read_rmf_report(path)
    checked = 0
    for r in recs:
        if None in (r.rate, r.exec_ms, r.util_pct):
            continue
        slack = r.rate * 0.0005 / 10 + r.exec_ms * max(r.rate * 5e-4, 0.005) / 10 + 0.05
        assert abs(r.rate * r.exec_ms / 10 - r.util_pct) <= slack + 1e-9, r
        checked += 1
    assert checked >= 10


def test_the_header_gives_system_date_time_and_interval():
    r = read_rmf_report(F2018)[0][0]
    assert (r.system, r.date, r.time) == ("S21", "2018-07-12", "11:00:00")
    assert r.interval_s == pytest.approx(1800.009)
    assert read_rmf_report(F2017)[0][0].interval_s == pytest.approx(29 * 60 + 59.848)


def test_asa_carriage_control_and_page_ejects_read_the_same():
    text = F2018.read_text(encoding="utf-8").splitlines()
    # as a SYSOUT data set with ASA control: '1' ejects a page before the title, ' ' is one line
    asa = ["1" + text[0]] + [" " + line for line in text[1:]]
    both = "\n".join(asa) + "\n\f" + "\n".join(["1" + F2019.read_text().splitlines()[0]]
                                                + [" " + x for x in F2019.read_text().splitlines()[1:]])
    recs, _ = parse_rmf_report(both.encode(), "sysout.txt")
    plain = read_rmf_report(F2018)[0] + read_rmf_report(F2019)[0]
    strip = [(r.system, r.interval, r.scope, r.card_type, r.card_id, r.function, r.key_size, r.rate, r.exec_ms,
              r.util_pct) for r in recs]
    assert strip == [(r.system, r.interval, r.scope, r.card_type, r.card_id, r.function, r.key_size, r.rate,
                      r.exec_ms, r.util_pct) for r in plain]


def test_several_intervals_in_one_file_and_the_peak_interval():
    one = F2018.read_text(encoding="utf-8")
    later = one.replace("TIME 11.00.00", "TIME 11.30.00").replace("4380    0.091    40.0", "4818    0.091    44.0")
    recs, _ = parse_rmf_report((one + "\n" + later).encode(), "two.txt")
    lines = card_lines(recs)
    assert len(lines) == 16
    peak = peak_intervals(lines)
    assert peak["CEX6C"]["interval"] == "2018-07-12 11:30:00"
    assert peak["CEX6C"]["util_pct"] == pytest.approx((44.0 + 40.2 + 39.9 + 40.1) / 4)


def test_other_lpars_share_is_cpc_minus_lpar():
    lines = {(ln.card_type, ln.card_id): ln for ln in card_lines(read_rmf_report(F2018)[0])}
    assert lines[("CEX6C", 5)].other_lpars_util_pct == pytest.approx(99.5 - 40.0)
    assert lines[("CEX5A", 2)].other_lpars_util_pct == pytest.approx(99.8 - 77.5)
    assert card_lines(read_rmf_report(F2017)[0])[0].other_lpars_util_pct is None


def test_a_newer_card_type_and_function_are_read_with_a_warning():
    text = F2018.read_text(encoding="utf-8").replace("CEX6C   5", "CEX9C   5").replace("ASYM GEN ", "ML-DSA   ")
    recs, warnings = parse_rmf_report(text.encode(), "new.txt")
    assert any("CEX9C" in w and "new.txt:10" in w for w in warnings)
    assert any("'ML-DSA'" in w for w in warnings)
    assert _find(recs, "CEX9C", 5, "LPAR").util_pct == 40.0


@pytest.mark.parametrize("change,words", [
    (lambda t: t.replace("4380    0.091", "4380    0.0x1"), r"new.txt:10: '0.0x1' is not a number"),
    (lambda t: t.replace("CEX6C   5", "XYZ6C   5"), r"new.txt:10: 'XYZ6C' in the TYPE column is not a Crypto Express"),
    (lambda t: t.replace("SYSTEM ID S21", "SYSTEM    S21"), r"the report's header lacks SYSTEM ID"),
    (lambda t: t.replace("C R Y P T O   H A R D W A R E   A C T I V I T Y", "C P U   A C T I V I T Y"),
     r"new.txt:5: a section before the report's title"),
    (lambda t: "C P U   A C T I V I T Y\nnothing of crypto\n", "no 'C R Y P T O   H A R D W A R E   A C T I V I T Y' "
     "report in it"),
    (lambda t: t + "\nSOMETHING ELSE ENTIRELY\n", r"new.txt:\d+: 'SOMETHING ELSE ENTIRELY' is neither"),
])
def test_what_cannot_be_read_is_named_with_its_line(change, words):
    with pytest.raises(RmfReportError, match=words):
        parse_rmf_report(change(F2018.read_text(encoding="utf-8")).encode(), "new.txt")


def test_the_command_prints_cards_other_lpars_and_peaks(tmp_path):
    res = CliRunner().invoke(main, ["rmf", *map(str, FILES), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    cards = {(c["system"], c["card_type"], c["card_id"]): c for c in doc["cards"]}
    assert cards[("S21", "CEX6C", 5)]["other_lpars_util_pct"] == pytest.approx(59.5)
    assert cards[("S21", "CEX6C", 5)]["lpar"] == {"rate": 4380.0, "exec_ms": 0.091, "util_pct": 40.0}
    assert len(doc["cards"]) == 20 and doc["peak"]["CEX5A"]["util_pct"] == 77.5
    text = CliRunner().invoke(main, ["rmf", str(F2018)]).output
    assert "CEX6C    5  coprocessor LPAR      4,380    0.091   40.0        59.5" in text
    bad = tmp_path / "x.txt"
    bad.write_text("hello\n")
    res = CliRunner().invoke(main, ["rmf", str(bad)])
    assert res.exit_code == 2 and "x.txt: no 'C R Y P T O" in res.output


def test_the_calibration_page_rmf_commands_run(tmp_path):
    # docs/calibration.md's `cryptoplan rmf` block, run as printed on the 2018 excerpt and on SMF
    # records built from it (tests/test_smf70.py)
    from _docs import command_lines, doc_block
    from test_smf70 import records_2018
    (tmp_path / "crypto-report.txt").write_bytes(F2018.read_bytes())
    (tmp_path / "smf70.bin").write_bytes(records_2018())
    commands = command_lines(doc_block("calibration.md", "## Read RMF's own report"))
    assert len(commands) == 2
    for args in commands:
        args = [str(tmp_path / a) if (tmp_path / a).exists() else a for a in args]
        res = CliRunner().invoke(main, args, catch_exceptions=False)
        assert res.exit_code == 0 and "CEX6C" in res.output, (args, res.output)


def test_the_peak_list_has_every_card_type_the_cpc_only_one_too():
    """Issue 61: the 2019 excerpt's CEX7A prints CPC columns only (99.7%); it was left out of
    `cryptoplan rmf`'s peak list.  Now listed, CPC-wide, and said so."""
    peak = peak_intervals(card_lines(read_rmf_report(F2019)[0]))
    assert set(peak) == {"CEX7C", "CEX7P", "CEX7A"}
    assert peak["CEX7A"]["scope"] == "CPC" and peak["CEX7A"]["util_pct"] == pytest.approx(99.7)
    assert peak["CEX7C"]["scope"] == "LPAR" and peak["CEX7C"]["util_pct"] == pytest.approx((0.0 + 41.7) / 2)
    from click.testing import CliRunner
    from cryptoplan.cli import main
    res = CliRunner().invoke(main, ["rmf", str(F2019)])
    assert res.exit_code == 0 and "CEX7A: 2019-08-11 22:45:00 (CB89), 99.7% CPC-wide (no LPAR columns)" in res.output
