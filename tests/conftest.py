"""Shared test helpers."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

from cryptoplan.model.datafiles import data_path

# Hypothesis' example database lives in the repository (tests/hypothesis-db, see its
# README): every run replays what is stored there before drawing new examples.  It is
# read-only unless CRYPTOPLAN_FUZZ_SAVE=1, so CI and ordinary runs never change the tree;
# a developer's long fuzz run with CRYPTOPLAN_FUZZ_SAVE=1 stores the failures it finds.
_EXAMPLE_DB = DirectoryBasedExampleDatabase(Path(__file__).parent / "hypothesis-db")
settings.register_profile("cryptoplan", database=(_EXAMPLE_DB if os.environ.get("CRYPTOPLAN_FUZZ_SAVE") == "1"
                                                  else ReadOnlyDatabase(_EXAMPLE_DB)))
settings.load_profile("cryptoplan")


@pytest.fixture(scope="session")
def fresh_fit():
    """One fit of the shipped figures per test session (``model.fit.fit()``, ~10-20 s).

    The fit is deterministic for the same inputs, so every test that needs the
    parameters a fresh fit gives shares this one; tests that fit something else
    (a site's table, a left-out figure) still fit for themselves.  Taken with the
    shipped table and parameter file in force: ``CRYPTOPLAN_PARAMS`` is unset.
    """
    import os

    import cryptoplan.model.calibration.fit as F
    from cryptoplan.model.params import clear_cache
    saved = os.environ.pop("CRYPTOPLAN_PARAMS", None)
    clear_cache()
    try:
        return F.fit()
    finally:
        if saved is not None:
            os.environ["CRYPTOPLAN_PARAMS"] = saved
        clear_cache()


@pytest.fixture(scope="session")
def fresh_bootstrap(fresh_fit):
    """The bootstrap block of :func:`fresh_fit`, drawn once per test session with 21 refits a block.

    ``bootstrap_section`` is deterministic (its seed is fixed), so the tests that run ``cryptoplan
    fit --out`` several times (to check what is written, not the refits themselves) share this one
    through :func:`shared_bootstrap` instead of drawing 201 refits a run (about 17 s each).  The
    refits' own properties are tested in tests/test_draws.py and tests/test_bands_coverage.py.
    """
    import cryptoplan.model.calibration.fit as F
    return F.bootstrap_section(fresh_fit, n=21)


@pytest.fixture
def shared_bootstrap(fresh_fit, fresh_bootstrap, monkeypatch):
    """``cryptoplan fit`` as the CLI runs it, but on :func:`fresh_fit` and :func:`fresh_bootstrap`:
    the fit and the bootstrap are taken from the session's, each call getting its own copy."""
    import copy

    import cryptoplan.model.calibration.fit as F
    monkeypatch.setattr(F, "fit", lambda: copy.deepcopy(fresh_fit))
    monkeypatch.setattr(F, "bootstrap_section", lambda doc, n=F.BOOTSTRAP_DRAWS, seed=0: copy.deepcopy(fresh_bootstrap))
    return F


@pytest.fixture
def params_file(monkeypatch):
    """Select a parameter file as a user does, through ``CRYPTOPLAN_PARAMS``: ``params_file(path)``.

    The file is read afresh (``clear_cache``); the variable is unset and the cache cleared
    again when the test ends, whatever it did.
    """
    from cryptoplan.model.params import clear_cache

    def use(path):
        monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
        clear_cache()
    yield use
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    clear_cache()


@pytest.fixture
def scaled_figures(tmp_path):
    """Write a copy of data/figures.csv with the values of chosen rows multiplied.

    ``scaled_figures(predicate, factor)`` scales every row whose id satisfies
    ``predicate`` (a function of the id) and returns the new file's path: a
    site's own table for ``using_figures`` / ``cryptoplan fit --figures``.
    """
    counter = iter(range(1000))

    def make(predicate, factor):
        with open(data_path("figures.csv"), newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            if predicate(r["id"]):
                r["value"] = str(factor * float(r["value"]))
        path = tmp_path / f"figures-{next(counter)}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        return path

    return make


# ------------------------------------------------------------ spreadsheet-engine tests
# Tests that run real LibreOffice (and pdftoppm for PNGs) skip on a machine without them,
# except under CI, where .ci/run installs them and a missing tool is a failure.  The skip
# reason starts with SPREADSHEET_SKIP so that the closing summary can count them.
SPREADSHEET_SKIP = "spreadsheet engine not installed"
SPREADSHEET_INSTALL = ("sudo apt-get install -y --no-install-recommends libreoffice-calc-nogui poppler-utils "
                       "fonts-crosextra-carlito python3-uno libreoffice-dev")


@pytest.fixture
def profile_builds(monkeypatch):
    """Each plan workload kind's profile builder counted, by workload name (a Counter); the
    remembered profiles start empty, so no earlier test's entry serves the test
    (model/zos/plan/profiles.py)."""
    from collections import Counter

    from cryptoplan.model.remember import Remembered
    from cryptoplan.model.zos.plan import profiles

    monkeypatch.setattr(profiles, "_BUILT", Remembered(64))
    monkeypatch.setattr(profiles, "_DRAWN", Remembered(32))
    count: Counter = Counter()
    for kind, make in list(profiles.PROFILES.items()):
        def counted(w, system, make=make):
            count[w.name] += 1
            return make(w, system)
        monkeypatch.setitem(profiles.PROFILES, kind, counted)
    return count


def require(ok: bool, what: str) -> None:
    """Skip (fail under CI) unless ``ok``: ``what`` names the missing tool or package."""
    import os

    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI (.ci/run installs it)")
    pytest.skip(f"{SPREADSHEET_SKIP}: {what}")


def require_tool(*names: str) -> str:
    """Path of the first of ``names`` on PATH; skip (fail under CI) when there is none."""
    import shutil

    found = next(filter(None, map(shutil.which, names)), None)
    require(found is not None, names[0])
    return found


@pytest.fixture(scope="session")
def soffice():
    """LibreOffice's executable (skips without it, fails under CI)."""
    return require_tool("soffice", "libreoffice")


@pytest.fixture(scope="session")
def lo_profile(soffice, tmp_path_factory):
    """One LibreOffice user profile for the whole session: created by the first start,
    reused by every later one (a new profile costs a second or two per start)."""
    return tmp_path_factory.mktemp("lo-profile")


def pytest_terminal_summary(terminalreporter):
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if SPREADSHEET_SKIP in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} spreadsheet-engine tests skipped (no LibreOffice/pdftoppm); "
            f"to run them: {SPREADSHEET_INSTALL}")


