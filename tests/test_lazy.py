"""model/lazy.py: the one way an import is deferred (tests in a fresh interpreter: what is loaded)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.subprocess
def test_the_module_runs_on_first_use_and_not_before():
    out = _run("import sys, types\n"
               "from cryptoplan.model.lazy import lazy_module\n"
               "f = lazy_module('fractions')\n"          # stdlib, not imported by the interpreter itself
               "print(type(sys.modules['fractions']) is types.ModuleType)\n"
               "print(f.Fraction(2, 4))\n"
               "print(type(sys.modules['fractions']) is types.ModuleType)\n")
    assert out == ["False", "1/2", "True"]


@pytest.mark.subprocess
def test_a_package_imported_through_its_submodule_runs_each_module_once():
    # issue 66: a lazy placeholder of a package in sys.modules made `import pkg.sub` run pkg.sub
    # twice (the placeholder's __path__ ran pkg/__init__, which imported pkg.sub, after the import
    # had checked that pkg.sub was not loaded): two module objects, and a monkeypatched function
    # that one of them never saw.  A package's stand-in stays out of sys.modules.
    out = _run("import sys\n"
               "from cryptoplan.model.lazy import lazy_module\n"
               "plans = lazy_module('cryptoplan.model.zos.plan')\n"
               "print('cryptoplan.model.zos.plan' in sys.modules)\n"
               "from cryptoplan.model.zos.plan.read import read_plan\n"
               "import cryptoplan.model.zos.plan.tables as tables\n"
               "read = sys.modules['cryptoplan.model.zos.plan.read']\n"
               "print(tables.reader is read, plans.read is read, plans.read_plan is read_plan is read.read_plan)\n"
               "t = lazy_module('tomllib')\n"
               "print('tomllib' in sys.modules, t.loads('a = 1')['a'], 'tomllib' in sys.modules)\n")
    assert out == ["False", "True", "True", "True", "False", "1", "True"]


@pytest.mark.subprocess
def test_a_submodule_is_bound_on_its_parent_as_an_import_would_bind_it():
    # lazy_loader.load alone leaves xml.dom without its minidom attribute: `import xml.dom.minidom`
    # then `xml.dom.minidom.parseString` would fail in a process where the lazy module came first
    out = _run("from cryptoplan.model.lazy import lazy_module\n"
               "m = lazy_module('xml.dom.minidom')\n"
               "import xml.dom.minidom\n"
               "print(xml.dom.minidom is m, xml.dom.minidom.parseString('<a/>').documentElement.tagName)\n")
    assert out == ["True", "a"]


def test_a_missing_module_fails_when_used():
    from cryptoplan.model.lazy import lazy_module
    missing = lazy_module("cryptoplan_no_such_module")
    with pytest.raises(ModuleNotFoundError, match="cryptoplan_no_such_module"):
        missing.anything


@pytest.mark.subprocess
def test_a_missing_module_does_not_wait_on_a_pending_one():
    # lazy_loader's stand-in for a missing module called inspect.stack(), which ran every pending
    # placeholder; one whose code defers an import of its own then waited forever on
    # lazy_loader's lock (seen as a hung test run)
    code = ("from cryptoplan.model.lazy import lazy_module\n"
            "pending = lazy_module('cryptoplan.workbook.catalog_functions')\n"   # defers imports itself
            "missing = lazy_module('cryptoplan_no_such_module')\n"
            "print(type(missing).__name__, pending.__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["_Missing", "cryptoplan.workbook.catalog_functions"]
