"""The function catalog agrees with the model, the xlwings metadata, the CLI and the README.

The xlwings metadata test imports cryptoplan.addin.udfs in a subprocess under xlwings'
*Windows* decorators (``xlwings/udfs.py``: ``xlfunc``, ``xlarg``, ``xlret``),
with the pywin32 modules stubbed: on Linux ``xw.func`` is a no-op, so this is
the only way to see what Excel would be told.  It also runs xlwings' own
``generate_vba_wrapper`` to get the VBA that *Import Functions* would write.
Claims the README makes about xlwings 0.37.8 (command, config keys, ribbon
labels) are checked against the installed xlwings package's source.
"""

import csv
import importlib
import importlib.resources
import io
import json
import keyword
import math
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import xlwings
from click.testing import CliRunner

from cryptoplan.addin import catalog, udfs
from cryptoplan.addin.catalog import CATALOG, KINDS, REQUIRED, WIZARD_LIMIT
from cryptoplan.cli import main

README = Path(__file__).resolve().parents[1] / "docs" / "spreadsheets.md"   # the Excel section lives there
XLWINGS_DIR = Path(xlwings.__file__).parent

# VBA reserved words (VBA language reference, "Keywords"): an argument with such a name
# would break the wrapper xlwings generates.  "caller" is reserved by xlwings itself.
VBA_KEYWORDS = {
    "and", "as", "boolean", "byref", "byte", "byval", "call", "case", "class", "const",
    "currency", "date", "declare", "dim", "do", "double", "each", "else", "elseif", "empty",
    "end", "enum", "eqv", "erase", "error", "event", "exit", "false", "for", "friend",
    "function", "get", "global", "gosub", "goto", "if", "imp", "implements", "in", "input",
    "integer", "is", "let", "lib", "like", "long", "longlong", "longptr", "loop", "lset", "me",
    "mod", "new", "next", "not", "nothing", "null", "object", "on", "open", "option",
    "optional", "or", "paramarray", "preserve", "print", "private", "property", "public",
    "put", "raiseevent", "redim", "rem", "resume", "return", "rset", "select", "set", "single",
    "static", "step", "stop", "string", "sub", "then", "to", "true", "type", "typeof", "until",
    "variant", "wend", "while", "with", "withevents", "write", "xor", "name", "caller",
}


def test_xlwings_version_is_the_one_documented():
    assert xlwings.__version__ == "0.37.8"


# ------------------------------------------------------------ catalog shape
def test_catalog_is_well_formed():
    names = [f.name for f in CATALOG]
    assert len(names) == len(set(names))
    for f in CATALOG:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", f.name), f.name
        assert f.category in catalog.CATEGORIES
        assert f.result in ("number", "integer", "table")
        assert f.help and len(f.help) <= WIZARD_LIMIT, f.name
        assert f.unit, f.name
        seen_optional = False
        for a in f.args:
            assert a.kind in KINDS, (f.name, a.name)
            assert re.fullmatch(r"[a-z][a-z0-9_]*", a.name) and len(a.name) <= 40
            assert a.name not in VBA_KEYWORDS and not keyword.iskeyword(a.name), a.name
            assert len(a.wizard_text()) <= WIZARD_LIMIT, (f.name, a.name, len(a.wizard_text()))
            # Excel/VBA: optional arguments only at the end
            assert not (seen_optional and a.required), (f.name, a.name)
            seen_optional |= not a.required
        if f.result == "table":     # one table per call: no argument is broadcast
            assert f.columns


def test_brief_function_list_is_complete():
    required = {"ERLANGB", "ERLANGC", "MMC_UTILIZATION", "MMC_WAIT", "MMC_RESPONSE",
                "MMC_WAIT_PERCENTILE", "MGC_WAIT", "MMC_SERVERS", "MVA_THROUGHPUT",
                "AMS_THROUGHPUT", "AMS_COST_US", "ACCELERATORS_REQUIRED",
                "COPROCESSORS_REQUIRED", "CARD_UTILIZATION", "CRYPTO_OP_MS", "TLS_COST_US",
                "TLS_ROUNDTRIP_US", "CHANNEL_START_RATE", "HANDSHAKE_CPU_FACTOR",
                "HANDSHAKE_LATENCY_FACTOR", "OCSP_CPU_US", "MODEL_PARAMETERS", "MODEL_FIGURES"}
    assert required <= {f.name for f in CATALOG}
    queueing = {f.name for f in CATALOG if f.category == "cryptoplan queueing"}
    assert queueing == {"ERLANGB", "ERLANGC", "MMC_UTILIZATION", "MMC_WAIT", "MMC_RESPONSE",
                        "MMC_WAIT_PERCENTILE", "MGC_WAIT", "MMC_SERVERS", "MVA_THROUGHPUT"}


