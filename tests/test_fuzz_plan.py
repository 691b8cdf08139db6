"""Fuzz plan files (issue 43): every TOML plan ends in a printed plan or one clear message.

The plan documents drawn here start from a valid plan (the README's worked example: a profile,
a storm, failover and a timeline) and change a few of its values to what a careless user or an
attacker types: numbers at the edges, text where a number goes, lists, tables, dates, booleans,
control and invisible characters, huge strings, unknown keys, profiles of the wrong length.
Each document is written as TOML and run through ``cryptoplan plan`` (text and ``--json``), and
checked:

* the exit code is a documented one: 0 (a plan) or 2 (a bad plan file: the message names the
  file);
* nothing escapes as an exception (CliRunner runs in this process with ``catch_exceptions=False``),
  nothing says "internal error" or "Traceback";
* a printed plan holds no ``nan``/``inf`` and no raw control character, and its JSON parses with
  every number finite.

The fast tier runs ``CRYPTOPLAN_FUZZ_EXAMPLES`` (25) drawn documents; the slow tier 400.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cryptoplan.cli import main

EXAMPLES = int(os.environ.get("CRYPTOPLAN_FUZZ_EXAMPLES", "25"))
README = Path(__file__).resolve().parents[1] / "README.md"
BASE = tomllib.loads(re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)[0])

_ODD = st.one_of(
    st.sampled_from([0, -1, 1e308, -1e308, 5e-324, 2**63, 10**30, True, False, "", " ", "=1+1", "nan", "inf",
                     "07:60", "24:00", "QM\x1b[31m", "a\u200bb", "x" * 5000, "\U0001F510", [], [1, 2], {"a": 1},
                     [[[[1]]]], "07:00", "one_card", "none", "both", "local", "one_way", "ATTLS", "privacy"]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-10**6, 10**6),
    st.text(max_size=30),
    st.lists(st.floats(0, 20, allow_nan=False), min_size=0, max_size=100),
)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if not isinstance(v, float) or math.isfinite(v) else "nan"
    if isinstance(v, str):
        return json.dumps(v)            # a TOML basic string is a JSON string for these
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def _toml(doc) -> str:
    out = ["[system]"] + [f"{k} = {_toml_value(v)}" for k, v in doc["system"].items()]
    for name, prof in doc.get("profile", {}).items():
        out += [f"[profile.{json.dumps(name)}]"] + [f"{k} = {_toml_value(v)}" for k, v in prof.items()]
    for w in doc["workload"]:
        out += ["[[workload]]"] + [f"{k} = {_toml_value(v)}" for k, v in w.items()]
    return "\n".join(out) + "\n"


# Values a plan accepts somewhere: half the draws, so that many drawn plans are planned
_PLAUSIBLE = st.one_of(st.floats(0.0, 2000.0), st.integers(0, 64), st.floats(0.0, 1.0),
                       st.sampled_from(["07:00", "23:50", 15, 90, 1440, True, False, "both", "local", "one_way",
                                        "request_reply", "none", "one_card", 0.95, 2.0, 10.0]),
                       st.lists(st.floats(0.0, 50.0), min_size=96, max_size=96))


@st.composite
def plans(draw):
    doc = json.loads(json.dumps(BASE))            # a deep copy of the README's plan
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.sampled_from(["system", "workload", "profile", "new key"]))
        value = draw(st.one_of(_PLAUSIBLE, _ODD))
        if where == "system":
            doc["system"][draw(st.sampled_from(sorted(doc["system"])))] = value
        elif where == "workload":
            w = draw(st.sampled_from(doc["workload"]))
            w[draw(st.sampled_from(sorted(w) + ["start", "duration_minutes", "site_failover", "ends", "flow",
                                                 "profile", "queue_manager"]))] = value
        elif where == "profile":
            doc["profile"]["online"]["factors"] = value
        else:
            w = draw(st.sampled_from(doc["workload"]))
            w[draw(st.sampled_from(["colour", "rates", "growth", "Rate"]))] = value
    return doc


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _named_nan() -> dict:
    """The README's plan with its first workload named "nan": a name, echoed, not a number."""
    doc = json.loads(json.dumps(BASE))
    doc["workload"][0]["name"] = "nan"
    return doc


