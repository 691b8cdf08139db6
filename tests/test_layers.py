"""The import graph of model/, addin/ and workbook/: layers, no cycles, no private names across modules.

Read from the source with :mod:`ast` (every ``import`` statement, including those inside
functions, which an import-time check would miss, and the lazy exports a package's stub
``__init__.pyi`` names for ``lazy_loader.attach_stub``), so the test sees what the code could
import, not what one run happened to.  Layers, bottom to top:

0. ``model``: its own five layers, bottom to top (NumPy/SciPy only): the published figures,
   the parameters in force and the argument domains (modules at the top of ``model``), the
   site-data readers ``model.site`` (RMF's report, SMF records: usable without the models or
   the fit), the queueing core ``model.queueing``, the z/OS domain models ``model.zos``, and
   calibration ``model.calibration`` (the least-squares path, the fit, the site calibration);
1. ``addin``: the function catalog and the cell contract (conversion of cells to model
   arguments and of results and errors to cells), on the model; and, beside it, the formula
   engine ``workbook.engine`` (parser, values, native functions, package), which imports
   nothing of cryptoplan outside itself: usable without the add-in or the models;
2. the rest of ``workbook``: the catalog's functions in the engine (``catalog_functions``),
   recalculation, sweeps, template, Site RMF, retarget, the LibreOffice runner;
3. the command line, ``cli`` (``cryptoplan.cli``).

A module may import its own layer and the ones below, never one above.
"""

from __future__ import annotations

import ast
import collections
import functools
import graphlib
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "addin", "workbook", "cli")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            parts = p.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out["cryptoplan." + name] = p       # installed as cryptoplan.<folder> (pyproject)
    return out


MODULES = _modules()


_MODEL_LAYERS = {"site": 0.05, "queueing": 0.1, "zos": 0.2, "calibration": 0.3}


def _layer(module: str) -> float:
    top, _, rest = module.removeprefix("cryptoplan.").partition(".")
    if top == "model":      # model's own layers: base < site < queueing < zos < calibration < the package's facade
        return _MODEL_LAYERS.get(rest.partition(".")[0], 0.0) if rest else 0.4
    if top == "addin" or rest == "engine" or rest.startswith("engine."):
        return 1
    if top == "cli" or module == "cryptoplan.workbook.cli":     # the latter: cli's deprecated alias
        return 3
    return 2