@pytest.mark.parametrize("spec", CATALOG, ids=lambda f: f.name)
def test_arguments_follow_the_model_signature(spec):
    """Names, order and defaults equal the wrapped model function's leading parameters."""
    import inspect

    from cryptoplan import model
    fn = getattr(model, spec.model, None)
    assert fn is not None, f"model.{spec.model} does not exist (yet)"
    params = list(inspect.signature(fn).parameters.values())
    args = spec.model_args           # params_file is the add-in's, not the model function's
    assert [p.name for p in params[:len(args)]] == [a.name for a in args]
    for a, p in zip(args, params):
        pdef = REQUIRED if p.default is inspect.Parameter.empty else p.default
        assert a.default == pdef or (a.default is REQUIRED and pdef is REQUIRED), (a.name, pdef)
    # parameters the catalog leaves out must have defaults
    assert all(p.default is not inspect.Parameter.empty for p in params[len(args):])
    # params_file, where present, is optional and the last argument but for optional ones added after
    # it (a plan's profiles, a count's level: a formula of an older workbook, without them, means what
    # it meant)
    k = spec.params_arg
    assert k is None or (not spec.args[k].required and all((a.kind == "range" or a.name == "level") and not a.required
                                                          for a in spec.args[k + 1:]))


# Arguments at which every catalog function evaluates (those not listed take their defaults). Rates
# high enough that the integer results (cards, processors required) move.
_SAMPLE = {"operation": "sign", "policy": "privacy", "key_type": "RSA", "key_size": 2048,
           "message_kb": 64.0, "tx_rate": 4000.0, "mode": "ATTLS",
           "cipher": "TLS_CHACHA20_POLY1305_SHA256", "start_rate": 5.0, "handshake_rate": 5.0,
           "connection_cpu_us": 100.0, "traffic": 3.0, "servers": 5, "arrival_rate": 1.0,
           "service_time": 1.0, "p": 0.9, "population": 3, "demands": [1.0, 2.0], "cards": 16,
           # a plan: the Workloads table and the System block as cells arrive (tuples of rows)
           # (growing, so that PLAN_TIMELINE has purchases within the horizon)
           "workloads": (("name", "kind", "rate", "policy", "message_kb", "growth_per_year"),
                         ("pay", "ams", 300.0, "privacy", 2.0, 1.0)),
           "system": (("processors", 4.0), ("coprocessors", 2.0), ("accelerators", 2.0), ("horizon_months", 60.0)),
           "resource": "accelerators", "quantity": "utilization", "quantile": 0.9, "algorithm": "ML-DSA-65", "share": 0.1}


@pytest.mark.parametrize("spec", CATALOG, ids=lambda f: f.name)
def test_params_file_argument_exactly_where_parameters_matter(spec):
    """A function takes params_file if and only if its result depends on the parameter set.

    Evaluated at :data:`_SAMPLE` under the packaged parameters and under every parameter
    times 1.5: a function without params_file must give the same result (else a site's
    calibration would silently not reach that cell), one with it must give another.
    """
    import copy

    from cryptoplan.model.params import Parameters, current_parameters, using_parameters
    fn = spec.model_function()
    # MVA's servers is a vector (its default); every other listed name takes the sample
    argv = [_SAMPLE[a.name] if a.name in _SAMPLE and (a.kind != "vector" or a.name == "demands")
            else a.default for a in spec.model_args]
    doc = copy.deepcopy(current_parameters().document)
    for entry in doc["parameters"].values():
        entry["value"] *= 1.5
    before = fn(*argv)
    with using_parameters(Parameters.from_document(doc)):
        after = fn(*argv)
    if spec.result == "table":
        before = [r.get("value", r.get("model", r)) for r in before]
        after = [r.get("value", r.get("model", r)) for r in after]
    assert (before != after) == (spec.params_arg is not None), (before, after)


def test_choice_lists_come_from_the_model():
    from cryptoplan.model.params import CIPHERS, MODES, POLICIES
    by = {(f.name, a.name): a for f in CATALOG for a in f.args}
    assert by[("AMS_THROUGHPUT", "policy")].choices == tuple(POLICIES)
    assert by[("TLS_ROUNDTRIP_US", "mode")].choices == tuple(MODES)
    assert by[("TLS_ROUNDTRIP_US", "cipher")].choices == tuple(CIPHERS)