@settings(max_examples=EXAMPLES, **_SETTINGS)
@given(doc=plans(), as_json=st.booleans())
@example(doc=_named_nan(), as_json=False)
@example(doc=_named_nan(), as_json=True)
def test_a_plan_file_answers_or_is_refused_with_a_message(tmp_path_factory, doc, as_json):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "plan.toml"
    path.write_text(_toml(doc), encoding="utf-8")
    res = CliRunner().invoke(main, ["plan", str(path)] + (["--json"] if as_json else []), catch_exceptions=False)
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output and "internal error" not in res.output.lower()
    if res.exit_code == 2:
        assert "plan.toml" in res.output
        return
    assert "\x1b" not in res.output and "\x00" not in res.output
    if as_json:
        def finite(x):
            if isinstance(x, float):
                assert math.isfinite(x)
            elif isinstance(x, dict):
                for v in x.values():
                    finite(v)
            elif isinstance(x, list):
                for v in x:
                    finite(v)
        finite(json.loads(res.output))
    else:
        # a name the plan gives (a workload called "nan") is echoed as given: only such strings are
        # taken out before looking for a number printed as nan or inf
        nonfinite = re.compile(r"\bnan\b|\binf\b", re.I)
        text = res.output
        given = {v for w in doc["workload"] for v in w.values() if isinstance(v, str)} | set(doc.get("profile", {}))
        # as the plan prints them: stripped, in NFC
        given |= {unicodedata.normalize("NFC", g.strip()) for g in given}
        for g in sorted(given, key=len, reverse=True):
            if g and nonfinite.search(g):
                text = text.replace(g, "")
        assert not nonfinite.search(text), res.output


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.fail_slow("240s")          # 43 s alone (90985a6); a nested pytest of 400 examples
def test_plan_fuzz_longer(monkeypatch):
    """The slow tier: 400 drawn plan files (set CRYPTOPLAN_FUZZ_EXAMPLES to change it)."""
    import subprocess
    import sys
    env = {**os.environ, "CRYPTOPLAN_FUZZ_EXAMPLES": os.environ.get("CRYPTOPLAN_FUZZ_LONG", "400")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                          "answers_or_is_refused"], env=env, capture_output=True, text=True, timeout=3600)
    assert out.returncode == 0, out.stdout[-3000:]


# ----------------------------------------------------------------- the Workloads sheet, through `cryptoplan plan book.xlsx`
BOOK_EXAMPLES = max(2, EXAMPLES // 3)
_CELL = st.one_of(_PLAUSIBLE.filter(lambda v: not isinstance(v, list)), _ODD.filter(lambda v: not isinstance(v, (list, dict))),
                  st.sampled_from(["=1/0", "=NA()", "=Inputs!B1", "TRUE", "07:00", "ams", "channel", "measured"]))


@pytest.fixture(scope="module")
def template_book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tpl")
    assert CliRunner().invoke(main, ["template", "-o", str(folder / "planner.xlsx")]).exit_code == 0
    return folder / "planner.xlsx"


@pytest.mark.slow
@settings(max_examples=BOOK_EXAMPLES, **_SETTINGS)
@given(cells=st.lists(st.tuples(st.sampled_from(["PlanWorkloads", "PlanSystem", "PlanProfiles"]),
                                st.integers(0, 30), st.integers(0, 30), _CELL), min_size=1, max_size=3))
def test_a_workloads_sheet_answers_or_is_refused_with_a_message(template_book, tmp_path_factory, cells):
    import openpyxl
    from hypothesis import assume
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    from openpyxl.utils.cell import range_boundaries
    # a character no xlsx cell can hold (openpyxl refuses to write it) is no input a sheet can give
    assume(not any(isinstance(v, str) and ILLEGAL_CHARACTERS_RE.search(v) for *_, v in cells))
    wb = openpyxl.load_workbook(template_book)
    for name, dr, dc, value in cells:
        sheet, ref = wb.defined_names[name].attr_text.split("!")
        c1, r1, c2, r2 = range_boundaries(ref.replace("$", ""))
        cell = wb[sheet].cell(r1 + dr % (r2 - r1 + 1), c1 + dc % (c2 - c1 + 1))
        if not (isinstance(value, str) and value.startswith("=")):
            cell.data_type = "s" if isinstance(value, str) else cell.data_type
        cell.value = value[:200] if isinstance(value, str) else value
    path = tmp_path_factory.mktemp("book") / "book.xlsx"
    wb.save(path)
    res = CliRunner().invoke(main, ["plan", str(path)], catch_exceptions=False)
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output and "internal error" not in res.output.lower()
    if res.exit_code == 2:
        assert "book.xlsx" in res.output
    else:
        assert "\x1b" not in res.output and not re.search(r"\bnan\b|\binf\b", res.output, re.I)