def _own(name: str) -> str | None:
    """The module of ours that ``name`` (a module or module.attribute) lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path):
    """(imported module, imported name or None, line) for every import statement of ``module``,
    and (module, attribute, line) for every ``alias._private`` access on an imported module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    aliases = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                target = _own(a.name)
                if target:
                    found.append((target, None, node.lineno))
                    aliases[a.asname or a.name] = target
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from cryptoplan import workbook`: the namespace root is no module of ours, its
            # names are (the folders)
            if not _own(base) and not any(f"{base}.{a.name}" in MODULES for a in node.names):
                continue
            for a in node.names:
                if f"{base}.{a.name}" in MODULES:      # a module imported by from-import
                    found.append((f"{base}.{a.name}", None, node.lineno))
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                else:
                    found.append((_own(base), a.name, node.lineno))
    stub = path.with_suffix(".pyi")
    if path.name == "__init__.py" and stub.is_file():
        # a package's lazy exports (lazy_loader.attach_stub): each `from .mod import name` of its
        # stub is imported on first use (PEP 562)
        for node in ast.parse(stub.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                target = f"{package}.{node.module}"
                if target in MODULES:
                    found += [(target, a.name, node.lineno) for a in node.names]
    for node in ast.walk(tree):
        # importlib.import_module("cryptoplan.x.y") / __import__("cryptoplan.x.y") /
        # lazy_module("cryptoplan.x.y") or lazy_loader.load(...) (bound at a module's top, loaded
        # on first use): imports too
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and (isinstance(node.func, ast.Attribute) and node.func.attr in ("import_module", "load")
                     or isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__",
                                                                             "lazy_module"))):
            target = _own(node.args[0].value)
            if target:
                found.append((target, None, node.lineno))
    for node in tree.body:          # name = lazy_module("cryptoplan..."): an alias of that module
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args
                and isinstance(node.value.args[0], ast.Constant) and isinstance(node.value.args[0].value, str)
                and _own(node.value.args[0].value) == node.value.args[0].value):
            for g in node.targets:
                if isinstance(g, ast.Name):
                    aliases[g.id] = node.value.args[0].value
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            # alias._x, and the dotted form cryptoplan.model.domains._x after `import cryptoplan...`
            base = _dotted(node.value)
            target = aliases.get(base) or (base in MODULES and base) or None
            if target is None and base and base.startswith("cryptoplan."):
                target = _own(base)     # `import cryptoplan` then cryptoplan.workbook.x.y
            if target:
                found.append((target, node.attr, node.lineno))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            base = _dotted(node.args[0])
            target = aliases.get(base) or (base in MODULES and base) or None
            if target:                  # getattr(module, "_x") is the attribute access spelled out
                found.append((target, node.args[1].value, node.lineno))
    return found


def _dotted(node) -> str | None:
    """``a.b.c`` of a Name/Attribute chain, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class _Graph(collections.UserDict):
    """``{module: _imports(module)}`` for every module, parsed on first use, not at import: every
    xdist worker imports every test module to collect it, and the parse takes seconds."""

    def __init__(self):          # no data yet
        pass

    @functools.cached_property
    def data(self):
        return {m: _imports(m, p) for m, p in MODULES.items()}


GRAPH = _Graph()


def _ancestors(module: str) -> list[str]:
    """The packages of ours Python runs before ``module``: ``a.b.c`` -> ``a.b``, ``a`` (those in MODULES)."""
    parts = module.split(".")
    return [p for p in (".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)) if p in MODULES]


def _executed(module: str, edges) -> set[str]:
    """What importing each edge's target runs: the target and each of its packages' ``__init__``,
    but not the importer's own packages (already running when it imports): ``from .plan.inputs
    import X`` in ``zos/tls/traffic.py`` runs ``zos/plan/__init__``, which may import ``tls`` back."""
    mine = set(_ancestors(module))
    out = set()
    for t, _, _ in edges:
        out.add(t)
        out.update(a for a in _ancestors(t) if a not in mine and a != module)
    out.discard(module)
    return out


def _private(name: str | None) -> bool:
    return bool(name) and name.startswith("_") and not name.startswith("__")


def test_the_scan_sees_the_packages():
    # the scan must find what it checks: each package's modules and known edges
    assert {"cryptoplan.model.queueing.erlang", "cryptoplan.addin.convert", "cryptoplan.workbook.engine",
            "cryptoplan.cli"} <= MODULES.keys()
    assert ("cryptoplan.model.queueing._erlang_kernels", "erlang_c_from_b") in {
        (t, n) for t, n, _ in GRAPH["cryptoplan.model.queueing.mmc"]}
    assert ("cryptoplan.workbook.report.charts", None) in {(t, n) for t, n, _ in GRAPH["cryptoplan.workbook.report.plan"]}
    assert any(t == "cryptoplan.addin.convert" for t, _, _ in GRAPH["cryptoplan.workbook.catalog_functions"])


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)}), line {line}"
              for m, edges in GRAPH.items() for t, _, line in edges if _layer(t) > _layer(m)]
    assert upward == []


def test_the_formula_engine_stands_alone():
    """The engine imports nothing of cryptoplan outside ``workbook.engine`` (not the add-in, not
    the models) but the one error base, ``model.errors``, which imports nothing itself: the
    catalog's functions reach the engine through a registry from the layer above."""
    outside = [f"{m} imports {t}, line {line}" for m, edges in GRAPH.items()
               if m.startswith("cryptoplan.workbook.engine") for t, _, line in edges
               if not (t == "cryptoplan.workbook.engine" or t.startswith("cryptoplan.workbook.engine.")
                       or t == "cryptoplan.model.errors")]
    assert outside == []
    assert GRAPH["cryptoplan.model.errors"] == []
    lazy = {(t, n) for t, n, _ in GRAPH["cryptoplan.workbook.engine"]}
    assert ("cryptoplan.workbook.engine.core", "Engine") in lazy    # the scan reads the package stub


@pytest.mark.subprocess
def test_the_site_readers_stand_below_the_models():
    """issue 66: ``model.site`` (RMF's report, SMF 70-2, HFP, RMF's lines, the SMF formatter's CSV)
    imports nothing of the queueing core, the z/OS models or the calibration: a file is read
    without the fit (a process that reads one imports neither the fit nor lmfit)."""
    import subprocess
    import sys
    inside = [m for m in GRAPH if m.startswith("cryptoplan.model.site")]
    assert len(inside) >= 9, inside
    above = [f"{m} imports {t}, line {line}" for m in inside for t, _, line in GRAPH[m]
             if _layer(t) > _layer(m) or t.startswith(("cryptoplan.model.calibration", "cryptoplan.model.zos",
                                                        "cryptoplan.model.queueing"))]
    assert above == []
    reports = sorted((ROOT / "tests" / "data" / "rmf-reports").glob("*.txt"))
    script = textwrap.dedent(f"""
        import sys
        from cryptoplan.model.site.rmf_files import read_activity
        records = [r for path in {[str(p) for p in reports]!r} for r in read_activity(path)[0]]
        above = ('cryptoplan.model.calibration', 'cryptoplan.model.zos', 'lmfit', 'scipy.optimize')
        print(len(records), sorted(m for m in sys.modules if m.startswith(above)))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    count, loaded = done.stdout.split(" ", 1) if done.returncode == 0 else (0, done.stderr)
    assert len(reports) == 3 and int(count) > 0 and loaded.strip() == "[]", (count, loaded)


def test_the_addin_and_the_engine_do_not_know_each_other():
    """Both are layer 1, side by side: the add-in (catalog, cell contract, Calc) imports nothing of
    the workbook, the engine nothing of the add-in (catalog_functions, above both, joins them)."""
    crossing = [f"{m} imports {t}, line {line}" for m, edges in GRAPH.items() for t, _, line in edges
                if m.startswith("cryptoplan.addin") and t.startswith("cryptoplan.workbook")]
    assert crossing == []


def test_no_private_name_crosses_a_module():
    """``from x import _name`` or ``x._name`` from another module of ours: a helper two
    modules share is part of the owning module's interface and gets a public name."""
    crossing = [f"{m} uses {t}.{n}, line {line}" for m, edges in GRAPH.items()
                for t, n, line in edges if t != m and _private(n)]
    assert crossing == []


def test_no_module_imports_a_folder_by_its_bare_name():
    """The folders install as cryptoplan.model, cryptoplan.workbook, cryptoplan.addin: a bare
    ``import model`` would work in a checkout on sys.path and fail when installed (function-level
    imports included, which a test run may never reach)."""
    bare = []
    for m, p in MODULES.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bare += [f"{m} line {node.lineno}: {n}" for n in names if n and n.split(".")[0] in PACKAGES]
    assert bare == []


def test_the_import_graph_has_no_cycle():
    """Every import counts, function-level ones included (a cycle hidden in function bodies
    is still a cycle of the design); the standard library's topological sort names one."""
    _assert_no_cycle(GRAPH)


def _assert_no_cycle(graph) -> None:
    edges = {m: _executed(m, e) for m, e in graph.items()}
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


@pytest.mark.parametrize("bad, expect", [
    ("from cryptoplan.workbook.recalculation import recalc\n", "upward"),
    ("from .queueing._erlang_kernels import _erlang_b_kernel\n", "private"),
    # issue 34's four blind spots, each planted
    ("import importlib\nimportlib.import_module('cryptoplan.workbook.recalculation')\n", "upward"),
    ("import cryptoplan.model.queueing._erlang_kernels\ncryptoplan.model.queueing._erlang_kernels._erlang_b_kernel(1, 2)\n", "private"),
    ("from .queueing import _erlang_kernels\ngetattr(_erlang_kernels, '_erlang_b_kernel')\n", "private"),
    # a module bound lazily at the top is an import, and its private names are private
    ("from .lazy import lazy_module\nr = lazy_module('cryptoplan.workbook.recalculation')\n", "upward"),
    ("import lazy_loader\nr = lazy_loader.load('cryptoplan.workbook.recalculation')\n", "upward"),
    ("from .lazy import lazy_module\nk = lazy_module('cryptoplan.model.queueing._erlang_kernels')\nk._erlang_b_kernel(1, 2)\n",
     "private"),
    # issue 47's: the namespace root's names are ours too
    ("from cryptoplan import workbook\n", "upward"),
    ("import cryptoplan\ncryptoplan.workbook.recalculation.recalc('x')\n", "upward"),
])
def test_the_checks_fail_on_a_violation(tmp_path, monkeypatch, bad, expect):
    """A model module that imports the workbook, or a private name of a sibling, is caught."""
    path = tmp_path / "probe.py"
    path.write_text(bad, encoding="utf-8")
    monkeypatch.setitem(MODULES, "cryptoplan.model.probe", path)
    edges = _imports("cryptoplan.model.probe", path)
    if expect == "upward":
        assert any(_layer(t) > _layer("cryptoplan.model.probe") for t, _, _ in edges)
    else:
        assert any(t == "cryptoplan.model.queueing._erlang_kernels" and _private(n) for t, n, _ in edges)


def test_an_addin_module_importing_the_engine_is_caught(tmp_path, monkeypatch):
    path = tmp_path / "probe.py"
    path.write_text("from cryptoplan.workbook.engine import Val\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "cryptoplan.addin.probe", path)
    monkeypatch.setitem(GRAPH, "cryptoplan.addin.probe", _imports("cryptoplan.addin.probe", path))
    with pytest.raises(AssertionError):
        test_the_addin_and_the_engine_do_not_know_each_other()


def test_docstrings_hold_no_control_characters():
    # a non-raw docstring turns "\frac" into a form feed and "\b" into a backspace (both valid
    # escapes, so Python does not warn); the math then reads wrong in help() and the docs
    bad = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False) or ""
                found = sorted({repr(c) for c in doc if ord(c) < 32 and c not in "\n\t"})
                if found:
                    bad.append((name, getattr(node, "name", "<module>"), found))
    assert not bad, bad


def test_the_engine_importing_the_namespace_root_is_caught(tmp_path, monkeypatch):
    # issue 47: `from cryptoplan import workbook` in engine/core.py passed "the engine stands alone"
    path = tmp_path / "core.py"
    path.write_text(MODULES["cryptoplan.workbook.engine.core"].read_text(encoding="utf-8")
                    + "\nfrom cryptoplan import model\n", encoding="utf-8")
    monkeypatch.setitem(GRAPH, "cryptoplan.workbook.engine.core", _imports("cryptoplan.workbook.engine.core", path))
    with pytest.raises(AssertionError):
        test_the_formula_engine_stands_alone()


def test_a_submodule_import_that_runs_a_package_importing_back_is_a_cycle(tmp_path, monkeypatch):
    # issue 47: `from .plan.inputs import ...` at the top of zos/tls.py passed every layer test,
    # and importing tls then failed: importing plan.inputs runs zos/plan/__init__, which
    # (through evaluate and profiles) imports tls; tls is a package now, its traffic module the
    # one planted
    path = tmp_path / "traffic.py"
    path.write_text("from ..plan.inputs import KINDS\n"
                    + MODULES["cryptoplan.model.zos.tls.traffic"].read_text(encoding="utf-8"), encoding="utf-8")
    graph = dict(GRAPH)
    graph["cryptoplan.model.zos.tls.traffic"] = _imports("cryptoplan.model.zos.tls.traffic", path)
    with pytest.raises(pytest.fail.Exception, match="import cycle"):
        _assert_no_cycle(graph)
    _assert_no_cycle(GRAPH)              # and the shipped graph has none