# ------------------------------------------------------------ argument domains
_DOMAIN_ARGS = [(f, a) for f in CATALOG for a in f.model_args if a.domain is not None]
# Where the domain checks need other arguments than _SAMPLE's: SSL tasks are required (and only
# then bounded below by 1) with SSLCIPH; mmc_servers takes the percentile target as a pair; key
# reuse applies to confidentiality; and loads light enough for one card.
_BASE = {"CHANNEL_THROUGHPUT": {"mode": "SSLCIPH", "ssltasks": 5},
         "MMC_SERVERS": {"max_utilization": 0.8, "wait_percentile": 0.9, "max_percentile_wait": 1.0}}
_BASE_FOR_ARG = {"key_reuse": {"policy": "confidentiality"}}
_LIGHT = {"tx_rate": 10.0, "cards": 2, "message_kb": 2.0}


def _base_call(spec, arg):
    kwargs = {a.name: (_LIGHT.get(a.name, _SAMPLE[a.name]) if a.name in _SAMPLE and
                       (a.kind != "vector" or a.name == "demands") else a.default)
              for a in spec.model_args if a.name in _SAMPLE or not a.required}
    return kwargs | _BASE.get(spec.name, {}) | _BASE_FOR_ARG.get(arg.name, {})


def _accepts(spec, arg, value) -> bool:
    """Whether the model function lets ``value`` of ``arg`` through its validation: refused is a
    ValueError (or TypeError) in the domain's words, "<arg> must be ..."; anything else (a
    result, an unstable queue, a target no card count meets) means the value was accepted."""
    import warnings
    kwargs = _base_call(spec, arg) | {arg.name: [value, value] if arg.kind == "vector" else value}
    try:
        with warnings.catch_warnings():
            # just inside an open bound at 0 is 5e-324: past validation some models overflow
            # there (ams_cost_at_rate_us, mmc_servers), which is not what this test is about
            warnings.simplefilter("ignore", RuntimeWarning)
            spec.model_function()(**kwargs)
    except (ValueError, TypeError) as exc:
        return not str(exc).startswith(f"{arg.name} must be")
    return True


@pytest.mark.parametrize("spec, arg", _DOMAIN_ARGS, ids=[f"{f.name}-{a.name}" for f, a in _DOMAIN_ARGS])
def test_the_declared_domain_is_what_the_model_accepts(spec, arg):
    """At each bound, just beyond it and just inside it, and (whole-number domains) at a
    fraction inside, the wrapped model function accepts exactly what the catalog's domain
    does: an independent check that the declaration and the validation agree."""
    spec.model_function()(**_base_call(spec, arg))          # the base call itself is valid
    d = arg.domain
    lo, hi = d.bounds()
    probes = []
    for bound, is_open, out in ((lo, d.lo_open, -math.inf), (hi, d.hi_open, math.inf)):
        if bound is None:
            continue
        step = math.copysign(1.0, out)
        beyond = bound + step if d.integer else float(np.nextafter(bound, out))
        inside = bound - step if d.integer else float(np.nextafter(bound, -out))
        probes += [(bound, not is_open), (beyond, False), (inside, d.contains(inside))]
    if d.integer:
        probes.append((lo + 0.5, False))
    assert len(probes) >= 3
    got = [(v, _accepts(spec, arg, v)) for v, _ in probes]
    assert got == probes
    assert [d.contains(v) for v, _ in probes] == [ok for _, ok in probes]


def test_every_numeric_argument_states_a_declared_range():
    """An argument's help states its domain's text and no range typed by hand: every range in a
    help is the text of a declared domain (a vector of station servers, whole numbers or inf,
    has no domain of the kind)."""
    from cryptoplan.model import domains as D
    from _ranges import normalized, range_spans
    declared = {normalized(getattr(D, n).text()) for n in D.__all__ if isinstance(getattr(D, n), D.Domain)}
    without = []
    for f in CATALOG:
        for a in f.args:
            if a.domain is not None:
                assert a.domain.text() in a.help, (f.name, a.name)
            elif a.kind in ("number", "integer", "number_or_text") and a.name != "key_size":
                without.append((f.name, a.name))
            spans = range_spans(a.help)
            assert a.domain is None or normalized(a.domain.text()) in spans, (f.name, a.name)
            if (f.name, a.name) != ("MVA_THROUGHPUT", "servers"):
                assert set(spans) <= declared, (f.name, a.name, spans)
    assert without == []       # every numeric argument but the key size (a list) has a domain
    assert next(a for a in catalog.get("CARD_UTILIZATION").args if a.name == "cards").help == "Cards of that type; 1..64."