def pytest_collection_finish(session):
    """Start the Ciw replications of tests/test_mgc.py in the background when selected.

    They take minutes on both cores and, without pytest-xdist, the rest of the suite runs
    on one: started here, they overlap with it instead of running alone when their first
    test comes.  Under xdist (``make test``: both cores already busy, and every worker
    collects every test) the worker that runs them starts them with their first test.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in session.items:
        if "simulations" in getattr(item, "fixturenames", ()):
            item.module.start_simulations()
            return


def pytest_sessionfinish(session):
    """Drop replications still queued if the session ends before their tests ran (-x, ^C)."""
    import sys
    mod = sys.modules.get("test_mgc")
    pool = getattr(mod, "_POOL", None) or {}
    if pool.get("executor") is not None:
        pool["executor"].shutdown(wait=False, cancel_futures=True)


# ------------------------------------------------------------ tiers: what starts a process
# The fast tier (make test-fast, docs/development.md) leaves out the tests marked subprocess,
# libreoffice, mypy or slow.  A test that starts a process (subprocess.Popen, seen by an audit
# hook) without one of those marks fails, naming the mark to add, so the fast tier stays fast
# without anyone keeping a list.  A test that uses the LibreOffice fixtures is marked libreoffice.
_SPAWN_MARKS = ("subprocess", "libreoffice", "mypy", "slow")
_RUNNING: list = [None, False]          # the test whose setup or call is running; whether it spawned


def _audit(event, args):
    if event == "subprocess.Popen" and _RUNNING[0] is not None:
        _RUNNING[1] = True


sys.addaudithook(_audit)


def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if {"soffice", "lo_profile"} & fixtures:
            item.add_marker(pytest.mark.libreoffice)
        if "mypy_run" in fixtures:
            item.add_marker(pytest.mark.mypy)
        # Line coverage (make test) traces every Python line and doubles a test's CPU on Python
        # 3.11: the slow tier runs untraced (pytest-cov's no_cover), so the coverage printed is
        # that of the other tiers, which exercise every module (docs/development.md).
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.no_cover)


def _watch_spawns(item):
    _RUNNING[:] = [item.nodeid, False]
    try:
        return (yield)
    finally:
        spawned = _RUNNING[1]
        _RUNNING[:] = [None, False]
        if spawned and not any(item.get_closest_marker(m) for m in _SPAWN_MARKS):
            pytest.fail(f"{item.nodeid} starts a process: mark it @pytest.mark.subprocess (or libreoffice, "
                        "mypy, slow) so that the fast tier leaves it out", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _watch_spawns(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _watch_spawns(item))