def test_an_argument_declares_a_domain_with_its_range_placeholder():
    from cryptoplan.model import domains as D
    assert catalog._a("n", "integer", "Cards; {range}.", domain=D.CARDS).help == "Cards; 1..64."
    for bad in (dict(help="Cards; 1..64.", domain=D.CARDS), dict(help="Cards; {range}."),
                dict(help="{range} or {range}", domain=D.CARDS)):
        with pytest.raises(ValueError, match="give a domain and one {range}"):
            catalog._a("n", "integer", **bad)


# ------------------------------------------------------------ generated functions
def test_generated_functions_match_catalog():
    import inspect
    for f in CATALOG:
        fn = getattr(udfs, f.name)
        assert fn.__name__ == f.name and fn.__doc__ == f.help
        sig = inspect.signature(fn)
        assert list(sig.parameters) == [a.name for a in f.args]
        for a in f.args:
            d = sig.parameters[a.name].default
            assert (d is inspect.Parameter.empty) == a.required
            if not a.required:
                assert d == a.default


_PROBE = r"""
import io, json, sys, types
for name in ("pythoncom", "pywintypes", "win32com", "win32com.client"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["pythoncom"].CoInitialize = lambda: None
sys.modules["pywintypes"].com_error = Exception
sys.modules["win32com.client"].Dispatch = lambda *a, **k: None
sys.modules["win32com"].client = sys.modules["win32com.client"]
import xlwings
import xlwings.udfs as U
xlwings.func, xlwings.arg, xlwings.ret = U.xlfunc, U.xlarg, U.xlret
import cryptoplan.addin.udfs as mod
out = {}
for name in mod.__all__:
    x = getattr(mod, name).__xlfunc__
    out[name] = {"name": x["name"], "category": x["category"], "volatile": x["volatile"],
                 "doc": x["ret"]["doc"], "sub": x["sub"],
                 "args": [{"name": a["name"], "doc": a["doc"], "options": a["options"],
                           "optional": a.get("optional", "<required>"), "vba": a["vba"]}
                          for a in x["args"]]}
class WB:
    Name = "planner.xlsm"
vba = io.StringIO()
U.generate_vba_wrapper("cryptoplan.addin.udfs", mod, vba, WB())
print(json.dumps({"meta": out, "vba": vba.getvalue()}, default=repr))
"""


@pytest.fixture(scope="module")
def windows_view():
    """What xlwings' Windows decorators record, and the VBA Import Functions would write."""
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


@pytest.mark.subprocess
def test_xlwings_metadata_matches_catalog(windows_view):
    meta = windows_view["meta"]
    assert set(meta) == {f.name for f in CATALOG}
    for f in CATALOG:
        m = meta[f.name]
        assert m["name"] == f.name and m["category"] == f.category
        assert m["volatile"] is False and m["sub"] is False
        assert m["doc"] == f.help and len(m["doc"]) <= 255
        assert [a["name"] for a in m["args"]] == [a.name for a in f.args]
        for a, ma in zip(f.args, m["args"]):
            assert ma["doc"] == a.wizard_text()
            assert ma["options"] == {"ndim": 2, "err_to_str": True}
            assert ma["vba"] is None
            assert ma["optional"] == ("<required>" if a.required else a.default)


@pytest.mark.subprocess
def test_generated_vba_wrappers(windows_view):
    vba = windows_view["vba"]
    for f in CATALOG:
        params = ", ".join(a.name if a.required else f"Optional {a.name}" for a in f.args)
        assert f"Function {f.name}({params})\n" in vba, f.name
        # a workbook (not .xlam) calls with ThisWorkbook and the calling cell
        assert (f'{f.name} = XLPy.CallUDF("cryptoplan.addin.udfs", "{f.name}", '
                f'Array({", ".join(a.name for a in f.args)}), ThisWorkbook, '
                f'Application.Caller)') in vba, f.name
        assert "Application.Volatile" not in vba


# ------------------------------------------------------------ CLI
def test_cli_json_is_the_catalog():
    r = CliRunner().invoke(main, ["functions", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data == json.loads(json.dumps(catalog.as_dicts()))
    erlangc = next(d for d in data if d["name"] == "ERLANGC")
    assert erlangc["category"] == "cryptoplan queueing"
    assert [a["name"] for a in erlangc["arguments"]] == ["traffic", "servers"]
    assert erlangc["unit"] == "probability (0..1)"
    mgc = next(d for d in data if d["name"] == "MGC_WAIT")
    assert mgc["arguments"][3] | {"help": None} == {
        "name": "service_scv", "kind": "number", "help": None, "unit": "", "required": False,
        "default": 0.0, "choices": [], "range": ">= 0"}


def test_cli_text_lists_every_function_with_help():
    r = CliRunner().invoke(main, ["functions"])
    assert r.exit_code == 0
    for f in CATALOG:
        assert f.signature_text() in r.output
        assert f.help in r.output
    assert "accepted: integrity, privacy, confidentiality" in r.output


# ------------------------------------------------------------ README
def _section(text: str) -> str:
    m = re.search(r"<!-- excel:start -->(.*?)<!-- excel:end -->", text, re.S)
    assert m, "README lacks the excel:start/excel:end markers"
    return m.group(1)


def test_readme_function_table_is_the_catalog():
    section = _section(README.read_text(encoding="utf-8"))
    assert catalog.markdown_table() in section
    r = CliRunner().invoke(main, ["functions", "--markdown"])
    assert r.output.strip() == catalog.markdown_table()
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    assert [re.match(r"\| `([A-Z_]+)\(", ln).group(1) for ln in rows] == [f.name for f in CATALOG]


def test_readme_names_the_right_xlwings_things():
    """Claims of "Excel on Windows" checked against the installed xlwings 0.37.8."""
    section = _section(README.read_text(encoding="utf-8"))
    for claim in ("xlwings addin install", "UDF MODULES", "cryptoplan.addin.udfs", "INTERPRETER_WIN",
                  "Import Functions", "Interpreter", "UDF Modules", "xlwings config create",
                  "Trust access to the VBA project object model", "cryptoplan recalc",
                  "=ERLANGC(9,10)", "Tools > References"):
        assert claim in section, claim
    main_bas = (XLWINGS_DIR / "addin" / "Main.bas").read_text(errors="replace")
    assert 'GetConfig("UDF MODULES")' in main_bas
    assert 'GetConfig("INTERPRETER_WIN"' in main_bas
    config_bas = (XLWINGS_DIR / "addin" / "Config.bas").read_text(errors="replace")
    assert 'Sheets(PROJECT_NAME & ".conf")' in config_bas     # the xlwings.conf sheet
    assert '"\\." & PROJECT_NAME & "\\" & PROJECT_NAME & ".conf"' in config_bas  # user file
    with zipfile.ZipFile(XLWINGS_DIR / "addin" / "xlwings.xlam") as z:
        ui = z.read("customUI/customUI.xml").decode("utf-8", "replace")
    for label in ("Import Functions", "UDF Modules:", "Interpreter:"):
        assert f'label="{label}"' in ui
    cli = (XLWINGS_DIR / "cli.py").read_text()
    assert 'add_parser("install")' in cli and "def config_create" in cli
    assert '"INTERPRETER_{}","{}"' in cli
    udfs_src = (XLWINGS_DIR / "udfs.py").read_text()
    assert 'vba.writeln(fname + " = Err.Description")' in udfs_src   # errors become text
    assert "ImportPythonUDFs" in main_bas


def test_readme_check_value_is_right():
    section = _section(README.read_text(encoding="utf-8"))
    m = re.search(r"`=ERLANGC\(9,10\)` shows `([0-9.]+)`", section)
    assert m and float(m.group(1)) == pytest.approx(udfs.ERLANGC(9, 10), abs=5e-10)


# ------------------------------------------------------------ xlwings.conf
def _read_conf(data: bytes) -> dict:
    """Parse like VBA's ``Input #f, name, value`` (quoted, comma-separated pairs)."""
    rows = list(csv.reader(io.StringIO(data.decode("ascii"))))
    return {r[0]: r[1] for r in rows if r}


def test_xlwings_conf_names_the_udf_module():
    data = (importlib.resources.files("cryptoplan.addin") / "xlwings.conf").read_bytes()
    conf = _read_conf(data)
    assert conf == {"UDF MODULES": "cryptoplan.addin.udfs"}
    assert all(line.startswith(b'"') for line in data.splitlines() if line)  # no comments
    mod = importlib.import_module(conf["UDF MODULES"])
    assert mod is udfs


def test_model_figures_columns_only_grow_at_the_end():
    """A workbook written by an older template holds MODEL_FIGURES in a 10-column range and its
    Calibration sheet reads the cells by position: a column inserted in the middle pushed
    within_tolerance, reason and id out of that range and put text under the TRUE/FALSE
    highlight.  The ten columns the table had before the accepted interval came first."""
    assert catalog.get("MODEL_FIGURES").columns[:10] == (
        "source", "quantity", "conditions", "unit", "published", "model", "relative_error",
        "within_tolerance", "reason", "id")
    assert catalog.get("MODEL_FIGURES").columns[10:] == ("kind", "accepted_low", "accepted_high")
